"""`POST /api/v1/table-drafts/`: a pasted table in, its draft import document out (the same answer
as `manage.py draft_table`), with every problem pinned to its cell, row or column. It writes
nothing; the document is then sent to `POST /api/v1/imports/` as any other."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import KnownParametersMixin
from records.api import CanImport
from records.tables import DraftRequestInvalid, request_read, table_draft

EXAMPLE = {
    "format": "benchmark-evidence-table-draft",
    "version": 1,
    "source": "nguyen-2023-hyenadna",
    "table": "Table 4.1",
    "text": "Dataset\tCNN\tHyenaDNA\nMouse Enhancers\t69.0\t85.1\n",
    "layout": {"format": "auto", "header_rows": 1, "models_in": "columns"},
    "measured_by": "authors",
    "metric": {"name": "Top-1 accuracy", "short_name": "accuracy", "unit": "%", "direction": "higher"},
    "columns": {"CNN": {"model": "genomic-benchmarks-cnn"}},
}


class TableDraftView(KnownParametersMixin, APIView):
    """Draft an import document from a pasted table (docs/reference/table-drafts.md)."""

    permission_classes = [CanImport]

    @extend_schema(
        summary="Draft an import document from a pasted table",
        request=OpenApiTypes.OBJECT,
        examples=[OpenApiExample("Two values of HyenaDNA's Table 4.1", value=EXAMPLE, request_only=True)],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="The draft: `document` (an import document), `problems` (each with where: cell, row, column or table), the grid's `columns` and `rows` with their matches, and the dry run's `report` when it passed.",
            ),
            400: OpenApiResponse(
                OpenApiTypes.OBJECT, description="The request is malformed: `errors` name each field."
            ),
        },
    )
    def post(self, request):
        try:
            draft_request = request_read(request.data)
        except DraftRequestInvalid as invalid:
            return Response(
                {"detail": f"the request is invalid; nothing was drafted: {invalid.message}", "errors": invalid.errors},
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(table_draft(request=draft_request, actor=request.user).as_dict())
