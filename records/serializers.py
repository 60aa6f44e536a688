"""The catalogue API's serializers: one per record, named and shaped as the release tables
(`protocol_id`, `source_id`, `review_state`, `comparable`...); writes go through records.services."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.urls import NoReverseMatch
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.api import StrictCharField
from records import models as m
from records.agreement import AGREEMENT_RULE, Agreement, Measurement, Verdict
from records.api_fields import CATALOGUE_FIELDS, ExactDecimalField, ref, stable_id_field
from records.services import errors_by_field, protocol_limitations_set, record_upsert
from records.values import exact_text
from reviews.models import ReviewState


class CatalogueSerializer(serializers.ModelSerializer):
    """Writes through records.services; a Django validation error comes back naming the API's field."""

    serializer_field_mapping = CATALOGUE_FIELDS  # '١٢٣' is refused, not stored as 123; text only as strings

    id_field: str = ""

    def get_fields(self):
        fields = super().get_fields()
        for field in fields.values():
            if isinstance(field, serializers.ChoiceField) and not field.read_only:
                # name the valid choices, so a client can correct its request from the error alone
                field.error_messages["invalid_choice"] = '"{input}" is not a valid choice: use one of ' + ", ".join(
                    str(choice) for choice in field.choices if choice != ""
                )
        return fields

    def validate(self, attrs):
        stable_id = attrs.get("stable_id")
        if self.instance is None and stable_id and self.Meta.model.objects.filter(stable_id=stable_id).exists():
            raise serializers.ValidationError(
                {self.id_field: f"a record with stable id {stable_id!r} exists; update it with PUT or PATCH"}
            )
        if self.instance is not None and stable_id is not None and stable_id != self.instance.stable_id:
            # Stable ids never change: an update names the record's own (PUT must, PATCH may).
            raise serializers.ValidationError(
                {
                    self.id_field: f"stable ids never change: this record is {self.instance.stable_id!r}, not {stable_id!r}"
                }
            )
        return attrs

    def _api_name(self, model_field: str) -> str:
        for name, field in self.fields.items():
            if field.source == model_field:
                return name
        return "non_field_errors" if model_field == "__all__" else model_field

    def _write(self, record, validated_data):
        limitations = validated_data.pop("limitations_texts", None)
        many_names = {field.name for field in self.Meta.model._meta.many_to_many}
        many = {name: validated_data.pop(name) for name in list(validated_data) if name in many_names}
        request = self.context["request"]
        try:
            with transaction.atomic():  # the record and its limitations, or neither
                record_upsert(record=record, values=validated_data, many=many, actor=request.user, reason="API")
                if limitations is not None:
                    protocol_limitations_set(protocol=record, texts=limitations, actor=request.user, reason="API")
        except DjangoValidationError as exc:
            raise serializers.ValidationError(
                {self._api_name(k): v for k, v in errors_by_field(exc, self.Meta.model).items()}
            ) from None
        return record

    def create(self, validated_data):
        return self._write(self.Meta.model(), validated_data)

    def update(self, instance, validated_data):
        return self._write(instance, validated_data)


REVIEW_FIELDS = ("review_state", "comparable", "concern", "review_state_changed_at", "last_reviewed_by_role")


class ReviewFieldsMixin(serializers.Serializer):
    review_state = serializers.ChoiceField(choices=ReviewState.choices, read_only=True)
    comparable = serializers.BooleanField(
        source="is_comparable", read_only=True, help_text="Source checked and not excluded: enters comparisons."
    )
    concern = serializers.CharField(read_only=True, help_text="Why the record is excluded from comparison, when it is.")
    review_state_changed_at = serializers.DateTimeField(read_only=True, allow_null=True)
    last_reviewed_by_role = serializers.CharField(
        source="review_state_changed_by_role",
        read_only=True,
        help_text="The role (never the name) of the last reviewer.",
    )


# -- serializers --------------------------------------------------------------------------------


class SourceSerializer(CatalogueSerializer):
    id_field = "source_id"
    source_id = stable_id_field()
    work_id = ref(
        m.Work,
        "work",
        required=False,
        allow_null=True,
        help_text="The work this source is a version of (preprint version, journal paper, repository at a commit).",
    )

    class Meta:
        model = m.Source
        fields = (
            "source_id",
            "title",
            "venue",
            "kind",
            "authors_short",
            "citation",
            "published_date",
            "doi",
            "pmcid",
            "arxiv_id",
            "arxiv_version",
            "url",
            "commit",
            "copy_consulted",
            "work_id",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class TaskSerializer(serializers.ModelSerializer):
    serializer_field_mapping = CATALOGUE_FIELDS
    dataset_id = serializers.CharField(source="stable_id", read_only=True)

    class Meta:
        model = m.Dataset
        fields = (
            "dataset_id",
            "name",
            "task_key",
            "train_size",
            "test_size",
            "num_classes",
            "sequence_length_bp",
            "metric",
        )
        read_only_fields = fields


class DatasetSerializer(CatalogueSerializer):
    id_field = "dataset_id"
    dataset_id = stable_id_field()
    suite_id = ref(m.Dataset, "suite", required=False, allow_null=True)
    source_id = ref(m.Source, "source", required=False, allow_null=True)
    tasks = TaskSerializer(many=True, read_only=True)

    class Meta:
        model = m.Dataset
        fields = (
            "dataset_id",
            "name",
            "description",
            "suite_id",
            "task_key",
            "position",
            "train_size",
            "test_size",
            "num_classes",
            "sequence_length_bp",
            "metric",
            "source_id",
            "source_locator",
            "tasks",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class ConfigurationSerializer(CatalogueSerializer):
    id_field = "configuration_id"
    configuration_id = stable_id_field()
    source_id = ref(m.Source, "source", required=False, allow_null=True)
    model_id = ref(
        m.GenomicModel,
        "model",
        required=False,
        allow_null=True,
        help_text="The model tested (a configuration is a model plus how it was tested).",
    )

    class Meta:
        model = m.Configuration
        fields = (
            "configuration_id",
            "name",
            "short_name",
            "family",
            "parameter_count",
            "method",
            "description",
            "source_id",
            "model_id",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class BaselineRoleSerializer(ReviewFieldsMixin, CatalogueSerializer):
    id_field = "baseline_role_id"
    baseline_role_id = stable_id_field()
    protocol_id = ref(m.Protocol, "protocol")
    configuration_id = ref(m.Configuration, "configuration", required=False, allow_null=True)

    class Meta:
        model = m.BaselineRole
        fields = (
            "baseline_role_id",
            "protocol_id",
            "kind",
            "status",
            "selection_rule",
            "requirements",
            "configuration_id",
            *REVIEW_FIELDS,
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class ProtocolSerializer(ReviewFieldsMixin, CatalogueSerializer):
    id_field = "protocol_id"
    protocol_id = stable_id_field()
    source_id = ref(m.Source, "source")
    dataset_ids = ref(m.Dataset, "datasets", many=True, required=False)
    areas = ref(m.Area, many=True, required=False)
    contexts = ref(m.Context, many=True, required=False)
    limitations = serializers.ListField(
        child=StrictCharField(max_length=5000),
        source="limitations_texts",
        required=False,
        help_text="Ordered limitations.",
    )
    baseline_roles = serializers.SerializerMethodField()

    class Meta:
        model = m.Protocol
        fields = (
            "protocol_id",
            "title",
            "summary",
            "procedure",
            "version_label",
            "metric_name",
            "metric_short_name",
            "metric_description",
            "metric_unit",
            "metric_direction",
            "dataset_ids",
            "areas",
            "contexts",
            "limitations",
            "source_id",
            "source_locator",
            "explanatory_profile",
            "explanatory_profile_reviewed",
            "baseline_roles",
            *REVIEW_FIELDS,
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")

    def to_representation(self, instance):
        instance.limitations_texts = [limitation.text for limitation in instance.limitations.all()]
        return super().to_representation(instance)

    @extend_schema_field(BaselineRoleSerializer(many=True))
    def get_baseline_roles(self, instance):
        return BaselineRoleSerializer(instance.baseline_roles.all(), many=True, context=self.context).data


class ResultSerializer(CatalogueSerializer):
    id_field = "result_id"
    result_id = stable_id_field()
    evaluation_id = ref(m.Evaluation, "evaluation")
    value = ExactDecimalField(help_text='The exact value with its printed precision, e.g. "0.410" or "3.00E+11".')
    uncertainty_kind = serializers.ChoiceField(
        choices=m.UncertaintyKind.choices,
        allow_blank=True,
        required=False,
        help_text="Blank when the source reports none.",
    )
    uncertainty_value = ExactDecimalField(required=False, allow_null=True, help_text="The printed ± figure.")
    lower_bound = ExactDecimalField(required=False, allow_null=True)
    upper_bound = ExactDecimalField(required=False, allow_null=True)
    uncertainty_level = ExactDecimalField(
        required=False, allow_null=True, help_text="A confidence interval's level in percent."
    )
    reference_configuration_id = ref(
        m.Configuration,
        "reference_configuration",
        required=False,
        allow_null=True,
        help_text="For a ratio or difference: the configuration it is relative to.",
    )

    class Meta:
        model = m.Result
        fields = (
            "result_id",
            "evaluation_id",
            "value",
            "unit",
            "printed_value",
            "uncertainty_kind",
            "uncertainty_value",
            "lower_bound",
            "upper_bound",
            "uncertainty_level",
            "num_runs",
            "relation",
            "reference_configuration_id",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class NestedResultSerializer(ResultSerializer):
    class Meta(ResultSerializer.Meta):
        fields = tuple(
            name for name in ResultSerializer.Meta.fields if name not in ("evaluation_id", "created_at", "updated_at")
        )
        read_only_fields = fields


class EvaluationSerializer(ReviewFieldsMixin, CatalogueSerializer):
    id_field = "evaluation_id"
    evaluation_id = stable_id_field()
    protocol_id = ref(m.Protocol, "protocol")
    configuration_id = ref(m.Configuration, "configuration")
    dataset_id = ref(m.Dataset, "dataset")
    source_id = ref(m.Source, "source", required=False, allow_null=True, help_text="The source that reports it.")
    repeats_id = ref(
        m.Evaluation,
        "repeats",
        required=False,
        allow_null=True,
        help_text="The evaluation whose measurement this one reports again (a copy, not a replication).",
    )
    original_source_id = ref(
        m.Source,
        "original_source",
        required=False,
        allow_null=True,
        help_text="The catalogued source that first published this number, when this source reports it again.",
    )
    concern_source_id = ref(m.Source, "concern_source", required=False, allow_null=True)
    results = NestedResultSerializer(many=True, read_only=True)
    comparable = serializers.BooleanField(
        source="is_comparable",
        read_only=True,
        help_text="Source checked, not excluded, and not a repeat of an evaluation that is compared itself.",
    )

    class Meta:
        model = m.Evaluation
        fields = (
            "evaluation_id",
            "title",
            "protocol_id",
            "configuration_id",
            "dataset_id",
            "measured_by",
            "measured_by_name",
            "repeats_id",
            "reading_method",
            "setup",
            "aggregation",
            "uncertainty",
            "coverage_scored",
            "coverage_eligible",
            "source_id",
            "source_locator",
            "quote",
            "original_source_id",
            "original_citation",
            "original_locator",
            "concern_source_id",
            "concern_locator",
            "results",
            *REVIEW_FIELDS,
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class EvidenceRowSerializer(ReviewFieldsMixin, CatalogueSerializer):
    id_field = "evidence_id"
    evidence_id = stable_id_field()
    protocol_id = ref(m.Protocol, "protocol")
    evaluation_id = ref(m.Evaluation, "evaluation", required=False, allow_null=True)
    source_id = ref(m.Source, "source")

    class Meta:
        model = m.EvidenceRow
        fields = (
            "evidence_id",
            "protocol_id",
            "evaluation_id",
            "property_name",
            "statement",
            "source_id",
            "locator",
            "quote",
            "support",
            *REVIEW_FIELDS,
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class DecisionSerializer(CatalogueSerializer):
    id_field = "decision_id"
    decision_id = stable_id_field()
    protocol_ids = ref(m.Protocol, "protocols", many=True, required=False)

    class Meta:
        model = m.Decision
        fields = ("decision_id", "title", "description", "protocol_ids", "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")


# -- identity: models, works, task equivalences (read only) ------------------------------------


@extend_schema_field({"type": "string", "format": "uri", "nullable": True})
class PageUrlField(serializers.Field):
    """The absolute address of the record's public page (null while the portal has no page for it)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("source", "*")
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("help_text", "The record's public page.")
        super().__init__(**kwargs)

    def to_representation(self, value: m.CuratedModel) -> str | None:
        try:
            path = value.get_absolute_url()
        except NoReverseMatch:
            return None
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


def read_ref(**kwargs: Any) -> serializers.SlugRelatedField:
    return serializers.SlugRelatedField(slug_field="stable_id", read_only=True, **kwargs)


class ModelAliasSerializer(serializers.ModelSerializer):
    serializer_field_mapping = CATALOGUE_FIELDS
    source_id = read_ref(source="source", allow_null=True, help_text="The source that prints the alias.")

    class Meta:
        model = m.ModelAlias
        fields = ("alias", "source_id", "locator")
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
        model = m.GenomicModel
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

    class Meta:
        model = m.Source
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
        model = m.Work
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
    source_id = read_ref(source="source", help_text="The source that says so.")

    class Meta:
        model = m.TaskEquivalence
        fields = (
            "equivalence_id",
            "task_id",
            "same_as_id",
            "source_id",
            "locator",
            "quote",
            "created_at",
            "updated_at",
        )
        read_only_fields = fields


# -- agreements (computed by records.agreement) --------------------------------------------------


class AgreementMeasurementSerializer(serializers.Serializer):
    evaluation_id = serializers.CharField(help_text="The evaluation whose printing is compared (the most precise).")
    source_id = serializers.CharField(allow_null=True, help_text="Its source (null for the portal's own run).")
    work_id = serializers.CharField(allow_null=True, help_text="The work its source is a version of.")
    measured_by = serializers.ChoiceField(choices=m.MeasuredBy.choices)
    measured_by_name = serializers.CharField()
    value = serializers.CharField(help_text='The exact value as printed, with its digits, e.g. "0.410".')
    unit = serializers.CharField()
    printed_value = serializers.CharField()
    scaled_value = serializers.CharField(
        help_text='The value on the metric\'s plain scale ("x 100" and "%" divided by 100).'
    )
    spread = serializers.CharField(
        allow_null=True, help_text="The stated ± figure on the plain scale (half an interval)."
    )
    review_state = serializers.ChoiceField(choices=ReviewState.choices)
    copy_evaluation_ids = serializers.ListField(
        child=serializers.CharField(),
        help_text="Other evaluations that print this same measurement (repeats, copies, other versions): counted once.",
    )


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
        "rule": AGREEMENT_RULE,
        "measurements": [_measurement_row(x) for x in agreement.measurements],
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
        "copy_evaluation_ids": list(
            dict.fromkeys(p.evaluation.stable_id for p in measurement.copies if p.evaluation.pk != evaluation.pk)
        ),
    }
