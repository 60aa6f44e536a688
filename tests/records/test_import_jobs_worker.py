"""End to end with a real `celery worker` process on the `default` queue (Redis with REDIS_URL set,
Celery's filesystem transport without) and the test database: a document above the default
threshold is answered 202, and its status URL shows it queued, running with progress, then
succeeded with the report; nothing of it depends on the request that sent it."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from portal.tokens import api_token_create
from records.models import ImportJob, Result
from tests.records.import_job_documents import as_json, document_with_results, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def curator_api(curator):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=curator)}")
    return client


@pytest.fixture
def default_queue_empty():
    from portal.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("default")  # messages an earlier test may have left


def test_a_large_import_is_answered_202_and_a_real_worker_imports_it_with_progress(
    curator_api, start_worker, monkeypatch, default_queue_empty, settings
):
    assert settings.IMPORT_INLINE_MAX_RECORDS == 500  # the default threshold
    document = document_with_results(1_000)
    started = time.monotonic()
    response = curator_api.post("/api/v1/imports/", as_json(document), content_type="application/json")
    answered = time.monotonic() - started
    assert response.status_code == 202, response.content
    url = response["Location"]
    assert response.json()["records"] == 1_035 and response.json()["status"] == "queued"

    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "tests.records.import_worker_settings")
    worker = start_worker("default")
    seen: list[tuple[str, int, int]] = []

    def finished():
        body = curator_api.get(url).json()
        seen.append((body["status"], body["progress"]["done"], body["progress"]["total"]))
        return body if body["status"] in ("succeeded", "failed") else None

    body = wait_for(finished, timeout=180, what="the import job to finish", worker=worker, interval=0.05)
    assert body["status"] == "succeeded", body
    assert len(body["report"]["created"]["results"]) == 1_002
    assert Result.objects.count() == 1_002
    assert body["progress"]["done"] == body["progress"]["total"] > 0
    assert seen[0][0] == "queued"
    running = [progress for progress in seen if progress[0] == "running"]
    assert running, f"never seen running: {seen[:3]} ... {seen[-3:]}"
    assert any(0 < done < total for _, done, total in running), f"no progress seen while running: {running[-5:]}"
    job = ImportJob.objects.get(pk=body["id"])
    assert list(job.events.values_list("from_status", "to_status", "attempt")) == [
        ("", "queued", 0),
        ("queued", "running", 1),
        ("running", "succeeded", 1),
    ]
    print(
        f"answered in {answered:.2f} s; imported {body['records']} records in {(job.finished_at - job.started_at).total_seconds():.2f} s"
    )
