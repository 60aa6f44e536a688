"""Request-level guards that run before any view reads the body."""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpResponse, JsonResponse


class PermissionsPolicyMiddleware:
    """`Permissions-Policy` from settings.PERMISSIONS_POLICY on every response, errors and refusals
    included (it sits outside every middleware that answers by itself)."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.value = ", ".join(
            f"{feature}=({' '.join(allowed)})" for feature, allowed in settings.PERMISSIONS_POLICY.items()
        )

    def __call__(self, request):
        response = self.get_response(request)
        if "Permissions-Policy" not in response:
            response["Permissions-Policy"] = self.value
        return response


class RequestSizeLimitMiddleware:
    """Refuse a body larger than its path's limit with 413, from the Content-Length header alone.

    Limits are prefixes in settings.REQUEST_BODY_LIMITS (the longest matching prefix wins). A body
    without Content-Length is bounded by DATA_UPLOAD_MAX_MEMORY_SIZE when read.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.limits = sorted(settings.REQUEST_BODY_LIMITS.items(), key=lambda item: len(item[0]), reverse=True)

    def __call__(self, request):
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(length)
        except ValueError:
            return self._refuse(request, "Content-Length is not a number", status=400)
        limit = next(limit for prefix, limit in self.limits if request.path.startswith(prefix))
        if size > limit:
            return self._refuse(request, f"request body too large: {size} bytes, the limit here is {limit}", status=413)
        return self.get_response(request)

    @staticmethod
    def _refuse(request, message: str, *, status: int) -> HttpResponse:
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=status)
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


class AdminLoginThrottleMiddleware:
    """At most settings.ADMIN_LOGIN_ATTEMPTS failed logins per client address per window: each
    attempt is counted as it starts (attempts in flight at once are all counted) and taken back
    when it signs the user in, so a curator who signs in all day is never locked out."""

    path = "/admin/login/"

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method != "POST" or request.path != self.path:
            return self.get_response(request)
        from common.ratelimit import Limit, RateLimited, client_ip, forgive, hit, ip_hash

        limit = Limit("admin-login", settings.ADMIN_LOGIN_ATTEMPTS, settings.ADMIN_LOGIN_WINDOW_SECONDS)
        key = ip_hash(client_ip(request))
        try:
            hit(limit=limit, key=key)
        except RateLimited as limited:
            forgive(limit=limit, key=key)  # a refused attempt is no attempt: the count stays at the limit
            response = HttpResponse(
                f"Too many failed logins from your address; try again in {limited.retry_after} seconds.",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(limited.retry_after)
            return response
        response = self.get_response(request)
        if response.status_code == 302 and request.user.is_authenticated:  # signed in: not a failure
            forgive(limit=limit, key=key)
        return response


class MetricsAccessMiddleware:
    """/metrics needs `Authorization: Bearer <PORTAL_METRICS_TOKEN>` when a token is configured.

    In production without a token /metrics does not exist (404): the figures (request counts by
    view, queue lengths, jobs by status) are for the operators' monitoring, never for anyone who
    asks, and a missing token must not take the site down (`check --deploy` flags it,
    portal.checks). The embedded default, on a developer's machine, serves them openly."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = settings.METRICS_TOKEN
        if request.path == "/metrics" and not token and settings.PRODUCTION:
            return HttpResponse(
                "metrics are off: set PORTAL_METRICS_TOKEN", status=404, content_type="text/plain; charset=utf-8"
            )
        if request.path == "/metrics" and token:
            import hmac

            given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if not hmac.compare_digest(given.encode(), token.encode()):
                return HttpResponse(
                    "metrics need the bearer token", status=401, content_type="text/plain; charset=utf-8"
                )
        return self.get_response(request)


class NullCharacterGuardMiddleware:
    """Refuse NUL characters in the address or a JSON body with 400.

    No text the portal stores may contain one (PostgreSQL cannot), and a lookup by a value holding
    one fails inside the database driver: refusing them up front gives one clear answer. HTML forms
    refuse them field by field (Django's form fields do), naming the field.
    """

    BODY_MARKERS = (b"\x00", b"\\u0000")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        query = request.META.get("QUERY_STRING", "").lower()
        if "\x00" in request.path or "%00" in query or "\x00" in query:
            return RequestSizeLimitMiddleware._refuse(
                request, "null characters are not allowed in the address", status=400
            )
        is_json = request.content_type == "application/json"
        if (
            is_json
            and request.method in ("POST", "PUT", "PATCH")
            and any(marker in request.body.lower() for marker in self.BODY_MARKERS)
        ):
            return RequestSizeLimitMiddleware._refuse(
                request, "null characters are not allowed in the request body", status=400
            )
        return self.get_response(request)


class DatabaseLimitsMiddleware:
    """Web requests' database time limits (portal/db_limits.py): in a process that serves web
    requests, each request finds its connections limited. Gunicorn's workers say they are one
    (portal/gunicorn_conf.py); `manage.py runserver` is one when it builds this chain."""

    def __init__(self, get_response):
        import sys

        if sys.argv[1:2] == ["runserver"]:
            from portal.db_limits import web_limits_enable

            web_limits_enable()
        self.get_response = get_response

    def __call__(self, request):
        from portal.db_limits import web_limits_ensure

        web_limits_ensure()
        return self.get_response(request)


def limit_response(request, kind: str) -> HttpResponse:
    """The answer to a request whose database work hit a limit: 504 when a statement ran past
    DB_STATEMENT_TIMEOUT_MS, 503 when it waited past the lock limit for another change; JSON under
    /api/ ({"detail", "code"}), a page elsewhere. No Retry-After: the same request may well hit it again."""
    from django.template.loader import render_to_string

    from portal.db_limits import STATEMENT, limit_message

    message = limit_message(kind, method=request.method)
    status, code = (504, "statement_timeout") if kind == STATEMENT else (503, "lock_timeout")
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message, "code": code}, status=status)
    title = "The request took too long" if kind == STATEMENT else "The request waited too long"
    page = render_to_string("database_limit.html", {"title": title, "message": message})
    return HttpResponse(page, status=status, content_type="text/html; charset=utf-8")


def unavailable_response(request, exception: BaseException | None):
    """The answer to a passing fault, or None for any other exception: the 503 with Retry-After for
    a lost database connection or Redis server; `limit_response` for a statement the database
    cancelled at a web request's time limit or a lock wait past it. Used by
    `DatabaseUnavailableMiddleware` for views and by the portal's `handler500` for what other
    middlewares raise (Django turns those into a 500 before any other middleware sees them). The
    request's transaction has rolled back by then: the exception left its `atomic` block."""
    from django.db import InterfaceError, OperationalError, connections
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    from portal.db_limits import limit_exceeded

    kind = limit_exceeded(exception)
    if kind is not None:
        logging.getLogger("portal.database").warning(
            "database %s limit hit during %s %s: %s", kind, request.method, request.path, exception
        )
        return limit_response(request, kind)
    if isinstance(exception, (RedisConnectionError, RedisTimeoutError)):
        # the cache's (or the broker's) Redis server is down or restarting: a passing fault, like a lost database
        logging.getLogger("portal.cache").warning(
            "redis unavailable during %s %s: %s", request.method, request.path, exception
        )
        message = "a service the portal needs is unavailable for a moment; try again shortly"
    elif isinstance(exception, (OperationalError, InterfaceError)):
        logging.getLogger("portal.database").warning(
            "database unavailable during %s %s: %s", request.method, request.path, exception
        )
        for connection in connections.all(initialized_only=True):
            connection.close_if_unusable_or_obsolete()  # a connection that raised is checked, and closed if dead
        message = "the database is unavailable for a moment; try again shortly"
    else:
        return None
    response = RequestSizeLimitMiddleware._refuse(request, message, status=503)
    response["Retry-After"] = str(DatabaseUnavailableMiddleware.RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    """A lost database connection (or Redis server) answers 503 with Retry-After, not a 500, and is
    not reused; a database time limit hit answers `limit_response`.

    The next request opens a fresh connection (CONN_HEALTH_CHECKS also drops dead persistent ones).
    """

    RETRY_AFTER_SECONDS = 5

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        return unavailable_response(request, exception)


class PortalReleaseHeaderMiddleware:
    """`X-Portal-Release` on every API response: the latest published release the data belongs to."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith("/api/"):
            response["X-Portal-Release"] = self.latest_release_id(getattr(request, "catalogue_version", None))
        return response

    @staticmethod
    def latest_release_id(version: str | None) -> str:
        """Read once per catalogue version where the view read one (a cached API answer,
        common.api): publishing a release moves the version (releases.build)."""
        from django.core.cache import cache

        from releases.selectors import latest_published

        key = f"x-portal-release:{version}"
        release_id = cache.get(key) if version else None
        if release_id is None:
            release = latest_published()
            release_id = release.release_id if release else "none"
            if version:
                cache.set(key, release_id)
        return release_id
