"""Liveness and readiness as JSON: 200 when every check passes, 503 otherwise."""

from __future__ import annotations

import os

from django.conf import settings
from django.db import connections
from django.http import JsonResponse
from django.utils import timezone
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


def worker_status() -> str:
    """A worker ran the beat-sent heartbeat task recently (so queues are consumed, not just reachable)."""
    from portal.models import WorkerHeartbeat

    try:
        latest = WorkerHeartbeat.objects.order_by("-seen_at").values_list("seen_at", flat=True).first()
    except Exception as exc:
        return f"error: {type(exc).__name__}"
    if latest is None:
        return "error: no worker heartbeat yet"
    age = (timezone.now() - latest).total_seconds()
    return (
        "ok" if age <= settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS else f"error: last worker heartbeat {int(age)} s ago"
    )


def status_response(checks: dict[str, str]) -> JsonResponse:
    healthy = all(value == "ok" for value in checks.values())
    response = JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": checks}, status=200 if healthy else 503
    )
    response["Cache-Control"] = "no-store"
    return response


class HealthCheckMiddleware:
    """Answers /healthz (liveness: database and broker reachable) and /readyz (also a live worker)
    before host validation, so probes by IP address (Docker, a load balancer) work."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in ("GET", "HEAD"):
            if request.path == "/healthz":
                return status_response({"database": database_status(), "broker": broker_status()})
            if request.path == "/readyz":
                return status_response(
                    {"database": database_status(), "broker": broker_status(), "worker": worker_status()}
                )
        return self.get_response(request)
