"""write_bundle: rows in, files out (the tables, release.json, datapackage.json, the bag's tag files
and its archive); nothing validated beyond the rows, nothing installed, nothing made read-only."""

from __future__ import annotations

import datetime
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import MappingProxyType

from releases.bundle.bag import (
    BundleResult,
    FileInfo,
    bag_info_text,
    check_bag_info_extra,
    compute_release_id,
    write_bytes,
    write_gzip_csv_batches,
    write_tag_files,
    write_tarball,
)
from releases.bundle.changes import EarlierRelease, write_changes
from releases.bundle.citation import DATACITE_JSON, Publisher, citation_datacite
from releases.bundle.order import (
    Rows,
    cell_batches,
    merged_unique,
    ordered_unique,
    promised_in_key_order,
    report,
    reporting,
    sorted_runs,
)
from releases.bundle.package import (
    DATAPACKAGE_JSON,
    RELEASE_JSON,
    datapackage_descriptor,
    json_bytes,
    release_json_bytes,
)
from releases.bundle.table_format import (
    CODEC_BATCH_ROWS,
    BundleError,
    Progress,
    RowCodec,
    TableSpec,
    check_specs,
)

_EMPTY_BAG_INFO: Mapping[str, str] = MappingProxyType({})


def write_table_file(
    path: Path,
    spec: TableSpec,
    rows: Rows,
    *,
    chunk_rows: int,
    progress: Progress | None,
    spill_dir: Path,
) -> tuple[FileInfo, int]:
    """Write one table's gzip-compressed CSV at `path` (named ``data/<file name>`` in its info): rows
    streamed when promised in key order, else through the external sort (spills under `spill_dir`)."""
    codec = RowCodec(spec)
    header = [f.name for f in spec.fields]
    with ExitStack() as spills:
        cells = cell_batches(codec, rows, chunk_rows)
        if promised_in_key_order(rows):
            ordered = ordered_unique(codec, cells)
        else:
            runs = sorted_runs(codec, cells, chunk_rows, spill_dir, spills, progress)
            ordered = merged_unique(codec, runs, min(chunk_rows, CODEC_BATCH_ROWS))
        written = reporting(ordered, f"write {spec.name}", chunk_rows, progress)
        return write_gzip_csv_batches(path, f"data/{path.name}", header, written)


def write_bundle(
    *,
    tables: Sequence[tuple[TableSpec, Rows]],
    release_date: datetime.date,
    release_metadata: Mapping[str, object],
    package_name: str,
    package_title: str,
    output_dir: Path,
    bag_info_extra: Mapping[str, str] = _EMPTY_BAG_INFO,
    publisher: Publisher | None = None,
    changes_against: EarlierRelease | None = None,
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

    A table's rows are sorted on its primary key (an external merge sort), unless they come
    wrapped in :class:`KeyOrdered`: then they are written as they come, their order checked.

    ``progress`` gets ``("sort <table>", rows read)`` after each chunk (not for a
    :class:`KeyOrdered` table: nothing is sorted), ``("write <table>", rows written)``
    every ``chunk_rows`` rows and at the end of the table, and ``("write archive", total rows)``.

    With a ``publisher``, datapackage.json names the licence, the contributors and keywords,
    bag-info.txt the licence (``License``), and the bag carries the release's DataCite metadata as a tag file (``metadata/datacite.json``).
    With ``changes_against``, the bag carries the change list against that release as tag files
    (``metadata/changes.csv`` and its ``metadata/datapackage.json``: :mod:`releases.bundle.changes`).
    """
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    check_specs([spec for spec, _ in tables])
    release_json = release_json_bytes(release_metadata)
    check_bag_info_extra(bag_info_extra)
    output_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".writing-", dir=output_dir))
    try:
        bag = scratch / "bag"
        package_metadata = publisher.package_metadata() if publisher is not None else {}
        payload, row_counts = _write_payload(
            bag / "data",
            tables,
            release_json,
            package_name,
            package_title,
            package_metadata,
            chunk_rows,
            progress,
            scratch,
        )
        sha256 = {f.name: f.sha256 for f in payload}
        release_id = compute_release_id(release_date=release_date, payload_sha256=sha256)
        metadata: dict[str, bytes] = {}
        extra = dict(bag_info_extra)
        if publisher is not None:
            citation = publisher.release(release_id=release_id, release_date=release_date)
            metadata[DATACITE_JSON] = json_bytes(citation_datacite(citation))
            extra["License"] = f"{publisher.licence.spdx_id} {publisher.licence.url}"
        bag_info = bag_info_text(release_id, release_date, payload, extra)
        specs = [spec for spec, _ in tables]
        written = [] if changes_against is None else write_changes(bag, specs, sha256, changes_against)
        tag_files = write_tag_files(bag, payload, bag_info, metadata=metadata, written=written)
        report(progress, "write archive", sum(row_counts.values()))
        written_tar = scratch / "bag.tar.gz"
        tarball_info = write_tarball(written_tar, bag, release_id)
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
    tables: Sequence[tuple[TableSpec, Rows]],
    release_json: bytes,
    package_name: str,
    package_title: str,
    package_metadata: Mapping[str, object],
    chunk_rows: int,
    progress: Progress | None,
    spill_dir: Path,
) -> tuple[tuple[FileInfo, ...], dict[str, int]]:
    """Write the tables, release.json and datapackage.json; return their infos sorted by path."""
    data.mkdir(parents=True)
    tables_written: list[tuple[TableSpec, FileInfo]] = []
    row_counts: dict[str, int] = {}
    for spec, rows in tables:
        info, row_counts[spec.name] = write_table_file(
            data / spec.filename, spec, rows, chunk_rows=chunk_rows, progress=progress, spill_dir=spill_dir
        )
        tables_written.append((spec, info))
    release = write_bytes(data / RELEASE_JSON, f"data/{RELEASE_JSON}", release_json)
    package = {**datapackage_descriptor(package_name, package_title, tables_written, release), **package_metadata}
    descriptor = write_bytes(data / DATAPACKAGE_JSON, f"data/{DATAPACKAGE_JSON}", json_bytes(package))
    payload = [info for _, info in tables_written] + [release, descriptor]
    return tuple(sorted(payload, key=lambda f: f.name)), row_counts
