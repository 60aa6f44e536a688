"""One export pass of a release build, on two cores: most of the results table in this process; every
other table, the derived memberships and the last part of the results (`CHILD_RESULTS_SHARE`, where
the database reads results in the bundle's key order: SQLite) in a forked child (`releases.forked`),
meanwhile; everything in this process, one after the other, where no child may be forked (inside a
transaction, or beside other threads).

Each side writes its own tables' files (`releases.bundle.write_table_file`: the same bytes wherever
they are written) and stores its own memberships (`releases.memberships.MembershipWriter`, on a
thread of each process). The child serialises its part of the results first, as CSV text that this
process compresses after its own rows into the one deflate stream (`releases.bundle.RowsThenText`:
the key order checked where the two meet), then writes the other tables, whose files the writer
moves into the bag (`releases.bundle.TableWrittenElsewhere`); this side's membership writer takes
over the child's counts and comparisons, so that publishing sees one set. Both sides read the
catalogue between the pass's two watermark readings, so a change during either side's reading
discards the pass (`releases.build._export`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import connection

from records import models as m
from releases import exporter
from releases.bundle import (
    BundleResult,
    FileInfo,
    Rows,
    RowsThenText,
    TableRows,
    TableSpec,
    TableWrittenElsewhere,
    write_csv_text_file,
    write_table_file,
)
from releases.forked import ForkedCall, Send, may_fork
from releases.memberships import MembershipWriter
from releases.models import Release
from releases.tables import MODEL_EVALUATION_MATRIX

logger = logging.getLogger(__name__)

MATRIX = MODEL_EVALUATION_MATRIX.name  # the table this process writes (most of it)
CHILD_RESULTS_SHARE = 0.35  # of the results, the child's (it has the other tables besides; tuned on the bench)
SPLIT_FROM_RESULTS = 20_000  # fewer results than this: the child writes none of them
RESULTS_TEXT = "model_evaluation_matrix.part.csv"


def _results_split(*, forking: bool) -> str | None:
    """The first result key of the child's part of the results, or None (no split: no child, a
    database whose key order is not the bundle's, or too few results to be worth it)."""
    if not forking or not exporter.reads_in_key_order():
        return None
    count = m.Result.objects.count()
    if count < SPLIT_FROM_RESULTS:
        return None
    keys = m.Result.objects.order_by("stable_id").values_list("stable_id", flat=True)
    return keys[int(count * (1 - CHILD_RESULTS_SHARE))]


def _other_side(
    *, release_pk: int, token: str, previous: Release | None, folder: Path, chunk_size: int, split: str | None
) -> Callable[[Send], dict[str, Any]]:
    """The child's work: the results from `split` on as CSV text (announced by `send` when written),
    then the other tables' files in `folder`, and their memberships and the derived ones stored;
    returns the files' infos and row counts, the memberships' counts and comparisons."""

    def work(send: Send) -> dict[str, Any]:
        memberships = MembershipWriter(
            release_pk=release_pk, token=token, previous=previous, threaded=not connection.in_atomic_block
        )
        try:
            folder.mkdir()
            tables: dict[str, list[object]] = {}
            if split is not None:
                [(spec, rows)] = [
                    (spec, rows)
                    for spec, rows in exporter.bundle_tables(
                        chunk_size=chunk_size, memberships=memberships, results=(split, None)
                    )
                    if spec.name == MATRIX
                ]
                count, first = write_csv_text_file(folder / RESULTS_TEXT, spec, rows, chunk_rows=chunk_size)
                send([count, None if first is None else list(first)])
            for spec, rows in exporter.bundle_tables(chunk_size=chunk_size, memberships=memberships):
                if spec.name == MATRIX:
                    continue
                info, count = write_table_file(
                    folder / spec.filename, spec, rows, chunk_rows=chunk_size, progress=None, spill_dir=folder
                )
                tables[spec.name] = [info.name, info.bytes, info.sha256, info.sha512, count]
            for record_type, stable_id, digest in exporter.derived_memberships(chunk_size=chunk_size):
                memberships.add(record_type, stable_id, digest)
            memberships.close()
        except BaseException:
            memberships.abandon()
            raise
        return {"tables": tables, "counts": memberships.counts, "matches": memberships.matches}

    return work


def export_pass(
    *,
    release: Release,
    token: str,
    previous: Release | None,
    output: Path,
    folder: Path,
    chunk_size: int,
    progress: Callable[[str, int], None] | None,
) -> tuple[BundleResult, MembershipWriter]:
    """Write the bundle under `output` (the child's files first in `folder`) and store its memberships;
    the membership writer returned holds both sides' counts and comparisons."""
    forking = may_fork()
    split = _results_split(forking=forking)
    work = _other_side(
        release_pk=release.pk, token=token, previous=previous, folder=folder, chunk_size=chunk_size, split=split
    )
    forked = ForkedCall(work) if forking else None  # before this process starts any thread
    logger.info(
        "release %s: export pass %s",
        release.pk,
        "in this process alone"
        if forked is None
        else f"in two processes (child {forked.pid}; its results from {split})",
    )

    @functools.cache
    def other_side() -> dict[str, Any]:
        return forked.result() if forked is not None else work(lambda message: None)

    def written_elsewhere(name: str) -> TableWrittenElsewhere:
        def wait() -> tuple[Path, FileInfo, int]:
            file_name, size, sha256, sha512, count = other_side()["tables"][name]
            return folder / Path(file_name).name, FileInfo(file_name, size, sha256, sha512), count

        return TableWrittenElsewhere(wait=wait)

    def results_after(rows: Rows) -> RowsThenText:
        def wait() -> tuple[Path, int, tuple[object, ...] | None]:
            assert forked is not None  # a split is made only for a child
            count, first = forked.receive()
            return folder / RESULTS_TEXT, count, None if first is None else tuple(first)

        return RowsThenText(rows=rows, wait=wait)

    memberships = MembershipWriter(
        release_pk=release.pk, token=token, previous=previous, threaded=not connection.in_atomic_block
    )
    try:
        tables: list[tuple[TableSpec, TableRows]] = []
        for spec, rows in exporter.bundle_tables(chunk_size=chunk_size, memberships=memberships, results=(None, split)):
            if spec.name != MATRIX:
                tables.append((spec, written_elsewhere(spec.name)))
            else:
                tables.append((spec, rows if split is None else results_after(rows)))
        result = exporter.bundle_write(
            output_dir=output,
            release_date=release.release_date,
            chunk_size=chunk_size,
            progress=progress,
            tables=tables,
        )
        memberships.close()
        other = other_side()
    except BaseException:
        if forked is not None:
            forked.cancel()
        memberships.abandon()
        raise
    memberships.absorb(counts=other["counts"], matches={t: tuple(m) for t, m in other["matches"].items()})
    return result, memberships
