"""Public pages. Each view validates its input and calls one read query.

A record page shows data of apps above records too (the release it is derived from, a protocol's
benchmark recipes, the "Suggest a correction" form). Records imports none of them: each app owns a
plain function that returns its part of the page's context (`PageParts`), and portal/urls.py, which
imports every app, hands them to `records.urls.urlpatterns_for`. The templates only read context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol as TypingProtocol

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from common.errors import Invalid
from records import (
    chart_output,
    coverage_matrix,
    exports,
    identity_pages,
    model_page,
    page_cache,
    protocol_page,
    search,
    selectors,
)
from records import coverage as coverage_report
from records import models as m

RecordPart = Callable[[HttpRequest, m.CuratedModel], Mapping[str, object]]


class ReleasePart(TypingProtocol):
    def __call__(self, request: HttpRequest, *, downloads: bool = False) -> Mapping[str, object]: ...


def _no_part(request: HttpRequest, record: m.CuratedModel) -> Mapping[str, object]:
    return {}


def _no_release(request: HttpRequest, *, downloads: bool = False) -> Mapping[str, object]:
    return {}


@dataclass(frozen=True)
class PageParts:
    """What the apps above records add to its pages, each a function of the app that owns the data.
    Each returns template context (values, or HTML rendered from that app's own templates); without
    parts (records.urls.urlpatterns) the pages show only the catalogue's own data."""

    # releases: `release` (the newest published one, which pages are derived from), `release_url`, `release_downloads`
    release: ReleasePart = _no_release
    # releases: `release_membership`, the line naming the releases that contain the record
    membership: RecordPart = _no_part
    # benchmarks: a protocol's `recipe_line` and `run_instructions`
    recipes: Callable[[HttpRequest, m.Protocol], Mapping[str, object]] = _no_part
    # benchmarks: an evaluation's `benchmark_job`, the job that measured it
    job: Callable[[HttpRequest, m.Evaluation], Mapping[str, object]] = _no_part
    # corrections: the record's `correction_form`
    correction: RecordPart = _no_part
    # benchmarks: of some protocols' stable ids, those with a reviewed recipe (the coverage page's column)
    reviewed_recipes: coverage_report.RecipeLookup = coverage_report.no_reviewed_recipes


NO_PARTS = PageParts()


def _record_page(
    request: HttpRequest,
    *,
    template: str,
    context: Callable[[], tuple[m.CuratedModel, Mapping[str, object]]],
    find: Callable[[], m.CuratedModel],
    parts: PageParts,
    live: Callable[[HttpRequest, m.CuratedModel], Mapping[str, object]] = _no_part,
) -> HttpResponse:
    """A record page from the page cache (records.page_cache), or rendered by `context()`, which
    returns the record and the page's context; every record page names the releases that contain
    it. The correction form and `live`'s parts are made per request, for the record `context()`
    loaded or, on a cached page, the one `find()` loads."""
    loaded: list[m.CuratedModel] = []

    def full_context() -> dict[str, object]:
        record, values = context()
        loaded.append(record)
        return {**parts.membership(request, record), **values}

    def live_parts() -> dict[str, object]:
        record = loaded[0] if loaded else find()
        return {**live(request, record), **parts.correction(request, record)}

    return page_cache.cached_page(request, template=template, context=full_context, live=live_parts)


@require_safe
def home(request):
    return render(request, "records/home.html", {"catalogue": selectors.catalogue(params=request.GET)})


@require_safe
def protocol_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    def context() -> tuple[m.Protocol, dict[str, object]]:
        page = protocol_page.protocol_page(stable_id=stable_id, params=request.GET)
        return page.protocol, {
            **parts.release(request, downloads=True),
            **parts.recipes(request, page.protocol),
            "page": page,
            "protocol": page.protocol,
            "evidence": selectors.faceted(
                list(page.protocol.evidence_rows.all()), selectors.EVIDENCE_FACETS, request.GET
            ),
            "charts_sentence": chart_output.charts_sentence(page.groups, include_excluded=page.include_excluded),
            "chart_query": _chart_query(request),
        }

    return _record_page(
        request,
        template="records/protocol_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.Protocol.objects.all(), stable_id),
        parts=parts,
    )


def _chart_query(request) -> str:
    """The query string that selects the same charts for download ("" or "?include=...&dataset=...")."""
    query = request.GET.copy()
    for key in list(query):
        if key not in (protocol_page.INCLUDE_PARAM, protocol_page.DATASET_PARAM):
            del query[key]
    return f"?{query.urlencode()}" if query else ""


@require_safe
def protocol_chart(request, stable_id: str, extension: str):
    """The protocol page's charts as one SVG or PNG download, from the chart cache (records.page_cache)
    or drawn; the query's `include` and `dataset` choose the charts, as on the page."""
    include_excluded, dataset = protocol_page.reader_choices(request.GET)

    def svg() -> str:
        return chart_output.charts_svg(
            protocol_page.protocol_charts(stable_id=stable_id, include_excluded=include_excluded, dataset=dataset)
        )

    choices = {"include_excluded": str(include_excluded), "dataset": dataset}
    return page_cache.cached_chart(
        request, stable_id=stable_id, kind=extension, choices=choices, svg=svg, png=chart_output.chart_png
    )


@require_safe
def protocol_rows(request, stable_id: str, extension: str):
    """The protocol's result rows, in the release's model evaluation matrix columns."""
    protocol = selectors.record_or_404(m.Protocol.objects.all(), stable_id)
    rows = exports.protocol_matrix_rows(protocol)
    if extension == "json":
        response = JsonResponse(
            {
                "protocol_id": protocol.stable_id,
                "columns": exports.MATRIX_FIELDNAMES,
                "rows": exports.rows_as_json(rows),
            }
        )
    else:
        response = HttpResponse(exports.rows_as_csv(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{stable_id}-results.{extension}"'
    return response


@require_safe
def search_page(request):
    """The search page (records.search): `q`, `type` (one record type) and `page`, from the page
    cache (records.page_cache: the same address and catalogue version, the same page) or searched.
    A search with a query counts against settings.SEARCHES_PER_IP per SEARCHES_WINDOW_SECONDS for a
    reader who is not staff: past it 429 with Retry-After (a search reads every match of its words)."""
    query = request.GET.get("q", "")[: search.MAX_QUERY_LENGTH * 4]
    if query.strip():
        refused = page_cache.over_search_limit(request)
        if refused is not None:
            return refused

    def context() -> dict[str, object]:
        results = search.search(
            query=query, record_type=request.GET.get("type", ""), page=request.GET.get("page", "")[:20]
        )
        return {"results": results, "query": results.query}

    return page_cache.cached_page(request, template="records/search.html", context=context)


@require_safe
def evaluation_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    def context() -> tuple[m.Evaluation, dict[str, object]]:
        evaluation = selectors.record_or_404(
            selectors.evaluations_queryset().prefetch_related("repeated_by"), stable_id
        )
        return evaluation, {**parts.release(request), "evaluation": evaluation, "protocol": evaluation.protocol}

    return _record_page(
        request,
        template="records/evaluation_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.Evaluation.objects.all(), stable_id),
        parts=parts,
        live=parts.job,  # a job's status is not a catalogue change
    )


@require_safe
def configuration_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    def context() -> tuple[m.Configuration, dict[str, object]]:
        page = identity_pages.configuration_page(stable_id=stable_id, params=request.GET)
        return page.configuration, {"configuration": page.configuration, "page": page}

    return _record_page(
        request,
        template="records/configuration_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.Configuration.objects.all(), stable_id),
        parts=parts,
    )


@require_safe
def dataset_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    """A dataset's page; for a task that protocols score, the task page: its ranked tables across
    protocols, their charts and timelines and whether independent measurements agree
    (records.identity_pages), each long list a page at a time (`?table=<key>&page=<n>`)."""

    def context() -> tuple[m.Dataset, dict[str, object]]:
        page = identity_pages.task_page(stable_id=stable_id, params=request.GET)
        return page.dataset, {"dataset": page.dataset, "task": page}

    return _record_page(
        request,
        template="records/dataset_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.Dataset.objects.all(), stable_id),
        parts=parts,
    )


def _without_correction(parts: PageParts) -> PageParts:
    """The parts of a page whose record the corrections app does not take suggestions for (models and
    works: corrections.selectors.MODELS names neither)."""
    return replace(parts, correction=_no_part)


@require_safe
def model_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    """A model's page: every task it was measured on, across papers and protocols, with who measured,
    its rank within each protocol's comparison and whether the measurements agree; `?task=&metric=`
    shows one task's every measurement (records.model_page)."""

    def context() -> tuple[m.GenomicModel, dict[str, object]]:
        page = model_page.model_page(stable_id=stable_id, params=request.GET)
        return page.model, {"model": page.model, "page": page}

    return _record_page(
        request,
        template="records/model_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.GenomicModel.objects.all(), stable_id),
        parts=_without_correction(parts),
    )


@require_safe
def work_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    """A work's page: its versions (sources), the evaluations each reports and the models it introduced."""

    def context() -> tuple[m.Work, dict[str, object]]:
        page = identity_pages.work_page(stable_id=stable_id, params=request.GET)
        return page.work, {"work": page.work, "page": page}

    return _record_page(
        request,
        template="records/work_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.Work.objects.all(), stable_id),
        parts=_without_correction(parts),
    )


@require_safe
def source_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    def context() -> tuple[m.Source, dict[str, object]]:
        page = identity_pages.source_page(stable_id=stable_id, params=request.GET)
        return page.source, {"source": page.source, "page": page}

    return _record_page(
        request,
        template="records/source_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.Source.objects.all(), stable_id),
        parts=parts,
    )


@require_safe
def decision_detail(request, stable_id: str, parts: PageParts = NO_PARTS):
    def context() -> tuple[m.Decision, dict[str, object]]:
        decision = selectors.record_or_404(m.Decision.objects.prefetch_related("protocols"), stable_id)
        return decision, {"decision": decision}

    return _record_page(
        request,
        template="records/decision_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(m.Decision.objects.all(), stable_id),
        parts=parts,
    )


@require_safe
def coverage(request, parts: PageParts = NO_PARTS):
    """The coverage matrix, one page of rows and columns (records.coverage_matrix); an unknown filter
    is answered 400 with the form and the reason."""
    filters = coverage_report.Filters.from_params(request.GET)

    def page_context() -> dict[str, object]:
        matrix = coverage_matrix.coverage_matrix(
            filters=filters,
            page=request.GET.get(coverage_matrix.ROWS_PARAM),
            column_page=request.GET.get(coverage_matrix.COLUMNS_PARAM),
            show_empty=request.GET.get(coverage_matrix.EMPTY_PARAM) == coverage_matrix.SHOW,
            reviewed_recipes=parts.reviewed_recipes,
        )
        return {**parts.release(request), "matrix": matrix, "filters": filters, "choices": matrix.choices}

    try:
        return page_cache.cached_page(request, template="records/coverage.html", context=page_context)
    except Invalid as refused:
        context = {"refused": refused, "filters": filters, "choices": coverage_report.filter_choices()}
        return render(request, "records/coverage.html", context, status=refused.status)


@require_safe
def coverage_csv(request, parts: PageParts = NO_PARTS):
    """The coverage as CSV (records.coverage.coverage_csv: one row per protocol and configuration with
    evaluations, one per protocol with none), streamed; an unknown filter is answered 400."""
    filters = coverage_report.Filters.from_params(request.GET)
    try:
        rows = coverage_report.coverage_csv(filters=filters, reviewed_recipes=parts.reviewed_recipes)
    except Invalid as refused:
        return HttpResponse(refused.message, status=refused.status, content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(
        exports.csv_lines(rows, fieldnames=coverage_report.CSV_COLUMNS), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="coverage.csv"'
    return response
