"""The one place that changes a review state (and the roles' set-up)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import timezone

from common.errors import DomainError
from common.history import history_note
from common.types import Actor, acting_user
from common.versions import version_bump
from reviews.models import (
    EXCLUDED_STATES,
    REVIEW_STATE_FIELDS,
    Reviewable,
    ReviewClaim,
    ReviewEvent,
    ReviewState,
)
from reviews.roles import ROLES, role_label_for
from reviews.selectors import active_claims, claim_key
from reviews.transitions import REOPEN_ON_EDIT, TRANSITIONS, Transition


class ReviewError(DomainError):
    """A refused transition."""

    default_field = "transition"


class TransitionConflict(ReviewError):
    status = 409
    code = "conflict"


class TransitionForbidden(ReviewError):
    status = 403
    code = "permission_denied"


@dataclass(frozen=True)
class AvailableTransition:
    name: str
    label: str
    needs_reason: bool


@dataclass(frozen=True)
class ReviewOption:
    """A transition that applies to a record in its state, and why the user may not apply it ("" when
    they may): the admin shows each beside the button it would have been, as the API says it."""

    name: str
    label: str
    needs_reason: bool
    refusal: str


def _refusal(*, spec: Transition, record: Reviewable, actor: Actor, automatic: bool) -> ReviewError | None:
    """Why `actor` may not apply `spec` to `record` now, or None when they may."""
    if record.review_state not in spec.sources:
        state = ReviewState(record.review_state).label.lower()
        return TransitionConflict(f"'{spec.label}' does not apply: the record is {state} now")
    if automatic:
        return None
    if actor is None or not actor.is_authenticated or not actor.has_perm(spec.permission):
        return TransitionForbidden(f"you do not have permission to '{spec.label.lower()}'", field="transition")
    if spec.four_eyes and settings.REVIEW_FOUR_EYES and record.last_edited_by_id == actor.pk:
        return TransitionForbidden(
            f"four-eyes rule: you edited this record last, so another curator must '{spec.label.lower()}'",
            field="transition",
        )
    return None


def review_options(*, record: Reviewable, user: Actor) -> list[ReviewOption]:
    """Every transition that applies to `record` in its current state, each with why `user` may not
    apply it (four eyes, permission), or "" when they may."""
    options = []
    for spec in TRANSITIONS.values():
        if record.review_state not in spec.sources:
            continue
        refusal = _refusal(spec=spec, record=record, actor=user, automatic=False)
        options.append(
            ReviewOption(
                name=spec.name,
                label=spec.label,
                needs_reason=spec.needs_reason,
                refusal=refusal.message if refusal is not None else "",
            )
        )
    return options


def available_transitions(*, record: Reviewable, user: Actor) -> list[AvailableTransition]:
    """The transitions `user` may apply to `record` in its current state (the API's list)."""
    return [
        AvailableTransition(name=option.name, label=option.label, needs_reason=option.needs_reason)
        for option in review_options(record=record, user=user)
        if not option.refusal
    ]


def review_transition_apply(
    *,
    record: Reviewable,
    transition: str,
    actor: Actor,
    reason: str = "",
    expected_state: str | None = None,
    automatic: bool = False,
) -> ReviewEvent:
    """Apply one transition of the table to one record, atomically, with the row locked.

    Writes exactly one ReviewEvent and one history row (same actor, same reason). `automatic=True`
    is for changes the caller has already authorised (the portal's importers, whose actor is None,
    and the automatic reopen when a curator edits a sourced field): no permission or four-eyes
    check, but the event and history are written as for any other transition.
    `expected_state` is the state the caller saw: a different one is a conflict (another curator won).
    """
    spec = TRANSITIONS.get(transition)
    if spec is None:
        raise ReviewError(f"unknown transition {transition!r}; use one of: {', '.join(TRANSITIONS)}")
    reason = (reason or "").strip()
    if spec.needs_reason and not reason:
        raise ReviewError(f"'{spec.label}' needs a reason", field="reason")
    model = type(record)
    with transaction.atomic():
        locked = model._default_manager.select_for_update().get(pk=record.pk)
        if expected_state is not None and locked.review_state != expected_state:
            state = ReviewState(locked.review_state).label.lower()
            raise TransitionConflict(f"the record changed meanwhile: it is {state} now")
        refusal = _refusal(spec=spec, record=locked, actor=actor, automatic=automatic)
        if refusal is not None:
            raise refusal
        problems = locked.review_check_problems() if spec.checks_source and not reason else []
        if problems:
            raise ReviewError(
                f"'{spec.label}' needs a reason here: {'; '.join(problems[:5])}. Say why the record is right all the same",
                field="reason",
            )
        from_state = locked.review_state
        role = role_label_for(actor)
        now = timezone.now()
        locked.review_state = spec.target
        locked.review_state_changed_at = now
        locked.review_state_changed_by = acting_user(actor)
        locked.review_state_changed_by_role = role
        if spec.target in (ReviewState.SOURCE_CHECKED, ReviewState.PROPOSED):
            locked.concern = ""  # back in comparisons (reinstate), or never excluded
        elif from_state not in EXCLUDED_STATES:
            locked.concern = reason  # newly excluded: the reason is the public concern
        # between the two excluded states the concern stays as the exclusion set it
        history_note(locked, user=actor, reason=f"{spec.label}: {reason}" if reason else spec.label)
        fields = list(REVIEW_STATE_FIELDS)
        if hasattr(locked, "updated_at"):
            fields.append("updated_at")  # a new state is a change of the record: ETags and Last-Modified move on
        locked.save(update_fields=fields)
        version_bump()  # the review state is on every page and API answer that shows the record
        event = ReviewEvent.objects.create(
            content_type=ContentType.objects.get_for_model(model),
            object_id=locked.pk,
            record_stable_id=getattr(locked, "stable_id", str(locked.pk)),
            transition=spec.name,
            from_state=from_state,
            to_state=spec.target,
            reason=reason,
            actor=acting_user(actor),
            actor_role=role,
        )
    for field in REVIEW_STATE_FIELDS:
        setattr(record, field, getattr(locked, field))
    return event


@dataclass
class BulkOutcome:
    """What one transition applied to many records did: the records it changed, and each refusal."""

    applied: list[Reviewable]
    refused: list[tuple[Reviewable, str]]


def review_transitions_apply(
    *, records: Iterable[Reviewable], transition: str, actor: Actor, reason: str = "", expected_state: str | None = None
) -> BulkOutcome:
    """Apply one transition to each record, each through `review_transition_apply` (its own atomic,
    locked change with its event and history row, four eyes and permissions as for one record): a
    refusal of one record is reported and changes nothing of the others."""
    outcome = BulkOutcome(applied=[], refused=[])
    for record in records:
        try:
            review_transition_apply(
                record=record, transition=transition, actor=actor, reason=reason, expected_state=expected_state
            )
        except ReviewError as exc:
            outcome.refused.append((record, exc.message))
        else:
            outcome.applied.append(record)
    return outcome


def review_claims_take(*, records: Sequence[Reviewable], actor: Actor, minutes: int) -> tuple[int, list[ReviewClaim]]:
    """Claim the records for `minutes` ("I am checking these"): a record another curator holds keeps
    their claim (returned, to be said); one the actor holds is extended. Returns how many the actor
    now holds and the others' claims met."""
    user = acting_user(actor)
    if user is None or not user.has_perm("reviews.check_source"):
        raise TransitionForbidden("you do not have permission to claim records for review", field="records")
    now = timezone.now()
    until = now + timedelta(minutes=minutes)
    held, others = 0, []
    with transaction.atomic():
        current = active_claims(records=records, now=now, lock=True)
        for record in records:
            claim = current.get(claim_key(record))
            if claim is not None and claim.claimed_by_id != user.pk:
                others.append(claim)
                continue
            if claim is not None:
                claim.expires_at = until
                claim.save(update_fields=["expires_at"])
            else:
                ReviewClaim.objects.create(
                    content_type=ContentType.objects.get_for_model(type(record)),
                    object_id=record.pk,
                    record_stable_id=getattr(record, "stable_id", str(record.pk)),
                    claimed_by=user,
                    expires_at=until,
                )
            held += 1
    return held, others


def review_claims_release(*, records: Sequence[Reviewable], actor: Actor) -> int:
    """Release the actor's claims on the records; returns how many were released."""
    user = acting_user(actor)
    if user is None:
        return 0
    now = timezone.now()
    with transaction.atomic():
        mine = [
            claim
            for claim in active_claims(records=records, now=now, lock=True).values()
            if claim.claimed_by_id == user.pk
        ]
        for claim in mine:
            claim.released_at = now
            claim.save(update_fields=["released_at"])
    return len(mine)


def review_reopen_if_reviewed(*, record: Reviewable, actor: Actor, reason: str) -> ReviewEvent | None:
    """Apply what an edit its review did not see means for `record` (REOPEN_ON_EDIT): a
    source-checked record goes back to proposed, an excluded one stays excluded with a re-check
    pending; a proposed record, or one already pending its re-check, is left as it is. The state is
    read under the row lock, so a transition racing the edit cannot slip between the check and the
    reopen. The caller has authorised the edit (hence `automatic`)."""
    with transaction.atomic():
        state = (
            type(record)._default_manager.select_for_update().values_list("review_state", flat=True).get(pk=record.pk)
        )
        transition = REOPEN_ON_EDIT.get(state)
        if transition is None:
            return None
        return review_transition_apply(record=record, transition=transition, actor=actor, reason=reason, automatic=True)


def roles_ensure() -> list[str]:
    """Create or update the role groups with exactly their permissions. Idempotent: every
    permission named is read in one query, and a group already right is left as it is."""
    named = {dotted for role in ROLES for dotted in role.permissions}
    found = {
        f"{app_label}.{codename}": pk
        for app_label, codename, pk in Permission.objects.filter(
            content_type__app_label__in={dotted.split(".", 1)[0] for dotted in named},
            codename__in={dotted.split(".", 1)[1] for dotted in named},
        ).values_list("content_type__app_label", "codename", "pk")
    }
    for role in ROLES:  # every name checked before anything is written
        unknown = [dotted for dotted in role.permissions if dotted not in found]
        if unknown:
            raise LookupError(f"role {role.group!r} names the unknown permission {unknown[0]!r}")
    report = []
    with transaction.atomic():
        for role in ROLES:
            group, created = Group.objects.get_or_create(name=role.group)
            wanted = {found[dotted] for dotted in role.permissions}
            group.permissions.set(wanted)
            report.append(f"{role.group}: {'created' if created else 'updated'}, {len(wanted)} permissions")
    return report
