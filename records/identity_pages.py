"""The task, model and work pages: evidence across papers and protocols (records.agreement's rules),
read in a fixed number of queries whatever the number of rows.

A task page is a dataset's page: every metric (on one scale) that scores the task or a task of its
family, each as a ranked table of source-checked measurements with its chart, then whether the
independent measurements of each model agree. A model page lists every task it was measured on,
each measurement's rank within its protocol's comparison (records.comparisons) and the verdict. A
work page lists its versions (sources), the evaluations each reports and the models it introduced.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

from django.db.models import Count, Prefetch, Q
from django.utils.text import slugify

from records import agreement, charts, comparisons
from records import models as m
from records.selectors import record_or_404
from records.values import display
from reviews.models import EXCLUDED_STATES

# -- who measured, as rows say it --------------------------------------------------------------------


def measured_by_text(evaluation: m.Evaluation) -> str:
    """ "the model's authors", "a third party (Zhou et al. 2024)", "this portal"."""
    if evaluation.measured_by == m.MeasuredBy.AUTHORS:
        return "the model's authors"
    if evaluation.measured_by == m.MeasuredBy.THIRD_PARTY:
        name = evaluation.measured_by_name
        return f"a third party ({name})" if name else "a third party"
    return "this portal"


def printing_text(printing: agreement.Printing) -> str:
    """A printing's value with the source's digits, its spread and unit ("0.549 ±0.056 MCC")."""
    result = printing.result
    text = result.display_value
    if result.uncertainty_value is not None:
        text += f" ±{display(result.uncertainty_value)}"
    elif result.lower_bound is not None and result.upper_bound is not None:
        text += f" [{display(result.lower_bound)}, {display(result.upper_bound)}]"
    return f"{text} {result.unit}".strip()


def subject_of(evaluation: m.Evaluation) -> m.GenomicModel | m.Configuration:
    configuration = evaluation.configuration
    return configuration.model if configuration.model is not None else configuration


# -- the task page ---------------------------------------------------------------------------------


@dataclass
class TaskTableView:
    """One of the task page's ranked tables, with its anchor and chart."""

    table: agreement.TaskTable
    key: str
    chart: charts.Chart

    @property
    def direction_label(self) -> str:
        return m.Direction(self.table.direction).label if self.table.direction in m.Direction.values else ""

    @property
    def ranked(self) -> bool:
        return any(row.rank is not None for row in self.table.rows)


@dataclass
class TaskPage:
    dataset: m.Dataset
    family: list[m.Dataset]  # the other tasks a source says are the same data
    equivalences: list[m.TaskEquivalence]
    tables: list[TaskTableView]
    agreements: list[agreement.Agreement]
    sources: list[m.Source]
    evaluation_count: int
    rule: str = agreement.AGREEMENT_RULE

    @property
    def scored(self) -> bool:
        return bool(self.tables or self.agreements)


def task_page(*, stable_id: str) -> TaskPage:
    """The dataset (task) page: its own facts, its family, tables, charts and agreements (nine queries)."""
    dataset = record_or_404(
        m.Dataset.objects.select_related("source", "suite").prefetch_related("tasks", "protocols"), stable_id
    )
    evaluations, family_ids = agreement.evaluations_for_task(dataset)
    families = {task: dataset.pk for task in family_ids}
    equivalences = list(
        m.TaskEquivalence.objects.filter(Q(task_id__in=family_ids) | Q(same_as_id__in=family_ids))
        .select_related("task__suite", "same_as__suite", "source")
        .order_by("task__name", "same_as__name", "stable_id")
    )
    family: dict[int, m.Dataset] = {}
    for link in equivalences:
        for task in (link.task, link.same_as):
            if task.pk != dataset.pk:
                family.setdefault(task.pk, task)
    tables = []
    for table in agreement.task_tables(evaluations, families):
        key = slugify(f"{table.metric}-{table.unit}") or "metric"
        tables.append(TaskTableView(table=table, key=key, chart=task_chart(dataset=dataset, table=table, key=key)))
    found = agreement.agreements(evaluations, families)
    for item in found:
        item.task = dataset  # the page's own task names the family
    return TaskPage(
        dataset=dataset,
        family=sorted(family.values(), key=lambda task: (task.name, task.stable_id)),
        equivalences=equivalences,
        tables=tables,
        agreements=found,
        sources=_sources(evaluations),
        evaluation_count=len(evaluations),
    )


def _sources(evaluations: Iterable[m.Evaluation]) -> list[m.Source]:
    seen: dict[int, m.Source] = {}
    for evaluation in evaluations:
        for source in (evaluation.source, evaluation.original_source):
            if source is not None:
                seen.setdefault(source.pk, source)
    return sorted(seen.values(), key=lambda source: (source.title.lower(), source.stable_id))


def task_chart(*, dataset: m.Dataset, table: agreement.TaskTable, key: str) -> charts.Chart:
    """A task table drawn as the protocol page's charts are (records.charts.task_chart)."""
    return charts.task_chart(
        dataset=dataset,
        table=table,
        key=key,
        label_of=lambda evaluation: getattr(subject_of(evaluation), "short_name", "") or subject_of(evaluation).name,
        origin_of=measured_by_text,
    )


# -- the model page --------------------------------------------------------------------------------


@dataclass
class RankNote:
    """A printing's place in its protocol's comparison (records.comparisons.compare)."""

    protocol: m.Protocol
    group: str  # the comparison's dataset or task
    text: str
    rank: int | None = None


@dataclass
class MeasurementLine:
    measurement: agreement.Measurement
    ranks: list[RankNote] = field(default_factory=list)


@dataclass
class ModelTask:
    """The model on one task family and metric: its measurements, their ranks and the verdict."""

    agreement: agreement.Agreement
    lines: list[MeasurementLine]
    tasks: list[m.Dataset]  # the tasks of the family it was measured on


@dataclass
class ModelPage:
    model: m.GenomicModel
    aliases: list[m.ModelAlias]
    configurations: list[m.Configuration]
    merged: list[m.GenomicModel]  # models merged into this one
    tasks: list[ModelTask]
    evaluation_count: int
    rule: str = agreement.AGREEMENT_RULE

    @property
    def verdict_counts(self) -> list[tuple[str, int]]:
        counts: dict[str, int] = defaultdict(int)
        for task in self.tasks:
            counts[task.agreement.verdict_label] += 1
        return sorted(counts.items())


def model_page(*, stable_id: str) -> ModelPage:
    """The model's page (ten queries): its facts, and per task family and metric its measurements,
    their ranks within their protocols' comparisons and the verdict."""
    model = record_or_404(
        m.GenomicModel.objects.select_related("introduced_in", "merged_into").prefetch_related(
            Prefetch("aliases", queryset=m.ModelAlias.objects.select_related("source").order_by("alias")),
            Prefetch("configurations", queryset=m.Configuration.objects.order_by("name", "stable_id")),
            Prefetch("merged", queryset=m.GenomicModel.objects.order_by("name", "stable_id")),
        ),
        stable_id,
    )
    evaluations = agreement.evaluations_for_model(model)
    families = agreement.task_families({e.dataset_id for e in evaluations})
    ranks = protocol_ranks(evaluations)
    tasks = []
    for found in agreement.agreements(evaluations, families):
        lines = [
            MeasurementLine(
                measurement=measurement,
                ranks=[
                    ranks.get((p.evaluation.pk, p.result.pk))
                    or RankNote(protocol=p.evaluation.protocol, group=p.evaluation.dataset.name, text="not ranked")
                    for p in sorted(measurement.printings, key=lambda p: p is not measurement.shown)
                ],
            )
            for measurement in found.measurements
        ]
        seen = {p.evaluation.dataset_id: p.evaluation.dataset for x in found.measurements for p in x.printings}
        tasks.append(
            ModelTask(agreement=found, lines=lines, tasks=sorted(seen.values(), key=lambda d: (d.name, d.stable_id)))
        )
    tasks.sort(key=lambda t: (t.agreement.task.name.lower(), t.agreement.metric, t.agreement.task.stable_id))
    return ModelPage(
        model=model,
        aliases=list(model.aliases.all()),
        configurations=list(model.configurations.all()),
        merged=list(model.merged.all()),
        tasks=tasks,
        evaluation_count=len(evaluations),
    )


class _Rows(list):
    """A row's results, read as the related manager is (`evaluation.results.all()`)."""

    def all(self) -> _Rows:
        return self


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

    def __init__(
        self,
        pk: int,
        protocol_id: int,
        dataset: m.Dataset,
        state: str,
        different: str,
        repeats_id: int | None,
        original_state: str | None,
        configuration: str,
    ) -> None:
        self.pk, self.protocol_id, self.dataset, self.dataset_id = pk, protocol_id, dataset, dataset.pk
        self._state, self.different_measurement, self.repeats_id = state, different, repeats_id
        self.repeats = _Original(original_state) if repeats_id else None
        self.configuration = SimpleNamespace(name=configuration)
        self.results = _Rows()

    @property
    def review_state(self) -> str:  # read only: states are written by reviews.services alone
        return self._state


#: What records.comparisons.compare reads of the rows competing with the model's: values, not instances.
_COMPETING = (
    "pk",
    "stable_id",
    "value",
    "relation",
    "reference_configuration_id",
    "uncertainty_value",
    "lower_bound",
    "upper_bound",
    "evaluation_id",
    "evaluation__protocol_id",
    "evaluation__dataset_id",
    "evaluation__review_state",
    "evaluation__different_measurement",
    "evaluation__repeats_id",
    "evaluation__repeats__review_state",
    "evaluation__configuration__name",
)


def protocol_ranks(evaluations: Sequence[m.Evaluation]) -> dict[tuple[int, int], RankNote]:
    """(evaluation id, result id) -> the rank of each of `evaluations`' results in its protocol's
    comparison among source-checked rows (records.comparisons.compare over the rows of its protocol
    and task, read as values: two queries, and no model instance a competing row)."""
    protocols = {e.protocol_id: e.protocol for e in evaluations}
    datasets = {e.dataset_id: e.dataset for e in evaluations}
    groups = {(e.protocol_id, e.dataset_id) for e in evaluations}
    lines: dict[int, _Competitor] = {}
    references: set[int] = set()
    rows = m.Result.objects.filter(
        evaluation__protocol_id__in=list(protocols), evaluation__dataset_id__in=list(datasets)
    ).values_list(*_COMPETING)
    for row in rows.iterator(chunk_size=2000):
        (pk, stable_id, value, relation, reference, spread, lower, upper, evaluation_id, protocol_id, dataset_id) = row[
            :11
        ]
        if (protocol_id, dataset_id) not in groups:
            continue
        state, different, repeats_id, original_state, configuration = row[11:]
        line = lines.get(evaluation_id)
        if line is None:
            line = lines[evaluation_id] = _Competitor(
                evaluation_id,
                protocol_id,
                datasets[dataset_id],
                state,
                different,
                repeats_id,
                original_state,
                configuration,
            )
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
    named = m.Configuration.objects.in_bulk(sorted(references)) if references else {}
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


def _rank_text(protocol: m.Protocol, group: comparisons.ComparisonGroup, row: comparisons.ResultRow) -> str:
    if row.rank is not None:
        text = f"rank {row.rank} of {group.compared_count}"
        if row.is_best:
            text += " (best, tied within reported spread)" if row.best_tied else " (best)"
        elif row.tied_with_best:
            text += " (tied with the best within its reported spread)"
        return text
    if row.different_measurement:
        return "not ranked: a different measurement than the protocol's"
    if row.counted_through_original:
        return "not ranked here: counted once, with the measurement it reports again"
    if row.excluded_through_original:
        return "not ranked: the measurement it reports again is excluded"
    if row.evaluation.review_state in EXCLUDED_STATES:
        return "not ranked: excluded from comparison"
    if not row.in_comparison:
        return "not ranked: source not yet checked"
    if protocol.metric_direction == m.Direction.NONE:
        return "not ranked: a descriptive fact"
    return "not ranked: no other source-checked row to compare with"


# -- the work page ---------------------------------------------------------------------------------


@dataclass
class WorkPage:
    work: m.Work
    versions: Sequence[m.Source]  # each with `evaluation_count`
    models: list[m.GenomicModel]

    @property
    def evaluation_count(self) -> int:
        return sum(version.evaluation_count for version in self.versions)  # type: ignore[attr-defined]


def work_page(*, stable_id: str) -> WorkPage:
    work = record_or_404(m.Work.objects.all(), stable_id)
    versions = list(
        m.Source.objects.filter(work=work)
        .annotate(evaluation_count=Count("evaluations", distinct=True))
        .order_by("published_date", "title", "stable_id")
    )
    models = list(m.GenomicModel.objects.filter(introduced_in=work).order_by("name", "stable_id"))
    return WorkPage(work=work, versions=versions, models=models)
