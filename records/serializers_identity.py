"""The API's serializers of identity across papers: models and their aliases, works and their
versions, task equivalences, and the agreement verdicts (records.agreement)."""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.links import absolute_url
from records.agreement import AGREEMENT_RULE, MEASUREMENT_RULE, Agreement, Measurement, Verdict
from records.api_fields import CATALOGUE_FIELDS
from records.models import CuratedModel, GenomicModel, MeasuredBy, ModelAlias, Source, TaskEquivalence, Work
from records.rules.evidence import Disagreement, Discrepancy
from records.values import exact_text
from reviews.models import ReviewState


@extend_schema_field({"type": "string", "format": "uri", "nullable": True})
class PageUrlField(serializers.Field):
    """The absolute address of the record's public page (null while the portal has no page for it)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("source", "*")
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("help_text", "The record's public page.")
        super().__init__(**kwargs)

    def to_representation(self, value: CuratedModel) -> str | None:
        try:
            path = value.get_absolute_url()
        except NoReverseMatch:
            return None
        return absolute_url(path, request=self.context.get("request"))


def read_ref(**kwargs: Any) -> serializers.SlugRelatedField:
    return serializers.SlugRelatedField(slug_field="stable_id", read_only=True, **kwargs)


class ModelAliasSerializer(serializers.ModelSerializer):
    serializer_field_mapping = CATALOGUE_FIELDS
    source_id = read_ref(source="source", allow_null=True, help_text="The source that prints the alias.")

    class Meta:
        model = ModelAlias
        fields = ("alias", "source_id", "locator", "basis", "quote", "reason", "review_state")
        read_only_fields = fields


class GenomicModelSerializer(serializers.ModelSerializer):
    serializer_field_mapping = CATALOGUE_FIELDS
    model_id = serializers.CharField(source="stable_id", read_only=True)
    introduced_in_id = read_ref(source="introduced_in", allow_null=True, help_text="The work that introduced it.")
    merged_into_id = read_ref(
        source="merged_into", allow_null=True, help_text="Set by a merge: the model this one is the same as."
    )
    aliases = ModelAliasSerializer(many=True, read_only=True, help_text="Names papers print for it.")
    configuration_ids = read_ref(
        source="configurations", many=True, help_text="The configurations (the model plus how it was tested)."
    )
    page_url = PageUrlField()

    class Meta:
        model = GenomicModel
        fields = (
            "model_id",
            "name",
            "family",
            "parameter_count",
            "public_id",
            "revision",
            "description",
            "introduced_in_id",
            "merged_into_id",
            "aliases",
            "configuration_ids",
            "page_url",
            "created_at",
            "updated_at",
        )
        read_only_fields = fields


class WorkVersionSerializer(serializers.ModelSerializer):
    serializer_field_mapping = CATALOGUE_FIELDS
    source_id = serializers.CharField(source="stable_id", read_only=True)
    url = serializers.URLField(read_only=True, allow_blank=True, help_text="Its address; empty when none is recorded.")

    class Meta:
        model = Source
        fields = ("source_id", "title", "kind", "published_date", "doi", "arxiv_id", "arxiv_version", "url", "commit")
        read_only_fields = fields


class WorkSerializer(serializers.ModelSerializer):
    serializer_field_mapping = CATALOGUE_FIELDS
    work_id = serializers.CharField(source="stable_id", read_only=True)
    versions = WorkVersionSerializer(
        many=True,
        read_only=True,
        help_text="Its sources: preprint versions, the journal paper, a repository at a commit.",
    )
    page_url = PageUrlField()

    class Meta:
        model = Work
        fields = (
            "work_id",
            "title",
            "authors_short",
            "description",
            "versions",
            "page_url",
            "created_at",
            "updated_at",
        )
        read_only_fields = fields


class TaskEquivalenceSerializer(serializers.ModelSerializer):
    serializer_field_mapping = CATALOGUE_FIELDS
    equivalence_id = serializers.CharField(source="stable_id", read_only=True)
    task_id = read_ref(source="task", help_text="A dataset or task.")
    same_as_id = read_ref(source="same_as", help_text="A task of another suite the source says is the same data.")
    source_id = read_ref(
        source="source", allow_null=True, help_text="The source that says so (null for a curator's inference)."
    )

    class Meta:
        model = TaskEquivalence
        fields = (
            "equivalence_id",
            "task_id",
            "same_as_id",
            "source_id",
            "locator",
            "quote",
            "basis",
            "reason",
            "review_state",
            "created_at",
            "updated_at",
        )
        read_only_fields = fields


# -- agreements (computed by records.agreement) --------------------------------------------------


class AgreementMeasurementSerializer(serializers.Serializer):
    evaluation_id = serializers.CharField(help_text="The evaluation whose printing is compared (the most precise).")
    source_id = serializers.CharField(allow_null=True, help_text="Its source (null for the portal's own run).")
    work_id = serializers.CharField(allow_null=True, help_text="The work its source is a version of.")
    measured_by = serializers.ChoiceField(choices=MeasuredBy.choices)
    measured_by_name = serializers.CharField()
    value = serializers.CharField(help_text='The exact value as printed, with its digits, e.g. "0.410".')
    unit = serializers.CharField()
    printed_value = serializers.CharField()
    scaled_value = serializers.CharField(
        help_text="The value on the metric's plain scale (x 100 and % divided by 100, per mille by 1,000)."
    )
    spread = serializers.CharField(
        allow_null=True, help_text="The stated ± figure on the plain scale (half an interval)."
    )
    review_state = serializers.ChoiceField(choices=ReviewState.choices)
    locator = serializers.CharField(help_text="Where its source prints it.")
    quote = serializers.CharField(help_text="The source's words, verbatim (blank for the portal's own run).")
    copy_evaluation_ids = serializers.ListField(
        child=serializers.CharField(),
        help_text="Other evaluations that print this same measurement (repeats, copies, other versions): counted once.",
    )


class DisagreementSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Discrepancy.CHOICES)
    kind_label = serializers.CharField()
    evaluation_id = serializers.CharField(help_text="The printing that disagrees with the one compared.")
    value = serializers.CharField(help_text="Its value as printed.")
    unit = serializers.CharField()
    source_id = serializers.CharField(allow_null=True)
    locator = serializers.CharField()
    quote = serializers.CharField()
    compared_evaluation_id = serializers.CharField(help_text="The printing compared in its place.")
    compared_value = serializers.CharField()
    compared_quote = serializers.CharField()


class AgreementSerializer(serializers.Serializer):
    subject_kind = serializers.ChoiceField(
        choices=[("model", "model"), ("configuration", "configuration")],
        help_text="A model, or a configuration where it names no model.",
    )
    subject_id = serializers.CharField(help_text="The model's or configuration's stable id.")
    subject_name = serializers.CharField()
    task_id = serializers.CharField(help_text="The task family's task first seen.")
    task_ids = serializers.ListField(
        child=serializers.CharField(), help_text="Every task of the family its measurements were made on."
    )
    metric = serializers.CharField(help_text="The protocols' metric_short_name.")
    verdict = serializers.ChoiceField(choices=Verdict.CHOICES)
    verdict_label = serializers.CharField()
    rule = serializers.CharField(help_text="The rule the verdict follows, in words.")
    measurements = AgreementMeasurementSerializer(many=True)
    disagreements = DisagreementSerializer(
        many=True, help_text="Printings of one measurement that do not agree with the one compared, with both quotes."
    )


def agreement_row(agreement: Agreement) -> dict[str, Any]:
    """One agreement as the API's row (AgreementSerializer's fields)."""
    subject = agreement.subject
    tasks = {p.evaluation.dataset.stable_id for x in agreement.measurements for p in x.printings}
    return {
        "subject_kind": "model" if agreement.subject_is_model else "configuration",
        "subject_id": subject.stable_id,
        "subject_name": subject.name,
        "task_id": agreement.task.stable_id,
        "task_ids": sorted(tasks),
        "metric": agreement.metric,
        "verdict": agreement.verdict,
        "verdict_label": agreement.verdict_label,
        "rule": f"{AGREEMENT_RULE} {MEASUREMENT_RULE}",
        "measurements": [_measurement_row(x) for x in agreement.measurements],
        "disagreements": [_disagreement_row(d) for d in agreement.disagreements],
    }


def _disagreement_row(found: Disagreement) -> dict[str, Any]:
    printing, against = found.printing, found.against
    source = printing.evaluation.source
    return {
        "kind": found.kind,
        "kind_label": found.label,
        "evaluation_id": printing.evaluation.stable_id,
        "value": exact_text(printing.result.value),
        "unit": printing.result.unit,
        "source_id": source.stable_id if source is not None else None,
        "locator": printing.evaluation.source_locator,
        "quote": printing.evaluation.quote,
        "compared_evaluation_id": against.evaluation.stable_id,
        "compared_value": exact_text(against.result.value),
        "compared_quote": against.evaluation.quote,
    }


def _measurement_row(measurement: Measurement) -> dict[str, Any]:
    shown = measurement.shown
    evaluation, result = shown.evaluation, shown.result
    source = evaluation.source
    return {
        "evaluation_id": evaluation.stable_id,
        "source_id": source.stable_id if source is not None else None,
        "work_id": source.work.stable_id if source is not None and source.work is not None else None,
        "measured_by": evaluation.measured_by,
        "measured_by_name": evaluation.measured_by_name,
        "value": exact_text(result.value),
        "unit": result.unit,
        "printed_value": result.printed_value,
        "scaled_value": exact_text(shown.value),
        "spread": exact_text(shown.spread) if shown.spread is not None else None,
        "review_state": evaluation.review_state,
        "locator": evaluation.source_locator,
        "quote": evaluation.quote,
        "copy_evaluation_ids": list(
            dict.fromkeys(p.evaluation.stable_id for p in measurement.copies if p.evaluation.pk != evaluation.pk)
        ),
    }
