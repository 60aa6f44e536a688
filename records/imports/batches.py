"""A large import's plan written in batches (`records_import`): what a batch depends on, checked
again cheaply before it is written when another write moved the catalogue since the plan was read or
the last batch committed, and the report of an import whose rest was planned again."""

from __future__ import annotations

import copy

from django.db import models

from records.imports.document import ImportReport
from records.imports.plan import CHUNK
from records.imports.planned import ImportPlan, PlannedRecord


def batches(records: list[PlannedRecord], size: int) -> list[list[PlannedRecord]]:
    """`records` in the plan's order (a record after those it refers to), `size` at a time."""
    return [records[start : start + size] for start in range(0, len(records), size)] or [[]]


def batch_changes(plan: ImportPlan, batch: list[PlannedRecord], *, limit: int = 10) -> list[str]:
    """What `batch` was planned against and no longer holds, named for the curator ("configurations
    nt-500m: changed since the import read it", at most `limit`); empty when all of it still holds:
    none of the records it creates exists yet, and every existing record it updates, leaves or refers
    to outside the document still holds every field as the plan read it (a record of the document
    written by an earlier batch is the import's own; the database's foreign keys guard it). Writes to
    other records do not concern the batch."""
    of_plan = {id(item.record) for item in plan.records}
    new: dict[type[models.Model], list[str]] = {}
    read: dict[type[models.Model], dict[int, models.Model]] = {}
    for item in batch:
        if item.created:
            new.setdefault(type(item.record), []).append(item.entry.stable_id)
        else:
            read.setdefault(type(item.record), {})[item.record.pk] = item.record
        referred = [value for value in item.values.values() if isinstance(value, models.Model)]
        referred += [record for records in item.many.values() for record in records]
        for record in referred:
            if id(record) not in of_plan and record.pk is not None:
                read.setdefault(type(record), {})[record.pk] = record
    changed: list[str] = []
    for model, stable_ids in new.items():
        for start in range(0, len(stable_ids), CHUNK):
            found = model._default_manager.filter(stable_id__in=stable_ids[start : start + CHUNK])
            for stable_id in found.values_list("stable_id", flat=True)[: limit - len(changed)]:
                changed.append(f"{model._meta.verbose_name_plural} {stable_id}: created by someone else meanwhile")
            if len(changed) >= limit:
                return changed
    for model, records in read.items():
        names = [field.attname for field in model._meta.concrete_fields]  # type: ignore[union-attr]
        pks = sorted(records)
        for start in range(0, len(pks), CHUNK):
            chunk = pks[start : start + CHUNK]
            rows = {row[0]: row[1:] for row in model._default_manager.filter(pk__in=chunk).values_list("pk", *names)}
            for pk in chunk:
                if rows.get(pk) != tuple(getattr(records[pk], name) for name in names):
                    label = getattr(records[pk], "stable_id", None) or f"#{pk}"
                    changed.append(f"{model._meta.verbose_name_plural} {label}: changed since the import read it")
                    if len(changed) >= limit:
                        return changed
    return changed


def merged_report(before: ImportReport, after: ImportReport, written: set[tuple[str, str]]) -> ImportReport:
    """The report of an import planned again after some batches committed: what `before` (the
    earlier plans) said of the records they wrote, and `after` of the rest (which reads those
    records as unchanged, the import being idempotent)."""
    report = copy.deepcopy(after)

    def move(section: str) -> None:
        report.unchanged[section] = report.unchanged.get(section, 0) - 1
        if report.unchanged[section] <= 0:
            del report.unchanged[section]

    for section, stable_ids in before.created.items():
        for stable_id in stable_ids:
            if (section, stable_id) in written and stable_id not in report.created.get(section, []):
                report.created.setdefault(section, []).append(stable_id)
                move(section)
    for section, updated in before.updated.items():
        for stable_id, fields in updated.items():
            if (section, stable_id) in written and stable_id not in report.updated.get(section, {}):
                report.updated.setdefault(section, {})[stable_id] = fields
                move(section)
    for name in ("kept", "overwritten"):
        for section, items in getattr(before, name).items():
            for stable_id, fields in items.items():
                if (section, stable_id) in written:
                    getattr(report, name).setdefault(section, {}).setdefault(stable_id, fields)
    return report
