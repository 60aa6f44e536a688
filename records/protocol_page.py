"""A protocol's page: its results as the paper shows them (configurations x tasks, or one ranked
table), its charts, and its evaluations with their quotes, each list a page at a time.

Every result enters the comparisons (a column's best needs every value in it), read light
(records.compared_rows); only the rows a page shows are read in full (records.page_rows), so the
page's cost and size stay about the same from ten evaluations to ten thousand. A constant number
of SQL statements whatever the number of rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch
from django.http import Http404, QueryDict

from records import charts, compared_rows, comparisons, page_rows
from records.models import BaselineKind, BaselineRole, Dataset, Evaluation, EvidenceRow, Protocol, Source
from records.page_lists import Listed, listed
from records.selectors import EVALUATION_FACETS, Faceted, faceted, with_last_reviews, with_review_log
from records.values import display
from reviews.models import ReviewState

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
    # Every evaluation of the protocol, read light (records.compared_rows).
    evaluations: list[compared_rows.ComparedEvaluation]
    # Every comparison group (of the chosen dataset or task only, when one is chosen).
    groups: list[comparisons.ComparisonGroup]
    include_excluded: bool
    dataset_filter: str
    baselines: list[BaselineLine]
    sources: list[Source]
    result_count: int
    measured_by_counts: dict[str, int]
    # The results shown: a page of the matrix's configurations (`?table=rows&page=<n>`), or of the
    # one group's rows; `matrix` holds the shown configurations' cells.
    rows: Listed[Any]
    matrix: comparisons.Matrix | None
    # The evaluations table: the reader's filters, and the page of it shown (`?table=evaluations&page=<n>`, read in full).
    filtered: Faceted
    evaluations_table: Listed[page_rows.EvaluationLine]
    charts: list[ChartLink] = field(default_factory=list)

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
    def unlisted_count(self) -> int:
        """Evaluations not on the evaluations table's page shown (the related list names that page's)."""
        return len(self.evaluations) - len(self.evaluations_table.items)

    @property
    def is_matrix(self) -> bool:
        """Several datasets or tasks: shown as the papers show them, configurations x tasks."""
        return self.matrix is not None

    @property
    def best_count(self) -> int:
        """Results marked best (in their column): the page says a best value is marked only then."""
        return sum(1 for group in self.groups for row in group.rows if row.is_best)

    @property
    def compared_count(self) -> int:
        return sum(group.compared_count for group in self.groups)

    @property
    def configuration_count(self) -> int:
        return len({evaluation.configuration_id for evaluation in self.evaluations})

    @property
    def different_count(self) -> int:
        """Evaluations that measure something else than the protocol states, listed apart and never compared."""
        return sum(1 for evaluation in self.evaluations if evaluation.different_measurement)

    @property
    def proposed_count(self) -> int:
        return sum(1 for evaluation in self.evaluations if evaluation.review_state == ReviewState.PROPOSED)

    @property
    def excluded_count(self) -> int:
        return sum(1 for evaluation in self.evaluations if evaluation.is_excluded)

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


def protocol_comparison(
    *, protocol: Protocol, include_excluded: bool, dataset: str = ""
) -> tuple[list[compared_rows.ComparedEvaluation], list[comparisons.ComparisonGroup]]:
    """The protocol's evaluations (light) and its comparison groups, of one dataset or task when
    `dataset` names one."""
    evaluations = compared_rows.compared_evaluations(protocol)
    groups = comparisons.compare(protocol=protocol, evaluations=evaluations, include_excluded=include_excluded)
    return evaluations, _of_dataset(groups, dataset)


def _of_dataset(groups: list[comparisons.ComparisonGroup], dataset: str) -> list[comparisons.ComparisonGroup]:
    """The groups of the dataset or task `dataset` names (every group for "")."""
    if not dataset:
        return groups
    return [group for group in groups if group.dataset is not None and group.dataset.stable_id == dataset]


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
    # One dataset's or task's comparisons are the same read alone: read only its rows (none of an unknown one).
    chosen = Dataset.objects.filter(stable_id=dataset).first() if dataset else None
    evaluations = [] if dataset and chosen is None else compared_rows.compared_evaluations(protocol, dataset=chosen)
    groups = comparisons.compare(protocol=protocol, evaluations=evaluations, include_excluded=include_excluded)
    several = len(groups) > 1 or (
        chosen is not None and Evaluation.objects.filter(protocol=protocol).exclude(dataset=chosen).exists()
    )
    drawn = []
    for group in groups:
        drawn += [row for row in group.rows if row.in_comparison][: charts.MAX_BARS]
        drawn += [row for row in group.rows if row.evaluation.is_excluded][: charts.MAX_BARS]
    in_full(protocol, drawn)
    return charts.protocol_charts(protocol=protocol, groups=groups, include_excluded=include_excluded, several=several)


def protocol_page(*, stable_id: str, params: QueryDict) -> ProtocolPage:
    include_excluded, dataset = reader_choices(params)
    protocol = _protocol(stable_id)
    evaluations, groups = protocol_comparison(protocol=protocol, include_excluded=include_excluded, dataset=dataset)

    matrix: comparisons.Matrix | None = None
    if len(groups) > 1:
        rows = listed(
            comparisons.matrix_configurations(groups), key="rows", params=params, per_page=MATRIX_ROWS_PER_PAGE
        )
        matrix = comparisons.matrix(groups, configurations=rows.items)
        displayed = []  # a matrix cell shows what the light reading holds
    else:
        rows = listed(groups[0].rows if groups else [], key="rows", params=params, per_page=RESULT_ROWS_PER_PAGE)
        displayed = rows.items  # a results table's rows name their sources: read in full

    filtered = faceted(evaluations, EVALUATION_FACETS, params)
    table = listed(filtered.items, key="evaluations", params=params, per_page=EVALUATIONS_PER_PAGE)
    by_pk = in_full(protocol, displayed, also=[evaluation.pk for evaluation in table.items])
    table.items = [by_pk[evaluation.pk] for evaluation in table.items if evaluation.pk in by_pk]

    checked = {e.configuration_id for e in evaluations if e.review_state == ReviewState.SOURCE_CHECKED}
    kind_order = list(BaselineKind.values)  # the null control first, as on the seed page
    baselines = [
        BaselineLine(role=role, measured=role.configuration_id is not None and role.configuration_id in checked)
        for role in sorted(protocol.baseline_roles.all(), key=lambda role: kind_order.index(role.kind))
    ]
    with_last_reviews([*protocol.evidence_rows.all(), *protocol.baseline_roles.all()])
    with_review_log(protocol)
    measured_by_counts: dict[str, int] = {}
    for evaluation in evaluations:
        measured_by_counts[evaluation.measured_by] = measured_by_counts.get(evaluation.measured_by, 0) + 1
    return ProtocolPage(
        protocol=protocol,
        evaluations=evaluations,
        groups=groups,
        include_excluded=include_excluded,
        dataset_filter=dataset,
        baselines=baselines,
        sources=cited_sources(protocol=protocol, evaluations=evaluations),
        result_count=sum(len(e.results) for e in evaluations),
        measured_by_counts=measured_by_counts,
        rows=rows,
        matrix=matrix,
        filtered=filtered,
        evaluations_table=table,
        charts=_chart_links(protocol, groups),
    )


def _chart_links(protocol: Protocol, groups: list[comparisons.ComparisonGroup]) -> list[ChartLink]:
    """One chart a dataset or task with results (its groups relative to a reference drawn with it)."""
    links: dict[int, ChartLink] = {}
    for group in groups:
        if group.dataset is None or group.dataset.pk in links:
            continue
        best = [row for row in group.rows if row.is_best]
        if best:
            names = ", ".join(
                row.evaluation.configuration.short_name or row.evaluation.configuration.name for row in best
            )
            outcome = f"the best is {names} ({display(best[0].result.value)})"
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


def cited_sources(*, protocol: Protocol, evaluations: Iterable[Any]) -> list[Source]:
    """Every source the protocol page cites, once each, in order of first citation."""
    order: dict[int, None] = {protocol.source_id: None}
    for evaluation in evaluations:
        for pk in (evaluation.source_id, evaluation.concern_source_id):
            if pk is not None:
                order.setdefault(pk, None)
    for row in protocol.evidence_rows.all():
        order.setdefault(row.source_id, None)
    loaded = Source.objects.in_bulk(list(order))
    return [loaded[pk] for pk in order if pk in loaded]
