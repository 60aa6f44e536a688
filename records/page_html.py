"""The protocol page's long lists rendered in Python: the results table's rows, the "all evaluations"
table's rows, the evaluation links and the facet options.

A protocol of 1,000 evaluations loops over them five times in its template, and a Django template
costs tens of microseconds a row and more for an `{% include %}` per row: most of the page's
rendering time. These functions write the bytes the template loops and the partials they included
wrote (`_review.html`, `_uncertainty.html`, `_bounds.html`, kept for the other pages), values escaped
as templates escape them; tests/records/test_page_renderings.py compares whole pages with renderings
made by the templates.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from django.utils import dateformat
from django.utils.html import strip_spaces_between_tags
from django.utils.safestring import SafeData
from django.utils.timezone import template_localtime

from records.values import display


def e(value: object) -> str:
    """A value as `{{ value }}` writes it with autoescaping on (django.utils.html.escape is
    html.escape of the text). Most values hold no character to escape: those are returned as they
    are, without html.escape's five replacements (a 1,000-row page escapes some 18,000 values)."""
    if isinstance(value, SafeData):
        return value
    text = str(value)
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return html.escape(text)
    return text


CORRECTION_FORM = "/corrections/new/"  # corrections:correction-new (tests/corrections check that it still is)


def correction_link(result: Any) -> str:
    """A value's link to the correction form with that value chosen (the form's page lists every
    value of the protocol, this one selected)."""
    return (
        f'<a class="correct-link" href="{CORRECTION_FORM}?target=result:{e(quote(result.stable_id, safe=""))}:value#suggest"'
        ' aria-label="Correct this value">✎</a>'
    )


def model_link(configuration: Any) -> str:
    """(model: <a>name</a>) after a configuration's link, when it names a model with a page; "" when not.
    `configuration.model` is loaded with it (a page_rows line, or a select_related model)."""
    model = configuration.model if configuration is not None else None
    if model is None:
        return ""
    return f' <span class="model-link">(model: <a href="{e(model.get_absolute_url())}">{e(model.name)}</a>)</span>'


def review(record: Any, *, public_reviewer_names: bool) -> str:
    """templates/records/_review.html for `record`."""
    if record.needs_recheck:
        badge = "Source checked, excluded from comparison, then edited: re-check pending"
    elif record.is_excluded:
        badge = "Source checked, then excluded from comparison"
    elif record.source_was_checked:
        badge = "Source checked"
    else:
        badge = "Proposed: source not yet checked"
    out = f'\n<span class="review review-{e(record.review_state)}">{badge}</span>\n'
    if record.review_state_changed_at:
        role = record.review_state_changed_by_role
        reviewer = record.review_state_changed_by
        if role == "portal":
            who = "recorded by the portal's import"
        elif public_reviewer_names and reviewer:
            who = f"by {e(reviewer.get_full_name() or reviewer.get_username())}, {e(role)}"
        else:
            who = f"by a {e(role)}"
        day = dateformat.format(template_localtime(record.review_state_changed_at), "Y-m-d")
        out += f'<span class="review-when">(last review {day}, {who})</span>'
    out += "\n"
    if record.is_excluded:
        source = ""
        if record.concern_source:
            source = f' <span class="concern-source">{e(record.concern_source)} · {e(record.concern_locator)}</span>'
        out += (
            '\n<p class="concern"><strong>Evidence concern: excluded from comparisons</strong> '
            f"{e(record.concern)}{source}</p>\n"
        )
    return out + "\n"


def _bounds(result: Any) -> str:
    lower, upper = result.lower_bound, result.upper_bound
    if lower is not None and upper is not None:
        return f" from {e(display(lower))} to {e(display(upper))}"
    if lower is not None:
        return f" at least {e(display(lower))}"
    if upper is not None:
        return f" at most {e(display(upper))}"
    return ""


def uncertainty(evaluation: Any) -> str:
    """templates/records/_uncertainty.html for `evaluation` (a spaceless block and its line end)."""
    figures = evaluation.results_with_uncertainty
    parts = []
    for index, result in enumerate(figures):
        level = f" ({e(display(result.uncertainty_level))}%)" if result.uncertainty_level is not None else ""
        spread = f" ±{e(display(result.uncertainty_value))}" if result.uncertainty_value is not None else ""
        runs = f", n = {e(result.num_runs)}" if result.num_runs else ""
        parts.append(
            f'<span class="uncertainty-figures">{e(result.get_uncertainty_kind_display())}{level}{spread}'
            f"{_bounds(result)} {e(result.unit)}{runs}</span>{'; ' if index < len(figures) - 1 else ''}"
        )
    if evaluation.uncertainty:
        note = f' <span class="uncertainty-note">{e(evaluation.uncertainty)}</span>'
    else:
        note = "" if figures else "Not reported by the source"
    return strip_spaces_between_tags(f"\n{''.join(parts)}\n{note}\n".strip()) + "\n"


def _or_not_reported(value: object) -> str:
    return "Not reported" if value in (None, "") else e(value)


def evaluation_rows(evaluations: Iterable[Any], *, protocol: Any, public_reviewer_names: bool, provenance) -> str:
    """The rows of the "all evaluations" table (the template's loop body, once per evaluation)."""
    metric = f"{e(protocol.metric_label)}"
    direction = e(protocol.metric_direction)
    protocol_title, protocol_id = e(protocol.title), e(protocol.stable_id)
    out = []
    for evaluation in evaluations:
        findings = []
        for result in evaluation.results.all():
            printed = (
                f' <span class="printed">(printed: {e(result.printed_value)})</span>' if result.printed_value else ""
            )
            relative = (
                f' <span class="relative">{e(result.get_relation_display())} {e(result.reference_configuration.name)}</span>'
                if result.reference_configuration
                else ""
            )
            findings.append(
                f'<p id="finding-{e(result.stable_id)}"><span class="value">{e(result.display_value)}</span> '
                f"{metric} {e(result.unit)} · {direction}{printed}{relative} {correction_link(result)}</p>"
            )
        url = e(evaluation.get_absolute_url())
        setup = f"<p>Set-up: {e(evaluation.setup)}</p>" if evaluation.setup else ""
        if evaluation.different_measurement:
            setup += (
                '<p class="different-note">A different measurement, not compared with the protocol\'s: '
                f"{e(evaluation.different_measurement)}</p>"
            )
        source = ""
        if evaluation.source:
            quote = f": <q>'{e(evaluation.quote)}'</q>" if evaluation.quote else ""
            source = f'<p class="quote-line">{e(evaluation.source)} · {e(evaluation.source_locator)}{quote}</p>'
        out.append(
            f'\n      <tr id="evaluation-{e(evaluation.stable_id)}">\n'
            f'        <th scope="row">Configuration: <a href="{e(evaluation.configuration.get_absolute_url())}">'
            f"{e(evaluation.configuration.name)}</a>{model_link(evaluation.configuration)}</th>\n"
            f"        <td>Protocol: {protocol_title} Dataset: "
            f'<a href="{e(evaluation.dataset.get_absolute_url())}">{e(evaluation.dataset.name)}</a></td>\n'
            f"        <td>{''.join(findings)}\n"
            f"          <p>Uncertainty: {uncertainty(evaluation)}</p>\n"
            f"          <p>Coverage: {_or_not_reported(evaluation.coverage_scored)} scored / "
            f"{_or_not_reported(evaluation.coverage_eligible)} eligible</p></td>\n"
            f"        <td><p>{provenance(evaluation, 'headline')} · "
            f"{review(evaluation, public_reviewer_names=public_reviewer_names)}</p>\n"
            f"          <p>{provenance(evaluation, 'details')}</p>\n"
            '          <p class="details-heading">Methods, coverage and source</p>\n'
            f'          <p><a href="{url}">{e(evaluation.title)}</a> <code>{protocol_id}</code></p>\n'
            f"          <p>Aggregation: {_or_not_reported(evaluation.aggregation)}</p>\n"
            f"          {setup}\n"
            f"          {source}</td>\n"
            "      </tr>\n    "
        )
    return "".join(out)


def result_rows(rows: Iterable[Any], *, page: Any, cell) -> str:
    """The rows of the results table of a protocol with one comparison group."""
    out = []
    for row in rows:
        marks = f"{'best' if row.is_best else ''}{'' if row.in_comparison else ' not-compared'}"
        evaluation = row.evaluation
        out.append(
            f'\n      <tr class="{marks}">\n'
            f'        <th scope="row"><a href="{e(evaluation.configuration.get_absolute_url())}">'
            f"{e(evaluation.configuration.name)}</a>{model_link(evaluation.configuration)}"
            f' <a class="evaluation-link" href="{e(evaluation.get_absolute_url())}">Evaluation</a></th>\n'
            f"        <td>{cell(row, page)}</td>\n"
            "      </tr>\n    "
        )
    return "".join(out)


def evaluation_links(evaluations: Iterable[Any], *, kind: str) -> str:
    """A protocol's evaluations as list items: "recorded" (title and set-up) or "related"."""
    if kind == "related":
        return "".join(
            f'<li>assessment: <a href="{e(ev.get_absolute_url())}">{e(ev.title)}</a></li>' for ev in evaluations
        )
    return "".join(
        f'<li><a href="{e(ev.get_absolute_url())}">{e(ev.title)}</a>{f": {e(ev.setup)}" if ev.setup else ""}</li>'
        for ev in evaluations
    )


def facet_options(options: Iterable[Any], *, anchor: str) -> str:
    """A facet's options as list items (templates/records/_facets.html's inner loop)."""
    anchor = e(anchor)
    out = []
    for option in options:
        if option.selected:
            out.append(
                f'<li><a href="?{e(option.query)}#{anchor}" aria-current="true" class="selected">'
                f'{e(option.label)} ({option.count})<span class="visually-hidden"> (selected: select again to remove)'
                "</span></a></li>"
            )
        else:
            out.append(f'<li><a href="?{e(option.query)}#{anchor}">{e(option.label)} ({option.count})</a></li>')
    return "".join(out)
