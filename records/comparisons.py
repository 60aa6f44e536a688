"""Comparisons: like with like only, by the evidence rules (records.rules.evidence).

Every comparison (best marks, ranks, charts, the matrix's marks) is made within one protocol (which
fixes the metric and its unit), one dataset or task, and one relation to one reference (absolute
values, or ratios or differences to the same reference configuration). Within such a group only
rows in a compared review state count: source checked (and excluded ones too when a reader asks
to include them). Printings of one measurement (a repeat and its original, a copy and what it
copies, one work's versions, a figure label and the table cell it rounds) count once, as the task
page counts them; those that disagree stay visible, marked, and are not compared. A repeat stays
out with its original when the original is excluded (records.models.evaluation_comparable is the
same rule for the API and releases). A different measurement (another model shape, task or step
count than the protocol states, such as a short test run of a benchmark job) is listed, labelled,
after every other row and never compared, whatever the reader includes. A protocol without a
direction (a descriptive fact) is never ranked, and no row is best where fewer than two
measurements compare. Ties follow TIE_RULE: intervals that overlap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from records.models import Configuration, Dataset, Direction, Protocol, Relation
from records.page_rows import evaluation_url
from records.rules import evidence as rules
from records.values import display


@dataclass(slots=True)
class ResultRow:
    """One result in its comparison group."""

    # A model, or a reading that reads alike (records.compared_rows, records.page_rows).
    evaluation: Any
    result: Any
    in_comparison: bool
    # Another printing of its measurement is compared (a figure label and its table cell, a copy
    # and its original, versions of one work): this one is counted once, through that one, when
    # it agrees (`counted_through_original`), or marked with how it disagrees (`disagreement`).
    counted_through_original: bool = False
    disagreement: str = ""  # records.rules.evidence.Discrepancy.LABELS
    same_as: tuple[str, str] | None = None  # (evaluation stable id, value) of the printing compared
    # It repeats an original that is excluded: it stays out with it.
    excluded_through_original: bool = False
    # Another measurement than the protocol's (evaluation.different_measurement says how): never compared.
    different_measurement: bool = False
    is_best: bool = False
    rank: int | None = None
    # Its interval overlaps the best's (`tied_with_best`), or this best has such a runner-up
    # (`best_tied`): records.rules.evidence.TIE_RULE.
    tied_with_best: bool = False
    best_tied: bool = False

    @property
    def same_as_url(self) -> str:
        return evaluation_url(self.same_as[0]) if self.same_as else ""


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

    `evaluations` (models, or records.compared_rows lines that read alike) carry their results
    (prefetched with their reference configuration), dataset, configuration (with `model_id`),
    `provenance` and `repeats`: no query runs here.
    """
    states = rules.compared_states(include_excluded=include_excluded)
    repeated = {e.repeats_id for e in evaluations if e.repeats_id}
    groups: dict[tuple[int, str, int | None], ComparisonGroup] = {}
    for evaluation in evaluations:
        different = bool(evaluation.different_measurement)
        own = evaluation.review_state in states and not different
        excluded_with = own and not rules.compared_with_original(evaluation, states=states)
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
                    in_comparison=own and not excluded_with,
                    excluded_through_original=excluded_with,
                    different_measurement=different,
                )
            )
    ordered = sorted(groups.values(), key=lambda g: (_dataset_order(g.dataset), g.relation != Relation.ABSOLUTE, g.key))
    for group in ordered:
        _rank(group, protocol=protocol, repeated=repeated)
    return ordered


def _name(row: ResultRow) -> tuple[str, str]:
    return (row.evaluation.configuration.name, row.result.stable_id)


def _rank(group: ComparisonGroup, *, protocol: Protocol, repeated: set[int]) -> None:
    """Count each measurement once (its printing compared), then rank the measurements. A
    measurement printed once (most rows) is ranked as its one printing, without more objects."""
    row_of: dict[int, ResultRow] = {}
    by_key: dict[tuple, list[rules.Printing]] = {}
    for row in group.rows:
        if row.in_comparison:
            printing = rules.printing_of(row.evaluation, row.result, factor=protocol.scale_factor)
            row_of[id(printing)] = row
            key = (rules.subject_key(row.evaluation), rules.origin_key(row.evaluation, repeated=repeated))
            by_key.setdefault(key, []).append(printing)
    compared: list[rules.Printing] = []
    for key, printings in by_key.items():
        if len(printings) == 1:
            compared.append(printings[0])
            continue
        measurement = rules.Measurement(key=key, printings=printings)
        shown = measurement.shown
        compared.append(shown)
        for other in measurement.others:
            row = row_of[id(other.printing)]
            row.in_comparison = False
            row.counted_through_original = not other.disagrees
            row.disagreement = other.status if other.disagrees else ""
            row.same_as = (shown.evaluation.stable_id, display(shown.result.value))
    ranked = rules.rank(
        compared,
        printing_of=lambda printing: printing,
        direction=protocol.metric_direction,
        name_of=lambda printing: _name(row_of[id(printing)]),
        row_type=rules.Ranked,
    )
    group.compared_count = len(ranked)
    position: dict[int, int] = {}
    for index, entry in enumerate(ranked):
        row = row_of[id(entry.printing)]
        row.rank, row.is_best = entry.rank, entry.is_best
        row.tied_with_best, row.best_tied = entry.tied_with_best, entry.best_tied
        position[id(row)] = index
    lower = protocol.metric_direction == Direction.LOWER
    ranked_by_value = protocol.metric_direction != Direction.NONE

    def order(row: ResultRow) -> tuple:
        if id(row) in position:
            return (row.different_measurement, False, position[id(row)])
        value = Decimal(row.result.value)
        by_value = (value if lower else -value) if ranked_by_value else Decimal(0)
        return (row.different_measurement, True, 0, by_value, *_name(row))

    group.rows.sort(key=order)
    best = [row for row in group.rows if row.is_best]
    group.best_value = Decimal(best[0].result.value) if best else None


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


def charts_sentence(groups: list[ComparisonGroup], *, include_excluded: bool) -> str:
    """What the protocol page says of its charts, read off the comparisons they draw: what they
    compare, and whether excluded rows are among the compared or drawn apart."""
    compared = [row for group in groups for row in group.rows if row.in_comparison]
    apart = not include_excluded and any(row.evaluation.is_excluded for group in groups for row in group.rows)
    several = len(groups) > 1
    them = "The charts" if several else "The chart"
    verb = "draw" if several else "draws"
    if compared:
        if include_excluded and any(row.evaluation.is_excluded for row in compared):
            return (
                f"{them} {verb} the source-checked results and, labelled as such, the results excluded from comparison."
            )
        return f"{them} {verb} the source-checked results only{', the excluded ones apart' if apart else ''}."
    if apart:
        return (
            f"{them} {verb} no compared result yet: no source-checked result compares, and the results excluded "
            "from comparison are drawn apart, not ranked."
        )
    return f"{them} {verb} no result yet: no result here has had its source checked."
