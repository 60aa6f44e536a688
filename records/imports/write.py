"""Writing an import's plan (records.imports.plan), or one batch of its records, inside the caller's short transaction.

New records that nothing reviewed depends on (every new record but a protocol or decision, whose
many-to-many sets and limitations have history of their own, and a result added to an evaluation
already in the catalogue, which may reopen its review) are written in bulk: the rows, then their
history rows with the same user, reason ("import") and fields a `record_save` would give them
(copied from the rows by the database), then one catalogue version bump per call. Every other write goes through `record_upsert`, as one edit of a
curator would (history, reopen on edit). The import snapshots are written last, their INSERTs compiled before the transaction opened.
The search index's entries of every record written are refreshed once, at the end (records.search_index).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, models
from django.db.models import sql
from django.utils import timezone

from common.history import history_note
from common.types import Actor, acting_user
from common.versions import version_bump
from records.imports.document import ImportInvalid
from records.imports.planned import ImportPlan, PlannedRecord
from records.models import ImportSnapshot, Result
from records.search_index import search_index_batch, search_index_update
from records.services import errors_by_field, protocol_limitations_set, record_upsert
from reviews.models import Reviewable

BATCH = 1000  # rows per INSERT


def plan_write(
    *,
    plan: ImportPlan,
    actor: Actor,
    progress: Callable[[int], None] | None = None,
    now: datetime | None = None,
    snapshots: list[tuple[str, Any]] | None = None,
    records: list[PlannedRecord] | None = None,
) -> None:
    """Write `records` of `plan` (all of them by default; a batch refers only to records of the
    plan already written or in it); the caller holds the transaction. `progress(done)` after each
    record or batch of rows, `done` counting this call's records.

    `snapshots` are the records' `snapshot_inserts` at `now`, compiled before the transaction."""
    with search_index_batch():  # the entries of every record written, refreshed once
        _plan_write(plan=plan, actor=actor, progress=progress, now=now, snapshots=snapshots, records=records)


def _plan_write(
    *,
    plan: ImportPlan,
    actor: Actor,
    progress: Callable[[int], None] | None,
    now: datetime | None,
    snapshots: list[tuple[str, Any]] | None,
    records: list[PlannedRecord] | None,
) -> None:
    now = now or timezone.now()
    records = plan.records if records is None else records
    if snapshots is None:
        snapshots = snapshot_inserts(plan, actor=actor, now=now, records=records)
    created = {id(item.record) for item in plan.records if item.created}
    batch: list[PlannedRecord] = []
    in_batch: set[int] = set()
    state = {"done": 0, "bulk": False}

    def flush() -> None:
        if batch:
            _bulk_create([item.record for item in batch], actor=actor, now=now)
            state["done"] += len(batch)
            state["bulk"] = True
            batch.clear()
            in_batch.clear()
            if progress is not None:
                progress(state["done"])

    for item in records:
        if item.created and _bulk(item, created):
            model = type(item.record)
            if batch and (type(batch[0].record) is not model or _refers_to(item, in_batch) or len(batch) >= BATCH):
                flush()
            batch.append(item)
            in_batch.add(id(item.record))
            continue
        flush()
        if item.created or item.changed:
            _write_one(item, actor=actor)
        state["done"] += 1
        if progress is not None and state["done"] % 100 == 0:
            progress(state["done"])
    flush()
    if state["bulk"]:
        version_bump()
    _write_snapshots(plan, records, actor=actor, now=now, inserts=snapshots)
    if progress is not None:
        progress(len(records))


def _bulk(item: PlannedRecord, created: set[int]) -> bool:
    if item.entry.section.many or item.entry.limitations is not None:
        return False
    evaluation = item.values.get("evaluation") if isinstance(item.record, Result) else None
    return evaluation is None or id(evaluation) in created  # a result of a new evaluation reopens nothing


def _refers_to(item: PlannedRecord, in_batch: set[int]) -> bool:
    return any(isinstance(value, models.Model) and id(value) in in_batch for value in item.values.values())


def _bulk_create(records: list[models.Model], *, actor: Actor, now: datetime) -> None:
    """Insert new records with their history rows ("+", the actor, reason "import"), as `record_save` would."""
    model = type(records[0])
    editor = acting_user(actor)
    for record in records:
        if isinstance(record, Reviewable) and editor is not None:
            record.last_edited_by = editor
        history_note(record, user=actor, reason="import")
    model._default_manager.bulk_create(records, batch_size=BATCH)
    _history_rows(model, [record.pk for record in records], actor=actor, now=now)
    search_index_update(records=records)


def _history_rows(model: type[models.Model], pks: list[int], *, actor: Actor, now: datetime) -> None:
    """The history row ("+", `actor`, reason "import") of each record just inserted, copied from its
    row by the database (INSERT ... SELECT): the fields `record_save`'s history row has, without
    building each row in Python."""
    history = model.history.model  # type: ignore[attr-defined]
    quote = connection.ops.quote_name
    tracked = history.tracked_fields
    columns = [quote(field.column) for field in tracked] + [
        quote(history._meta.get_field(name).column)
        for name in ("history_date", "history_change_reason", "history_type", "history_user")
    ]
    copied = ", ".join(quote(model._meta.get_field(field.name).column) for field in tracked)  # type: ignore[union-attr]
    date = history._meta.get_field("history_date").get_db_prep_value(now, connection)
    user = acting_user(actor)
    pk_column = quote(model._meta.pk.column)  # type: ignore[union-attr]
    with connection.cursor() as cursor:
        for start in range(0, len(pks), BATCH):
            chunk = pks[start : start + BATCH]
            cursor.execute(
                f"INSERT INTO {quote(history._meta.db_table)} ({', '.join(columns)}) "
                f"SELECT {copied}, %s, %s, %s, %s FROM {quote(model._meta.db_table)} "
                f"WHERE {pk_column} IN ({', '.join(['%s'] * len(chunk))}) ORDER BY {pk_column}",
                [date, "import", "+", user.pk if user is not None else None, *chunk],
            )


def _write_one(item: PlannedRecord, *, actor: Actor) -> None:
    try:
        record_upsert(record=item.record, values=item.values, many=item.many, actor=actor, reason="import")
    except ValidationError as exc:  # a rule the plan did not foresee: nothing is kept
        raise ImportInvalid(
            [
                {"path": f"{item.entry.path}.{name if name != '__all__' else 'record'}", "message": " ".join(msgs)}
                for name, msgs in errors_by_field(exc, type(item.record)).items()
            ]
        ) from None
    if item.limitations is not None:
        protocol_limitations_set(protocol=item.record, texts=item.limitations, actor=actor, reason="import")  # type: ignore[arg-type]


def snapshot_inserts(
    plan: ImportPlan, *, actor: Actor, now: datetime, records: list[PlannedRecord] | None = None
) -> list[tuple[str, Any]]:
    """The INSERT statements of the new import snapshots of `records` (the plan's by default), compiled before the write
    transaction opens (their values are all known from the plan), so that it only runs them."""
    imported_by = acting_user(actor)
    new = [
        ImportSnapshot(
            document=plan.title,
            section=item.entry.section.key,
            stable_id=item.entry.stable_id,
            values=item.wanted,
            imported_at=now,
            imported_by=imported_by,
        )
        for item in (plan.records if records is None else records)
        if item.snapshot is None
    ]
    fields = [field for field in ImportSnapshot._meta.concrete_fields if not field.primary_key]
    size = max(1, min(BATCH, connection.ops.bulk_batch_size(fields, new))) if new else BATCH
    statements: list[tuple[str, Any]] = []
    for start in range(0, len(new), size):
        query = sql.InsertQuery(ImportSnapshot)
        query.insert_values(fields, new[start : start + size])
        statements.extend(query.get_compiler(connection=connection).as_sql())
    return statements


def _write_snapshots(
    plan: ImportPlan, records: list[PlannedRecord], *, actor: Actor, now: datetime, inserts: list[tuple[str, Any]]
) -> None:
    """What the document now holds for each record: the base of its next three-way merge."""
    imported_by = acting_user(actor)
    changed: list[ImportSnapshot] = []
    for item in records:
        if item.snapshot is not None and plan.snapshot_needed(item):
            item.snapshot.values = item.wanted
            item.snapshot.imported_at = now
            item.snapshot.imported_by = imported_by
            changed.append(item.snapshot)
    with connection.cursor() as cursor:
        for statement, params in inserts:
            cursor.execute(statement, params)
    ImportSnapshot.objects.bulk_update(changed, ["values", "imported_at", "imported_by"], batch_size=BATCH)
