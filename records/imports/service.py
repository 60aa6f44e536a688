"""`records_import`: plan the whole document with reads only, then write the plan in short transactions of a batch each."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from common.models import Version
from common.types import Actor
from common.versions import CATALOGUE
from records.imports.batches import batch_changes, batches, merged_report
from records.imports.document import ImportConflict, ImportInvalid, ImportReport, ImportStale
from records.imports.plan import import_plan
from records.imports.planned import ImportPlan, PlannedRecord
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
    """Check the whole document and report what it changes; unless `dry_run`, write it.

    The plan (records.imports.plan) reads only: a dry run opens no transaction and takes no lock,
    and every problem of the document is listed at once (ImportInvalid). The plan is then written
    in batches of about settings.IMPORT_WRITE_BATCH_RECORDS records, in its order (a record after
    those it refers to), each in its own short transaction holding the catalogue's write lock, so
    that other writes get through between batches. A document of one batch is written all or
    nothing; a larger one is atomic per batch, not as a whole.

    A batch is written at once if nobody else has written since the plan was read (or the batch
    before committed); otherwise, if what it touches is unchanged (`batch_changes`, a few reads per
    batch): writes to other records never stop an import. Where a record it touches did change, the
    document is planned again (the records already written now read as unchanged: the import is
    idempotent) and the rest is written; after ATTEMPTS plans it stops (ImportStale, a 409, naming
    the records that kept changing). An import that stops after some batches committed says so in
    its error (`ImportInvalid.written`): sending the same document again finishes it.

    `overwrite` names records ("evaluations/<stable id>") whose fields changed since their last
    import on both sides and should take the document's values; any other such conflict refuses
    the import (ImportConflict) and lists every one. A dry run reports conflicts instead.
    `progress(done, total)` is called as the entries are planned and then written: `total` is the
    number of entries, and each counts half done once planned and done once written too (a dry
    run's once planned).
    """
    overwrite = set(overwrite)
    size = settings.IMPORT_WRITE_BATCH_RECORDS
    state = _Written()
    report: ImportReport | None = None
    for _attempt in range(ATTEMPTS):
        plan = _plan(document=document, overwrite=overwrite, dry_run=dry_run, progress=None if state.keys else progress)
        if plan.errors:
            raise ImportInvalid(plan.errors, written=state.summary())
        if dry_run:
            return plan.report
        if plan.report.conflicts:
            raise ImportConflict(_conflict_errors(plan), plan.report.conflicts, written=state.summary())
        if state.total == 0:
            state.total = len(plan.records)
        report = plan.report if report is None else merged_report(report, plan.report, state.keys)
        rest = [item for item in plan.records if not state.finished(plan, item)]
        if _write(plan, rest, size=size, actor=actor, progress=progress, state=state):
            return report
    raise ImportStale(ATTEMPTS, written=state.summary(), changed=state.changed)


class _Written:
    """What the import's committed batches wrote, across its plans."""

    def __init__(self) -> None:
        self.keys: set[tuple[str, str]] = set()
        self.batches = 0
        self.total = 0  # the entries of the document
        self.planned_batches = 0
        self.shown = 0  # the progress last reported
        self.changed: list[str] = []  # what the last plan's batch found changed under it

    def finished(self, plan: ImportPlan, item: PlannedRecord) -> bool:
        """A record an earlier batch wrote that the new plan leaves as it is."""
        key = (item.entry.section.key, item.entry.stable_id)
        return key in self.keys and not (item.created or item.changed or plan.snapshot_needed(item))

    def summary(self) -> str:
        if not self.batches:
            return ""
        return (
            f"written {len(self.keys):,} of {self.total:,} records in {self.batches} of {self.planned_batches} "
            "batches; nothing else was changed; send the same document again to finish: the import is idempotent"
        )


def _write(
    plan: ImportPlan,
    records: list[PlannedRecord],
    *,
    size: int,
    actor: Actor,
    progress: Callable[[int, int], None] | None,
    state: _Written,
) -> bool:
    """Write `records` of `plan` batch by batch; False when another write changed what a batch
    touches (named in `state.changed`)."""
    expected = plan.version  # the catalogue version the next batch was planned or written against
    moved = False  # whether another write changed the catalogue since the plan was read
    parts = batches(records, size)
    state.planned_batches = state.batches + len(parts)
    for batch in parts:
        now = timezone.now()
        snapshots = snapshot_inserts(plan, actor=actor, now=now, records=batch)  # compiled before the lock is taken
        offset = len(state.keys)
        try:
            with transaction.atomic():
                moved = moved or _version_locked() != expected
                if moved:
                    state.changed = batch_changes(plan, batch)
                    if state.changed:
                        return False  # what the batch was planned against was written meanwhile
                plan_write(
                    plan=plan,
                    actor=actor,
                    progress=None if progress is None else functools.partial(_written, progress, state, offset),
                    now=now,
                    snapshots=snapshots,
                    records=batch,
                )
                expected = _version_locked()
        except IntegrityError as exc:  # a database rule the plan did not foresee: nothing of the batch is kept
            raise ImportInvalid(
                [{"path": "document", "message": f"refused by the database: {exc}"}], written=state.summary()
            ) from None
        except (ImportInvalid, DatabaseError) as exc:  # nothing of this batch is kept; earlier ones are
            if not state.batches:
                raise
            errors = (
                exc.errors
                if isinstance(exc, ImportInvalid)
                else [{"path": "document", "message": f"stopped by the database: {exc}"}]
            )
            raise ImportInvalid(errors, written=state.summary()) from None
        state.batches += 1
        state.keys.update((item.entry.section.key, item.entry.stable_id) for item in batch)
        if progress is not None:  # once the batch is committed, with no lock held
            _written(progress, state, 0, len(state.keys))
    return True


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


def _written(progress: Callable[[int, int], None], state: _Written, offset: int, done: int) -> None:
    state.shown = max(state.shown, (state.total + min(offset + done, state.total)) // 2)
    progress(state.shown, state.total)


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
