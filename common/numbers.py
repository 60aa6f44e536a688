"""Numbers are written with the digits 0-9, everywhere a person or a script writes one.

Python's int() and float() read the digits of every script ('١٢٣', '１２３', '१२३' are all 123), and
so do Django's and DRF's integer and float fields: '١٢٣' was stored as 123 without a word. A value
is not silently translated from another script; it is refused with a message that says why. Exact
decimals (records.values.parse_exact) accept ASCII notation only already. Used by the API's
serializers (`ASCII_NUMBER_FIELDS`, `AsciiIntegerField`), the admin's forms (`ASCII_NUMBER_FORM_FIELDS`),
imports and correction suggestions (`other_digits_problem`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from rest_framework import serializers


def other_digits(text: str) -> str:
    """The digits in `text` that are not 0-9 (those int() and float() would read), in order."""
    return "".join(ch for ch in text if ch.isdecimal() and not "0" <= ch <= "9")


def other_digits_problem(value: object) -> str:
    """Why `value` cannot be a number as written, if it holds digits of another script; else ""."""
    if not isinstance(value, str):
        return ""
    found = other_digits(value)
    if not found:
        return ""
    return f"{value[:40]!r} is written with digits of another script ({found[:10]}): write numbers with the digits 0-9"


def refuse_other_digits(value: object) -> None:
    """Raise Django's ValidationError (code `invalid`) for a number written in another script's digits."""
    problem = other_digits_problem(value)
    if problem:
        raise ValidationError(problem, code="invalid")


def is_number_field(field: models.Field) -> bool:
    return isinstance(field, (models.IntegerField, models.FloatField, models.DecimalField))


# ------------------------------------------------------------------ API fields


class AsciiIntegerField(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        problem = other_digits_problem(data)
        if problem:
            raise serializers.ValidationError(problem, code="invalid")
        return super().to_internal_value(data)


class AsciiFloatField(serializers.FloatField):
    def to_internal_value(self, data: Any) -> float:
        problem = other_digits_problem(data)
        if problem:
            raise serializers.ValidationError(problem, code="invalid")
        return super().to_internal_value(data)


def _ascii_mapping() -> dict[Any, Any]:
    swap: dict[Any, Any] = {serializers.IntegerField: AsciiIntegerField, serializers.FloatField: AsciiFloatField}
    mapping: dict[Any, Any] = serializers.ModelSerializer.serializer_field_mapping
    return {model_field: swap[field] for model_field, field in mapping.items() if field in swap}


#: A ModelSerializer's `serializer_field_mapping` with every integer and float field refusing other scripts' digits.
ASCII_NUMBER_FIELDS = {**serializers.ModelSerializer.serializer_field_mapping, **_ascii_mapping()}


# ----------------------------------------------------------------- form fields


class AsciiIntegerFormField(forms.IntegerField):
    def to_python(self, value: Any) -> int | None:
        refuse_other_digits(value)
        return super().to_python(value)


class AsciiFloatFormField(forms.FloatField):
    def to_python(self, value: Any) -> float | None:  # type: ignore[override]
        refuse_other_digits(value)
        return super().to_python(value)


#: A ModelAdmin's `formfield_overrides` for integer and float fields (the admin matches subclasses too).
ASCII_NUMBER_FORM_FIELDS: dict[type[models.Field], dict[str, Any]] = {
    models.IntegerField: {"form_class": AsciiIntegerFormField},
    models.FloatField: {"form_class": AsciiFloatFormField},
}
