"""Releases: published, checksummed snapshots of the catalogue."""

from __future__ import annotations

from django.db import models


class ReleaseStatus(models.TextChoices):
    REQUESTED = "requested", "Requested"
    BUILDING = "building", "Building"
    PUBLISHED = "published", "Published"
    FAILED = "failed", "Failed"


class Release(models.Model):
    # Assigned when the bundle is built: the release date and 12 hex digits of its content hash.
    release_id = models.CharField(max_length=40, unique=True, null=True, blank=True)
    release_date = models.DateField()
    status = models.CharField(max_length=20, choices=ReleaseStatus.choices, default=ReleaseStatus.REQUESTED)
    is_external = models.BooleanField(
        default=False, help_text="Recorded from a published record page; this portal does not hold its files."
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-release_date", "-id"]
        get_latest_by = ["release_date", "id"]

    def __str__(self) -> str:
        return self.release_id or f"release #{self.pk} ({self.get_status_display().lower()})"


class ReleaseRecord(models.Model):
    """That a release contains a record (by type and stable id), with the record's content hash."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="records")
    record_type = models.CharField(max_length=40)
    stable_id = models.CharField(max_length=150)
    content_sha256 = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["record_type", "stable_id"]
        constraints = [models.UniqueConstraint(fields=["release", "record_type", "stable_id"], name="releaserecord_unique")]
        indexes = [models.Index(fields=["record_type", "stable_id"])]
