"""A pasted table turned into an import document (docs/reference/import-format.md), cell by cell.

Each value cell becomes one evaluation with one result: its locator ("Table 2, row 'X', column
'Y'") and its quote (the header and the row as printed, cells joined by " | ") are generated, the
printed digits and spread are kept as printed. The models' axis (rows, or columns for a table
with models across) becomes configurations of matched or new models; the tasks' axis becomes
catalogued tasks or new ones in a suite of the table's own; columns sharing a metric share one
protocol. `paths` remembers which grid cell, row or column each document path came from, so an
import error can be pinned where the curator sees it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from django.utils.text import slugify

from records.imports import FORMAT_NAME, FORMAT_VERSION
from records.rules.units import scale_read
from records.tables.cells import Cell, cell_read, looks_like_values, unmarked
from records.tables.grid import Grid
from records.tables.matching import Candidate, Match, Names
from records.tables.request import DraftRequest, metric_problems

ID_LENGTH = 150
NEW, SKIP = "new", "skip"


@dataclass(frozen=True)
class Pin:
    """Where in the grid something is: a cell (row and column), a whole row, a whole column, or the table."""

    row: int | None = None  # index into the grid's body rows
    column: int | None = None  # index into the grid's columns (0: the row labels)

    @property
    def where(self) -> str:
        if self.row is not None and self.column is not None:
            return "cell"
        return "row" if self.row is not None else "column" if self.column is not None else "table"


TABLE = Pin()


@dataclass
class Problem:
    pin: Pin
    message: str
    path: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "where": self.pin.where,
            "row": self.pin.row,
            "column": self.pin.column,
            "path": self.path,
            "message": self.message,
        }


@dataclass
class Label:
    """One row or column label: what it names (a model or a task), the match, and the choice taken."""

    index: int
    label: str
    names: str  # "model" or "task"
    match: Match
    chosen: str = ""  # a stable id, NEW, SKIP, or "" (nothing chosen yet)
    manual: bool = False  # the curator chose (the request maps this label)
    stable_id: str = ""  # what the document names (a catalogued id or the new record's)
    configuration: str = ""  # a model's configuration in the document


@dataclass
class DraftCell:
    cell: Cell
    locator: str = ""
    quote: str = ""
    evaluation: str = ""  # the evaluation's stable id


@dataclass
class Drafted:
    document: dict[str, Any]
    columns: list[Label]
    rows: list[Label | None]  # None: a section heading row (words only)
    cells: dict[tuple[int, int], DraftCell]
    problems: list[Problem]
    paths: dict[str, Pin] = field(default_factory=dict)


def stable_id(*parts: str, limit: int = ID_LENGTH) -> str:
    """A slug of the parts, cut with a digest of the whole where it would pass `limit`."""
    text = "-".join(part for part in (slugify(unmarked(p)) for p in parts) if part)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 9].rstrip('-')}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def table_document(
    *,
    request: DraftRequest,
    grid: Grid,
    source_id: str,
    source: dict[str, Any] | None,
    models: Names,
    tasks: Names,
    catalogued: dict[str, str] | None = None,
) -> Drafted:
    """The import document of `request`'s table, and every problem pinned to its cell, row or column."""
    problems: list[Problem] = list(Problem(TABLE, message) for message in grid.problems)
    labels = request.header if request.header is not None else grid.column_labels()
    if request.header is not None and len(request.header) != grid.width:
        problems.append(Problem(TABLE, f"the header names {len(request.header)} columns, the paste has {grid.width}"))
    model_axis, task_axis = (models, "model"), (tasks, "task")
    column_axis, row_axis = (model_axis, task_axis) if request.models_in == "columns" else (task_axis, model_axis)
    columns = [_label(index, label, request.columns.get(label), *column_axis) for index, label in enumerate(labels)][1:]
    rows: list[Label | None] = []
    for number, row in enumerate(grid.body):
        label = unmarked(row.cells[0]) if row.cells else ""
        if not looks_like_values(row.cells[1:]):
            rows.append(None)  # a section heading ("Histone markers") or a note under the table
            continue
        rows.append(_label(number, label, request.rows.get(label), *row_axis))
        if len(row.cells) != grid.width and rows[-1].chosen != SKIP:
            problems.append(
                Problem(
                    Pin(row=number),
                    f"line {row.line} has {len(row.cells)} cells, the header {grid.width}: fix the paste or the header",
                )
            )
    builder = _Builder(
        request=request, source_id=source_id, labels=labels, suite_of=tasks.suites, catalogued=catalogued or {}
    )
    for axis, pin_of in (
        (columns, lambda i: Pin(column=i)),
        ([r for r in rows if r is not None], lambda i: Pin(row=i)),
    ):
        for item in axis:
            problems.extend(Problem(pin_of(item.index), message) for message in builder.resolve(item))
    cells: dict[tuple[int, int], DraftCell] = {}
    for row_label, row in zip(rows, grid.body, strict=True):
        if row_label is None or len(row.cells) != grid.width:
            continue
        for column in columns:
            cell = cell_read(row.cells[column.index])
            where = Pin(row=row_label.index, column=column.index)
            model, task = (column, row_label) if request.models_in == "columns" else (row_label, column)
            drafted = cells[(row_label.index, column.index)] = DraftCell(cell=cell)
            if cell.missing or SKIP in (model.chosen, task.chosen):
                continue
            if cell.problem:
                problems.append(Problem(where, cell.problem))
                continue
            if model.stable_id and task.stable_id:
                problem = builder.evaluation(
                    drafted,
                    model=model,
                    task=task,
                    row=row,
                    row_label=row_label.label,
                    column_label=column.label,
                    pin=where,
                )
                if problem:
                    problems.append(Problem(where, problem))
    document = builder.document(source=source)
    problems.extend(builder.problems)
    return Drafted(document=document, columns=columns, rows=rows, cells=cells, problems=problems, paths=builder.paths)


def _label(index: int, label: str, choice: dict[str, Any] | None, names: Names, kind: str) -> Label:
    item = Label(index=index, label=label, names=kind, match=names.match(label) if label else Match())
    if choice:
        item.manual = True
        if choice.get("skip"):
            item.chosen = SKIP
        elif choice.get(kind) == NEW or f"new_{kind}" in choice:
            item.chosen = NEW
        elif choice.get(kind):
            item.chosen = choice[kind]
            if item.chosen not in {c.stable_id for c in item.match.candidates}:
                item.match.candidates.insert(
                    0, Candidate(item.chosen, names.titles.get(item.chosen, "(not catalogued)"), 0)
                )
    if not item.chosen and item.match.chosen is not None:
        item.chosen = item.match.chosen.stable_id
    return item


class _Builder:
    """The document's sections, filled label by label and cell by cell."""

    def __init__(
        self,
        *,
        request: DraftRequest,
        source_id: str,
        labels: list[str],
        suite_of: dict[str, str],
        catalogued: dict[str, str],
    ) -> None:
        self.request = request
        self.source_id = source_id
        self.prefix = stable_id(source_id, stable_id(request.table, limit=40), limit=100)
        self.labels = labels
        self.header = " | ".join(labels[1:] if labels and not labels[0] else labels)
        self.models: list[dict] = []
        self.aliases: list[dict] = []
        self.configurations: dict[str, dict] = {}
        self.tasks: list[dict] = []
        self.protocols: dict[tuple, dict] = {}
        self.evaluations: list[dict] = []
        self.paths: dict[str, Pin] = {}
        self.problems: list[Problem] = []
        self.bold = 0
        self.task_protocol: dict[str, tuple] = {}
        self.suite_of = suite_of
        self.catalogued = catalogued  # models (id -> name) and this source's configurations held already

    # -- labels -----------------------------------------------------------------------------------

    def resolve(self, item: Label) -> list[str]:
        if item.chosen == SKIP:
            return []
        if not item.chosen:
            offered = ", ".join(f"{c.name!r} ({c.score})" for c in item.match.candidates[:3])
            what = "model" if item.names == "model" else "task"
            return [
                f"unknown {what} {item.label!r}: no catalogued {what} has this name"
                + (f"; closest {offered}" if offered else "")
                + f"; choose one, or a new {what}"
            ]
        choice = self._choice(item)
        return self._model(item, choice) if item.names == "model" else self._task(item, choice)

    def _choice(self, item: Label) -> dict[str, Any]:
        """What the request chose for this label (on the axis it is on)."""
        return (self.request.rows if self._rows_name(item) else self.request.columns).get(item.label) or {}

    def _rows_name(self, item: Label) -> bool:
        return (item.names == "model") == (self.request.models_in == "rows")

    def _pin(self, item: Label) -> Pin:
        return Pin(row=item.index) if self._rows_name(item) else Pin(column=item.index)

    def _model(self, item: Label, choice: dict[str, Any]) -> list[str]:
        if item.chosen == NEW:
            new = choice.get("new_model") or {}
            item.stable_id = new.get("stable_id") or stable_id(item.label)
        if item.chosen == NEW and self.catalogued.get(item.stable_id) != (new.get("name") or item.label):
            self.paths[f"models[{len(self.models)}]"] = self._pin(item)
            self.models.append(
                {
                    "stable_id": item.stable_id,
                    "name": new.get("name") or item.label,
                    "family": new.get("family", ""),
                    "parameter_count": new.get("parameter_count"),
                    "public_id": new.get("public_id", ""),
                    "description": new.get("description", ""),
                }  # fmt: skip
            )
        elif item.chosen != NEW:
            item.stable_id = item.chosen
            unmatched = item.match.chosen is None or item.match.chosen.stable_id != item.chosen
            if unmatched and choice.get("alias", True):  # a generic name ("DNABERT") stays no alias
                self._alias(item, choice)
        configuration = choice.get("configuration")
        if configuration:
            item.configuration = configuration
            return []
        key = stable_id(self.source_id, item.label)
        item.configuration = key
        if key not in self.configurations and key not in self.catalogued:  # another table of the source made it
            self.paths[f"configurations[{len(self.configurations)}]"] = self._pin(item)
            self.configurations[key] = {
                "stable_id": key, "name": item.label, "short_name": item.label, "family": "",
                "parameter_count": None, "method": choice.get("method", ""), "description": choice.get("reason", ""),
                "source": self.source_id,
                "model": item.stable_id,
            }  # fmt: skip
        return []

    def _alias(self, item: Label, choice: dict[str, Any]) -> None:
        """The curator's choice of a model for a printed name nothing matched exactly, kept as an alias."""
        reason = (
            choice.get("reason")
            or f"The curator mapped {item.label!r} of {self.request.table} to this model in the table draft."
        )
        self.paths[f"model_aliases[{len(self.aliases)}]"] = self._pin(item)
        self.aliases.append(
            {
                "stable_id": stable_id("alias", item.chosen, self.source_id, item.label),
                "model": item.chosen,
                "alias": item.label,
                "source": self.source_id,
                "locator": f"{self.request.table}, {self._axis_word(item)} {item.label!r}",
                "basis": "inferred",
                "quote": "",
                "reason": reason,
            }  # fmt: skip
        )

    def _axis_word(self, item: Label) -> str:
        return "row" if self._rows_name(item) else "column"

    def _task(self, item: Label, choice: dict[str, Any]) -> list[str]:
        metric = {**self.request.metric, **(choice.get("metric") or {})}
        problems = metric_problems(metric)
        if item.chosen == NEW:
            new = choice.get("new_task") or {}
            item.stable_id = new.get("stable_id") or stable_id(self.prefix, item.label)
            self.paths[f"datasets[0].tasks[{len(self.tasks)}]"] = self._pin(item)
            self.tasks.append(
                {
                    "stable_id": item.stable_id,
                    "name": new.get("name") or item.label,
                    "task_key": new.get("task_key") or item.label,
                    "position": len(self.tasks) + 1,
                    "source": self.source_id,
                    "source_locator": f"{self.request.table}, {self._axis_word(item)} {item.label!r}",
                }  # fmt: skip
            )
        else:
            item.stable_id = item.chosen
        if not problems:
            key = tuple(sorted(metric.items()))
            self.task_protocol[item.stable_id] = key
            self.protocols.setdefault(key, {"metric": metric, "tasks": [], "pins": []})
            self.protocols[key]["tasks"].append(item.stable_id)
            self.protocols[key]["pins"].append(self._pin(item))
        return problems

    # -- cells ------------------------------------------------------------------------------------

    def evaluation(
        self, drafted: DraftCell, *, model: Label, task: Label, row, row_label: str, column_label: str, pin: Pin
    ) -> str:
        key = self.task_protocol.get(task.stable_id)
        if key is None:
            return ""  # its column's metric is refused, and said so there
        cell = drafted.cell
        request = self.request
        if cell.spread and not request.uncertainty_kind:
            return f"{cell.printed!r} prints a spread: say what the table's spreads are (uncertainty kind: sd, se, ci or range)"
        choice = self._choice(model)
        protocol = self._protocol_id(key)
        evaluation = stable_id(self.prefix, model.label, task.label, limit=ID_LENGTH - 6)
        drafted.evaluation = evaluation
        drafted.locator = f"{request.table}, row {row_label!r}, column {column_label!r}"
        drafted.quote = f"{self.header}\n{' | '.join(unmarked(text) for text in row.cells)}"
        self.bold += cell.bold or cell.underlined
        measured_by = choice.get("measured_by") or request.measured_by
        entry: dict[str, Any] = {
            "stable_id": evaluation,
            "title": f"{model.label} on {task.label} ({request.table})",
            "protocol": protocol,
            "configuration": model.configuration,
            "dataset": task.stable_id,
            "measured_by": measured_by,
            "measured_by_name": (choice.get("measured_by_name") or request.measured_by_name)
            if measured_by == "third_party"
            else "",
            "source": self.source_id,
            "source_locator": drafted.locator,
            "quote": drafted.quote,
            "reading_method": request.reading_method,
            "uncertainty": request.uncertainty if cell.spread else "",
            "results": [
                {
                    "stable_id": f"{evaluation}-value",
                    "value": cell.value,
                    "unit": dict(key)["unit"],
                    "printed_value": cell.printed,
                    "uncertainty_kind": request.uncertainty_kind if cell.spread else "",
                    "uncertainty_value": cell.spread or None,
                    "num_runs": request.num_runs,
                }
            ],
        }
        for name in ("original_source", "original_citation", "original_locator"):
            if choice.get(name):
                entry[name] = choice[name]
        self.paths[f"evaluations[{len(self.evaluations)}]"] = pin
        self.evaluations.append(entry)
        return ""

    def _protocol_id(self, key: tuple) -> str:
        """The protocol a metric's values go under: the request's catalogued one, the id it gives
        (a table of one metric), or `<source>-<table>-<short name>` (and the scale, where two
        metrics of the table share a short name)."""
        group = self.protocols[key]
        if "stable_id" in group:
            return group["stable_id"]
        given = self.request.protocol
        if isinstance(given, str) and given:
            group["stable_id"], group["catalogued"] = given, True
            return given
        metric = group["metric"]
        named = given.get("stable_id") if isinstance(given, dict) else ""
        if named and len(self.protocols) == 1:
            group["stable_id"] = named
            return named
        same_name = [k for k in self.protocols if dict(k).get("short_name") == metric.get("short_name")]
        scale = (
            [scale_read(unit=metric["unit"], metric_names=(metric.get("name", ""),)).scale]
            if len(same_name) > 1
            else []
        )
        group["stable_id"] = stable_id(self.prefix, metric.get("short_name", ""), *scale)
        return group["stable_id"]

    # -- the document -----------------------------------------------------------------------------

    def document(self, *, source: dict[str, Any] | None) -> dict[str, Any]:
        request = self.request
        given = request.protocol if isinstance(request.protocol, dict) else {}
        protocols = []
        for group in self.protocols.values():
            if "stable_id" not in group or group.get("catalogued"):
                continue  # no value drafted under it, or a catalogued protocol the document only names
            metric = group["metric"]
            pin = group["pins"][0] if len(group["pins"]) == 1 else TABLE
            self.paths[f"protocols[{len(protocols)}]"] = pin
            own = {task["stable_id"] for task in self.tasks}
            suites = [f"{self.prefix}-tasks" if task in own else self.suite_of.get(task, "") for task in group["tasks"]]
            datasets = list(dict.fromkeys([suite for suite in suites if suite] + group["tasks"]))
            protocols.append(
                {
                    "stable_id": group["stable_id"],
                    "title": given.get("title")
                    or f"{request.table}: {metric.get('name', '')} ({metric.get('unit', '')})",
                    "summary": given.get("summary")
                    or f"{metric.get('name', '')} on each task of {request.table}, as the source prints it.",
                    "procedure": given.get("procedure") or request.caption,
                    "version_label": given.get("version_label", ""),
                    "metric": {"description": "", **metric},
                    "best_marking": request.best_marking or ("best" if self.bold else ""),
                    "datasets": datasets,
                    "limitations": list(given.get("limitations") or []),
                    "source": self.source_id,
                    "source_locator": request.table,
                }
            )
        document: dict[str, Any] = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "title": f"{request.table} of {self.source_id}",
            "notes": list(request.notes),
        }
        if request.work:
            document["works"] = [request.work]
        if source is not None:
            self.paths["sources[0]"] = TABLE
            document["sources"] = [source]
        if self.models:
            document["models"] = self.models
        if self.aliases:
            document["model_aliases"] = self.aliases
        if self.tasks:
            document["datasets"] = [
                {
                    "stable_id": f"{self.prefix}-tasks",
                    "name": f"{request.table} tasks ({self.source_id})",
                    "description": f"The tasks of {request.table} that no catalogued suite holds.",
                    "source": self.source_id,
                    "source_locator": request.table,
                    "tasks": self.tasks,
                }  # fmt: skip
            ]
        document["configurations"] = list(self.configurations.values())
        document["protocols"] = protocols
        document["evaluations"] = self.evaluations
        return document
