"""POST /api/v1/benchmark-jobs/ and friends: operators only, the field named on a 400, constant queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks.execution import benchmark_job_claim
from benchmarks.models import BenchmarkJob, JobStatus
from benchmarks.services import benchmark_job_enqueue

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.benchmarks.urls_for_tests")]

JOBS = "/api/v1/benchmark-jobs/"


def client_for(make_user, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(make_user(role))
    return client


def post(client, path, body=None):
    return client.post(path, body or {}, content_type="application/json")


def test_it_queues_a_job_and_answers_201_with_its_urls(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    client = Client()
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, JOBS, {"recipe": tiny_recipe.stable_id, "overrides": {"steps": 30, "batch_size": 2}})
    assert response.status_code == 201, response.content
    body = response.json()
    job = BenchmarkJob.objects.get()
    assert body["id"] == job.pk and body["status"] == "queued"
    assert body["url"] == f"/benchmarks/jobs/{job.pk}/"
    assert body["api_url"] == f"{JOBS}{job.pk}/" and response["Location"] == body["api_url"]
    assert body["parameters"]["steps"] == 30 and body["parameters"]["batch_size"] == 2
    assert body["requested_by"] == operator.username
    assert [message["args"] for message in broker.sent] == [[job.pk]]


RECIPE = "tiny-promoter-tata-test"


@pytest.mark.parametrize(
    "body, errors",
    [
        ({}, ["recipe"]),
        ({"recipe": "no-such-recipe"}, ["recipe"]),
        ({"recipe": RECIPE, "overrides": {"steps": 0}}, ["overrides", "steps"]),
        ({"recipe": RECIPE, "overrides": {"steps": "many"}}, ["overrides", "steps"]),
        ({"recipe": RECIPE, "overrides": {"weights": "/models/nt"}}, ["overrides", "weights"]),
        ({"recipe": RECIPE, "overrides": {"task": "no_such_task"}}, ["overrides", "task"]),
        ({"recipe": RECIPE, "overrides": {"steps": 3, "warmup_steps": 5}}, ["overrides", "warmup_steps"]),
    ],
)
def test_it_answers_400_naming_the_field(tiny_recipe, operator, broker, body, errors):
    client = Client()
    client.force_login(operator)
    response = post(client, JOBS, body)
    assert response.status_code == 400
    found = response.json()
    for name in errors:
        assert name in found, response.json()
        found = found[name]
    assert BenchmarkJob.objects.count() == 0 and broker.sent == []


@pytest.mark.parametrize("role", ["anonymous", "curator", "release_manager", "user"])
def test_it_refuses_everyone_but_benchmark_operators(tiny_recipe, make_user, broker, role):
    response = post(client_for(make_user, role), JOBS, {"recipe": tiny_recipe.stable_id})
    assert response.status_code in ((401, 403) if role == "anonymous" else (403,))
    assert BenchmarkJob.objects.count() == 0


def test_it_lists_and_shows_jobs_in_a_constant_number_of_queries(tiny_recipe, operator, broker, make_user):
    client = Client()
    client.force_login(make_user("curator"))  # curators may read jobs

    def list_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(JOBS)
        assert response.status_code == 200
        return len(queries)

    benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    few = list_queries()
    for _ in range(5):
        benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    assert list_queries() == few
    body = client.get(JOBS, {"status": "queued"}).json()
    assert len(body["results"]) == 6 and body["next"] is None
    assert client.get(JOBS, {"status": "paused"}).status_code == 400
    job = BenchmarkJob.objects.first()
    detail = client.get(f"{JOBS}{job.pk}/").json()
    assert detail["id"] == job.pk and detail["recipe"] == tiny_recipe.stable_id
    assert client.get(f"{JOBS}999999/").status_code == 404
    assert client_for(make_user, "release_manager").get(JOBS).status_code == 403


def test_it_cancels_and_reruns_through_the_api(tiny_recipe, operator, broker, make_user):
    client = Client()
    client.force_login(operator)
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    assert post(client, f"{JOBS}{job.pk}/rerun/").status_code == 409  # still queued
    response = post(client, f"{JOBS}{job.pk}/cancel/", {"reason": "wrong recipe"})
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    again = post(client, f"{JOBS}{job.pk}/cancel/")
    assert again.status_code == 409 and "status" in again.json()
    rerun = post(client, f"{JOBS}{job.pk}/rerun/")
    assert rerun.status_code == 201
    assert rerun.json()["rerun_of"] == job.pk and rerun.json()["parameters"] == job.parameters
    curator = client_for(make_user, "curator")
    new_job = BenchmarkJob.objects.get(pk=rerun.json()["id"])
    assert post(curator, f"{JOBS}{new_job.pk}/cancel/").status_code == 403
    assert post(curator, f"{JOBS}{job.pk}/rerun/").status_code == 403
    assert BenchmarkJob.objects.get(pk=new_job.pk).status == JobStatus.QUEUED


def test_it_cancels_a_running_job(tiny_recipe, operator, broker, django_capture_on_commit_callbacks):
    client = Client()
    client.force_login(operator)
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-1")
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, f"{JOBS}{job.pk}/cancel/")
    assert response.status_code == 200
    assert broker.revoked == [{"task_id": job.celery_task_id, "terminate": False, "signal": "SIGTERM"}]


def test_it_refuses_a_cancel_reason_that_is_not_a_string_and_keeps_the_job(tiny_recipe, operator, broker):
    client = Client()
    client.force_login(operator)
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    response = post(client, f"{JOBS}{job.pk}/cancel/", {"reason": 12})
    assert response.status_code == 400 and "reason" in response.json(), response.content
    job.refresh_from_db()
    assert job.status == "queued" and broker.revoked == []
