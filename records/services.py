"""Writes to the catalogue. Every create, edit and delete of a curated record goes through
`record_save` or `record_delete`, which keep the search index current in the same transaction
(records.search_index).

`record_save` is the one place that decides whether an edit reopens a review ("reopen on edit"):
a sourced field changed (SOURCED_FIELDS, or the caller's `sourced_fields`), a result added, moved
or deleted, or the caller says the edit is news to the review (`reopen=True`, an accepted
correction). What reopening does to each state is reviews.transitions.REOPEN_ON_EDIT, applied under
the row lock by reviews.services.review_reopen_if_reviewed.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, models, transaction

from common.history import history_note
from common.text import text_canonical, text_canonical_or_same
from common.types import Actor
from common.versions import version_bump
from records.fields import ExactDecimalField
from records.models import Result
from records.search_index import (
    search_index_dependents,
    search_index_moved_from,
    search_index_refresh,
    search_index_update,
)
from records.values import same_exact
from reviews.models import REVIEW_STATE_FIELDS, Reviewable
from reviews.services import review_reopen_if_reviewed

if TYPE_CHECKING:
    from records.models import Protocol

# Fields whose value a source vouches for: editing one of a reviewed record sends it back to review.
SOURCED_FIELDS: dict[str, frozenset[str]] = {
    "protocol": frozenset({"source", "source_locator", "metric_unit", "metric_direction"}),
    "evaluation": frozenset(
        {
            "protocol",
            "configuration",
            "dataset",
            "measured_by",
            "measured_by_name",
            "repeats",
            "reading_method",
            "aggregation",
            "uncertainty",
            "coverage_scored",
            "coverage_eligible",
            "source",
            "source_locator",
            "quote",
            "concern_source",
            "concern_locator",
            "original_source",
            "original_citation",
            "original_locator",
        }
    ),
    "result": frozenset({"evaluation", *Result.MEASUREMENT_FIELDS, "reference_configuration"}),
    "evidencerow": frozenset({"source", "locator", "quote", "statement"}),
    "baselinerole": frozenset({"configuration"}),
}


def reviewed_owner(record: models.Model) -> Reviewable | None:
    """The reviewable record whose review covers `record` (a result is reviewed with its evaluation)."""
    if isinstance(record, Reviewable):
        return record
    owner = getattr(record, "evaluation", None)
    return owner if isinstance(owner, Reviewable) else None


def changed_field_names(*, record: models.Model, values: Mapping[str, Any]) -> list[str]:
    """Names of the fields in `values` that differ from the record's current values (an exact
    decimal differs when its printed digits do: 0.410 is not 0.41)."""
    changed: list[str] = []
    for name, value in values.items():
        field = cast("models.Field[Any, Any]", record._meta.get_field(name))  # `values` hold concrete fields only
        current = getattr(record, field.attname if field.is_relation else name)
        new = value.pk if field.is_relation and isinstance(value, models.Model) else value
        if not same_exact(current, new):
            changed.append(name)
    return changed


@transaction.atomic
def record_save(
    *,
    record: models.Model,
    actor: Actor,
    changed_fields: Sequence[str] | None = None,
    reason: str = "",
    reopen: bool = False,
    sourced_fields: Collection[str] | None = None,
) -> bool:
    """Create or update one curated record, with history under `actor` and `reason`.

    `changed_fields` (None for a new record) names the fields the caller changed. The review
    fields are taken from the locked row, so an edit never undoes a transition made meanwhile.
    When a sourced field of a source-checked or excluded record changes, or a result is added to
    or moved between reviewed evaluations, the record that carries the review goes back to
    proposed (an excluded one stays excluded, its re-check pending) through the review service
    ("edited: <fields>"), and the editor becomes its last editor (the four-eyes rule). `reopen`
    reopens the reviewed owner even when no sourced field changed (an accepted correction is news
    to the review whatever it changed), with `reason` as the review event's reason.
    Text is stored in its canonical form (common.text: LF line endings, no whitespace around it),
    and a named field whose canonical text equals the stored one is no edit: when no named field
    is left, nothing is written (no history row, no reopen). `sourced_fields` replaces
    SOURCED_FIELDS for a model this app does not know (an app above that saves its records here).
    The model's check constraints are enforced by the database as the row is written (validating
    them in Python costs a query each, per record: most of an import's time) and a violation comes
    back as the same field error; unique constraints are checked first, so their error names the
    record that holds the value. A database rule the validation did not
    foresee (a stable id taken by a concurrent write) is a ValidationError too. Returns whether
    anything was written.
    """
    created = record.pk is None
    if not created and not changed_fields:
        return False
    model = type(record)
    texts = _text_field_names(model)
    deferred = record.get_deferred_fields()  # not loaded, so not written either
    for name in texts:
        if name not in deferred:
            setattr(record, name, text_canonical_or_same(getattr(record, name)))
    if not created:
        changed_fields = _changed_in_canonical_form(record=record, named=list(changed_fields or []), texts=texts)
        if not changed_fields:
            return False
    record.full_clean(validate_unique=created, validate_constraints=False)
    _validate_unique_constraints(record)
    previous_owner_id = None
    if not created and not isinstance(record, Reviewable) and "evaluation" in (changed_fields or []):
        previous_owner_id = model._default_manager.filter(pk=record.pk).values_list("evaluation_id", flat=True).first()
    moved_from = [] if created else search_index_moved_from(record=record, changed_fields=changed_fields)
    if isinstance(record, Reviewable) and actor is not None:
        record.last_edited_by = actor  # type: ignore[assignment]  # a signed-in user: only they edit records
    history_note(
        record,
        user=actor,
        reason=reason or ("created" if created else f"edited: {', '.join(sorted(changed_fields or []))}"),
    )
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError as exc:
        raise _constraint_error(type(record), exc) from None
    version_bump()
    search_index_update(records=[record, *moved_from])
    owner = reviewed_owner(record)
    if created:
        if owner is not record:  # a new result changes what its evaluation's review saw
            _owner_changed(record=record, owner=owner, what=["added"], actor=actor, why=reason)
        return True
    if sourced_fields is None:
        sourced_fields = SOURCED_FIELDS.get(record._meta.model_name or "", frozenset())
    sourced = sorted(set(changed_fields or []) & set(sourced_fields))
    if sourced:
        _owner_changed(record=record, owner=owner, what=sourced, actor=actor, why=reason)
        if previous_owner_id is not None and previous_owner_id != getattr(record, "evaluation_id", None):
            evaluation_model = cast("type[Reviewable]", record._meta.get_field("evaluation").related_model)
            previous = evaluation_model._default_manager.get(pk=previous_owner_id)
            _owner_changed(record=record, owner=previous, what=["moved away"], actor=actor, why=reason)
    elif reopen:
        _owner_changed(
            record=record,
            owner=owner,
            what=sorted(changed_fields or []),
            actor=actor,
            why=reason,
            reason=reason or None,
        )
    return True


@functools.cache
def _text_field_names(model: type[models.Model]) -> tuple[str, ...]:
    """The model's text columns (an exact decimal, stored as text, holds a Decimal: not one of them)."""
    return tuple(
        field.attname
        for field in model._meta.concrete_fields
        if isinstance(field, (models.CharField, models.TextField)) and not isinstance(field, ExactDecimalField)
    )


def _changed_in_canonical_form(*, record: models.Model, named: list[str], texts: Sequence[str]) -> list[str]:
    """`named` without the text fields whose stored text is already the record's (canonical) text.

    A reviewable record's review fields are taken from its row, locked, in the same query."""
    model = type(record)
    compared = [name for name in named if name in texts]
    stored: dict[str, Any] = {}
    if isinstance(record, Reviewable):
        locked = model._default_manager.select_for_update().only(*REVIEW_STATE_FIELDS, *compared).get(pk=record.pk)
        for name in REVIEW_STATE_FIELDS:
            setattr(record, name, getattr(locked, name))
        stored = {name: getattr(locked, name) for name in compared}
    elif compared:
        stored = model._default_manager.filter(pk=record.pk).values(*compared).first() or {}
    return [
        name
        for name in named
        if not (isinstance(stored.get(name), str) and text_canonical(stored[name]) == getattr(record, name))
    ]


def _validate_unique_constraints(record: models.Model) -> None:
    errors: list[ValidationError] = []
    for constraint in record._meta.constraints:
        if isinstance(constraint, models.UniqueConstraint):
            try:
                constraint.validate(type(record), record)  # type: ignore[attr-defined]  # django-stubs lacks BaseConstraint.validate
            except ValidationError as exc:
                errors.append(exc)
    if errors:
        raise ValidationError(errors)


def _constraint_error(model: type[models.Model], exc: IntegrityError) -> ValidationError:
    """The database's refusal as the validation error the constraint declares (its code names the
    field, see records.models._check), or as a non-field error when no declared constraint is named."""
    text = str(exc)
    checks = sorted(
        (c for c in model._meta.constraints if isinstance(c, models.CheckConstraint)), key=lambda c: -len(c.name)
    )
    for constraint in checks:  # the longest name first: no name is then taken for a part of another
        if constraint.name in text:
            return ValidationError(constraint.get_violation_error_message(), code=constraint.violation_error_code)
    return ValidationError({NON_FIELD_ERRORS: [f"the database refused the change: {text}".strip()]})


@transaction.atomic
def record_delete(*, record: models.Model, actor: Actor, reason: str = "") -> None:
    """Delete one curated record (an inline row in practice) with history under `actor`; removing a
    result reopens its reviewed evaluation as an edit would."""
    owner = reviewed_owner(record)
    history_note(record, user=actor, reason=reason or "deleted")
    shown_on = search_index_dependents(records=[record])  # read before the row (and its cascade) goes
    record.delete()
    version_bump()
    search_index_refresh(refs=shown_on)
    if owner is not None and owner is not record:
        _owner_changed(record=record, owner=owner, what=["deleted"], actor=actor, why=reason)


def _owner_changed(
    *,
    record: models.Model,
    owner: Reviewable | None,
    what: list[str],
    actor: Actor,
    why: str,
    reason: str | None = None,
) -> None:
    """`record` changed in ways its owner's review vouched for: the actor becomes the owner's last
    editor and a reviewed owner is reopened (REOPEN_ON_EDIT), with `reason`, by default
    "edited: <what> (<why>)"."""
    if owner is None:
        return
    if actor is not None and owner is not record:
        type(owner)._default_manager.filter(pk=owner.pk).update(last_edited_by=actor)
        owner.last_edited_by = actor  # type: ignore[assignment]  # a signed-in user: only they edit records
    if reason is None:
        prefix = "" if owner is record else f"{record._meta.model_name} {getattr(record, 'stable_id', record.pk)} "
        reason = f"edited: {prefix}{', '.join(what)}" + (f" ({why})" if why else "")
    review_reopen_if_reviewed(record=owner, actor=actor, reason=reason)


@transaction.atomic
def record_upsert(
    *,
    record: models.Model,
    values: Mapping[str, Any],
    many: Mapping[str, Sequence[models.Model]] | None = None,
    actor: Actor,
    reason: str = "",
) -> list[str]:
    """Set `values` (and many-to-many sets) on a new or existing record and save it through `record_save`.

    Returns the names of what changed (empty: nothing was written, so repeating a write is a no-op);
    text is compared in its canonical form (common.text), so a line ending alone is no change.
    """
    created = record.pk is None
    texts = _text_field_names(type(record))
    values = {name: text_canonical_or_same(value) if name in texts else value for name, value in values.items()}
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
def protocol_limitations_set(*, protocol: Protocol, texts: list[str], actor: Actor, reason: str = "") -> bool:
    """Make the protocol's ordered limitations exactly `texts`; returns whether anything changed."""
    from records.models import Limitation

    texts = [text_canonical(text) for text in texts]
    current = {limitation.position: limitation for limitation in protocol.limitations.all()}
    if [current[position].text for position in sorted(current)] == texts:
        return False
    for position, limitation in current.items():
        if position > len(texts):
            record_delete(record=limitation, actor=actor, reason=reason or "limitation removed")
    for position, text in enumerate(texts, start=1):
        limitation = current.get(position) or Limitation(protocol=protocol, position=position)
        if limitation.pk is None or limitation.text != text:
            limitation.text = text
            record_save(
                record=limitation,
                actor=actor,
                changed_fields=None if limitation.pk is None else ["text"],
                reason=reason,
            )
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
