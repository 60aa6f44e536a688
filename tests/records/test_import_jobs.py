"""A large import runs as a background job: the API answers 202 with a status
URL, the job holds the document as sent, its status endpoint is its owner's and the curators', and
the sweeper queues a job whose worker was lost again. The jobs run here in this process, through
the task itself (`import_job_run.apply`); tests/records/test_import_jobs_worker.py runs them in a
real worker."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from portal.tokens import api_token_create
from records.jobs import IMPORT_JOBS, import_jobs_sweep
from records.models import ImportJob, Result
from records.tasks import import_job_run
from records.values import exact_text
from tests.records.import_job_documents import as_json, document_with_results

URL = "/api/v1/imports/"


def run(job_id: int) -> str:
    """The job's task, run here as a worker runs it (the message the row names)."""
    job = ImportJob.objects.get(pk=job_id)
    return import_job_run.apply(args=[job.pk], task_id=job.celery_task_id).get()


def post(client, document_text: str, query: str = ""):
    return client.post(URL + query, document_text, content_type="application/json")


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def token_client(make_user):
    """token_client("curator") -> an APIClient authenticated with a new user's token in that role."""

    def make(role: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user(role))}")
        return client

    return make


@pytest.fixture
def small_threshold(settings):
    settings.IMPORT_INLINE_MAX_RECORDS = 10
    return settings.IMPORT_INLINE_MAX_RECORDS


@pytest.mark.django_db
def test_it_keeps_a_document_under_the_threshold_synchronous(token_client):
    response = post(token_client("curator"), as_json(document_with_results(0)))
    assert response.status_code == 201, response.content
    assert response.json()["created"]["results"]
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
def test_it_queues_a_document_above_the_threshold_and_answers_202_with_its_status_url(token_client, small_threshold):
    curator = token_client("curator")
    response = post(curator, as_json(document_with_results(20)))
    assert response.status_code == 202, response.content
    body = response.json()
    job = ImportJob.objects.get()
    assert response["Location"] == body["url"] == f"/api/v1/imports/{job.pk}/"
    assert body["status"] == "queued" and body["dry_run"] is False
    assert body["progress"] == {"done": 0, "total": 35 + 20}  # the seed document's 35 entries, 20 more results
    assert not Result.objects.exists()  # nothing imported in the request
    assert list(job.events.values_list("from_status", "to_status", "actor__username")) == [
        ("", "queued", job.requested_by.username)
    ]
    status = curator.get(body["url"])
    assert status.status_code == 200 and status.json()["status"] == "queued"


@pytest.mark.django_db
def test_it_queues_any_document_with_background_true_and_refuses_a_misspelt_background(token_client):
    curator = token_client("curator")
    assert post(curator, as_json(document_with_results(0)), "?background=true").status_code == 202
    refused = post(curator, as_json(document_with_results(0)), "?background=yes")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"path": "?background", "message": "use true or false (also True/False, 1/0)"}]
    assert ImportJob.objects.count() == 1


@pytest.mark.django_db
def test_it_refuses_a_background_import_to_whom_may_not_import(token_client):
    response = post(token_client("release_manager"), as_json(document_with_results(0)), "?background=true")
    assert response.status_code == 403
    assert not ImportJob.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_queued_import_job_imports_the_document_as_sent_with_its_numbers_digits(token_client, small_threshold):
    curator = token_client("curator")
    text = as_json(document_with_results(20)).replace('"value": "25.50"', '"value": 25.50')
    assert '"value": 25.50' in text
    response = post(curator, text)
    assert response.status_code == 202, response.content
    job_id = response.json()["id"]
    assert run(job_id) == "succeeded"
    status = curator.get(response["Location"]).json()
    assert status["status"] == "succeeded", status
    assert status["records"] == 55
    assert status["progress"]["done"] == status["progress"]["total"] >= 55
    assert len(status["report"]["created"]["results"]) == 22
    assert exact_text(Result.objects.get(stable_id__endswith="-runtime-5").value) == "25.50"
    job = ImportJob.objects.get(pk=job_id)
    assert list(job.events.values_list("from_status", "to_status")) == [
        ("", "queued"),
        ("queued", "running"),
        ("running", "succeeded"),
    ]
    assert run(job_id) == "skipped"  # a second delivery does nothing


@pytest.mark.django_db(transaction=True)
def test_a_dry_run_job_reports_and_writes_nothing(token_client):
    curator = token_client("curator")
    response = post(curator, as_json(document_with_results(3)), "?background=1&dry_run=true")
    assert run(response.json()["id"]) == "succeeded"
    status = curator.get(response["Location"]).json()
    assert status["dry_run"] is True and len(status["report"]["created"]["results"]) == 5
    assert not Result.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_invalid_document_fails_the_job_with_every_error_and_its_path(token_client):
    curator = token_client("curator")
    document = document_with_results(2)
    document["evaluations"][0]["results"][1]["unit"] = "fortnight"
    document["datasets"][0]["name"] = ""
    response = post(curator, as_json(document), "?background=true")
    assert run(response.json()["id"]) == "failed"
    status = curator.get(response["Location"]).json()
    assert status["status"] == "failed" and status["outcome"] == "invalid"
    assert status["detail"] == "the document is invalid; nothing was written"
    paths = {error["path"] for error in status["errors"]}
    assert "evaluations[0].results[1].unit" in paths and "datasets[0].name" in paths, status["errors"]
    assert not Result.objects.exists()


@pytest.mark.django_db
def test_the_status_is_its_owners_and_the_curators_and_nobody_elses(token_client, make_user, api):
    owner, other_curator = token_client("curator"), token_client("curator")
    url = post(owner, as_json(document_with_results(0)), "?background=true")["Location"]
    assert owner.get(url).status_code == 200
    assert other_curator.get(url).status_code == 200
    stranger = token_client("release_manager").get(url)
    assert stranger.status_code == 404 and stranger.json()["detail"].startswith("no import job")
    assert api.get(url).status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["999999/", "0/", "99999999999999999999999999/", "abc/", "-1/", "1.5/"])
def test_it_answers_a_bad_status_id_with_a_json_404(token_client, path):
    response = token_client("curator").get(URL + path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert "detail" in response.json()


@pytest.mark.django_db
def test_the_sweeper_queues_a_job_whose_worker_was_lost_again_then_fails_it(token_client, settings):
    settings.IMPORT_JOB_STALE_AFTER_SECONDS = 60
    sent = []
    job_id = post(token_client("curator"), as_json(document_with_results(0)), "?background=true").json()["id"]
    for attempt in range(1, 4):
        job = ImportJob.objects.get(pk=job_id)
        with transaction.atomic():  # a worker claims it, then dies: its heartbeat stops
            assert IMPORT_JOBS.claim(
                row=job, to="running", reason="test claim", now=timezone.now() - timedelta(minutes=5)
            )
        report = import_jobs_sweep(send=lambda *, job: sent.append(job.celery_task_id))
        job.refresh_from_db()
        if attempt < 3:
            assert report.requeued == [job_id] and job.status == "queued"
            assert sent[-1] == job.celery_task_id  # a new message, sent after the commit
        else:
            assert report.failed == [job_id] and job.status == "failed" and job.outcome == "error"
    assert len(set(sent)) == 2
    assert list(job.events.values_list("to_status", flat=True)) == [
        "queued",
        *["running", "queued"] * 2,
        "running",
        "failed",
    ]


@pytest.mark.django_db
def test_the_sweeper_sends_a_queued_jobs_lost_message_again_under_the_same_id(token_client, settings):
    settings.IMPORT_JOB_RESEND_AFTER_SECONDS = 300
    job_id = post(token_client("curator"), as_json(document_with_results(0)), "?background=true").json()["id"]
    sent = []
    assert import_jobs_sweep(send=lambda *, job: sent.append(job.pk)).resent == []  # sent just now: left alone
    ImportJob.objects.filter(pk=job_id).update(sent_at=timezone.now() - timedelta(minutes=6))
    assert import_jobs_sweep(send=lambda *, job: sent.append(job.celery_task_id)).resent == [job_id]
    job = ImportJob.objects.get(pk=job_id)
    assert sent == [job.celery_task_id] and job.sends == 2 and job.status == "queued"
    assert list(job.events.values_list("from_status", "to_status")) == [("", "queued"), ("queued", "queued")]


def test_the_schema_documents_the_202_and_the_status_endpoint(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    post_operation = schema["paths"]["/api/v1/imports/"]["post"]
    assert "202" in post_operation["responses"]
    assert "background" in {parameter["name"] for parameter in post_operation["parameters"]}
    status_operation = schema["paths"]["/api/v1/imports/{id}/"]["get"]
    assert {"200", "404"} <= set(status_operation["responses"])
