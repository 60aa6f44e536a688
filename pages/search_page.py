"""The search page, rendered for a reader (pages.views.search_page) and ahead of readers, by the warm.

A search that matches a quarter of the catalogue reads every match to count and rank it: a few
hundred milliseconds at 300,000 results, which no index removes (docs/development/performance.md).
The page is the same for every reader while the catalogue stays as it is (pages.page_cache), so
only the first reader after a change pays. The warm takes that cost off readers for the searches
they ask most:

- every search asked counts one for its address (scheme, host, path and query string: the page
  cache's key but for the version) in the shared cache, over a window of ASKED_SECONDS from the
  address's first ask; a roster lists the addresses counted (at most ROSTER_MAX: when full, the
  next warm run keeps the most asked half);
- beat sends `pages.tasks.search_pages_warm` every SEARCH_WARM_INTERVAL_SECONDS; when the catalogue
  version has changed since the last complete warm, it renders the SEARCH_WARM_TOP most asked
  addresses that the page cache lacks under the new version, exactly as the view would, and stops
  after SEARCH_WARM_BUDGET_SECONDS (the next run goes on where it stopped).

It needs a cache that the web processes and the worker share (Redis). The embedded default's
cache is each process's own, so there SEARCH_WARM_TOP is 0: nothing is counted or warmed.
"""

from __future__ import annotations

import hashlib
import io
import time
from dataclasses import asdict, dataclass

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse

from common.versions import version_key
from pages import page_cache
from records import search

ROSTER_KEY = "search-asked"  # {digest: address} of the addresses asked in their window
WARMED_KEY = "search-warmed-version"  # the catalogue version the last complete warm was for
RUNNING_KEY = "search-warm-running"
ASKED_SECONDS = 24 * 3600
ROSTER_MAX = 500  # when full, each warm run keeps the most asked half
ADDRESS_MAX = 1000  # characters of a query string counted (the search reads at most a few hundred)
# An address asked this many times is put back on the roster if a concurrent write lost it.
ROSTER_RECHECK_AT = (2, 10, 100, 1000)

Address = tuple[str, str, str, str]  # scheme, host, path, query string


def search_page_render(request: HttpRequest) -> HttpResponse:
    """The search page for `request` (`q`, `type`, `page`), from the page cache or searched."""
    query = request.GET.get("q", "")[: search.MAX_QUERY_LENGTH * 4]

    def context() -> dict[str, object]:
        results = search.search(
            query=query, record_type=request.GET.get("type", ""), page=request.GET.get("page", "")[:20]
        )
        return {"results": results, "query": results.query}

    return page_cache.cached_page(request, template="pages/search.html", context=context)


def _count_key(digest: str) -> str:
    return f"search-asked:{digest}"


def _roster_add(digest: str, address: Address) -> None:
    roster = cache.get(ROSTER_KEY) or {}
    if digest not in roster and len(roster) < ROSTER_MAX:
        roster[digest] = list(address)
        cache.set(ROSTER_KEY, roster, ASKED_SECONDS)


def search_ask_count(*, request: HttpRequest) -> None:
    """Count one ask of the search page at `request`'s address (nothing when the warm is off)."""
    if settings.SEARCH_WARM_TOP <= 0 or len(request.META.get("QUERY_STRING", "")) > ADDRESS_MAX:
        return
    address: Address = (
        request.scheme or "http",
        request.get_host(),
        request.path,
        request.META.get("QUERY_STRING", ""),
    )
    digest = hashlib.sha256(repr(address).encode()).hexdigest()[:32]
    key = _count_key(digest)
    if cache.add(key, 1, ASKED_SECONDS):
        _roster_add(digest, address)
        return
    try:
        count = cache.incr(key)
    except ValueError:  # its window ended between add and incr
        cache.add(key, 1, ASKED_SECONDS)
        count = 1
    if count in ROSTER_RECHECK_AT:
        _roster_add(digest, address)


def _roster_read() -> tuple[dict[str, list[str]], dict[str, int]]:
    """The roster's addresses still counted, and their counts; those whose window ended are dropped."""
    roster: dict[str, list[str]] = cache.get(ROSTER_KEY) or {}
    counts = cache.get_many([_count_key(digest) for digest in roster])
    alive = {digest: address for digest, address in roster.items() if _count_key(digest) in counts}
    if len(alive) < len(roster):
        cache.set(ROSTER_KEY, alive, ASKED_SECONDS)
    return alive, {digest: counts[_count_key(digest)] for digest in alive}


def _most_asked(roster: dict[str, list[str]], counts: dict[str, int]) -> list[str]:
    return sorted(roster, key=lambda digest: (-counts[digest], digest))


def _roster_prune() -> None:
    """A full roster keeps its most asked half, so that new addresses can be counted again."""
    if len(cache.get(ROSTER_KEY) or {}) < ROSTER_MAX:
        return
    alive, counts = _roster_read()
    if len(alive) >= ROSTER_MAX:
        kept = _most_asked(alive, counts)[: ROSTER_MAX // 2]
        cache.set(ROSTER_KEY, {digest: alive[digest] for digest in kept}, ASKED_SECONDS)


def _request(scheme: str, host: str, path: str, query: str) -> HttpRequest | None:
    """A GET of an address as the web process receives it, from no one (None if its host is not allowed)."""
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "HTTP_HOST": host,
        "SERVER_NAME": host.rsplit(":", 1)[0],
        "SERVER_PORT": "443" if scheme == "https" else "80",
        "wsgi.url_scheme": scheme,
        "wsgi.input": io.BytesIO(b""),
    }
    if settings.SECURE_PROXY_SSL_HEADER:
        header, secure = settings.SECURE_PROXY_SSL_HEADER
        environ[header] = secure if scheme == "https" else "http"
    request = WSGIRequest(environ)
    request.user = AnonymousUser()
    try:
        request.get_host()
    except DisallowedHost:
        return None
    return request


@dataclass
class Warm:
    version: str
    asked: int = 0  # addresses asked in their window
    rendered: int = 0
    cached: int = 0  # in the page cache already (a reader asked since the change)
    done: bool = False  # every chosen address is in the page cache under `version`
    skipped: str = ""  # why nothing was done

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def search_pages_warm(*, top: int | None = None, budget_seconds: float | None = None) -> Warm:
    """Render the `top` most asked search pages (default settings.SEARCH_WARM_TOP) into the page cache
    under the current catalogue version, unless the last complete warm was for that version or
    another warm is running; stop after `budget_seconds` (settings.SEARCH_WARM_BUDGET_SECONDS)."""
    top = settings.SEARCH_WARM_TOP if top is None else top
    budget = settings.SEARCH_WARM_BUDGET_SECONDS if budget_seconds is None else budget_seconds
    version = version_key()
    warm = Warm(version=version)
    if top <= 0:
        warm.skipped = "off"
        return warm
    _roster_prune()
    if cache.get(WARMED_KEY) == version:
        warm.skipped = "unchanged"
        return warm
    if not cache.add(RUNNING_KEY, 1, int(budget) + 60):
        warm.skipped = "running"
        return warm
    try:
        alive, counts = _roster_read()
        warm.asked = len(alive)
        chosen = _most_asked(alive, counts)[:top]
        started = time.monotonic()
        for digest in chosen:
            if time.monotonic() - started > budget:
                break
            request = _request(*alive[digest])
            if request is None:
                continue
            request.catalogue_version = version  # type: ignore[attr-defined]
            if cache.get(page_cache.page_key(request)) is not None:
                warm.cached += 1
                continue
            search_page_render(request)
            warm.rendered += 1
        else:
            warm.done = True
            cache.set(WARMED_KEY, version, page_cache.TIMEOUT)
    finally:
        cache.delete(RUNNING_KEY)
    return warm
