"""The coverage page: which tested model has evaluations under which protocol, in which review state,
and what each protocol still lacks, at a cost that does not grow with protocols x configurations.

- Rows are the protocols the filters choose (records.coverage.Filters), by title, ROWS_PER_PAGE a
  page (`page`). A protocol with no evaluation is folded: counted, and shown as a row only on asking
  (`empty=show`).
- Columns are what the page's protocols have evaluations of: a configuration's model, or a
  configuration naming no model on its own. They are ordered by how many of the page's protocols
  have them (most covered first, then by name), COLUMNS_PER_PAGE a page (`columns`). Every other
  model and configuration of the catalogue is folded, and counted.
- A cell counts its protocol's evaluations of its column in every review state ("2 checked,
  1 excluded"), says whether this portal measured one, and links to them on the protocol page (its
  evaluations filtered by configuration: one link per configuration when a model was tested in
  several ways).

Ten queries whatever the catalogue's size: the filters' choices (3), the protocols counted (1) and
the page's rows (1); the page's protocols' evaluations counted by configuration, review state and
who measured them (1: records.coverage.evaluation_groups, from which the columns, the cells and the
rows' counts are all made), those configurations with their models (1, up to CONFIGURATIONS_A_QUERY
of them), the rows' baseline roles (1), which of them have a reviewed recipe (1:
benchmarks.selectors.reviewed_recipe_protocols), and the catalogue's models and configurations
counted (1). No query reads evaluations beyond the page's protocols', so the page costs what its 50
protocols hold, never protocols x configurations. An invalid page number shows the first page, one
past the end the last (as the protocol page's evaluations do); an unknown filter is refused
(common.errors.Invalid).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, Q

from benchmarks.selectors import reviewed_recipe_protocols
from records import coverage as rules
from records.models import BaselineKind, Configuration, Evaluation, GenomicModel, MeasuredBy, Protocol

ROWS_PER_PAGE = 50
COLUMNS_PER_PAGE = 40
ROWS_PARAM, COLUMNS_PARAM, EMPTY_PARAM, SHOW = "page", "columns", "empty", "show"
# Where a protocol page lists its evaluations, and its filter by configuration (records.selectors' facet).
EVALUATIONS_ANCHOR = "all-rows"
CONFIGURATION_PARAM = "configuration"
MARKS = {"source_checked": "✓", "excluded": "✕", "excluded_recheck": "✕", "proposed": "?"}


@dataclass(frozen=True)
class Column:
    """A model, or a configuration that names none (`standalone`)."""

    pk: int
    standalone: bool
    stable_id: str
    name: str
    protocols: int  # how many of the page's protocols have evaluations of it

    @property
    def key(self) -> tuple[bool, int]:
        return (self.standalone, self.pk)

    @property
    def url(self) -> str:
        record = Configuration if self.standalone else GenomicModel
        return record(stable_id=self.stable_id).get_absolute_url()


@dataclass(frozen=True)
class Link:
    """One configuration of a cell, linked to its evaluations on the protocol page."""

    label: str
    title: str
    url: str


@dataclass
class Cell:
    counts: dict[str, int] = field(default_factory=dict)
    measured_here: bool = False
    links: dict[str, Link] = field(default_factory=dict)  # by configuration stable id

    @property
    def state(self) -> str:
        return rules.best_state(self.counts)

    @property
    def text(self) -> str:
        """ "✓ 2 checked, 1 excluded (here)": the best state's mark, every state counted, "here" when
        this portal measured one."""
        here = " (here)" if self.measured_here else ""
        return f"{MARKS.get(self.state, '')} {rules.states_text(self.counts)}{here}".strip()

    @property
    def url(self) -> str:
        """The protocol page's evaluations of the cell's one configuration ("" when it has several)."""
        return next(iter(self.links.values())).url if len(self.links) == 1 else ""

    @property
    def parts(self) -> list[Link]:
        return sorted(self.links.values(), key=lambda link: (link.label.casefold(), link.url))


@dataclass
class Line:
    protocol: Protocol
    summary: rules.ProtocolSummary
    cells: list[Cell | None]  # one per column shown; None where nothing is recorded

    @property
    def null_control_measured(self) -> bool:
        return self.summary.measured(BaselineKind.NULL_CONTROL)

    @property
    def conventional_reference_measured(self) -> bool:
        return self.summary.measured(BaselineKind.CONVENTIONAL_REFERENCE)

    @property
    def has_reviewed_recipe(self) -> bool:
        return self.summary.has_reviewed_recipe

    @property
    def missing(self) -> list[str]:
        return self.summary.missing


@dataclass(frozen=True)
class Pager:
    """One page of rows or columns: its range, and links to the others that keep the filters."""

    first: int  # 1-based position of the first shown; 0 when there is none
    last: int
    total: int
    links: list[tuple[str, str, bool]]  # (label, query string, current); "…" with "" for a gap


@dataclass
class CoverageMatrix:
    filters: rules.Filters
    choices: rules.FilterChoices
    columns: list[Column]
    lines: list[Line]
    rows: Pager
    column_pager: Pager
    folded_protocols: int  # chosen protocols with no evaluation (not rows unless shown)
    folded_columns: int  # models and configurations of the catalogue with no column here
    show_empty: bool
    empty_query: str  # the query string that shows (or folds again) the protocols with nothing recorded

    @property
    def csv_query(self) -> str:
        return urlencode(self.filters.chosen)


def _query(pairs: list[tuple[str, str]]) -> str:
    return urlencode([(key, value) for key, value in pairs if value])


def _page(total: int, per_page: int, number: str | None) -> Page:
    """The page `number` of `total` items (the first for a missing or invalid number, the last past the end)."""
    return Paginator(range(total), per_page).get_page(number)


def _pager(page: Page, query: list[tuple[str, str]], param: str) -> Pager:
    """`page`'s pager: each link is `query` (the filters and the pages it keeps) with `param` set (page 1 as no `param`)."""
    links: list[tuple[str, str, bool]] = []
    paginator = page.paginator
    if paginator.num_pages > 1:
        for number in paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1):
            if not isinstance(number, int):  # Paginator.ELLIPSIS
                links.append((str(number), "", False))
                continue
            links.append(
                (str(number), _query([*query, (param, str(number) if number > 1 else "")]), number == page.number)
            )
    total = paginator.count
    return Pager(first=page.start_index() if total else 0, last=page.end_index(), total=total, links=links)


def coverage_matrix(
    *,
    filters: rules.Filters,
    page: str | None = None,
    column_page: str | None = None,
    show_empty: bool = False,
) -> CoverageMatrix:
    """The page of the coverage matrix the reader chose (see the module's docstring); refuses a filter
    that names no area, context or suite (common.errors.Invalid, with the filter as its field)."""
    choices = rules.filter_choices()
    refused = choices.refusal(filters)
    if refused is not None:
        raise refused
    chosen = rules.protocols_chosen(filters)
    recorded = Exists(Evaluation.objects.filter(protocol_id=OuterRef("pk")))
    counted = chosen.aggregate(recorded=Count("pk", filter=Q(recorded)), empty=Count("pk", filter=~Q(recorded)))
    rows_total = counted["recorded"] + (counted["empty"] if show_empty else 0)
    row_page = _page(rows_total, ROWS_PER_PAGE, page)
    start = row_page.start_index() - 1 if rows_total else 0
    shown = chosen if show_empty else chosen.filter(recorded)
    protocols = list(shown.order_by("title", "stable_id").only("stable_id", "title")[start : start + ROWS_PER_PAGE])
    pks = [protocol.pk for protocol in protocols]
    groups = rules.evaluation_groups(pks)
    tested = _tested({group.configuration_id for group in groups})
    stable_ids = {protocol.pk: protocol.stable_id for protocol in protocols}
    with_recipe = reviewed_recipe_protocols(list(stable_ids.values())) if protocols else set()
    summaries = rules.protocol_summaries(stable_ids, groups, with_recipe=with_recipe)
    all_columns = _columns(groups, tested)
    column_page_shown = _page(len(all_columns), COLUMNS_PER_PAGE, column_page)
    column_start = column_page_shown.start_index() - 1 if all_columns else 0
    columns = all_columns[column_start : column_start + COLUMNS_PER_PAGE]
    cells = _cells(groups, tested, protocols=protocols, columns=columns)
    catalogue = Configuration.objects.aggregate(
        models=Count("model", distinct=True), standalone=Count("pk", filter=Q(model=None))
    )
    # Links keep the filters; another page of rows starts at the first page of its own columns.
    kept = [*filters.chosen, (EMPTY_PARAM, SHOW if show_empty else "")]
    row_number = str(row_page.number) if row_page.number > 1 else ""
    return CoverageMatrix(
        filters=filters,
        choices=choices,
        columns=columns,
        lines=[
            Line(
                protocol=protocol,
                summary=summaries[protocol.pk],
                cells=[cells.get((protocol.pk, column.key)) for column in columns],
            )
            for protocol in protocols
        ],
        rows=_pager(row_page, kept, ROWS_PARAM),
        column_pager=_pager(column_page_shown, [*kept, (ROWS_PARAM, row_number)], COLUMNS_PARAM),
        folded_protocols=0 if show_empty else counted["empty"],
        folded_columns=catalogue["models"] + catalogue["standalone"] - len(all_columns),
        show_empty=show_empty,
        empty_query=_query([*filters.chosen, (EMPTY_PARAM, "" if show_empty else SHOW)]),
    )


@dataclass(frozen=True)
class _Tested:
    """A configuration with results under the page's protocols: its column and how its cells name it."""

    column: tuple[bool, int]  # Column.key
    column_stable_id: str
    column_name: str
    stable_id: str
    name: str
    label: str  # in a cell of a model tested several ways: how it was tested


# Configurations read by one query: ids past it are read by one more (SQLite binds at most 32,766
# parameters a statement); a page's 50 protocols would need results of 400 configurations each.
CONFIGURATIONS_A_QUERY = 20_000


def _tested(configuration_pks: set[int]) -> dict[int, _Tested]:
    """The configurations with results under the page's protocols, by pk, with their models (one query)."""
    ids = sorted(configuration_pks)
    tested = {}
    for start in range(0, len(ids), CONFIGURATIONS_A_QUERY):
        rows = (
            Configuration.objects.filter(pk__in=ids[start : start + CONFIGURATIONS_A_QUERY])
            .order_by()
            .values_list(
                "pk", "stable_id", "name", "short_name", "method", "model_id", "model__stable_id", "model__name"
            )
        )
        for pk, stable_id, name, short_name, method, model_pk, model_stable_id, model_name in rows:
            if model_pk is None:
                column, column_stable_id, column_name = (True, pk), stable_id, short_name or name
            else:
                column, column_stable_id, column_name = (False, model_pk), model_stable_id, model_name
            label = method or short_name or name
            tested[pk] = _Tested(column, column_stable_id, column_name, stable_id, name, label)
    return tested


def _columns(groups: list[rules.EvaluationGroup], tested: Mapping[int, _Tested]) -> list[Column]:
    """Every column of the page's protocols, most covered first, then by name."""
    protocols: dict[tuple[bool, int], set[int]] = {}
    named: dict[tuple[bool, int], _Tested] = {}
    for group in groups:
        configuration = tested[group.configuration_id]
        protocols.setdefault(configuration.column, set()).add(group.protocol_id)
        named.setdefault(configuration.column, configuration)
    columns = [
        Column(
            pk=key[1],
            standalone=key[0],
            stable_id=named[key].column_stable_id,
            name=named[key].column_name,
            protocols=len(having),
        )
        for key, having in protocols.items()
    ]
    columns.sort(key=lambda c: (-c.protocols, c.name.casefold(), c.name, c.standalone, c.pk))
    return columns


def _cells(
    groups: list[rules.EvaluationGroup],
    tested: Mapping[int, _Tested],
    *,
    protocols: list[Protocol],
    columns: list[Column],
) -> Mapping[tuple[int, tuple[bool, int]], Cell]:
    """The page's cells by (protocol pk, column key), from the groups of its columns."""
    shown = {column.key for column in columns}
    urls = {protocol.pk: protocol.get_absolute_url() for protocol in protocols}
    cells: dict[tuple[int, tuple[bool, int]], Cell] = {}
    for group in groups:
        configuration = tested[group.configuration_id]
        if configuration.column not in shown:
            continue
        key = (group.protocol_id, configuration.column)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = Cell()
        cell.counts[group.review_state] = cell.counts.get(group.review_state, 0) + group.count
        cell.measured_here |= group.measured_by == MeasuredBy.PORTAL
        if configuration.stable_id not in cell.links:
            # A stable id is a slug: nothing in it needs quoting in a query string.
            url = f"{urls[group.protocol_id]}?{CONFIGURATION_PARAM}={configuration.stable_id}#{EVALUATIONS_ANCHOR}"
            cell.links[configuration.stable_id] = Link(label=configuration.label, title=configuration.name, url=url)
    return cells
