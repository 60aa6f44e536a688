"""Structured logs, readiness with a worker heartbeat, Prometheus metrics."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from portal.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


def test_it_logs_each_request_as_one_json_line(client, caplog):
    from pythonjsonlogger.json import JsonFormatter

    with caplog.at_level(logging.INFO, logger="portal.request"):
        response = client.get("/coverage/", HTTP_X_REQUEST_ID="req-123")
    records = [r for r in caplog.records if r.name == "portal.request"]
    assert len(records) == 1 and response["X-Request-ID"] == "req-123"
    line = JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s").format(records[0])
    data = json.loads(line)
    assert (data["event"], data["method"], data["path"], data["status"], data["request_id"]) == (
        "request",
        "GET",
        "/coverage/",
        200,
        "req-123",
    )
    assert data["duration_ms"] >= 0 and "\n" not in line


def test_it_logs_each_task_with_the_id_it_works_on(caplog):
    from portal.observability import on_task_postrun, on_task_prerun

    class FakeTask:  # the signal handlers need only a name
        name = "releases.tasks.release_build"

    with caplog.at_level(logging.INFO, logger="portal.task"):
        on_task_prerun(task_id="t1", task=FakeTask, args=[42])
        on_task_postrun(task_id="t1", task=FakeTask, args=[42], state="SUCCESS")
    finished = [r for r in caplog.records if r.name == "portal.task"][-1]
    assert (finished.event, finished.state, finished.release_id, finished.task_id) == ("task", "SUCCESS", 42, "t1")
    assert finished.duration_ms >= 0


def test_readyz_needs_a_recent_worker_heartbeat(client):
    body = client.get("/readyz")
    assert body.status_code == 503 and body.json()["checks"]["worker"] == "error: no worker heartbeat yet"
    WorkerHeartbeat.objects.create(worker="w1", seen_at=timezone.now() - timedelta(minutes=10))
    assert client.get("/readyz").status_code == 503
    WorkerHeartbeat.objects.create(worker="w2", seen_at=timezone.now())
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["checks"] == {"database": "ok", "broker": "ok", "worker": "ok"}
    assert client.get("/healthz").status_code == 200


def test_the_heartbeat_task_records_its_worker():
    from portal.tasks import worker_heartbeat

    worker_heartbeat.apply()
    assert WorkerHeartbeat.objects.count() == 1


def test_metrics_report_requests_and_queue_lengths_behind_a_token(client, settings):
    client.get("/coverage/")
    body = client.get("/metrics").content.decode()
    assert "django_http_requests_total_by_method_total" in body
    assert 'portal_queue_length{queue="default"}' in body and 'portal_queue_length{queue="gpu"}' in body
    assert "portal_benchmark_job_duration_seconds_count 0.0" in body and "# TYPE portal_releases gauge" in body
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200


def test_metrics_are_not_served_in_production_without_a_token(client, settings):
    settings.PRODUCTION = True
    settings.METRICS_TOKEN = ""
    response = client.get("/metrics")
    assert response.status_code == 404 and b"django_http_requests" not in response.content
    assert client.head("/metrics").status_code == 404
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200


def test_the_deployment_checks_flag_a_missing_metrics_token():
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTAL_METRICS_TOKEN")}
    env.update({"PORTAL_PRODUCTION": "1", "SECRET_KEY": "k" * 40 + "-Zq9#xW2!pL", "ALLOWED_HOSTS": "portal.example"})
    completed = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        completed.returncode != 0 and "portal.W001" in completed.stderr and "PORTAL_METRICS_TOKEN" in completed.stderr
    )
