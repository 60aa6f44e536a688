"""`records_import`: plan the whole document with reads only, then write the plan in one short transaction."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from common.models import Version
from common.types import Actor
from common.versions import CATALOGUE
from records.imports.document import ImportConflict, ImportInvalid, ImportReport, ImportStale
from records.imports.plan import ImportPlan, import_plan
from records.imports.write import plan_write, snapshot_inserts

ATTEMPTS = 3  # plans made before refusing an import whose catalogue keeps changing under it


def records_import(
    *,
    document: Any,
    actor: Actor,
    dry_run: bool = False,
    overwrite: Iterable[str] = (),
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Check the whole document and report what it changes; unless `dry_run`, write it (all or nothing).

    The plan (records.imports.plan) reads only: a dry run opens no transaction and takes no lock,
    and every problem of the document is listed at once (ImportInvalid). The write then takes the
    catalogue's write lock only to write the plan, after checking that the catalogue version is the
    one the plan was read at; when it is not, the document is planned again (ImportStale, a 409,
    after ATTEMPTS plans).

    `overwrite` names records ("evaluations/<stable id>") whose fields changed since their last
    import on both sides and should take the document's values; any other such conflict refuses
    the whole import (ImportConflict) and lists every one. A dry run reports conflicts instead.
    `progress(done, total)` is called as the entries are planned and then written: `total` is the
    number of entries, and each counts half done once planned and done once written too (a dry
    run's once planned).
    """
    overwrite = set(overwrite)
    for _attempt in range(ATTEMPTS):
        plan = _plan(document=document, overwrite=overwrite, dry_run=dry_run, progress=progress)
        if plan.errors:
            raise ImportInvalid(plan.errors)
        if dry_run:
            return plan.report
        if plan.report.conflicts:
            raise ImportConflict(_conflict_errors(plan), plan.report.conflicts)
        total = len(plan.records)
        now = timezone.now()
        snapshots = snapshot_inserts(plan, actor=actor, now=now)  # compiled before the lock is taken
        try:
            with transaction.atomic():
                if _version_locked() != plan.version:
                    continue  # written meanwhile: what the plan read may have changed
                plan_write(
                    plan=plan,
                    actor=actor,
                    progress=None if progress is None else functools.partial(_written, progress, total),
                    now=now,
                    snapshots=snapshots,
                )
        except IntegrityError as exc:  # a database rule the plan did not foresee: nothing is kept
            raise ImportInvalid([{"path": "document", "message": f"refused by the database: {exc}"}]) from None
        return plan.report
    raise ImportStale(ATTEMPTS)


def _plan(
    *, document: Any, overwrite: set[str], dry_run: bool, progress: Callable[[int, int], None] | None
) -> ImportPlan:
    if not isinstance(document, dict):
        raise ImportInvalid([{"path": "document", "message": "must be a JSON object"}])
    if progress is None or dry_run:
        return import_plan(document=document, overwrite=overwrite, dry_run=dry_run, progress=progress)
    return import_plan(
        document=document,
        overwrite=overwrite,
        dry_run=dry_run,
        progress=lambda planned, total: progress(planned // 2, total),
    )


def _written(progress: Callable[[int, int], None], total: int, written: int) -> None:
    progress((total + written) // 2, total)


def _version_locked() -> int:
    """The catalogue version, its row locked until the transaction ends (SQLite's whole database is)."""
    number = Version.objects.select_for_update().filter(name=CATALOGUE).values_list("number", flat=True).first()
    return number or 0


def _conflict_errors(plan: ImportPlan) -> list[dict[str, str]]:
    path_of = {(item.entry.section.key, item.entry.stable_id): item.entry.path for item in plan.records}
    return [
        {
            "path": f"{path_of[(section, stable_id)]}.{item['field']}",
            "message": (
                f"changed since this document's last import{' by ' + item['changed_by'] if item['changed_by'] else ''} "
                f"(now {item['current']!r}, last imported {item['last_imported']!r}) and changed by the document too "
                f"({item['document']!r}): keep the current value by editing the document, or pass overwrite={section}/{stable_id}"
            ),
        }
        for section, records in plan.report.conflicts.items()
        for stable_id, items in records.items()
        for item in items
    ]
