"""POST /api/v1/corrections/: the public form's rules, as JSON."""

from __future__ import annotations

from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError as DjangoValidationError
from django_filters import rest_framework as filters
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny, IsAuthenticatedOrReadOnly
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import ConditionalGetMixin, StableCursorPagination
from reviews.corrections import correction_submit, targets
from reviews.forms import EXPLANATION_MAX, LOCATOR_MAX, PROPOSED_VALUE_MAX, SOURCE_MAX, validate_proposal, validate_supporting_source
from reviews.models import ReviewEvent, ReviewState
from common.ratelimit import RateLimited, client_ip
from reviews.services import ReviewError, available_transitions, review_transition_apply
from reviews.transitions import TRANSITIONS


class CorrectionCreateSerializer(serializers.Serializer):
    target_type = serializers.CharField(max_length=40, help_text="Record type: protocol, evaluation, result, configuration, dataset, source, evidencerow, baselinerole, decision.")
    target_id = serializers.SlugField(max_length=150, help_text="The record's stable id.")
    field = serializers.CharField(max_length=60, required=False, allow_blank=True, default="", help_text="The field concerned; empty for the record as a whole.")
    proposed_value = serializers.CharField(max_length=PROPOSED_VALUE_MAX, required=False, allow_blank=True, default="")
    explanation = serializers.CharField(max_length=EXPLANATION_MAX)
    supporting_source = serializers.CharField(max_length=SOURCE_MAX, required=False, allow_blank=True, default="", help_text="An http(s) URL or a DOI.")
    supporting_locator = serializers.CharField(max_length=LOCATOR_MAX, required=False, allow_blank=True, default="")
    contact_email = serializers.EmailField(max_length=254, required=False, allow_blank=True, default="", help_text="Never shown publicly.")
    website = serializers.CharField(required=False, allow_blank=True, default="", help_text="Must be empty (a trap for robots).")

    def validate_target_type(self, value: str) -> str:
        if value not in targets().target_types():
            raise serializers.ValidationError(f"unknown record type; use one of: {', '.join(targets().target_types())}")
        return value

    def validate_supporting_source(self, value: str) -> str:
        try:
            return validate_supporting_source(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None

    def validate_website(self, value: str) -> str:
        if value:
            raise serializers.ValidationError("must be empty")
        return value

    def validate(self, data):
        record = targets().resolve(data["target_type"], data["target_id"])
        if record is None:
            raise serializers.ValidationError({"target_id": f"no {data['target_type']} with stable id {data['target_id']!r}"})
        if data["field"] and targets().field_label(data["target_type"], data["field"]) is None:
            raise serializers.ValidationError({"field": f"a {data['target_type']}'s {data['field']!r} cannot be the subject of a suggestion"})
        try:
            validate_proposal(target_type=data["target_type"], field_name=data["field"], proposed_value=data["proposed_value"])
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        data["record"] = record
        return data


class CorrectionCreatedSerializer(serializers.Serializer):
    status = serializers.CharField()
    status_url = serializers.URLField(help_text="The private link to follow the suggestion.")


class CorrectionCreateView(APIView):
    """Suggest a correction to any public record; no account needed. Limited per client and per record."""

    permission_classes = [AllowAny]
    authentication_classes: list = []  # anonymous by design; no session, so no CSRF to bypass either

    @extend_schema(
        request=CorrectionCreateSerializer,
        responses={
            201: CorrectionCreatedSerializer,
            400: OpenApiResponse(description="Invalid input; the body names each field."),
            413: OpenApiResponse(description="The body is larger than 32 KB."),
            429: OpenApiResponse(description="Too many suggestions from this client or for this record; see Retry-After."),
        },
    )
    def post(self, request):
        serializer = CorrectionCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            correction = correction_submit(
                target=data["record"],
                field_name=data["field"],
                proposed_value=data["proposed_value"],
                explanation=data["explanation"],
                supporting_source=data["supporting_source"],
                supporting_locator=data["supporting_locator"],
                contact_email=data["contact_email"],
                ip=client_ip(request),
            )
        except RateLimited as limited:
            raise Throttled(wait=limited.retry_after, detail=f"Too many suggestions ({limited.limit.name} limit); try again later.") from None
        url = request.build_absolute_uri(f"/corrections/{correction.token}/")
        return Response({"status": correction.status, "status_url": url}, status=status.HTTP_201_CREATED)


# -- review actions on every reviewable record's endpoint -------------------------------------


class TransitionRequestSerializer(serializers.Serializer):
    transition = serializers.ChoiceField(choices=[(name, spec.label) for name, spec in TRANSITIONS.items()])
    reason = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")
    expected_state = serializers.ChoiceField(
        choices=ReviewState.choices, required=False, allow_null=True, default=None,
        help_text="The state you saw; if the record has moved on since, the answer is 409 and nothing changes.",
    )


class AvailableTransitionSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    needs_reason = serializers.BooleanField()


class ReviewEventSerializer(serializers.ModelSerializer):
    record_type = serializers.CharField(source="content_type.model", read_only=True)

    class Meta:
        model = ReviewEvent
        fields = ("id", "record_type", "record_stable_id", "transition", "from_state", "to_state", "reason", "actor_role", "created_at")
        read_only_fields = fields


class TransitionResultSerializer(serializers.Serializer):
    review_state = serializers.ChoiceField(choices=ReviewState.choices)
    concern = serializers.CharField()
    event = ReviewEventSerializer()


class ReviewErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="The request field at fault, when one is.")


class ReviewActionsMixin:
    """`/transitions/` (GET: the transitions you may apply now; POST: apply one) and `/events/` on a record."""

    @extend_schema(methods=["GET"], responses={200: AvailableTransitionSerializer(many=True)}, description="The transitions the caller may apply to the record now (the admin's buttons).")
    @extend_schema(
        methods=["POST"],
        request=TransitionRequestSerializer,
        responses={
            200: TransitionResultSerializer,
            400: OpenApiResponse(ReviewErrorSerializer, description="Unknown transition or missing reason (the field is named)."),
            403: OpenApiResponse(ReviewErrorSerializer, description="No permission, or the four-eyes rule."),
            409: OpenApiResponse(ReviewErrorSerializer, description="The record's state does not allow it (another curator acted first)."),
        },
        description="Apply a review transition through the same service as the admin: one event and one history row.",
    )
    @action(detail=True, methods=["get", "post"], url_path="transitions", permission_classes=[IsAuthenticatedOrReadOnly])
    def transitions(self, request, **kwargs):
        record = self.get_object()
        if request.method == "GET":
            available = available_transitions(record=record, user=request.user)
            return Response(AvailableTransitionSerializer(available, many=True).data)
        serializer = TransitionRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            event = review_transition_apply(record=record, actor=request.user, **serializer.validated_data)
        except ReviewError as error:
            return Response({"detail": error.message, "field": error.field}, status=error.status)
        record.refresh_from_db()
        return Response({"review_state": record.review_state, "concern": record.concern, "event": ReviewEventSerializer(event).data})

    @extend_schema(responses={200: ReviewEventSerializer(many=True)}, description="The record's review log, oldest first.")
    @action(detail=True, methods=["get"], url_path="events", permission_classes=[AllowAny])
    def events(self, request, **kwargs):
        record = self.get_object()
        content_type = ContentType.objects.get_for_model(type(record))
        events = ReviewEvent.objects.filter(content_type=content_type, object_id=record.pk).select_related("content_type").order_by("created_at", "id")
        return Response(ReviewEventSerializer(events, many=True).data)


class ReviewEventFilter(filters.FilterSet):
    record = filters.CharFilter(field_name="record_stable_id", help_text="The record's stable id.")
    record_type = filters.CharFilter(field_name="content_type__model", help_text="protocol, evaluation, evidencerow or baselinerole.")

    class Meta:
        model = ReviewEvent
        fields = ["record", "record_type", "transition", "to_state", "actor_role"]


class EventCursorPagination(StableCursorPagination):
    ordering = ("-created_at", "-id")


class ReviewEventViewSet(ConditionalGetMixin, viewsets.ReadOnlyModelViewSet):
    """Every review event, the audit log of the review workflow (actors named by role)."""

    queryset = ReviewEvent.objects.select_related("content_type")
    serializer_class = ReviewEventSerializer
    permission_classes = [AllowAny]
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = ReviewEventFilter
    pagination_class = EventCursorPagination
