"""Structured logs (one JSON line per request and per Celery task) and Prometheus collectors.

Every log line goes through one of the formatters below (settings.LOGGING), which redact the
credentials a line may hold (a `?token=` in a request's address, an Authorization value:
portal/redact.py), whichever logger wrote it: Django's own `django.request` lines name the
request with its query string."""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path

from django.conf import settings
from prometheus_client.core import GaugeMetricFamily
from pythonjsonlogger.json import JsonFormatter

from portal.redact import redact

request_log = logging.getLogger("portal.request")
task_log = logging.getLogger("portal.task")
QUEUES = ("default", "releases", "gpu")


class RedactingJsonFormatter(JsonFormatter):
    """python-json-logger's JSON line, with the credentials it holds redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class RedactingFormatter(logging.Formatter):
    """The plain line (PORTAL_LOG_FORMAT=plain), with the credentials it holds redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class RequestLogMiddleware:
    """Logs every request as one structured line and hands the request id back in X-Request-ID."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        request_id = (request.headers.get("X-Request-ID") or uuid.uuid4().hex)[:64]
        request.request_id = request_id
        response = self.get_response(request)
        user = getattr(request, "user", None)
        request_log.info(
            "request",
            extra={
                "event": "request",
                "request_id": request_id,
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                "user_id": user.pk if user is not None and user.is_authenticated else None,
            },
        )
        response["X-Request-ID"] = request_id
        return response


def _subject(task_name: str, args) -> dict[str, object]:
    """The id a task works on, named for what it is (job_id, release_id), so logs can be searched by it."""
    if not args:
        return {}
    key = (
        "job_id"
        if task_name.startswith("benchmarks.")
        else "release_id"
        if task_name.startswith("releases.")
        else "object_id"
    )
    return {key: args[0]}


_started: dict[str, float] = {}


def on_task_prerun(task_id=None, task=None, args=None, **kwargs):
    _started[task_id] = time.perf_counter()
    task_log.info(
        "task started",
        extra={"event": "task", "state": "started", "task": task.name, "task_id": task_id, **_subject(task.name, args)},
    )


def on_task_postrun(task_id=None, task=None, args=None, state=None, **kwargs):
    started = _started.pop(task_id, None)
    task_log.info(
        "task finished",
        extra={
            "event": "task",
            "state": state,
            "task": task.name,
            "task_id": task_id,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2) if started else None,
            **_subject(task.name, args),
        },
    )


def connect_task_logging() -> None:
    from celery.signals import task_postrun, task_prerun

    task_prerun.connect(on_task_prerun, weak=False, dispatch_uid="portal-task-prerun")
    task_postrun.connect(on_task_postrun, weak=False, dispatch_uid="portal-task-postrun")


def queue_lengths() -> dict[str, int]:
    """Messages waiting per queue, read from the broker itself (Redis lists, or the queue folder)."""
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem://"):
        folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        names = [path.name for path in folder.iterdir()] if folder.is_dir() else []
        return {queue: sum(1 for name in names if name.endswith(f".{queue}.msg")) for queue in QUEUES}
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    return {queue: int(client.llen(queue)) for queue in QUEUES}


class QueueCollector:
    """portal_queue_length{queue=...}: read at scrape time, so every process reports the same truth."""

    def describe(self):  # what registering needs, without asking the broker at start-up
        yield GaugeMetricFamily("portal_queue_length", "Messages waiting in a Celery queue.", labels=["queue"])

    def collect(self):
        gauge = GaugeMetricFamily("portal_queue_length", "Messages waiting in a Celery queue.", labels=["queue"])
        try:
            lengths = queue_lengths()
        except Exception:  # an unreachable broker is reported by /readyz; the metric is simply absent
            lengths = {}
        for queue, length in lengths.items():
            gauge.add_metric([queue], length)
        yield gauge


DURATION_BUCKETS = (60, 300, 900, 1800, 3600, 2 * 3600, 4 * 3600, 6 * 3600)
RECENT_JOBS = 5000


class JobCollector:
    """Benchmark jobs by status, and a histogram of finished jobs' run times (the last RECENT_JOBS).

    Read from the database at scrape time: the jobs run in GPU worker processes the web process
    cannot see, and the rows are the truth anyway.
    """

    def describe(self):  # what registering needs, without querying the database at start-up
        from prometheus_client.core import HistogramMetricFamily

        yield GaugeMetricFamily("portal_benchmark_jobs", "Benchmark jobs by status.", labels=["status"])
        yield GaugeMetricFamily("portal_releases", "Releases by status.", labels=["status"])
        yield HistogramMetricFamily("portal_benchmark_job_duration_seconds", "Run time of finished benchmark jobs.")

    def collect(self):
        try:
            yield from self._collect()
        except Exception:  # the database is reported by /readyz; these metrics are simply absent
            return

    def _collect(self):
        from prometheus_client.core import HistogramMetricFamily

        from benchmarks.models import BenchmarkJob
        from releases.models import ReleaseBuild

        jobs = GaugeMetricFamily("portal_benchmark_jobs", "Benchmark jobs by status.", labels=["status"])
        for status, count in _counts(BenchmarkJob, "status"):
            jobs.add_metric([status], count)
        yield jobs
        releases = GaugeMetricFamily("portal_releases", "Releases by their build's status.", labels=["status"])
        for status, count in _counts(ReleaseBuild, "status"):
            releases.add_metric([status], count)
        yield releases
        durations = [
            (finished - started).total_seconds()
            for started, finished in BenchmarkJob.objects.filter(started_at__isnull=False, finished_at__isnull=False)
            .order_by("-finished_at")
            .values_list("started_at", "finished_at")[:RECENT_JOBS]
        ]
        buckets = [(str(bound), sum(1 for d in durations if d <= bound)) for bound in DURATION_BUCKETS] + [
            ("+Inf", len(durations))
        ]
        histogram = HistogramMetricFamily(
            "portal_benchmark_job_duration_seconds", "Run time of finished benchmark jobs."
        )
        histogram.add_metric([], buckets=buckets, sum_value=sum(durations))
        yield histogram


def _counts(model, field: str) -> list[tuple[str, int]]:
    from django.db.models import Count

    return list(model.objects.order_by().values_list(field).annotate(n=Count("pk")))
