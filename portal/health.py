"""Reachability of the database and the broker, as JSON (200 when both answer, 503 otherwise)."""

from __future__ import annotations

import os

from django.conf import settings
from django.db import connections
from django.http import JsonResponse
from kombu import Connection

BROKER_TIMEOUT_SECONDS = 2


def database_status() -> str:
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "unreachable"; the reason is reported
        return f"error: {type(exc).__name__}"
    return "ok"


def broker_status() -> str:
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem://"):
        folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]
        return "ok" if os.path.isdir(folder) and os.access(folder, os.W_OK) else "error: queue folder not writable"
    try:
        with Connection(url, connect_timeout=BROKER_TIMEOUT_SECONDS) as connection:
            connection.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    except Exception as exc:  # kombu raises transport-specific errors; all mean "unreachable"
        return f"error: {type(exc).__name__}"
    return "ok"


def healthz_response() -> JsonResponse:
    checks = {"database": database_status(), "broker": broker_status()}
    healthy = all(value == "ok" for value in checks.values())
    response = JsonResponse({"status": "ok" if healthy else "unavailable", "checks": checks}, status=200 if healthy else 503)
    response["Cache-Control"] = "no-store"
    return response


class HealthCheckMiddleware:
    """Answers /healthz before host validation, so probes by IP address (Docker, a load balancer) work."""

    path = "/healthz"

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path == self.path and request.method in ("GET", "HEAD"):
            return healthz_response()
        return self.get_response(request)
