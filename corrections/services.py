"""Services for public correction suggestions: submit (with limits and folding) and decide."""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from datetime import timedelta

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from common.errors import DomainError
from common.history import history_note
from common.locks import advisory_lock
from common.ratelimit import Limit, hit, ip_hash
from common.text import text_canonical
from common.types import Actor, acting_user
from corrections import selectors
from corrections.models import Correction, CorrectionStatus
from corrections.tasks import correction_digest_schedule, correction_notify_submitters
from records.models import Result
from records.services import record_save
from records.values import exact_text

FOLD_WINDOW = timedelta(days=1)
TOKEN_BYTES = 24


class CorrectionError(DomainError):
    """A decision that cannot be taken; `field` names what is wrong."""

    default_field = "decision"


def limits() -> tuple[Limit, Limit]:
    return (
        Limit("ip", settings.CORRECTIONS_PER_IP, settings.CORRECTIONS_WINDOW_SECONDS),
        Limit("record", settings.CORRECTIONS_PER_RECORD, settings.CORRECTIONS_RECORD_WINDOW_SECONDS),
    )


def _fingerprint(*, target_type: str, target_id: str, field_name: str, proposed_value: str, explanation: str) -> str:
    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text).casefold().split())

    parts = [target_type, target_id, field_name, norm(proposed_value), norm(explanation)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def correction_submit(
    *,
    target: selectors.Target,
    field_name: str,
    proposed_value: str,
    explanation: str,
    supporting_source: str,
    supporting_locator: str,
    contact_email: str,
    ip: str,
    user: Actor = None,
) -> Correction:
    """Store a suggestion on `target` (already validated), after the per-IP and per-record limits;
    its texts in their canonical form (common.text).

    Raises common.ratelimit.RateLimited. An identical suggestion on the same record within a day is
    folded into the first one while that is undecided (stored, marked duplicate of it, and decided
    with it); once the first is decided, the same text starts a new suggestion that a curator sees.
    """
    proposed_value, explanation = text_canonical(proposed_value), text_canonical(explanation)
    supporting_locator = text_canonical(supporting_locator)
    target_type = selectors.target_type_of(target)
    hashed_ip = ip_hash(ip)
    per_ip, per_record = limits()
    hit(limit=per_ip, key=hashed_ip)
    hit(limit=per_record, key=f"{target_type}:{target.stable_id}")
    fingerprint = _fingerprint(
        target_type=target_type,
        target_id=target.stable_id,
        field_name=field_name,
        proposed_value=proposed_value,
        explanation=explanation,
    )
    with transaction.atomic():
        # Two identical suggestions sent at once: the second waits here and folds into the first.
        advisory_lock(name=f"correction-fold:{fingerprint}")
        original = (
            Correction.objects.filter(
                fingerprint=fingerprint,
                duplicate_of__isnull=True,
                status=CorrectionStatus.NEW,
                created_at__gte=timezone.now() - FOLD_WINDOW,
            )
            .order_by("created_at", "id")
            .first()
        )
        correction = Correction(
            content_type=ContentType.objects.get_for_model(type(target)),
            object_id=target.pk,
            target_stable_id=target.stable_id,
            target_label=selectors.label_of(target)[:500],
            protocol_stable_id=selectors.protocol_of(target),
            field_name=field_name,
            field_label=selectors.field_label(target_type, field_name) or "",
            value_at_submission=selectors.field_text(target, field_name) if field_name else "",
            proposed_value=proposed_value,
            explanation=explanation,
            supporting_source=supporting_source,
            supporting_locator=supporting_locator,
            contact_email=contact_email,
            submitted_by=user if user is not None and user.is_authenticated else None,
            token=secrets.token_urlsafe(TOKEN_BYTES),
            ip_hash=hashed_ip,
            fingerprint=fingerprint,
        )
        if original is not None:
            correction.status = CorrectionStatus.DUPLICATE
            correction.duplicate_of = original
            correction.response = "Identical to a suggestion sent earlier; it is decided together with that one."
        history_note(
            correction,
            user=acting_user(user),
            reason="submitted" if original is None else f"folded into #{original.pk}",
        )
        correction.save()
        if original is None:
            transaction.on_commit(correction_digest_schedule)
    return correction


DECISIONS = {
    "accept": CorrectionStatus.ACCEPTED,
    "reject": CorrectionStatus.REJECTED,
    "duplicate": CorrectionStatus.DUPLICATE,
}


def correction_decide(
    *,
    correction: Correction,
    actor: Actor,
    decision: str,
    response: str,
    apply_value: bool = False,
    duplicate_of: Correction | None = None,
    printed_value: str = "",
    quote_reason: str = "",
) -> Correction:
    """Accept (optionally applying the proposed value), reject, or mark duplicate, with a public response.

    The record changes only through records' services (_value_apply), which
    reopen it for review with the correction as the reason; `printed_value` goes with a corrected
    result value (by default the old printed text takes the new number), and `quote_reason` says why
    the evaluation's quote does not print it where it does not: without one such a value is not
    applied (the record keeps its value). Mails the submitter after commit.
    """
    if decision not in DECISIONS:
        raise CorrectionError(f"unknown decision {decision!r}; use accept, reject or duplicate")
    response = text_canonical(response or "")
    if not response:
        raise CorrectionError("a public response is required", field="response")
    if actor is None or not actor.has_perm("corrections.moderate_correction"):
        raise CorrectionError("you do not have permission to moderate suggestions", field="decision")
    with transaction.atomic():
        locked = Correction.objects.select_for_update().get(pk=correction.pk)
        if locked.status != CorrectionStatus.NEW:
            raise CorrectionError(f"this suggestion was already decided: {locked.get_status_display().lower()}")
        if decision == "accept" and locked.submitted_by_id is not None and locked.submitted_by_id == actor.pk:
            raise CorrectionError("you submitted this suggestion yourself: another curator must decide it")
        if decision == "duplicate":
            if duplicate_of is None or duplicate_of.pk == locked.pk:
                raise CorrectionError("name the suggestion this one duplicates", field="duplicate_of")
            locked.duplicate_of = duplicate_of.decision_source
        if apply_value:
            if decision != "accept":
                raise CorrectionError("only an accepted suggestion can be applied", field="apply_value")
            if not locked.field_name:
                raise CorrectionError("this suggestion names no field to apply a value to", field="apply_value")
            try:
                _value_apply(
                    record=locked.target,
                    field_name=locked.field_name,
                    value_text=locked.proposed_value,
                    actor=actor,
                    correction_id=locked.pk,
                    printed_value=printed_value,
                    quote_reason=quote_reason,
                )
            except ValidationError as exc:
                field = "quote_reason" if "quote_reason" in getattr(exc, "error_dict", {}) else "apply_value"
                raise CorrectionError(
                    f"the proposed value cannot be applied: {' '.join(exc.messages)}", field=field
                ) from None
            locked.value_applied = True
        locked.status = DECISIONS[decision]
        locked.response = response
        locked.decided_at = timezone.now()
        locked.decided_by = acting_user(actor)
        history_note(locked, user=actor, reason=f"{decision}: {response}")
        locked.save()
        transaction.on_commit(lambda: correction_notify_submitters.delay(locked.pk))
    return locked


@transaction.atomic
def _value_apply(
    *,
    record: selectors.Target,
    field_name: str,
    value_text: str,
    actor: Actor,
    correction_id: int,
    printed_value: str = "",
    quote_reason: str = "",
) -> None:
    """Write an accepted suggestion's value through the records service, then reopen the record.

    A corrected result value carries its printed value along: `printed_value` when the curator
    gives it, else the old printed text with the new number (`printed_value_after`); the two must
    agree (records.values). Raises ValidationError (naming the field) when the text is not a valid
    value for the field.
    """
    if selectors.field_label(selectors.target_type_of(record), field_name) is None:
        raise ValidationError({field_name: "this field cannot be changed by a suggestion"})
    try:
        value = selectors.clean_text(record._meta.get_field(field_name), value_text, record)
    except ValidationError as exc:
        raise ValidationError({field_name: exc.messages}) from None
    changed = [field_name]
    if isinstance(record, Result) and field_name == "value":
        record.printed_value = printed_value.strip() or selectors.printed_value_after(result=record, value=value)
        changed.append("printed_value")
        old = record.value
        record.value = value
        if quote_reason.strip():
            record.quote_mismatch_reason = quote_reason.strip()
            changed.append("quote_mismatch_reason")
        elif problem := record.quote_problem(evaluation=record.evaluation):
            raise ValidationError(
                {
                    "quote_reason": f"{problem}: the value stays {exact_text(old)} until a curator corrects the "
                    "evaluation's quote, or give the reason the quote does not print the proposed one"
                }
            )
    elif printed_value.strip() or quote_reason.strip():
        raise ValidationError(
            {"printed_value": "a printed value or quote reason goes only with a corrected result value"}
        )
    setattr(record, field_name, value)
    reason = f"correction #{correction_id} accepted: {', '.join(changed)}"
    # reopen: any accepted value, sourced or not, is news to the record's review
    record_save(record=record, actor=actor, changed_fields=changed, reason=reason, reopen=True)
