from decimal import ROUND_HALF_UP, Decimal

from django import template

from records.values import display, exact_text

register = template.Library()

DISPLAY_SIGNIFICANT_DIGITS = 4


@register.filter
def exact(value: Decimal | None) -> str:
    """The exact value as files and the API write it ("0.410", "3.00E+11")."""
    return exact_text(value)


@register.filter
def shown(value: Decimal | None) -> str:
    """The value for readers, with exactly the digits the source printed (0.410, 3.00 × 10¹¹)."""
    return display(value)


def rounded(value: Decimal | None) -> str:
    """An axis tick for a chart: four significant digits, whole numbers kept whole."""
    if value is None:
        return ""
    if value == 0:
        return "0"
    if abs(value.adjusted()) >= 6:  # 1 × 10⁹ rather than 1000000000
        return display(value.quantize(Decimal(1).scaleb(value.adjusted() - DISPLAY_SIGNIFICANT_DIGITS + 1), rounding=ROUND_HALF_UP).normalize())
    exponent = min(0, max(value.adjusted() - DISPLAY_SIGNIFICANT_DIGITS + 1, -6))
    text = format(value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_UP).normalize(), "f")
    return "0" if text == "-0" else text


@register.filter
def or_not_reported(value, text: str = "Not reported") -> str:
    return text if value in (None, "") else value
