"""Read queries of the release pages and API: a constant number of SQL statements whatever the row count."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.http import Http404

from releases import catalogue_rows
from releases.models import UNFINISHED, FileKind, Release, ReleaseFile, ReleaseFixityCheck, ReleaseRecord, ReleaseStatus
from releases.store import release_directory, release_file_path
from releases.table_schemas import TABLES

CHANGE_LIST_LIMIT = 100


KIND_ORDER = Case(
    When(kind=FileKind.PAYLOAD, then=Value(0)),
    When(kind=FileKind.ARCHIVE, then=Value(1)),
    default=Value(2),
    output_field=IntegerField(),
)


def files_prefetch() -> Prefetch:
    """A release's files: the payload tables first, then the archive, then the bag's tag files."""
    return Prefetch("files", queryset=ReleaseFile.objects.order_by(KIND_ORDER, "name"))


def published_releases() -> QuerySet[Release]:
    return with_last_check(Release.objects.published().newest_first().select_related("previous", "build"))


# ------------------------------------------------------------------ damage


def with_last_check(queryset: QuerySet[Release]) -> QuerySet[Release]:
    """Each release with its latest fixity check's outcome (no query more): `release_damage` reads it."""
    latest = ReleaseFixityCheck.objects.filter(release=OuterRef("pk")).order_by("-checked_at", "-id")
    return queryset.annotate(
        last_check_intact=Subquery(latest.values("intact")[:1]),
        last_check_problems=Subquery(latest.values("problems")[:1]),
        last_checked_at=Subquery(latest.values("checked_at")[:1]),
    )


@dataclass(frozen=True)
class ReleaseDamage:
    """Whether a release is damaged: its latest fixity check (the audit's, or a download's) failed."""

    damaged: bool
    checked_at: datetime | None = None
    files: tuple[str, ...] = ()


def problem_file_names(problems: str) -> list[str]:
    """The file names in a check's problem lines (each starts with one), for public pages."""
    names: list[str] = []
    for line in problems.splitlines():
        name = line.split(":", 1)[0].strip()
        if name and name != "bag" and name not in names:
            names.append(name)
    return names


def damaged_file_names(check: ReleaseFixityCheck | None) -> list[str]:
    """The file names a failed check names."""
    return [] if check is None or check.intact else problem_file_names(check.problems)


def release_damage(release: Release) -> ReleaseDamage:
    """From `with_last_check`'s annotations when present, else one query (none before publication)."""
    if release.status != ReleaseStatus.PUBLISHED or release.is_external:
        return ReleaseDamage(damaged=False)
    if hasattr(release, "last_check_intact"):
        intact: bool | None = release.last_check_intact
        checked_at: datetime | None = getattr(release, "last_checked_at", None)
        problems: str = getattr(release, "last_check_problems", "") or ""
    else:
        check = release.fixity_checks.order_by("-checked_at", "-id").first() if release.pk else None
        intact, checked_at, problems = (
            (None, None, "") if check is None else (check.intact, check.checked_at, check.problems)
        )
    if intact is None or intact:
        return ReleaseDamage(damaged=False, checked_at=checked_at)
    return ReleaseDamage(damaged=True, checked_at=checked_at, files=tuple(problem_file_names(problems)))


def unfinished_releases() -> QuerySet[Release]:
    return Release.objects.filter(build__status__in=UNFINISHED).select_related("build").order_by("created_at", "id")


def release_list_page() -> dict:
    return {
        "releases": list(published_releases()),
        "building": list(unfinished_releases()),
        "bundle_tables": TABLES,  # what a release built now holds: the table schemas' own list
    }


def latest_published() -> Release | None:
    """The newest published release (by release date, then the later cut): pages are derived from it."""
    return Release.objects.published().newest_first().first()


def latest_built() -> Release | None:
    """The newest published release this portal built (external ones have no content fingerprint)."""
    return Release.objects.published().filter(is_external=False).newest_first().first()


def releases_containing(*, record_type: str, stable_id: str) -> list[Release]:
    """The published releases that hold a record (by its lower-case model name and stable id), newest first."""
    return list(
        Release.objects.filter(
            published_at__isnull=False, records__record_type=record_type, records__stable_id=stable_id
        )
        .order_by("-release_date", "-id")
        .distinct()
    )


def latest_published_or_404() -> Release:
    release = latest_published()
    if release is None:
        raise Http404("No release has been published yet")
    return release


def release_by_pk_or_404(pk: int) -> Release:
    release = Release.objects.select_related("build").filter(pk=pk).first()
    if release is None:
        raise Http404(f"No release #{pk}")
    return release


@dataclass
class ReleasePage:
    release: Release
    files: list[ReleaseFile]
    changes: ChangeList | None
    damage: ReleaseDamage = ReleaseDamage(damaged=False)

    @property
    def payload_files(self) -> list[ReleaseFile]:
        return [f for f in self.files if f.kind == "payload"]

    @property
    def other_files(self) -> list[ReleaseFile]:
        return [f for f in self.files if f.kind != "payload"]


def published_by_id_or_404(release_id: str) -> Release:
    release = (
        with_last_check(Release.objects.published())
        .select_related("previous", "build")
        .prefetch_related(files_prefetch())
        .filter(release_id=release_id)
        .first()
    )
    if release is None:
        raise Http404(f"No published release {release_id!r}")
    return release


def release_page(*, release_id: str) -> ReleasePage:
    release = published_by_id_or_404(release_id)
    changes = None if release.is_external else release_change_list(release=release, limit=CHANGE_LIST_LIMIT)
    return ReleasePage(
        release=release, files=list(release.files.all()), changes=changes, damage=release_damage(release)
    )


def release_file_or_404(*, release_id: str, name: str) -> tuple[Release, ReleaseFile, Path]:
    """A file of a published release this portal holds, by its name in the file table (nothing else)."""
    record = (
        ReleaseFile.objects.select_related("release")
        .filter(
            release__release_id=release_id,
            release__published_at__isnull=False,
            release__is_external=False,
            name=name,
        )
        .first()
    )
    if record is None:
        raise Http404("No such file in this release")
    release = record.release
    path = release_file_path(release, record.name)
    root = release_directory(str(release.release_id)).resolve()
    resolved = path.resolve()
    if root not in resolved.parents or not resolved.is_file():
        raise Http404("The file is not available")
    return release, record, resolved


# ------------------------------------------------------------------ changes


Matches = dict[str, tuple[int, int, int]]  # record type -> (memberships, kept, changed)


def records_by_type(queryset: QuerySet[ReleaseRecord]) -> dict[str, int]:
    """How many of the memberships in `queryset` there are of each record type (one query)."""
    return dict(
        sorted(queryset.order_by().values("record_type").annotate(n=Count("id")).values_list("record_type", "n"))
    )


def content_comparable(*, release: Release, previous: Release, format_version: int | None = None) -> bool:
    """Whether the two releases' content digests can be compared: both built here in one format
    (a digest covers a record's exported columns, which a new format changes for every record)."""
    mine = format_version or release.counts.get("format_version", 1)
    return not previous.is_external and previous.counts.get("format_version", 1) == mine


def _change_querysets(
    *, release: Release, previous: Release | None, format_version: int | None = None
) -> tuple[QuerySet[ReleaseRecord], QuerySet[ReleaseRecord], QuerySet[ReleaseRecord]]:
    """(added, removed, changed) memberships of `release` against `previous`, over the tracked record types."""
    mine = ReleaseRecord.objects.filter(release=release)
    if previous is None:
        return mine, ReleaseRecord.objects.none(), ReleaseRecord.objects.none()
    theirs = ReleaseRecord.objects.filter(release=previous, record_type__in=catalogue_rows.RECORD_TYPES)
    in_previous = theirs.filter(record_type=OuterRef("record_type"), stable_id=OuterRef("stable_id"))
    in_mine = mine.filter(record_type=OuterRef("record_type"), stable_id=OuterRef("stable_id"))
    added = mine.exclude(Exists(in_previous))
    removed = theirs.exclude(Exists(in_mine))
    if content_comparable(release=release, previous=previous, format_version=format_version):
        changed = mine.filter(Exists(in_previous.exclude(content_sha256=OuterRef("content_sha256"))))
    else:  # an external release (no content hashes) or another format: presence is compared, content is not
        changed = ReleaseRecord.objects.none()
    return added, removed, changed


def membership_matches(*, release_pk: int, previous_pk: int, record_type: str | None = None) -> Matches:
    """For each record type (or only `record_type`): how many memberships the release has, how many of
    them the previous release has too, and how many of those with another digest. One pass over the
    release's memberships, each looked up in the previous release's (one statement)."""
    theirs = ReleaseRecord.objects.filter(release_id=previous_pk, record_type__in=catalogue_rows.RECORD_TYPES)
    same = theirs.filter(record_type=OuterRef("record_type"), stable_id=OuterRef("stable_id"))
    mine = ReleaseRecord.objects.filter(release_id=release_pk)
    if record_type is not None:
        mine = mine.filter(record_type=record_type)
    # Held by both is a membership of the same record; changed, a digest of both that differs (a
    # release recorded from elsewhere has no digests: its records are held, their changes unknown).
    matched = (
        mine.order_by()
        .annotate(held=Exists(same), their_digest=Subquery(same.values("content_sha256")[:1]))
        .values("record_type")
        .annotate(
            n=Count("id"),
            kept=Count("id", filter=Q(held=True)),
            changed=Count(
                "id",
                filter=Q(their_digest__isnull=False) & ~Q(their_digest="") & ~Q(their_digest=F("content_sha256")),
            ),
        )
        .values_list("record_type", "n", "kept", "changed")
    )
    return {record_type: (n, kept, changed) for record_type, n, kept, changed in matched}


def membership_changes(
    *, release: Release, previous: Release | None, format_version: int | None = None, matches: Matches | None = None
) -> dict[str, dict[str, int]]:
    """How many records of each type `release` added, removed and changed against `previous` (the
    counts of `_change_querysets`' three querysets): from `membership_matches` (given, or one query)
    and a count of the previous release's memberships."""
    if previous is None:
        return {"added": records_by_type(ReleaseRecord.objects.filter(release=release)), "removed": {}, "changed": {}}
    comparable = content_comparable(release=release, previous=previous, format_version=format_version)
    if matches is None:
        matches = membership_matches(release_pk=release.pk, previous_pk=previous.pk)
    theirs = ReleaseRecord.objects.filter(release=previous, record_type__in=catalogue_rows.RECORD_TYPES)
    added = {record_type: n - kept for record_type, (n, kept, _) in matches.items()}
    changed = {record_type: n_changed for record_type, (_, _, n_changed) in matches.items()}
    removed = {
        record_type: n - matches.get(record_type, (0, 0, 0))[1] for record_type, n in records_by_type(theirs).items()
    }

    def nonzero(counts: dict[str, int]) -> dict[str, int]:
        return {record_type: n for record_type, n in sorted(counts.items()) if n}

    return {
        "added": nonzero(added),
        "removed": nonzero(removed),
        "changed": nonzero(changed) if comparable else {},
    }


@dataclass
class ChangeList:
    added: list[ReleaseRecord]
    removed: list[ReleaseRecord]
    changed: list[ReleaseRecord]
    limit: int


def release_change_list(*, release: Release, limit: int = 100) -> ChangeList:
    """Up to `limit` records added, removed and changed against the previous release (three queries)."""
    added, removed, changed = _change_querysets(release=release, previous=release.previous)
    order = ("record_type", "stable_id")
    return ChangeList(
        added=list(added.order_by(*order)[:limit]),
        removed=list(removed.order_by(*order)[:limit]),
        changed=list(changed.order_by(*order)[:limit]),
        limit=limit,
    )
