"""Releases: published, checksummed snapshots of the catalogue (docs/architecture/design-map.md, "Releases").

Plain models: every write goes through the app's services (`services`, `build`, `lifecycle`). A
`Release` (the published artefact) and its `ReleaseBuild` (the job that builds it) are created when a
release manager cuts one (the release's id is not known yet: it is content-addressed, so it is
assigned when the bundle is built); a worker builds it, and it is published together with its files
and its membership rows in one transaction. From then on the release, its build, its files and its
memberships never change: database triggers on both backends refuse it (`releases/db_triggers.py`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class ReleaseStatus(models.TextChoices):
    REQUESTED = "requested", "Requested"
    BUILDING = "building", "Building"
    PUBLISHED = "published", "Published"
    FAILED = "failed", "Failed"


UNFINISHED = (ReleaseStatus.REQUESTED, ReleaseStatus.BUILDING)


class ReleaseQuerySet(models.QuerySet):
    def published(self) -> ReleaseQuerySet:
        return self.filter(published_at__isnull=False)

    def newest_first(self) -> ReleaseQuerySet:
        """The public order: newest release date first, then the later cut."""
        return self.order_by("-release_date", "-id")


class Release(models.Model):
    """The published artefact: its id, date, counts, digests and files. Everything about building it
    (status, attempts, claims, heartbeats, progress, log, error, who cut it) is its `ReleaseBuild`.

    A release row is created with its build when a release manager cuts one (its id is assigned when
    the bundle is built) and is published once, with its files and memberships; from then on it never
    changes. An external release (recorded from a page published elsewhere) is published as it is
    recorded."""

    # Assigned when the bundle is built: the release date and 12 hex digits of its content hash.
    release_id = models.CharField(max_length=40, unique=True, null=True, blank=True)
    release_date = models.DateField(help_text="The date the release was cut (UTC); the bag's Bagging-Date.")
    is_external = models.BooleanField(
        default=False, help_text="Recorded from a published record page; this portal does not hold its files."
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True, db_index=True)
    previous = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The newest published release when this one was published: the base of its change summary.",
    )
    counts = models.JSONField(
        default=dict,
        blank=True,
        help_text="rows per table, records per type, and records added, removed and changed per type.",
    )
    payload_sha256 = models.CharField(
        max_length=64, blank=True, help_text="sha256 of manifest-sha256.txt; the release id holds its first 12 digits."
    )
    catalogue_watermark = models.CharField(
        max_length=64, blank=True, help_text="Fingerprint of the catalogue the release was built from (no-change cuts)."
    )

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["-release_date", "-id"]
        get_latest_by = ["release_date", "id"]
        permissions = [("cut_release", "Can cut a new release")]
        constraints = [
            models.CheckConstraint(
                condition=Q(published_at__isnull=True) | Q(release_id__isnull=False),
                name="release_published_has_id",
            ),
        ]

    def __str__(self) -> str:
        return self.release_id or f"release #{self.pk} ({self.get_status_display().lower()})"

    @property
    def status(self) -> str:
        """Published once published; before, its build's status."""
        return ReleaseStatus.PUBLISHED if self.published_at is not None else self.build.status

    def get_status_display(self) -> str:
        return str(ReleaseStatus(self.status).label)

    @property
    def is_published(self) -> bool:
        return self.published_at is not None

    @property
    def is_unfinished(self) -> bool:
        return self.status in UNFINISHED

    @property
    def holds_files(self) -> bool:
        return self.is_published and not self.is_external

    @property
    def public_key(self) -> str:
        """How URLs name the release: its id once built, its row number before."""
        return self.release_id if self.release_id and self.is_published else str(self.pk)

    def change_total(self, kind: str) -> int | None:
        """Records added, removed or changed since the previous release (None when not computed)."""
        by_type = (self.counts or {}).get(kind)
        return None if by_type is None else sum(by_type.values())

    @property
    def added_total(self) -> int | None:
        return self.change_total("added")

    @property
    def removed_total(self) -> int | None:
        return self.change_total("removed")

    @property
    def changed_total(self) -> int | None:
        return self.change_total("changed")

    @property
    def record_total(self) -> int | None:
        by_type = (self.counts or {}).get("records")
        return None if by_type is None else sum(by_type.values())


class ReleaseBuild(models.Model):
    """The job that builds one release: its status (requested -> building -> published, or failed),
    claims, heartbeats, progress, log and error (`releases.lifecycle.RELEASES`). One per release, with
    the release's primary key; an external release's is the record of its recording, published at once.
    Once published it never changes (a trigger refuses it, as for the release)."""

    release = models.OneToOneField(Release, on_delete=models.CASCADE, primary_key=True, related_name="build")
    status = models.CharField(
        max_length=20, choices=ReleaseStatus.choices, default=ReleaseStatus.REQUESTED, db_index=True
    )
    created_at = models.DateTimeField(default=timezone.now, help_text="When it was cut.")
    cut_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The release manager who cut it (none for an external release).",
    )
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent of the build done.")
    stage = models.CharField(max_length=200, blank=True, help_text="What the build is doing now.")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker claimed the build.")
    celery_task_id = models.CharField(
        max_length=64, blank=True, help_text="The id of the last message sent for the build."
    )
    sent_at = models.DateTimeField(null=True, blank=True, help_text="When the last build message was sent.")
    build_token = models.CharField(
        max_length=32, blank=True, help_text="Identifies the claim of the build now running."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of the build.")
    finished_at = models.DateTimeField(null=True, blank=True)
    build_log = models.TextField(blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-release_id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=ReleaseStatus.values), name="releasebuild_status_valid"),
            models.CheckConstraint(condition=Q(progress__lte=100), name="releasebuild_progress_at_most_100"),
        ]

    def __str__(self) -> str:
        return f"build of release #{self.pk} ({self.get_status_display().lower()})"


class FileKind(models.TextChoices):
    PAYLOAD = "payload", "Payload (data/)"
    TAG = "tag", "Bag tag file"
    ARCHIVE = "archive", "Archive of the whole bag"


class ReleaseFile(models.Model):
    """One file of a built release, as it lies under `RELEASES_DIR/<release id>/`."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=300, help_text="Path inside the bag (data/...), or the archive's file name.")
    kind = models.CharField(max_length=10, choices=FileKind.choices)
    bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    sha512 = models.CharField(max_length=128)

    class Meta:
        ordering = ["release_id", "kind", "name"]
        constraints = [
            models.UniqueConstraint(fields=["release", "name"], name="releasefile_unique_name"),
            models.CheckConstraint(condition=Q(kind__in=FileKind.values), name="releasefile_kind_valid"),
            models.CheckConstraint(condition=Q(bytes__gte=0), name="releasefile_bytes_not_negative"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def anchor(self) -> str:
        """The id of the file's row on the release page (protocol_coverage for its table, ...)."""
        base = self.name.rsplit("/", 1)[-1]
        return base.split(".", 1)[0] if self.kind == FileKind.PAYLOAD else base.replace(".", "-")


class ReleaseRecord(models.Model):
    """That a release contains a record (by type and stable id), with the record's content hash."""

    # No index of its own: the unique constraint's index starts with the release (one index less to
    # grow by every membership a build inserts). Nor one on (record_type, stable_id): "which published
    # releases hold this record" probes the unique index once per published release
    # (`releases.selectors.releases_containing`), and a build's inserts cost half as much without it.
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="records", db_index=False)
    record_type = models.CharField(max_length=40)
    stable_id = models.CharField(max_length=150)
    content_sha256 = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["record_type", "stable_id"]
        constraints = [
            models.UniqueConstraint(fields=["release", "record_type", "stable_id"], name="releaserecord_unique")
        ]

    def __str__(self) -> str:
        return f"{self.record_type} {self.stable_id} in release #{self.release_id}"


class ReleaseEvent(models.Model):
    """The audit log of a release's build: one row per status change (cut, claim, re-send, publish,
    fail, cancel), written through `releases.lifecycle.RELEASES` (`common.lifecycle`) in the same
    locked transaction as the change. It names the release (a build has its release's key).

    Append-only (migration 0005, `common.append_only`): no UPDATE or DELETE. A failed release, the
    only kind the admin may delete, leaves its events behind: the link has no database constraint
    and deleting a release does nothing to them (a published one is never deleted: migration 0003)."""

    release = models.ForeignKey(Release, on_delete=models.DO_NOTHING, db_constraint=False, related_name="events")
    from_status = models.CharField(max_length=20, blank=True, help_text="Blank for the cut that created the release.")
    to_status = models.CharField(max_length=20, choices=ReleaseStatus.choices)
    attempt = models.PositiveSmallIntegerField(default=0, help_text="The build attempt the change belongs to.")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.release}: {self.from_status or 'cut'} -> {self.to_status}"


class ReleaseFixityCheck(models.Model):
    """One re-hash of a published release's files (`verify_release`, the weekly audit, or a download
    that found a file damaged). Append-only (migration 0005); the latest check of a release says
    whether it is damaged (`releases.selectors`)."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="fixity_checks")
    checked_at = models.DateTimeField(auto_now_add=True, db_index=True)
    intact = models.BooleanField()
    problems = models.TextField(blank=True, help_text="One line per difference found.")
    files_checked = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-checked_at", "-id"]

    def __str__(self) -> str:
        return f"{self.release}: {'intact' if self.intact else 'PROBLEMS'} at {self.checked_at:%Y-%m-%d %H:%M}"
