"""The catalogue API's serializers: one per record, named and shaped as the release tables
(`protocol_id`, `source_id`, `review_state`, `comparable`...); writes go through records.services."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.api import StrictCharField
from records.api_fields import CATALOGUE_FIELDS, ExactDecimalField, ref, stable_id_field
from records.models import (
    Area,
    BaselineRole,
    Configuration,
    Context,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    GenomicModel,
    Protocol,
    Result,
    Source,
    UncertaintyKind,
    Work,
)
from records.services import errors_by_field, protocol_limitations_set, record_upsert
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
        Work,
        "work",
        required=False,
        allow_null=True,
        help_text="The work this source is a version of (preprint version, journal paper, repository at a commit).",
    )

    class Meta:
        model = Source
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
        model = Dataset
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
    suite_id = ref(Dataset, "suite", required=False, allow_null=True)
    source_id = ref(Source, "source", required=False, allow_null=True)
    tasks = TaskSerializer(many=True, read_only=True)

    class Meta:
        model = Dataset
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
    source_id = ref(Source, "source", required=False, allow_null=True)
    model_id = ref(
        GenomicModel,
        "model",
        required=False,
        allow_null=True,
        help_text="The model tested (a configuration is a model plus how it was tested).",
    )

    class Meta:
        model = Configuration
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
    protocol_id = ref(Protocol, "protocol")
    configuration_id = ref(Configuration, "configuration", required=False, allow_null=True)

    class Meta:
        model = BaselineRole
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
    source_id = ref(Source, "source")
    dataset_ids = ref(Dataset, "datasets", many=True, required=False)
    areas = ref(Area, many=True, required=False)
    contexts = ref(Context, many=True, required=False)
    limitations = serializers.ListField(
        child=StrictCharField(max_length=5000),
        source="limitations_texts",
        required=False,
        help_text="Ordered limitations.",
    )
    baseline_roles = serializers.SerializerMethodField()

    class Meta:
        model = Protocol
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
            "metric_scale",
            "metric_direction",
            "best_marking",
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
    evaluation_id = ref(Evaluation, "evaluation")
    value = ExactDecimalField(help_text='The exact value with its printed precision, e.g. "0.410" or "3.00E+11".')
    uncertainty_kind = serializers.ChoiceField(
        choices=UncertaintyKind.choices,
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
        Configuration,
        "reference_configuration",
        required=False,
        allow_null=True,
        help_text="For a ratio or difference: the configuration it is relative to.",
    )

    class Meta:
        model = Result
        fields = (
            "result_id",
            "evaluation_id",
            *Result.MEASUREMENT_FIELDS,
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
    protocol_id = ref(Protocol, "protocol")
    configuration_id = ref(Configuration, "configuration")
    dataset_id = ref(Dataset, "dataset")
    source_id = ref(Source, "source", required=False, allow_null=True, help_text="The source that reports it.")
    repeats_id = ref(
        Evaluation,
        "repeats",
        required=False,
        allow_null=True,
        help_text="The evaluation whose measurement this one reports again (a copy, not a replication).",
    )
    original_source_id = ref(
        Source,
        "original_source",
        required=False,
        allow_null=True,
        help_text="The catalogued source that first published this number, when this source reports it again.",
    )
    concern_source_id = ref(Source, "concern_source", required=False, allow_null=True)
    results = NestedResultSerializer(many=True, read_only=True)
    comparable = serializers.BooleanField(
        source="is_comparable",
        read_only=True,
        help_text="Source checked, not excluded, and not a repeat of an evaluation that is compared itself.",
    )

    class Meta:
        model = Evaluation
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
            "original_basis",
            "original_reason",
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
    protocol_id = ref(Protocol, "protocol")
    evaluation_id = ref(Evaluation, "evaluation", required=False, allow_null=True)
    source_id = ref(Source, "source")

    class Meta:
        model = EvidenceRow
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
    protocol_ids = ref(Protocol, "protocols", many=True, required=False)

    class Meta:
        model = Decision
        fields = ("decision_id", "title", "description", "protocol_ids", "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")
