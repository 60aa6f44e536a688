from decimal import Decimal

from django import template
from django.utils.safestring import SafeString, mark_safe

from records import identity_pages, page_html
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


@register.simple_tag
def model_link(configuration) -> SafeString:
    """ " (model: <a>…</a>)" after a configuration shown in a row, when it names a model (records.page_html.model_link)."""
    return mark_safe(page_html.model_link(configuration))


@register.simple_tag
def correction_link(result) -> SafeString:
    """A value's ✎ link to the correction form with that value chosen (records.page_html.correction_link)."""
    return mark_safe(page_html.correction_link(result))


@register.filter
def measured_by_text(evaluation) -> str:
    """Who measured an evaluation: "the model's authors", "a third party (name)", "this portal"."""
    return identity_pages.measured_by_text(evaluation)


@register.filter
def printing_text(printing) -> str:
    """A printing's value with the source's digits, its ± spread and unit."""
    return identity_pages.printing_text(printing)


# -- rows of a protocol's comparison, rendered in Python: a page holds one per result (1,000 and more),
# and a template included per row cost most of the page's rendering time. Same bytes as the
# templates they replaced (tests/records/test_page_renderings.py): values escaped as templates
# escape them (page_html.e), literal text as written.

_e = page_html.e


@register.simple_tag
def provenance(evaluation, part: str = "details") -> SafeString:
    """Who measured an evaluation (part "headline"), or who reports it, how it was read and what it
    repeats ("details"); a line of its own, as the template it replaced gave."""
    return mark_safe(f"{_provenance(evaluation, part)}\n")


def _provenance(evaluation, part: str) -> str:
    measured_by = evaluation.measured_by
    if part == "headline":
        if measured_by == "authors":
            return "Author-reported evaluation"
        if measured_by == "third_party":
            return f"Third-party measurement ({_e(evaluation.measured_by_name)})"
        return "Measured by this portal"
    if measured_by == "portal":
        who = "Measured by this portal's benchmark job"
    else:
        who = "Measured by " + ("the model's authors" if measured_by == "authors" else _e(evaluation.measured_by_name))
        source = evaluation.source
        if source:
            who += f", reported by {_e(source.authors_short or source.title)}"
    repeats = evaluation.repeats
    repeat = (
        f'; same measurement as <a href="{_e(repeats.get_absolute_url())}">{_e(repeats.title)}</a>'
        " (a copy, not a replication)"
        if repeats
        else ""
    )
    reading = _e(str(evaluation.get_reading_method_display()).lower())
    return f'<span class="provenance">{who}; {reading}{repeat}</span>'


@register.simple_tag
def result_cell(row, page) -> SafeString:
    """One result in a comparison (results table or matrix cell): its value with the source's digits
    and the unit (a matrix names it in its column header), its marks and why it is or is not compared."""
    result, evaluation, matrix = row.result, row.evaluation, page.is_matrix
    unit = "" if matrix else f' <span class="unit">{_e(result.unit)}</span>'
    uncertainty = ""
    if result.uncertainty_kind:
        runs = f", n = {_e(result.num_runs)}" if result.num_runs else ""
        uncertainty = (
            f' <span class="uncertainty">({_e(result.printed_value)};'
            f" {_e(result.get_uncertainty_kind_display())}{runs})</span>"
        )
    best = ""
    if row.is_best:
        included = ", excluded rows included" if page.include_excluded else ""
        tied = ", tied within reported spread" if row.best_tied else ""
        best = f' <strong class="best-mark">(best in column{included}{tied})</strong>'
    elif row.tied_with_best:
        best = ' <strong class="best-mark tied-mark">(tied with the best within its reported spread)</strong>'
    if row.different_measurement:
        note = (
            '<span class="row-note different-note">A different measurement, not compared with the protocol\'s: '
            f"{_e(evaluation.different_measurement)}</span>\n"
        )
    elif evaluation.is_excluded:
        recheck = " (edited since; re-check pending)" if evaluation.needs_recheck else ""
        if matrix:
            note = (
                f'<details class="row-note excluded-note"><summary>Excluded from comparison{recheck}</summary>'
                f"{_e(evaluation.concern)}</details>\n"
            )
        else:
            note = f'<span class="row-note excluded-note">Excluded from comparison{recheck}: {_e(evaluation.concern)}</span>\n'
    elif row.excluded_through_original:
        original = evaluation.repeats
        note = (
            f'<span class="row-note excluded-note">Same measurement as <a href="{_e(original.get_absolute_url())}">'
            f"{_e(original.title)}</a>, which is excluded from comparison: {_e(original.concern)}</span>\n"
        )
    elif row.counted_through_original:
        original = evaluation.repeats
        note = (
            f'<span class="row-note">Same measurement as <a href="{_e(original.get_absolute_url())}">'
            f"{_e(original.title)}</a>, reported again by this source: counted once</span>\n"
        )
    elif not evaluation.source_was_checked:
        note = '<span class="row-note">Proposed: source not yet checked; not compared</span>'
    else:
        note = ""
    marks = f"{' best' if row.is_best else ''}{'' if row.in_comparison else ' not-compared'}"
    details = "" if matrix else provenance(evaluation, "details")
    return mark_safe(
        f'\n<span class="result{marks}">\n'
        f'<a class="value" href="{_e(evaluation.get_absolute_url())}#result-{_e(result.stable_id)}"'
        f' title="Printed value: {_e(result.printed_value)}">{_e(result.display_value)}</a>{unit}{uncertainty}'
        f" {page_html.correction_link(result)}\n"
        f"{best}\n{note}\n{details}\n</span>\n"
    )


# -- the protocol page's long lists (records.page_html): one tag a list instead of a template loop a row


@register.simple_tag(takes_context=True)
def evaluation_rows(context, evaluations, protocol) -> SafeString:
    public = bool(context.get("public_reviewer_names"))
    return mark_safe(
        page_html.evaluation_rows(evaluations, protocol=protocol, public_reviewer_names=public, provenance=provenance)
    )


@register.simple_tag
def result_rows(rows, page) -> SafeString:
    return mark_safe(page_html.result_rows(rows, page=page, cell=result_cell))


@register.simple_tag
def evaluation_links(evaluations, kind: str) -> SafeString:
    return mark_safe(page_html.evaluation_links(evaluations, kind=kind))


@register.simple_tag
def facet_options(options, anchor) -> SafeString:
    return mark_safe(page_html.facet_options(options, anchor=anchor))
