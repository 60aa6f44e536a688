"""What an import's plan holds (records.imports.plan makes it): each entry of the document and what
writing it means, the problems found, and the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models

from records.imports.document import Entry, ImportReport
from records.models import ImportSnapshot


@dataclass
class PlannedRecord:
    """One entry of the document and what writing it means."""

    entry: Entry
    record: models.Model  # a new record (values set), or the existing one as read
    created: bool
    values: dict[str, Any]  # the fields to write, references as records (existing or planned)
    many: dict[str, list[models.Model]]
    limitations: list[str] | None  # the protocol's limitations to set, None to leave them
    changed: list[str]  # what changes on an existing record (empty: nothing)
    wanted: dict[str, Any]  # the document's state of the record: the next snapshot
    snapshot: ImportSnapshot | None


@dataclass
class ImportPlan:
    title: str
    version: int  # the catalogue version the plan was read at
    records: list[PlannedRecord] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    report: ImportReport = field(default_factory=lambda: ImportReport(dry_run=True))

    def snapshot_needed(self, planned: PlannedRecord) -> bool:
        return planned.snapshot is None or planned.snapshot.values != planned.wanted
