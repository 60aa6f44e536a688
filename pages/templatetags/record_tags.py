from decimal import Decimal
from typing import Any
from urllib.parse import quote

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import capfirst

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
def model_link(configuration: Any, *, compact: bool = False) -> dict[str, Any]:
    """(model: <a>name</a>) after a configuration shown in a row, when it names a model; `compact`:
    "(model)" alone, the name in its title (a matrix row)."""
    return {"model": configuration.model if configuration is not None else None, "compact": compact}


@register.filter
def measured_by_text(evaluation) -> str:
    """Who measured an evaluation: "the model's authors", "a third party (name)", "this portal"."""
    return identity_pages.measured_by_text(evaluation)


@register.filter
def printing_text(printing) -> str:
    """A printing's value with the source's digits, its ± spread and unit."""
    return identity_pages.printing_text(printing)


_RECHECK = " (edited since; re-check pending)"


def _note(row: Any, evaluation: Any, *, in_matrix: bool) -> SafeString | str:
    """What a value's row note says: why it is not compared, or how it is counted."""
    if row.different_measurement:
        return format_html(
            ' <span class="row-note different-note">A different measurement, not compared with the protocol\'s: {}</span>',
            evaluation.different_measurement,
        )
    if evaluation.is_excluded:
        recheck = _RECHECK if evaluation.needs_recheck else ""
        if in_matrix:
            return format_html(
                ' <details class="row-note excluded-note"><summary>Excluded from comparison{}</summary>{}</details>',
                recheck,
                evaluation.concern,
            )
        return format_html(
            ' <span class="row-note excluded-note">Excluded from comparison{}: {}</span>', recheck, evaluation.concern
        )
    if row.excluded_through_original:
        repeats = evaluation.repeats
        return format_html(
            ' <span class="row-note excluded-note">Same measurement as <a href="{}">{}</a>, which is excluded from'
            " comparison: {}</span>",
            repeats.get_absolute_url(),
            repeats.title,
            repeats.concern,
        )
    if row.disagreement:
        return format_html(
            ' <span class="row-note disagreement-note"><strong>{}</strong>: <a href="{}">{}</a> is the printing'
            " compared; this one is not compared</span>",
            capfirst(row.disagreement),
            row.same_as_url,
            row.same_as[1],
        )
    if row.counted_through_original:
        return format_html(
            ' <span class="row-note">The same value as <a href="{}">{}</a>, another printing of this measurement:'
            " counted once</span>",
            row.same_as_url,
            row.same_as[1],
        )
    if not evaluation.source_was_checked:
        return mark_safe(' <span class="row-note">Proposed: source not yet checked; not compared</span>')
    return ""


@register.simple_tag
def result_cell(row: Any, page: Any, *, in_matrix: bool) -> SafeString:
    """One value of a protocol page's results (templates/pages/_results.html), escaped by format_html:
    a matrix page holds hundreds, and one template include a value tripled the page's first render
    (bench/page_queries.py)."""
    result, evaluation = row.result, row.evaluation
    classes = "result" + (" best" if row.is_best else "") + ("" if row.in_comparison else " not-compared")
    href = evaluation.get_absolute_url() + ("" if in_matrix else f"#result-{result.stable_id}")
    title = (
        format_html(' title="Printed value: {}"', result.printed_value)
        if result.printed_value != result.display_value
        else ""
    )
    unit = "" if in_matrix else format_html(' <span class="unit">{}</span>', result.unit)
    spread = ""
    if result.uncertainty_kind:
        runs = f", n = {result.num_runs}" if result.num_runs else ""
        spread = format_html(
            ' <span class="uncertainty">({}; {}{})</span>',
            result.printed_value,
            result.get_uncertainty_kind_display(),
            runs,
        )
    best = ""
    if row.is_best:
        best = format_html(
            ' <strong class="best-mark">(best in column{}{})</strong>',
            ", excluded rows included" if page.include_excluded else "",
            ", tied with a runner-up" if row.best_tied else "",
        )
    elif row.tied_with_best:
        best = mark_safe(' <strong class="best-mark tied-mark">(tied with the best)</strong>')
    return format_html(
        '<span class="{}"><a class="value" href="{}"{}>{}</a>{}{} <a class="correct-link" href="{}"'
        ' aria-label="Correct this value">✎</a>{}{}</span>',
        classes,
        href,
        title,
        result.display_value,
        unit,
        spread,
        correction_url(result),
        best,
        _note(row, evaluation, in_matrix=in_matrix),
    )
