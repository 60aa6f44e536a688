"""A protocol's page: its results as the paper shows them (configurations x tasks, or one ranked
table), its charts, and its evaluations with their quotes, each list a page at a time.

What the page says of all its rows (each column's best, the matrix's order, counts, filters) comes
from the protocol's summary (records.protocol_summary); it reads only the rows it shows: a page of
the matrix's configurations read light (records.compared_rows), the rows of a one-column results
table and of the evaluations table in full (records.page_rows). So the page's cost and size stay
about the same from ten evaluations to ten thousand, in a constant number of SQL statements. One
dataset or task chosen reads and compares that one's rows; a filter of the evaluations is counted
and matched by the database.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch
from django.http import Http404, QueryDict

from pages import charts
from records import compared_rows, comparisons, page_rows, protocol_summary
from records.models import BaselineKind, BaselineRole, Configuration, Dataset, Evaluation, EvidenceRow, Protocol, Source
from records.page_lists import Listed, listed
from records.rules.evidence import MEASUREMENT_RULE, TIE_RULE
from records.selectors import (
    EVALUATION_FACETS,
    Faceted,
    facet_counts_in_sql,
    facet_selected,
    facets_of,
    with_last_reviews,
    with_review_log,
)
from records.values import display

INCLUDE_EXCLUDED = "excluded"
# Parameters of the reader's choices (besides the evaluations' filters, selectors.EVALUATION_FACETS).
INCLUDE_PARAM, DATASET_PARAM = "include", "dataset"
MATRIX_ROWS_PER_PAGE = 30  # configurations a page of a matrix shows (a paper's table rarely has more)
RESULT_ROWS_PER_PAGE = 50  # rows a page of a one-column results table shows
EVALUATIONS_PER_PAGE = 20  # evaluations, with their quotes, a page of the evaluations table shows


@dataclass
class BaselineLine:
    role: BaselineRole
    measured: bool


@dataclass
class ChartLink:
    """One of the page's charts: the comparison of one dataset or task, drawn by the chart address."""

    dataset: Dataset
    label: str
    description: str


@dataclass
class ProtocolPage:
    protocol: Protocol
    # What the page says of all the protocol's rows (records.protocol_summary).
    summary: protocol_summary.Summary
    # The comparison groups, the matrix's columns (of the chosen dataset or task only, when one is
    # chosen); a matrix's groups hold the rows of the configurations shown, a results table's all
    # its rows.
    groups: list[comparisons.ComparisonGroup]
    best_count: int  # results marked best (in their column) in all the groups' rows
    charts_sentence: str
    include_excluded: bool
    dataset_filter: str
    baselines: list[BaselineLine]
    sources: list[Source]
    # The results shown: a page of the matrix's configurations (`?table=rows&page=<n>`), or of the
    # one group's rows; `matrix` holds the shown configurations' cells.
    rows: Listed[Any]
    matrix: comparisons.Matrix | None
    # The evaluations table: the reader's filters (`items`: the matching evaluations' keys), and the
    # page of it shown (`?table=evaluations&page=<n>`, read in full).
    filtered: Faceted
    evaluations_table: Listed[page_rows.EvaluationLine]
    charts: list[ChartLink] = field(default_factory=list)
    measurement_rule: str = MEASUREMENT_RULE
    tie_rule: str = TIE_RULE

    @property
    def column_noun(self) -> str:
        """What the matrix's columns are: "task" when each is a task of a suite."""
        if self.groups and all(group.dataset is not None and group.dataset.suite_id for group in self.groups):
            return "task"
        return "dataset or task"

    @property
    def scope_sentence(self) -> str:
        """The page's first sentence: what is compared, by which metric, and what is marked."""
        protocol = self.protocol
        if not self.groups:
            where = " on the selected dataset" if self.dataset_filter else ""
            return f"No result recorded for this protocol{where}."
        if self.matrix is not None:
            configurations, columns = self.rows.total, len(self.groups)
            noun = "tasks" if self.column_noun == "task" else "datasets and tasks"
            what = f"{_count(configurations, 'tested configuration')} × {columns} {noun}"
        else:
            what = f"{_count(self.rows.total, 'result')} on {self.groups[0].label}"
        metric = f"{protocol.metric_label} ({protocol.metric_unit})"
        if not protocol.is_ranked:
            return f"{what}, {metric}: descriptive facts, listed, never ranked."
        marked = ""
        if self.best_count:
            marked = "; the best in each column is marked" if self.matrix is not None else "; the best is marked"
        return f"{what}, {metric}, {protocol.get_metric_direction_display()}{marked}."

    @property
    def rows_noun(self) -> str:
        return "configurations" if self.matrix is not None else "results"

    @property
    def evaluation_count(self) -> int:
        return self.summary.evaluation_count

    @property
    def result_count(self) -> int:
        return self.summary.result_count

    @property
    def measured_by_counts(self) -> dict[str, int]:
        return self.summary.measured_by_counts

    @property
    def unlisted_count(self) -> int:
        """Evaluations not on the evaluations table's page shown (the related list names that page's)."""
        return self.summary.evaluation_count - len(self.evaluations_table.items)

    @property
    def is_matrix(self) -> bool:
        """Several datasets or tasks: shown as the papers show them, configurations x tasks."""
        return self.matrix is not None

    @property
    def compared_count(self) -> int:
        return sum(group.compared_count for group in self.groups)

    @property
    def configuration_count(self) -> int:
        return self.summary.configuration_count

    @property
    def different_count(self) -> int:
        """Evaluations that measure something else than the protocol states, listed apart and never compared."""
        return self.summary.different_count

    @property
    def proposed_count(self) -> int:
        return self.summary.proposed_count

    @property
    def excluded_count(self) -> int:
        return self.summary.excluded_count

    @property
    def active_baseline_count(self) -> int:
        return sum(1 for line in self.baselines if line.role.is_active)

    @property
    def measured_baseline_count(self) -> int:
        return sum(1 for line in self.baselines if line.role.is_active and line.measured)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def reader_choices(params: QueryDict) -> tuple[bool, str]:
    """Whether excluded rows are drawn among the compared ones, and the one dataset or task shown ("" for all)."""
    return params.get(INCLUDE_PARAM) == INCLUDE_EXCLUDED, params.get(DATASET_PARAM, "")[:150]


def _protocol(stable_id: str) -> Protocol:
    protocol = (
        Protocol.objects.select_related("source", "review_state_changed_by")
        .prefetch_related(
            Prefetch("datasets", queryset=Dataset.objects.prefetch_related("tasks")),
            "areas",
            "contexts",
            "limitations",
            Prefetch(
                "baseline_roles",
                queryset=BaselineRole.objects.select_related("configuration", "review_state_changed_by"),
            ),
            Prefetch(
                "evidence_rows",
                queryset=EvidenceRow.objects.select_related("source", "evaluation", "review_state_changed_by"),
            ),
            "decisions",
        )
        .filter(stable_id=stable_id)
        .first()
    )
    if protocol is None:
        raise Http404(f"No protocol with stable id {stable_id!r}")
    return protocol


def _dataset_named(dataset: str) -> Dataset | None:
    return Dataset.objects.filter(stable_id=dataset).first() if dataset else None


def protocol_groups(
    *, protocol: Protocol, include_excluded: bool, dataset: str = ""
) -> list[comparisons.ComparisonGroup]:
    """The protocol's comparison groups with all their rows, read light (of one dataset or task
    only, when `dataset` names one: its comparisons are the same read alone; none for an unknown one)."""
    chosen = _dataset_named(dataset)
    if dataset and chosen is None:
        return []
    evaluations = compared_rows.compared_evaluations(protocol, dataset=chosen)
    return comparisons.compare(protocol=protocol, evaluations=evaluations, include_excluded=include_excluded)


def _matrix_columns(
    protocol: Protocol,
    summarised: list[protocol_summary.GroupSummary],
    *,
    configurations: list[int],
    include_excluded: bool,
) -> tuple[list[comparisons.ComparisonGroup], list[Any]]:
    """The matrix's columns as the summary has them, each holding the rows of `configurations` (a
    page of the matrix), marked best or tied as in the whole group; and those configurations."""
    shown = compared_rows.compared_evaluations(protocol, configurations=configurations)
    partial = comparisons.compare(protocol=protocol, evaluations=shown, include_excluded=include_excluded)
    found = {(g.dataset.pk, g.relation, g.reference.pk if g.reference else None): g for g in partial if g.dataset}
    # Read whether or not a column is among the shown rows' (a constant number of queries).
    datasets = Dataset.objects.in_bulk({group.dataset_id for group in summarised})
    references = Configuration.objects.in_bulk(
        {group.reference_id for group in summarised if group.reference_id is not None}
    )
    columns = []
    for column in summarised:
        group = found.get(column.key)
        if group is None:  # no result of the configurations shown in this column
            group = comparisons.ComparisonGroup(
                dataset=datasets[column.dataset_id],
                relation=column.relation,
                reference=references.get(column.reference_id) if column.reference_id is not None else None,
            )
        group.compared_count, group.best_value = column.compared_count, column.best_value
        for row in group.rows:  # ranks and marks of the whole column, not of this page's rows
            row.rank = None
            row.is_best = row.result.pk in column.best
            row.tied_with_best = row.result.pk in column.tied
            row.best_tied = row.is_best and bool(column.tied)
            counted = column.counted_with.get(row.result.pk)
            if counted is not None:  # another printing of its measurement stands for it, perhaps on another page
                disagreement, stable_id, value = counted
                row.in_comparison, row.counted_through_original = False, not disagreement
                row.disagreement, row.same_as = disagreement, (stable_id, value)
            elif row.same_as is not None:  # grouped with a row of this page, but the column compares it
                row.in_comparison, row.counted_through_original, row.disagreement, row.same_as = True, False, "", None
        columns.append(group)
    lines = {evaluation.configuration_id: evaluation.configuration for evaluation in shown}
    return columns, [lines[pk] for pk in configurations if pk in lines]


def in_full(
    protocol: Protocol, rows: Iterable[comparisons.ResultRow], *, also: Iterable[int] = ()
) -> dict[int, page_rows.EvaluationLine]:
    """Put the rows' evaluations and results, read in full, in place of their light readings; returns
    the evaluations read (those of the rows and of `also`, by primary key): one read whatever their number."""
    rows = list(rows)
    full = page_rows.protocol_evaluations(protocol, ids={row.evaluation.pk for row in rows} | set(also))
    by_pk = {line.pk: line for line in full}
    for row in rows:
        line = by_pk.get(row.evaluation.pk)
        if line is None:
            continue  # deleted between the two reads: shown light (the write's version bump renders afresh)
        row.evaluation = line
        row.result = next((result for result in line.results if result.pk == row.result.pk), row.result)
    return by_pk


def protocol_charts(*, stable_id: str, include_excluded: bool, dataset: str = "") -> list[charts.Chart]:
    """The protocol's charts (of one dataset or task when `dataset` names one): each group's best
    rows, up to charts.MAX_BARS, read in full and drawn."""
    protocol = Protocol.objects.filter(stable_id=stable_id).first()
    if protocol is None:
        raise Http404(f"No protocol with stable id {stable_id!r}")
    groups = protocol_groups(protocol=protocol, include_excluded=include_excluded, dataset=dataset)
    several = len(groups) > 1 or (
        bool(dataset) and Evaluation.objects.filter(protocol=protocol).exclude(dataset__stable_id=dataset).exists()
    )
    drawn = []
    for group in groups:
        drawn += [row for row in group.rows if row.in_comparison][: charts.MAX_BARS]
        drawn += [row for row in group.rows if row.evaluation.is_excluded][: charts.MAX_BARS]
    in_full(protocol, drawn)
    return charts.protocol_charts(protocol=protocol, groups=groups, include_excluded=include_excluded, several=several)


def protocol_page(*, stable_id: str, params: QueryDict) -> ProtocolPage:
    """The page: from the protocol's summary and the rows it shows, whatever the number of rows;
    one dataset or task chosen (or a protocol of one) reads and compares that one's rows."""
    include_excluded, dataset = reader_choices(params)
    protocol = _protocol(stable_id)
    summary = protocol_summary.protocol_summary(protocol=protocol)
    summarised = summary.groups[include_excluded]

    matrix: comparisons.Matrix | None = None
    displayed: list[comparisons.ResultRow] = []  # a matrix cell shows what the light reading holds
    best: dict[str, list[int]] = {}  # each group's best rows' configurations, by group key
    if not dataset and len(summarised) > 1:
        rows: Listed[Any] = listed(summary.configurations, key="rows", params=params, per_page=MATRIX_ROWS_PER_PAGE)
        groups, rows.items = _matrix_columns(
            protocol, summarised, configurations=rows.items, include_excluded=include_excluded
        )
        matrix = comparisons.matrix(groups, configurations=rows.items)
        best_count = sum(len(summarised_group.best) for summarised_group in summarised)
        charts_sentence = summary.charts_sentences[include_excluded]
        for summarised_group, column in zip(summarised, groups, strict=True):
            best[column.key] = summarised_group.best_configurations
    else:
        groups = protocol_groups(protocol=protocol, include_excluded=include_excluded, dataset=dataset)
        if len(groups) > 1:  # one dataset's groups: absolute values and values relative to a reference
            rows = listed(
                comparisons.matrix_configurations(groups), key="rows", params=params, per_page=MATRIX_ROWS_PER_PAGE
            )
            matrix = comparisons.matrix(groups, configurations=rows.items)
        else:
            rows = listed(groups[0].rows if groups else [], key="rows", params=params, per_page=RESULT_ROWS_PER_PAGE)
            displayed = rows.items  # a results table's rows name their sources: read in full
        best_count = sum(1 for group in groups for row in group.rows if row.is_best)
        charts_sentence = comparisons.charts_sentence(groups, include_excluded=include_excluded) if groups else ""
        for column in groups:
            best[column.key] = [row.evaluation.configuration_id for row in column.rows if row.is_best]

    if facet_selected(EVALUATION_FACETS, params):  # filtered: counted and matched by the database
        counts, matching = facet_counts_in_sql(
            Evaluation.objects.filter(protocol=protocol), EVALUATION_FACETS, params, unselected=summary.facets
        )
        filtered = facets_of(counts, EVALUATION_FACETS, params, total=summary.evaluation_count)
        found = set(matching.order_by().values_list("pk", flat=True))
        filtered.items = [pk for pk in summary.evaluation_ids if pk in found]  # in the table's order
    else:
        filtered = facets_of(summary.facets, EVALUATION_FACETS, params, total=summary.evaluation_count)
        filtered.items = summary.evaluation_ids
    table = listed(filtered.items, key="evaluations", params=params, per_page=EVALUATIONS_PER_PAGE)
    by_pk = in_full(protocol, displayed, also=table.items)
    table.items = [by_pk[pk] for pk in table.items if pk in by_pk]

    kind_order = list(BaselineKind.values)  # the null control first, as on the seed page
    baselines = [
        BaselineLine(role=role, measured=role.configuration_id in summary.checked_configurations)
        for role in sorted(protocol.baseline_roles.all(), key=lambda role: kind_order.index(role.kind))
    ]
    with_last_reviews([*protocol.evidence_rows.all(), *protocol.baseline_roles.all()])
    with_review_log(protocol)
    return ProtocolPage(
        protocol=protocol,
        summary=summary,
        groups=groups,
        best_count=best_count,
        charts_sentence=charts_sentence,
        include_excluded=include_excluded,
        dataset_filter=dataset,
        baselines=baselines,
        sources=cited_sources(protocol=protocol, source_ids=summary.source_ids),
        rows=rows,
        matrix=matrix,
        filtered=filtered,
        evaluations_table=table,
        charts=_chart_links(protocol, groups, best=best),
    )


def _chart_links(
    protocol: Protocol, groups: list[comparisons.ComparisonGroup], *, best: dict[str, list[int]]
) -> list[ChartLink]:
    """One chart a dataset or task with results (its groups relative to a reference drawn with it);
    `best` names each group's best configurations (by group key)."""
    names = {
        pk: line.short_name or line.name
        for pk, line in Configuration.objects.in_bulk({pk for pks in best.values() for pk in pks}).items()
    }
    links: dict[int, ChartLink] = {}
    for group in groups:
        if group.dataset is None or group.dataset.pk in links:
            continue
        if best.get(group.key):
            named = ", ".join(names.get(pk, "") for pk in best[group.key])
            outcome = f"the best is {named} ({display(group.best_value)})"
        elif group.compared_count:
            outcome = (
                f"{group.compared_count} compared value{'s' if group.compared_count != 1 else ''}, none marked best"
            )
        else:
            outcome = "no source-checked value to compare yet"
        links[group.dataset.pk] = ChartLink(
            dataset=group.dataset,
            label=group.dataset.name,
            description=f"Bar chart of {protocol.metric_label} ({protocol.metric_unit}) on {group.dataset.name}: {outcome}.",
        )
    return list(links.values())


def cited_sources(*, protocol: Protocol, source_ids: Iterable[int]) -> list[Source]:
    """Every source the protocol page cites, once each, in order of first citation: the protocol's,
    its evaluations' (`source_ids`, in their order) and its evidence rows'."""
    order: dict[int, None] = {protocol.source_id: None}
    for pk in source_ids:
        order.setdefault(pk, None)
    for row in protocol.evidence_rows.all():
        order.setdefault(row.source_id, None)
    loaded = Source.objects.in_bulk(list(order))
    return [loaded[pk] for pk in order if pk in loaded]
