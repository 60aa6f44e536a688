"""Writes to the catalogue. Every create and edit of a curated record goes through `record_save`."""

from __future__ import annotations

from django.core.exceptions import ValidationError
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


@transaction.atomic
def record_upsert(
    *, record: models.Model, values: dict, many: dict[str, list] | None = None, actor, reason: str = ""
) -> list[str]:
    """Set `values` (and many-to-many sets) on a new or existing record and save it through `record_save`.

    Returns the names of what changed (empty: nothing was written, so repeating a write is a no-op).
    """
    created = record.pk is None
    changed = [] if created else changed_field_names(record=record, values=values)
    for name, value in values.items():
        setattr(record, name, value)
    if created or changed:
        record_save(record=record, actor=actor, changed_fields=None if created else changed, reason=reason)
    for name, wanted in (many or {}).items():
        manager = getattr(record, name)
        if created or {obj.pk for obj in manager.all()} != {obj.pk for obj in wanted}:
            manager.set(wanted)
            changed.append(name)
    return changed


@transaction.atomic
def protocol_limitations_set(*, protocol, texts: list[str], actor, reason: str = "") -> bool:
    """Make the protocol's ordered limitations exactly `texts`; returns whether anything changed."""
    from records.models import Limitation

    current = {limitation.position: limitation for limitation in protocol.limitations.all()}
    if [current[position].text for position in sorted(current)] == texts:
        return False
    for position, limitation in current.items():
        if position > len(texts):
            limitation._history_user = actor
            limitation._change_reason = reason or "limitation removed"
            limitation.delete()
    for position, text in enumerate(texts, start=1):
        limitation = current.get(position) or Limitation(protocol=protocol, position=position)
        if limitation.pk is None or limitation.text != text:
            limitation.text = text
            record_save(record=limitation, actor=actor, changed_fields=None if limitation.pk is None else ["text"], reason=reason)
    return True


def errors_by_field(error: ValidationError, model: type[models.Model]) -> dict[str, list[str]]:
    """A model's validation errors keyed by field name.

    A check constraint's violation arrives as a non-field error; its code names the field it guards
    (see records.models._check), so it is filed under that field.
    """
    names = {field.name for field in model._meta.get_fields()}
    grouped = error.error_dict if hasattr(error, "error_dict") else {"__all__": error.error_list}
    result: dict[str, list[str]] = {}
    for key, errors in grouped.items():
        for item in errors:
            target = item.code if key == "__all__" and item.code in names else key
            result.setdefault(target, []).extend(item.messages)
    return result
