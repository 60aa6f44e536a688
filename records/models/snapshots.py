"""Bookkeeping of the import service (records.imports), not a catalogue record."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ImportSnapshot(models.Model):
    """What a document's last import wrote to a record, field by field (references as stable ids,
    decimals as their exact text): the base of that document's next three-way merge
    (records.imports), so that a re-import never silently overwrites what a curator or an accepted
    correction changed since. Kept per document (by its title): two documents that hold the same
    record each merge against their own last import, and one cannot undo the other unnoticed.
    Bookkeeping of the import service, not a catalogue record."""

    document = models.CharField(max_length=500, blank=True, help_text="The import document's title.")
    section = models.CharField(max_length=40, help_text='The import document\'s section, e.g. "evaluations".')
    stable_id = models.CharField(max_length=150)
    values = models.JSONField()
    imported_at = models.DateTimeField()
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "section", "stable_id"], name="importsnapshot_one_per_document_record"
            )
        ]

    def __str__(self) -> str:
        return f"{self.section}/{self.stable_id}"
