"""Evidence across papers: one measurement however often it is printed, rankings of a task across
protocols, and whether independent measurements of a model on a task agree, by the evidence rules
(records.rules.evidence, which states them): this module reads the rows and groups them.

- **Same task.** A task and the tasks a source says (or a curator infers) are the same data
  (TaskEquivalence, followed transitively; an excluded one joins nothing) are one task family.
- **Same quantity.** Results of one metric compare across protocols once put on one scale
  (the protocol's `comparison_key` and `scale_factor`, records.rules.units). Only absolute results
  compare (a ratio or difference has its own reference).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Prefetch, QuerySet

from records.evidence_rows import ConfigurationRow, EvaluationRow, ResultRow
from records.models import (
    Configuration,
    Dataset,
    Direction,
    Evaluation,
    GenomicModel,
    Protocol,
    Relation,
    Result,
    Scale,
    TaskEquivalence,
)
from records.rules import evidence as rules
from records.rules.evidence import (
    AGREEMENT_RULE,
    MEASUREMENT_RULE,
    SCALE_RULE,
    TIE_RULE,
    Measurement,
    Printing,
    Ranked,
    Verdict,
)
from reviews.models import EXCLUDED_STATES

__all__ = ["AGREEMENT_RULE", "MEASUREMENT_RULE", "SCALE_RULE", "TIE_RULE", "Measurement", "Printing", "Verdict"]

#: What the rules read: evaluations as model instances (the API) or as values (the pages, the release).
EvaluationLike = Evaluation | EvaluationRow
ResultLike = Result | ResultRow


@dataclass(eq=False, slots=True)
class RankedRow(Ranked[Measurement]):
    """A task table's row: one measurement, ranked."""

    @property
    def measurement(self) -> Measurement:
        return self.item


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
        return rules.verdict_label(self.verdict, self.measurements)

    @property
    def disagreements(self) -> list[rules.Disagreement]:
        return [d for x in self.measurements for d in x.disagreements]

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

    linked = TaskEquivalence.objects.exclude(review_state__in=EXCLUDED_STATES)  # an excluded link joins nothing
    for a, b in linked.values_list("task_id", "same_as_id"):
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


def _scales(evaluations: Sequence[EvaluationLike]) -> dict[int, tuple[Decimal, tuple[str, str]]]:
    """Protocol id -> its scale factor and comparison key, worked out once a protocol (a page's few)."""
    found: dict[int, tuple[Decimal, tuple[str, str]]] = {}
    for evaluation in evaluations:
        protocol = evaluation.protocol
        if protocol.pk not in found:
            found[protocol.pk] = (protocol.scale_factor, protocol.comparison_key)
    return found


def measurements(
    evaluations: Sequence[EvaluationLike], families: dict[int, int], repeated_elsewhere: Iterable[int] = ()
) -> dict[tuple, Measurement]:
    """(subject, family, metric, origin) -> the measurement its printings make; `repeated_elsewhere`
    names evaluations that evaluations not among `evaluations` repeat."""
    repeated = {e.repeats_id for e in evaluations if e.repeats_id} | set(repeated_elsewhere)
    scales = _scales(evaluations)
    printings = [
        rules.printing_of(evaluation, result, factor=scales[evaluation.protocol.pk][0])
        for evaluation in evaluations
        if not evaluation.different_measurement
        for result in evaluation.results.all()
        if result.relation == Relation.ABSOLUTE
    ]

    def key_of(printing: Printing) -> tuple:
        evaluation = printing.evaluation
        return (
            rules.subject_key(evaluation),
            families.get(evaluation.dataset_id, evaluation.dataset_id),
            scales[evaluation.protocol.pk][1],
            rules.origin_key(evaluation, repeated=repeated),
        )

    return rules.measurements_of(printings, key_of=key_of)


def agreements(
    evaluations: Sequence[EvaluationLike], families: dict[int, int], repeated_elsewhere: Iterable[int] = ()
) -> list[Agreement]:
    """Every subject x task family x metric with its measurements and verdict, most measurements first
    (`repeated_elsewhere` as `measurements` reads it)."""
    grouped: dict[tuple, list[Measurement]] = defaultdict(list)
    for key, measurement in measurements(evaluations, families, repeated_elsewhere).items():
        grouped[key[:3]].append(measurement)
    result = []
    for (_subject, _family, (metric, _scale)), found in grouped.items():
        found.sort(key=lambda x: (x.is_excluded, -x.value, x.shown.evaluation.stable_id))
        evaluation = found[0].shown.evaluation
        configuration = evaluation.configuration
        subject: GenomicModel | Configuration | ConfigurationRow = configuration.model or configuration
        result.append(
            Agreement(
                subject=subject,
                task=evaluation.dataset,
                metric=metric,
                measurements=found,
                verdict=rules.verdict(found),
            )
        )
    result.sort(key=lambda a: (-len(a.measurements), a.task.name, str(a.subject), a.metric))
    return result


@dataclass
class TaskTable:
    """One metric on one scale across every protocol that scores the task family: source-checked
    measurements only, each once, ranked (records.rules.evidence.rank)."""

    metric: str
    unit: str  # the plain scale's name ("MCC"), or the raw unit's
    direction: str
    protocols: list[Protocol]
    rows: list[RankedRow]

    @property
    def tied(self) -> bool:
        return any(row.tied_with_best for row in self.rows)

    @property
    def scaled(self) -> bool:
        """Whether some of its protocols print on another scale than the plain one."""
        return any(p.scale_factor != 1 for p in self.protocols)


def ranked_evaluations(evaluations: Sequence[EvaluationLike]) -> list[EvaluationLike]:
    """The evaluations whose measurements the task tables rank: source-checked, of the protocol's own
    measurement, and not repeating an excluded original."""
    states = rules.compared_states(include_excluded=False)
    return [
        e
        for e in evaluations
        if e.review_state in states and not e.different_measurement and rules.compared_with_original(e, states=states)
    ]


def _table_unit(protocols: Sequence[Protocol]) -> str:
    plain = [p for p in protocols if p.scale_factor == 1]
    first = (plain or list(protocols))[0]
    if first.metric_scale == Scale.RAW:
        return first.metric_unit
    return first.metric_name


def task_tables(evaluations: Sequence[EvaluationLike], families: dict[int, int]) -> list[TaskTable]:
    """The task page's tables: per metric on one scale, the compared measurements ranked, each printed once."""
    by_table: dict[tuple[str, str], list[EvaluationLike]] = {}
    protocols: dict[tuple[str, str], dict[int, Protocol]] = defaultdict(dict)
    scales = _scales(evaluations)
    for evaluation in evaluations:  # every table, even one with no compared row yet
        if not any(result.relation == Relation.ABSOLUTE for result in evaluation.results.all()):
            continue  # a ratio or difference has its own reference: no table here
        key = scales[evaluation.protocol.pk][1]
        by_table.setdefault(key, [])
        protocols[key][evaluation.protocol.pk] = evaluation.protocol
    for evaluation in ranked_evaluations(evaluations):
        members = by_table.get(scales[evaluation.protocol.pk][1])
        if members is not None:
            members.append(evaluation)
    tables = []
    for key, members in sorted(by_table.items()):
        named = sorted(protocols[key].values(), key=lambda p: p.title)
        direction = named[0].metric_direction if named else Direction.NONE
        found = list(measurements(members, families).values())
        rows = rules.rank(
            found,
            printing_of=lambda x: x.shown,
            direction=direction,
            name_of=lambda x: x.shown.evaluation.stable_id,
            row_type=RankedRow,
        )
        tables.append(
            TaskTable(metric=key[0], unit=_table_unit(named), direction=direction, protocols=named, rows=rows)
        )
    return tables
