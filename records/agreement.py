"""Evidence across papers: one measurement however often it is printed, rankings of a task across
protocols, and whether independent measurements of a model on a task agree.

The rules, as the model and task pages state them (AGREEMENT_RULE):

- **Same task.** A task and the tasks a source says are the same data (TaskEquivalence, followed
  transitively) are one task family.
- **Same quantity.** Results of one metric (the protocol's `metric_short_name`) compare across
  protocols once put on one scale: a unit "<name> x 100" or "%" is divided by 100. Only absolute
  results compare (a ratio or difference has its own reference).
- **Same measurement.** Rows that print one measurement count once: a repeat with its original
  (`repeats`); a copy (`original_source`, `original_citation`) with the original and the other
  copies of it for the same model, task family and metric; and every row of one work (its versions)
  for the same model, task family and metric. Of these the most precise printing is compared
  (the most digits on the common scale: 0.549±0.056 before the figure label 0.55), then one with a
  stated spread, then a source-checked one.
- **Verdict** for a model (or, when a configuration names no model, the configuration) on a task
  family and metric, over its measurements in every review state but "a different measurement":
  one measurement: *single measurement*; all by the model's own authors: *self-reported only*;
  otherwise *consistent* when every two values are within their stated spreads (the sum of both
  ± figures) or, where a value has none, within the tolerance (AGREEMENT_TOLERANCE of the larger
  value, or the one ± figure given if larger), each widened by half a unit of its last printed
  digit; else *conflicting*.
- **Tied within reported spread.** A best mark whose runner-up lies within the best value's own
  stated spread says so.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Prefetch, QuerySet

from records.evidence_rows import ConfigurationRow, EvaluationRow, ResultRow
from records.models import (
    Configuration,
    Dataset,
    Direction,
    Evaluation,
    GenomicModel,
    MeasuredBy,
    Protocol,
    Relation,
    Result,
    TaskEquivalence,
)
from records.works import title_key
from reviews.models import EXCLUDED_STATES, ReviewState

AGREEMENT_TOLERANCE = Decimal("0.05")

AGREEMENT_RULE = (
    "Measurements of one model on one task (with the tasks a source says are the same data) and one metric, "
    "on one scale (x 100 and % divided by 100), each counted once: a copy of a number first published elsewhere "
    "counts with its original, and the most precise printing is compared. One measurement: single measurement. "
    "All by the model's own authors: self-reported only. Otherwise consistent when every two values lie within "
    "their stated ± spreads added together, or, where one has none, within "
    f"{int(AGREEMENT_TOLERANCE * 100)}% of the larger value (or the one spread given, if wider), each widened by "
    "half a unit of its last printed digit; else conflicting. Excluded measurements count, marked as such."
)


#: What the rules read: evaluations as model instances (the API) or as values (the pages, the release).
EvaluationLike = Evaluation | EvaluationRow
ResultLike = Result | ResultRow


class Verdict:
    SINGLE = "single_measurement"
    SELF_REPORTED = "self_reported_only"
    CONSISTENT = "consistent"
    CONFLICTING = "conflicting"
    LABELS = {
        SINGLE: "single measurement",
        SELF_REPORTED: "self-reported only",
        CONSISTENT: "consistent",
        CONFLICTING: "conflicting",
    }
    CHOICES = tuple(LABELS.items())


def scale_of(unit: str) -> Decimal:
    """The factor that puts a unit on its metric's plain scale: 100 for "<name> x 100" and "%"."""
    text = (unit or "").strip().lower()
    return Decimal(100) if text == "%" or text.endswith(" x 100") or text.endswith("×100") else Decimal(1)


def _exponent(value: Decimal) -> int:
    """The exponent of the last printed digit (0.55 -> -2); values are finite (records.values)."""
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int), value
    return exponent


def _half_unit(value: Decimal) -> Decimal:
    """Half a unit of the last printed digit (0.55 -> 0.005)."""
    return Decimal(5).scaleb(_exponent(value) - 1)


@dataclass
class Printing:
    """One row (evaluation and its absolute result) that prints a measurement."""

    evaluation: EvaluationLike
    result: ResultLike
    value: Decimal  # on the common scale
    spread: Decimal | None  # the ± figure on the common scale (half the interval for bounds)
    precision: int  # the exponent of the last printed digit on the common scale (lower: more precise)

    @property
    def is_copy(self) -> bool:
        return self.evaluation.is_copy

    @property
    def compared(self) -> bool:
        return self.evaluation.review_state == ReviewState.SOURCE_CHECKED


@dataclass
class Measurement:
    """One measurement of a model (or configuration) on a task family and metric, with every printing of it."""

    key: tuple
    printings: list[Printing] = field(default_factory=list)

    @functools.cached_property
    def shown(self) -> Printing:
        """The printing compared: the most precise, then one with a spread, then a source-checked one
        (read once every printing is in)."""
        return min(
            self.printings,
            key=lambda p: (p.precision, p.spread is None, not p.compared, p.evaluation.pk or 0),
        )

    @property
    def copies(self) -> list[Printing]:
        shown = self.shown
        return [p for p in self.printings if p is not shown]

    @property
    def measured_by(self) -> str:
        return self.shown.evaluation.measured_by

    @property
    def measured_by_label(self) -> str:
        evaluation = self.shown.evaluation
        return evaluation.measured_by_name or evaluation.get_measured_by_display()

    @property
    def value(self) -> Decimal:
        return self.shown.value

    @property
    def spread(self) -> Decimal | None:
        return self.shown.spread

    @property
    def review_state(self) -> str:
        return self.shown.evaluation.review_state

    @property
    def is_excluded(self) -> bool:
        return self.review_state in EXCLUDED_STATES


@dataclass
class Agreement:
    """Whether the measurements of one subject (a model, or a configuration naming none) on one task family and metric agree."""

    subject: GenomicModel | Configuration | ConfigurationRow
    task: Dataset  # the family's task first seen (the page's own, on a task page)
    metric: str
    measurements: list[Measurement]
    verdict: str = ""

    @property
    def verdict_label(self) -> str:
        return Verdict.LABELS[self.verdict]

    @property
    def subject_is_model(self) -> bool:
        return isinstance(self.subject, GenomicModel)


def task_families(task_ids: Iterable[int] | None = None) -> dict[int, int]:
    """Task id -> the smallest task id of its family (itself when no source links it to another)."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in TaskEquivalence.objects.values_list("task_id", "same_as_id"):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    families = {task: find(task) for task in list(parent)}
    for task in task_ids or ():
        families.setdefault(task, task)
    return families


def family_of(task_id: int) -> set[int]:
    families = task_families([task_id])
    root = families[task_id]
    return {task for task, r in families.items() if r == root}


def evidence_queryset() -> QuerySet[Evaluation]:
    """Evaluations with everything the rules read, in a fixed number of queries."""
    return (
        Evaluation.objects.exclude(different_measurement__gt="")
        .select_related(
            "protocol",
            "dataset",
            "configuration__model",
            "source__work",
            "original_source__work",
            "repeats",
        )
        .prefetch_related(
            Prefetch("results", queryset=Result.objects.filter(relation=Relation.ABSOLUTE).order_by("stable_id"))
        )
        .order_by("id")
    )


def evaluations_for_task(task: Dataset) -> tuple[list[Evaluation], set[int]]:
    family = family_of(task.pk)
    return list(evidence_queryset().filter(dataset_id__in=family)), family


def evaluations_for_model(model: GenomicModel) -> list[Evaluation]:
    return list(evidence_queryset().filter(configuration__model=model))


def _subject_key(evaluation: EvaluationLike) -> tuple[str, int]:
    configuration = evaluation.configuration
    return ("model", configuration.model_id) if configuration.model_id else ("configuration", configuration.pk)


def _origin(evaluation: EvaluationLike) -> tuple:
    """What makes two printings one measurement, besides subject, task family and metric."""
    if evaluation.repeats_id:
        return ("evaluation", evaluation.repeats_id)
    if evaluation.original_source is not None:
        original = evaluation.original_source
        return ("work", original.work_id) if original.work_id else ("source", original.pk)
    if evaluation.original_citation:
        return ("citation", title_key(evaluation.original_citation))
    source = evaluation.source
    if source is None:  # the portal's own run: its own measurement
        return ("evaluation", evaluation.pk)
    return ("work", source.work_id) if source.work_id else ("source", source.pk)


def measurements(
    evaluations: Sequence[EvaluationLike], families: dict[int, int], repeated_elsewhere: Iterable[int] = ()
) -> dict[tuple, Measurement]:
    """(subject, family, metric, origin) -> the measurement its printings make; `repeated_elsewhere`
    names evaluations that evaluations not among `evaluations` repeat."""
    repeated = {e.repeats_id for e in evaluations if e.repeats_id} | set(repeated_elsewhere)
    found: dict[tuple, Measurement] = {}
    for evaluation in evaluations:
        if evaluation.different_measurement:
            continue
        family = families.get(evaluation.dataset_id, evaluation.dataset_id)
        # an original that others repeat is keyed as its repeats key it
        origin = ("evaluation", evaluation.pk) if evaluation.pk in repeated else _origin(evaluation)
        for result in evaluation.results.all():
            if result.relation != Relation.ABSOLUTE:
                continue
            factor = scale_of(result.unit)
            spread = _spread(result)
            key = (_subject_key(evaluation), family, evaluation.protocol.metric_short_name, origin)
            printing = Printing(
                evaluation=evaluation,
                result=result,
                value=result.value / factor,
                spread=spread / factor if spread is not None else None,
                precision=_exponent(result.value) - (2 if factor == 100 else 0),
            )
            found.setdefault(key, Measurement(key=key)).printings.append(printing)
    return found


def _spread(result: ResultLike) -> Decimal | None:
    if result.uncertainty_value is not None:
        return result.uncertainty_value
    if result.lower_bound is not None and result.upper_bound is not None:
        return (result.upper_bound - result.lower_bound) / 2
    return None


def _within(a: Measurement, b: Measurement) -> bool:
    difference = abs(a.value - b.value)
    rounding = _half_unit(a.shown.result.value) / scale_of(a.shown.result.unit) + _half_unit(
        b.shown.result.value
    ) / scale_of(b.shown.result.unit)
    if a.spread is not None and b.spread is not None:
        allowed = a.spread + b.spread
    else:
        tolerance = AGREEMENT_TOLERANCE * max(abs(a.value), abs(b.value))
        allowed = max(tolerance, a.spread or Decimal(0), b.spread or Decimal(0))
    return difference <= allowed + rounding


def verdict(found: Sequence[Measurement]) -> str:
    if len(found) <= 1:
        return Verdict.SINGLE
    if all(x.measured_by == MeasuredBy.AUTHORS for x in found):
        return Verdict.SELF_REPORTED
    pairs = ((a, b) for i, a in enumerate(found) for b in found[i + 1 :])
    return Verdict.CONSISTENT if all(_within(a, b) for a, b in pairs) else Verdict.CONFLICTING


def agreements(
    evaluations: Sequence[EvaluationLike], families: dict[int, int], repeated_elsewhere: Iterable[int] = ()
) -> list[Agreement]:
    """Every subject x task family x metric with its measurements and verdict, most measurements first
    (`repeated_elsewhere` as `measurements` reads it)."""
    grouped: dict[tuple, list[Measurement]] = defaultdict(list)
    for key, measurement in measurements(evaluations, families, repeated_elsewhere).items():
        grouped[key[:3]].append(measurement)
    result = []
    for (_subject, _family, metric), found in grouped.items():
        found.sort(key=lambda x: (x.is_excluded, -x.value, x.shown.evaluation.stable_id))
        evaluation = found[0].shown.evaluation
        configuration = evaluation.configuration
        subject: GenomicModel | Configuration | ConfigurationRow = configuration.model or configuration
        result.append(
            Agreement(
                subject=subject, task=evaluation.dataset, metric=metric, measurements=found, verdict=verdict(found)
            )
        )
    result.sort(key=lambda a: (-len(a.measurements), a.task.name, str(a.subject), a.metric))
    return result


@dataclass
class RankedRow:
    measurement: Measurement
    rank: int | None = None
    is_best: bool = False
    tied_with_best: bool = False  # the best's stated spread reaches this value


@dataclass
class TaskTable:
    """One metric on one scale across every protocol that scores the task family: source-checked
    measurements only, each once, ranked."""

    metric: str
    unit: str
    direction: str
    protocols: list[Protocol]
    rows: list[RankedRow]

    @property
    def tied(self) -> bool:
        return any(row.tied_with_best for row in self.rows)


def task_tables(evaluations: Sequence[EvaluationLike], families: dict[int, int]) -> list[TaskTable]:
    """The task page's tables: per (metric, unit), the compared measurements ranked, copies counted once."""
    compared = [
        e
        for e in evaluations
        if e.review_state == ReviewState.SOURCE_CHECKED
        and not e.different_measurement
        and not (e.repeats is not None and e.repeats.review_state != ReviewState.PROPOSED)
    ]
    by_table: dict[tuple[str, str], list[EvaluationLike]] = defaultdict(list)
    for evaluation in evaluations:  # every table, even one with no compared row yet
        for result in evaluation.results.all():
            by_table.setdefault((evaluation.protocol.metric_short_name, result.unit), [])
    for evaluation in compared:
        units = {result.unit for result in evaluation.results.all()}
        for unit in units:
            by_table[(evaluation.protocol.metric_short_name, unit)].append(evaluation)
    tables = []
    for (metric, unit), members in sorted(by_table.items()):
        protocols = sorted(
            {e.protocol.pk: e.protocol for e in evaluations if e.protocol.metric_short_name == metric}.values(),
            key=lambda p: p.title,
        )
        direction = protocols[0].metric_direction if protocols else Direction.NONE
        found = [x for x in measurements(members, families).values() if x.shown.result.unit == unit]
        tables.append(
            TaskTable(metric=metric, unit=unit, direction=direction, protocols=protocols, rows=rank(found, direction))
        )
    return tables


def rank(found: Sequence[Measurement], direction: str) -> list[RankedRow]:
    """Best first; rank and best marks where at least two compare and the metric has a direction;
    rows the best's own spread reaches are tied with it."""
    lower = direction == Direction.LOWER
    ranked = direction != Direction.NONE
    rows = [RankedRow(measurement=x) for x in found]
    rows.sort(
        key=lambda r: (
            (r.measurement.value if lower else -r.measurement.value) if ranked else 0,
            r.measurement.shown.evaluation.stable_id,
        )
    )
    if not ranked or len(rows) < 2:
        return rows
    previous: Decimal | None = None
    for position, row in enumerate(rows, start=1):  # sorted: equal values are neighbours and share a rank
        if row.measurement.value != previous:
            rank_here, previous = position, row.measurement.value
        row.rank = rank_here
        row.is_best = rank_here == 1
    best = rows[0].measurement
    if best.spread is not None:
        for row in rows[1:]:
            if not row.is_best and abs(best.value - row.measurement.value) <= best.spread:
                row.tied_with_best = True
    return rows


def tied_within_spread(*, best: Result, runner_up: Result) -> bool:
    """Whether the runner-up's value lies within the best result's stated spread (same unit)."""
    spread = _spread(best)
    return spread is not None and abs(best.value - runner_up.value) <= spread
