"""Review a source's table against it: the admin page where a curator sees each of the source's
evaluations in one review state, its value beside the printed value, locator and quote, ticks the
rows that match the source and applies one transition, with one reason, to all of them.

Each ticked row goes through the one review service (`reviews.services.review_transitions_apply`:
its own locked change, event and history row, four eyes and permissions as for one record), and the
page reports every refusal with its reason. Rows can be claimed ("I am checking these") so that two
curators do not check the same table; a claim blocks nothing, it is shown to the others.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from records.models import Evaluation, Protocol, Result, Source
from records.page_lists import listed
from reviews.admin import REASON_MAX_LENGTH, report_outcome
from reviews.models import ReviewState
from reviews.selectors import active_claims, claim_key
from reviews.services import (
    ReviewError,
    review_claims_release,
    review_claims_take,
    review_options,
    review_transitions_apply,
)
from reviews.transitions import TRANSITIONS

ROWS_PER_PAGE = 100
TABLE_CELLS_PER_PAGE = 1000  # a whole table on one page: its grid beside its quotes
ACTIONS = {"apply": "Apply to the ticked rows", "claim": "Claim the ticked rows", "release": "Release my claims"}


class ReviewTableForm(forms.Form):
    """One submission of the page: the rows ticked (or every row the page showed), what to do with
    them, and a reason. `shown` carries the rows the page showed, so that a row another curator
    reviewed meanwhile is reported as changed, not silently left out."""

    action = forms.ChoiceField(choices=list(ACTIONS.items()))
    transition = forms.ChoiceField(required=False)
    reason = forms.CharField(required=False, max_length=REASON_MAX_LENGTH, widget=forms.Textarea(attrs={"rows": 2}))
    rows = forms.TypedMultipleChoiceField(coerce=int, required=False)
    shown = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.MultipleHiddenInput)
    all_rows = forms.BooleanField(required=False, label="Every row on this page")

    def __init__(self, *args: Any, state: str, source_rows: list[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["transition"].choices = [
            (name, spec.label) for name, spec in TRANSITIONS.items() if state in spec.sources
        ]
        choices = [(pk, str(pk)) for pk in source_rows]
        self.fields["rows"].choices = self.fields["shown"].choices = choices

    def chosen(self) -> list[int]:
        """The rows to act on: those ticked, or every row the page showed."""
        shown = self.cleaned_data["shown"]
        if self.cleaned_data["all_rows"]:
            return shown
        return [pk for pk in self.cleaned_data["rows"] if pk in set(shown)]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if not cleaned.get("rows") and not cleaned.get("all_rows"):
            raise forms.ValidationError("Tick the rows to act on, or 'every row on this page'.")
        if cleaned.get("action") == "apply" and not cleaned.get("transition"):
            self.add_error("transition", "Choose the transition to apply.")
        return cleaned


def _state_of(request: HttpRequest) -> str:
    state = request.GET.get("state", ReviewState.PROPOSED)
    return state if state in ReviewState.values else ReviewState.PROPOSED


def review_table_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """The page (GET) and its submission (POST, then back to the same page with what was done)."""
    if not any(request.user.has_perm(spec.permission) for spec in TRANSITIONS.values()):
        raise PermissionDenied
    source = get_object_or_404(Source, pk=object_id)
    state = _state_of(request)
    protocol = request.GET.get("protocol", "")[:150]
    evaluations = (
        Evaluation.objects.filter(source=source, review_state=state)
        .select_related("protocol", "dataset", "configuration", "last_edited_by")
        .prefetch_related(Prefetch("results", queryset=Result.objects.order_by("stable_id")))
        .order_by("protocol__title", "dataset__position", "dataset__name", "configuration__name", "stable_id")
    )
    if protocol:
        evaluations = evaluations.filter(protocol__stable_id=protocol)
    table = request.GET.get("table", "")[:200]
    if table:  # the locator a table draft writes: "<table>, row '<label>', column '<label>'"
        evaluations = evaluations.filter(source_locator__startswith=f"{table}, row ")
    source_rows = list(Evaluation.objects.filter(source=source).order_by("pk").values_list("pk", flat=True))
    form = ReviewTableForm(request.POST or None, state=state, source_rows=source_rows)
    if request.method == "POST":
        if form.is_valid():
            chosen = list(Evaluation.objects.filter(source=source, pk__in=form.chosen()).order_by("pk"))
            _act(model_admin, request, form.cleaned_data, chosen, state=state)
            return HttpResponseRedirect(request.get_full_path())
        messages.error(request, "Nothing changed: " + " ".join(_form_errors(form)))
    shown = listed(
        evaluations, key="rows", params=request.GET, per_page=TABLE_CELLS_PER_PAGE if table else ROWS_PER_PAGE
    )
    rows: list[Evaluation] = list(shown.items)
    form.initial = {"shown": [row.pk for row in rows]}
    if request.method == "POST":  # redisplayed with its errors: the rows shown now
        form.data = form.data.copy()
        form.data.setlist("shown", [str(row.pk) for row in rows])
    claims = active_claims(records=rows)
    lines = []
    for row in rows:
        options = review_options(record=row, user=request.user)
        lines.append(
            {
                "evaluation": row,
                "results": list(row.results.all()),
                "claim": claims.get(claim_key(row)),
                "refusals": [f"{option.label}: {option.refusal}" for option in options if option.refusal],
                "change_url": reverse("admin:records_evaluation_change", args=[row.pk]),
            }
        )
    tables = sorted(
        {
            locator.split(", row ", 1)[0]
            for locator in Evaluation.objects.filter(source=source, source_locator__contains=", row '")
            .values_list("source_locator", flat=True)
            .distinct()
        }
    )
    protocols = (
        Protocol.objects.filter(evaluations__source=source, evaluations__review_state=state)
        .distinct()
        .order_by("title")
    )
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Review the table of {source}",
        "source": source,
        "state": state,
        "state_label": ReviewState(state).label,
        "states": ReviewState.choices,
        "protocol": protocol,
        "protocols": protocols,
        "table": table,
        "tables": tables,
        "grid": _grid(lines) if table else None,
        "shown": shown,
        "lines": lines,
        "form": form,
        "actions": ACTIONS,
        "claim_minutes": settings.REVIEW_CLAIM_MINUTES,
        "source_url": reverse("admin:records_source_change", args=[source.pk]),
        "opts": Source._meta,
    }
    return render(request, "admin/records/review_table.html", context)


def _grid(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """A table's evaluations as the table prints them: a row per configuration, a column per task,
    each row's quote beside it."""
    columns: dict[int, Any] = {}
    rows: dict[int, dict[str, Any]] = {}
    for line in lines:
        evaluation = line["evaluation"]
        columns.setdefault(evaluation.dataset_id, evaluation.dataset)
        row = rows.setdefault(
            evaluation.configuration_id,
            {"configuration": evaluation.configuration, "cells": {}, "quote": evaluation.quote},
        )
        row["cells"][evaluation.dataset_id] = line
    ordered = list(columns)
    return {
        "columns": [columns[key] for key in ordered],
        "rows": [{**row, "cells": [row["cells"].get(key) for key in ordered]} for row in rows.values()],
    }


def _act(
    model_admin: admin.ModelAdmin, request: HttpRequest, data: dict[str, Any], chosen: list[Evaluation], *, state: str
) -> None:
    action = data["action"]
    if action == "apply":
        spec = TRANSITIONS[data["transition"]]
        outcome = review_transitions_apply(
            records=chosen, transition=spec.name, actor=request.user, reason=data["reason"], expected_state=state
        )
        report_outcome(model_admin, request, label=spec.label, outcome=outcome)
    elif action == "claim":
        try:
            held, others = review_claims_take(records=chosen, actor=request.user, minutes=settings.REVIEW_CLAIM_MINUTES)
        except ReviewError as exc:
            messages.error(request, f"Nothing claimed: {exc.message}")
            return
        messages.success(request, f"You claimed {held} row(s) for {settings.REVIEW_CLAIM_MINUTES} minutes.")
        if others:
            holders = sorted({str(claim.claimed_by) for claim in others})
            messages.warning(request, f"{len(others)} row(s) stay claimed by {', '.join(holders)}.")
    else:
        released = review_claims_release(records=chosen, actor=request.user)
        messages.success(request, f"You released your claim on {released} row(s).")


def _form_errors(form: forms.Form) -> list[str]:
    return [
        f"{form.fields[field].label or field}: {' '.join(errors)}" if field != "__all__" else " ".join(errors)
        for field, errors in form.errors.items()
    ]
