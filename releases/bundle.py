"""Write a release as a reproducible, checksummed BagIt bag of a Frictionless data package.

A release bundle is the archival form of a curated release: whoever downloads it
must be able to check that nothing changed (BagIt manifests, verifiable with
``sha256sum -c``), to read it without this code (Frictionless Table Schemas, plain
gzip-compressed RFC 4180 CSV) and to recompute its identifier (see
:func:`compute_release_id`).  So every byte is a function of the rows alone:

* rows are sorted in Python on the table's primary key (never by a database
  collation), with an external merge sort whose memory is bounded by ``chunk_rows``;
* values are serialised one fixed way (:func:`serialise_decimal`: exact digits, ``true``/``false``,
  ISO dates, empty string for ``None``) with one fixed CSV dialect (:class:`BundleDialect`);
* gzip members carry no file name and mtime 0; the tar carries no owner, no
  time and fixed modes; bag-info carries no host name and no build time;
* nothing in the payload (``data/``) depends on the release date or id, so the
  same content always hashes the same; the date and id live in ``bag-info.txt``.

This module knows nothing about Django and nothing about the release store: the
caller passes table specs and iterables of plain row mappings and gets files in a
folder of its choosing (rows in, files out).  It does not validate the finished bag,
install it or make it read-only: the one build path (``releases.build``) does each of
these once.  The tag files are written here rather than by ``bagit.make_bag``
because make_bag changes the process's working directory (unsafe in a threaded
server), hashes the payload a second time, and orders ``tagmanifest-*.txt`` by
``os.listdir`` (file-system dependent); the ``bagit`` library is used to validate
the result instead (:func:`verify_bundle`).
"""

from __future__ import annotations

import csv
import datetime
import decimal
import gzip
import hashlib
import heapq
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from types import MappingProxyType
from typing import BinaryIO, TextIO

import bagit

from common.errors import DomainError

__all__ = [
    "BAG_SOFTWARE_AGENT",
    "BundleDialect",
    "BundleError",
    "BundleResult",
    "FileInfo",
    "Field",
    "ForeignKey",
    "RELEASE_ID_TAG",
    "TableSpec",
    "compute_release_id",
    "file_info",
    "payload_manifest_sha256",
    "read_csv_rows",
    "serialise_decimal",
    "verify_bundle",
    "write_bundle",
    "write_csv_rows",
]

BAG_SOFTWARE_AGENT = "releases.bundle 1"
"""Pinned so that upgrading a library never changes a bundle's bytes."""

RELEASE_ID_TAG = "External-Identifier"
"""The bag-info.txt element holding the release id (RFC 8493 reserves it for this)."""

BAGIT_TXT = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
CHECKSUM_ALGORITHMS = ("sha256", "sha512")
GZIP_LEVEL = 9
TAR_FORMAT = tarfile.PAX_FORMAT
DATAPACKAGE_JSON = "datapackage.json"
RELEASE_JSON = "release.json"
FIELD_TYPES = frozenset({"string", "integer", "number", "boolean", "date"})
KEY_TYPES: Mapping[str, Callable[[str], object]] = MappingProxyType(
    {"string": str, "integer": int}
)
_PINNED_BAG_INFO = frozenset({"Bagging-Date", "Bag-Software-Agent", "Payload-Oxum", RELEASE_ID_TAG})
_FORBIDDEN_METADATA_KEYS = frozenset({"release_id", "release_date"})
_RESERVED_RESOURCE_NAMES = frozenset({"release", "datapackage"})
_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_BAG_INFO_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")
_UNWRITABLE_TEXT = re.compile(r"[\x00\ud800-\udfff]")
_EMPTY_BAG_INFO: Mapping[str, str] = MappingProxyType({})

Cells = list[str]
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


@dataclass(frozen=True)
class FileInfo:
    """Size and checksums of one written file; ``name`` is its path inside the bag."""

    name: str
    bytes: int
    sha256: str
    sha512: str


@dataclass(frozen=True)
class BundleResult:
    """Where a bundle lies and what it holds."""

    release_id: str
    bag_dir: Path
    tarball: Path
    payload_files: tuple[FileInfo, ...]
    tarball_info: FileInfo
    row_counts: dict[str, int]
    tag_files: tuple[FileInfo, ...] = ()  # bagit.txt, bag-info.txt, the manifests, the tag manifests

    @property
    def manifest_sha256(self) -> str:
        """The content digest (:func:`payload_manifest_sha256`) of this bundle's payload."""
        return payload_manifest_sha256({f.name: f.sha256 for f in self.payload_files})


# --------------------------------------------------------------------------- CSV


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


def _csv_dialect_descriptor() -> dict[str, object]:
    """The CSV Dialect (Data Package v1) description of :class:`BundleDialect`."""
    return {
        "delimiter": BundleDialect.delimiter,
        "quoteChar": BundleDialect.quotechar,
        "doubleQuote": BundleDialect.doublequote,
        "lineTerminator": BundleDialect.lineterminator,
        "skipInitialSpace": BundleDialect.skipinitialspace,
        "header": True,
        "csvddfVersion": 1.2,
    }


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


# ------------------------------------------------------------ table handling


class _RowCodec:
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

    def key(self, cells: Cells) -> Key:
        return tuple(convert(cells[position]) for position, convert in self._key_parts)


def _sorted_chunks(
    codec: _RowCodec,
    rows: Iterable[Mapping[str, object]],
    chunk_rows: int,
    spill_dir: Path,
    stack: ExitStack,
    progress: Progress | None,
) -> list[Iterable[tuple[Key, Cells]]]:
    """First pass of the external sort: sorted runs of at most ``chunk_rows`` rows.

    Every run but the last is spilled to an anonymous temporary file (in the
    bundle's dialect), so memory holds at most one chunk; the last stays in memory.
    """
    runs: list[Iterable[tuple[Key, Cells]]] = []
    chunk: list[tuple[Key, Cells]] = []
    seen = 0
    for row in rows:
        cells = codec.cells(row)
        chunk.append((codec.key(cells), cells))
        seen += 1
        if len(chunk) == chunk_rows:
            runs.append(_spill(chunk, codec, spill_dir, stack))
            chunk = []
            _report(progress, f"sort {codec.spec.name}", seen)
    chunk.sort(key=itemgetter(0))
    _report(progress, f"sort {codec.spec.name}", seen)
    runs.append(chunk)
    return runs


def _spill(
    chunk: list[tuple[Key, Cells]], codec: _RowCodec, spill_dir: Path, stack: ExitStack
) -> Iterator[tuple[Key, Cells]]:
    chunk.sort(key=itemgetter(0))
    spill = stack.enter_context(
        tempfile.TemporaryFile("w+", encoding="utf-8", newline="", dir=spill_dir)
    )
    write_csv_rows(spill, (cells for _, cells in chunk))
    spill.seek(0)
    return ((codec.key(cells), cells) for cells in read_csv_rows(spill))


def _merged_unique(codec: _RowCodec, runs: list[Iterable[tuple[Key, Cells]]]) -> Iterator[Cells]:
    """Second pass: merge the sorted runs, refusing a primary key seen twice."""
    previous: Key | None = None
    for key, cells in heapq.merge(*runs, key=itemgetter(0)):
        if key == previous:
            raise codec.error("duplicate primary key", key, ",".join(codec.spec.primary_key))
        previous = key
        yield cells


def _report(progress: Progress | None, stage: str, rows: int) -> None:
    if progress is not None:
        progress(stage, rows)


def _reporting(rows: Iterable[Cells], stage: str, every: int, progress: Progress | None) -> Iterator[Cells]:
    count = 0
    for count, cells in enumerate(rows, start=1):
        yield cells
        if count % every == 0:
            _report(progress, stage, count)
    _report(progress, stage, count)


# ----------------------------------------------------------- hashed writing


class _HashingWriter:
    """A binary sink that counts and hashes (sha256 and sha512) what passes through.

    Checksums are thus computed in the same pass that writes the file.
    """

    def __init__(self, target: BinaryIO) -> None:
        self._target = target
        self._hashes = [hashlib.new(name) for name in CHECKSUM_ALGORITHMS]
        self.bytes = 0

    def write(self, data: bytes) -> int:
        for digest in self._hashes:
            digest.update(data)
        self.bytes += len(data)
        return self._target.write(data)

    def flush(self) -> None:
        self._target.flush()

    def info(self, name: str) -> FileInfo:
        sha256, sha512 = (digest.hexdigest() for digest in self._hashes)
        return FileInfo(name=name, bytes=self.bytes, sha256=sha256, sha512=sha512)


@contextmanager
def _hashed_file(path: Path) -> Iterator[_HashingWriter]:
    with path.open("xb") as target:
        yield _HashingWriter(target)


def _gzip(sink: _HashingWriter) -> gzip.GzipFile:
    """A gzip stream without file name and with mtime 0, so its bytes depend on content only."""
    return gzip.GzipFile(
        filename="", mode="wb", fileobj=sink, mtime=0, compresslevel=GZIP_LEVEL  # type: ignore[arg-type]
    )


def _write_table(path: Path, spec: TableSpec, rows: Iterable[Cells]) -> tuple[FileInfo, int]:
    with _hashed_file(path) as sink:
        with io.TextIOWrapper(_gzip(sink), encoding="utf-8", newline="") as text:
            write_csv_rows(text, [[f.name for f in spec.fields]])
            count = write_csv_rows(text, rows)
    return sink.info(f"data/{path.name}"), count


def file_info(path: Path, name: str) -> FileInfo:
    """Size and checksums of a file already written (``name``: its path inside the bag)."""
    digests = [hashlib.new(algorithm) for algorithm in CHECKSUM_ALGORITHMS]
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            size += len(chunk)
            for digest in digests:
                digest.update(chunk)
    sha256, sha512 = (digest.hexdigest() for digest in digests)
    return FileInfo(name=name, bytes=size, sha256=sha256, sha512=sha512)


def _write_bytes(path: Path, bag_path: str, content: bytes) -> FileInfo:
    with _hashed_file(path) as sink:
        sink.write(content)
    return sink.info(bag_path)


def _json_bytes(value: object) -> bytes:
    """Canonical-enough JSON: sorted keys, two-space indent, UTF-8, final newline."""
    text = json.dumps(
        value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False, default=_json_default
    )
    return f"{text}\n".encode("utf-8")


def _json_default(value: object) -> object:
    if isinstance(value, decimal.Decimal):
        return serialise_decimal(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# ------------------------------------------------------------ datapackage


def _field_descriptor(field: Field, required: bool) -> dict[str, object]:
    descriptor: dict[str, object] = {"name": field.name, "type": field.type}
    if field.title:
        descriptor["title"] = field.title
    if field.description:
        descriptor["description"] = field.description
    constraints: dict[str, object] = {}
    if required:
        constraints["required"] = True
    if field.enum is not None:
        constraints["enum"] = list(field.enum)
    if field.pattern is not None:
        constraints["pattern"] = field.pattern
    if constraints:
        descriptor["constraints"] = constraints
    return descriptor


def _table_resource(spec: TableSpec, info: FileInfo) -> dict[str, object]:
    schema: dict[str, object] = {
        "fields": [_field_descriptor(f, f.required or f.name in spec.primary_key) for f in spec.fields],
        "missingValues": [""],
        "primaryKey": list(spec.primary_key),
    }
    if spec.foreign_keys:
        schema["foreignKeys"] = [
            {
                "fields": list(fk.fields),
                # Table Schema names the table's own resource "" (a task's suite is a row of the same table)
                "reference": {"resource": "" if fk.resource == spec.name else fk.resource, "fields": list(fk.reference_fields)},
            }
            for fk in spec.foreign_keys
        ]
    return {
        "name": spec.name,
        "path": spec.filename,
        "profile": "tabular-data-resource",
        "title": spec.title,
        "description": spec.description,
        "format": "csv",
        "mediatype": "text/csv",
        "encoding": "utf-8",
        "compression": "gz",
        **_size_and_hash(info),
        "dialect": _csv_dialect_descriptor(),
        "schema": schema,
    }


def _size_and_hash(info: FileInfo) -> dict[str, object]:
    """``bytes`` and ``hash`` of the file as stored; frictionless checks the compressed bytes."""
    return {"bytes": info.bytes, "hash": f"sha256:{info.sha256}"}


def _datapackage(
    name: str, title: str, tables: Sequence[tuple[TableSpec, FileInfo]], release: FileInfo
) -> dict[str, object]:
    """The package is a plain "data-package" because release.json is described too."""
    release_resource = {
        "name": "release",
        "path": RELEASE_JSON,
        "profile": "data-resource",
        "title": "Release metadata",
        "format": "json",
        "mediatype": "application/json",
        "encoding": "utf-8",
        **_size_and_hash(release),
    }
    return {
        "profile": "data-package",
        "name": name,
        "title": title,
        "resources": [_table_resource(spec, info) for spec, info in tables] + [release_resource],
    }


# ------------------------------------------------------------ spec checks


def _check_specs(specs: Sequence[TableSpec]) -> None:
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


def _release_json(metadata: Mapping[str, object]) -> bytes:
    """release.json, checked before any table is written so a bad one fails early."""
    forbidden = _FORBIDDEN_METADATA_KEYS.intersection(metadata)
    if forbidden:
        raise BundleError(
            f"release metadata must not contain {sorted(forbidden)}: the payload may not depend "
            "on the release id or date, which live in bag-info.txt"
        )
    try:
        return _json_bytes(metadata)
    except (TypeError, ValueError) as exc:
        raise BundleError(f"release metadata is not JSON serialisable: {exc}") from exc


def _check_bag_info_extra(extra: Mapping[str, str]) -> None:
    for label, value in extra.items():
        if label in _PINNED_BAG_INFO or not _BAG_INFO_LABEL.match(label):
            raise BundleError(f"bag-info label {label!r} is pinned or malformed")
        if "\r" in value or "\n" in value:
            raise BundleError(f"bag-info value for {label!r} contains a line break")


# -------------------------------------------------------------- bag files


def _manifest_text(digests: Mapping[str, str]) -> str:
    """Manifest lines ``"<digest>  <path>\\n"`` sorted by path (``sha256sum -c`` format)."""
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(digests.items()))


def payload_manifest_sha256(payload_sha256: Mapping[str, str]) -> str:
    """The sha256 (hex) of the payload manifest, ``manifest-sha256.txt``: the release's content digest.

    The one place it is computed: the release id holds its first 12 digits
    (:func:`compute_release_id`), and a release row stores it whole (``payload_sha256``).
    """
    return hashlib.sha256(_manifest_text(payload_sha256).encode("utf-8")).hexdigest()


def compute_release_id(*, release_date: datetime.date, payload_sha256: Mapping[str, str]) -> str:
    """Return ``"YYYY-MM-DD-" + the first 12 hex digits of sha256(payload manifest)``.

    ``payload_sha256`` maps each payload path inside the bag (``"data/<name>"``) to
    the lowercase hex sha256 of that file.  The payload manifest is the UTF-8 bytes
    of the lines ``"<sha256>  data/<name>\\n"`` (two spaces) sorted by path in code
    point order.  Those bytes are exactly the bundle's ``manifest-sha256.txt``, so
    a verifier can recompute the id with::

        echo "$(sed -n 's/^Bagging-Date: //p' bag-info.txt)-$(sha256sum manifest-sha256.txt | cut -c1-12)"
    """
    return f"{release_date.isoformat()}-{payload_manifest_sha256(payload_sha256)[:12]}"


def _bag_info_text(
    release_id: str, release_date: datetime.date, payload: Sequence[FileInfo], extra: Mapping[str, str]
) -> str:
    """bag-info.txt with sorted labels; every value is pinned or given by the caller."""
    info = {
        **extra,
        "Bag-Software-Agent": BAG_SOFTWARE_AGENT,
        "Bagging-Date": release_date.isoformat(),
        "Payload-Oxum": f"{sum(f.bytes for f in payload)}.{len(payload)}",
        RELEASE_ID_TAG: release_id,
    }
    return "".join(f"{label}: {info[label]}\n" for label in sorted(info))


def _write_tag_files(bag: Path, payload: Sequence[FileInfo], bag_info: str) -> tuple[FileInfo, ...]:
    """Write the tag files; return their infos (the tag manifests last)."""
    tags: list[FileInfo] = [
        _write_bytes(bag / "bagit.txt", "bagit.txt", BAGIT_TXT.encode("utf-8")),
        _write_bytes(bag / "bag-info.txt", "bag-info.txt", bag_info.encode("utf-8")),
    ]
    tags += [_write_manifest(bag, "manifest", algorithm, payload) for algorithm in CHECKSUM_ALGORITHMS]
    tag_manifests = [_write_manifest(bag, "tagmanifest", algorithm, tags) for algorithm in CHECKSUM_ALGORITHMS]
    return (*tags, *tag_manifests)


def _write_manifest(bag: Path, kind: str, algorithm: str, files: Sequence[FileInfo]) -> FileInfo:
    name = f"{kind}-{algorithm}.txt"
    text = _manifest_text({f.name: getattr(f, algorithm) for f in files})
    return _write_bytes(bag / name, name, text.encode("utf-8"))


def _bag_entries(root: Path) -> list[str]:
    """Every directory and file below ``root`` as sorted relative POSIX paths (parents first)."""
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


def _write_tarball(path: Path, bag: Path, release_id: str) -> FileInfo:
    """A tar.gz of the bag under ``<release_id>/``: sorted, owner 0, no times, fixed modes."""
    with _hashed_file(path) as sink:
        with _gzip(sink) as compressed, tarfile.open(fileobj=compressed, mode="w", format=TAR_FORMAT) as tar:
            tar.addfile(_tar_entry(release_id, directory=True))
            for relative in _bag_entries(bag):
                _add_to_tar(tar, bag / relative, f"{release_id}/{relative}")
    return sink.info(f"{release_id}.tar.gz")


def _add_to_tar(tar: tarfile.TarFile, source: Path, name: str) -> None:
    if source.is_dir():
        tar.addfile(_tar_entry(name, directory=True))
        return
    member = _tar_entry(name, directory=False)
    member.size = source.stat().st_size
    with source.open("rb") as content:
        tar.addfile(member, content)


def _tar_entry(name: str, *, directory: bool) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    member.mode = 0o755 if directory else 0o644
    member.mtime = 0
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    return member


# ----------------------------------------------------------------- public


def write_bundle(
    *,
    tables: Sequence[tuple[TableSpec, Iterable[Mapping[str, object]]]],
    release_date: datetime.date,
    release_metadata: Mapping[str, object],
    package_name: str,
    package_title: str,
    output_dir: Path,
    bag_info_extra: Mapping[str, str] = _EMPTY_BAG_INFO,
    chunk_rows: int = 50_000,
    progress: Progress | None = None,
) -> BundleResult:
    """Write ``output_dir/<release_id>/`` (a bag) and ``output_dir/<release_id>.tar.gz``; rows in, files out.

    The bag is written in a hidden scratch folder of ``output_dir`` (its name, the
    release id, is known once the payload is hashed), then renamed to its name
    beside its archive.  Nothing more: the caller validates the bag
    (:func:`verify_bundle`), installs it and makes it read-only.  Raises
    :class:`BundleError` for a bad spec or row, or when ``output_dir`` already holds
    a bag or an archive of that id (nothing is ever overwritten); either way
    nothing is left behind in ``output_dir``.

    ``progress`` gets ``("sort <table>", rows read)`` after each chunk,
    ``("write <table>", rows written)`` every ``chunk_rows`` rows and at the end
    of the table, and ``("write archive", total rows)``.
    """
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    _check_specs([spec for spec, _ in tables])
    release_json = _release_json(release_metadata)
    _check_bag_info_extra(bag_info_extra)
    output_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".writing-", dir=output_dir))
    try:
        bag = scratch / "bag"
        payload, row_counts = _write_payload(
            bag / "data", tables, release_json, package_name, package_title, chunk_rows, progress, scratch
        )
        sha256 = {f.name: f.sha256 for f in payload}
        release_id = compute_release_id(release_date=release_date, payload_sha256=sha256)
        tag_files = _write_tag_files(bag, payload, _bag_info_text(release_id, release_date, payload, bag_info_extra))
        _report(progress, "write archive", sum(row_counts.values()))
        written_tar = scratch / "bag.tar.gz"
        tarball_info = _write_tarball(written_tar, bag, release_id)
        final_bag, final_tar = output_dir / release_id, output_dir / tarball_info.name
        for final in (final_bag, final_tar):
            if final.exists():
                raise BundleError(f"{final} already exists: a bundle is written only where none of its id is")
        os.rename(bag, final_bag)
        os.rename(written_tar, final_tar)
    finally:
        shutil.rmtree(scratch)
    return BundleResult(
        release_id=release_id,
        bag_dir=final_bag,
        tarball=final_tar,
        payload_files=payload,
        tarball_info=tarball_info,
        row_counts=row_counts,
        tag_files=tag_files,
    )


def _write_payload(
    data: Path,
    tables: Sequence[tuple[TableSpec, Iterable[Mapping[str, object]]]],
    release_json: bytes,
    package_name: str,
    package_title: str,
    chunk_rows: int,
    progress: Progress | None,
    spill_dir: Path,
) -> tuple[tuple[FileInfo, ...], dict[str, int]]:
    """Write the tables, release.json and datapackage.json; return their infos sorted by path."""
    data.mkdir(parents=True)
    written: list[tuple[TableSpec, FileInfo]] = []
    row_counts: dict[str, int] = {}
    for spec, rows in tables:
        codec = _RowCodec(spec)
        with ExitStack() as spills:
            runs = _sorted_chunks(codec, rows, chunk_rows, spill_dir, spills, progress)
            merged = _reporting(_merged_unique(codec, runs), f"write {spec.name}", chunk_rows, progress)
            info, row_counts[spec.name] = _write_table(data / spec.filename, spec, merged)
        written.append((spec, info))
    release = _write_bytes(data / RELEASE_JSON, f"data/{RELEASE_JSON}", release_json)
    package = _datapackage(package_name, package_title, written, release)
    descriptor = _write_bytes(data / DATAPACKAGE_JSON, f"data/{DATAPACKAGE_JSON}", _json_bytes(package))
    payload = [info for _, info in written] + [release, descriptor]
    return tuple(sorted(payload, key=lambda f: f.name)), row_counts


def verify_bundle(bag_dir: Path) -> list[str]:
    """Return the problems found in a bundle (an empty list when it is intact).

    bagit re-hashes every payload and tag file against every manifest and tag
    manifest and checks Payload-Oxum and completeness; on top of that the release
    id in bag-info.txt is recomputed from manifest-sha256.txt, both algorithms
    must be present, and datapackage.json's ``bytes``/``hash`` must match the files.
    """
    try:
        bag = bagit.Bag(str(bag_dir))
    except bagit.BagError as exc:
        return [f"not a readable bag: {exc}"]
    problems: list[str] = []
    try:
        bag.validate(processes=1)
    except bagit.BagValidationError as exc:
        problems += [str(detail) for detail in exc.details] or [str(exc)]
    problems += _missing_manifests(bag_dir)
    sha256 = {path: hashes["sha256"] for path, hashes in bag.payload_entries().items() if "sha256" in hashes}
    problems += _release_id_problems(bag.info, sha256)
    problems += _datapackage_problems(bag_dir, sha256)
    return problems


def _missing_manifests(bag_dir: Path) -> list[str]:
    return [
        f"{kind}-{algorithm}.txt is missing"
        for kind in ("manifest", "tagmanifest")
        for algorithm in CHECKSUM_ALGORITHMS
        if not (bag_dir / f"{kind}-{algorithm}.txt").is_file()
    ]


def _release_id_problems(info: Mapping[str, object], payload_sha256: Mapping[str, str]) -> list[str]:
    recorded = info.get(RELEASE_ID_TAG)
    try:
        release_date = datetime.date.fromisoformat(str(info.get("Bagging-Date")))
    except ValueError:
        return [f"Bagging-Date {info.get('Bagging-Date')!r} is not a YYYY-MM-DD date"]
    expected = compute_release_id(release_date=release_date, payload_sha256=payload_sha256)
    if recorded != expected:
        return [f"{RELEASE_ID_TAG} is {recorded!r} but the payload manifest gives {expected!r}"]
    return []


def _datapackage_problems(bag_dir: Path, payload_sha256: Mapping[str, str]) -> list[str]:
    try:
        package = json.loads((bag_dir / "data" / DATAPACKAGE_JSON).read_bytes())
        resources = [(str(r["path"]), r.get("bytes"), r.get("hash")) for r in package["resources"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{DATAPACKAGE_JSON} is unreadable: {exc}"]
    return [
        f"{DATAPACKAGE_JSON}: bytes or hash of data/{path} does not match the file"
        for path, size, digest in resources
        if not _described_truly(bag_dir / "data" / path, size, digest, payload_sha256.get(f"data/{path}"))
    ]


def _described_truly(path: Path, size: object, digest: object, manifest_sha256: str | None) -> bool:
    """Whether datapackage.json's ``bytes`` and ``hash`` agree with the file and the manifest."""
    return path.is_file() and path.stat().st_size == size and digest == f"sha256:{manifest_sha256}"
