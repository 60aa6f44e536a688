"""`records_import`: validate the whole document, then write it in one transaction (or nothing)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from common.types import Actor
from records import models as m
from records.imports.document import (
    SECTION_BY_KEY,
    Entry,
    ImportConflict,
    ImportInvalid,
    ImportReport,
    entry_targets,
    referenced_ids,
)
from records.imports.merge import document_state, merge_fields
from records.imports.validation import parse_document
from records.services import errors_by_field, protocol_limitations_set, record_upsert


def records_import(
    *, document: Any, actor: Actor, dry_run: bool = False, overwrite: Iterable[str] = ()
) -> ImportReport:
    """Validate the whole document, then write it in one transaction (rolled back for a dry run).

    `overwrite` names records ("evaluations/<stable id>") whose fields changed since their last
    import on both sides and should take the document's values; any other such conflict refuses
    the whole import (ImportConflict) and lists every one. A dry run reports conflicts instead.
    """
    entries = parse_document(document)
    overwrite = set(overwrite)
    known = {f"{entry.section.key}/{entry.stable_id}" for entry in entries}
    unknown = sorted(overwrite - known)
    if unknown:
        raise ImportInvalid(
            [
                {"path": "overwrite", "message": f"{name!r} is not a record of this document (write section/stable id)"}
                for name in unknown
            ]
        )
    report = ImportReport(dry_run=dry_run)
    title = str(document.get("title") or "")[:500]
    try:
        with transaction.atomic():
            errors = _write(entries=entries, actor=actor, report=report, overwrite=overwrite, title=title)
            if errors:
                raise ImportInvalid(errors)
            if report.conflicts and not dry_run:
                raise ImportConflict(_conflict_errors(report.conflicts, entries), report.conflicts)
            if dry_run:
                transaction.set_rollback(True)
    except IntegrityError as exc:  # a database rule the validation did not foresee: nothing is kept
        raise ImportInvalid([{"path": "document", "message": f"refused by the database: {exc}"}]) from None
    return report


def _conflict_errors(conflicts: dict[str, dict[str, list[dict]]], entries: list[Entry]) -> list[dict[str, str]]:
    path_of = {(entry.section.key, entry.stable_id): entry.path for entry in entries}
    return [
        {
            "path": f"{path_of[(section, stable_id)]}.{item['field']}",
            "message": (
                f"changed since this document's last import{' by ' + item['changed_by'] if item['changed_by'] else ''} "
                f"(now {item['current']!r}, last imported {item['last_imported']!r}) and changed by the document too "
                f"({item['document']!r}): keep the current value by editing the document, or pass overwrite={section}/{stable_id}"
            ),
        }
        for section, records in conflicts.items()
        for stable_id, items in records.items()
        for item in items
    ]


def _write(
    *, entries: list[Entry], actor: Actor, report: ImportReport, overwrite: set[str], title: str
) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    saved: dict[tuple[str, str], models.Model] = {}
    stable_ids: dict[tuple[type, int], str] = {}

    def resolve(target: str, stable_id: str) -> models.Model | None:
        if not stable_id:
            return None
        if (target, stable_id) not in saved:
            saved[(target, stable_id)] = SECTION_BY_KEY[target].model.objects.filter(stable_id=stable_id).first()
        return saved[(target, stable_id)]

    def stable_id_of(model: type, pk: int | None) -> str | None:
        if pk is None:
            return None
        if (model, pk) not in stable_ids:
            stable_ids[(model, pk)] = model._default_manager.filter(pk=pk).values_list("stable_id", flat=True).first()
        return stable_ids[(model, pk)]

    snapshots = {
        (snapshot.section, snapshot.stable_id): snapshot
        for snapshot in m.ImportSnapshot.objects.filter(
            document=title, stable_id__in={entry.stable_id for entry in entries}
        )
    }
    failed: set[tuple[str, str]] = set()
    for entry in entries:
        model = entry.section.model
        depends_on = {
            (target, sid)
            for model_field, target in entry_targets(entry)
            for sid in referenced_ids(entry, model_field)
            if sid
        }
        if depends_on & failed:
            failed.add((entry.section.key, entry.stable_id))  # its error is reported where it starts
            continue
        values = dict(entry.values)
        for model_field, target in entry.section.references.values():
            values[model_field] = resolve(target, entry.references.get(model_field, ""))
        unresolved = [
            key
            for key, (model_field, _target) in entry.section.references.items()
            if entry.references.get(model_field) and values[model_field] is None
        ]
        if unresolved:  # only a cycle (a suite inside its own task) gets here: the rest was checked first
            errors.extend(
                {"path": f"{entry.path}.{key}", "message": "refers to a record that depends on this one"}
                for key in unresolved
            )
            failed.add((entry.section.key, entry.stable_id))
            continue
        record = model.objects.filter(stable_id=entry.stable_id).first()
        created = record is None
        if created:
            record = model(stable_id=entry.stable_id)
        many = {
            name: [resolve(target, sid) for sid in entry.many.get(name, [])]
            for _key, (name, target) in entry.section.many.items()
        }
        wanted = document_state(entry)
        limitations = entry.limitations
        if not created:
            take = merge_fields(
                entry=entry,
                record=record,
                wanted=wanted,
                snapshot=snapshots.get((entry.section.key, entry.stable_id)),
                overwrite=f"{entry.section.key}/{entry.stable_id}" in overwrite,
                report=report,
                stable_id_of=stable_id_of,
            )
            values = {name: value for name, value in values.items() if name in take}
            many = {name: value for name, value in many.items() if name in take}
            limitations = limitations if "limitations" in take else None
        try:
            changed = record_upsert(record=record, values=values, many=many, actor=actor, reason="import")
        except ValidationError as exc:
            errors.extend(
                {"path": f"{entry.path}.{name if name != '__all__' else 'record'}", "message": " ".join(msgs)}
                for name, msgs in errors_by_field(exc, model).items()
            )
            failed.add((entry.section.key, entry.stable_id))
            continue
        saved[(entry.section.key, entry.stable_id)] = record
        stable_ids[(model, record.pk)] = record.stable_id
        if limitations is not None and protocol_limitations_set(
            protocol=record, texts=limitations, actor=actor, reason="import"
        ):
            changed.append("limitations")
        snapshot = snapshots.get((entry.section.key, entry.stable_id))
        if snapshot is None or snapshot.values != wanted:
            m.ImportSnapshot.objects.update_or_create(
                document=title,
                section=entry.section.key,
                stable_id=entry.stable_id,
                defaults={
                    "values": wanted,
                    "imported_at": timezone.now(),
                    "imported_by": actor if getattr(actor, "pk", None) else None,
                },
            )
        if created:
            report.created.setdefault(entry.section.key, []).append(entry.stable_id)
        elif changed:
            report.updated.setdefault(entry.section.key, {})[entry.stable_id] = sorted(set(changed))
        else:
            report.unchanged[entry.section.key] = report.unchanged.get(entry.section.key, 0) + 1
    return errors
