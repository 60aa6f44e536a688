"""A job's message is lost between the commit and the publish: the sweeper sends it, and it runs."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from benchmarks.models import BenchmarkJob, JobStatus
from benchmarks.services import benchmark_job_enqueue, benchmark_jobs_sweep
from benchmarks.tasks import benchmark_job_run
from tests.benchmarks.conftest import make_tiny_recipe

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_sweeper_sends_a_job_whose_message_never_left(timed_protocol, make_user, start_worker, monkeypatch):
    recipe = make_tiny_recipe(timed_protocol, steps=10)
    operator = make_user("benchmark_operator")
    with monkeypatch.context() as crash:  # the process dies after the commit, before the publish
        crash.setattr(benchmark_job_run, "apply_async", lambda *args, **kwargs: None)
        job = benchmark_job_enqueue(recipe=recipe, requested_by=operator)
    start_worker("gpu", env={"OMP_NUM_THREADS": "1"})
    time.sleep(3)
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED  # no message: no worker can know of it

    report = benchmark_jobs_sweep(resend_after=timedelta(seconds=0))
    assert report.resent == [job.pk]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            break
        time.sleep(0.5)
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert BenchmarkJob.objects.count() == 1 and job.evaluation_id is not None
