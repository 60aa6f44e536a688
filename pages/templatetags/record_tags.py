from decimal import Decimal
from typing import Any
from urllib.parse import quote

from django import template
from django.urls import reverse

from pages import identity_pages
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


@register.filter
def correction_url(result: Any) -> str:
    """The correction form with this value chosen (the form lists every value of the record)."""
    return f"{reverse('corrections:correction-new')}?value={quote(result.stable_id, safe='')}"


@register.inclusion_tag("pages/_model_link.html")
def model_link(configuration: Any) -> dict[str, Any]:
    """(model: <a>name</a>) after a configuration shown in a row, when it names a model."""
    return {"model": configuration.model if configuration is not None else None}


@register.filter
def measured_by_text(evaluation) -> str:
    """Who measured an evaluation: "the model's authors", "a third party (name)", "this portal"."""
    return identity_pages.measured_by_text(evaluation)


@register.filter
def printing_text(printing) -> str:
    """A printing's value with the source's digits, its ± spread and unit."""
    return identity_pages.printing_text(printing)
