from decimal import ROUND_HALF_UP, Decimal

from django import template

from records.models import format_decimal

register = template.Library()

DISPLAY_SIGNIFICANT_DIGITS = 4


@register.filter
def exact(value: Decimal | None) -> str:
    """The exact value without trailing zeros."""
    return format_decimal(value)


@register.filter
def rounded(value: Decimal | None) -> str:
    """The value rounded for display: four significant digits, whole numbers kept whole.

    The exact value is always linked beside it.
    """
    if value is None:
        return ""
    if value == 0:
        return "0"
    exponent = min(0, max(value.adjusted() - DISPLAY_SIGNIFICANT_DIGITS + 1, -6))
    return format_decimal(value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_UP))


@register.filter
def or_not_reported(value, text: str = "Not reported") -> str:
    return text if value in (None, "") else value
