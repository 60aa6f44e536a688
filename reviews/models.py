"""The generic review workflow's tables. This app never imports `records`."""

from __future__ import annotations

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from simple_history.models import HistoricalRecords


class ReviewState(models.TextChoices):
    PROPOSED = "proposed", "Proposed"
    SOURCE_CHECKED = "source_checked", "Source checked"
    EXCLUDED = "excluded", "Excluded from comparison"
    # Edited while excluded: still out of every comparison, its concern still public, until a curator
    # re-checks it (it stays excluded) or reinstates it (the only way back into comparisons).
    EXCLUDED_RECHECK = "excluded_recheck", "Excluded from comparison, edited since: re-check pending"


#: The states that keep a record out of comparisons with a public concern.
EXCLUDED_STATES = frozenset({ReviewState.EXCLUDED, ReviewState.EXCLUDED_RECHECK})


#: The fields only `reviews.services.review_transition_apply` writes (attribute names).
REVIEW_STATE_FIELDS = ("review_state", "review_state_changed_at", "review_state_changed_by_id", "review_state_changed_by_role", "concern")


class Reviewable(models.Model):
    """Mixin for every curated record that carries a review state.

    The state and the fields beside it are not editable in forms: only
    `reviews.services.review_transition_apply` assigns them.
    """

    review_state = models.CharField(
        max_length=20, choices=ReviewState.choices, default=ReviewState.PROPOSED, editable=False, db_index=True
    )
    review_state_changed_at = models.DateTimeField(null=True, blank=True, editable=False)
    review_state_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    # The role the actor acted in, kept so public pages can say "checked by a curator" without a name.
    review_state_changed_by_role = models.CharField(max_length=60, blank=True, editable=False)
    # Who edited the record's fields last: the four-eyes rule refuses them the source check.
    last_edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    concern = models.TextField(
        blank=True,
        editable=False,
        help_text="Why the record is excluded from comparison; set by the exclude transition and shown publicly.",
    )

    class Meta:
        abstract = True

    @property
    def is_comparable(self) -> bool:
        return self.review_state == ReviewState.SOURCE_CHECKED

    @property
    def is_excluded(self) -> bool:
        return self.review_state in EXCLUDED_STATES

    @property
    def needs_recheck(self) -> bool:
        return self.review_state == ReviewState.EXCLUDED_RECHECK

    @property
    def source_was_checked(self) -> bool:
        """Excluded records were source checked first: exclusion is only reachable from that state."""
        return self.review_state in (ReviewState.SOURCE_CHECKED, *EXCLUDED_STATES)


class ReviewEvent(models.Model):
    """The explicit audit log: one row per applied transition, never edited or deleted."""

    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT)
    object_id = models.BigIntegerField()
    record = GenericForeignKey("content_type", "object_id")
    record_stable_id = models.CharField(max_length=150, db_index=True)
    transition = models.CharField(max_length=30)
    from_state = models.CharField(max_length=20, choices=ReviewState.choices)
    to_state = models.CharField(max_length=20, choices=ReviewState.choices)
    reason = models.TextField(blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    actor_role = models.CharField(max_length=60, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["content_type", "object_id", "created_at"])]
        permissions = [
            ("check_source", "Can check the source of a record"),
            ("exclude_record", "Can exclude a record from comparison"),
            ("reinstate_record", "Can reinstate an excluded record"),
            ("reopen_record", "Can reopen a reviewed record"),
        ]

    def __str__(self) -> str:
        return f"{self.record_stable_id}: {self.from_state} -> {self.to_state}"


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
    protocol_stable_id = models.CharField(max_length=150, blank=True, db_index=True, help_text="The protocol the record belongs to.")
    field_name = models.CharField(max_length=60, blank=True, help_text="Blank when the suggestion is about the record as a whole.")
    field_label = models.CharField(max_length=100, blank=True)
    value_at_submission = models.TextField(blank=True, help_text="The field's value when the suggestion arrived.")
    proposed_value = models.TextField(blank=True)
    explanation = models.TextField()
    supporting_source = models.CharField(max_length=500, blank=True, help_text="A URL or DOI.")
    supporting_locator = models.CharField(max_length=300, blank=True)
    contact_email = models.EmailField(blank=True, help_text="Never shown publicly.")
    status = models.CharField(max_length=20, choices=CorrectionStatus.choices, default=CorrectionStatus.NEW, db_index=True)
    response = models.TextField(blank=True, help_text="The curators' public response.")
    duplicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="duplicates")
    value_applied = models.BooleanField(default=False)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Set when the submitter was logged in.",
    )
    token = models.CharField(max_length=64, unique=True, help_text="The private tracking token of the status link.")
    ip_hash = models.CharField(max_length=64, db_index=True, help_text="Salted with a daily rotating salt.")
    fingerprint = models.CharField(max_length=64, db_index=True, help_text="Hash of target, field and text, to fold identical suggestions.")
    notified_at = models.DateTimeField(null=True, blank=True, help_text="When curators were mailed about it.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    history = HistoricalRecords(excluded_fields=["contact_email", "ip_hash", "token", "notified_at"])

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["content_type", "object_id", "created_at"])]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=CorrectionStatus.values), name="correction_status_valid"),
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
    def decision_source(self) -> "Correction":
        """The suggestion whose decision this one follows (itself, or the one it was folded into)."""
        return self.duplicate_of if self.duplicate_of_id and self.status == CorrectionStatus.DUPLICATE else self
