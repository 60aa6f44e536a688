"""The plan of an import: everything `records_import` would write, found with reads only.

Planning parses the document, resolves every reference (to a record of the database, or to one the
document creates, held in memory), merges each existing record three ways, and validates each record
as it would be written (its fields, its model's `clean`, its check and unique constraints, the
unit rule), collecting every problem of the whole document rather than stopping at the first.
It opens no transaction, so a dry run never takes the catalogue's write lock, and a real import
holds it only while it writes each batch of the plan (records.imports.service, records.imports.write).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from common.versions import version_current
from records.imports.aliases import configurations_matched
from records.imports.checks import constraint_errors, unique_key
from records.imports.comparisons import comparisons_reported
from records.imports.document import SECTION_BY_KEY, Entry, ImportReport, entry_targets, referenced_ids
from records.imports.merge import document_state, merge_fields
from records.imports.planned import ImportPlan, PlannedRecord
from records.imports.validation import document_entries
from records.models import Evaluation, ImportSnapshot, Result, Source
from records.services import errors_by_field
from records.values import printed_value_problem

Progress = Callable[[int, int], None]
CHUNK = 2000  # stable ids per IN (...) query: under every backend's limit of parameters


def import_plan(
    *,
    document: Any,
    overwrite: set[str],
    dry_run: bool,
    progress: Progress | None = None,
) -> ImportPlan:
    """Plan the import of `document`; `plan.errors` lists every problem found (empty: it can be written).

    `progress(done, total)` is called as entries are planned, `total` being their number."""
    version = version_current().number  # read first: a change after this read changes it
    entries, errors = document_entries(document)
    title = str(document.get("title") or "")[:500]
    plan = ImportPlan(title=title, version=version, report=ImportReport(dry_run=dry_run))
    configurations_matched(entries=entries, report=plan.report)
    known = {f"{entry.section.key}/{entry.stable_id}" for entry in entries}
    errors.extend(
        {"path": "overwrite", "message": f"{name!r} is not a record of this document (write section/stable id)"}
        for name in sorted(overwrite - known)
    )
    existing = _existing(entries)
    stable_ids: dict[tuple[type, int], str] = {
        (type(record), record.pk): stable_id for records in existing.values() for stable_id, record in records.items()
    }

    def stable_id_of(model: type, pk: int | None) -> str | None:
        if pk is None:
            return None
        if (model, pk) not in stable_ids:
            stable_ids[(model, pk)] = model._default_manager.filter(pk=pk).values_list("stable_id", flat=True).first()
        return stable_ids[(model, pk)]

    snapshots = _snapshots(title, entries)
    in_document = {(entry.section.key, entry.stable_id) for entry in entries}
    planned: dict[tuple[str, str], models.Model] = {}
    failed_fields = _failed_fields(errors)
    total = len(entries)
    step = max(1, total // 100)

    def resolve(target: str, stable_id: str) -> models.Model | None:
        if not stable_id:
            return None
        return planned.get((target, stable_id)) or existing[target].get(stable_id)

    record_errors: list[dict[str, str]] = []
    for index, entry in enumerate(entries, start=1):
        item = _plan_entry(
            entry=entry,
            resolve=resolve,
            existing=existing,
            in_document=in_document,
            snapshot=snapshots.get((entry.section.key, entry.stable_id)),
            overwrite=f"{entry.section.key}/{entry.stable_id}" in overwrite,
            report=plan.report,
            stable_id_of=stable_id_of,
            failed=failed_fields.get(entry.path, set()),
            errors=record_errors,
        )
        planned[(entry.section.key, entry.stable_id)] = item.record
        plan.records.append(item)
        if progress is not None and (index % step == 0 or index == len(entries)):
            progress(index, total)
    record_errors.extend(_document_clashes(plan.records))
    record_errors.extend(_quote_errors(plan.records))
    plan.errors = _first_per_path(errors + record_errors)
    if not plan.errors:
        comparisons_reported(plan=plan)
    for item in plan.records:
        section, stable_id = item.entry.section.key, item.entry.stable_id
        if item.created:
            plan.report.created.setdefault(section, []).append(stable_id)
        elif item.changed:
            plan.report.updated.setdefault(section, {})[stable_id] = item.changed
        else:
            plan.report.unchanged[section] = plan.report.unchanged.get(section, 0) + 1
    return plan


def _existing(entries: list[Entry]) -> dict[str, dict[str, models.Model]]:
    """The database's records the document names (its own and those it refers to), by section and stable id."""
    wanted: dict[str, set[str]] = {key: set() for key in SECTION_BY_KEY}
    for entry in entries:
        if entry.stable_id:
            wanted[entry.section.key].add(entry.stable_id)
        for model_field, target in entry_targets(entry):
            wanted[target].update(v for v in referenced_ids(entry, model_field) if v)
    found: dict[str, dict[str, models.Model]] = {}
    for key, ids in wanted.items():
        model = SECTION_BY_KEY[key].model
        found[key] = {}
        ordered = sorted(ids)
        for start in range(0, len(ordered), CHUNK):
            for record in model._default_manager.filter(stable_id__in=ordered[start : start + CHUNK]):
                found[key][record.stable_id] = record
    by_pk = {
        (type(record), record.pk): record for records in found.values() for record in records.values()
    }  # each record's references to records read here are linked, so `clean` reads no row twice
    for records in found.values():
        for record in records.values():
            for model_field in record._meta.concrete_fields:
                if (
                    model_field.many_to_one
                    and (model_field.related_model, getattr(record, model_field.attname)) in by_pk
                ):
                    model_field.set_cached_value(
                        record, by_pk[(model_field.related_model, getattr(record, model_field.attname))]
                    )
    return found


def _snapshots(title: str, entries: list[Entry]) -> dict[tuple[str, str], ImportSnapshot]:
    ids = sorted({entry.stable_id for entry in entries})
    found: dict[tuple[str, str], ImportSnapshot] = {}
    for start in range(0, len(ids), CHUNK):
        for snapshot in ImportSnapshot.objects.filter(document=title, stable_id__in=ids[start : start + CHUNK]):
            found[(snapshot.section, snapshot.stable_id)] = snapshot
    return found


def _failed_fields(errors: list[dict[str, str]]) -> dict[str, set[str]]:
    """Entry path -> the fields the document's checks already found a problem with."""
    failed: dict[str, set[str]] = {}
    for error in errors:
        prefix, _, name = error["path"].rpartition(".")
        failed.setdefault(prefix, set()).add(name)
    return failed


def _first_per_path(errors: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """One problem per path: the first found (a field refused as written is not also 'required')."""
    seen: set[str] = set()
    kept = []
    for error in errors:
        if error["path"] not in seen:
            seen.add(error["path"])
            kept.append(error)
    return kept


def _plan_entry(
    *,
    entry: Entry,
    resolve: Callable[[str, str], models.Model | None],
    existing: dict[str, dict[str, models.Model]],
    in_document: set[tuple[str, str]],
    snapshot: ImportSnapshot | None,
    overwrite: bool,
    report: ImportReport,
    stable_id_of: Callable[[type, int | None], str | None],
    failed: set[str],
    errors: list[dict[str, str]],
) -> PlannedRecord:
    model = entry.section.model
    values = dict(entry.values)
    for key, (model_field, target) in entry.section.references.items():
        stable_id = entry.references.get(model_field, "")
        values[model_field] = resolve(target, stable_id)
        if stable_id and values[model_field] is None and (target, stable_id) in in_document:
            # only a cycle (a suite inside its own task) gets here: the rest was checked first
            errors.append({"path": f"{entry.path}.{key}", "message": "refers to a record that depends on this one"})
            failed.add(model_field)
    many = {
        name: [record for sid in entry.many.get(name, []) if (record := resolve(target, sid)) is not None]
        for _key, (name, target) in entry.section.many.items()
    }
    wanted = document_state(entry)
    record = existing[entry.section.key].get(entry.stable_id)
    created = record is None
    limitations = entry.limitations
    changed: list[str] = []
    if record is None:
        record = model(stable_id=entry.stable_id)
        candidate = record
    else:
        take = merge_fields(
            entry=entry,
            record=record,
            wanted=wanted,
            snapshot=snapshot,
            overwrite=overwrite,
            report=report,
            stable_id_of=stable_id_of,
        )
        values = {name: value for name, value in values.items() if name in take}
        many = {name: value for name, value in many.items() if name in take}
        limitations = limitations if "limitations" in take else None
        changed = sorted(take)
        candidate = copy.copy(record)  # validated as it would be written; `record` stays as read
    for name, value in values.items():
        setattr(candidate, name, value)
    if created or changed:
        _validate(candidate, entry=entry, created=created, failed=failed, errors=errors)
    return PlannedRecord(
        entry=entry,
        record=record,
        created=created,
        values=values,
        many=many,
        limitations=limitations,
        changed=changed,
        wanted=wanted,
        snapshot=snapshot,
    )


def _validate(record: models.Model, *, entry: Entry, created: bool, failed: set[str], errors: list) -> None:
    """`record_save`'s validation of the record in memory: its fields (those the document's checks
    did not already clean), its model's `clean`, its check and unique constraints."""
    model = type(record)
    record.quote_checked_elsewhere = True  # by _quote_errors, on the whole plan
    exclude = set(failed) | (entry.cleaned - failed if created else set())
    for model_field in model._meta.concrete_fields:
        if model_field.many_to_one and model_field.is_cached(record) and model_field.get_cached_value(record):
            exclude.add(model_field.name)  # a record read or planned here: it exists, or will
    found: dict[str, list[str]] = {}
    try:
        record.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        found = errors_by_field(exc, model)
    for name, messages in constraint_errors(record, exclude=set(failed) | set(found)).items():
        found.setdefault(name, []).extend(messages)
    errors.extend(
        {"path": f"{entry.path}.{name if name != '__all__' else 'record'}", "message": " ".join(messages)}
        for name, messages in found.items()
    )


def _as_planned(item: PlannedRecord) -> Any:
    """The record as the plan would write it."""
    if item.created:
        return item.record
    record = copy.copy(item.record)
    for name, value in item.values.items():
        setattr(record, name, value)
    return record


def _requoted(item: PlannedRecord) -> bool:
    """Whether the plan changes what an evaluation's values are checked against."""
    return bool({"quote", "reading_method"} & set(item.changed))


def _quote_errors(records: list[PlannedRecord]) -> list[dict[str, str]]:
    """The value-and-quote check (records.models.evidence) on the plan as a whole: each new or changed
    result against its evaluation's quote as the plan leaves it (the document's or the stored one),
    and the stored results of an evaluation whose quote or reading method the document changes."""
    evaluations = {item.entry.stable_id: item for item in records if isinstance(item.record, Evaluation)}
    quoted: dict[str, Any] = {}

    def evaluation_of(stable_id: str) -> Any:
        if stable_id not in quoted:
            item = evaluations.get(stable_id)
            quoted[stable_id] = (
                _as_planned(item) if item is not None else Evaluation.objects.filter(stable_id=stable_id).first()
            )
        return quoted[stable_id]

    errors = []
    in_document: set[str] = set()
    for item in records:
        if not isinstance(item.record, Result):
            continue
        in_document.add(item.entry.stable_id)
        owner = item.entry.references.get("evaluation", "")
        evaluation = evaluation_of(owner)
        requoted = owner in evaluations and _requoted(evaluations[owner])
        if evaluation is None or not (item.created or item.changed or requoted):
            continue
        result = _as_planned(item)
        if not isinstance(result.value, Decimal) or printed_value_problem(
            value=result.value, printed=result.printed_value or ""
        ):
            continue  # the printed-value check reports this value already
        problem = result.quote_problem(evaluation=evaluation)
        if problem:
            errors.append(
                {
                    "path": f"{item.entry.path}.value",
                    "message": f"{problem}: correct the value or the quote, or give quote_mismatch_reason",
                }
            )
    for stable_id, item in evaluations.items():
        if item.created or not _requoted(item):
            continue
        evaluation = evaluation_of(stable_id)
        for result in Result.objects.filter(evaluation_id=item.record.pk).exclude(stable_id__in=in_document):
            problem = result.quote_problem(evaluation=evaluation)
            if problem:
                errors.append({"path": f"{item.entry.path}.quote", "message": f"result {result.stable_id}: {problem}"})
    return errors


def _document_clashes(records: list[PlannedRecord]) -> list[dict[str, str]]:
    """Two records of the document that a unique rule keeps apart (the database cannot see them yet):
    the second is refused, naming the first, as it would be once the first was written."""
    errors = []
    seen: dict[tuple, PlannedRecord] = {}
    for item in records:
        if not (item.created or item.changed):
            continue
        record = item.record if item.created else copy.copy(item.record)
        if not item.created:
            for name, value in item.values.items():
                setattr(record, name, value)
        model = type(record)
        for constraint in model._meta.constraints:
            if not isinstance(constraint, models.UniqueConstraint):
                continue
            key = unique_key(record, constraint)
            if key is None:
                continue
            other = seen.setdefault((model, constraint.name, key), item)
            if other is not item:
                field = constraint.fields[0] if constraint.fields else _expression_field(constraint)
                errors.append(
                    {"path": f"{item.entry.path}.{field}", "message": _clash_message(model, constraint, other)}
                )
    return errors


def _expression_field(constraint: models.UniqueConstraint) -> str:
    names = [ref for expression in constraint.expressions for ref in _field_refs(expression)]
    return names[0] if names else "record"


def _field_refs(expression: Any) -> list[str]:
    if hasattr(expression, "name") and isinstance(expression.name, str):
        return [expression.name]
    return [name for inner in getattr(expression, "source_expressions", []) for name in _field_refs(inner)]


def _clash_message(model: type[models.Model], constraint: models.UniqueConstraint, other: PlannedRecord) -> str:
    if model is Source:  # as records.works.source_duplicates says it of a source already written
        field = constraint.fields[0] if constraint.fields else _expression_field(constraint)
        label = model._meta.get_field(field).verbose_name
        return f"source {other.entry.stable_id!r} already has this {label}: use it instead of creating a duplicate"
    return f"{constraint.get_violation_error_message()} ({other.entry.path} has the same)"
