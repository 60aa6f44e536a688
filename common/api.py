"""What every endpoint of the REST API shares: pagination, conditional GET, errors, the release header."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qs, urlencode, urlsplit

from django import forms
from django.core import signing
from django.core.cache import caches
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import SimpleTemplateResponse
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.utils.http import http_date
from django_filters import rest_framework as filters
from drf_spectacular.drainage import set_override
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.mixins import ListModelMixin
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.permissions import SAFE_METHODS, DjangoModelPermissionsOrAnonReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import exception_handler as drf_exception_handler

from common.licences import data_licence
from common.versions import code_fingerprint, request_version

if TYPE_CHECKING:  # what the mixin is mixed into, for the type checker
    from rest_framework.views import APIView as _APIViewBase
else:
    _APIViewBase = object

#: The cache alias (settings.CACHES) of rendered API answers: Redis in production, local memory embedded.
RESPONSE_CACHE = "responses"


def _cursor_signer() -> signing.Signer:
    return signing.Signer(salt="common.api.cursor", algorithm="sha256")


class StableCursorPagination(CursorPagination):
    """Cursor pagination: constant cost per page (no COUNT, no OFFSET), newest records first.

    The position is the creation time, which never changes, so a record edited during a crawl
    keeps its place instead of jumping ahead of the cursor and being missed."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    ordering = ("-created_at", "-id")

    def get_page_size(self, request: Request) -> int:
        """The asked page size, capped at `max_page_size`; anything but a whole number from 1 is a 400
        (DRF would quietly answer a default page to `page_size=null` or `page_size=-3`)."""
        asked = request.query_params.getlist(self.page_size_query_param)
        if not asked:
            return self.page_size
        if not all(value.isascii() and value.isdigit() and value.strip("0") for value in asked):
            raise ValidationError({self.page_size_query_param: "a whole number from 1 (pages hold at most 200 rows)"})
        last = asked[-1].lstrip("0")
        return self.max_page_size if len(last) > 3 else min(int(last), self.max_page_size)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["minimum"] = 1
            if parameter["name"] == self.cursor_query_param:
                parameter["description"] = "A page's `next_cursor` or `previous_cursor`, as given."
        return parameters

    def get_paginated_response(self, data: Any) -> Response:
        """A page: its rows, the links to the pages beside it, and their cursors alone (`next_cursor`,
        `previous_cursor`: what a generated client passes back as `cursor`, with the same filters)."""
        next_link, previous_link = self.get_next_link(), self.get_previous_link()
        return Response(
            {
                "next": next_link,
                "previous": previous_link,
                "next_cursor": self._cursor_of(next_link),
                "previous_cursor": self._cursor_of(previous_link),
                "results": data,
            }
        )

    def _cursor_of(self, link: str | None) -> str | None:
        if link is None:
            return None
        return parse_qs(urlsplit(link).query).get(self.cursor_query_param, [None])[-1]

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        link = {"type": "string", "nullable": True, "format": "uri"}
        cursor = {"type": "string", "nullable": True}
        return {
            "type": "object",
            "required": ["next", "previous", "next_cursor", "previous_cursor", "results"],
            "properties": {
                "next": {**link, "description": "The next page's URL, with every parameter; null on the last page."},
                "previous": {**link, "description": "The previous page's URL; null on the first page."},
                "next_cursor": {
                    **cursor,
                    "description": "The next page's cursor: send it as `cursor` with the same filters; null on the last page.",
                },
                "previous_cursor": {
                    **cursor,
                    "description": "The previous page's cursor, to send as `cursor`; null on the first page.",
                },
                "results": schema,
            },
        }

    # A cursor is the portal's own: signed (with the list's ordering), so one it did not issue, or
    # one issued for another ordering, is a 400 naming `cursor`, never a position fed to a query.
    invalid_cursor = "invalid cursor: use the next and previous links as given (or start again without a cursor)"

    def encode_cursor(self, cursor: Cursor) -> str:
        payload = {"o": cursor.offset, "r": int(cursor.reverse), "p": cursor.position, "k": list(self.ordering)}
        encoded = _cursor_signer().sign_object(payload, compress=True)
        return replace_query_param(self.base_url or "", self.cursor_query_param, encoded)

    def decode_cursor(self, request: Request) -> Cursor | None:
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is None:
            return None
        try:
            payload = _cursor_signer().unsign_object(encoded)
            offset, reverse, position, ordering = payload["o"], payload["r"], payload["p"], payload["k"]
        except (signing.BadSignature, ValueError, TypeError, KeyError, UnicodeError, zlib.error):
            raise ValidationError({self.cursor_query_param: self.invalid_cursor}) from None
        valid = (
            type(offset) is int
            and 0 <= offset <= self.offset_cutoff
            and reverse in (0, 1)
            and (position is None or isinstance(position, str))
            and ordering == list(self.ordering)
        )
        if not valid:
            raise ValidationError({self.cursor_query_param: self.invalid_cursor})
        return Cursor(offset=offset, reverse=bool(reverse), position=position)


class LengthAsSentCharField(serializers.CharField):
    """Text no longer than the schema's maxLength as sent: DRF trims first, so a long run of spaces
    (or a value padded with them) passed its length check, and only spaces became ""."""

    def run_validation(self, data: Any = serializers.empty) -> Any:
        max_length = getattr(self, "max_length", None)
        if isinstance(data, str) and max_length is not None and len(data) > max_length:
            self.fail("max_length", max_length=max_length)
        return super().run_validation(data)


class StrictCharField(LengthAsSentCharField):
    """Text as the schema says: a JSON string. DRF's text fields take a number and store its text
    (`"title": 5` became "5"); here a number, a boolean or an object is a 400 naming the field."""

    default_error_messages = {"not_a_string": "Not a valid string: send text in quotes."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


StrictSlugField = type("StrictSlugField", (StrictCharField, serializers.SlugField), {})
StrictURLField = type("StrictURLField", (StrictCharField, serializers.URLField), {})
StrictEmailField = type("StrictEmailField", (StrictCharField, serializers.EmailField), {})


#: How a boolean query parameter may be spelt: what clients send (Python `requests` writes True as
#: "True", most others "true", forms and shells "1"). Anything else is a 400 naming the parameter.
QUERY_BOOLEANS: dict[str, bool] = {"true": True, "false": False, "True": True, "False": False, "1": True, "0": False}
QUERY_BOOLEAN_SPELLINGS = "true or false (also True/False, 1/0)"


def query_boolean(value: str) -> bool | None:
    """A boolean query parameter's value as sent, read; None when it is no spelling of one."""
    return QUERY_BOOLEANS.get(value) if isinstance(value, str) else None


#: A boolean query parameter's schema in the OpenAPI document: the spellings it takes, as an enum.
QUERY_BOOLEAN_TYPE: dict[str, Any] = {"type": "string", "enum": list(QUERY_BOOLEANS)}


def query_boolean_description(description: str = "") -> str:
    return f"{description} Takes {QUERY_BOOLEAN_SPELLINGS}.".strip()


class StrictBooleanField(forms.NullBooleanField):
    """A spelling of true or false (QUERY_BOOLEANS; an empty value: no filter); anything else is
    refused, not read as "no filter"."""

    widget = forms.TextInput

    def to_python(self, value: Any) -> bool | None:  # type: ignore[override]  # Null: None is "no filter"
        if value in (None, ""):
            return None
        read = query_boolean(value)
        if read is None:
            raise forms.ValidationError(f"use {QUERY_BOOLEAN_SPELLINGS}")
        return read

    def validate(self, value: Any) -> None:
        pass


class StrictBooleanFilter(filters.BooleanFilter):
    """A list filter's boolean, the one every list uses: a spelling of true or false (QUERY_BOOLEANS),
    or empty (no filter); `null`, `yes` are a 400 (django-filter's own reads anything else as "no
    filter"). The schema lists the spellings as the parameter's enum."""

    field_class = StrictBooleanField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["widget"] = forms.TextInput  # the value as sent, for the field to judge
        super().__init__(*args, **kwargs)
        described = query_boolean_description(str(kwargs.get("help_text") or ""))
        set_override(self, "field", {**QUERY_BOOLEAN_TYPE, "description": described})


def record_filter(
    model: type[Model],
    noun: str,
    *,
    help_text: str,
    field_name: str | None = None,
    method: str | Callable[..., QuerySet] | None = None,
) -> filters.ModelChoiceFilter:
    """A list filter by a record's stable id, the one every id-valued filter is. An id that names no
    record is a 400 naming the filter (a misspelt id is not an empty list); checking it is the one
    query the filter adds."""
    return filters.ModelChoiceFilter(
        queryset=model._default_manager.all(),
        to_field_name="stable_id",
        field_name=field_name,
        method=method,
        help_text=help_text + " An id that names no record is refused (400).",
        error_messages={"invalid_choice": f"no {noun} has the stable id %(value)s"},
    )


class ModelPermissionsOrReadOnly(DjangoModelPermissionsOrAnonReadOnly):
    """DRF's model permissions, with anyone reading: decided for a read without building the view's
    queryset, since the model permissions ask for none on GET, HEAD and OPTIONS."""

    def has_permission(self, request: Request, view: Any) -> bool:
        return request.method in SAFE_METHODS or super().has_permission(request, view)


class KnownParametersMixin(_APIViewBase):
    """Every endpoint refuses a query parameter it does not take: a 400 naming it and listing the ones
    it takes, so a misspelt filter (`?protocol=` for `?protocol_id=`) is never read as "no filter".

    What an endpoint takes follows from how it answers: a list (a viewset's `list`, an extra action
    with its own pagination, a plain view that is a ListModelMixin) takes its filter set's filters,
    its other filter backends' parameters (`ordering`) and its paginator's (`cursor`, `page_size`);
    every endpoint takes `format` (DRF's) and what it reads itself, named in `query_parameters`.

    Being on every endpoint, it also puts the data licence's `Link` header on every answer."""

    #: Query parameters the view reads itself (not through a filter backend or its paginator).
    query_parameters: frozenset[str] = frozenset()

    def known_parameters(self) -> set[str]:
        known = {api_settings.URL_FORMAT_OVERRIDE or "format", *self.query_parameters}
        if not self.answers_a_list():
            return known
        view = cast(Any, self)
        for backend in getattr(view, "filter_backends", ()):
            if issubclass(backend, filters.DjangoFilterBackend):
                filterset_class = backend().get_filterset_class(view, view.get_queryset())
                known.update(filterset_class.base_filters if filterset_class is not None else ())
            else:
                known.update(parameter["name"] for parameter in backend().get_schema_operation_parameters(view))
        paginator = getattr(view, "paginator", None)
        if paginator is not None:
            known.update(parameter["name"] for parameter in paginator.get_schema_operation_parameters(view))
        return known

    def answers_a_list(self) -> bool:
        """Whether this request (a GET, or the HEAD or OPTIONS of one) is answered with a filtered, paged list."""
        request = self.request
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            return False
        action_map = getattr(self, "action_map", None)
        if action_map is None:  # a plain view, not a viewset's route
            return isinstance(self, ListModelMixin)
        action = action_map.get("get")
        if action == "list":
            return True
        extra = getattr(getattr(self, action or "", None), "kwargs", {})  # an @action's own settings
        return extra.get("pagination_class") is not None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        known = self.known_parameters()
        unknown = sorted(set(request.query_params) - known)
        if unknown:
            raise self.unknown_parameters_refused(unknown, sorted(known))

    def unknown_parameters_refused(self, unknown: list[str], known: list[str]) -> Exception:
        """The 400 of a request with parameters the endpoint does not take: each named, with the ones it takes."""
        takes = f"unknown query parameter; this endpoint takes {', '.join(known)}"
        return ValidationError({name: takes for name in unknown})

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        return licence_linked(super().finalize_response(request, response, *args, **kwargs))


def licence_linked(answer: Response) -> Response:
    """The answer, naming the data's licence as every answer of the API does: `Link: <its URL>; rel="license"`."""
    licence = f'<{data_licence().url}>; rel="license"'
    answer["Link"] = f"{answer['Link']}, {licence}" if answer.has_header("Link") else licence
    return answer


class ConditionalGetMixin(_APIViewBase):
    """ETag (a hash of the body) and Last-Modified on GET responses; 304 when the client's copy is current.

    Views set `self.last_modified` (a datetime) while building the response: for a record, the
    newest update of it and its nested rows; for a list, the newest update of any row the list
    could show, since a row that left the filter changes the list without being on it.

    A view whose action is in `cached_actions` answers those GETs from the rendered-response cache
    (`cached_get`): the bytes, their ETag and Last-Modified, keyed by the catalogue version and
    everything else the bytes depend on (`response_cache_key`).
    """

    last_modified: datetime | None = None
    cached_actions: frozenset[str] = frozenset()
    _cache_key: str | None = None
    _cache_hit: CachedResponse | None = None

    def cached_get(self, request: Request, build: Callable[[], Response]) -> Response:
        """`build()`'s answer, or the bytes it gave for the same request at the current catalogue version."""
        key = self.response_cache_key(request)
        if key is None:
            return build()
        hit = caches[RESPONSE_CACHE].get(key)
        if isinstance(hit, CachedResponse):
            self._cache_hit, self.last_modified = hit, hit.last_modified
            return cast(Response, HttpResponse(hit.content, content_type=hit.content_type))
        self._cache_key = key
        return build()

    def response_cache_key(self, request: Request) -> str | None:
        """What the bytes of a GET depend on, or None when it is not cached.

        Only JSON answers are cached (the browsable API shows forms and a CSRF token per user);
        their bytes are the same for every user (reads are public and serializers show every
        field to all), so the user is not part of the key. The absolute URL is (pagination links
        name scheme and host), with the query normalised: parameters sorted by name, the values of
        one name kept in order (a filter takes the last), as the links DRF builds are. So are the
        accepted media type (`; indent=2` changes the bytes), the current time zone (datetimes are
        written in it), the catalogue version and the deployed code."""
        if request.method not in ("GET", "HEAD") or getattr(self, "action", None) not in self.cached_actions:
            return None
        renderer = getattr(request, "accepted_renderer", None)
        if renderer is None or renderer.format != "json":
            return None
        query = sorted(request.query_params.lists(), key=lambda item: item[0])
        url = request.build_absolute_uri(request.path) + "?" + urlencode(query, doseq=True)
        zone = timezone.get_current_timezone_name()  # datetimes are written in the current time zone
        # The version this answer stands for; portal's X-Portal-Release header is cached by it too.
        version = request_version(request._request)
        parts = (version, code_fingerprint(), zone, str(request.accepted_media_type), url)
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        # A cached answer is a plain HttpResponse (its bytes), and a 304 Django's HttpResponseNotModified:
        # DRF's dispatch returns either as it returns a Response.
        answer: HttpResponse = super().finalize_response(request, response, *args, **kwargs)
        if request.method not in ("GET", "HEAD") or answer.status_code != status.HTTP_200_OK:
            return cast(Response, answer)
        hit = self._cache_hit
        if hit is None:
            if isinstance(answer, SimpleTemplateResponse):
                answer.render()
            etag = '"' + hashlib.sha256(answer.content).hexdigest()[:40] + '"'
            if self._cache_key is not None:
                cached = CachedResponse(answer.content, answer["Content-Type"], etag, self.last_modified)
                caches[RESPONSE_CACHE].set(self._cache_key, cached)
        else:
            etag = hit.etag
        answer["ETag"] = etag
        if self.last_modified is not None:
            answer["Last-Modified"] = http_date(self.last_modified.timestamp())
        answer.setdefault("Cache-Control", "no-cache")  # revalidate every time: cheap with ETags
        conditional = get_conditional_response(
            request,
            etag=etag,
            last_modified=int(self.last_modified.timestamp()) if self.last_modified else None,
            response=answer,
        )
        return cast(Response, conditional)


@dataclass(frozen=True)
class CachedResponse:
    """A rendered GET answer as the rendered-response cache keeps it."""

    content: bytes
    content_type: str
    etag: str
    last_modified: datetime | None


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
