"""The Frictionless side of a bundle: datapackage.json (a Table Schema per table, the CSV dialect,
bytes and hash per file) and release.json, as canonical JSON bytes."""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Mapping, Sequence

from releases.bundle.bag import FileInfo
from releases.bundle.table_format import BundleDialect, BundleError, Field, TableSpec, serialise_decimal

DATAPACKAGE_JSON = "datapackage.json"
#: What the tables promise about text (the package's description): exact, never rewritten for a spreadsheet.
EXACT_TEXT_NOTE = (
    "Every text cell holds the recorded text exactly, even one that begins with =, +, - or @ "
    "(or a tab or carriage return). A spreadsheet program may read such a cell as a formula: import "
    "text columns as text. Unlike the portal's page-level CSV downloads, which prefix such cells with "
    "a single quote, these tables are never rewritten."
)
#: What a `value` column promises, and how to read it without losing digits.
EXACT_VALUE_NOTE = (
    "The exact value with every digit it was printed with (0.410 is not 0.41), in its unit. Read it as "
    'text or as a decimal, never as a binary float, or those digits are lost (pandas: dtype={"value": str}, '
    "then decimal.Decimal; DuckDB: types={'value': 'VARCHAR'})."
)
RELEASE_JSON = "release.json"
_FORBIDDEN_METADATA_KEYS = frozenset({"release_id", "release_date"})


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


def json_bytes(value: object) -> bytes:
    """Canonical-enough JSON: sorted keys, two-space indent, UTF-8, final newline."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False, default=_json_default)
    return f"{text}\n".encode()


def _json_default(value: object) -> object:
    if isinstance(value, decimal.Decimal):
        return serialise_decimal(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# ---------------------------------------------------------------- descriptors


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


def csv_resource(spec: TableSpec, info: FileInfo, *, path: str, compressed: bool) -> dict[str, object]:
    """The tabular data resource of a table's CSV file at `path` (relative to its datapackage.json)."""
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
                "reference": {
                    "resource": "" if fk.resource == spec.name else fk.resource,
                    "fields": list(fk.reference_fields),
                },
            }
            for fk in spec.foreign_keys
        ]
    return {
        "name": spec.name,
        "path": path,
        "profile": "tabular-data-resource",
        "title": spec.title,
        "description": spec.description,
        "format": "csv",
        "mediatype": "text/csv",
        "encoding": "utf-8",
        **({"compression": "gz"} if compressed else {}),
        **_size_and_hash(info),
        "dialect": _csv_dialect_descriptor(),
        "schema": schema,
    }


def _size_and_hash(info: FileInfo) -> dict[str, object]:
    """``bytes`` and ``hash`` of the file as stored; frictionless checks the compressed bytes."""
    return {"bytes": info.bytes, "hash": f"sha256:{info.sha256}"}


def datapackage_descriptor(
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
        "description": EXACT_TEXT_NOTE,
        "resources": [csv_resource(spec, info, path=spec.filename, compressed=True) for spec, info in tables]
        + [release_resource],
    }


# ------------------------------------------------------------------- metadata


def release_json_bytes(metadata: Mapping[str, object]) -> bytes:
    """release.json, checked before any table is written so a bad one fails early."""
    forbidden = _FORBIDDEN_METADATA_KEYS.intersection(metadata)
    if forbidden:
        raise BundleError(
            f"release metadata must not contain {sorted(forbidden)}: the payload may not depend "
            "on the release id or date, which live in bag-info.txt"
        )
    try:
        return json_bytes(metadata)
    except (TypeError, ValueError) as exc:
        raise BundleError(f"release metadata is not JSON serialisable: {exc}") from exc
