"""The review actions of every reviewable record's endpoint (transitions, events) and the review event log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.apps import apps
from django.db.models import Model
from django_filters import rest_framework as filters
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response

from common.api import ConditionalGetMixin, KnownParametersMixin, StableCursorPagination, StrictCharField
from reviews.models import Reviewable, ReviewEvent, ReviewState
from reviews.selectors import review_events
from reviews.services import ReviewError, available_transitions, review_transition_apply
from reviews.transitions import TRANSITIONS

# -- review actions on every reviewable record's endpoint -------------------------------------


if TYPE_CHECKING:  # what the mixin is mixed into, for the type checker
    _ViewSetBase = viewsets.GenericViewSet
else:
    _ViewSetBase = object


class TransitionRequestSerializer(serializers.Serializer):
    transition = serializers.ChoiceField(choices=[(name, spec.label) for name, spec in TRANSITIONS.items()])
    reason = StrictCharField(max_length=5000, required=False, allow_blank=True, default="")
    expected_state = serializers.ChoiceField(
        choices=ReviewState.choices,
        required=False,
        allow_null=True,
        default=None,
        help_text="The state you saw; if the record has moved on since, the answer is 409 and nothing changes.",
    )


class AvailableTransitionSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the API names it "label"; DRF's stubs reserve the name
    needs_reason = serializers.BooleanField()


class ReviewEventSerializer(serializers.ModelSerializer):
    record_type = serializers.CharField(source="content_type.model", read_only=True)

    class Meta:
        model = ReviewEvent
        fields = (
            "id",
            "record_type",
            "record_stable_id",
            "transition",
            "from_state",
            "to_state",
            "reason",
            "actor_role",
            "created_at",
        )
        read_only_fields = fields


class TransitionResultSerializer(serializers.Serializer):
    review_state = serializers.ChoiceField(choices=ReviewState.choices)
    concern = serializers.CharField()
    event = ReviewEventSerializer()


class ReviewErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="The request field at fault, when one is.")


class RecordLogPagination(StableCursorPagination):
    """A record's review log in cursor pages, oldest first."""

    ordering = ("created_at", "id")


class ReviewActionsMixin(_ViewSetBase):
    """`/transitions/` (GET: the transitions you may apply now; POST: apply one) and `/events/` on a record."""

    @extend_schema(
        methods=["GET"],
        responses={200: AvailableTransitionSerializer(many=True)},
        filters=False,
        description="The transitions the caller may apply to the record now (the admin's buttons).",
    )
    @extend_schema(
        methods=["POST"],
        request=TransitionRequestSerializer,
        responses={
            200: TransitionResultSerializer,
            400: OpenApiResponse(
                ReviewErrorSerializer, description="Unknown transition or missing reason (the field is named)."
            ),
            403: OpenApiResponse(ReviewErrorSerializer, description="No permission, or the four-eyes rule."),
            409: OpenApiResponse(
                ReviewErrorSerializer, description="The record's state does not allow it (another curator acted first)."
            ),
        },
        description="Apply a review transition through the same service as the admin: one event and one history row.",
    )
    @action(
        detail=True,
        methods=["get", "post"],
        url_path="transitions",
        permission_classes=[IsAuthenticatedOrReadOnly],
        pagination_class=None,  # a handful at most: one array, as documented
        filter_backends=[],
    )
    def transitions(self, request: Request, **kwargs: Any) -> Response:
        record = self.get_object()
        if request.method == "GET":
            available = available_transitions(record=record, user=request.user)
            return Response(AvailableTransitionSerializer(available, many=True).data)
        serializer = TransitionRequestSerializer(data=request.data)
        if not serializer.is_valid():
            return Response(review_error_body(serializer.errors), status=400)
        try:
            event = review_transition_apply(record=record, actor=request.user, **serializer.validated_data)
        except ReviewError as error:
            return Response({"detail": error.message, "field": error.field}, status=error.status)
        record.refresh_from_db()
        return Response(
            {"review_state": record.review_state, "concern": record.concern, "event": ReviewEventSerializer(event).data}
        )

    @extend_schema(
        responses={200: ReviewEventSerializer(many=True)}, description="The record's review log, oldest first."
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="events",
        permission_classes=[AllowAny],
        pagination_class=RecordLogPagination,
        filter_backends=[],
    )
    def events(self, request: Request, **kwargs: Any) -> Response:
        record = self.get_object()
        paginator = RecordLogPagination()
        page = paginator.paginate_queryset(review_events(record=record), request, view=self)
        return paginator.get_paginated_response(ReviewEventSerializer(page, many=True).data)


def review_error_body(errors: dict[str, Any]) -> dict[str, str]:
    """A refused transition request as the other review errors are: `detail` and the `field` at fault."""
    field, messages = next(iter(errors.items()))
    message = messages[0] if isinstance(messages, list) and messages else str(messages)
    return {"detail": f"{field}: {message}", "field": field}


def reviewable_models() -> list[type[Model]]:
    """The models whose records have a review log (every concrete Reviewable)."""
    return [model for model in apps.get_models() if issubclass(model, Reviewable)]


def reviewable_types() -> list[tuple[str, str]]:
    return sorted((model._meta.model_name or "", str(model._meta.verbose_name)) for model in reviewable_models())


class ReviewedRecordField(forms.CharField):
    """A reviewable record's stable id: one that names none is refused (a misspelt id is not an empty log)."""

    def clean(self, value: Any) -> str:
        stable_id = super().clean(value)
        if stable_id and not any(
            model._default_manager.filter(stable_id=stable_id).exists() for model in reviewable_models()
        ):
            raise forms.ValidationError("no reviewable record has the stable id %(value)s", params={"value": stable_id})
        return stable_id


class ReviewedRecordFilter(filters.CharFilter):
    field_class = ReviewedRecordField


class ReviewEventFilter(filters.FilterSet):
    record = ReviewedRecordFilter(
        field_name="record_stable_id",
        help_text="The record's stable id. An id that names no reviewable record is refused (400).",
    )
    record_type = filters.ChoiceFilter(field_name="content_type__model", choices=reviewable_types())

    class Meta:
        model = ReviewEvent
        fields = ["record", "record_type", "transition", "to_state", "actor_role"]


class EventCursorPagination(StableCursorPagination):
    ordering = ("-created_at", "-id")


class ReviewEventViewSet(KnownParametersMixin, ConditionalGetMixin, viewsets.ReadOnlyModelViewSet):
    """Every review event, the audit log of the review workflow (actors named by role)."""

    queryset = ReviewEvent.objects.select_related("content_type")
    serializer_class = ReviewEventSerializer
    permission_classes = [AllowAny]
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = ReviewEventFilter
    pagination_class = EventCursorPagination
