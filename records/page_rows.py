"""A protocol page's evaluations and results read as `values_list()` rows, not model instances.

A protocol of 1,000 evaluations built six model instances a row through `select_related` (the
evaluation, its configuration, dataset, sources, reviewer, original) and one a result: most of the
page's query time. Here an evaluation and a result are light objects that offer what the page, its
comparisons, charts and facets read of the models (the same field names, the same `get_*_display`,
review properties and URLs), built from two `values_list()` queries with their few related columns
joined in. The small sets shared by every row (datasets, sources, reviewers) are model instances
loaded once each by id. What the models compute, these compute by the same functions
(`records.values.display`, `reviews.models.ReviewStateFacts`, `base._url_parts`), so the page's
bytes are those of the model path (tests/records/test_page_renderings.py compares them).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Model

from records.models import (
    Configuration,
    Dataset,
    Evaluation,
    GenomicModel,
    Protocol,
    Result,
    Source,
    evaluation_comparable,
)
from records.models.base import _url_parts
from records.values import display
from reviews.models import ReviewStateFacts


def labels_of(model: type[Model], name: str) -> dict[str, str]:
    return {str(value): str(label) for value, label in model._meta.get_field(name).flatchoices}


def _url(url_name: str, stable_id: str) -> str:
    prefix, suffix = _url_parts(url_name)
    return f"{prefix}{stable_id}{suffix}"


def evaluation_url(stable_id: str) -> str:
    return _url(Evaluation.page_url_name, stable_id)


class ModelLine:
    """The model a configuration tests, as rows link it: name and page."""

    __slots__ = ("stable_id", "name")

    def __init__(self, stable_id: str, name: str) -> None:
        self.stable_id, self.name = stable_id, name

    def __str__(self) -> str:
        return self.name or self.stable_id

    def get_absolute_url(self) -> str:
        return _url(GenomicModel.page_url_name, self.stable_id)


class ConfigurationLine:
    """A configuration as rows show it: name, short name, page and the model it tests (or None)."""

    __slots__ = ("pk", "id", "stable_id", "name", "short_name", "model", "model_id")

    def __init__(
        self,
        pk: int,
        stable_id: str,
        name: str,
        short_name: str,
        model_stable_id: str | None = None,
        model_name: str | None = None,
        model_id: int | None = None,
    ) -> None:
        self.pk = self.id = pk
        self.stable_id, self.name, self.short_name = stable_id, name, short_name
        self.model = ModelLine(model_stable_id, model_name or "") if model_stable_id else None
        self.model_id = model_id

    def __str__(self) -> str:
        return self.name or self.stable_id

    def get_absolute_url(self) -> str:
        return _url(Configuration.page_url_name, self.stable_id)


class OriginalLine(ReviewStateFacts):
    """The evaluation a repeat reports again: what a repeat's row says of it."""

    __slots__ = ("pk", "id", "stable_id", "title", "review_state", "concern")

    def __init__(self, pk: int, stable_id: str, title: str, review_state: str, concern: str) -> None:
        self.pk = self.id = pk
        self.stable_id, self.title, self.review_state, self.concern = stable_id, title, review_state, concern

    def __str__(self) -> str:
        return self.title or self.stable_id

    def get_absolute_url(self) -> str:
        return _url(Evaluation.page_url_name, self.stable_id)


class ResultLine:
    """One result of an evaluation (the fields of records.models.Result the page reads)."""

    __slots__ = (
        "pk",
        "id",
        "stable_id",
        "evaluation_id",
        *Result.MEASUREMENT_FIELDS,
        "reference_configuration_id",
        "reference_configuration",
    )
    FIELDS = __slots__[2:-1]
    _relation_labels = labels_of(Result, "relation")
    _uncertainty_labels = labels_of(Result, "uncertainty_kind")

    def __init__(self, row: tuple[Any, ...], reference: ConfigurationLine | None) -> None:
        """`row`: the id, then FIELDS in order (a values_list() row; more columns may follow)."""
        self.pk = self.id = row[0]
        for name, value in zip(self.FIELDS, row[1:], strict=False):
            setattr(self, name, value)
        self.reference_configuration = reference

    def __str__(self) -> str:
        return f"{self.display_value} {self.unit}"

    @property
    def display_value(self) -> str:
        return display(self.value)

    def get_relation_display(self) -> str:
        return self._relation_labels.get(self.relation, self.relation)

    def get_uncertainty_kind_display(self) -> str:
        return self._uncertainty_labels.get(self.uncertainty_kind, self.uncertainty_kind)


class _Results(list["ResultLine"]):
    """An evaluation's results, read as the related manager is (`evaluation.results.all`)."""

    def all(self) -> _Results:
        return self


#: The foreign keys an evaluation row carries as ids; the rows below turn each into the record it
#: names, once per id.
_EVALUATION_REFERENCES = (
    "configuration_id",
    "dataset_id",
    "source_id",
    "concern_source_id",
    "review_state_changed_by_id",
    "repeats_id",
)


class EvaluationLine(ReviewStateFacts):
    """One evaluation of the protocol (the fields of records.models.Evaluation the page reads)."""

    FIELDS = (
        "stable_id",
        "title",
        "measured_by",
        "measured_by_name",
        "reading_method",
        "setup",
        "aggregation",
        "uncertainty",
        "coverage_scored",
        "coverage_eligible",
        "source_locator",
        "quote",
        "concern_locator",
        "different_measurement",
        "review_state",
        "review_state_changed_at",
        "review_state_changed_by_role",
        "concern",
        *_EVALUATION_REFERENCES,
        "protocol_id",
    )
    __slots__ = (
        "pk",
        "id",
        *FIELDS,
        "protocol",
        "configuration",
        "dataset",
        "source",
        "concern_source",
        "review_state_changed_by",
        "repeats",
        "results",
    )
    # What the type checker reads of the slots above (set from a values() row in __init__).
    stable_id: str
    title: str
    measured_by: str
    measured_by_name: str
    setup: str
    different_measurement: str
    concern: str
    configuration_id: int
    dataset_id: int
    source_id: int | None
    repeats_id: int | None
    protocol: Protocol
    configuration: ConfigurationLine
    dataset: Dataset
    source: Source | None
    concern_source: Source | None
    repeats: OriginalLine | None
    results: _Results
    _measured_by_labels = labels_of(Evaluation, "measured_by")
    _reading_labels = labels_of(Evaluation, "reading_method")
    _review_labels = labels_of(Evaluation, "review_state")

    def __init__(self, row: tuple[Any, ...]) -> None:
        """`row`: the id, then FIELDS in order (a values_list() row; more columns may follow)."""
        self.pk = self.id = row[0]
        for name, value in zip(self.FIELDS, row[1:], strict=False):
            setattr(self, name, value)
        self.results = _Results()

    def __str__(self) -> str:
        return self.title or self.stable_id

    def get_absolute_url(self) -> str:
        return _url(Evaluation.page_url_name, self.stable_id)

    def get_measured_by_display(self) -> str:
        return self._measured_by_labels.get(self.measured_by, self.measured_by)

    def get_reading_method_display(self) -> str:
        return self._reading_labels.get(self.reading_method, self.reading_method)

    def get_review_state_display(self) -> str:
        return self._review_labels.get(self.review_state, self.review_state)

    @property
    def results_with_uncertainty(self) -> list[ResultLine]:
        return [result for result in self.results if result.uncertainty_kind]

    @property
    def is_comparable(self) -> bool:
        return evaluation_comparable(
            review_state=self.review_state,
            original_state=self.repeats.review_state if self.repeats is not None else None,
            different_measurement=self.different_measurement,
        )


_ORIGINAL = ("repeats__stable_id", "repeats__title", "repeats__review_state", "repeats__concern")
_CONFIGURATION = (
    "configuration__stable_id",
    "configuration__name",
    "configuration__short_name",
    "configuration__model__stable_id",
    "configuration__model__name",
    "configuration__model_id",
)
_REFERENCE = (
    "reference_configuration__stable_id",
    "reference_configuration__name",
    "reference_configuration__short_name",
    "reference_configuration__model__stable_id",
    "reference_configuration__model__name",
    "reference_configuration__model_id",
)


_EVALUATION_COLUMNS = ("id", *EvaluationLine.FIELDS, *_CONFIGURATION, *_ORIGINAL)
_RESULT_COLUMNS = ("id", *ResultLine.FIELDS, *_REFERENCE)


def _positions(columns: tuple[str, ...], *names: str) -> list[int]:
    return [columns.index(name) for name in names]


def protocol_evaluations(protocol: Protocol, *, ids: Collection[int] | None = None) -> list[EvaluationLine]:
    """The protocol's evaluations (those of `ids`, when given) in page order (configuration name,
    stable id), each with its results (by stable id): five queries whatever their number
    (evaluations, results, and the datasets, sources and reviewers they name). Rows are
    values_list() tuples: a dict a row cost more than the rest of reading them."""
    evaluations_of = Evaluation.objects.filter(protocol=protocol)
    results_of = Result.objects.filter(evaluation__protocol=protocol)
    if ids is not None:
        evaluations_of = evaluations_of.filter(pk__in=list(ids))
        results_of = results_of.filter(evaluation_id__in=list(ids))
    rows = list(evaluations_of.order_by("configuration__name", "stable_id").values_list(*_EVALUATION_COLUMNS))
    configurations: dict[int, ConfigurationLine] = {}

    def configuration(pk: int | None, *columns: Any) -> ConfigurationLine | None:
        if pk is None:
            return None
        line = configurations.get(pk)
        if line is None:
            line = configurations[pk] = ConfigurationLine(pk, *columns)
        return line

    at_configuration, at_dataset, at_source, at_concern_source, at_reviewer, at_repeats = _positions(
        _EVALUATION_COLUMNS, *_EVALUATION_REFERENCES
    )
    configuration_columns = _positions(_EVALUATION_COLUMNS, *_CONFIGURATION)
    original_columns = _positions(_EVALUATION_COLUMNS, *_ORIGINAL)
    datasets = Dataset.objects.in_bulk({row[at_dataset] for row in rows})
    sources = Source.objects.in_bulk(
        {row[at] for row in rows for at in (at_source, at_concern_source) if row[at] is not None}
    )
    reviewers = get_user_model().objects.in_bulk({row[at_reviewer] for row in rows if row[at_reviewer] is not None})
    evaluations: dict[int, EvaluationLine] = {}
    for row in rows:
        line = EvaluationLine(row)
        line.protocol = protocol
        line.configuration = configuration(row[at_configuration], *(row[at] for at in configuration_columns))
        line.dataset = datasets[row[at_dataset]]
        line.source = sources.get(row[at_source])
        line.concern_source = sources.get(row[at_concern_source])
        line.review_state_changed_by = reviewers.get(row[at_reviewer])
        line.repeats = (
            None if row[at_repeats] is None else OriginalLine(row[at_repeats], *(row[at] for at in original_columns))
        )
        evaluations[line.pk] = line
    at_evaluation, at_reference = _positions(_RESULT_COLUMNS, "evaluation_id", "reference_configuration_id")
    reference_columns = _positions(_RESULT_COLUMNS, *_REFERENCE)
    results = results_of.order_by("stable_id").values_list(*_RESULT_COLUMNS)
    for row in results:
        evaluation = evaluations.get(row[at_evaluation])
        if evaluation is None:
            # Its evaluation was committed after the first read (a job's result landing between the
            # two queries; the chaos run met it): the page shows what the first read saw, and the
            # write's version bump makes the next request render both.
            continue
        reference = configuration(row[at_reference], *(row[at] for at in reference_columns))
        evaluation.results.append(ResultLine(row, reference))
    return list(evaluations.values())
