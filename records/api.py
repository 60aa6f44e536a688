"""The catalogue's REST API: read everything by stable id, write as a curator, import a paper.

Field names follow the release tables (`protocol_id`, `source_id`, `review_state`, `comparable`...).
Writes go through records.services, so history and automatic reopening are the admin's. The
viewsets and the import view live here; their serializers in records.serializers, their list
filters in records.filters.
"""

from __future__ import annotations

from django.db.models import FloatField, Prefetch
from django.db.models.functions import Cast
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.exceptions import MethodNotAllowed, ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import (
    QUERY_BOOLEAN_TYPE,
    ConditionalGetMixin,
    KnownParametersMixin,
    ModelPermissionsOrReadOnly,
    newest,
    query_boolean,
    query_boolean_description,
)
from records.api_imports import BACKGROUND_PARAMETER, ImportJobStatusSerializer, background_answer, refused_boolean
from records.api_rows import list_page, list_rows, newest_update
from records.filters import (
    BaselineRoleFilter,
    ConfigurationFilter,
    DatasetFilter,
    EvaluationFilter,
    EvidenceRowFilter,
    ProtocolFilter,
    ResultFilter,
)
from records.import_jobs import IMPORT_PERMISSIONS
from records.imports import ImportConflict, ImportInvalid, ImportStale, records_import
from records.models import (
    BaselineRole,
    Configuration,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    Protocol,
    Result,
    Source,
)
from records.seed import seed_document
from records.serializers import (
    BaselineRoleSerializer,
    ConfigurationSerializer,
    DatasetSerializer,
    DecisionSerializer,
    EvaluationSerializer,
    EvidenceRowSerializer,
    ProtocolSerializer,
    ResultSerializer,
    SourceSerializer,
)
from reviews.api import ReviewActionsMixin

# -- viewsets ---------------------------------------------------------------------------------


class StableOrderingFilter(OrderingFilter):
    """DRF's ordering, with the primary key last: rows that tie on the asked field (two results of the
    same value) come in one order on every backend and through every read path, not the database's
    choice of the moment."""

    def get_ordering(self, request, queryset, view):
        ordering = super().get_ordering(request, queryset, view)
        if ordering and not {"id", "-id", "pk", "-pk"} & set(ordering):
            ordering = [*ordering, "id"]
        return ordering


class ValueOrderingFilter(StableOrderingFilter):
    """`ordering=value` orders by the number, not by its stored text ("10" after "9")."""

    def get_ordering(self, request, queryset, view):
        ordering = super().get_ordering(request, queryset, view)
        return ordering and [
            term.replace("value", "value_number") if term.lstrip("-") == "value" else term for term in ordering
        ]


class CatalogueReadViewSet(
    KnownParametersMixin,
    ConditionalGetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Read by anyone, by stable id; lists with cursor pagination, ETag and Last-Modified."""

    lookup_field = "stable_id"
    lookup_value_regex = r"[-a-zA-Z0-9_]+"
    permission_classes = [ModelPermissionsOrReadOnly]
    http_method_names = ["get", "head", "options"]
    filter_backends = [filters.DjangoFilterBackend, StableOrderingFilter]
    ordering_fields = ["stable_id", "created_at", "updated_at"]
    # Children whose updates change what a response shows: they count for Last-Modified.
    nested_children: tuple[str, ...] = ()

    def initial(self, request, *args, **kwargs):
        if request.method.lower() not in self.http_method_names:
            raise MethodNotAllowed(request.method)  # 405 before permissions: nothing here is deleted
        super().initial(request, *args, **kwargs)

    # GETs answered from the rendered-response cache (common.api), keyed by the catalogue version.
    cached_actions = frozenset({"list", "retrieve"})

    def list(self, request, *args, **kwargs):
        return self.cached_get(request, lambda: self.list_page(request))

    def retrieve(self, request, *args, **kwargs):
        return self.cached_get(request, lambda: super(CatalogueReadViewSet, self).retrieve(request, *args, **kwargs))

    # A list whose serializer has only columns (no nested list but an evaluation's results) is
    # built from values() rows (records.api_rows); `lean_also` names what else its pagination reads.
    lean_list = False
    lean_also: tuple[str, ...] = ()

    def list_page(self, request):
        if not self.lean_list:
            return super().list(request)
        rows = list_rows(self.filter_queryset(self.get_queryset()), self.serializer_class, also=self.lean_also)
        return self.get_paginated_response(list_page(self.paginate_queryset(rows), self.serializer_class))

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        model = queryset.model
        children = [model._meta.get_field(name).related_model for name in self.nested_children]
        self.last_modified = newest_update(model, children)
        return page

    def get_object(self):
        record = super().get_object()
        self.last_modified = self._modified(record)
        return record

    def _modified(self, record):
        return newest(
            record.updated_at,
            *(child.updated_at for name in self.nested_children for child in getattr(record, name).all()),
        )


class CatalogueViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, CatalogueReadViewSet):
    """Read by anyone; create and update with the model's add/change permission (curators)."""

    http_method_names = ["get", "post", "put", "patch", "head", "options"]


class SourceViewSet(CatalogueViewSet):
    """Sources: papers, preprints, dataset and model cards, leaderboards, repositories, web pages; one per DOI
    or arXiv id. Read by anyone; curators create and update."""

    lookup_url_kwarg = "source_id"  # the path names the id as the field does
    queryset = Source.objects.all()
    lean_list = True
    serializer_class = SourceSerializer
    filterset_fields = ["kind", "venue"]
    ordering_fields = CatalogueViewSet.ordering_fields + ["title", "published_date"]


class DatasetViewSet(CatalogueViewSet):
    """Datasets, and suites with their tasks (train and test sizes, classes, sequence length, metric).
    Read by anyone; curators create and update."""

    lookup_url_kwarg = "dataset_id"  # the path names the id as the field does
    queryset = Dataset.objects.select_related("suite", "source").prefetch_related("tasks")
    serializer_class = DatasetSerializer
    filterset_class = DatasetFilter
    ordering_fields = CatalogueViewSet.ordering_fields + ["name", "position"]
    nested_children = ("tasks",)


class ConfigurationViewSet(CatalogueViewSet):
    """Configurations: a model (or method) as it was tested. Read by anyone; curators create and update."""

    lookup_url_kwarg = "configuration_id"  # the path names the id as the field does
    queryset = Configuration.objects.select_related("source", "model")
    lean_list = True
    serializer_class = ConfigurationSerializer
    filterset_class = ConfigurationFilter
    ordering_fields = CatalogueViewSet.ordering_fields + ["name", "parameter_count"]


class ProtocolViewSet(ReviewActionsMixin, CatalogueViewSet):
    """Protocols: what is measured and how (metric, direction, datasets, limitations, baseline roles), with
    their review state. Read by anyone; curators create, update and review."""

    lookup_url_kwarg = "protocol_id"  # the path names the id as the field does
    queryset = Protocol.objects.select_related("source").prefetch_related(
        "datasets",
        "areas",
        "contexts",
        "limitations",
        Prefetch("baseline_roles", queryset=BaselineRole.objects.select_related("protocol", "configuration")),
    )
    serializer_class = ProtocolSerializer
    filterset_class = ProtocolFilter
    ordering_fields = CatalogueViewSet.ordering_fields + ["title"]
    nested_children = ("limitations", "baseline_roles")


class EvaluationViewSet(ReviewActionsMixin, CatalogueViewSet):
    """Evaluations: one configuration measured under one protocol on one dataset or task, with its results, who
    measured it, the source's locator and quote, and its review state. Read by anyone; curators create,
    update and review."""

    lookup_url_kwarg = "evaluation_id"  # the path names the id as the field does
    queryset = Evaluation.objects.select_related(
        "protocol", "configuration", "dataset", "source", "concern_source", "repeats"
    ).prefetch_related(
        Prefetch("results", queryset=Result.objects.select_related("reference_configuration").order_by("stable_id"))
    )
    serializer_class = EvaluationSerializer
    filterset_class = EvaluationFilter
    ordering_fields = CatalogueViewSet.ordering_fields + ["title", "measured_by", "review_state"]
    nested_children = ("results",)
    lean_list = True


class ResultViewSet(CatalogueViewSet):
    """Results: one metric row of an evaluation, an exact decimal with its printed form. Read by anyone;
    curators create and update."""

    lookup_url_kwarg = "result_id"  # the path names the id as the field does
    queryset = Result.objects.select_related("evaluation", "evaluation__protocol", "reference_configuration").annotate(
        value_number=Cast("value", FloatField())
    )
    serializer_class = ResultSerializer
    filterset_class = ResultFilter
    filter_backends = [filters.DjangoFilterBackend, ValueOrderingFilter]
    ordering_fields = CatalogueViewSet.ordering_fields + ["value"]
    lean_list = True
    lean_also = ("value_number",)  # the cursor's position when ordered by value


class EvidenceRowViewSet(ReviewActionsMixin, CatalogueViewSet):
    """Evidence rows: a statement about a record with its source, locator and quote. Read by anyone; curators
    create, update and review."""

    lookup_url_kwarg = "evidence_id"  # the path names the id as the field does
    queryset = EvidenceRow.objects.select_related("protocol", "evaluation", "source")
    serializer_class = EvidenceRowSerializer
    lean_list = True
    filterset_class = EvidenceRowFilter


class BaselineRoleViewSet(ReviewActionsMixin, CatalogueViewSet):
    """Baseline roles: a protocol's null control and conventional reference, with the rule that selects them.
    Read by anyone; curators create, update and review."""

    lookup_url_kwarg = "baseline_role_id"  # the path names the id as the field does
    queryset = BaselineRole.objects.select_related("protocol", "configuration")
    serializer_class = BaselineRoleSerializer
    lean_list = True
    filterset_class = BaselineRoleFilter


class DecisionViewSet(CatalogueViewSet):
    """Decisions: choices a reader faces ("select an execution workflow"), with the protocols that assess them.
    Read by anyone; curators create and update."""

    lookup_url_kwarg = "decision_id"  # the path names the id as the field does
    queryset = Decision.objects.prefetch_related("protocols")
    serializer_class = DecisionSerializer
    ordering_fields = CatalogueViewSet.ordering_fields + ["title"]


# -- identity: models, works, task equivalences (read only; written by imports and the admin) -------


class CanImport(permissions.BasePermission):
    message = "importing needs the curators' permissions to add and change catalogue records"

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and request.user.has_perms(IMPORT_PERMISSIONS))


ImportReportSerializer = inline_serializer(
    "ImportReport",
    fields={
        "dry_run": serializers.BooleanField(),
        "created": serializers.DictField(
            child=serializers.ListField(child=serializers.CharField()), help_text="Section -> stable ids created."
        ),
        "updated": serializers.DictField(
            child=serializers.DictField(child=serializers.ListField(child=serializers.CharField())),
            help_text="Section -> stable id -> fields changed.",
        ),
        "unchanged": serializers.DictField(
            child=serializers.IntegerField(), help_text="Section -> records already as in the document."
        ),
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
        "matched": serializers.DictField(
            child=serializers.DictField(child=serializers.CharField()),
            help_text="Configuration stable id -> {model, alias}: the model a configuration that names none was matched to, by a printed alias.",
        ),
    },
)
ImportErrorsSerializer = inline_serializer(
    "ImportErrors",
    fields={
        "detail": serializers.CharField(),
        "errors": serializers.ListField(
            child=inline_serializer(
                "ImportError", fields={"path": serializers.CharField(), "message": serializers.CharField()}
            ),
            required=False,
            help_text="Each problem with its path in the document (absent when the request itself is refused).",
        ),
    },
)


class ImportView(KnownParametersMixin, APIView):
    """Import one paper's records (sources, datasets, protocols, configurations, evaluations, results).

    The document is validated whole first, then written in one transaction as proposed records, or
    nothing is written. Idempotent by stable id. The format is in the docs (docs/reference/import-format.md); the seed
    record is its example (`docs/import-example.json`).
    """

    permission_classes = [CanImport]
    query_parameters = frozenset({"dry_run", "overwrite", "background"})

    def unknown_parameters_refused(self, unknown: list[str], known: list[str]) -> Exception:
        """In the import's own error shape (its documented 400): each parameter with its `?` path."""
        message = f"unknown query parameter; the import takes {', '.join(known)}"
        detail = f"{', '.join(unknown)}: {message}; nothing was written"
        return ValidationError(
            {"detail": detail, "errors": [{"path": f"?{name}", "message": message} for name in unknown]}
        )

    @extend_schema(
        summary="Import one paper's records",
        request=OpenApiTypes.OBJECT,
        examples=[OpenApiExample("The seed record", value=seed_document(), request_only=True)],
        parameters=[
            OpenApiParameter(
                "dry_run",
                QUERY_BOOLEAN_TYPE,
                description=query_boolean_description(
                    "True: validate and report what would change, and every conflict; write nothing."
                ),
            ),
            OpenApiParameter(
                "overwrite",
                OpenApiTypes.STR,
                many=True,
                description="A record (section/stable id) whose fields changed both in the portal and in the document since its last import: take the document's values.",
            ),
            BACKGROUND_PARAMETER,
        ],
        responses={
            200: OpenApiResponse(ImportReportSerializer, description="Nothing new was created (or a dry run)."),
            201: OpenApiResponse(ImportReportSerializer, description="Records were created."),
            202: OpenApiResponse(
                ImportJobStatusSerializer,
                description="Queued as a background job (a large document, or `?background=true`): `Location` is its status URL, `GET /api/v1/imports/{id}/`.",
            ),
            400: OpenApiResponse(
                ImportErrorsSerializer,
                description="The document is invalid; each error names its path. Nothing was written.",
            ),
            409: OpenApiResponse(
                ImportErrorsSerializer,
                description="Fields changed both in the portal and in the document since its last import; each error names its path. Nothing was written.",
            ),
        },
    )
    def post(self, request):
        raw = request.body  # the document as sent, for a background job (read before the parser reads it)
        for name in ("dry_run", "background"):  # never read a misspelt dry run as a real import
            refused = refused_boolean(name, request.query_params.get(name, ""))
            if refused is not None:
                return refused
        dry_run = query_boolean(request.query_params.get("dry_run", "")) or False
        queued = background_answer(request=request, raw=raw, dry_run=dry_run)
        if queued is not None:
            return queued
        try:
            report = records_import(
                document=request.data,
                actor=request.user,
                dry_run=dry_run,
                overwrite=request.query_params.getlist("overwrite"),
            )
        except ImportConflict as conflict:
            return Response(
                {
                    "detail": f"the catalogue kept changing while the import was being checked; {conflict.outcome}"
                    if isinstance(conflict, ImportStale)
                    else f"fields changed both here and in the document since its last import; {conflict.outcome}",
                    "errors": conflict.errors,
                },
                status=status.HTTP_409_CONFLICT,
            )
        except ImportInvalid as invalid:
            return Response(
                {"detail": f"the document is invalid; {invalid.outcome}", "errors": invalid.errors},
                status=status.HTTP_400_BAD_REQUEST,
            )
        created = bool(report.created) and not dry_run
        return Response(report.as_dict(), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
