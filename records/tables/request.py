"""What a curator asks of a table draft: the pasted text, the source and the table's name, how to
read the paste, who measured, the metric, and the choices made per column and per row.

One plain JSON object, the same from the admin's page, `manage.py draft_table` and
`POST /api/v1/table-drafts/`; `request_read` checks it whole and names every bad field by its path
(an unknown key is an error, never ignored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import DomainError
from records.rules.units import scale_read
from records.tables.grid import FORMATS

REQUEST_FORMAT = "benchmark-evidence-table-draft"
MEASURED_BY = ("authors", "third_party")
DIRECTIONS = ("higher", "lower")
UNCERTAINTY_KINDS = ("sd", "se", "ci", "range")
BEST_MARKINGS = ("best", "none", "other", "unseen")
METRIC_KEYS = {"name", "short_name", "description", "unit", "scale", "direction"}
# A column or a row of the pasted grid: a task (with its metric) on the axis that holds tasks, a
# model (with how it was tested and who measured it) on the axis that holds models.
AXIS_KEYS = {
    "task", "new_task", "metric", "skip", "model", "new_model", "configuration", "measured_by",
    "measured_by_name", "method", "original_source", "original_citation", "original_locator", "reason", "alias",
}  # fmt: skip
TOP_KEYS = {
    "format", "version", "source", "work", "table", "caption", "text", "layout", "measured_by",
    "measured_by_name", "metric", "uncertainty_kind", "uncertainty", "num_runs", "best_marking",
    "protocol", "suite", "columns", "rows", "notes", "reading_method", "header",
}  # fmt: skip
LAYOUT_KEYS = {"format", "header_rows", "models_in"}
PROTOCOL_KEYS = {"stable_id", "title", "summary", "procedure", "limitations", "version_label"}


class DraftRequestInvalid(DomainError):
    """The request itself is malformed: `errors` name each field by its path."""

    status = 400
    default_field = "request"

    def __init__(self, errors: list[dict[str, str]]):
        super().__init__("; ".join(f"{e['path']}: {e['message']}" for e in errors[:5]))
        self.errors = errors


@dataclass
class DraftRequest:
    text: str
    table: str
    source: str | dict[str, Any]
    work: dict[str, Any] | None = None
    caption: str = ""
    format: str = "auto"
    header_rows: int = 1
    models_in: str = "rows"
    header: list[str] | None = None  # the column labels, where the paste's header needs fixing
    measured_by: str = "authors"
    measured_by_name: str = ""
    metric: dict[str, str] = field(default_factory=dict)
    uncertainty_kind: str = ""
    uncertainty: str = ""
    num_runs: int | None = None
    best_marking: str = ""
    protocol: dict[str, Any] | str = field(default_factory=dict)
    suite: str = ""
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reading_method: str = "table"


class _Errors:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.items.append({"path": path, "message": message})

    def text(self, data: dict, key: str, path: str, *, required: bool = False, limit: int = 100_000) -> str:
        value = data.get(key, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            self.add(f"{path}{key}", "must be text")
            return ""
        if required and not value.strip():
            self.add(f"{path}{key}", "is required")
        if len(value) > limit:
            self.add(f"{path}{key}", f"is longer than {limit} characters")
        return value

    def choice(self, data: dict, key: str, path: str, choices: tuple[str, ...], default: str) -> str:
        value = data.get(key, default)
        if value in ("", None) and "" not in choices:
            return default
        if value not in choices:
            self.add(f"{path}{key}", f"must be one of {', '.join(repr(c) for c in choices)}")
            return default
        return value

    def unknown(self, data: dict, allowed: set[str], path: str) -> None:
        for key in sorted(set(data) - allowed):
            self.add(f"{path}{key}", "is not a field of a table draft request")

    def mapping(self, data: dict, key: str, path: str) -> dict:
        value = data.get(key) or {}
        if not isinstance(value, dict):
            self.add(f"{path}{key}", "must be an object")
            return {}
        return value


def request_read(data: Any, *, text: str | None = None) -> DraftRequest:
    """The request `data` states, or DraftRequestInvalid naming every bad field. `text` (a file the
    command line read) takes the place of `data["text"]`."""
    errors = _Errors()
    if not isinstance(data, dict):
        raise DraftRequestInvalid([{"path": "request", "message": "must be a JSON object"}])
    errors.unknown(data, TOP_KEYS, "")
    if data.get("format", REQUEST_FORMAT) != REQUEST_FORMAT:
        errors.add("format", f"must be {REQUEST_FORMAT!r}")
    if data.get("version", 1) != 1:
        errors.add("version", "must be 1")
    pasted = text if text is not None else errors.text(data, "text", "", required=True, limit=1_000_000)
    if text is not None and not text.strip():
        errors.add("text", "the file holds no table")
    source = data.get("source")
    if isinstance(source, str):
        if not source.strip():
            errors.add("source", "name a catalogued source (stable id, DOI, arXiv id or URL) or give a new one")
    elif not isinstance(source, dict):
        errors.add("source", "name a catalogued source (stable id, DOI, arXiv id or URL) or give a new one")
        source = ""
    work = data.get("work")
    if work is not None and not isinstance(work, dict):
        errors.add("work", "must be an object (a new work, in the import format)")
        work = None
    layout = errors.mapping(data, "layout", "")
    errors.unknown(layout, LAYOUT_KEYS, "layout.")
    header_rows = layout.get("header_rows", 1)
    if not isinstance(header_rows, int) or isinstance(header_rows, bool) or not 1 <= header_rows <= 4:
        errors.add("layout.header_rows", "must be a whole number from 1 to 4")
        header_rows = 1
    header = data.get("header")
    if header is not None and not (isinstance(header, list) and all(isinstance(h, str) for h in header)):
        errors.add("header", "must be a list of column labels")
        header = None
    metric = _metric(errors, errors.mapping(data, "metric", ""), "metric.")
    protocol = data.get("protocol") or {}
    if isinstance(protocol, dict):
        errors.unknown(protocol, PROTOCOL_KEYS, "protocol.")
    elif not isinstance(protocol, str):
        errors.add("protocol", "must be a catalogued protocol's stable id or an object (title, summary, procedure)")
        protocol = {}
    num_runs = data.get("num_runs")
    if num_runs is not None and (not isinstance(num_runs, int) or isinstance(num_runs, bool) or num_runs < 1):
        errors.add("num_runs", "must be a whole number of at least 1, or null")
        num_runs = None
    columns = _axis(errors, errors.mapping(data, "columns", ""), "columns")
    rows = _axis(errors, errors.mapping(data, "rows", ""), "rows")
    notes = data.get("notes") or []
    if not (isinstance(notes, list) and all(isinstance(n, str) for n in notes)):
        errors.add("notes", "must be a list of texts")
        notes = []
    request = DraftRequest(
        text=pasted,
        table=errors.text(data, "table", "", required=True, limit=200).strip(),
        source=source.strip() if isinstance(source, str) else source,
        work=work,
        caption=errors.text(data, "caption", "", limit=2000),
        format=errors.choice(layout, "format", "layout.", FORMATS, "auto"),
        header_rows=header_rows,
        models_in=errors.choice(layout, "models_in", "layout.", ("rows", "columns"), "rows"),
        header=header,
        measured_by=errors.choice(data, "measured_by", "", MEASURED_BY, "authors"),
        measured_by_name=errors.text(data, "measured_by_name", "", limit=300),
        metric=metric,
        uncertainty_kind=errors.choice(data, "uncertainty_kind", "", ("", *UNCERTAINTY_KINDS), ""),
        uncertainty=errors.text(data, "uncertainty", "", limit=2000),
        num_runs=num_runs,
        best_marking=errors.choice(data, "best_marking", "", ("", *BEST_MARKINGS), ""),
        protocol=protocol,
        suite=errors.text(data, "suite", "", limit=150),
        columns=columns,
        rows=rows,
        notes=notes,
        reading_method=errors.choice(data, "reading_method", "", ("table", "text", "figure_label"), "table"),
    )
    if request.measured_by == "third_party" and not request.measured_by_name.strip():
        errors.add("measured_by_name", "name the third party that measured (the table's authors' group)")
    if errors.items:
        raise DraftRequestInvalid(errors.items)
    return request


def _metric(errors: _Errors, data: dict, path: str) -> dict[str, str]:
    errors.unknown(data, METRIC_KEYS, path)
    metric = {key: data[key] for key in METRIC_KEYS if isinstance(data.get(key), str)}
    for key in sorted(set(data) & METRIC_KEYS - set(metric)):
        errors.add(f"{path}{key}", "must be text")
    if metric.get("direction", "higher") not in DIRECTIONS:
        errors.add(f"{path}direction", "must be 'higher' or 'lower' (is better)")
    return metric


def _axis(errors: _Errors, data: dict, name: str) -> dict[str, dict[str, Any]]:
    """The choices made per column (or row), by its label as the paste prints it."""
    chosen = {}
    for label, choice in data.items():
        path = f"{name}[{label!r}]."
        if not isinstance(choice, dict):
            errors.add(path[:-1], "must be an object")
            continue
        errors.unknown(choice, AXIS_KEYS, path)
        if "metric" in choice:
            choice = {**choice, "metric": _metric(errors, errors.mapping(choice, "metric", path), f"{path}metric.")}
        if "measured_by" in choice:
            errors.choice(choice, "measured_by", path, MEASURED_BY, "authors")
        if "alias" in choice and not isinstance(choice["alias"], bool):
            errors.add(f"{path}alias", "must be true or false")
        for key in ("task", "model", "configuration"):
            if key in choice and not isinstance(choice[key], str):
                errors.add(f"{path}{key}", "must be a stable id, or 'new'")
        chosen[label] = choice
    return chosen


def metric_problems(metric: dict[str, str]) -> list[str]:
    """Why a column's metric cannot be drafted: a part missing, or a unit that states no scale."""
    missing = [key for key in ("name", "short_name", "unit") if not (metric.get(key) or "").strip()]
    if missing:
        return [f"the column's metric needs its {', '.join(missing)} (the table's metric, or this column's)"]
    read = scale_read(unit=metric["unit"], metric_names=(metric["name"], metric["short_name"]))
    if read.problem:
        return [read.problem]
    if read.scale == "raw" and metric.get("scale") != "raw":
        return [
            f"the unit {metric['unit']!r} gives no scale for {metric['name']}: write it as printed with its scale "
            f"({metric['name']!r}, '{metric['name']} x 100', '%', 'accuracy (fraction)'), or say scale 'raw' for a unit of its own"
        ]
    return []
