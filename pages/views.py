"""The public site's pages: home, search, coverage and robots.txt. Each view validates its input and
calls one read query of the catalogue (records), and adds what the apps above it show on the page
(pages.parts), imported directly. The record pages are pages.record_pages; a protocol's downloads
(its charts, its result rows) pages.downloads."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from common.errors import Invalid
from common.links import absolute_url
from pages import coverage_csv as coverage_rows
from pages import coverage_matrix, page_cache, parts
from pages.search_page import search_ask_count, search_page_render
from records import coverage as coverage_report
from records import exports, selectors


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "pages/home.html", {"catalogue": selectors.catalogue(params=request.GET)})


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
