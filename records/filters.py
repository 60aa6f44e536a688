"""The catalogue API's list filters (django-filter), named as the serializers' fields. Every filter
by a record's stable id is common.api.record_filter (an id that names no record is a 400 naming the
filter), every boolean common.api.StrictBooleanFilter."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django_filters import rest_framework as filters

from common.api import StrictBooleanFilter, record_filter
from records.agreement import family_of
from records.models import (
    Area,
    BaselineRole,
    Configuration,
    Context,
    Dataset,
    Evaluation,
    EvidenceRow,
    GenomicModel,
    MeasuredBy,
    Protocol,
    ReadingMethod,
    Relation,
    Result,
    Source,
    TaskEquivalence,
    Work,
    comparable_q,
)
from records.works import work_find
from reviews.models import ReviewState


def comparable_filter(prefix: str = "", *, repeats: bool = False) -> StrictBooleanFilter:
    """`comparable=true`: rows whose (evaluation's) source was checked and that are not excluded;
    for evaluations and results, the rule of records.models.evaluation_comparable (a repeat counts
    through its original)."""
    comparable = comparable_q(prefix) if repeats else Q(**{f"{prefix}review_state": ReviewState.SOURCE_CHECKED})

    def apply(queryset, name, value):
        return queryset.filter(comparable) if value else queryset.exclude(comparable)

    return StrictBooleanFilter(
        method=apply,
        help_text="Enters comparisons: source checked, not excluded, and not a repeat of a compared or excluded measurement.",
    )


def protocol_filter(field_name: str) -> filters.ModelChoiceFilter:
    return record_filter(Protocol, "protocol", field_name=field_name, help_text="Protocol stable id.")


def evaluation_filter(field_name: str) -> filters.ModelChoiceFilter:
    return record_filter(Evaluation, "evaluation", field_name=field_name, help_text="Evaluation stable id.")


def configuration_filter(field_name: str) -> filters.ModelChoiceFilter:
    return record_filter(
        Configuration, "configuration", field_name=field_name, help_text="Configuration stable id (the tested model)."
    )


def dataset_filter(field_name: str, help_text: str) -> filters.ModelChoiceFilter:
    return record_filter(Dataset, "dataset or task", field_name=field_name, help_text=help_text)


def area_filter(field_name: str, help_text: str) -> filters.ModelChoiceFilter:
    return record_filter(Area, "area", field_name=field_name, help_text=help_text)


def model_filter(prefix: str) -> filters.ModelChoiceFilter:
    return record_filter(
        GenomicModel,
        "model",
        field_name=f"{prefix}configuration__model",
        help_text="Model stable id: the rows of configurations of this model.",
    )


def task_filter(prefix: str) -> filters.ModelChoiceFilter:
    """`task_id`: the rows measured on this dataset or task, or on a task a source says is the same data
    (its family, records.agreement.family_of)."""

    def apply(queryset: QuerySet, name: str, task: Dataset) -> QuerySet:
        return queryset.filter(**{f"{prefix}dataset_id__in": sorted(family_of(task.pk))})

    return record_filter(
        Dataset,
        "dataset or task",
        field_name=f"{prefix}dataset",  # for the schema's type: the filter is `apply`
        method=apply,
        help_text="Dataset or task stable id: rows measured on it or on a task a source says is the same data.",
    )


def work_filter(field_name: str, what: str) -> filters.ModelChoiceFilter:
    return record_filter(Work, "work", field_name=field_name, help_text=f"Work stable id: {what}.")


class ProtocolFilter(filters.FilterSet):
    area = area_filter("areas", "Area stable id, e.g. dna-genomes.")
    context = record_filter(Context, "context", field_name="contexts", help_text="Context stable id, e.g. research.")
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)
    comparable = comparable_filter()
    dataset_id = dataset_filter("datasets", "Dataset or task stable id: the protocols that use it.")

    class Meta:
        model = Protocol
        fields = ["area", "context", "review_state", "comparable", "dataset_id"]


class EvaluationFilter(filters.FilterSet):
    protocol_id = protocol_filter("protocol")
    dataset_id = dataset_filter("dataset", "Dataset or task stable id: the evaluations measured on it.")
    configuration_id = configuration_filter("configuration")
    measured_by = filters.ChoiceFilter(choices=MeasuredBy.choices)
    reading_method = filters.ChoiceFilter(choices=ReadingMethod.choices)
    source_id = record_filter(
        Source, "source", field_name="source", help_text="Source stable id: the source that reports it."
    )
    repeats_id = record_filter(
        Evaluation,
        "evaluation",
        field_name="repeats",
        help_text="Evaluation stable id: the evaluations that report its measurement again.",
    )
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)
    area = area_filter("protocol__areas", "Area stable id: evaluations of the area's protocols.")
    comparable = comparable_filter(repeats=True)
    model_id = model_filter("")
    task_id = task_filter("")
    work_id = work_filter("source__work", "evaluations reported by any version of it")

    class Meta:
        model = Evaluation
        fields = [
            "protocol_id",
            "dataset_id",
            "configuration_id",
            "measured_by",
            "reading_method",
            "source_id",
            "repeats_id",
            "review_state",
            "area",
            "comparable",
            "model_id",
            "task_id",
            "work_id",
        ]


class ResultFilter(filters.FilterSet):
    evaluation_id = evaluation_filter("evaluation")
    protocol_id = protocol_filter("evaluation__protocol")
    dataset_id = dataset_filter("evaluation__dataset", "Dataset or task stable id: the results measured on it.")
    configuration_id = configuration_filter("evaluation__configuration")
    measured_by = filters.ChoiceFilter(field_name="evaluation__measured_by", choices=MeasuredBy.choices)
    relation = filters.ChoiceFilter(choices=Relation.choices)
    reference_configuration_id = record_filter(
        Configuration,
        "configuration",
        field_name="reference_configuration",
        help_text="Configuration stable id: the results relative to it.",
    )
    review_state = filters.ChoiceFilter(field_name="evaluation__review_state", choices=ReviewState.choices)
    area = area_filter("evaluation__protocol__areas", "Area stable id: results of the area's protocols.")
    comparable = comparable_filter("evaluation__", repeats=True)
    model_id = model_filter("evaluation__")
    task_id = task_filter("evaluation__")
    work_id = work_filter("evaluation__source__work", "results of evaluations reported by any version of it")

    class Meta:
        model = Result
        fields = [
            "evaluation_id",
            "protocol_id",
            "dataset_id",
            "configuration_id",
            "measured_by",
            "relation",
            "reference_configuration_id",
            "review_state",
            "area",
            "comparable",
            "model_id",
            "task_id",
            "work_id",
        ]


class DatasetFilter(filters.FilterSet):
    suite_id = record_filter(Dataset, "suite", field_name="suite", help_text="Suite stable id: its tasks.")
    is_suite = StrictBooleanFilter(
        field_name="suite", lookup_expr="isnull", help_text="True: suites and stand-alone datasets only."
    )

    class Meta:
        model = Dataset
        fields = ["suite_id", "is_suite", "metric"]


class EvidenceRowFilter(filters.FilterSet):
    protocol_id = protocol_filter("protocol")
    evaluation_id = evaluation_filter("evaluation")
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)
    comparable = comparable_filter()

    class Meta:
        model = EvidenceRow
        fields = ["protocol_id", "evaluation_id", "review_state", "comparable", "support"]


class BaselineRoleFilter(filters.FilterSet):
    protocol_id = protocol_filter("protocol")
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)

    class Meta:
        model = BaselineRole
        fields = ["protocol_id", "kind", "status", "review_state"]


class ConfigurationFilter(filters.FilterSet):
    model_id = record_filter(
        GenomicModel, "model", field_name="model", help_text="Model stable id: the configurations of this model."
    )
    work_id = work_filter("source__work", "configurations described by any version of it")

    class Meta:
        model = Configuration
        fields = ["family", "method", "model_id", "work_id"]


class GenomicModelFilter(filters.FilterSet):
    work_id = work_filter("introduced_in", "the models it introduced")

    class Meta:
        model = GenomicModel
        fields = ["family", "work_id"]


class WorkFilter(filters.FilterSet):
    identifier = filters.CharFilter(
        method="find",
        max_length=500,
        help_text=(
            "A DOI, an arXiv id (with or without its version, or its abs/pdf URL) or a URL of any of the work's "
            "versions: the work it names, or an empty list when no version has it."
        ),
    )

    class Meta:
        model = Work
        fields = ["identifier"]

    def find(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        work = work_find(identifier=value)
        return queryset.filter(pk=work.pk) if work is not None else queryset.none()


class TaskEquivalenceFilter(filters.FilterSet):
    task_id = record_filter(
        Dataset,
        "dataset or task",
        method="either_side",
        help_text="Dataset or task stable id: the equivalences it is on either side of.",
    )

    class Meta:
        model = TaskEquivalence
        fields = ["task_id"]

    def either_side(self, queryset: QuerySet, name: str, task: Dataset) -> QuerySet:
        return queryset.filter(Q(task=task) | Q(same_as=task))


class AgreementFilter(filters.FilterSet):
    """The evaluations an agreements list is computed over."""

    model_id = model_filter("")
    task_id = task_filter("")

    class Meta:
        model = Evaluation
        fields = ["model_id", "task_id"]
