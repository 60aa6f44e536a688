"""A model field for exact decimals of any magnitude and printed precision (see records.values)."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.db import models

from records.values import MAX_TEXT, ValueInvalid, exact_text, parse_exact


class ExactDecimalFormField(forms.CharField):
    def to_python(self, value):
        text = super().to_python(value)
        if text in self.empty_values:
            return None
        try:
            return parse_exact(text)
        except ValueInvalid as exc:
            raise ValidationError(str(exc), code="invalid") from None

    def prepare_value(self, value):
        return exact_text(value) if isinstance(value, Decimal) else value

    def has_changed(self, initial, data) -> bool:
        """Changed when the digits are: 0.410 after 0.41 is an edit, though the numbers are equal."""
        try:
            new = self.to_python(data)
        except ValidationError:
            return True
        old = self.to_python(exact_text(initial) if isinstance(initial, Decimal) else initial)
        return exact_text(old) != exact_text(new)


class ExactDecimalField(models.CharField):
    """Stored as the Decimal's text ("0.410", "3.00E+11"): SQLite's NUMERIC keeps 15 significant
    digits and drops trailing zeros, PostgreSQL's numeric drops an exponent's precision; text keeps
    both exactly on both backends. Read back as a Decimal with the same digits."""

    description = "An exact decimal with its printed precision"

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_length", MAX_TEXT + 8)
        super().__init__(*args, **kwargs)
        # parse_exact bounds the length; a length validator would call len() on the Decimal
        self.validators[:] = [v for v in self.validators if not isinstance(v, MaxLengthValidator)]

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("max_length") == MAX_TEXT + 8:
            del kwargs["max_length"]
        return name, path, args, kwargs

    def to_python(self, value):
        if value is None or value == "":
            return None
        try:
            return parse_exact(value)
        except ValueInvalid as exc:
            raise ValidationError(str(exc), code="invalid") from None

    def from_db_value(self, value, expression, connection):
        return None if value is None else Decimal(value)

    def get_prep_value(self, value):
        if value is None or value == "":
            return None
        return exact_text(self.to_python(value))

    def value_to_string(self, obj):
        return exact_text(self.value_from_object(obj))

    def formfield(self, **kwargs):
        return super().formfield(**{"form_class": ExactDecimalFormField, **kwargs, "max_length": None})
