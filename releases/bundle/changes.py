"""The change list: ``metadata/changes.csv``, every row added, removed or changed since an earlier
release, table by table, with the columns whose value changed; described by its own data package,
``metadata/datapackage.json``.

It is a tag file, not payload: the payload is a function of the catalogue alone (its digest is the
release's content fingerprint and its id recomputes from it), while the change list depends on which
release came before. Both files are in the tag manifests, so ``bagit`` and ``sha256sum -c
tagmanifest-sha256.txt`` check them.

Each table is compared by one merge of two files already sorted on the table's primary key (the new
payload's and the earlier bag's, whose files are first checked against that bag's
``manifest-sha256.txt``): linear in the rows, with one row of each in memory. A table whose file has
the earlier file's digest is the same bytes, so it is not read. Columns present in only one of the
two releases are not compared.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from releases.bundle.bag import FileInfo, hashed_file
from releases.bundle.package import csv_resource, json_bytes
from releases.bundle.table_format import (
    KEY_TYPES,
    BundleDialect,
    BundleError,
    Field,
    Key,
    TableSpec,
    read_csv_rows,
)

CHANGES_CSV = "metadata/changes.csv"
CHANGES_PACKAGE_JSON = "metadata/datapackage.json"
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
_FLUSH_CHARACTERS = 1 << 16  # the CSV text written to the file at a time

CHANGES = TableSpec(
    name="changes",
    title="Changes since the earlier release",
    description=(
        "One row per table row added, removed or changed since the earlier release this package names; "
        "a row of a table that is new in this release is added, one of a table it no longer has is removed."
    ),
    fields=(
        Field("table", "string", title="Table", description="The table (its resource name in data/datapackage.json)."),
        Field(
            "key",
            "string",
            title="Row key",
            description=(
                "The row's primary key as written in its table: the record's stable id, or for a key of "
                'several columns a JSON array of their values (["agreement id", "result id"]).'
            ),
        ),
        Field("change", "string", title="Change", enum=(ADDED, CHANGED, REMOVED)),
        Field(
            "fields",
            "string",
            title="Changed columns",
            description="For a changed row, the columns whose value changed, space-separated; empty otherwise.",
        ),
    ),
    primary_key=("table", "key"),
)


@dataclass(frozen=True)
class EarlierRelease:
    """The release the change list compares with: its id and its bag folder; None for both when there is
    none (every row is added); an id without a bag names a release whose files are not held here (a
    release published elsewhere): no row is compared or listed."""

    release_id: str | None = None
    bag: Path | None = None


@dataclass(frozen=True)
class _Table:
    header: list[str]
    key: Callable[[Sequence[str]], Key]
    key_positions: list[int]
    path: Path
    digest: str | None  # the file's sha256

    def key_text(self, cells: Sequence[str]) -> str:
        """The row's key as written: one value as it is; several as a JSON array (any value may
        hold a space or a comma)."""
        values = [cells[position] for position in self.key_positions]
        return values[0] if len(values) == 1 else json.dumps(values, ensure_ascii=False)


def write_changes(
    bag: Path, tables: Sequence[TableSpec], sha256: Mapping[str, str], earlier: EarlierRelease
) -> list[FileInfo]:
    """Write the change list of the payload `tables` (written under `bag`, `sha256` their digests by
    path in the bag) against `earlier` and its data package; their infos. Raises BundleError when an
    earlier file does not match its manifest."""
    previous = _earlier_tables(earlier)
    compared = earlier.release_id is None or earlier.bag is not None
    current = {spec.name: _current_table(bag, spec, sha256) for spec in tables} if compared else {}
    target = bag / CHANGES_CSV
    target.parent.mkdir(parents=True, exist_ok=True)
    with hashed_file(target) as sink:
        text = io.StringIO()
        writer = csv.writer(text, dialect=BundleDialect)
        writer.writerow([f.name for f in CHANGES.fields])
        for name in sorted(set(current) | set(previous)):
            before, after = previous.get(name), current.get(name)
            if before is not None and after is not None and before.digest == after.digest:
                continue  # the same bytes
            for key, change, fields in _table_changes(before, after):
                writer.writerow([name, key, change, fields])
                if text.tell() > _FLUSH_CHARACTERS:
                    sink.write(text.getvalue().encode("utf-8"))
                    text.seek(0)
                    text.truncate()
        sink.write(text.getvalue().encode("utf-8"))
        changes = sink.info(CHANGES_CSV)
    if not compared:
        against = (
            f"Release {earlier.release_id} came before; its files are not held here, so no row is compared "
            "with it and none is listed (the release's record counts compare the records it holds)."
        )
    elif earlier.release_id:
        against = f"Changes against release {earlier.release_id}."
    else:
        against = "No earlier release: every row is added."
    descriptor = {
        "profile": "data-package",
        "name": "changes",
        "title": CHANGES.title,
        "description": against,
        "resources": [csv_resource(CHANGES, changes, path=Path(CHANGES_CSV).name, compressed=False)],
    }
    with hashed_file(bag / CHANGES_PACKAGE_JSON) as sink:
        sink.write(json_bytes(descriptor))
        package = sink.info(CHANGES_PACKAGE_JSON)
    return [changes, package]


def _current_table(bag: Path, spec: TableSpec, sha256: Mapping[str, str]) -> _Table:
    types = {f.name: f.type for f in spec.fields}
    header = [f.name for f in spec.fields]
    name = f"data/{spec.filename}"
    return _table(bag / name, header, list(spec.primary_key), types, sha256[name])


def _table(path: Path, header: list[str], primary_key: list[str], types: dict[str, str], digest: str | None) -> _Table:
    positions = [header.index(name) for name in primary_key]
    converters = [KEY_TYPES[types[name]] for name in primary_key]
    parts = list(zip(positions, converters, strict=True))

    def key(cells: Sequence[str]) -> Key:
        return tuple(convert(cells[position]) for position, convert in parts)

    return _Table(header=header, key=key, key_positions=positions, path=path, digest=digest)


def _earlier_tables(earlier: EarlierRelease) -> dict[str, _Table]:
    """The earlier bag's tables by name (from its datapackage.json), each file checked against its manifest."""
    if earlier.bag is None:
        return {}
    try:
        manifest = _manifest(earlier.bag / "manifest-sha256.txt")
        package = json.loads((earlier.bag / "data" / "datapackage.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BundleError(f"release {earlier.release_id}'s bag cannot be read: {exc}") from None
    tables: dict[str, _Table] = {}
    for resource in package.get("resources", []):
        schema = resource.get("schema")
        if resource.get("profile") != "tabular-data-resource" or not schema:
            continue
        name, path = resource["name"], earlier.bag / "data" / resource["path"]
        recorded = manifest.get(f"data/{resource['path']}")
        if recorded is None or _sha256(path) != recorded:
            raise BundleError(
                f"release {earlier.release_id}'s data/{resource['path']} does not match its manifest: "
                "rebuild or restore that release before cutting this one"
            )
        fields = schema["fields"]
        tables[name] = _table(
            path,
            [f["name"] for f in fields],
            list(schema["primaryKey"]),
            {f["name"]: f["type"] for f in fields},
            recorded,
        )
    return tables


def _manifest(path: Path) -> dict[str, str]:
    digests = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        digests[name] = digest
    return digests


def _sha256(path: Path) -> str | None:
    try:
        with path.open("rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError:
        return None


def _keyed_rows(table: _Table | None) -> Iterator[tuple[Key, Sequence[str]]]:
    """(sort key, cells) of each row of a table's file, in its order; none for no table."""
    if table is None:
        return
    with gzip.open(table.path, "rt", encoding="utf-8", newline="") as stream:
        rows = read_csv_rows(stream)
        if next(rows, None) != table.header:
            raise BundleError(f"{table.path.name}'s header is not its schema's fields")
        key = table.key
        for cells in rows:
            yield key(cells), cells


def _table_changes(before: _Table | None, after: _Table | None) -> Iterator[tuple[str, str, str]]:
    """(key, change, changed columns) of one table, in key order: one merge of the two sorted files."""
    common = [name for name in after.header if name in before.header] if before and after else []
    old_at = [before.header.index(name) for name in common] if before else []
    new_at = [after.header.index(name) for name in common] if after else []
    same_columns = before is not None and after is not None and before.header == after.header
    olds, news = _keyed_rows(before), _keyed_rows(after)
    old, new = next(olds, None), next(news, None)
    try:
        while old is not None or new is not None:
            if new is None or (old is not None and old[0] < new[0]):
                yield before.key_text(old[1]), REMOVED, ""  # type: ignore[union-attr,index]
                old = next(olds, None)
            elif old is None or new[0] < old[0]:
                yield after.key_text(new[1]), ADDED, ""  # type: ignore[union-attr]
                new = next(news, None)
            else:
                old_cells, new_cells = old[1], new[1]
                if not (same_columns and old_cells == new_cells):
                    differing = [
                        n for n, i, j in zip(common, old_at, new_at, strict=True) if old_cells[i] != new_cells[j]
                    ]
                    if differing:
                        yield after.key_text(new_cells), CHANGED, " ".join(differing)  # type: ignore[union-attr]
                old, new = next(olds, None), next(news, None)
    except TypeError as exc:  # keys of another type in the earlier release (int against str)
        raise BundleError(f"the earlier release's keys cannot be compared with this one's: {exc}") from None
