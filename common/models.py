"""The one table of common (version counters that caches and conditional GETs are keyed on) and the
abstract status event of long work."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Version(models.Model):
    """A counter bumped in the same transaction as every write it versions (common.versions).

    `catalogue` moves with every change a public page or API answer can show: a curated record, a
    review transition, a published release. A reader that sees the new number therefore sees the
    new data too, and a cache entry keyed by the old number is never served again."""

    name = models.CharField(max_length=40, primary_key=True)
    number = models.BigIntegerField(default=0)
    changed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} v{self.number}"


class StatusEvent(models.Model):
    """One row per status change of a piece of long work (common.lifecycle writes it): an audit log,
    append-only. A concrete event adds its `job` (or release) and its `to_status` with their choices."""

    from_status = models.CharField(max_length=20, blank=True, help_text="Blank when the job was created.")
    attempt = models.PositiveSmallIntegerField(default=0)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_role = models.CharField(
        max_length=60, blank=True, help_text="The role the actor acted in; 'portal' for workers and the sweeper."
    )
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        abstract = True
        ordering = ["created_at", "id"]
