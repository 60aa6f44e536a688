"""Rendered record pages, the coverage matrix and the comparison charts, cached under the catalogue version.

A page is the same bytes for every reader as long as the catalogue is unchanged, except for the
parts that are made per request: the correction form (its CSRF token and signed time stamp) and an
evaluation's benchmark job line (a job's status is not a catalogue change). Those are rendered into
the cached page as markers and filled in on every request, so a token is never cached nor shared.

The key holds everything else the bytes depend on: the page's path and its query string exactly as
sent (filter links repeat it in its own order), the scheme and host (the canonical link), the
settings pages read, the code that renders them (a fingerprint of the deployed files, so a deploy
never serves the previous code's pages from a shared cache) and the catalogue version
(`common.versions`), which every write that a page shows bumps in its own transaction: a new
version is a new key, so a cached page is never stale, and old keys expire.

A chart (`cached_chart`, SVG or PNG) is keyed the same way by its protocol, its format and the
choices it reads (excluded rows drawn or not, one dataset), never by the rest of the query string,
so made-up parameters cannot force a render. Drawing one is the site's costliest answer (the
270-result GUE protocol's PNG takes seconds of CPU), so a render for a reader who is not staff
counts against settings.CHART_RENDERS_PER_IP per CHART_RENDERS_WINDOW_SECONDS per client address
(429 with Retry-After past it), and drawing a PNG takes one of settings.CHART_RENDERS_AT_ONCE
slots shared by every process (503 with Retry-After when all are taken, at once and not counted, so
a burst of renders from many addresses never holds the server's threads). A cached chart is never
limited; staff are neither counted nor bounded. A search (`over_search_limit`) is counted the same
way, per SEARCHES_PER_IP per SEARCHES_WINDOW_SECONDS.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from common.ratelimit import Busy, Limit, RateLimited, client_ip, hit, ip_hash, slot
from common.versions import code_fingerprint, request_version

# Context entries rendered per request, never cached (see the module's docstring).
LIVE_PARTS = ("correction_form", "benchmark_job")
# Old versions' pages are never read again; an hour bounds what they hold in a local-memory cache
# (Redis in production evicts by its own policy too).
TIMEOUT = 3600


def _marker(name: str) -> SafeString:
    # A comment no record text can produce: every record field is escaped ("<" becomes "&lt;").
    return mark_safe(f"<!--live part {name}-->")


def page_key(request: HttpRequest) -> str:
    version = request_version(request)
    where = (
        f"{request.scheme}://{request.get_host()}{request.path}?{request.META.get('QUERY_STRING', '')}"
        f" {settings.PORTAL_SITE_NAME!r} {settings.PUBLIC_REVIEWER_NAMES!r} {settings.TIME_ZONE!r} {code_fingerprint()}"
    )
    return f"page:{version}:{hashlib.sha256(where.encode()).hexdigest()}"


def cached_page(
    request: HttpRequest,
    *,
    template: str,
    context: Callable[[], Mapping[str, object]],
    live: Callable[[], Mapping[str, object]] | None = None,
) -> HttpResponse:
    """The page rendered from `template` with `context()`, or the cached rendering of it; `live()`
    (called on every request) gives the LIVE_PARTS entries the page holds."""
    key = page_key(request)
    html = cache.get(key)
    if html is None:
        markers = {name: _marker(name) for name in LIVE_PARTS}
        html = render_to_string(template, {**context(), **markers}, request)
        cache.set(key, html, TIMEOUT)
    parts = dict(live()) if live is not None else {}
    for name in LIVE_PARTS:
        html = html.replace(_marker(name), str(parts.get(name, "")))
    return HttpResponse(html)


CHART_TYPES = {"svg": "image/svg+xml; charset=utf-8", "png": "image/png"}
RENDER_LIMIT = "chart-render"
RENDER_SLOTS = "chart-png"
# Longer than a worker may run a request (gunicorn's 30 s timeout): a slot whose holder was killed frees itself.
SLOT_HOLD_SECONDS = 120


def chart_key(request: HttpRequest, *, stable_id: str, kind: str, choices: Mapping[str, str]) -> str:
    version = request_version(request)
    what = f"{stable_id} {kind} {sorted(choices.items())!r} {code_fingerprint()}"
    return f"chart:{version}:{hashlib.sha256(what.encode()).hexdigest()}"


def _refusal(message: str, *, status: int, retry_after: int) -> HttpResponse:
    response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry_after)
    return response


def _is_staff(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_staff)


def _over_render_limit(request: HttpRequest) -> HttpResponse | None:
    """Count one render for the client's address; the 429 once its window's count is exceeded."""
    limit = Limit(RENDER_LIMIT, settings.CHART_RENDERS_PER_IP, settings.CHART_RENDERS_WINDOW_SECONDS)
    try:
        hit(limit=limit, key=ip_hash(client_ip(request)))
    except RateLimited as limited:
        return _refusal(
            f"Too many new chart renderings from your address; try again in {limited.retry_after} seconds. "
            "Charts drawn already are served as usual.",
            status=429,
            retry_after=limited.retry_after,
        )
    return None


SEARCH_LIMIT = "search"


def over_search_limit(request: HttpRequest) -> HttpResponse | None:
    """A search for a reader who is not staff counts against settings.SEARCHES_PER_IP per
    SEARCHES_WINDOW_SECONDS per client address, served from the page cache or not;
    the 429 once the window's count is exceeded, else None."""
    if _is_staff(request):
        return None
    limit = Limit(SEARCH_LIMIT, settings.SEARCHES_PER_IP, settings.SEARCHES_WINDOW_SECONDS)
    try:
        hit(limit=limit, key=ip_hash(client_ip(request)))
    except RateLimited as limited:
        return _refusal(
            f"Too many searches from your address; try again in {limited.retry_after} seconds.",
            status=429,
            retry_after=limited.retry_after,
        )
    return None


def _draw(
    request: HttpRequest,
    *,
    key: str,
    stable_id: str,
    kind: str,
    choices: Mapping[str, str],
    svg: Callable[[], str],
    png: Callable[[str], bytes],
) -> bytes:
    """Draw the chart and cache it under `key`; a PNG is rasterised from the cached SVG of the same charts if any."""
    svg_key = key if kind == "svg" else chart_key(request, stable_id=stable_id, kind="svg", choices=choices)
    body: bytes | None = None if kind == "svg" else cache.get(svg_key)
    if body is None:
        body = svg().encode()
        cache.set(svg_key, body, TIMEOUT)
    if kind == "png":
        body = png(body.decode())
        cache.set(key, body, TIMEOUT)
    return body


def cached_chart(
    request: HttpRequest,
    *,
    stable_id: str,
    kind: str,
    choices: Mapping[str, str],
    svg: Callable[[], str],
    png: Callable[[str], bytes],
) -> HttpResponse:
    """A protocol's charts as `kind` ("svg" or "png"), from the cache or drawn: `svg()` draws the
    SVG, `png(svg_text)` rasterises it (the cached SVG of the same charts when there is one).
    `choices` are the query's values the drawing reads. The limits: see the module's docstring."""
    key = chart_key(request, stable_id=stable_id, kind=kind, choices=choices)
    body = cache.get(key)
    if body is None:
        staff = _is_staff(request)
        # A PNG takes its slot before it is counted: a reader told the server is busy has not used a render.
        bound: AbstractContextManager[None] = (
            nullcontext()
            if staff or kind == "svg"
            else slot(name=RENDER_SLOTS, count=settings.CHART_RENDERS_AT_ONCE, hold_seconds=SLOT_HOLD_SECONDS)
        )
        try:
            with bound:
                refused = None if staff else _over_render_limit(request)
                if refused is not None:
                    return refused
                body = _draw(request, key=key, stable_id=stable_id, kind=kind, choices=choices, svg=svg, png=png)
        except Busy as busy:
            return _refusal(
                f"The server is rendering another chart; try again in {busy.retry_after} seconds.",
                status=503,
                retry_after=busy.retry_after,
            )
    response = HttpResponse(body, content_type=CHART_TYPES[kind])
    response["Content-Disposition"] = f'attachment; filename="{stable_id}-comparison.{kind}"'
    return response
