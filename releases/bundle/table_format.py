"""The bundle's tables: specs (fields, keys, constraints), rows checked and serialised one fixed
way, the CSV dialect, and the external merge sort on the primary key (memory bounded by a chunk)."""

from __future__ import annotations

import csv
import datetime
import decimal
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TextIO

from common.errors import DomainError

FIELD_TYPES = frozenset({"string", "integer", "number", "boolean", "date"})

KEY_TYPES: Mapping[str, Callable[[str], object]] = MappingProxyType({"string": str, "integer": int})

_RESERVED_RESOURCE_NAMES = frozenset({"release", "datapackage"})
_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_UNWRITABLE_TEXT = re.compile(r"[\x00\ud800-\udfff]")

Cells = Sequence[str]
CODEC_BATCH_ROWS = 1_000  # rows serialised column-wise at a time (their dicts and cells held at once)
Key = tuple[object, ...]
Progress = Callable[[str, int], None]


class BundleError(DomainError):
    """A bundle cannot be written: bad spec, bad row, or a conflicting earlier bundle.

    ``table``, ``primary_key`` and ``field`` locate the offending row value when
    the error is about a row, so that the curation UI can point at it.
    """

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        primary_key: tuple[object, ...] | None = None,
        field: str | None = None,
    ) -> None:
        location = ", ".join(
            part
            for part in (
                f"table {table!r}" if table is not None else "",
                f"primary key {primary_key!r}" if primary_key is not None else "",
                f"field {field!r}" if field is not None else "",
            )
            if part
        )
        super().__init__(f"{location}: {message}" if location else message)
        self.table = table
        self.primary_key = primary_key
        self.field = field


@dataclass(frozen=True)
class Field:
    """One column: its Table Schema type and the constraints every row must meet."""

    name: str
    type: str  # "string" | "integer" | "number" | "boolean" | "date"
    title: str = ""
    description: str = ""
    required: bool = False
    enum: tuple[str, ...] | None = None
    pattern: str | None = None  # a regular expression every non-empty string cell matches whole


@dataclass(frozen=True)
class ForeignKey:
    """Columns of one table that reference columns of another resource in the package."""

    fields: tuple[str, ...]
    resource: str
    reference_fields: tuple[str, ...]


@dataclass(frozen=True)
class TableSpec:
    """A table of the bundle; it is written to ``data/{name}.csv.gz``."""

    name: str
    title: str
    description: str
    fields: tuple[Field, ...]
    primary_key: tuple[str, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()

    @property
    def filename(self) -> str:
        return f"{self.name}.csv.gz"


# ------------------------------------------------------------------------ CSV


class BundleDialect(csv.Dialect):
    """RFC 4180: comma, double quote doubled inside quotes, CRLF, quote only when needed."""

    delimiter = ","
    quotechar = '"'
    doublequote = True
    escapechar = None
    lineterminator = "\r\n"
    quoting = csv.QUOTE_MINIMAL
    skipinitialspace = False
    strict = True


def write_csv_rows(stream: TextIO, rows: Iterable[Sequence[str]]) -> int:
    """Write rows of already serialised cells; ``stream`` must be opened with ``newline=""``.

    Returns the number of rows written.
    """
    writer = csv.writer(stream, dialect=BundleDialect)
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    return count


def read_csv_rows(stream: TextIO) -> Iterator[Cells]:
    """Read rows written by :func:`write_csv_rows`; ``stream`` must be opened with ``newline=""``."""
    return csv.reader(stream, dialect=BundleDialect)


# ---------------------------------------------------------------- serialising


def serialise_decimal(value: decimal.Decimal) -> str:
    """The exact digits as recorded, in the decimal's own text: "0.410" keeps its trailing zero,
    "3.00E+11" its three significant digits (Table Schema numbers allow the exponent); no negative
    zero. A value's printed precision is part of the evidence, so nothing is trimmed or rounded.
    """
    if not value.is_finite():
        raise ValueError(f"{value} is not a finite number")
    return str(abs(value)) if value.is_zero() else str(value)


def _serialise_string(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    if _UNWRITABLE_TEXT.search(value):
        raise ValueError("contains a NUL character or a lone surrogate")
    return value


def _serialise_integer(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    return str(value)


def _serialise_number(value: object) -> str:
    """Decimals and ints as written; a float through its shortest round-tripping repr."""
    if isinstance(value, bool) or not isinstance(value, (decimal.Decimal, int, float)):
        raise ValueError(f"expected a number, got {value!r}")
    number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(repr(value))
    return serialise_decimal(number)


def _serialise_boolean(value: object) -> str:
    if not isinstance(value, bool):
        raise ValueError(f"expected a boolean, got {value!r}")
    return "true" if value else "false"


def _serialise_date(value: object) -> str:
    if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
        raise ValueError(f"expected a date, got {value!r}")
    return value.isoformat()


_SERIALISERS: Mapping[str, Callable[[object], str]] = MappingProxyType(
    {
        "string": _serialise_string,
        "integer": _serialise_integer,
        "number": _serialise_number,
        "boolean": _serialise_boolean,
        "date": _serialise_date,
    }
)


_NONE = type(None)
_DATE = datetime.date


def _fast_strings(values: list[object], required: bool) -> list[str] | None:
    """A string column's cells, or None when any value needs the row-by-row path (to raise its error)."""
    if not set(map(type, values)) <= {str, _NONE} or (required and (None in values or "" in values)):
        return None
    cells = [value or "" for value in values] if None in values else values
    return None if _unwritable("".join(cells)) else cells  # type: ignore[return-value,arg-type]


def _unwritable(text: str) -> bool:
    """Whether the text holds a NUL or a lone surrogate (ASCII text has no surrogate: one scan less)."""
    return "\x00" in text if text.isascii() else _UNWRITABLE_TEXT.search(text) is not None


def _fast_integers(values: list[object], required: bool) -> list[str] | None:
    if not set(map(type, values)) <= {int, _NONE} or (required and None in values):
        return None
    return ["" if value is None else str(value) for value in values]


def _fast_numbers(values: list[object], required: bool) -> list[str] | None:
    """Decimals as written (``str``); a text starting "-0" may be a negative zero: serialised the slow way."""
    if not set(map(type, values)) <= {decimal.Decimal, _NONE} or (required and None in values):
        return None
    cells = ["" if value is None else str(value) for value in values] if None in values else list(map(str, values))
    joined = "".join(cells)
    if "N" in joined or "n" in joined:  # NaN, sNaN, Infinity: not finite (a finite text has digits, ".", "-", "E+")
        return None
    if "-0" in joined:  # perhaps a negative zero ("-0" may also open "-0.5" or follow another cell)
        cells = [
            serialise_decimal(value) if text.startswith("-0") else text  # type: ignore[arg-type]
            for value, text in zip(values, cells, strict=True)
        ]
    return cells


def _fast_booleans(values: list[object], required: bool) -> list[str] | None:
    if not set(map(type, values)) <= {bool, _NONE} or (required and None in values):
        return None
    return ["" if value is None else "true" if value else "false" for value in values]


def _fast_dates(values: list[object], required: bool) -> list[str] | None:
    if not set(map(type, values)) <= {_DATE, _NONE} or (required and None in values):
        return None
    return ["" if value is None else value.isoformat() for value in values]  # type: ignore[attr-defined]


_COLUMN_SERIALISERS: Mapping[str, Callable[[list[object], bool], list[str] | None]] = MappingProxyType(
    {
        "string": _fast_strings,
        "integer": _fast_integers,
        "number": _fast_numbers,
        "boolean": _fast_booleans,
        "date": _fast_dates,
    }
)


# ----------------------------------------------------------------------- rows


class RowCodec:
    """Checks rows of one table, turns them into cells and gives their sort key.

    The sort key is computed from the cells (string columns as ``str``, integer
    columns as ``int``) so that rows read back from a spill file sort exactly as
    rows fresh from the caller.
    """

    def __init__(self, spec: TableSpec) -> None:
        self.spec = spec
        self._names = frozenset(f.name for f in spec.fields)
        self._required = frozenset(f.name for f in spec.fields if f.required) | set(spec.primary_key)
        self._enums = {f.name: frozenset(f.enum) for f in spec.fields if f.enum is not None}
        self._patterns = {f.name: re.compile(f.pattern) for f in spec.fields if f.pattern is not None}
        self._serialisers = [(f.name, _SERIALISERS[f.type]) for f in spec.fields]
        self._columns = [
            (
                f.name,
                _COLUMN_SERIALISERS[f.type],
                f.name in self._required,
                self._enums.get(f.name),
                self._patterns.get(f.name),
            )
            for f in spec.fields
        ]
        types = {f.name: f.type for f in spec.fields}
        positions = {f.name: i for i, f in enumerate(spec.fields)}
        self._key_parts = [(positions[n], KEY_TYPES[types[n]]) for n in spec.primary_key]

    def error(self, message: str, key: tuple[object, ...], field: str | None) -> BundleError:
        return BundleError(message, table=self.spec.name, primary_key=key, field=field)

    def cells(self, row: Mapping[str, object]) -> Cells:
        """Validate one row against the spec and serialise it, or raise :class:`BundleError`."""
        key = tuple(row.get(name) for name in self.spec.primary_key)
        if row.keys() != self._names:
            unknown = sorted(set(row) - self._names)
            missing = sorted(self._names - set(row))
            problem = "unknown field" if unknown else "missing field"
            raise self.error(problem, key, (unknown or missing)[0])
        return [self._cell(name, serialise, row[name], key) for name, serialise in self._serialisers]

    def _cell(self, name: str, serialise: Callable[[object], str], value: object, key: Key) -> str:
        if value is None or value == "":  # both are an empty cell, i.e. missing
            if name in self._required:
                raise self.error("required value is empty", key, name)
            return ""
        try:
            text = serialise(value)
        except ValueError as exc:
            raise self.error(str(exc), key, name) from exc
        if name in self._enums and text not in self._enums[name]:
            raise self.error(f"{text!r} is not one of {sorted(self._enums[name])}", key, name)
        if name in self._patterns and not self._patterns[name].fullmatch(text):
            raise self.error(f"{text!r} does not match {self._patterns[name].pattern}", key, name)
        return text

    def cells_many(self, rows: Sequence[Mapping[str, object]]) -> list[Cells]:
        """`cells` of many rows at once, column by column (the same cells, several times faster).

        Any value the column-wise checks do not clear sends the whole batch row by row through
        `cells`, which raises the first row's error exactly as a row-by-row writer would.
        """
        if not rows or set(map(len, rows)) != {len(self._names)}:
            return [self.cells(row) for row in rows]
        try:
            columns = self._serialised(lambda name: [row[name] for row in rows])
        except KeyError:
            columns = None
        if columns is None:
            return [self.cells(row) for row in rows]
        return list(zip(*columns, strict=True)) if columns else [[] for _ in rows]

    def cells_of_columns(self, columns: Mapping[str, Sequence[object]]) -> list[Cells]:
        """`cells` of the rows given as columns (each field's values, all of one length): the cells
        `cells_many` gives for the same rows, without making a mapping per row."""
        lengths = set(map(len, columns.values()))
        if len(lengths) > 1:
            raise BundleError(f"columns of unequal length: {sorted(lengths)}", table=self.spec.name)
        if columns.keys() == self._names and lengths:
            serialised = self._serialised(lambda name: columns[name])
            if serialised is not None:
                return list(zip(*serialised, strict=True))
        names = list(columns)
        return [self.cells(dict(zip(names, values, strict=True))) for values in zip(*columns.values(), strict=True)]

    def _serialised(self, column_values: Callable[[str], Sequence[object]]) -> list[list[str]] | None:
        """Every column's cells (`column_values(name)`: its values), or None when a value needs the
        row-by-row path."""
        columns = []
        for name, serialise, required, enum, pattern in self._columns:
            values = column_values(name)
            cells = serialise(values if isinstance(values, list) else list(values), required)
            if cells is None:
                return None
            if enum is not None and not set(cells) <= enum | {""}:
                return None
            if pattern is not None and not all(pattern.fullmatch(cell) for cell in cells if cell):
                return None
            columns.append(cells)
        return columns

    def key(self, cells: Cells) -> Key:
        return tuple(convert(cells[position]) for position, convert in self._key_parts)

    def keys(self, batch: Sequence[Cells]) -> list[Key]:
        """`key` of each row of a batch (a one-string key without a call per row)."""
        if len(self._key_parts) == 1 and self._key_parts[0][1] is str:
            position = self._key_parts[0][0]
            return [(cells[position],) for cells in batch]
        return [self.key(cells) for cells in batch]


# ---------------------------------------------------------------- spec checks


def check_specs(specs: Sequence[TableSpec]) -> None:
    """Refuse specs that would give an invalid or ambiguous package before writing anything."""
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise BundleError(f"table names are not unique: {names}")
    fields_of = {spec.name: {f.name: f for f in spec.fields} for spec in specs}
    for spec in specs:
        _check_spec(spec, fields_of)


def _check_spec(spec: TableSpec, fields_of: Mapping[str, Mapping[str, Field]]) -> None:
    def fail(message: str, field: str | None = None) -> BundleError:
        return BundleError(message, table=spec.name, field=field)

    if not _NAME_PATTERN.match(spec.name) or spec.name in _RESERVED_RESOURCE_NAMES:
        raise fail("table name must match [a-z0-9][a-z0-9._-]* and not be 'release' or 'datapackage'")
    fields = fields_of[spec.name]
    if len(fields) != len(spec.fields):
        raise fail("field names are not unique")
    for field in spec.fields:
        if field.type not in FIELD_TYPES:
            raise fail(f"unknown type {field.type!r}", field.name)
        if (field.enum is not None or field.pattern is not None) and field.type != "string":
            raise fail("only string fields can have an enum or a pattern", field.name)
    if not spec.primary_key:
        raise fail("a primary key is required to sort the rows")
    for name in spec.primary_key:
        if name not in fields or fields[name].type not in KEY_TYPES:
            raise fail("primary key fields must be string or integer fields", name)
    for fk in spec.foreign_keys:
        target = fields_of.get(fk.resource)
        if target is None or len(fk.fields) != len(fk.reference_fields):
            raise fail(f"foreign key to unknown resource {fk.resource!r} or of unequal length")
        for name in fk.fields:
            if name not in fields:
                raise fail("foreign key field is not a field", name)
        for name in fk.reference_fields:
            if name not in target:
                raise fail(f"referenced field is not a field of {fk.resource!r}", name)
