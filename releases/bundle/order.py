"""The order of a table's rows: rows a caller gives in primary-key order are streamed (the promise
checked), other rows go through an external merge sort on the primary key (memory bounded by a
chunk). Rows travel in batches of serialised cells, so that nothing costs a Python call per row
that a batch can pay for once."""

from __future__ import annotations

import heapq
import itertools
import operator
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from operator import itemgetter
from pathlib import Path

from releases.bundle.table_format import (
    CODEC_BATCH_ROWS,
    Cells,
    Key,
    Progress,
    RowCodec,
    read_csv_rows,
    write_csv_rows,
)

Batch = list[Cells]


class KeyOrdered:
    """Rows that their source promises in primary-key order: strings in code point order (UTF-8 byte
    order, e.g. SQLite's BINARY collation or PostgreSQL's "C"), integers by value.

    The writer streams them to the file a chunk at a time instead of sorting them (no spill, no merge)
    and checks the promise as it goes: a key not greater than the one before is a :class:`BundleError`
    (a repeated key, or rows out of order), so a broken promise never gives a differently sorted file.
    """

    def __init__(self, rows: Iterable[Mapping[str, object]]) -> None:
        self.rows = rows

    def __iter__(self) -> Iterator[Mapping[str, object]]:
        return iter(self.rows)


class ColumnChunks:
    """Rows given a chunk at a time as columns: each chunk maps every field of the table to its values
    (lists of one length). The writer serialises a chunk column by column without a mapping per row
    (`RowCodec.cells_of_columns`: the same cells). ``key_ordered``: the rows come in primary-key
    order, as :class:`KeyOrdered` promises (checked the same way); otherwise they are sorted.
    """

    def __init__(self, chunks: Iterable[Mapping[str, Sequence[object]]], *, key_ordered: bool) -> None:
        self.chunks = chunks
        self.key_ordered = key_ordered

    def __iter__(self) -> Iterator[Mapping[str, Sequence[object]]]:
        return iter(self.chunks)


Rows = Iterable[Mapping[str, object]] | ColumnChunks


def promised_in_key_order(rows: Rows) -> bool:
    return isinstance(rows, KeyOrdered) or (isinstance(rows, ColumnChunks) and rows.key_ordered)


def batches(rows: Iterable[Mapping[str, object]], size: int) -> Iterator[list[Mapping[str, object]]]:
    iterator = iter(rows)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def cell_batches(codec: RowCodec, rows: Rows, chunk_rows: int) -> Iterator[Batch]:
    """The rows checked and serialised, a batch at a time (a chunk of columns, or up to CODEC_BATCH_ROWS rows)."""
    if isinstance(rows, ColumnChunks):
        for columns in rows:
            yield codec.cells_of_columns(columns)
        return
    for batch in batches(rows, min(chunk_rows, CODEC_BATCH_ROWS)):
        yield codec.cells_many(batch)


def ordered_unique(codec: RowCodec, cells: Iterable[Batch]) -> Iterator[Batch]:
    """Batches of key-ordered rows passed on, refusing a key out of order or seen twice."""
    previous: Key | None = None
    for batch in cells:
        if not batch:
            continue
        keys = codec.keys(batch)
        if not all(map(operator.lt, keys, keys[1:])) or (previous is not None and keys[0] <= previous):
            _refuse_first_out_of_order(codec, keys, previous)
        previous = keys[-1]
        yield batch


def _refuse_first_out_of_order(codec: RowCodec, keys: list[Key], previous: Key | None) -> None:
    for key in keys:
        if previous is not None and key <= previous:
            if key == previous:
                raise codec.error("duplicate primary key", key, ",".join(codec.spec.primary_key))
            raise codec.error(f"rows promised in key order are not: this key follows {previous!r}", key, None)
        previous = key


def sorted_runs(
    codec: RowCodec,
    cells: Iterable[Batch],
    chunk_rows: int,
    spill_dir: Path,
    stack: ExitStack,
    progress: Progress | None,
) -> list[Iterable[tuple[Key, Cells]]]:
    """First pass of the external sort: sorted runs of at most ``chunk_rows`` rows.

    Every full run is spilled to an anonymous temporary file (in the bundle's dialect), so memory
    holds at most one chunk; the last, partial one stays in memory.
    """
    runs: list[Iterable[tuple[Key, Cells]]] = []
    chunk: list[tuple[Key, Cells]] = []
    seen = 0
    for batch in cells:
        chunk += zip(codec.keys(batch), batch, strict=True)
        seen += len(batch)
        while len(chunk) >= chunk_rows:
            runs.append(_spill(chunk[:chunk_rows], codec, spill_dir, stack))
            chunk = chunk[chunk_rows:]
            report(progress, f"sort {codec.spec.name}", seen - len(chunk))
    chunk.sort(key=itemgetter(0))
    report(progress, f"sort {codec.spec.name}", seen)
    runs.append(chunk)
    return runs


def _spill(
    chunk: list[tuple[Key, Cells]], codec: RowCodec, spill_dir: Path, stack: ExitStack
) -> Iterator[tuple[Key, Cells]]:
    chunk.sort(key=itemgetter(0))
    spill = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", newline="", dir=spill_dir))
    write_csv_rows(spill, (cells for _, cells in chunk))
    spill.seek(0)
    return ((codec.key(cells), cells) for cells in read_csv_rows(spill))


def merged_unique(codec: RowCodec, runs: list[Iterable[tuple[Key, Cells]]], batch_rows: int) -> Iterator[Batch]:
    """Second pass: merge the sorted runs into batches, refusing a primary key seen twice."""
    previous: Key | None = None
    batch: Batch = []
    for key, cells in heapq.merge(*runs, key=itemgetter(0)):
        if key == previous:
            raise codec.error("duplicate primary key", key, ",".join(codec.spec.primary_key))
        previous = key
        batch.append(cells)
        if len(batch) >= batch_rows:
            yield batch
            batch = []
    if batch:
        yield batch


def report(progress: Progress | None, stage: str, rows: int) -> None:
    if progress is not None:
        progress(stage, rows)


def reporting(cells: Iterable[Batch], stage: str, every: int, progress: Progress | None) -> Iterator[Batch]:
    """The batches passed on, reporting ``(stage, rows so far)`` each time another ``every`` rows have
    passed, and at the end."""
    count = 0
    for batch in cells:
        yield batch
        before, count = count, count + len(batch)
        if count // every > before // every:
            report(progress, stage, count)
    report(progress, stage, count)
