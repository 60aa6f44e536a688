"""Keeping the search index (records.models.search.SearchEntry) current, in the writer's transaction.

Every write that changes what a hit shows or what a record is found by calls `search_index_update`
with the records it wrote: records.services.record_save and record_delete (the admin, the API,
accepted corrections, benchmark results landing as evaluations, the identity services' moves),
and the bulk import writer (records.imports.write). No signal and no save() does. The entries
refreshed are the records' own and those of every record whose entry shows them (DEPENDENTS: a
model renamed refreshes its configurations, their evaluations and results). Inside
`search_index_batch()` the refresh is collected and made once, on leaving it (an import, a merge).

The backend's text index follows the rows in the same transaction: on PostgreSQL each row's stored
`vector` and `name_vector` are computed from its text as the row is inserted (the text columns stay
empty there: the vectors hold the text); on SQLite the FTS5 tables (external content) are told of
each row removed and added. `search_index_rebuild` builds everything afresh (`manage.py
search_index_rebuild`; migration 0015 for the data already there).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from django.db import connection, models, transaction

from records.models import (
    Configuration,
    Dataset,
    Decision,
    Evaluation,
    GenomicModel,
    ModelAlias,
    Protocol,
    Result,
    Source,
    Work,
)
from records.models.search import SearchEntry, SearchKind
from records.search_documents import BUILDERS

SearchRefs = dict[str, set[int]]  # kind -> record ids whose entries to build again

CHUNK = 2000  # records per builder call and per statement
# PostgreSQL: the text columns, weighted A (the record's names) to D (the rest of its text).
CONFIG = "english"
WEIGHTED_COLUMNS = (("name_text", "A"), ("place_text", "B"), ("subject_text", "C"), ("body_text", "D"))
FTS_TABLE = "records_searchentry_fts"
TRIGRAM_TABLE = "records_searchentry_trigram"
FTS_COLUMNS = tuple(column for column, _weight in WEIGHTED_COLUMNS)
# Rebuilt in this order (a kind's entries read only other tables, so any order would do).
KINDS = tuple(BUILDERS)

_Ids = Callable[[set[int]], Iterable[int]]


def _ids(queryset: models.Manager[Any], field: str) -> _Ids:
    return lambda ids: queryset.filter(**{f"{field}__in": sorted(ids)}).values_list("id", flat=True)


# For a record of a type (the key), the entries that show it: (kind, the ids of that kind from the
# record ids). A model's name shows on its configurations, their evaluations and results; its
# aliases are text of the model, configuration and evaluation entries.
DEPENDENTS: dict[type[models.Model], tuple[tuple[str, _Ids], ...]] = {
    GenomicModel: (
        (SearchKind.MODEL, lambda ids: ids),
        (SearchKind.CONFIGURATION, _ids(Configuration.objects, "model_id")),
        (SearchKind.EVALUATION, _ids(Evaluation.objects, "configuration__model_id")),
        (SearchKind.RESULT, _ids(Result.objects, "evaluation__configuration__model_id")),
    ),
    ModelAlias: (
        (
            SearchKind.MODEL,
            lambda ids: ModelAlias.objects.filter(id__in=sorted(ids)).values_list("model_id", flat=True),
        ),
        (SearchKind.CONFIGURATION, _ids(Configuration.objects, "model__aliases__id")),
        (SearchKind.EVALUATION, _ids(Evaluation.objects, "configuration__model__aliases__id")),
    ),
    Configuration: (
        (SearchKind.CONFIGURATION, lambda ids: ids),
        (SearchKind.EVALUATION, _ids(Evaluation.objects, "configuration_id")),
        (SearchKind.RESULT, _ids(Result.objects, "evaluation__configuration_id")),
    ),
    Dataset: (
        (SearchKind.DATASET, lambda ids: {*ids, *_ids(Dataset.objects, "suite_id")(ids)}),
        (SearchKind.EVALUATION, _ids(Evaluation.objects, "dataset_id")),
        (SearchKind.EVALUATION, _ids(Evaluation.objects, "dataset__suite_id")),
        (SearchKind.RESULT, _ids(Result.objects, "evaluation__dataset_id")),
        (SearchKind.RESULT, _ids(Result.objects, "evaluation__dataset__suite_id")),
    ),
    Protocol: (
        (SearchKind.PROTOCOL, lambda ids: ids),
        (SearchKind.EVALUATION, _ids(Evaluation.objects, "protocol_id")),
        (SearchKind.RESULT, _ids(Result.objects, "evaluation__protocol_id")),
    ),
    Source: (
        (SearchKind.SOURCE, lambda ids: ids),
        (SearchKind.PROTOCOL, _ids(Protocol.objects, "source_id")),
        (SearchKind.EVALUATION, _ids(Evaluation.objects, "source_id")),
    ),
    Work: ((SearchKind.WORK, lambda ids: ids),),
    Decision: ((SearchKind.DECISION, lambda ids: ids),),
    Evaluation: (
        (SearchKind.EVALUATION, lambda ids: ids),
        (SearchKind.RESULT, _ids(Result.objects, "evaluation_id")),
    ),
    Result: (
        (SearchKind.RESULT, lambda ids: ids),
        (
            SearchKind.EVALUATION,
            lambda ids: Result.objects.filter(id__in=sorted(ids)).values_list("evaluation_id", flat=True),
        ),
    ),
}
# A record whose text shows on the entry of the record it belongs to: moving it (an alias to
# another model, a result to another evaluation) changes that record's old entry too.
PARENT_FIELDS: dict[type[models.Model], tuple[str, type[models.Model]]] = {
    ModelAlias: ("model", GenomicModel),
    Result: ("evaluation", Evaluation),
}

_batch: contextvars.ContextVar[SearchRefs | None] = contextvars.ContextVar("search_index_batch", default=None)


def search_index_dependents(*, records: Iterable[models.Model]) -> SearchRefs:
    """The entries that show `records` (theirs and their dependents'), read now: call it before a
    delete, whose cascade would hide them, and refresh them after (`search_index_refresh`)."""
    by_type: dict[type[models.Model], set[int]] = defaultdict(set)
    for record in records:
        if type(record) in DEPENDENTS and record.pk is not None:
            by_type[type(record)].add(record.pk)
    refs: SearchRefs = defaultdict(set)
    for model, ids in by_type.items():
        for kind, dependents in DEPENDENTS[model]:
            refs[kind].update(pk for pk in dependents(ids) if pk is not None)
    return refs


def search_index_moved_from(*, record: models.Model, changed_fields: Sequence[str] | None) -> list[models.Model]:
    """Before an edit that moves `record` (an alias, a result) to another parent: the parent it
    leaves, whose entry shows it until refreshed; one query, and only for such a move."""
    parent = PARENT_FIELDS.get(type(record))
    if parent is None or record.pk is None or parent[0] not in (changed_fields or ()):
        return []
    field, parent_model = parent
    previous = type(record)._default_manager.filter(pk=record.pk).values_list(f"{field}_id", flat=True).first()
    return [parent_model(pk=previous)] if previous is not None else []


def search_index_update(*, records: Iterable[models.Model]) -> None:
    """Refresh the entries that show `records` (records of other models are ignored)."""
    search_index_refresh(refs=search_index_dependents(records=records))


def search_index_refresh(*, refs: SearchRefs) -> None:
    """Build the entries of `refs` again from their records (a record gone loses its entry); inside
    `search_index_batch()`, once on leaving it."""
    pending = _batch.get()
    if pending is not None:
        for kind, ids in refs.items():
            pending.setdefault(kind, set()).update(ids)
        return
    for kind in KINDS:
        ordered = sorted(refs.get(kind, ()))
        for start in range(0, len(ordered), CHUNK):
            chunk = ordered[start : start + CHUNK]
            _replace(kind, chunk, BUILDERS[kind](chunk))


@contextlib.contextmanager
def search_index_batch() -> Iterator[None]:
    """Collect the refreshes asked for inside and make them once, on leaving (inside the caller's
    transaction; nothing is refreshed when the block raises: its transaction is rolled back)."""
    if _batch.get() is not None:  # an outer batch refreshes
        yield
        return
    refs: SearchRefs = {}
    token = _batch.set(refs)
    try:
        yield
    finally:
        _batch.reset(token)
    search_index_refresh(refs=refs)


# PostgreSQL reads the text of an entry in its tsvector only: the text columns stay empty there, so
# a row is narrow, and a search over a common word (which reads every row it matches) reads less.
def _weighted_sql(weight: str) -> str:
    return f"setweight(to_tsvector('{CONFIG}'::regconfig, %s::text), '{weight}')"


_VECTOR_SQL = " || ".join(_weighted_sql(weight) for _column, weight in WEIGHTED_COLUMNS)
# The names' part of the vector (the same lexemes and positions as ts_filter(vector, '{a}')).
_NAME_VECTOR_SQL = _weighted_sql("A")
_VECTORS = ("vector", "name_vector")


def _insert(entries: list[SearchEntry]) -> None:
    """Insert `entries`; on PostgreSQL each row's `vector` is computed from its text as it is
    inserted (one INSERT a batch, no second write of the row), and an entry already there for the
    same record is written over."""
    if not entries:
        return
    if connection.vendor != "postgresql":
        SearchEntry.objects.bulk_create(entries, batch_size=1000)
        return
    fields = [field for field in SearchEntry._meta.concrete_fields if field.name not in ("id", *_VECTORS)]
    quote = connection.ops.quote_name
    names = ", ".join([*(quote(field.column) for field in fields), *(quote(name) for name in _VECTORS)])
    row_sql = (
        "("
        + ", ".join([*("''" if field.name in FTS_COLUMNS else "%s" for field in fields), _VECTOR_SQL, _NAME_VECTOR_SQL])
        + ")"
    )
    # An entry already there is written over in place: no delete and insert of the same key (writes
    # refreshing one record take turns already, on the catalogue version's row they bump first).
    updates = ", ".join(
        f"{quote(name)} = EXCLUDED.{quote(name)}" for name in [*(field.column for field in fields), *_VECTORS]
    )
    with connection.cursor() as cursor:
        for start in range(0, len(entries), 500):
            batch = entries[start : start + 500]
            params: list[Any] = []
            for entry in batch:
                params += [
                    field.get_db_prep_save(getattr(entry, field.attname), connection)
                    for field in fields
                    if field.name not in FTS_COLUMNS
                ]
                params += [getattr(entry, column) for column in FTS_COLUMNS]
                params.append(entry.name_text)
            cursor.execute(
                f"INSERT INTO {quote(SearchEntry._meta.db_table)} ({names}) VALUES {', '.join([row_sql] * len(batch))} "
                f"ON CONFLICT (kind, record_id) DO UPDATE SET {updates}",
                params,
            )


def _fts_sync(where: str, params: Sequence[Any], *, delete: bool) -> None:
    """SQLite: tell the FTS5 tables of the entry rows `where` selects, before they are deleted or
    after they are inserted (external content tables index what they are told)."""
    columns = ", ".join(FTS_COLUMNS)
    with connection.cursor() as cursor:
        for table, names in ((FTS_TABLE, columns), (TRIGRAM_TABLE, "title_key")):
            if delete:
                cursor.execute(
                    f"INSERT INTO {table}({table}, rowid, {names}) SELECT 'delete', id, {names} "
                    f"FROM records_searchentry WHERE {where}",
                    params,
                )
            else:
                cursor.execute(
                    f"INSERT INTO {table}(rowid, {names}) SELECT id, {names} FROM records_searchentry WHERE {where}",
                    params,
                )


def _replace(kind: str, ids: Sequence[int], entries: list[SearchEntry]) -> None:
    """The entries of `kind` for the records `ids` become `entries`."""
    if not ids:
        return
    sqlite = connection.vendor == "sqlite"
    where = f"kind = %s AND record_id IN ({', '.join(['%s'] * len(ids))})"
    params = [kind, *ids]
    if sqlite:  # writers take turns on SQLite: delete, insert, and tell the FTS5 tables of both
        _fts_sync(where, params, delete=True)
        SearchEntry.objects.filter(kind=kind, record_id__in=ids).delete()
        _insert(entries)
        _fts_sync(where, params, delete=False)
        return
    # PostgreSQL: the records without an entry now (deleted, merged) lose theirs; the others are
    # written over in place (_insert's upsert).
    kept = {entry.record_id for entry in entries}
    SearchEntry.objects.filter(kind=kind, record_id__in=[pk for pk in ids if pk not in kept]).delete()
    _insert(entries)


def search_index_rebuild(*, progress: Callable[[str, int], None] | None = None) -> int:
    """Build the whole index afresh from the catalogue in one transaction; returns the number of
    entries. `progress(kind, entries so far)` after each chunk."""
    total = 0
    with transaction.atomic():
        sqlite = connection.vendor == "sqlite"
        if sqlite:
            with connection.cursor() as cursor:
                for table in (FTS_TABLE, TRIGRAM_TABLE):
                    cursor.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
        SearchEntry.objects.all().delete()
        for kind in KINDS:
            model = RECORD_MODELS[kind]
            ids = list(model._default_manager.order_by("id").values_list("id", flat=True))
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                entries = BUILDERS[kind](chunk)
                _insert(entries)
                total += len(entries)
                if progress is not None:
                    progress(kind, total)
        if sqlite:
            with connection.cursor() as cursor:
                for table in (FTS_TABLE, TRIGRAM_TABLE):
                    cursor.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    return total


RECORD_MODELS: dict[str, type[models.Model]] = {
    SearchKind.MODEL: GenomicModel,
    SearchKind.CONFIGURATION: Configuration,
    SearchKind.DATASET: Dataset,
    SearchKind.PROTOCOL: Protocol,
    SearchKind.SOURCE: Source,
    SearchKind.WORK: Work,
    SearchKind.DECISION: Decision,
    SearchKind.EVALUATION: Evaluation,
    SearchKind.RESULT: Result,
}
