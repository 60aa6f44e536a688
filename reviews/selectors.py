"""Read queries of the review workflow."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from django.contrib.contenttypes.models import ContentType
from django.db.models import Max, Model, Q, QuerySet
from django.utils import timezone

from reviews.models import ReviewClaim, ReviewEvent
from reviews.roles import SYSTEM_LABEL


def review_events(*, record: Model, newest_first: bool = False) -> QuerySet[ReviewEvent]:
    """A record's review log: every transition applied to it (one query)."""
    content_type = ContentType.objects.get_for_model(type(record))
    order = ("-created_at", "-id") if newest_first else ("created_at", "id")
    return (
        ReviewEvent.objects.filter(content_type=content_type, object_id=record.pk)
        .select_related("content_type")
        .order_by(*order)
    )


#: What each transition did, in the words a public page uses (reviews.transitions names them as actions).
TRANSITION_DONE = {
    "check_source": "source checked",
    "exclude": "excluded from comparison",
    "reinstate": "reinstated in comparisons",
    "reopen": "reopened: its source is to be checked again",
    "reopen_excluded": "reopened, still excluded from comparison: re-check pending",
    "recheck": "source checked again, still excluded from comparison",
}


@dataclass(frozen=True)
class ReviewLogEntry:
    """One transition as a public page shows it. `actor_name` is the person's name, which a page
    shows only where settings.PUBLIC_REVIEWER_NAMES says (the `public_reviewer_names` context)."""

    at: datetime
    transition: str
    done: str
    role: str
    actor_name: str
    reason: str

    @property
    def automatic(self) -> bool:
        """Applied by the portal itself (an import or the demo loader), with no person acting."""
        return self.role == SYSTEM_LABEL

    @property
    def by_role(self) -> str:
        """The role with its article: "a curator", "an administrator"."""
        article = "an" if self.role[:1].lower() in "aeiou" else "a"
        return f"{article} {self.role}"


def _entry(event: ReviewEvent) -> ReviewLogEntry:
    actor = event.actor
    return ReviewLogEntry(
        at=event.created_at,
        transition=event.transition,
        done=TRANSITION_DONE.get(event.transition, event.transition.replace("_", " ")),
        role=event.actor_role or SYSTEM_LABEL,
        actor_name=(actor.get_full_name() or actor.get_username()) if actor is not None else "",
        reason=event.reason,
    )


def _of(record: Model) -> Q:
    # The content type by a join, not a lookup: one statement even with a cold ContentType cache.
    meta = record._meta
    return Q(content_type__app_label=meta.app_label, content_type__model=meta.model_name, object_id=record.pk)


class ReviewLog:
    """A record's review log for a page, oldest first: read in one query when first iterated,
    whatever its length, and not at all when the page is served from the page cache."""

    def __init__(self, record: Model) -> None:
        self._record = record

    @cached_property
    def entries(self) -> list[ReviewLogEntry]:
        events = ReviewEvent.objects.filter(_of(self._record)).select_related("actor").order_by("created_at", "id")
        return [_entry(event) for event in events]

    def __iter__(self) -> Iterator[ReviewLogEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def last(self) -> ReviewLogEntry | None:
        return self.entries[-1] if self.entries else None


def last_review_entries(*, records: Sequence[Model]) -> dict[tuple[str, int], ReviewLogEntry]:
    """The last transition of each of `records` (of any reviewable models), keyed by
    (model label, primary key), in one query; records never reviewed are absent."""
    if not records:
        return {}
    wanted = Q()
    by_model: dict[tuple[str, str], list[int]] = {}
    for record in records:
        by_model.setdefault((record._meta.app_label, str(record._meta.model_name)), []).append(record.pk)
    for (app_label, model_name), pks in by_model.items():
        wanted |= Q(content_type__app_label=app_label, content_type__model=model_name, object_id__in=pks)
    last_ids = ReviewEvent.objects.filter(wanted).values("content_type", "object_id").annotate(last=Max("id"))
    events = ReviewEvent.objects.filter(pk__in=last_ids.values("last")).select_related("actor", "content_type")
    return {(event.content_type.model, event.object_id): _entry(event) for event in events}


def claim_key(record: Model) -> tuple[str, int]:
    """A record's key among claims: its model's label and primary key."""
    return record._meta.label_lower, record.pk


def active_claims(
    *, records: Sequence[Model], now: datetime | None = None, lock: bool = False
) -> dict[tuple[str, int], ReviewClaim]:
    """The claim in force on each of the records (not released, not expired), by `claim_key`: one
    query whatever their number (one per model among them). `lock` locks the claims read (the
    claim services take them inside their transaction)."""
    now = now or timezone.now()
    by_model: dict[type[Model], list[int]] = {}
    for record in records:
        by_model.setdefault(type(record), []).append(record.pk)
    found: dict[tuple[str, int], ReviewClaim] = {}
    for model, pks in by_model.items():
        claims = ReviewClaim.objects.filter(
            content_type=ContentType.objects.get_for_model(model),
            object_id__in=pks,
            released_at__isnull=True,
            expires_at__gt=now,
        ).select_related("claimed_by")
        if lock:
            claims = claims.select_for_update(of=("self",))
        for claim in claims.order_by("claimed_at", "id"):
            found.setdefault((model._meta.label_lower, claim.object_id), claim)
    return found
