"""Public suggestions to correct a record, kept as sent, decided by curators with a public response.

The tables keep their names from when suggestions lived in the reviews app (`reviews_correction`,
`reviews_historicalcorrection`): the app moved, the data did not (migrations 0001 here and
reviews 0004 move the models in Django's state only)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models

from common.history import AuditHistory


class CorrectionStatus(models.TextChoices):
    NEW = "new", "New"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"
    DUPLICATE = "duplicate", "Duplicate"


class Correction(models.Model):
    """A public suggestion to correct a record. It never changes the record by itself.

    Everything a stranger sent is stored as sent (plain text) and escaped wherever it is shown.
    """

    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT)
    object_id = models.BigIntegerField()
    target = GenericForeignKey("content_type", "object_id")
    target_stable_id = models.CharField(max_length=150)
    target_label = models.CharField(max_length=500, help_text="The record's title when the suggestion arrived.")
    protocol_stable_id = models.CharField(
        max_length=150, blank=True, db_index=True, help_text="The protocol the record belongs to."
    )
    field_name = models.CharField(
        max_length=60, blank=True, help_text="Blank when the suggestion is about the record as a whole."
    )
    field_label = models.CharField(max_length=100, blank=True)
    value_at_submission = models.TextField(blank=True, help_text="The field's value when the suggestion arrived.")
    proposed_value = models.TextField(blank=True)
    explanation = models.TextField()
    supporting_source = models.CharField(max_length=500, blank=True, help_text="A URL or DOI.")
    supporting_locator = models.CharField(max_length=300, blank=True)
    contact_email = models.EmailField(blank=True, help_text="Never shown publicly.")
    status = models.CharField(
        max_length=20, choices=CorrectionStatus.choices, default=CorrectionStatus.NEW, db_index=True
    )
    response = models.TextField(blank=True, help_text="The curators' public response.")
    duplicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="duplicates")
    value_applied = models.BooleanField(default=False)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Set when the submitter was logged in (who is then deactivated, never deleted: a decided correction is final).",
    )
    token = models.CharField(max_length=64, unique=True, help_text="The private tracking token of the status link.")
    ip_hash = models.CharField(max_length=64, db_index=True, help_text="Salted with a daily rotating salt.")
    fingerprint = models.CharField(
        max_length=64, db_index=True, help_text="Hash of target, field and text, to fold identical suggestions."
    )
    notified_at = models.DateTimeField(null=True, blank=True, help_text="When curators were mailed about it.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    history = AuditHistory(
        excluded_fields=["contact_email", "ip_hash", "token", "notified_at"], table_name="reviews_historicalcorrection"
    )

    class Meta:
        db_table = "reviews_correction"
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["content_type", "object_id", "created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=CorrectionStatus.values), name="correction_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(duplicate_of__isnull=True) | models.Q(status=CorrectionStatus.DUPLICATE),
                name="correction_duplicate_has_status",
            ),
            models.CheckConstraint(condition=~models.Q(explanation=""), name="correction_explanation_not_empty"),
        ]
        permissions = [("moderate_correction", "Can accept, reject or fold a correction suggestion")]

    def __str__(self) -> str:
        return f"Correction #{self.pk} on {self.target_stable_id}"

    @property
    def decision_source(self) -> Correction:
        """The suggestion whose decision this one follows (itself, or the one it was folded into)."""
        return self.duplicate_of if self.duplicate_of_id and self.status == CorrectionStatus.DUPLICATE else self
