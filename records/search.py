"""Search across the catalogue: models (by any name a paper prints), datasets and tasks, protocols,
configurations, works, sources, decisions, evaluations, and results by value.

It reads the search index (records.search_index keeps it current; records.search_backends matches
a query with PostgreSQL's full text search or SQLite's FTS5). Every word is required; a model's
name matches in any spelling ("DNABERT2", "DNABERT-2", "dnabert 2", records.search_text). Hits
come best first, PER_PAGE a page, each showing its record type, its protocol and task, and its
model; the counts per type are true counts of everything matched (one COUNT over the match), and
the total is their sum. A search runs one SQL statement whatever the number of hits (the counts
and one page, from one reading of the match), a second when the page asked for is past the last
or when nothing matches (the near spellings: pg_trgm's trigram similarity).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, overload
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator

from records.models.search import SearchKind
from records.search_backends import KIND_ORDER, SearchBackend, search_backend
from records.search_text import MAX_QUERY_LENGTH, MAX_WORDS, query_parse
from reviews.models import ReviewState

PER_PAGE = 20
NEAR_SPELLINGS = 8
# Each kind's facet label and a hit's label.
LABELS: dict[str, tuple[str, str]] = {
    SearchKind.MODEL: ("Models", "Model"),
    SearchKind.DATASET: ("Datasets and tasks", "Dataset"),
    SearchKind.PROTOCOL: ("Protocols", "Protocol"),
    SearchKind.CONFIGURATION: ("Configurations", "Configuration"),
    SearchKind.WORK: ("Works", "Work"),
    SearchKind.SOURCE: ("Sources", "Source"),
    SearchKind.DECISION: ("Decisions", "Decision"),
    SearchKind.EVALUATION: ("Evaluations", "Evaluation"),
    SearchKind.RESULT: ("Results", "Result"),
}
TYPE_NAMES = tuple(str(kind) for kind in KIND_ORDER)
__all__ = ["MAX_QUERY_LENGTH", "PER_PAGE", "TYPE_NAMES", "Hit", "SearchResults", "search"]


@dataclass
class Hit:
    type: str
    type_label: str
    title: str
    stable_id: str
    url: str
    rank: float = 0.0
    # A result: its value with the printed digits, unit, task and review state; an evaluation: its
    # values and review state; a model: the names papers print for it; a task: its key and suite.
    detail: str = ""
    model_url: str = ""
    model_name: str = ""
    protocol_title: str = ""
    protocol_url: str = ""
    task_name: str = ""
    task_url: str = ""


@dataclass
class SearchResults:
    query: str
    chosen_type: str
    facets: list[tuple[str, str, int]] = field(default_factory=list)  # (type, label, count), each a true count
    total: int = 0  # every type's count, summed
    page: Page[Hit] | None = None
    near: list[Hit] = field(default_factory=list)  # near spellings, when nothing matches
    notice: str = ""  # what was done with a page number or words the search could not take

    @property
    def count(self) -> int:
        """The hits listed: the chosen type's, or all of them."""
        if not self.chosen_type:
            return self.total
        return next((count for name, _label, count in self.facets if name == self.chosen_type), 0)

    @property
    def hits(self) -> list[Hit]:
        return list(self.page.object_list) if self.page is not None else []

    @property
    def page_link(self) -> str:
        """The address of a page of these results, but for its number."""
        return f"?{urlencode({'q': self.query, **({'type': self.chosen_type} if self.chosen_type else {})})}&page="

    @property
    def page_numbers(self) -> list[int | str]:
        """The page numbers linked: the first and last, and two on each side of this one (Paginator.ELLIPSIS between)."""
        if self.page is None:
            return []
        return list(self.page.paginator.get_elided_page_range(self.page.number, on_each_side=2, on_ends=1))


def _state_label(state: str | None) -> str:
    return ReviewState(state).label.lower() if state else ""


def _hit(row: dict[str, Any]) -> Hit:
    kind = row["kind"]
    label = LABELS[kind][1]
    if kind == SearchKind.DATASET and row["task_name"]:
        label = "Task"
    return Hit(
        type=kind,
        type_label=label,
        title=row["title"],
        stable_id=row["stable_id"],
        url=row["url"],
        rank=float(row.get("rank") or 0.0),
        detail=" · ".join(part for part in (row["detail"], _state_label(row.get("review_state"))) if part),
        model_url=row["model_url"],
        model_name=row["model_name"],
        protocol_title=row["protocol_title"],
        protocol_url=row["protocol_url"],
        task_name=row["task_name"] if kind in (SearchKind.EVALUATION, SearchKind.RESULT) else "",
        task_url=row["task_url"] if kind in (SearchKind.EVALUATION, SearchKind.RESULT) else "",
    )


class _Ranked:
    """The matched entries best first, as Django's Paginator reads a list: a count known already,
    one page read already (with the counts), any other slice read with one query."""

    def __init__(self, backend: SearchBackend, *, kind: str, count: int, offset: int, rows: list[dict[str, Any]]):
        self.backend, self.kind, self._count = backend, kind, count
        self.read = {offset: rows}

    def count(self) -> int:
        return self._count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Hit]:
        return iter(self[0 : self._count])

    @overload
    def __getitem__(self, index: int) -> Hit: ...
    @overload
    def __getitem__(self, index: slice) -> list[Hit]: ...
    def __getitem__(self, index: int | slice) -> Hit | list[Hit]:
        if isinstance(index, int):
            return self[index : index + 1][0]
        start, stop = index.start or 0, min(index.stop if index.stop is not None else self._count, self._count)
        if stop <= start:
            return []
        rows = self.read.get(start)
        if rows is None or len(rows) < stop - start:
            rows = self.backend.rows(kind=self.kind, offset=start, limit=stop - start)
        return [_hit(row) for row in rows[: stop - start]]


def _page_number(number: str | int | None) -> tuple[int, str]:
    """The page asked for as a number from 1, and what was made of it when it is not one."""
    if number is None or number == "":
        return 1, ""
    try:
        value = int(str(number).strip())
    except ValueError:
        return 1, f"“{str(number)[:20]}” is not a page number: this is the first page."
    if value < 1:
        return 1, "Pages are numbered from 1: this is the first page."
    return value, ""


def search(*, query: str, record_type: str = "", page: str | int | None = None) -> SearchResults:
    """The hits for `query` (of `record_type` only, when it names a type), page `page` of them: the
    counts and the page in one statement; a page past the last is the last (a second statement)."""
    parsed = query_parse(query)
    chosen = record_type if record_type in TYPE_NAMES else ""
    results = SearchResults(query=parsed.text, chosen_type=chosen)
    notices = [f"Only the first {MAX_WORDS} words were searched."] if parsed.dropped_words else []
    if not parsed.segments and parsed.number is None:
        results.notice = " ".join(notices)
        return results
    number, notice = _page_number(page)
    notices.append(notice)
    backend = search_backend(parsed)
    offset = (number - 1) * PER_PAGE
    counts, rows = backend.counts_and_rows(kind=chosen, offset=offset, limit=PER_PAGE)
    results.facets = [(str(kind), LABELS[kind][0], counts[kind]) for kind in KIND_ORDER if counts.get(kind)]
    results.total = sum(counts.values())
    ranked = _Ranked(backend, kind=chosen, count=results.count, offset=offset, rows=rows)
    paginator: Paginator[Hit] = Paginator(ranked, PER_PAGE)
    if number > paginator.num_pages:
        notices.append(f"There is no page {number}: the results end on page {paginator.num_pages}, shown here.")
        number = paginator.num_pages
    results.page = paginator.page(number)
    results.notice = " ".join(part for part in notices if part)
    if not results.total:
        results.near = [_hit(row) for row in backend.near(limit=NEAR_SPELLINGS)]
    return results
