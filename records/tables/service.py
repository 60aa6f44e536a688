"""`table_draft`: a pasted table read, mapped, turned into an import document and dry-run, with
every problem pinned to its cell, row or column; `table_draft_import` queues the checked document
as an ordinary import job. The admin's "New table from a paper", `manage.py draft_table` and
`POST /api/v1/table-drafts/` all call these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from common.errors import Invalid
from common.types import Actor
from records.import_jobs import import_job_enqueue
from records.imports import ImportInvalid, records_import
from records.models import Configuration, GenomicModel, ImportJob, Source
from records.tables.draft import TABLE, Drafted, Pin, Problem, table_document
from records.tables.grid import Grid, grid_parse
from records.tables.matching import model_names, task_names
from records.tables.request import DraftRequest
from records.works import source_find

DRAFT_FORMAT = "benchmark-evidence-table-draft-answer"


@dataclass
class TableDraft:
    request: DraftRequest
    grid: Grid
    drafted: Drafted
    source: Source | None  # the catalogued source, or None for a new one the document holds
    report: dict[str, Any] | None  # the dry run's report, when it passed

    @property
    def document(self) -> dict[str, Any]:
        return self.drafted.document

    @property
    def problems(self) -> list[Problem]:
        return self.drafted.problems

    @property
    def values(self) -> int:
        return len(self.drafted.document.get("evaluations", []))

    @property
    def choices(self) -> int:
        """How many labels the curator mapped by hand (the rest matched the catalogue)."""
        return sum(1 for item in [*self.drafted.columns, *self.drafted.rows] if item is not None and item.manual)

    def as_dict(self) -> dict[str, Any]:
        """The answer of the API and the command: the document, the grid as read, every problem."""
        drafted = self.drafted
        return {
            "format": DRAFT_FORMAT,
            "grid_format": self.grid.format,
            "values": self.values,
            "choices": self.choices,
            "problems": [problem.as_dict() for problem in self.problems],
            "columns": [_label_dict(item) for item in drafted.columns],
            "rows": [_label_dict(item) if item is not None else {"heading": True} for item in drafted.rows],
            "document": self.document,
            "report": self.report,
        }


def _label_dict(item) -> dict[str, Any]:
    return {
        "index": item.index,
        "label": item.label,
        "names": item.names,
        "chosen": item.chosen,
        "manual": item.manual,
        "candidates": [{"stable_id": c.stable_id, "name": c.name, "score": c.score} for c in item.match.candidates],
    }


def _source_of(request: DraftRequest) -> tuple[Source | None, str, dict[str, Any] | None, list[str]]:
    """(catalogued source, its stable id, the new source's entry, problems) of the request."""
    if isinstance(request.source, dict):
        stable_id = str(request.source.get("stable_id") or "")
        entry = dict(request.source)
        if request.work and not entry.get("work"):
            entry["work"] = request.work.get("stable_id", "")
        return None, stable_id, entry, [] if stable_id else ["the new source needs its stable_id"]
    found = source_find(identifier=request.source)
    if found is None:
        return (
            None,
            "",
            None,
            [f"no catalogued source is {request.source!r} (by stable id, DOI, arXiv id or URL): give a new source"],
        )
    return found, found.stable_id, None, []


def table_draft(*, request: DraftRequest, actor: Actor, check: bool = True) -> TableDraft:
    """The draft of `request`'s table: the grid, the document and every problem; with `check`,
    the document is dry-run as an import (reads only, nothing written) and its errors are pinned
    to the cells, rows and columns they come from."""
    source, source_id, source_entry, source_problems = _source_of(request)
    grid = grid_parse(text=request.text, format=request.format, header_rows=request.header_rows)
    drafted = table_document(
        request=request,
        grid=grid,
        source_id=source_id or "new-source",
        source=source_entry,
        models=model_names(),
        tasks=task_names(suite=request.suite),
        catalogued=_catalogued(source_id),
    )
    drafted.problems[:0] = [Problem(TABLE, message, "source") for message in source_problems]
    report = None
    if check and not source_problems and drafted.document["evaluations"]:
        try:
            report = records_import(document=drafted.document, actor=actor, dry_run=True).as_dict()
        except ImportInvalid as invalid:
            drafted.problems.extend(
                Problem(_pinned(drafted, e["path"]), e["message"], e["path"]) for e in invalid.errors
            )
    if not drafted.document["evaluations"] and not drafted.problems:
        drafted.problems.append(Problem(TABLE, "the table holds no value to import"))
    return TableDraft(request=request, grid=grid, drafted=drafted, source=source, report=report)


def _catalogued(source_id: str) -> dict[str, str]:
    """What a draft refers to rather than writes again: the catalogue's models (stable id -> name:
    a new model of the same id and name was made by an earlier table) and the configurations of
    this source (stable id -> "")."""
    configurations = Configuration.objects.filter(source__stable_id=source_id).values_list("stable_id", flat=True)
    return {**dict(GenomicModel.objects.values_list("stable_id", "name")), **dict.fromkeys(configurations, "")}


def _pinned(drafted: Drafted, path: str) -> Pin:
    """The grid place a document path comes from (its longest known prefix), or the table."""
    for end in range(len(path), 0, -1):
        if path[end - 1] == "]" and path[:end] in drafted.paths:
            return drafted.paths[path[:end]]
    return TABLE


def table_draft_import(*, request: DraftRequest, actor: Actor) -> ImportJob:
    """Queue the import of the table's document as an ordinary import job (its records proposed),
    once the draft has no problem; Invalid names the first one otherwise."""
    draft = table_draft(request=request, actor=actor)
    if draft.problems:
        first = draft.problems[0]
        raise Invalid(f"{len(draft.problems)} problem(s) to fix first; the first: {first.message}", field="table")
    return import_job_enqueue(document_text=json.dumps(draft.document, ensure_ascii=False), actor=actor, dry_run=False)
