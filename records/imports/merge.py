"""The three-way merge of a re-import: the document, the record now, and what the document held
at its last import (`ImportSnapshot`), field by field."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from typing import Any

from django.db import models

from records.imports.document import Entry, ImportReport
from records.values import exact_text

_MISSING = object()


def _plain(value: Any) -> Any:
    """A field's value as the snapshot keeps it: JSON-able, exact decimals as their text."""
    if isinstance(value, Decimal):
        return exact_text(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, models.Model):
        return value.stable_id
    return value


def document_state(entry: Entry) -> dict[str, Any]:
    """Everything the document says about the record, field by field (references as stable ids)."""
    state = {name: _plain(value) for name, value in entry.values.items()}
    state.update({name: (stable_id or None) for name, stable_id in entry.references.items()})
    state.update({name: sorted(stable_ids) for name, stable_ids in entry.many.items()})
    if entry.limitations is not None:
        state["limitations"] = list(entry.limitations)
    return state


def _record_state(record: models.Model, names: Iterable[str], stable_id_of) -> dict[str, Any]:
    """The record's current values of `names`, in the form of `document_state`."""
    state: dict[str, Any] = {}
    for name in names:
        if name == "limitations":
            state[name] = [limitation.text for limitation in record.limitations.order_by("position")]
            continue
        model_field = record._meta.get_field(name)
        if model_field.many_to_many:
            state[name] = sorted(getattr(record, name).values_list("stable_id", flat=True))
        elif model_field.is_relation:
            state[name] = stable_id_of(model_field.related_model, getattr(record, model_field.attname))
        else:
            state[name] = _plain(getattr(record, name))
    return state


def _changed_by(record: models.Model) -> str:
    """Who made the record's last change, and why, from its history (for a conflict's message)."""
    latest = record.history.select_related("history_user").first() if hasattr(record, "history") else None
    if latest is None:
        return ""
    who = latest.history_user.get_username() if latest.history_user else "the portal"
    return f"{who} ({latest.history_change_reason or latest.get_history_type_display().lower()})"


def merge_fields(
    *,
    entry: Entry,
    record: models.Model,
    wanted: dict[str, Any],
    snapshot,
    overwrite: bool,
    report: ImportReport,
    stable_id_of,
) -> set[str]:
    """The fields of an existing record the import may write: a three-way merge of the document
    (`wanted`), the record now, and what the document held at its last import (`snapshot`).

    A field that differs is taken when only the document changed it (the record still holds the
    last imported value), kept when only the record changed (the document still holds its last
    imported value), and otherwise, when both changed or the record was never imported, is a
    conflict, unless `overwrite` takes the document's value. Kept, conflicting and overwritten
    fields are added to the report.
    """
    current = _record_state(record, wanted, stable_id_of)
    base = snapshot.values if snapshot is not None else {}
    take: set[str] = set()
    kept: list[str] = []
    conflicts: list[dict[str, Any]] = []
    for name, value in wanted.items():
        now = current[name]
        if value == now:
            continue
        last = base.get(name, _MISSING)
        if last is not _MISSING and last == now:
            take.add(name)  # only the document changed it
        elif last is not _MISSING and last == value:
            kept.append(name)  # only the portal changed it: a curator's edit or an accepted correction stays
        elif overwrite:
            take.add(name)
            report.overwritten.setdefault(entry.section.key, {}).setdefault(entry.stable_id, []).append(name)
        else:
            conflicts.append(
                {"field": name, "current": now, "document": value, "last_imported": None if last is _MISSING else last}
            )
    if entry.stable_id in report.overwritten.get(entry.section.key, {}):
        report.overwritten[entry.section.key][entry.stable_id].sort()
    if kept:
        report.kept.setdefault(entry.section.key, {})[entry.stable_id] = sorted(kept)
    if conflicts:
        changed_by = _changed_by(record)
        report.conflicts.setdefault(entry.section.key, {})[entry.stable_id] = [
            {**item, "changed_by": changed_by} for item in conflicts
        ]
    return take
