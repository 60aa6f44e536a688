"""The task, work, source and configuration pages: evidence across papers and protocols
(records.agreement's rules), read in a fixed number of queries and written one page at a time
(records.page_lists) whatever the number of rows. The model page is pages.model_page.

A task page is a dataset's page: every metric (on one scale) that scores the task or a task of its
family, each as a ranked table of source-checked measurements (TABLE_ROWS a page) with the chart of
the rows shown and the table's best value over time (pages.timeline), then whether the
independent measurements of each model agree: the verdicts counted, the conflicting listed first.
Every measurement of the family is read as values (records.evidence_rows) so that ranks, counts and
verdicts are true; only the page is rendered. A work page lists its versions (sources), the
evaluations each reports and the models it introduced; a source page the records citing it; a
configuration page its evaluations.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from django.db.models import Count, Q, QuerySet
from django.http import QueryDict
from django.utils.text import slugify

from pages import charts, timeline
from pages.model_page import (
    MEASUREMENTS_SHOWN,
    METRIC_PARAM,
    TASK_PARAM,
    conflicting_first,
    conflicts_counted,
    verdict_counts,
)
from records import agreement, evidence_rows, page_lists
from records.models import (
    Configuration,
    Dataset,
    Direction,
    Evaluation,
    GenomicModel,
    MeasuredBy,
    Protocol,
    Source,
    TaskEquivalence,
    Work,
)
from records.selectors import evaluations_queryset, record_or_404
from records.values import display

TABLE_ROWS = 25
AGREEMENTS_PER_PAGE = 10
SOURCES_PER_PAGE = 25
TASKS_PER_PAGE = 50
PROTOCOLS_PER_PAGE = 25
PROTOCOLS_NAMED = 5  # a table names its first protocols and counts the others
EVALUATIONS_PER_PAGE = 25

# -- who measured, as rows say it --------------------------------------------------------------------


def measured_by_text(evaluation: Evaluation) -> str:
    """ "the model's authors", "a third party (Zhou et al. 2024)", "this portal"."""
    if evaluation.measured_by == MeasuredBy.AUTHORS:
        return "the model's authors"
    if evaluation.measured_by == MeasuredBy.THIRD_PARTY:
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


def subject_of(evaluation: Evaluation) -> GenomicModel | Configuration:
    configuration = evaluation.configuration
    return configuration.model if configuration.model is not None else configuration


def subject_label(evaluation: Evaluation) -> str:
    subject = subject_of(evaluation)
    return getattr(subject, "short_name", "") or subject.name


# -- the task page ---------------------------------------------------------------------------------


@dataclass
class TaskTableView:
    """One of the task page's ranked tables: the page of its rows shown, their chart, its timeline."""

    table: agreement.TaskTable
    key: str
    rows: page_lists.Listed[agreement.RankedRow]
    chart: charts.Chart
    timeline: timeline.Timeline | None = None  # the metric's best over time, after its last table

    @property
    def direction_label(self) -> str:
        return Direction(self.table.direction).label if self.table.direction in Direction.values else ""

    @property
    def ranked(self) -> bool:
        return any(row.rank is not None for row in self.table.rows)

    @property
    def best_marking_sentence(self) -> str:
        """What the protocols' sources mark, where they agree on it (records.models.BestMarking)."""
        sentences = {protocol.best_marking_sentence for protocol in self.table.protocols}
        return sentences.pop() if len(sentences) == 1 else ""

    @property
    def protocols_named(self) -> list[Protocol]:
        return self.table.protocols[:PROTOCOLS_NAMED]

    @property
    def protocols_unnamed(self) -> int:
        return max(0, len(self.table.protocols) - PROTOCOLS_NAMED)


@dataclass
class AgreementView:
    """One model's (or configuration's) measurements on the task and a metric: the first few shown,
    and where all of them are."""

    item: agreement.Agreement
    shown: page_lists.Listed[agreement.Measurement]

    @property
    def all_url(self) -> str:
        """The model page showing every measurement of this one (its `task` filter), or the
        configuration's page where it names no model."""
        subject = self.item.subject
        if not self.item.subject_is_model:
            return subject.get_absolute_url()
        query = QueryDict(mutable=True)
        query[TASK_PARAM] = self.item.measurements[0].shown.evaluation.dataset.stable_id
        query[METRIC_PARAM] = self.item.metric
        return f"{subject.get_absolute_url()}?{query.urlencode()}"


@dataclass
class TaskPage:
    dataset: Dataset
    family: list[Dataset]  # the other tasks a source says are the same data
    equivalences: list[TaskEquivalence]
    tables: list[TaskTableView]
    agreements: page_lists.Listed[AgreementView]
    verdict_counts: list[tuple[str, int]]
    sources: page_lists.Listed[Source]
    suite_tasks: page_lists.Listed[Dataset]
    protocols: page_lists.Listed[Protocol]
    evaluation_count: int
    rule: str = agreement.AGREEMENT_RULE
    tie_rule: str = agreement.TIE_RULE
    measurement_rule: str = agreement.MEASUREMENT_RULE
    scale_rule: str = agreement.SCALE_RULE

    @property
    def scored(self) -> bool:
        return bool(self.tables or self.agreements.total)

    @property
    def conflicting(self) -> int:
        return conflicts_counted(self.verdict_counts)


def task_page(*, stable_id: str, params: QueryDict) -> TaskPage:
    """The dataset (task) page: its own facts, its family, tables, charts, timelines and agreements,
    each long list one page at a time (`params`: records.page_lists); at most sixteen queries."""
    dataset = record_or_404(Dataset.objects.select_related("source", "suite"), stable_id)
    family_ids = agreement.family_of(dataset.pk)
    evaluations = evidence_rows.evaluation_rows(lookups={"dataset_id__in": sorted(family_ids)})
    families = {task: dataset.pk for task in family_ids}
    equivalences = list(
        TaskEquivalence.objects.filter(Q(task_id__in=family_ids) | Q(same_as_id__in=family_ids))
        .select_related("task__suite", "same_as__suite", "source")
        .order_by("task__name", "same_as__name", "stable_id")
    )
    family: dict[int, Dataset] = {}
    for link in equivalences:
        for task in (link.task, link.same_as):
            if task.pk != dataset.pk:
                family.setdefault(task.pk, task)
    found_tables = agreement.task_tables(evaluations, families)  # rows that read as evaluations
    by_metric: dict[str, list[agreement.TaskTable]] = defaultdict(list)
    for table in found_tables:
        by_metric[table.metric].append(table)
    tables = []
    for table in found_tables:  # sorted by metric: a metric's timeline follows its last table
        view = _table_view(dataset=dataset, table=table, params=params)
        if by_metric[table.metric][-1] is table:
            view.timeline = timeline.timeline(
                tables=by_metric[table.metric],
                key=slugify(table.metric) or "metric",
                title=f"{dataset.name}: {_metric_name(table)}",
                metric_name=_metric_name(table),
                label_of=lambda measurement: subject_label(measurement.shown.evaluation),
            )
        tables.append(view)
    found = agreement.agreements(evaluations, families)
    for item in found:
        item.task = dataset  # the page's own task names the family
    found.sort(key=lambda item: conflicting_first(item))  # stable: the conflicting first, in agreements' order
    views = [
        AgreementView(item=item, shown=page_lists.first_of(item.measurements, count=MEASUREMENTS_SHOWN))
        for item in found
    ]
    return TaskPage(
        dataset=dataset,
        family=sorted(family.values(), key=lambda task: (task.name, task.stable_id)),
        equivalences=equivalences,
        tables=tables,
        agreements=page_lists.listed(views, key="agreements", params=params, per_page=AGREEMENTS_PER_PAGE),
        verdict_counts=verdict_counts(found),
        sources=page_lists.listed(_sources(evaluations), key="sources", params=params, per_page=SOURCES_PER_PAGE),
        suite_tasks=page_lists.listed(
            dataset.tasks.order_by("position", "name", "stable_id"), key="tasks", params=params, per_page=TASKS_PER_PAGE
        ),
        protocols=page_lists.listed(
            dataset.protocols.order_by("title", "stable_id"),
            key="protocols",
            params=params,
            per_page=PROTOCOLS_PER_PAGE,
        ),
        evaluation_count=len(evaluations),
    )


def _table_view(*, dataset: Dataset, table: agreement.TaskTable, params: QueryDict) -> TaskTableView:
    key = slugify(f"{table.metric}-{table.unit}") or "metric"
    rows = page_lists.listed(table.rows, key=key, params=params, per_page=TABLE_ROWS)
    return TaskTableView(
        table=table,
        key=key,
        rows=rows,
        chart=task_chart(dataset=dataset, table=replace(table, rows=rows.items), key=key),
    )


def _metric_name(table: agreement.TaskTable) -> str:
    """The metric as its protocols name it ("F1"), else its short name ("f1")."""
    return table.protocols[0].metric_name if table.protocols else table.metric


def _sources(evaluations: Iterable[evidence_rows.EvaluationRow]) -> list[Source]:
    seen: dict[int, Source] = {}
    for evaluation in evaluations:
        for source in (evaluation.source, evaluation.original_source):
            if source is not None:
                seen.setdefault(source.pk, source)
    return sorted(seen.values(), key=lambda source: (source.title.lower(), source.stable_id))


def task_chart(*, dataset: Dataset, table: agreement.TaskTable, key: str) -> charts.Chart:
    """A task table's rows drawn as the protocol page's charts are (pages.charts.task_chart)."""
    return charts.task_chart(dataset=dataset, table=table, key=key, label_of=subject_label, origin_of=measured_by_text)


# -- the work, source and configuration pages ------------------------------------------------------


@dataclass
class WorkPage:
    work: Work
    versions: page_lists.Listed[Source]  # each with `evaluation_count`
    models: page_lists.Listed[GenomicModel]
    evaluation_count: int


def work_page(*, stable_id: str, params: QueryDict) -> WorkPage:
    """A work's page: its versions (each with the evaluations it reports) and the models it
    introduced, each list a page at a time (six queries)."""
    work = record_or_404(Work.objects.all(), stable_id)
    versions = (
        Source.objects.filter(work=work)
        .annotate(evaluation_count=Count("evaluations", distinct=True))
        .order_by("published_date", "title", "stable_id")
    )
    return WorkPage(
        work=work,
        versions=page_lists.listed(versions, key="versions", params=params),
        models=page_lists.listed(
            GenomicModel.objects.filter(introduced_in=work).order_by("name", "stable_id"), key="models", params=params
        ),
        evaluation_count=Evaluation.objects.filter(source__work=work).count(),
    )


@dataclass
class SourcePage:
    source: Source
    protocols: page_lists.Listed[Protocol]
    evaluations: page_lists.Listed[Evaluation]
    datasets: page_lists.Listed[Dataset]

    @property
    def citing(self) -> int:
        return self.protocols.total + self.evaluations.total + self.datasets.total


def source_page(*, stable_id: str, params: QueryDict) -> SourcePage:
    """A source's page: the protocols, evaluations (reported or cited for a concern) and datasets
    citing it, each list a page at a time (at most seven queries)."""
    source = record_or_404(Source.objects.select_related("work"), stable_id)
    evaluations: QuerySet[Evaluation] = (
        Evaluation.objects.filter(Q(source=source) | Q(concern_source=source))
        .select_related("protocol")
        .order_by("title", "stable_id")
    )
    return SourcePage(
        source=source,
        protocols=page_lists.listed(
            Protocol.objects.filter(source=source).order_by("title", "stable_id"), key="protocols", params=params
        ),
        evaluations=page_lists.listed(evaluations, key="evaluations", params=params),
        datasets=page_lists.listed(
            Dataset.objects.filter(source=source, suite__isnull=True).order_by("name", "stable_id"),
            key="datasets",
            params=params,
        ),
    )


@dataclass
class ConfigurationPage:
    configuration: Configuration
    evaluations: page_lists.Listed[Evaluation]


def configuration_page(*, stable_id: str, params: QueryDict) -> ConfigurationPage:
    """A configuration's page: its evaluations with their results and review state, a page at a time."""
    configuration = record_or_404(Configuration.objects.select_related("source", "model"), stable_id)
    evaluations = evaluations_queryset().filter(configuration=configuration).order_by("protocol__title", "stable_id")
    return ConfigurationPage(
        configuration=configuration,
        evaluations=page_lists.listed(evaluations, key="evaluations", params=params, per_page=EVALUATIONS_PER_PAGE),
    )
