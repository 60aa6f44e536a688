"""Writes to the catalogue. Every create and edit of a curated record goes through `record_save`."""

from __future__ import annotations

from django.db import models, transaction

from reviews.models import Reviewable, ReviewState
from reviews.services import review_transition_apply

# Fields whose value a source vouches for: editing one of a reviewed record sends it back to review.
SOURCED_FIELDS: dict[str, frozenset[str]] = {
    "protocol": frozenset({"source", "source_locator", "metric_unit", "metric_direction"}),
    "evaluation": frozenset({"source", "source_locator", "quote", "concern_source", "concern_locator"}),
    "result": frozenset({"value", "unit", "printed_value", "lower_bound", "upper_bound", "num_runs"}),
    "evidencerow": frozenset({"source", "locator", "quote", "statement"}),
    "baselinerole": frozenset({"configuration"}),
}


def reviewed_owner(record: models.Model) -> Reviewable | None:
    """The reviewable record whose review covers `record` (a result is reviewed with its evaluation)."""
    if isinstance(record, Reviewable):
        return record
    owner = getattr(record, "evaluation", None)
    return owner if isinstance(owner, Reviewable) else None


def changed_field_names(*, record: models.Model, values: dict) -> list[str]:
    """Names of the fields in `values` that differ from the record's current values."""
    changed = []
    for name, value in values.items():
        field = record._meta.get_field(name)
        current = getattr(record, field.attname if field.is_relation else name)
        new = value.pk if field.is_relation and isinstance(value, models.Model) else value
        if current != new:
            changed.append(name)
    return changed


@transaction.atomic
def record_save(*, record: models.Model, actor, changed_fields: list[str] | None = None, reason: str = "") -> bool:
    """Create or update one curated record, with history under `actor` and `reason`.

    `changed_fields` (None for a new record) names the fields the caller changed. When a sourced
    field of a source-checked or excluded record changes, the record goes back to proposed through
    the review service, with the reason "edited: <fields>". Returns whether anything was written.
    """
    created = record.pk is None
    if not created and not changed_fields:
        return False
    record.full_clean(validate_unique=created, validate_constraints=True)
    if isinstance(record, Reviewable) and actor is not None:
        record.last_edited_by = actor
    record._history_user = actor
    record._change_reason = reason or ("created" if created else f"edited: {', '.join(sorted(changed_fields or []))}")
    record.save()
    if not created:
        _reopen_if_sourced_field_changed(record=record, changed_fields=changed_fields or [], actor=actor, why=reason)
    return True


def _reopen_if_sourced_field_changed(*, record: models.Model, changed_fields: list[str], actor, why: str) -> None:
    sourced = sorted(set(changed_fields) & SOURCED_FIELDS.get(record._meta.model_name, frozenset()))
    owner = reviewed_owner(record)
    if not sourced or owner is None:
        return
    owner.refresh_from_db(fields=["review_state"])
    if owner.review_state == ReviewState.PROPOSED:
        return
    prefix = "" if owner is record else f"{record._meta.model_name} {getattr(record, 'stable_id', record.pk)} "
    reason = f"edited: {prefix}{', '.join(sourced)}" + (f" ({why})" if why else "")
    review_transition_apply(record=owner, transition="reopen", actor=actor, reason=reason, automatic=True)
