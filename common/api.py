"""What every endpoint of the REST API shares: pagination, conditional GET, errors, the release header."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from django.http import HttpRequest, JsonResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

if TYPE_CHECKING:  # what the mixin is mixed into, for the type checker
    from rest_framework.views import APIView as _APIViewBase
else:
    _APIViewBase = object


class StableCursorPagination(CursorPagination):
    """Cursor pagination: constant cost per page (no COUNT, no OFFSET), newest records first.

    The position is the creation time, which never changes, so a record edited during a crawl
    keeps its place instead of jumping ahead of the cursor and being missed."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    ordering = ("-created_at", "-id")

    def decode_cursor(self, request: Request) -> Cursor | None:
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise ValidationError(
                {self.cursor_query_param: "invalid cursor: use the next and previous links as given"}
            ) from None


class ConditionalGetMixin(_APIViewBase):
    """ETag (a hash of the body) and Last-Modified on GET responses; 304 when the client's copy is current.

    Views set `self.last_modified` (a datetime) while building the response: for a record, the
    newest update of it and its nested rows; for a list, the newest update of any row the list
    could show, since a row that left the filter changes the list without being on it.
    """

    last_modified: datetime | None = None

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        if request.method not in ("GET", "HEAD") or response.status_code != status.HTTP_200_OK:
            return response
        response.render()
        etag = '"' + hashlib.sha256(response.content).hexdigest()[:40] + '"'
        response["ETag"] = etag
        if self.last_modified is not None:
            response["Last-Modified"] = http_date(self.last_modified.timestamp())
        response.setdefault("Cache-Control", "no-cache")  # revalidate every time: cheap with ETags
        conditional = get_conditional_response(
            request,
            etag=etag,
            last_modified=int(self.last_modified.timestamp()) if self.last_modified else None,
            response=response,
        )
        # A 304 is Django's HttpResponseNotModified, which DRF's dispatch returns as it returns a Response.
        return cast(Response, conditional)


def newest(*moments: datetime | None) -> datetime | None:
    present = [moment for moment in moments if moment is not None]
    return max(present) if present else None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with every error body a JSON object (a `detail` reason and/or named fields)."""
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, list):
        response.data = {"detail": response.data}
    return response


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse({"detail": f"Nothing at {request.path}."}, status=404)


def json_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"detail": "Internal error; it has been logged."}, status=500)
