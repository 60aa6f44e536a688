"""The release's model evaluation matrix: every result's row, as chunks of columns, each result
reported with its membership digest; the evaluations' columns read once per evaluation instead of
joined into every result row.

The rows and digests are those of `records.exports.matrix_rows` (the protocol pages' downloads),
with the columns only a release holds (`RELEASE_ONLY_COLUMNS`: the model, a copy's original), and
`releases.digests.content_digest` (a test compares them). Each chunk of results (keyset pagination on `key`, as the other tables) is
one query of the results' own columns and one of the evaluations those results belong to, with
their joins (protocol, configuration, dataset and suite, repeated evaluation, source): an
evaluation's columns travel once, not once per result. The chunk goes to the writer as columns
(`releases.bundle.ColumnChunks`): no mapping is made per row.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Protocol as TypingProtocol

from django.db.models import QuerySet
from django.db.models.sql.constants import MULTI

from records import exports
from records.fields import ExactDecimalField
from records.models import Evaluation, Result, evaluation_comparable
from releases.digests import digest_text, sha256_hex
from releases.table_schemas import MODEL_EVALUATION_MATRIX

_EVALUATION = "evaluation__"
_FIELDS = [field.name for field in MODEL_EVALUATION_MATRIX.fields]
# The protocol pages' download columns (records.exports), and those only the release holds: the
# model beside the configuration, the original a copy names.
RELEASE_ONLY_COLUMNS = {
    "model_id": "evaluation__configuration__model__stable_id",
    "model_name": "evaluation__configuration__model__name",
    "original_source_id": "evaluation__original_source__stable_id",
    "original_citation": "evaluation__original_citation",
    "original_locator": "evaluation__original_locator",
    "original_basis": "evaluation__original_basis",
    "original_reason": "evaluation__original_reason",
}
# column -> lookup from a Result, for each column of the table but `comparable` (derived), in its order
MATRIX_COLUMNS = {
    name: {**exports.MATRIX_COLUMNS, **RELEASE_ONLY_COLUMNS}[name] for name in _FIELDS if name != "comparable"
}
# column -> lookup from a Result, for the result's own columns; from an Evaluation for the others.
OWN_COLUMNS = {name: lookup for name, lookup in MATRIX_COLUMNS.items() if not lookup.startswith(_EVALUATION)}
EVALUATION_COLUMNS = {
    name: lookup.removeprefix(_EVALUATION) for name, lookup in MATRIX_COLUMNS.items() if lookup.startswith(_EVALUATION)
}
# read to derive `comparable` (records.models.evaluation_comparable), after the table's columns
_DERIVING = ("different_measurement", "repeats__review_state")
_STATE = list(EVALUATION_COLUMNS).index("review_state")
_KEY_AT = _FIELDS.index(MODEL_EVALUATION_MATRIX.primary_key[0])

Columns = dict[str, Sequence[object]]


class MembershipSink(TypingProtocol):
    def add(self, record_type: str, stable_id: str, content_sha256: str) -> None: ...

    def add_many(self, record_type: str, stable_ids: Sequence[str], digests: Sequence[str]) -> None: ...


def _evaluation_values(values: tuple) -> tuple:
    """An evaluation's matrix columns, `comparable` last (derived from its state, whether it is a
    different measurement, and its original's state)."""
    *columns, different_measurement, original_state = values
    comparable = evaluation_comparable(
        review_state=columns[_STATE], original_state=original_state, different_measurement=different_measurement
    )
    return (*columns, comparable)


def _columns(queryset: QuerySet) -> list[list]:
    """A `values_list` queryset's values as columns, each converted from the database's values by the
    field's converters a column at a time (Django's own loop makes a list per row)."""
    compiler = queryset.query.get_compiler(using=queryset.db)
    rows = [row for block in compiler.execute_sql(MULTI) or () for row in block]
    fields = [selected[0] for selected in compiler.select[: compiler.col_count]]
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in fields]
    for position, (converters, expression) in compiler.get_converters(fields).items():
        for convert in converters:
            if getattr(convert, "__func__", None) is ExactDecimalField.from_db_value:  # Decimal(text) itself
                columns[position] = [None if value is None else Decimal(value) for value in columns[position]]
            else:
                columns[position] = [convert(value, expression, compiler.connection) for value in columns[position]]
    return columns


def _chunks(queryset: QuerySet, *, key: str, chunk_size: int) -> Iterator[list[list]]:
    """`records.exports.chunks_by_key` of a `values_list` queryset with `key` first, each chunk as columns."""
    queryset = queryset.order_by(key)
    last = None
    while True:
        columns = _columns((queryset if last is None else queryset.filter(**{f"{key}__gt": last}))[:chunk_size])
        if not columns[0]:
            return
        yield columns
        last = columns[0][-1]


def _evaluations(key: str, after: object, last: object) -> dict[int, tuple]:
    """The evaluations of the results whose `key` lies in (after, last] (after None: up to last):
    one query with their joins."""
    in_chunk = Result.objects.filter(**{f"{key}__lte": last})
    if after is not None:
        in_chunk = in_chunk.filter(**{f"{key}__gt": after})
    evaluations = Evaluation.objects.filter(pk__in=in_chunk.values("evaluation_id")).order_by()
    pks, *columns = _columns(evaluations.values_list("pk", *EVALUATION_COLUMNS.values(), *_DERIVING))
    return dict(zip(pks, map(_evaluation_values, zip(*columns, strict=True)), strict=True))


def matrix_columns(*, chunk_size: int, key: str, sink: MembershipSink | None = None) -> Iterator[Columns]:
    """Every result's matrix row, a chunk of columns at a
    time (each column's values in the database's order of `key`, a unique column of Result); each
    result reported to `sink` as a "result" membership with the digest of its values in the table's
    column order."""
    own_names = list(OWN_COLUMNS)
    evaluation_names = [*EVALUATION_COLUMNS, "comparable"]
    results = Result.objects.values_list(key, "evaluation_id", *OWN_COLUMNS.values())
    after = None
    for keys, evaluation_ids, *own in _chunks(results, key=key, chunk_size=chunk_size):
        evaluations = _evaluations(key, after, keys[-1])
        after = keys[-1]
        if not all(map(evaluations.__contains__, evaluation_ids)):
            # A result whose evaluation is gone was deleted with it since the chunk was read: the
            # catalogue's watermark has moved, so this export pass is discarded (`releases.build._export`).
            kept = [i for i, pk in enumerate(evaluation_ids) if pk in evaluations]
            evaluation_ids = [evaluation_ids[i] for i in kept]
            own = [[column[i] for i in kept] for column in own]
            if not kept:
                continue
        columns: Columns = dict(zip(own_names, own, strict=True))
        of_evaluation = zip(*map(evaluations.__getitem__, evaluation_ids), strict=True)
        columns.update(zip(evaluation_names, of_evaluation, strict=True))
        if sink is not None:
            rows = zip(*(columns[name] for name in _FIELDS), strict=True)
            sink.add_many("result", columns[_FIELDS[_KEY_AT]], [sha256_hex(digest_text(values)) for values in rows])
        yield columns


def matrix_rows(*, chunk_size: int, key: str, sink: MembershipSink | None = None) -> Iterator[dict[str, object]]:
    """`matrix_columns` a row at a time, as mappings of the table's columns."""
    for columns in matrix_columns(chunk_size=chunk_size, key=key, sink=sink):
        names = list(columns)
        for values in zip(*columns.values(), strict=True):
            yield dict(zip(names, values, strict=True))
