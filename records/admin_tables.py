"""The admin's "New table from a paper": paste a table, see it as a grid with each label's match,
fix the mapping where nothing matched, and read every value with its quote; then download the
draft import document or queue its import (proposed records, as every import).

The page is stateless: each submission carries the paste and every choice, and is read again by
the one service (`records.tables.table_draft`), as the command line and the API read theirs.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.text import slugify

from common.errors import DomainError
from records.import_jobs import may_import
from records.models import Dataset
from records.tables import DraftRequestInvalid, request_read, table_draft, table_draft_import
from records.tables.cells import unmarked
from records.tables.draft import NEW, SKIP
from records.tables.grid import FORMATS
from records.tables.request import UNCERTAINTY_KINDS
from records.works import identifier_normalised, source_find

SOURCE_KINDS = ["paper", "preprint", "repository", "dataset_card", "model_card", "leaderboard", "web_page"]
ACTIONS = {"read": "Read the table", "download": "Download the draft", "import": "Import (proposed records)"}


class TableForm(forms.Form):
    source = forms.CharField(
        max_length=500, help_text="A catalogued source: its stable id, DOI, arXiv id or URL (found by any of them)."
    )
    new_title = forms.CharField(
        max_length=500,
        required=False,
        label="New source: title",
        help_text="Only where the source is not catalogued yet.",
    )
    new_kind = forms.ChoiceField(
        choices=[(k, k.replace("_", " ")) for k in SOURCE_KINDS], required=False, label="New source: kind"
    )
    new_authors = forms.CharField(max_length=200, required=False, label="New source: authors (short)")
    new_date = forms.CharField(
        max_length=10, required=False, label="New source: published (YYYY, YYYY-MM or YYYY-MM-DD)"
    )
    table = forms.CharField(
        max_length=200, help_text='The table\'s name as a locator: "Table 2", "Figure 3, bar labels", "README results".'
    )
    caption = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
    text = forms.CharField(
        label="The table as copied",
        max_length=1_000_000,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "class": "table-paste"}),
        help_text="Pasted from a PDF viewer, a spreadsheet or a web page: tab- or comma-separated, Markdown, LaTeX or aligned by spaces. Mark a bold value **like this** where the copy lost it.",
    )
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], initial="auto", label="Read as")
    header_rows = forms.IntegerField(min_value=1, max_value=4, initial=1, label="Header rows")
    models_in = forms.ChoiceField(
        choices=[("rows", "models in rows"), ("columns", "models in columns")], initial="rows", label="Models are"
    )
    suite = forms.ChoiceField(
        required=False, label="Match tasks within", help_text="A catalogued suite, or every task."
    )
    measured_by = forms.ChoiceField(
        choices=[("authors", "the authors of the model"), ("third_party", "a third party (another group)")],
        initial="authors",
        label="Who measured",
    )
    measured_by_name = forms.CharField(max_length=300, required=False, label="Third party's name")
    metric_name = forms.CharField(max_length=100, label="Metric", help_text='e.g. "MCC", "Accuracy".')
    metric_short_name = forms.CharField(
        max_length=100, label="Metric short name", help_text='The join key across papers: "mcc", "accuracy", "f1".'
    )
    metric_unit = forms.CharField(
        max_length=100,
        label="Unit as printed",
        help_text='With its scale: "MCC", "MCC x 100", "%", "accuracy (fraction)".',
    )
    metric_direction = forms.ChoiceField(
        choices=[("higher", "higher is better"), ("lower", "lower is better")], label="Better"
    )
    uncertainty_kind = forms.ChoiceField(
        choices=[("", "no spread printed"), *[(k, k) for k in UNCERTAINTY_KINDS]], required=False, label="Spreads are"
    )
    uncertainty = forms.CharField(max_length=2000, required=False, label="The source's words on the spread")
    num_runs = forms.IntegerField(min_value=1, required=False, label="Runs behind each value")

    FIELDSETS = (
        ("The source and the table", ("source", "new_title", "new_kind", "new_authors", "new_date", "table", "caption",
                                      "text", "format", "header_rows", "models_in", "suite")),
        ("What the values are", ("measured_by", "measured_by_name", "metric_name", "metric_short_name", "metric_unit",
                                 "metric_direction", "uncertainty_kind", "uncertainty", "num_runs")),
    )  # fmt: skip

    def fieldsets(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in self.FIELDSETS]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        suites = Dataset.objects.filter(suite=None, tasks__isnull=False).distinct().order_by("name")
        self.fields["suite"].choices = [("", "every catalogued task"), *[(s.stable_id, s.name[:90]) for s in suites]]


def _source_value(data: dict[str, Any]) -> str | dict[str, Any]:
    """The catalogued source the field names, or a new source built from the new-source fields."""
    given = data["source"].strip()
    if not data.get("new_title") or source_find(identifier=given) is not None:
        return given
    name, value = identifier_normalised(given)
    year = (data.get("new_date") or "")[:4]
    stable_id = slugify(f"{data.get('new_authors', '').split(' ')[0]} {year} {data['new_title'][:50]}")[:150]
    return {
        "stable_id": stable_id,
        "title": data["new_title"],
        "kind": data.get("new_kind") or "paper",
        "authors_short": data.get("new_authors", ""),
        "published_date": data.get("new_date", ""),
        name: value,
    }


def _axis_choices(post: Any, prefix: str, kind_of: str) -> dict[str, dict[str, Any]]:
    """The choices posted for each column (prefix "c") or row ("r"), by label."""
    chosen: dict[str, dict[str, Any]] = {}
    for key in post:
        if not key.startswith(f"label-{prefix}-"):
            continue
        index = key.rsplit("-", 1)[1]
        label = post[key]
        value = (post.get(f"id-{prefix}-{index}") or "").strip() or post.get(f"map-{prefix}-{index}", "")
        if value == SKIP:
            chosen[label] = {"skip": True}
        elif value:
            chosen[label] = {kind_of: value}
        measured_by = post.get(f"by-{prefix}-{index}", "")
        if measured_by and value != SKIP:
            chosen.setdefault(label, {})["measured_by"] = measured_by
    return chosen


def draft_request_data(data: dict[str, Any], post: Any) -> dict[str, Any]:
    """The table draft request (records.tables.request) that the page's fields state."""
    models_across = data["models_in"] == "columns"
    return {
        "source": _source_value(data),
        "table": data["table"],
        "caption": data.get("caption", ""),
        "text": data["text"],
        "layout": {"format": data["format"], "header_rows": data["header_rows"], "models_in": data["models_in"]},
        "measured_by": data["measured_by"],
        "measured_by_name": data.get("measured_by_name", ""),
        "metric": {
            "name": data["metric_name"],
            "short_name": data["metric_short_name"],
            "unit": data["metric_unit"],
            "direction": data["metric_direction"],
        },
        "uncertainty_kind": data.get("uncertainty_kind", ""),
        "uncertainty": data.get("uncertainty", ""),
        "num_runs": data.get("num_runs"),
        "suite": data.get("suite", ""),
        "columns": _axis_choices(post, "c", "model" if models_across else "task"),
        "rows": _axis_choices(post, "r", "task" if models_across else "model"),
    }


def table_draft_view(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    """The page (GET: an empty form, or ?source= from a source's page) and each submission."""
    if not may_import(request.user):
        raise PermissionDenied
    form = TableForm(request.POST or None, initial={"source": request.GET.get("source", "")[:500]})
    draft = None
    action = request.POST.get("action", "read")
    if request.method == "POST" and form.is_valid():
        try:
            draft_request = request_read(draft_request_data(form.cleaned_data, request.POST))
        except DraftRequestInvalid as invalid:
            for error in invalid.errors:
                form.add_error(None, f"{error['path']}: {error['message']}")
        else:
            if action == "import":
                try:
                    job = table_draft_import(request=draft_request, actor=request.user)
                except DomainError as refused:
                    messages.error(request, f"Nothing was imported: {refused.message}")
                else:
                    messages.success(
                        request,
                        f"Import #{job.pk} of {draft_request.table} is queued: its records will be proposed, for a second curator to check.",
                    )
                    return HttpResponseRedirect(reverse("admin:records_importjob_change", args=[job.pk]))
            draft = table_draft(request=draft_request, actor=request.user)
            if action == "download":
                response = HttpResponse(
                    json.dumps(draft.document, indent=2, ensure_ascii=False),
                    content_type="application/json; charset=utf-8",
                )
                response["Content-Disposition"] = (
                    f'attachment; filename="{slugify(draft_request.table) or "table"}.json"'
                )
                return response
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "New table from a paper",
        "form": form,
        "draft": draft,
        "grid": _grid_context(draft) if draft is not None else None,
        "actions": ACTIONS,
        "opts": model_admin.model._meta,
    }
    return render(request, "admin/records/table_draft.html", context)


def _grid_context(draft) -> dict[str, Any]:
    """The grid as the page shows it: each label with its choices, each cell with its value, quote and problems."""
    drafted = draft.drafted
    by_cell: dict[tuple, list[str]] = {}
    for problem in draft.problems:
        by_cell.setdefault((problem.pin.row, problem.pin.column), []).append(problem.message)

    def label(item, prefix: str) -> dict[str, Any]:
        choices = draft.request.rows if prefix == "r" else draft.request.columns
        auto = item.match.chosen is not None and not item.manual
        options = [(c.stable_id, f"{c.name} ({c.score})") for c in item.match.candidates]
        return {
            "index": item.index,
            "label": item.label,
            "names": item.names,
            "prefix": prefix,
            "auto": f"{item.match.chosen.name} ({item.match.chosen.score})" if auto else "",
            "selected": item.chosen if item.manual else "",
            "measured_by": (choices.get(item.label) or {}).get("measured_by", "") if item.names == "model" else None,
            "options": options,
            "new": NEW,
            "skip": SKIP,
            "problems": by_cell.get((item.index, None) if prefix == "r" else (None, item.index), []),
        }

    columns = [label(item, "c") for item in drafted.columns]
    rows = []
    for index, (item, row) in enumerate(zip(drafted.rows, draft.grid.body, strict=True)):
        cells = []
        for column in drafted.columns:
            cell = drafted.cells.get((index, column.index))
            cells.append(
                {
                    "cell": cell,
                    "problems": by_cell.get((index, column.index), []),
                    "text": row.cells[column.index] if column.index < len(row.cells) else "",
                }
            )
        rows.append(
            {
                "label": label(item, "r") if item is not None else None,
                "heading": " | ".join(unmarked(text) for text in row.cells),  # the row as its quote prints it
                "cells": cells,
                "line": row.line,
            }
        )
    return {
        "columns": columns,
        "rows": rows,
        "table_problems": by_cell.get((None, None), []),
        "header_corner": draft.grid.column_labels()[:1],
    }
