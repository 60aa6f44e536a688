"""Rendered record pages and the coverage matrix, cached under the catalogue version.

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
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

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
