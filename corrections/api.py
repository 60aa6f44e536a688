"""POST /api/v1/corrections/: the public form's rules, as JSON."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import (
    KnownParametersMixin,
    LengthAsSentCharField,
    StrictCharField,
    StrictEmailField,
    StrictSlugField,
)
from common.links import absolute_url
from common.ratelimit import RateLimited, client_ip
from corrections import selectors
from corrections.forms import (
    EXPLANATION_MAX,
    LOCATOR_MAX,
    PROPOSED_VALUE_MAX,
    SOURCE_MAX,
    validate_proposal,
    validate_supporting_source,
)
from corrections.services import correction_submit


class CorrectionCreateSerializer(serializers.Serializer):
    """Text only as JSON strings (a proposed value may be a number), no longer than the schema says
    as sent (common.api)."""

    target_type = serializers.ChoiceField(
        choices=selectors.target_types(),
        help_text="The record's type.",
        error_messages={"invalid_choice": "unknown record type; use one of: " + ", ".join(selectors.target_types())},
    )
    target_id = StrictSlugField(max_length=150, help_text="The record's stable id.")
    field = StrictCharField(
        max_length=60,
        required=False,
        allow_blank=True,
        default="",
        help_text="The field concerned; empty for the record as a whole.",
    )
    # A JSON number is taken too, with its printed digits (the API's parser reads it as a decimal).
    proposed_value = LengthAsSentCharField(max_length=PROPOSED_VALUE_MAX, required=False, allow_blank=True, default="")
    explanation = StrictCharField(max_length=EXPLANATION_MAX)
    supporting_source = StrictCharField(
        max_length=SOURCE_MAX, required=False, allow_blank=True, default="", help_text="An http(s) URL or a DOI."
    )
    supporting_locator = StrictCharField(max_length=LOCATOR_MAX, required=False, allow_blank=True, default="")
    # No `default=""`: OpenAPI would publish it as the default of an email-format string, which
    # strict validators refuse ('' is no email address); absent means none all the same.
    contact_email = StrictEmailField(
        max_length=254, required=False, allow_blank=True, help_text="Never shown publicly."
    )
    website = StrictCharField(
        required=False, allow_blank=True, default="", help_text="Must be empty (a trap for robots)."
    )

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
        record = selectors.resolve(data["target_type"], data["target_id"])
        if record is None:
            raise serializers.ValidationError(
                {"target_id": f"no {data['target_type']} with stable id {data['target_id']!r}"}
            )
        if data["field"] and selectors.field_label(data["target_type"], data["field"]) is None:
            raise serializers.ValidationError(
                {"field": f"a {data['target_type']}'s {data['field']!r} cannot be the subject of a suggestion"}
            )
        try:
            validate_proposal(
                target_type=data["target_type"], field_name=data["field"], proposed_value=data["proposed_value"]
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        data["record"] = record
        return data


class CorrectionCreatedSerializer(serializers.Serializer):
    status = serializers.CharField()
    status_url = serializers.URLField(help_text="The private link to follow the suggestion.")


class CorrectionCreateView(KnownParametersMixin, APIView):
    """Suggest a correction to any public record; no account needed. Limited per client and per record."""

    permission_classes = [AllowAny]
    authentication_classes: list = []  # anonymous by design; no session, so no CSRF to bypass either

    @extend_schema(
        summary="Suggest a correction",
        request=CorrectionCreateSerializer,
        responses={
            201: CorrectionCreatedSerializer,
            400: OpenApiResponse(description="Invalid input; the body names each field."),
            413: OpenApiResponse(description="The body is larger than 32 KB."),
            429: OpenApiResponse(
                description="Too many suggestions from this client or for this record; see Retry-After."
            ),
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
                contact_email=data.get("contact_email", ""),
                ip=client_ip(request),
            )
        except RateLimited as limited:
            raise Throttled(
                wait=limited.retry_after, detail=f"Too many suggestions ({limited.limit.name} limit); try again later."
            ) from None
        url = absolute_url(reverse("corrections:correction-status", args=[correction.token]), request=request)
        return Response({"status": correction.status, "status_url": url}, status=status.HTTP_201_CREATED)
