"""The generic review workflow's tables. This app never imports `records`."""

from __future__ import annotations

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models


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
REVIEW_STATE_FIELDS = (
    "review_state",
    "review_state_changed_at",
    "review_state_changed_by_id",
    "review_state_changed_by_role",
    "concern",
)


class ReviewStateFacts:
    """What a review state says, for anything with a `review_state`: a Reviewable record, or a page's
    row read as values (records.page_rows)."""

    __slots__ = ()
    review_state: str

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


class Reviewable(ReviewStateFacts, models.Model):
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

    def review_check_problems(self) -> list[str]:
        """What in the record itself contradicts its source (a value its quote does not print):
        checking it then needs a reason. None by default."""
        return []


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
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
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


class ReviewClaim(models.Model):
    """A curator's word to the others, "I am checking these", on one record until it expires or is
    released: it blocks nothing (any curator may still review the record), it is shown on the review
    queue and the table review pages so that two curators do not check the same table."""

    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT)
    object_id = models.BigIntegerField()
    record = GenericForeignKey("content_type", "object_id")
    record_stable_id = models.CharField(max_length=150)
    claimed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    claimed_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-claimed_at", "-id"]
        indexes = [models.Index(fields=["content_type", "object_id", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.record_stable_id}: claimed by {self.claimed_by} until {self.expires_at:%Y-%m-%d %H:%M}"
