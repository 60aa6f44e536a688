"""A protocol's downloads: its charts (SVG, PNG) and its result rows (CSV, JSON). Each view validates
its input and calls one read query of the catalogue (the pages themselves: pages.views)."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from pages import chart_output, page_cache, protocol_page
from records import exports, selectors
from records.models import Protocol


@require_safe
def protocol_chart(request, stable_id: str, extension: str):
    """The protocol page's charts as one SVG or PNG download, from the chart cache (pages.page_cache)
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
    protocol = selectors.record_or_404(Protocol.objects.all(), stable_id)
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
