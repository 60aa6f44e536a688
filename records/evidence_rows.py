"""The evidence the task and model pages compute on, read as values: every evaluation of a task
family or a model with its absolute results, in a fixed number of queries (seven) whatever the number
of rows, and no model instance per row.

records.agreement reads an evaluation's attributes (`dataset_id`, `repeats_id`, `review_state`,
`protocol.metric_short_name`, `results.all()`, ...), not its class: an `EvaluationRow` answers each
of them, and the templates' too (`get_absolute_url`, `get_measured_by_display`, `source`). The few
records a row points to (protocols, datasets, configurations with their models, sources) are read
once each, as instances shared by every row that names them; they are read through subqueries, so
their number never splits a query (SQLite's 999 parameters).

At 2,000 evaluations of one task this read takes a tenth of what `agreement.evidence_queryset()`
(seven instances a row) took; the API keeps reading that queryset (bench/results/2026-12-03-identity-pages.md).

A caller that reads many batches (the release's agreement tables) passes one `RelatedRecords` to
every call, so that each protocol, task, source and model is read once, and only for the columns
it names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from django.db.models import Model, QuerySet

from records.models import (
    Configuration,
    Dataset,
    Evaluation,
    GenomicModel,
    MeasuredBy,
    Protocol,
    Relation,
    Result,
    Source,
)
from records.models.base import _url_parts
from records.rules.provenance import Provenance, provenance_of
from records.values import display
from reviews.models import EXCLUDED_STATES, ReviewState

#: What the pages read of an evaluation (values, in this order).
_EVALUATION = (
    "id",
    "stable_id",
    "protocol_id",
    "dataset_id",
    "configuration_id",
    "source_id",
    "original_source_id",
    "repeats_id",
    "repeats__review_state",
    "review_state",
    "measured_by",
    "measured_by_name",
    "different_measurement",
    "original_citation",
    "original_locator",
    "original_basis",
    "original_reason",
    "source_locator",
    "quote",
)
#: What they read of a result.
_RESULT = (
    "id",
    "stable_id",
    "evaluation_id",
    "value",
    "unit",
    "relation",
    "printed_value",
    "uncertainty_kind",
    "uncertainty_value",
    "uncertainty_level",
    "lower_bound",
    "upper_bound",
)
_MEASURED_BY = dict(MeasuredBy.choices)
_REVIEW_STATES = dict(ReviewState.choices)
M = TypeVar("M", bound=Model)


@dataclass(slots=True)
class ResultRow:
    """An absolute result as the pages read it."""

    pk: int
    stable_id: str
    value: Decimal
    unit: str
    relation: str
    printed_value: str
    uncertainty_kind: str
    uncertainty_value: Decimal | None
    uncertainty_level: Decimal | None
    lower_bound: Decimal | None
    upper_bound: Decimal | None

    @property
    def display_value(self) -> str:
        return display(self.value)


@dataclass(frozen=True, slots=True)
class ConfigurationRow:
    """A configuration as the pages read it: its names and its model (an instance, shared)."""

    pk: int
    stable_id: str
    name: str
    short_name: str
    model: GenomicModel | None

    @property
    def model_id(self) -> int | None:
        return self.model.pk if self.model is not None else None

    def get_absolute_url(self) -> str:
        prefix, suffix = _url_parts(Configuration.page_url_name)
        return f"{prefix}{self.stable_id}{suffix}"

    def __str__(self) -> str:
        return self.name


class Results(list):
    """An evaluation's results, read as its related manager is (`evaluation.results.all()`)."""

    def all(self) -> Results:
        return self


@dataclass(frozen=True, slots=True)
class RepeatedState:
    """The review state of the evaluation a row repeats (what the task tables read of it)."""

    review_state: str


@dataclass(slots=True, eq=False)
class EvaluationRow:
    """An evaluation as records.agreement and the task and model pages read it (read only: review
    states are written by reviews.services alone)."""

    pk: int
    stable_id: str
    protocol: Protocol
    dataset: Dataset
    configuration: ConfigurationRow
    source: Source | None
    original_source: Source | None
    repeats_id: int | None
    repeats: RepeatedState | None
    state: str  # the review state as read (`review_state`): these rows are never written
    measured_by: str
    measured_by_name: str
    different_measurement: str
    original_citation: str
    original_locator: str
    original_basis: str
    original_reason: str
    source_locator: str
    quote: str
    provenance: Provenance  # as Evaluation.provenance, read once a row
    results: Results = field(default_factory=Results)

    @property
    def id(self) -> int:
        return self.pk

    @property
    def review_state(self) -> str:
        return self.state

    @property
    def protocol_id(self) -> int:
        return self.protocol.pk

    @property
    def dataset_id(self) -> int:
        return self.dataset.pk

    @property
    def configuration_id(self) -> int:
        return self.configuration.pk

    @property
    def original_source_id(self) -> int | None:
        return self.original_source.pk if self.original_source is not None else None

    @property
    def is_copy(self) -> bool:
        """As Evaluation.is_copy: this source reports a number first published elsewhere."""
        return bool(self.repeats_id or self.original_source is not None or self.original_citation)

    @property
    def is_excluded(self) -> bool:
        return self.review_state in EXCLUDED_STATES

    def get_absolute_url(self) -> str:
        prefix, suffix = _url_parts(Evaluation.page_url_name)
        return f"{prefix}{self.stable_id}{suffix}"

    def get_measured_by_display(self) -> str:
        return str(_MEASURED_BY.get(self.measured_by, self.measured_by))

    def get_review_state_display(self) -> str:
        return str(_REVIEW_STATES.get(self.review_state, self.review_state))


@dataclass
class RelatedRecords:
    """The protocols, tasks, sources and models that evaluation rows point to, kept by id: every
    `evaluation_rows` call given the same instance reads only those it has not read yet. `columns`
    names, per model, the only columns read (every column when a model is not named); a column
    left out is read again, one query per record, when something asks for it."""

    columns: Mapping[type[Model], Sequence[str]] = field(default_factory=dict)
    kept: dict[type[Model], dict[int, Any]] = field(default_factory=lambda: defaultdict(dict))

    def by_id(self, model: type[M], ids: Iterable[int]) -> dict[int, M]:
        kept: dict[int, M] = self.kept[model]
        missing = sorted({pk for pk in ids if pk not in kept})
        if missing:
            queryset = model._default_manager.filter(pk__in=missing)
            if model in self.columns:
                queryset = queryset.only(*self.columns[model])
            kept.update(queryset.in_bulk())
        return kept


def evaluation_rows(*, lookups: Mapping[str, object], related: RelatedRecords | None = None) -> list[EvaluationRow]:
    """The evaluations the `lookups` select (`{"dataset_id__in": [...]}`) that measure what their
    protocol states (no "different measurement"), oldest first, each with its absolute results by
    stable id: at most seven queries. The evaluations are read first; the records they name are then
    read by id (protocols, datasets, models, sources: a page's few; those `related` does not hold yet)
    or joined to the same lookups (configurations, often one a row), never through a subquery per kind, which PostgreSQL's
    planner may answer by scanning every evaluation of each dataset."""
    chosen: QuerySet[Evaluation] = Evaluation.objects.filter(**lookups).exclude(different_measurement__gt="")
    rows = list(chosen.order_by("id").values_list(*_EVALUATION))  # one fetch (a server-side cursor costs more)
    related = related if related is not None else RelatedRecords()
    protocols = related.by_id(Protocol, (row[2] for row in rows))
    datasets = related.by_id(Dataset, (row[3] for row in rows))
    sources = related.by_id(Source, (pk for row in rows for pk in row[5:7] if pk))
    joined = {f"evaluations__{lookup}": value for lookup, value in lookups.items()}
    named = list(
        Configuration.objects.filter(**joined)
        .values_list("id", "stable_id", "name", "short_name", "model_id")
        .distinct()
        .order_by()
    )
    models = related.by_id(GenomicModel, (row[4] for row in named if row[4]))
    configurations = {  # values, each naming its model's one instance
        pk: ConfigurationRow(pk, stable_id, name, short_name, models.get(model_id) if model_id else None)
        for pk, stable_id, name, short_name, model_id in named
    }
    results: dict[int, Results] = defaultdict(Results)
    absolute = Result.objects.filter(
        relation=Relation.ABSOLUTE, **{f"evaluation__{lookup}": value for lookup, value in lookups.items()}
    ).exclude(evaluation__different_measurement__gt="")
    for pk, stable_id, evaluation_id, *values in absolute.order_by("stable_id").values_list(*_RESULT):
        results[evaluation_id].append(ResultRow(pk, stable_id, *values))
    found = []
    for row in rows:
        (pk, stable_id, protocol_id, dataset_id, configuration_id, source_id, original_id, repeats_id) = row[:8]
        repeats_state, state, measured_by, measured_by_name, different, citation, original_locator = row[8:15]
        basis, reason, locator, quote = row[15:]
        found.append(
            EvaluationRow(
                pk=pk,
                stable_id=stable_id,
                protocol=protocols[protocol_id],
                dataset=datasets[dataset_id],
                configuration=configurations[configuration_id],
                source=sources.get(source_id) if source_id else None,
                original_source=sources.get(original_id) if original_id else None,
                repeats_id=repeats_id,
                repeats=RepeatedState(repeats_state) if repeats_id else None,
                state=state,
                measured_by=measured_by,
                measured_by_name=measured_by_name,
                different_measurement=different,
                original_citation=citation,
                original_locator=original_locator,
                original_basis=basis,
                original_reason=reason,
                source_locator=locator,
                quote=quote,
                provenance=provenance_of(
                    source=sources.get(source_id) if source_id else None,
                    repeats_id=repeats_id,
                    original_source=sources.get(original_id) if original_id else None,
                    original_citation=citation,
                ),
                results=results.get(pk, Results()),
            )
        )
    return found
