"""The model page: every task a model was measured on across papers and protocols, each measurement's
rank within its protocol's comparison (records.comparisons) and whether the measurements agree
(records.agreement), bounded whatever the number of rows.

Every measurement of the model is read (as values: records.evidence_rows) so that the verdicts and
their counts are true; the page shows TASKS_PER_PAGE tasks (task family and metric) at a time, the
conflicting first, each with its first MEASUREMENTS_SHOWN measurements and a link to all of them:
`?task=<task>&metric=<metric>` shows that one task with its measurements paged. Ranks are computed
for the measurements shown only, reading the rows that compete with them as values (two queries).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from django.db.models import Prefetch, Q
from django.http import QueryDict

from records import agreement, comparisons, evidence_rows, page_lists
from records.models import Configuration, Dataset, Direction, GenomicModel, ModelAlias, Protocol, Result
from records.rules.provenance import PROVENANCE_COLUMNS, provenance_from
from records.selectors import record_or_404
from reviews.models import EXCLUDED_STATES

TASKS_PER_PAGE = 20
MEASUREMENTS_SHOWN = 5
MEASUREMENTS_PER_PAGE = 25
CONFIGURATIONS_PER_PAGE = 25
PRINTINGS_RANKED = 3  # a line ranks its compared printing and at most two copies
TASK_PARAM, METRIC_PARAM = "task", "metric"
#: Verdicts in the order the pages count and list them: where measurements disagree first.
VERDICT_ORDER = (
    agreement.Verdict.TRANSCRIPTION,
    agreement.Verdict.CONFLICTING,
    agreement.Verdict.SELF_CONFLICTING,
    agreement.Verdict.CONSISTENT,
    agreement.Verdict.SELF_CONSISTENT,
    agreement.Verdict.SINGLE,
)


def verdict_counts(found: Sequence[agreement.Agreement]) -> list[tuple[str, int]]:
    """(verdict label, count), the conflicting first, verdicts that none has left out."""
    counts: dict[str, int] = defaultdict(int)
    for item in found:
        counts[item.verdict] += 1
    return [(agreement.Verdict.LABELS[verdict], counts[verdict]) for verdict in VERDICT_ORDER if counts[verdict]]


def conflicts_counted(counts: Sequence[tuple[str, int]]) -> int:
    """How many of the verdicts counted (`verdict_counts`) are conflicts of any kind."""
    by_label = dict(counts)
    return sum(by_label.get(agreement.Verdict.LABELS[verdict], 0) for verdict in agreement.Verdict.CONFLICTS)


def conflicting_first(item: agreement.Agreement) -> int:
    """Conflicts first (a transcription conflict, then independent, then self-reported ones)."""
    conflicts = agreement.Verdict.CONFLICTS
    return conflicts.index(item.verdict) if item.verdict in conflicts else len(conflicts)


@dataclass
class RankNote:
    """A printing's place in its protocol's comparison (records.comparisons.compare)."""

    protocol: Protocol
    group: str  # the comparison's dataset or task
    text: str
    rank: int | None = None


@dataclass
class MeasurementLine:
    measurement: agreement.Measurement
    ranks: list[RankNote] = field(default_factory=list)
    unranked: int = 0  # printings past PRINTINGS_RANKED, counted, not ranked here


@dataclass
class ModelTask:
    """The model on one task family and metric: its measurements (those shown with their ranks) and the verdict."""

    agreement: agreement.Agreement
    tasks: list[Dataset]  # the tasks of the family it was measured on
    lines: page_lists.Listed[MeasurementLine] = field(
        default_factory=lambda: page_lists.first_of([], count=MEASUREMENTS_SHOWN)
    )

    @property
    def family(self) -> int:
        return self.agreement.measurements[0].key[1]

    @property
    def query(self) -> str:
        """The query string of the page that shows this task's every measurement."""
        query = QueryDict(mutable=True)
        query[TASK_PARAM] = self.tasks[0].stable_id
        query[METRIC_PARAM] = self.agreement.metric
        return query.urlencode()


@dataclass
class ModelPage:
    model: GenomicModel
    aliases: list[ModelAlias]
    configurations: page_lists.Listed[Configuration]
    merged: list[GenomicModel]  # models merged into this one
    tasks: page_lists.Listed[ModelTask]
    verdict_counts: list[tuple[str, int]]
    evaluation_count: int
    task_count: int  # tasks and metrics in all
    chosen: str = ""  # the task and metric asked for (`?task=&metric=`), as given
    rule: str = agreement.AGREEMENT_RULE
    measurement_rule: str = agreement.MEASUREMENT_RULE
    tie_rule: str = agreement.TIE_RULE

    @property
    def filtered(self) -> bool:
        return bool(self.chosen)

    @property
    def conflicting(self) -> int:
        return conflicts_counted(self.verdict_counts)


def model_page(*, stable_id: str, params: QueryDict) -> ModelPage:
    """The model's page (at most sixteen queries): its facts, and per task family and metric its
    measurements, their ranks within their protocols' comparisons and the verdict."""
    model = record_or_404(
        GenomicModel.objects.select_related("introduced_in", "merged_into").prefetch_related(
            Prefetch("aliases", queryset=ModelAlias.objects.select_related("source").order_by("alias")),
            Prefetch("merged", queryset=GenomicModel.objects.order_by("name", "stable_id")),
        ),
        stable_id,
    )
    configurations = page_lists.listed(
        Configuration.objects.filter(model=model).order_by("name", "stable_id"),
        key="configurations",
        params=params,
        per_page=CONFIGURATIONS_PER_PAGE,
    )
    evaluations = evidence_rows.evaluation_rows(lookups={"configuration__model": model})
    families = agreement.task_families({e.dataset_id for e in evaluations})
    found = agreement.agreements(evaluations, families)  # rows that read as evaluations (records.evidence_rows)
    tasks = []
    for item in found:
        seen = {p.evaluation.dataset_id: p.evaluation.dataset for x in item.measurements for p in x.printings}
        tasks.append(ModelTask(agreement=item, tasks=sorted(seen.values(), key=lambda d: (d.name, d.stable_id))))
    tasks.sort(
        key=lambda t: (
            conflicting_first(t.agreement),
            t.tasks[0].name.lower(),
            t.agreement.metric,
            t.tasks[0].stable_id,
        )
    )
    task_text, metric = params.get(TASK_PARAM, "")[:150], params.get(METRIC_PARAM, "")[:100]
    chosen = ""
    if task_text:
        chosen = f"{task_text} · {metric}" if metric else task_text
        named = {e.dataset.stable_id: e.dataset_id for e in evaluations}
        family = families.get(named[task_text]) if task_text in named else None
        tasks = [t for t in tasks if t.family == family and (not metric or t.agreement.metric == metric)]
    shown = page_lists.listed(tasks, key="tasks", params=params, per_page=TASKS_PER_PAGE)
    for task in shown.items:
        lines = [MeasurementLine(measurement=x) for x in task.agreement.measurements]
        task.lines = (
            page_lists.listed(lines, key="measurements", params=params, per_page=MEASUREMENTS_PER_PAGE)
            if chosen
            else page_lists.first_of(lines, count=MEASUREMENTS_SHOWN)
        )
    _rank_lines([line for task in shown.items for line in task.lines.items])
    return ModelPage(
        model=model,
        aliases=list(model.aliases.all()),
        configurations=configurations,
        merged=list(model.merged.all()),
        tasks=shown,
        verdict_counts=verdict_counts(found),
        evaluation_count=len(evaluations),
        task_count=len(found),
        chosen=chosen,
    )


def _printings_ranked(measurement: agreement.Measurement) -> list[agreement.Printing]:
    """The printings whose ranks a line shows: the compared one first, at most PRINTINGS_RANKED."""
    return sorted(measurement.printings, key=lambda p: p is not measurement.shown)[:PRINTINGS_RANKED]


def _rank_lines(lines: Sequence[MeasurementLine]) -> None:
    """Each line's rank notes, one a printing shown (the compared one first)."""
    ranks = protocol_ranks([p.evaluation for line in lines for p in _printings_ranked(line.measurement)])
    for line in lines:
        line.ranks = [
            ranks.get((p.evaluation.pk, p.result.pk))
            or RankNote(protocol=p.evaluation.protocol, group=p.evaluation.dataset.name, text="not ranked")
            for p in _printings_ranked(line.measurement)
        ]
        line.unranked = len(line.measurement.printings) - len(line.ranks)


class _Original:
    """The review state of the evaluation a competitor repeats (what compare reads of it)."""

    def __init__(self, state: str | None) -> None:
        self._state = state

    @property
    def review_state(self) -> str | None:  # read only: states are written by reviews.services alone
        return self._state


class _Competitor:
    """An evaluation competing with the model's in a comparison, as records.comparisons.compare reads it
    (read-only values: no model instance)."""

    def __init__(self, row: tuple[Any, ...], dataset: Dataset) -> None:
        (self.pk, self.stable_id, self.protocol_id, _dataset, self._state, self.different_measurement) = row[:6]
        self.repeats_id, original_state, name, self.configuration_id, model_id = row[6:11]
        self.dataset, self.dataset_id = dataset, dataset.pk
        self.repeats = _Original(original_state) if self.repeats_id else None
        self.configuration = SimpleNamespace(name=name, model_id=model_id)
        self.provenance = provenance_from(row[11:])
        self.results = evidence_rows.Results()

    @property
    def review_state(self) -> str:  # read only: states are written by reviews.services alone
        return self._state


#: What records.comparisons.compare reads of the rows competing with the model's: values, not instances.
_RESULT_COLUMNS = (
    "pk",
    "stable_id",
    "value",
    "relation",
    "reference_configuration_id",
    "uncertainty_value",
    "lower_bound",
    "upper_bound",
)
_EVALUATION_COLUMNS = (
    "id",
    "stable_id",
    "protocol_id",
    "dataset_id",
    "review_state",
    "different_measurement",
    "repeats_id",
    "repeats__review_state",
    "configuration__name",
    "configuration_id",
    "configuration__model_id",
    *PROVENANCE_COLUMNS,
)
_COMPETING = (*_RESULT_COLUMNS, *(f"evaluation__{column}" for column in _EVALUATION_COLUMNS))


def protocol_ranks(evaluations: Sequence[evidence_rows.EvaluationRow]) -> dict[tuple[int, int], RankNote]:
    """(evaluation id, result id) -> the rank of each of `evaluations`' results in its protocol's
    comparison among source-checked rows (records.comparisons.compare over the rows of its protocol
    and task, read as values: two queries, and no model instance a competing row). Only the groups
    (protocol, task) of `evaluations` are read: the page passes the rows it shows."""
    protocols = {e.protocol_id: e.protocol for e in evaluations}
    datasets = {e.dataset_id: e.dataset for e in evaluations}
    groups: dict[int, set[int]] = defaultdict(set)
    for e in evaluations:
        groups[e.protocol_id].add(e.dataset_id)
    if not groups:
        return {}
    where = Q()  # one term a protocol: the page's few, never one a row
    for protocol_id, dataset_ids in sorted(groups.items()):
        where |= Q(evaluation__protocol_id=protocol_id, evaluation__dataset_id__in=sorted(dataset_ids))
    lines: dict[int, _Competitor] = {}
    references: set[int] = set()
    width = len(_RESULT_COLUMNS)
    for row in Result.objects.filter(where).values_list(*_COMPETING):  # one fetch: a page's groups
        pk, stable_id, value, relation, reference, spread, lower, upper = row[:width]
        evaluation = row[width:]
        line = lines.get(evaluation[0])
        if line is None:
            line = lines[evaluation[0]] = _Competitor(evaluation, datasets[evaluation[3]])
        line.results.append(
            SimpleNamespace(
                pk=pk,
                stable_id=stable_id,
                value=value,
                relation=relation,
                reference_configuration_id=reference,
                reference_configuration=None,
                uncertainty_value=spread,
                lower_bound=lower,
                upper_bound=upper,
            )
        )
        if reference:
            references.add(reference)
    named = Configuration.objects.in_bulk(sorted(references)) if references else {}
    by_protocol: dict[int, list[_Competitor]] = defaultdict(list)
    for line in lines.values():
        for result in line.results:
            result.reference_configuration = named.get(result.reference_configuration_id)
        by_protocol[line.protocol_id].append(line)
    mine = {e.pk for e in evaluations}
    notes: dict[tuple[int, int], RankNote] = {}
    for protocol_id, members in by_protocol.items():
        protocol = protocols[protocol_id]
        for group in comparisons.compare(protocol=protocol, evaluations=members, include_excluded=False):
            for row in group.rows:
                if row.evaluation.pk in mine:
                    notes[(row.evaluation.pk, row.result.pk)] = RankNote(
                        protocol=protocol, group=group.label, text=_rank_text(protocol, group, row), rank=row.rank
                    )
    return notes


def _rank_text(protocol: Protocol, group: comparisons.ComparisonGroup, row: comparisons.ResultRow) -> str:
    if row.rank is not None:
        text = f"rank {row.rank} of {group.compared_count}"
        if row.is_best:
            text += " (best, tied with a runner-up)" if row.best_tied else " (best)"
        elif row.tied_with_best:
            text += " (tied with the best)"
        return text
    if row.different_measurement:
        return "not ranked: a different measurement than the protocol's"
    if row.disagreement:
        return f"not ranked: {row.disagreement} ({row.same_as[1] if row.same_as else ''} is compared)"
    if row.counted_through_original:
        return "not ranked here: the same value as another printing of the measurement, counted once"
    if row.excluded_through_original:
        return "not ranked: the measurement it reports again is excluded"
    if row.evaluation.review_state in EXCLUDED_STATES:
        return "not ranked: excluded from comparison"
    if not row.in_comparison:
        return "not ranked: source not yet checked"
    if protocol.metric_direction == Direction.NONE:
        return "not ranked: a descriptive fact"
    return "not ranked: no other source-checked row to compare with"
