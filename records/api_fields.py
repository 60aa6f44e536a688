"""The catalogue API's fields: text only as JSON strings, references by stable id (a list of them only
as a JSON list), exact decimals with their printed digits; used by records.serializers."""

from __future__ import annotations

from typing import Any

from django.db import models
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.relations import MANY_RELATION_KWARGS

from common.api import StrictCharField, StrictEmailField, StrictSlugField, StrictURLField
from common.numbers import ASCII_NUMBER_FIELDS
from records.values import ValueInvalid, exact_text, parse_exact


class StrictSlugRelatedField(serializers.SlugRelatedField):
    """A reference by stable id: a non-empty string, or null where allowed. DRF reads "" as null;
    the schema promises a string of at least one character, so "" is a 400 naming the field."""

    default_error_messages = {"not_a_string": "Not a valid stable id: send a non-empty string, or null."}

    def run_validation(self, data=serializers.empty):
        if data is not serializers.empty and data is not None and (not isinstance(data, str) or not data):
            self.fail("not_a_string")
        return super().run_validation(data)

    @classmethod
    def many_init(cls, *args, **kwargs):
        """A list of references: as DRF's RelatedField.many_init, with a field that takes only a list."""
        list_kwargs = {"child_relation": cls(*args, **kwargs)}
        list_kwargs.update((key, value) for key, value in kwargs.items() if key in MANY_RELATION_KWARGS)
        return StrictManyRelatedField(**list_kwargs)


class StrictManyRelatedField(serializers.ManyRelatedField):
    """A list of references, and only a list: DRF's takes any iterable but a string, so a JSON object
    came in as the list of its keys (schemathesis, negative mode: protocol_ids sent as an object)."""

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        return super().to_internal_value(data)


#: The catalogue's field mapping: numbers in the digits 0-9 only (common.numbers), text only as strings.
CATALOGUE_FIELDS = {
    **ASCII_NUMBER_FIELDS,
    models.CharField: StrictCharField,
    models.TextField: StrictCharField,
    models.SlugField: StrictSlugField,
    models.URLField: StrictURLField,
    models.EmailField: StrictEmailField,
}


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


EXACT_DECIMAL_TEXT = {"type": "string", "pattern": r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$", "example": "0.410"}


class ExactDecimalFieldSchema(OpenApiSerializerFieldExtension):
    """An exact decimal in the schema: answered always as a string (a generated client types it `str`);
    taken as a string or a JSON number. drf-spectacular finds it by the field's class."""

    target_class = ExactDecimalField

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        if direction == "response":
            return {**EXACT_DECIMAL_TEXT, "description": "The exact decimal, as a string with the printed digits."}
        return {
            "oneOf": [EXACT_DECIMAL_TEXT, {"type": "number"}],
            "description": "A string with the printed digits; a JSON number is taken with the digits it is written with.",
        }


def stable_id_field() -> serializers.SlugField:
    return StrictSlugField(
        source="stable_id", max_length=150, help_text="Stable id (slug); never changes once created."
    )


def ref(model, source: str | None = None, **kwargs) -> serializers.SlugRelatedField:
    """A reference to another record by its stable id."""
    if source is not None:
        kwargs["source"] = source
    return StrictSlugRelatedField(slug_field="stable_id", queryset=model.objects.all(), **kwargs)
