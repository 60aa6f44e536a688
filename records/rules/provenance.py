"""Where an evaluation's number comes from, as the same-measurement rule (records.rules.evidence)
reads it: read from an evaluation's columns (`PROVENANCE_COLUMNS`) or from its source records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Provenance:
    """What the same-measurement rule reads of an evaluation: its source, the work and version that
    source is, and what it copies."""

    source_id: int | None
    work_id: int | None
    version: tuple[str, int]  # the source's order among its work's versions: (published date, arXiv version)
    repeats_id: int | None
    original_source_id: int | None
    original_work_id: int | None
    original_citation: str

    @property
    def is_copy(self) -> bool:
        return bool(self.repeats_id or self.original_source_id or self.original_citation)


#: The columns of an evaluation `provenance_from` reads, in its order (prefix them for a join).
PROVENANCE_COLUMNS = (
    "source_id",
    "source__work_id",
    "source__published_date",
    "source__arxiv_version",
    "repeats_id",
    "original_source_id",
    "original_source__work_id",
    "original_citation",
)


def version_order(published_date: str | None, arxiv_version: str | None) -> tuple[str, int]:
    return (published_date or "", int(arxiv_version[1:]) if arxiv_version else 0)


def provenance_from(row: Sequence[Any]) -> Provenance:
    """An evaluation's provenance from its PROVENANCE_COLUMNS."""
    source_id, work_id, published, arxiv_version, repeats_id, original_id, original_work_id, citation = row
    return Provenance(
        source_id, work_id, version_order(published, arxiv_version), repeats_id, original_id, original_work_id, citation
    )


def provenance_of(*, source: Any, repeats_id: int | None, original_source: Any, original_citation: str) -> Provenance:
    """An evaluation's provenance from its source records (instances)."""
    return Provenance(
        source.pk if source is not None else None,
        source.work_id if source is not None else None,
        version_order(source.published_date, source.arxiv_version) if source is not None else ("", 0),
        repeats_id,
        original_source.pk if original_source is not None else None,
        original_source.work_id if original_source is not None else None,
        original_citation or "",
    )
