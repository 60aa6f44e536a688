"""The catalogue's REST API: read everything by stable id, write as a curator, import a paper.

Field names follow the release tables (`protocol_id`, `source_id`, `review_state`, `comparable`...).
Writes go through records.services, so history and automatic reopening are the admin's.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import FloatField, Max, Prefetch, Q
from django.db.models.functions import Cast
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.exceptions import MethodNotAllowed
from rest_framework.filters import OrderingFilter
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import ConditionalGetMixin, newest
from records import models as m
from records.values import ValueInvalid, exact_text, parse_exact
from records.imports import SECTIONS, ImportConflict, ImportInvalid, records_import
from records.seed import seed_document
from records.services import errors_by_field, protocol_limitations_set, record_upsert
from reviews.api import ReviewActionsMixin
from reviews.models import ReviewState


# -- fields ------------------------------------------------------------------------------------


@extend_schema_field(
    {
        "oneOf": [{"type": "string", "pattern": r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$"}, {"type": "number"}],
        "example": "0.410",
        "description": "Answered as a string with the printed digits; a JSON number is taken with the digits it is written with.",
    }
)
class ExactDecimalField(serializers.Field):
    """An exact decimal with its printed precision, as a string ("0.410", "66.47", "3.00E+11").

    Written as a string or a JSON number (the API's JSON parser reads numbers as decimals, so 0.410
    keeps its trailing zero)."""

    default_error_messages = {"invalid": "{message}"}

    def to_representation(self, value):
        return exact_text(value)

    def to_internal_value(self, data):
        try:
            return parse_exact(data)
        except ValueInvalid as exc:
            self.fail("invalid", message=str(exc))


def stable_id_field() -> serializers.SlugField:
    return serializers.SlugField(source="stable_id", max_length=150, help_text="Stable id (slug); never changes once created.")


def ref(model, source: str | None = None, **kwargs) -> serializers.SlugRelatedField:
    """A reference to another record by its stable id."""
    if source is not None:
        kwargs["source"] = source
    return serializers.SlugRelatedField(slug_field="stable_id", queryset=model.objects.all(), **kwargs)


class CatalogueSerializer(serializers.ModelSerializer):
    """Writes through records.services; a Django validation error comes back naming the API's field."""

    id_field: str = ""

    def get_fields(self):
        fields = super().get_fields()
        if self.instance is not None and not isinstance(self.instance, list):
            fields[self.id_field].read_only = True  # stable ids never change
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
            raise serializers.ValidationError({self.id_field: f"a record with stable id {stable_id!r} exists; update it with PUT or PATCH"})
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
            raise serializers.ValidationError({self._api_name(k): v for k, v in errors_by_field(exc, self.Meta.model).items()}) from None
        return record

    def create(self, validated_data):
        return self._write(self.Meta.model(), validated_data)

    def update(self, instance, validated_data):
        return self._write(instance, validated_data)


REVIEW_FIELDS = ("review_state", "comparable", "concern", "review_state_changed_at", "last_reviewed_by_role")


class ReviewFieldsMixin(serializers.Serializer):
    review_state = serializers.ChoiceField(choices=ReviewState.choices, read_only=True)
    comparable = serializers.BooleanField(source="is_comparable", read_only=True, help_text="Source checked and not excluded: enters comparisons.")
    concern = serializers.CharField(read_only=True, help_text="Why the record is excluded from comparison, when it is.")
    review_state_changed_at = serializers.DateTimeField(read_only=True, allow_null=True)
    last_reviewed_by_role = serializers.CharField(source="review_state_changed_by_role", read_only=True, help_text="The role (never the name) of the last reviewer.")


# -- serializers --------------------------------------------------------------------------------


class SourceSerializer(CatalogueSerializer):
    id_field = "source_id"
    source_id = stable_id_field()

    class Meta:
        model = m.Source
        fields = (
            "source_id", "title", "venue", "kind", "authors_short", "citation", "published_date", "doi", "pmcid", "arxiv_id",
            "arxiv_version", "url", "commit", "copy_consulted", "created_at", "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class TaskSerializer(serializers.ModelSerializer):
    dataset_id = serializers.CharField(source="stable_id", read_only=True)

    class Meta:
        model = m.Dataset
        fields = ("dataset_id", "name", "task_key", "train_size", "test_size", "num_classes", "sequence_length_bp", "metric")
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
            "dataset_id", "name", "description", "suite_id", "task_key", "position", "train_size", "test_size", "num_classes",
            "sequence_length_bp", "metric", "source_id", "source_locator", "tasks", "created_at", "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class ConfigurationSerializer(CatalogueSerializer):
    id_field = "configuration_id"
    configuration_id = stable_id_field()
    source_id = ref(m.Source, "source", required=False, allow_null=True)

    class Meta:
        model = m.Configuration
        fields = ("configuration_id", "name", "short_name", "family", "parameter_count", "method", "description", "source_id", "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")


class BaselineRoleSerializer(ReviewFieldsMixin, CatalogueSerializer):
    id_field = "baseline_role_id"
    baseline_role_id = stable_id_field()
    protocol_id = ref(m.Protocol, "protocol")
    configuration_id = ref(m.Configuration, "configuration", required=False, allow_null=True)

    class Meta:
        model = m.BaselineRole
        fields = ("baseline_role_id", "protocol_id", "kind", "status", "selection_rule", "requirements", "configuration_id", *REVIEW_FIELDS, "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")


class ProtocolSerializer(ReviewFieldsMixin, CatalogueSerializer):
    id_field = "protocol_id"
    protocol_id = stable_id_field()
    source_id = ref(m.Source, "source")
    dataset_ids = ref(m.Dataset, "datasets", many=True, required=False)
    areas = ref(m.Area, many=True, required=False)
    contexts = ref(m.Context, many=True, required=False)
    limitations = serializers.ListField(
        child=serializers.CharField(max_length=5000), source="limitations_texts", required=False, help_text="Ordered limitations."
    )
    baseline_roles = serializers.SerializerMethodField()

    class Meta:
        model = m.Protocol
        fields = (
            "protocol_id", "title", "summary", "procedure", "version_label", "metric_name", "metric_short_name", "metric_description",
            "metric_unit", "metric_direction", "dataset_ids", "areas", "contexts", "limitations", "source_id", "source_locator",
            "explanatory_profile", "explanatory_profile_reviewed", "baseline_roles", *REVIEW_FIELDS, "created_at", "updated_at",
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
    value = ExactDecimalField(help_text="The exact value with its printed precision, e.g. \"0.410\" or \"3.00E+11\".")
    uncertainty_kind = serializers.ChoiceField(
        choices=m.UncertaintyKind.choices, allow_blank=True, required=False, help_text="Blank when the source reports none."
    )
    uncertainty_value = ExactDecimalField(required=False, allow_null=True, help_text="The printed ± figure.")
    lower_bound = ExactDecimalField(required=False, allow_null=True)
    upper_bound = ExactDecimalField(required=False, allow_null=True)
    uncertainty_level = ExactDecimalField(required=False, allow_null=True, help_text="A confidence interval's level in percent.")
    reference_configuration_id = ref(
        m.Configuration, "reference_configuration", required=False, allow_null=True,
        help_text="For a ratio or difference: the configuration it is relative to.",
    )

    class Meta:
        model = m.Result
        fields = (
            "result_id", "evaluation_id", "value", "unit", "printed_value", "uncertainty_kind", "uncertainty_value", "lower_bound",
            "upper_bound", "uncertainty_level", "num_runs", "relation", "reference_configuration_id", "created_at", "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class NestedResultSerializer(ResultSerializer):
    class Meta(ResultSerializer.Meta):
        fields = tuple(name for name in ResultSerializer.Meta.fields if name not in ("evaluation_id", "created_at", "updated_at"))
        read_only_fields = fields


class EvaluationSerializer(ReviewFieldsMixin, CatalogueSerializer):
    id_field = "evaluation_id"
    evaluation_id = stable_id_field()
    protocol_id = ref(m.Protocol, "protocol")
    configuration_id = ref(m.Configuration, "configuration")
    dataset_id = ref(m.Dataset, "dataset")
    source_id = ref(m.Source, "source", required=False, allow_null=True, help_text="The source that reports it.")
    repeats_id = ref(
        m.Evaluation, "repeats", required=False, allow_null=True,
        help_text="The evaluation whose measurement this one reports again (a copy, not a replication).",
    )
    concern_source_id = ref(m.Source, "concern_source", required=False, allow_null=True)
    results = NestedResultSerializer(many=True, read_only=True)
    comparable = serializers.BooleanField(
        source="is_comparable", read_only=True,
        help_text="Source checked, not excluded, and not a repeat of an evaluation that is compared itself.",
    )

    class Meta:
        model = m.Evaluation
        fields = (
            "evaluation_id", "title", "protocol_id", "configuration_id", "dataset_id", "measured_by", "measured_by_name",
            "repeats_id", "reading_method", "setup", "aggregation", "uncertainty", "coverage_scored", "coverage_eligible",
            "source_id", "source_locator", "quote", "concern_source_id", "concern_locator", "results", *REVIEW_FIELDS,
            "created_at", "updated_at",
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
        fields = ("evidence_id", "protocol_id", "evaluation_id", "property_name", "statement", "source_id", "locator", "quote", "support", *REVIEW_FIELDS, "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")


class DecisionSerializer(CatalogueSerializer):
    id_field = "decision_id"
    decision_id = stable_id_field()
    protocol_ids = ref(m.Protocol, "protocols", many=True, required=False)

    class Meta:
        model = m.Decision
        fields = ("decision_id", "title", "description", "protocol_ids", "created_at", "updated_at")
        read_only_fields = ("created_at", "updated_at")


# -- filters ----------------------------------------------------------------------------------------


def comparable_filter(prefix: str = "", *, repeats: bool = False) -> filters.BooleanFilter:
    """`comparable=true`: rows whose (evaluation's) source was checked and that are not excluded;
    for evaluations and results, the rule of records.models.evaluation_comparable (a repeat counts
    through its original)."""
    comparable = m.comparable_q(prefix) if repeats else Q(**{f"{prefix}review_state": ReviewState.SOURCE_CHECKED})

    def apply(queryset, name, value):
        return queryset.filter(comparable) if value else queryset.exclude(comparable)

    return filters.BooleanFilter(method=apply, help_text="Enters comparisons: source checked, not excluded, and not a repeat of a compared or excluded measurement.")


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
    repeats_id = filters.CharFilter(field_name="repeats__stable_id", help_text="Evaluations that report this evaluation's measurement again.")
    review_state = filters.ChoiceFilter(choices=ReviewState.choices)
    area = filters.CharFilter(field_name="protocol__areas__stable_id", help_text="Area of the evaluation's protocol.")
    comparable = comparable_filter(repeats=True)

    class Meta:
        model = m.Evaluation
        fields = ["protocol_id", "dataset_id", "configuration_id", "measured_by", "reading_method", "source_id", "repeats_id", "review_state", "area", "comparable"]


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
        fields = ["evaluation_id", "protocol_id", "dataset_id", "configuration_id", "measured_by", "relation", "reference_configuration_id", "review_state", "area", "comparable"]


class DatasetFilter(filters.FilterSet):
    suite_id = filters.CharFilter(field_name="suite__stable_id")
    is_suite = filters.BooleanFilter(field_name="suite", lookup_expr="isnull", help_text="True: suites and stand-alone datasets only.")

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


# -- viewsets ---------------------------------------------------------------------------------


class CatalogueViewSet(
    ConditionalGetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Read by anyone; create and update with the model's add/change permission (curators)."""

    lookup_field = "stable_id"
    lookup_value_regex = r"[-a-zA-Z0-9_]+"
    permission_classes = [permissions.DjangoModelPermissionsOrAnonReadOnly]
    http_method_names = ["get", "post", "put", "patch", "head", "options"]
    filter_backends = [filters.DjangoFilterBackend, OrderingFilter]
    ordering_fields = ["stable_id", "created_at", "updated_at"]
    # Children whose updates change what a response shows: they count for Last-Modified.
    nested_children: tuple[str, ...] = ()

    def initial(self, request, *args, **kwargs):
        if request.method.lower() not in self.http_method_names:
            raise MethodNotAllowed(request.method)  # 405 before permissions: nothing here is deleted
        super().initial(request, *args, **kwargs)

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        model = queryset.model
        tables = [model, *(model._meta.get_field(name).related_model for name in self.nested_children)]
        self.last_modified = newest(*(table._default_manager.aggregate(latest=Max("updated_at"))["latest"] for table in tables))
        return page

    def get_object(self):
        record = super().get_object()
        self.last_modified = self._modified(record)
        return record

    def _modified(self, record):
        return newest(record.updated_at, *(child.updated_at for name in self.nested_children for child in getattr(record, name).all()))


class SourceViewSet(CatalogueViewSet):
    queryset = m.Source.objects.all()
    serializer_class = SourceSerializer
    filterset_fields = ["kind", "venue"]
    ordering_fields = CatalogueViewSet.ordering_fields + ["title", "published_date"]


class DatasetViewSet(CatalogueViewSet):
    queryset = m.Dataset.objects.select_related("suite", "source").prefetch_related("tasks")
    serializer_class = DatasetSerializer
    filterset_class = DatasetFilter
    ordering_fields = CatalogueViewSet.ordering_fields + ["name", "position"]
    nested_children = ("tasks",)


class ConfigurationViewSet(CatalogueViewSet):
    queryset = m.Configuration.objects.select_related("source")
    serializer_class = ConfigurationSerializer
    filterset_fields = ["family", "method"]
    ordering_fields = CatalogueViewSet.ordering_fields + ["name", "parameter_count"]


class ProtocolViewSet(ReviewActionsMixin, CatalogueViewSet):
    queryset = m.Protocol.objects.select_related("source").prefetch_related(
        "datasets", "areas", "contexts", "limitations",
        Prefetch("baseline_roles", queryset=m.BaselineRole.objects.select_related("protocol", "configuration")),
    )
    serializer_class = ProtocolSerializer
    filterset_class = ProtocolFilter
    ordering_fields = CatalogueViewSet.ordering_fields + ["title"]
    nested_children = ("limitations", "baseline_roles")


class EvaluationViewSet(ReviewActionsMixin, CatalogueViewSet):
    queryset = m.Evaluation.objects.select_related("protocol", "configuration", "dataset", "source", "concern_source", "repeats").prefetch_related(
        Prefetch("results", queryset=m.Result.objects.select_related("reference_configuration").order_by("stable_id"))
    )
    serializer_class = EvaluationSerializer
    filterset_class = EvaluationFilter
    ordering_fields = CatalogueViewSet.ordering_fields + ["title", "measured_by", "review_state"]
    nested_children = ("results",)


class ValueOrderingFilter(OrderingFilter):
    """`ordering=value` orders by the number, not by its stored text ("10" after "9")."""

    def get_ordering(self, request, queryset, view):
        ordering = super().get_ordering(request, queryset, view)
        return ordering and [term.replace("value", "value_number") if term.lstrip("-") == "value" else term for term in ordering]


class ResultViewSet(CatalogueViewSet):
    queryset = m.Result.objects.select_related("evaluation", "evaluation__protocol", "reference_configuration").annotate(
        value_number=Cast("value", FloatField())
    )
    serializer_class = ResultSerializer
    filterset_class = ResultFilter
    filter_backends = [filters.DjangoFilterBackend, ValueOrderingFilter]
    ordering_fields = CatalogueViewSet.ordering_fields + ["value"]


class EvidenceRowViewSet(ReviewActionsMixin, CatalogueViewSet):
    queryset = m.EvidenceRow.objects.select_related("protocol", "evaluation", "source")
    serializer_class = EvidenceRowSerializer
    filterset_class = EvidenceRowFilter


class BaselineRoleViewSet(ReviewActionsMixin, CatalogueViewSet):
    queryset = m.BaselineRole.objects.select_related("protocol", "configuration")
    serializer_class = BaselineRoleSerializer
    filterset_class = BaselineRoleFilter


class DecisionViewSet(CatalogueViewSet):
    queryset = m.Decision.objects.prefetch_related("protocols")
    serializer_class = DecisionSerializer
    ordering_fields = CatalogueViewSet.ordering_fields + ["title"]


# -- bulk import ------------------------------------------------------------------------------

#: Adding and changing every kind of record an import document can hold (limitations come with protocols).
IMPORT_PERMISSIONS = tuple(
    f"records.{action}_{model._meta.model_name}"
    for model in (*(section.model for section in SECTIONS), m.Limitation)
    for action in ("add", "change")
)


class CanImport(permissions.BasePermission):
    message = "importing needs the curators' permissions to add and change catalogue records"

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and request.user.has_perms(IMPORT_PERMISSIONS))


ImportReportSerializer = inline_serializer(
    "ImportReport",
    fields={
        "dry_run": serializers.BooleanField(),
        "created": serializers.DictField(child=serializers.ListField(child=serializers.CharField()), help_text="Section -> stable ids created."),
        "updated": serializers.DictField(child=serializers.DictField(child=serializers.ListField(child=serializers.CharField())), help_text="Section -> stable id -> fields changed."),
        "unchanged": serializers.DictField(child=serializers.IntegerField(), help_text="Section -> records already as in the document."),
        "kept": serializers.DictField(
            child=serializers.DictField(child=serializers.ListField(child=serializers.CharField())),
            help_text="Section -> stable id -> fields a curator or correction changed since the last import, which the document did not: kept.",
        ),
        "conflicts": serializers.DictField(
            child=serializers.DictField(child=serializers.ListField(child=serializers.DictField())),
            help_text="Section -> stable id -> fields changed on both sides since the last import (field, current, document, last_imported, changed_by).",
        ),
        "overwritten": serializers.DictField(
            child=serializers.DictField(child=serializers.ListField(child=serializers.CharField())),
            help_text="Section -> stable id -> conflicting fields that took the document's values (overwrite).",
        ),
    },
)
ImportErrorsSerializer = inline_serializer(
    "ImportErrors",
    fields={
        "detail": serializers.CharField(),
        "errors": serializers.ListField(
            child=inline_serializer("ImportError", fields={"path": serializers.CharField(), "message": serializers.CharField()}),
            required=False,
            help_text="Each problem with its path in the document (absent when the request itself is refused).",
        ),
    },
)


class ImportView(APIView):
    """Import one paper's records (sources, datasets, protocols, configurations, evaluations, results).

    The document is validated whole first, then written in one transaction as proposed records, or
    nothing is written. Idempotent by stable id. The format is the README's "Import format"; the seed
    record is its example (`docs/import-example.json`).
    """

    permission_classes = [CanImport]

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        examples=[OpenApiExample("The seed record", value=seed_document(), request_only=True)],
        parameters=[
            OpenApiParameter("dry_run", OpenApiTypes.BOOL, description="Validate and report what would change, and every conflict; write nothing."),
            OpenApiParameter(
                "overwrite", OpenApiTypes.STR, many=True,
                description="A record (section/stable id) whose fields changed both in the portal and in the document since its last import: take the document's values.",
            ),
        ],
        responses={
            200: OpenApiResponse(ImportReportSerializer, description="Nothing new was created (or a dry run)."),
            201: OpenApiResponse(ImportReportSerializer, description="Records were created."),
            400: OpenApiResponse(ImportErrorsSerializer, description="The document is invalid; each error names its path. Nothing was written."),
            409: OpenApiResponse(ImportErrorsSerializer, description="Fields changed both in the portal and in the document since its last import; each error names its path. Nothing was written."),
        },
    )
    def post(self, request):
        dry_run = request.query_params.get("dry_run", "").lower() in {"1", "true", "yes"}
        try:
            report = records_import(document=request.data, actor=request.user, dry_run=dry_run, overwrite=request.query_params.getlist("overwrite"))
        except ImportConflict as conflict:
            return Response(
                {"detail": "fields changed both here and in the document since its last import; nothing was written", "errors": conflict.errors},
                status=status.HTTP_409_CONFLICT,
            )
        except ImportInvalid as invalid:
            return Response({"detail": "the document is invalid; nothing was written", "errors": invalid.errors}, status=status.HTTP_400_BAD_REQUEST)
        created = bool(report.created) and not dry_run
        return Response(report.as_dict(), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
