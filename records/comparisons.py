"""Comparisons: like with like only.

Every comparison (best marks, ranks, charts, the matrix's marks) is made within one protocol (which
fixes the metric and its unit), one dataset or task, and one relation to one reference (absolute
values, or ratios or differences to the same reference configuration). Within such a group only
rows in a compared review state count: source checked (and excluded ones too when a reader asks
to include them). A repeat (the same measurement reported again by another source) counts once,
through its original, when the original is compared, and stays out with it when the original is
excluded (records.models.evaluation_comparable is the same rule for the API and releases). A
different measurement (another model shape, task or step count than the protocol states, such as
a short test run of a benchmark job) is listed, labelled, after every other row and never compared,
whatever the reader includes. A protocol without a direction (a descriptive fact) is never ranked,
and no row is best where fewer than two rows compare. A best whose own stated spread reaches a
runner-up is "tied within reported spread" with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from records.agreement import tied_within_spread
from records.models import Configuration, Dataset, Direction, Protocol, Relation
from reviews.models import EXCLUDED_STATES, ReviewState


def compared_states(*, include_excluded: bool) -> frozenset[str]:
    """Review states whose results enter best marks, ranks and charts."""
    if include_excluded:
        return frozenset({ReviewState.SOURCE_CHECKED, *EXCLUDED_STATES})
    return frozenset({ReviewState.SOURCE_CHECKED})


@dataclass(slots=True)
class ResultRow:
    """One result in its comparison group."""

    # A model, or a reading that reads alike (records.compared_rows, records.page_rows).
    evaluation: Any
    result: Any
    in_comparison: bool
    # It repeats another source's measurement: counted once, through that original, when the
    # original is compared; kept out with it when the original is excluded.
    counted_through_original: bool = False
    excluded_through_original: bool = False
    # Another measurement than the protocol's (evaluation.different_measurement says how): never compared.
    different_measurement: bool = False
    is_best: bool = False
    rank: int | None = None
    # The best's own stated spread reaches this runner-up (`tied_with_best`), or reaches a
    # runner-up of this best row (`best_tied`): "tied within reported spread" (records.agreement).
    tied_with_best: bool = False
    best_tied: bool = False


@dataclass
class ComparisonGroup:
    """The results of one protocol on one dataset or task, with one relation to one reference."""

    dataset: Dataset | None  # None only for the empty group of a protocol with no result
    relation: str
    reference: Configuration | None
    rows: list[ResultRow] = field(default_factory=list)
    best_value: Decimal | None = None
    compared_count: int = 0

    @property
    def key(self) -> str:
        """A stable key for anchors and query strings."""
        if self.dataset is None:
            return "none"
        suffix = "" if self.relation == Relation.ABSOLUTE else f"--{self.relation}-{self.reference.stable_id}"
        return f"{self.dataset.stable_id}{suffix}"

    @property
    def label(self) -> str:
        if self.dataset is None:
            return "No results"
        if self.relation == Relation.ABSOLUTE:
            return self.dataset.name
        relation = "ratio to" if self.relation == Relation.RATIO else "difference from"
        return f"{self.dataset.name} ({relation} {self.reference.short_name or self.reference.name})"


def _dataset_order(dataset: Dataset) -> tuple:
    return (dataset.suite_id or 0, dataset.position, dataset.name, dataset.stable_id)


def compare(*, protocol: Protocol, evaluations: Sequence[Any], include_excluded: bool) -> list[ComparisonGroup]:
    """The protocol's results in comparison groups, each sorted best first, with best and ranks marked.

    `evaluations` (models, or records.page_rows lines that read alike) carry their results (prefetched with their reference configuration), dataset
    and `repeats`: no query runs here.
    """
    states = compared_states(include_excluded=include_excluded)
    groups: dict[tuple[int, str, int | None], ComparisonGroup] = {}
    for evaluation in evaluations:
        different = bool(evaluation.different_measurement)
        own = evaluation.review_state in states and not different
        original = evaluation.repeats.review_state if evaluation.repeats_id is not None else None
        through = own and original in states
        excluded_with = own and original in EXCLUDED_STATES and not through
        for result in evaluation.results.all():
            key = (evaluation.dataset_id, result.relation, result.reference_configuration_id)
            group = groups.get(key)
            if group is None:
                group = groups[key] = ComparisonGroup(
                    dataset=evaluation.dataset, relation=result.relation, reference=result.reference_configuration
                )
            group.rows.append(
                ResultRow(
                    evaluation=evaluation,
                    result=result,
                    in_comparison=own and not through and not excluded_with,
                    counted_through_original=through,
                    excluded_through_original=excluded_with,
                    different_measurement=different,
                )
            )
    ordered = sorted(groups.values(), key=lambda g: (_dataset_order(g.dataset), g.relation != Relation.ABSOLUTE, g.key))
    for group in ordered:
        _rank(group, direction=protocol.metric_direction)
    return ordered


def _rank(group: ComparisonGroup, *, direction: str) -> None:
    lower_is_better = direction == Direction.LOWER
    ranked = direction != Direction.NONE

    def order(row: ResultRow):
        value = row.result.value
        by_value = (value if lower_is_better else -value) if ranked else Decimal(0)
        return (
            row.different_measurement,
            not row.in_comparison,
            by_value,
            row.evaluation.configuration.name,
            row.result.stable_id,
        )

    group.rows.sort(key=order)
    compared = [row for row in group.rows if row.in_comparison]
    group.compared_count = len(compared)
    if not ranked or len(compared) < 2:
        return
    values = [row.result.value for row in compared]
    group.best_value = min(values) if lower_is_better else max(values)
    previous: Decimal | None = None
    for position, row in enumerate(compared, start=1):  # sorted best first: equal values share a rank
        if row.result.value != previous:
            rank, previous = position, row.result.value
        row.rank = rank
        row.is_best = rank == 1
    best = [row for row in compared if row.is_best]
    if len(best) == 1:
        for row in compared:
            if not row.is_best and tied_within_spread(best=best[0].result, runner_up=row.result):
                row.tied_with_best = best[0].best_tied = True


@dataclass
class MatrixRow:
    configuration: Configuration
    cells: list[list[ResultRow]]


@dataclass
class Matrix:
    """Configurations x tasks, the shape of a paper's benchmark table: one column per comparison group."""

    columns: list[ComparisonGroup]
    rows: list[MatrixRow]


def matrix_configurations(groups: list[ComparisonGroup]) -> list[Any]:
    """The configurations with a result in any of the groups: the matrix's rows, by name."""
    configurations: dict[int, Any] = {}
    for group in groups:
        for row in group.rows:
            configurations.setdefault(row.evaluation.configuration_id, row.evaluation.configuration)
    return sorted(configurations.values(), key=lambda c: (c.name.lower(), c.stable_id))


def matrix(groups: list[ComparisonGroup], *, configurations: list[Any] | None = None) -> Matrix:
    """The groups as columns and `configurations` (by default every one with a result) as rows."""
    if configurations is None:
        configurations = matrix_configurations(groups)
    rows = {c.pk: MatrixRow(configuration=c, cells=[[] for _ in groups]) for c in configurations}
    for index, group in enumerate(groups):
        for row in group.rows:
            line = rows.get(row.evaluation.configuration_id)
            if line is not None:
                line.cells[index].append(row)
    return Matrix(columns=groups, rows=[rows[c.pk] for c in configurations])
