"""Every evaluation and result of a protocol, read light: what its comparisons (records.comparisons),
its matrix's cells and its evaluations' filters read, and nothing more.

A protocol page compares all of a protocol's results (the best of a column needs every value in
it) but shows a page of them. The rows its tables show with their sources and quotes are read
again in full (records.page_rows) and put in place of these (`ResultRow.evaluation` and `.result`);
the rest are never read in full.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from django.core.exceptions import EmptyResultSet
from django.db import connection

from records.models import Configuration, Dataset, Evaluation, Protocol, Result
from records.page_rows import ConfigurationLine, OriginalLine, evaluation_url, labels_of
from records.rules.provenance import Provenance, provenance_from
from records.values import display
from reviews.models import ReviewStateFacts


@dataclass(slots=True, init=False, eq=False, repr=False)
class ComparedResult:
    """A result as comparisons, ties and a matrix cell read it: value, printed value, spread,
    relation and reference."""

    pk: int
    id: int
    stable_id: str
    evaluation_id: int
    relation: str
    reference_configuration_id: int | None
    value: Decimal
    uncertainty_value: Decimal | None
    lower_bound: Decimal | None
    upper_bound: Decimal | None
    printed_value: str
    uncertainty_kind: str
    num_runs: int | None
    reference_configuration: ConfigurationLine | None
    _uncertainty_labels: ClassVar[dict[str, str]] = labels_of(Result, "uncertainty_kind")

    def __init__(self, row: tuple[Any, ...], reference: ConfigurationLine | None) -> None:
        (
            self.pk,
            self.stable_id,
            self.evaluation_id,
            self.relation,
            self.reference_configuration_id,
            value,
            spread,
            lower,
            upper,
            self.printed_value,
            self.uncertainty_kind,
            self.num_runs,
        ) = row
        self.id = self.pk
        self.value = Decimal(value)
        self.uncertainty_value = None if spread is None else Decimal(spread)
        self.lower_bound = None if lower is None else Decimal(lower)
        self.upper_bound = None if upper is None else Decimal(upper)
        self.reference_configuration = reference

    @property
    def display_value(self) -> str:
        return display(self.value)

    def get_uncertainty_kind_display(self) -> str:
        return self._uncertainty_labels.get(self.uncertainty_kind, self.uncertainty_kind)


class _Results(list["ComparedResult"]):
    def all(self) -> _Results:
        return self


@dataclass(slots=True, init=False, eq=False, repr=False)
class ComparedEvaluation(ReviewStateFacts):
    """An evaluation as comparisons, a matrix cell and the evaluations' filters read it."""

    pk: int
    id: int
    stable_id: str
    configuration_id: int
    dataset_id: int
    review_state: str
    different_measurement: str
    repeats_id: int | None
    setup: str
    measured_by: str
    reading_method: str
    source_id: int | None
    concern_source_id: int | None
    concern: str
    configuration: ConfigurationLine
    dataset: Dataset
    repeats: OriginalLine | None
    provenance: Provenance
    results: _Results
    _measured_by_labels: ClassVar[dict[str, str]] = labels_of(Evaluation, "measured_by")
    _reading_labels: ClassVar[dict[str, str]] = labels_of(Evaluation, "reading_method")
    _review_labels: ClassVar[dict[str, str]] = labels_of(Evaluation, "review_state")

    def get_absolute_url(self) -> str:
        return evaluation_url(self.stable_id)

    def get_measured_by_display(self) -> str:
        return self._measured_by_labels.get(self.measured_by, self.measured_by)

    def get_reading_method_display(self) -> str:
        return self._reading_labels.get(self.reading_method, self.reading_method)

    def get_review_state_display(self) -> str:
        return self._review_labels.get(self.review_state, self.review_state)


_EVALUATION_COLUMNS = (
    "id",
    "stable_id",
    "configuration_id",
    "dataset_id",
    "review_state",
    "different_measurement",
    "repeats_id",
    "setup",
    "measured_by",
    "reading_method",
    "source_id",
    "concern_source_id",
    "concern",
    "repeats__stable_id",
    "repeats__title",
    "repeats__review_state",
    "repeats__concern",
    "source__work_id",
    "source__published_date",
    "source__arxiv_version",
    "original_source_id",
    "original_source__work_id",
    "original_citation",
)
_CONFIGURATION_COLUMNS = ("id", "stable_id", "name", "short_name", "model__stable_id", "model__name", "model_id")
_RESULT_COLUMNS = (
    "id",
    "stable_id",
    "evaluation_id",
    "relation",
    "reference_configuration_id",
    "value",
    "uncertainty_value",
    "lower_bound",
    "upper_bound",
    "printed_value",
    "uncertainty_kind",
    "num_runs",
)


def _raw_rows(queryset: Any) -> list[tuple[Any, ...]]:
    """The rows of a values_list() query as the database driver returns them: the exact decimals as
    their stored text, without Django's conversion of each value (most of the time of reading ten
    thousand rows). Callers convert the few columns that need it."""
    try:
        sql, params = queryset.query.get_compiler(using=queryset.db).as_sql()
    except EmptyResultSet:  # a filter that matches nothing by construction (`pk__in` an empty set)
        return []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def compared_evaluations(
    protocol: Protocol, *, dataset: Dataset | None = None, configurations: Collection[int] | None = None
) -> list[ComparedEvaluation]:
    """Every evaluation of the protocol (of one dataset or task, when given: its comparisons are
    the same; of the configurations given, when given: a page of a matrix), with its results (by
    stable id), light, ordered as pages list them (configuration name, stable id): four queries
    whatever their number (evaluations, results, and the configurations and datasets they name)."""
    evaluations_of = Evaluation.objects.filter(protocol=protocol)
    results_of = Result.objects.filter(evaluation__protocol=protocol)
    if dataset is not None:
        evaluations_of = evaluations_of.filter(dataset=dataset)
        results_of = results_of.filter(evaluation__dataset=dataset)
    if configurations is not None:
        evaluations_of = evaluations_of.filter(configuration_id__in=configurations)
        results_of = results_of.filter(evaluation__configuration_id__in=configurations)
    evaluations: dict[int, ComparedEvaluation] = {}
    for row in _raw_rows(evaluations_of.order_by().values_list(*_EVALUATION_COLUMNS)):
        line = ComparedEvaluation()
        (
            line.pk,
            line.stable_id,
            line.configuration_id,
            line.dataset_id,
            line.review_state,
            line.different_measurement,
            line.repeats_id,
            line.setup,
            line.measured_by,
            line.reading_method,
            line.source_id,
            line.concern_source_id,
            line.concern,
        ) = row[:13]
        line.id = line.pk
        line.repeats = None if line.repeats_id is None else OriginalLine(line.repeats_id, *row[13:17])
        work_id, published, arxiv_version, original_id, original_work_id, citation = row[17:]
        line.provenance = provenance_from(
            (
                line.source_id,
                work_id,
                published,
                arxiv_version,
                line.repeats_id,
                original_id,
                original_work_id,
                citation,
            )
        )
        line.results = _Results()
        evaluations[line.pk] = line
    result_rows = _raw_rows(results_of.order_by().values_list(*_RESULT_COLUMNS))
    named = {line.configuration_id for line in evaluations.values()}
    named.update(row[4] for row in result_rows if row[4] is not None)  # references
    configurations = {
        row[0]: ConfigurationLine(*row)
        for row in _raw_rows(Configuration.objects.filter(pk__in=named).order_by().values_list(*_CONFIGURATION_COLUMNS))
    }
    datasets = Dataset.objects.in_bulk({line.dataset_id for line in evaluations.values()})
    for line in evaluations.values():
        line.configuration = configurations[line.configuration_id]
        line.dataset = datasets[line.dataset_id]
    for row in result_rows:
        evaluation = evaluations.get(row[2])
        if evaluation is None:
            continue  # committed between the two reads (records.page_rows says why this is safe)
        reference = configurations.get(row[4]) if row[4] is not None else None
        evaluation.results.append(ComparedResult(row, reference))
    ordered = sorted(evaluations.values(), key=lambda line: (line.configuration.name, line.stable_id))
    for line in ordered:
        if len(line.results) > 1:
            line.results.sort(key=lambda result: result.stable_id)
    return ordered
