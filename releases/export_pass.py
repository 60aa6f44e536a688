"""One export pass of a release build, on two cores: the results table (most of the rows) in this
process, every other table and the derived memberships in a forked child (`releases.forked`),
meanwhile; one after the other where no child may be forked (inside a transaction, or beside other
threads).

Each side writes its own tables' files (`releases.bundle.write_table_file`: the same bytes wherever
they are written) and stores its own memberships (`releases.memberships.MembershipWriter`: the
results' on a thread of this process, the others' in the child); the writer moves the child's files
into the bag (`releases.bundle.TableWrittenElsewhere`), and this side's membership writer takes over
the child's counts and comparisons, so that publishing sees one set. Both sides read the catalogue
between the pass's two watermark readings, so a change during either side's reading discards the
pass (`releases.build._export`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import connection

from releases import exporter
from releases.bundle import BundleResult, FileInfo, TableWrittenElsewhere, write_table_file
from releases.forked import ForkedCall, may_fork
from releases.memberships import MembershipWriter
from releases.models import Release
from releases.tables import MODEL_EVALUATION_MATRIX, TABLES

logger = logging.getLogger(__name__)

HERE = frozenset({MODEL_EVALUATION_MATRIX.name})  # the tables this process writes


def _other_side(
    *, release_pk: int, token: str, previous: Release | None, folder: Path, chunk_size: int
) -> Callable[[], dict[str, Any]]:
    """The child's work: the other tables' files in `folder`, their memberships and the derived ones
    stored; returns the files' infos and row counts, the memberships' counts and comparisons."""

    def work() -> dict[str, Any]:
        memberships = MembershipWriter(release_pk=release_pk, token=token, previous=previous, threaded=False)
        try:
            folder.mkdir()
            tables: dict[str, list[object]] = {}
            for spec, rows in exporter.bundle_tables(chunk_size=chunk_size, memberships=memberships):
                if spec.name in HERE:
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
    work = _other_side(release_pk=release.pk, token=token, previous=previous, folder=folder, chunk_size=chunk_size)
    forked = ForkedCall(work) if may_fork() else None  # before this process starts any thread
    logger.info(
        "release %s: export pass %s",
        release.pk,
        f"in two processes (child {forked.pid})" if forked is not None else "in this process alone",
    )
    done: list[dict[str, Any]] = []

    def other_side() -> dict[str, Any]:
        if not done:
            done.append(forked.result() if forked is not None else work())
        return done[0]

    def written_elsewhere(name: str) -> TableWrittenElsewhere:
        def wait() -> tuple[Path, FileInfo, int]:
            file_name, size, sha256, sha512, count = other_side()["tables"][name]
            return folder / Path(file_name).name, FileInfo(file_name, size, sha256, sha512), count

        return TableWrittenElsewhere(wait=wait)

    memberships = MembershipWriter(
        release_pk=release.pk, token=token, previous=previous, threaded=not connection.in_atomic_block
    )
    try:
        result = exporter.bundle_write(
            output_dir=output,
            release_date=release.release_date,
            chunk_size=chunk_size,
            memberships=memberships,
            progress=progress,
            written_elsewhere={spec.name: written_elsewhere(spec.name) for spec in TABLES if spec.name not in HERE},
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
