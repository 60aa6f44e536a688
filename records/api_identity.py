"""The API of identity across papers: models, works, task equivalences and the agreement verdicts
(records.agreement), read only; their serializers are records.serializers_identity."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db.models import Prefetch
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import Cursor
from rest_framework.request import Request
from rest_framework.response import Response

from common.api import ConditionalGetMixin, KnownParametersMixin, StableCursorPagination
from records import agreement
from records.api import CatalogueReadViewSet
from records.api_rows import newest_update
from records.filters import (
    AgreementFilter,
    GenomicModelFilter,
    TaskEquivalenceFilter,
    WorkFilter,
)
from records.models import (
    Configuration,
    Evaluation,
    GenomicModel,
    ModelAlias,
    Protocol,
    Result,
    Source,
    TaskEquivalence,
    Work,
)
from records.serializers_identity import (
    AgreementSerializer,
    GenomicModelSerializer,
    TaskEquivalenceSerializer,
    WorkSerializer,
    agreement_row,
)

T = TypeVar("T")


class GenomicModelViewSet(CatalogueReadViewSet):
    """Models (checkpoints, or architectures where a paper names no checkpoint) with the aliases papers
    print for them and their configurations."""

    lookup_url_kwarg = "model_id"  # the path names the id as the field does

    queryset = GenomicModel.objects.select_related("introduced_in", "merged_into").prefetch_related(
        Prefetch("aliases", queryset=ModelAlias.objects.select_related("source").order_by("alias", "id")),
        Prefetch("configurations", queryset=Configuration.objects.order_by("stable_id")),
    )
    serializer_class = GenomicModelSerializer
    filterset_class = GenomicModelFilter
    ordering_fields = CatalogueReadViewSet.ordering_fields + ["name", "parameter_count"]
    nested_children = ("aliases", "configurations")


class WorkViewSet(CatalogueReadViewSet):
    """Works (a paper, preprint or repository as one work) with their versions (sources)."""

    lookup_url_kwarg = "work_id"  # the path names the id as the field does

    queryset = Work.objects.prefetch_related(
        Prefetch("versions", queryset=Source.objects.order_by("published_date", "stable_id"))
    )
    serializer_class = WorkSerializer
    filterset_class = WorkFilter
    ordering_fields = CatalogueReadViewSet.ordering_fields + ["title"]
    nested_children = ("versions",)


class TaskEquivalenceViewSet(CatalogueReadViewSet):
    """Two tasks of different suites that a source says are the same data (one task family)."""

    lookup_url_kwarg = "equivalence_id"  # the path names the id as the field does

    queryset = TaskEquivalence.objects.select_related("task", "same_as", "source")
    serializer_class = TaskEquivalenceSerializer
    filterset_class = TaskEquivalenceFilter
    lean_list = True


class AgreementPagination(StableCursorPagination):
    """Pages of a computed list (records.agreement.agreements, in its own order): the signed cursor
    holds the position of the page's first row in that list."""

    ordering = ("-measurement_count", "task_name", "subject_name", "metric")  # type: ignore[assignment]
    start = 0
    total = 0

    def paginate_list(self, rows: Sequence[T], request: Request) -> list[T]:
        self.request = request
        self.base_url = request.build_absolute_uri()
        self.page_size = self.get_page_size(request)
        cursor = self.decode_cursor(request)
        position: Any = cursor.position if cursor is not None else None  # the signed text of the row number
        if position is not None and not (position.isascii() and position.isdigit() and len(position) <= 9):
            raise ValidationError({self.cursor_query_param: self.invalid_cursor})
        self.start = int(position or 0)
        self.total = len(rows)
        return list(rows[self.start : self.start + self.page_size])

    def _link(self, start: int) -> str:
        position: Any = str(start)  # DRF types a cursor's position as a number; it is any text
        return self.encode_cursor(Cursor(offset=0, reverse=False, position=position))

    def get_next_link(self) -> str | None:
        end = self.start + self.page_size
        return self._link(end) if end < self.total else None

    def get_previous_link(self) -> str | None:
        return self._link(max(self.start - self.page_size, 0)) if self.start > 0 else None


class AgreementViewSet(KnownParametersMixin, ConditionalGetMixin, viewsets.GenericViewSet):
    """Whether independent measurements of a model on a task agree (records.agreement's rules)."""

    queryset = Evaluation.objects.all()  # filtered, then read through agreement.evidence_queryset
    serializer_class = AgreementSerializer
    filterset_class = AgreementFilter
    filter_backends = [filters.DjangoFilterBackend]
    pagination_class = AgreementPagination
    permission_classes = [permissions.AllowAny]
    http_method_names = ["get", "head", "options"]
    cached_actions = frozenset({"list"})

    @extend_schema(
        summary="List agreements between independent measurements",
        description=(
            "Every model (or configuration naming no model) x task family x metric with its measurements and "
            "verdict, computed per request over every evaluation but a different measurement's, or over one "
            "model's (`model_id`) or one task family's (`task_id`); both together: that model on that task. "
            "Most measurements first. A `model_id` or `task_id` that names no record is a 400 naming it. The rule: "
            + agreement.AGREEMENT_RULE
        ),
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.cached_get(request, lambda: self._page(request))

    def _page(self, request: Request) -> Response:
        chosen = self.filter_queryset(self.get_queryset()).values("pk")
        evaluations = list(agreement.evidence_queryset().filter(pk__in=chosen))
        found = agreement.agreements(evaluations, agreement.task_families())
        paginator = self.paginator
        assert isinstance(paginator, AgreementPagination)
        page = paginator.paginate_list(found, request)
        self.last_modified = newest_update(Evaluation, AGREEMENT_INPUTS)
        rows = [agreement_row(item) for item in page]
        return self.get_paginated_response(self.get_serializer(rows, many=True).data)


#: The tables whose changes change an agreement, for Last-Modified.
AGREEMENT_INPUTS = (Result, Configuration, GenomicModel, TaskEquivalence, Source, Protocol)


# -- bulk import ------------------------------------------------------------------------------
