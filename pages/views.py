"""The public site's pages: home, search, coverage and the record pages. Each view validates its
input and calls one read query of the catalogue (records), and adds what the apps above it show
on the page (pages.parts: releases, recipes and jobs, the correction form), imported directly.
A protocol's downloads (its charts, its result rows) are pages.downloads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from common.errors import Invalid
from common.links import absolute_url
from pages import coverage_csv as coverage_rows
from pages import coverage_matrix, identity_pages, model_page, page_cache, parts, protocol_page, structured_data
from pages.search_page import search_ask_count, search_page_render
from records import coverage as coverage_report
from records import exports, selectors
from records.models import (
    Configuration,
    CuratedModel,
    Dataset,
    Decision,
    Evaluation,
    GenomicModel,
    Protocol,
    Source,
    Work,
)

Record = TypeVar("Record", bound=CuratedModel)


def _record_page(
    request: HttpRequest,
    *,
    template: str,
    context: Callable[[], tuple[Record, Mapping[str, object]]],
    find: Callable[[], Record],
    correctable: bool = True,
    live: Callable[[Record], Mapping[str, object]] | None = None,
) -> HttpResponse:
    """A record page from the page cache (pages.page_cache), or rendered by `context()`, which
    returns the record and the page's context; every record page names the releases that contain
    it. The correction form (on a record corrections take suggestions for) and `live`'s parts are
    made per request, for the record `context()` loaded or, on a cached page, the one `find()` loads."""
    loaded: list[Record] = []

    def full_context() -> dict[str, object]:
        record, values = context()
        loaded.append(record)
        return {**parts.membership_part(record), **values}

    def live_parts() -> dict[str, object]:
        record = loaded[0] if loaded else find()
        correction = parts.correction_part(request, record) if correctable else {}
        return {**(live(record) if live is not None else {}), **correction}

    return page_cache.cached_page(request, template=template, context=full_context, live=live_parts)


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "pages/home.html", {"catalogue": selectors.catalogue(params=request.GET)})


@require_safe
def protocol_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    def context() -> tuple[Protocol, dict[str, object]]:
        page = protocol_page.protocol_page(stable_id=stable_id, params=request.GET)
        return page.protocol, {
            **parts.release_part(downloads=True),
            **parts.recipes_part(page.protocol),
            "page": page,
            "protocol": page.protocol,
            "evidence": selectors.faceted(
                list(page.protocol.evidence_rows.all()), selectors.EVIDENCE_FACETS, request.GET
            ),
            "charts_sentence": page.charts_sentence,
            "chart_query": _chart_query(request),
            "structured_data": structured_data.protocol_dataset(protocol=page.protocol, request=request),
        }

    return _record_page(
        request,
        template="pages/protocol_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(Protocol.objects.all(), stable_id),
    )


def _chart_query(request: HttpRequest) -> str:
    """The query string that selects the same charts for download ("" or "?include=...&dataset=...")."""
    query = request.GET.copy()
    for key in list(query):
        if key not in (protocol_page.INCLUDE_PARAM, protocol_page.DATASET_PARAM):
            del query[key]
    return f"?{query.urlencode()}" if query else ""


@require_safe
def search_page(request: HttpRequest) -> HttpResponse:
    """The search page (pages.search_page): `q`, `type` (one record type) and `page`, from the page
    cache (pages.page_cache: the same address and catalogue version, the same page) or searched.
    A search with a query counts against settings.SEARCHES_PER_IP per SEARCHES_WINDOW_SECONDS for a
    reader who is not staff: past it 429 with Retry-After (a search reads every match of its words);
    and it counts one ask of its address, for the warm."""
    if request.GET.get("q", "").strip():
        refused = page_cache.over_search_limit(request)
        if refused is not None:
            return refused
        search_ask_count(request=request)
    return search_page_render(request)


@require_safe
def evaluation_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    def context() -> tuple[Evaluation, dict[str, object]]:
        evaluation = selectors.record_or_404(
            selectors.evaluations_queryset().prefetch_related("repeated_by"), stable_id
        )
        return evaluation, {**parts.release_part(), "evaluation": evaluation, "protocol": evaluation.protocol}

    return _record_page(
        request,
        template="pages/evaluation_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(Evaluation.objects.all(), stable_id),
        live=parts.job_part,  # a job's status is not a catalogue change
    )


@require_safe
def configuration_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    def context() -> tuple[Configuration, dict[str, object]]:
        page = identity_pages.configuration_page(stable_id=stable_id, params=request.GET)
        return page.configuration, {"configuration": page.configuration, "page": page}

    return _record_page(
        request,
        template="pages/configuration_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(Configuration.objects.all(), stable_id),
    )


@require_safe
def dataset_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    """A dataset's page; for a task that protocols score, the task page: its ranked tables across
    protocols, their charts and timelines and whether independent measurements agree
    (pages.identity_pages), each long list a page at a time (`?table=<key>&page=<n>`)."""

    def context() -> tuple[Dataset, dict[str, object]]:
        page = identity_pages.task_page(stable_id=stable_id, params=request.GET)
        return page.dataset, {
            "dataset": page.dataset,
            "task": page,
            "structured_data": structured_data.task_dataset(dataset=page.dataset, request=request),
        }

    return _record_page(
        request,
        template="pages/dataset_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(Dataset.objects.all(), stable_id),
    )


@require_safe
def model_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    """A model's page: every task it was measured on, across papers and protocols, with who measured,
    its rank within each protocol's comparison and whether the measurements agree; `?task=&metric=`
    shows one task's every measurement (pages.model_page). No correction form: corrections take
    no suggestions for models (corrections.selectors.MODELS)."""

    def context() -> tuple[GenomicModel, dict[str, object]]:
        page = model_page.model_page(stable_id=stable_id, params=request.GET)
        return page.model, {"model": page.model, "page": page}

    return _record_page(
        request,
        template="pages/model_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(GenomicModel.objects.all(), stable_id),
        correctable=False,
    )


@require_safe
def work_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    """A work's page: its versions (sources), the evaluations each reports and the models it
    introduced. No correction form: corrections take no suggestions for works."""

    def context() -> tuple[Work, dict[str, object]]:
        page = identity_pages.work_page(stable_id=stable_id, params=request.GET)
        return page.work, {"work": page.work, "page": page}

    return _record_page(
        request,
        template="pages/work_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(Work.objects.all(), stable_id),
        correctable=False,
    )


@require_safe
def source_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    def context() -> tuple[Source, dict[str, object]]:
        page = identity_pages.source_page(stable_id=stable_id, params=request.GET)
        return page.source, {"source": page.source, "page": page}

    return _record_page(
        request,
        template="pages/source_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(Source.objects.all(), stable_id),
    )


@require_safe
def decision_detail(request: HttpRequest, stable_id: str) -> HttpResponse:
    def context() -> tuple[Decision, dict[str, object]]:
        decision = selectors.record_or_404(Decision.objects.prefetch_related("protocols"), stable_id)
        return decision, {"decision": decision}

    return _record_page(
        request,
        template="pages/decision_detail.html",
        context=context,
        find=lambda: selectors.record_or_404(Decision.objects.all(), stable_id),
    )


@require_safe
def coverage(request: HttpRequest) -> HttpResponse:
    """The coverage matrix, one page of rows and columns (pages.coverage_matrix); an unknown filter
    is answered 400 with the form and the reason."""
    filters = coverage_report.Filters.from_params(request.GET)

    def page_context() -> dict[str, object]:
        matrix = coverage_matrix.coverage_matrix(
            filters=filters,
            page=request.GET.get(coverage_matrix.ROWS_PARAM),
            column_page=request.GET.get(coverage_matrix.COLUMNS_PARAM),
            show_empty=request.GET.get(coverage_matrix.EMPTY_PARAM) == coverage_matrix.SHOW,
        )
        return {**parts.release_part(), "matrix": matrix, "filters": filters, "choices": matrix.choices}

    try:
        return page_cache.cached_page(request, template="pages/coverage.html", context=page_context)
    except Invalid as refused:
        context = {"refused": refused, "filters": filters, "choices": coverage_report.filter_choices()}
        return render(request, "pages/coverage.html", context, status=refused.status)


@require_safe
def coverage_csv(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """The coverage as CSV (pages.coverage_csv: one row per protocol and configuration with
    evaluations, one per protocol with none), streamed; an unknown filter is answered 400."""
    filters = coverage_report.Filters.from_params(request.GET)
    try:
        rows = coverage_rows.coverage_csv(filters=filters)
    except Invalid as refused:
        return HttpResponse(refused.message, status=refused.status, content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(
        exports.csv_lines(rows, fieldnames=coverage_rows.CSV_COLUMNS), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="coverage.csv"'
    return response


# What crawlers are asked to leave alone: the curation desk, the correction forms and their private
# status pages, the API's write endpoints (corrections, imports, benchmark jobs) and the metrics.
# Everything else is public: the record pages, search, coverage, releases and the API's reads.
ROBOTS_DISALLOWED = (
    "/admin/",
    "/corrections/",
    "/api/v1/corrections/",
    "/api/v1/imports/",
    "/api/v1/benchmark-jobs/",
    "/metrics",
)


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    """/robots.txt: every public page may be crawled but ROBOTS_DISALLOWED; the sitemap is named by
    its absolute address (the request's host)."""
    lines = [
        "User-agent: *",
        *(f"Disallow: {path}" for path in ROBOTS_DISALLOWED),
        "Allow: /",
        "",
        f"Sitemap: {absolute_url(reverse('sitemap'), request=request)}",
    ]
    response = HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "public, max-age=3600"
    return response
