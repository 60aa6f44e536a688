"""Rows of the model evaluation matrix: one per result, in the release table's columns.

The protocol pages' CSV and JSON downloads and the release bundle's `model_evaluation_matrix` table
read the same rows, so a download and a release agree column for column.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from decimal import Decimal

from django.db.models import QuerySet

from records.models import Protocol, Result, evaluation_comparable
from records.values import exact_text

# column -> lookup from a Result. Everything a reader needs to judge a conflict travels with each
# value: the task, who measured and who reported it, how it was read, whether it repeats another
# evaluation, its uncertainty (structured), aggregation and set-up, and the printed text.
MATRIX_COLUMNS: dict[str, str] = {
    "result_id": "stable_id",
    "evaluation_id": "evaluation__stable_id",
    "protocol_id": "evaluation__protocol__stable_id",
    "configuration_id": "evaluation__configuration__stable_id",
    "configuration_name": "evaluation__configuration__name",
    "dataset_id": "evaluation__dataset__stable_id",
    "dataset_name": "evaluation__dataset__name",
    "suite_id": "evaluation__dataset__suite__stable_id",
    "task_key": "evaluation__dataset__task_key",
    "metric_name": "evaluation__protocol__metric_name",
    "metric_direction": "evaluation__protocol__metric_direction",
    "value": "value",
    "unit": "unit",
    "printed_value": "printed_value",
    "relation": "relation",
    "reference_configuration_id": "reference_configuration__stable_id",
    "uncertainty_kind": "uncertainty_kind",
    "uncertainty_value": "uncertainty_value",
    "lower_bound": "lower_bound",
    "upper_bound": "upper_bound",
    "uncertainty_level": "uncertainty_level",
    "num_runs": "num_runs",
    "uncertainty_note": "evaluation__uncertainty",
    "aggregation": "evaluation__aggregation",
    "setup": "evaluation__setup",
    "measured_by": "evaluation__measured_by",
    "measured_by_name": "evaluation__measured_by_name",
    "repeats_evaluation_id": "evaluation__repeats__stable_id",
    "reading_method": "evaluation__reading_method",
    "review_state": "evaluation__review_state",
    "concern": "evaluation__concern",
    "source_id": "evaluation__source__stable_id",
    "source_locator": "evaluation__source_locator",
    "quote": "evaluation__quote",
}
# Read to derive `comparable`, not written as a column of their own.
_DERIVING = {
    "different_measurement": "evaluation__different_measurement",
    "repeated_review_state": "evaluation__repeats__review_state",
}
# The order of the columns in a file: `comparable` follows the review state it derives from.
_STATE_AT = list(MATRIX_COLUMNS).index("review_state") + 1
MATRIX_FIELDNAMES = [*list(MATRIX_COLUMNS)[:_STATE_AT], "comparable", *list(MATRIX_COLUMNS)[_STATE_AT:]]


def chunks_by_key(queryset: QuerySet, *, key: str, chunk_size: int) -> Iterator[list]:
    """Keyset pagination on a unique column `key` over a `values()` (with `key`) or `values_list()`
    (`key` first) queryset, in the database's order of `key`.

    Each chunk is one finished query, so no cursor stays open while the caller works. On SQLite an
    open cursor (`.iterator()`) holds a read snapshot: once another connection commits, a write on
    this connection fails at once with "database is locked", whatever the busy timeout.
    """
    queryset = queryset.order_by(key)
    last = None
    while True:
        chunk = list((queryset if last is None else queryset.filter(**{f"{key}__gt": last}))[:chunk_size])
        if not chunk:
            return
        yield chunk
        last = chunk[-1][key] if isinstance(chunk[-1], dict) else chunk[-1][0]


def chunks_by_pk(queryset: QuerySet, *, chunk_size: int) -> Iterator[list]:
    """`chunks_by_key` on the primary key (a `values()` with "pk", or a `values_list()` with pk first)."""
    return chunks_by_key(queryset, key="pk", chunk_size=chunk_size)


def values_by_pk(queryset: QuerySet, fields: Iterable[str], *, chunk_size: int, key: str = "pk") -> Iterator[tuple]:
    """`queryset.values_list(*fields)`, read in chunks by `chunks_by_key` on `key` (the pk unless said)."""
    for chunk in chunks_by_key(queryset.values_list(key, *fields), key=key, chunk_size=chunk_size):
        for values in chunk:
            yield values[1:]


def matrix_rows(results: QuerySet, *, chunk_size: int = 2000, key: str = "pk") -> Iterator[dict[str, object]]:
    """The matrix rows of a Result queryset, read in chunks (never the whole table in memory) in the
    database's order of `key` (a unique column of Result)."""
    lookups = [*MATRIX_COLUMNS.values(), *_DERIVING.values()]
    state = list(MATRIX_COLUMNS).index("review_state")
    for values in values_by_pk(results, lookups, chunk_size=chunk_size, key=key):
        comparable = evaluation_comparable(
            review_state=values[state], original_state=values[-1], different_measurement=values[-2]
        )
        yield dict(zip(MATRIX_FIELDNAMES, (*values[:_STATE_AT], comparable, *values[_STATE_AT:-2]), strict=True))


def protocol_matrix_rows(protocol: Protocol) -> list[dict[str, object]]:
    rows = matrix_rows(Result.objects.filter(evaluation__protocol=protocol))
    return sorted(rows, key=lambda row: row["result_id"])


def as_text(value: object) -> str:
    """A cell as the release's CSV writes it: exact decimals, true/false, empty for none."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return exact_text(value)
    return str(value)


#: How a cell starts that a spreadsheet program may run as a formula (OWASP, "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value: object) -> str:
    """A cell of a page-level CSV download: `as_text`, with text that a spreadsheet would read as a
    formula prefixed by a single quote, as OWASP advises (the program shows the text, not a result).

    Numbers go out as they are: a decimal column keeps "-0.5" (no formula starts that way, and the
    column stays numeric for whoever sorts or sums it), and so does a text cell that is wholly a
    plain number, such as a printed value "-0.5" or "+3". The release tables keep every text exactly
    as recorded (their data package says so); the JSON downloads need no such care."""
    text = as_text(value)
    if isinstance(value, str) and text.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(text):
        return f"'{text}"
    return text


def csv_text(rows: Iterable[dict[str, object]], *, fieldnames: Iterable[str]) -> str:
    """Rows as a page-level CSV download: a header, then `spreadsheet_cell` of every value."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fieldnames), lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: spreadsheet_cell(value) for name, value in row.items()})
    return buffer.getvalue()


def csv_lines(rows: Iterable[dict[str, object]], *, fieldnames: Iterable[str], chunk: int = 65536) -> Iterator[str]:
    """`csv_text` in pieces of about `chunk` characters (a streamed download: the rows are never all
    in memory, nor sent a line per write)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fieldnames), lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: spreadsheet_cell(value) for name, value in row.items()})
        if buffer.tell() >= chunk:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def rows_as_csv(rows: list[dict[str, object]]) -> str:
    return csv_text(rows, fieldnames=MATRIX_FIELDNAMES)


def rows_as_json(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """JSON-ready rows: decimals as exact strings, the rest as is."""
    return [{name: (exact_text(v) if isinstance(v, Decimal) else v) for name, v in row.items()} for row in rows]
