"""The one table of common: version counters that caches and conditional GETs are keyed on."""

from __future__ import annotations

from django.db import models


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
