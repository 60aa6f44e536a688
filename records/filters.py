"""The catalogue API's list filters (django-filter), named as the serializers' fields."""

from __future__ import annotations

from django.db.models import Q
from django_filters import rest_framework as filters

from common.api import StrictBooleanFilter
from records import models as m
from reviews.models import ReviewState


def comparable_filter(prefix: str = "", *, repeats: bool = False) -> StrictBooleanFilter:
    """`comparable=true`: rows whose (evaluation's) source was checked and that are not excluded;
    for evaluations and results, the rule of records.models.evaluation_comparable (a repeat counts
    through its original)."""
    comparable = m.comparable_q(prefix) if repeats else Q(**{f"{prefix}review_state": ReviewState.SOURCE_CHECKED})

    def apply(queryset, name, value):
        return queryset.filter(comparable) if value else queryset.exclude(comparable)

    return StrictBooleanFilter(
        method=apply,
        help_text="Enters comparisons: source checked, not excluded, and not a repeat of a compared or excluded measurement.",
    )


class ProtocolFilter(filters.FilterSet):
    area = filters.CharFilter(field_name="areas__stable_id", help_text="Area stable id, e.g. dna-genomes.")
    context = filters.CharFilter(field_name="contexts__stable_id", help_text="Context stable id, e.g. research.")
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)
    comparable = comparable_filter()
    dataset_id = filters.CharFilter(field_name="datasets__stable_id")

    class Meta:
        model = m.Protocol
        fields = ["area", "context", "review_state", "comparable", "dataset_id"]


class EvaluationFilter(filters.FilterSet):
    protocol_id = filters.CharFilter(field_name="protocol__stable_id")
    dataset_id = filters.CharFilter(field_name="dataset__stable_id")
    configuration_id = filters.CharFilter(field_name="configuration__stable_id")
    measured_by = filters.ChoiceFilter(choices=m.MeasuredBy.choices)
    reading_method = filters.ChoiceFilter(choices=m.ReadingMethod.choices)
    source_id = filters.CharFilter(field_name="source__stable_id", help_text="The source that reports it.")
    repeats_id = filters.CharFilter(
        field_name="repeats__stable_id", help_text="Evaluations that report this evaluation's measurement again."
    )
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)
    area = filters.CharFilter(field_name="protocol__areas__stable_id", help_text="Area of the evaluation's protocol.")
    comparable = comparable_filter(repeats=True)

    class Meta:
        model = m.Evaluation
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
        ]


class ResultFilter(filters.FilterSet):
    evaluation_id = filters.CharFilter(field_name="evaluation__stable_id")
    protocol_id = filters.CharFilter(field_name="evaluation__protocol__stable_id")
    dataset_id = filters.CharFilter(field_name="evaluation__dataset__stable_id")
    configuration_id = filters.CharFilter(field_name="evaluation__configuration__stable_id")
    measured_by = filters.ChoiceFilter(field_name="evaluation__measured_by", choices=m.MeasuredBy.choices)
    relation = filters.ChoiceFilter(choices=m.Relation.choices)
    reference_configuration_id = filters.CharFilter(field_name="reference_configuration__stable_id")
    review_state = filters.ChoiceFilter(field_name="evaluation__review_state", choices=ReviewState.choices)
    area = filters.CharFilter(field_name="evaluation__protocol__areas__stable_id")
    comparable = comparable_filter("evaluation__", repeats=True)

    class Meta:
        model = m.Result
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
        ]


class DatasetFilter(filters.FilterSet):
    suite_id = filters.CharFilter(field_name="suite__stable_id")
    is_suite = StrictBooleanFilter(
        field_name="suite", lookup_expr="isnull", help_text="True: suites and stand-alone datasets only."
    )

    class Meta:
        model = m.Dataset
        fields = ["suite_id", "is_suite", "metric"]


class EvidenceRowFilter(filters.FilterSet):
    protocol_id = filters.CharFilter(field_name="protocol__stable_id")
    evaluation_id = filters.CharFilter(field_name="evaluation__stable_id")
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)
    comparable = comparable_filter()

    class Meta:
        model = m.EvidenceRow
        fields = ["protocol_id", "evaluation_id", "review_state", "comparable", "support"]


class BaselineRoleFilter(filters.FilterSet):
    protocol_id = filters.CharFilter(field_name="protocol__stable_id")
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)

    class Meta:
        model = m.BaselineRole
        fields = ["protocol_id", "kind", "status", "review_state"]
