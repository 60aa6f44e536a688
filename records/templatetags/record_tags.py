from decimal import Decimal

from django import template

from records.values import display, exact_text

register = template.Library()


@register.filter
def exact(value: Decimal | None) -> str:
    """The exact value as files and the API write it ("0.410", "3.00E+11")."""
    return exact_text(value)


@register.filter
def shown(value: Decimal | None) -> str:
    """The value for readers, with exactly the digits the source printed (0.410, 3.00 × 10¹¹)."""
    return display(value)


@register.filter
def or_not_reported(value, text: str = "Not reported") -> str:
    return text if value in (None, "") else value
