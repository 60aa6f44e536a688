"""End to end, with real `celery worker` processes on the `gpu` queue, over the configured broker
(Redis with REDIS_URL set, Celery's filesystem transport without) and the test database."""

from __future__ import annotations

import signal
import time
import uuid
from datetime import timedelta

import pytest

from benchmarks.models import FINISHED, BenchmarkJob, JobEvent, JobStatus
from benchmarks.services import benchmark_job_cancel, benchmark_job_enqueue, benchmark_jobs_sweep
from benchmarks.tasks import benchmark_job_run
from records.models import Evaluation, MeasuredBy
from records.seed import PROTOCOL_ID

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

#: A tiny run long enough to be watched (a second or a few on a CPU), and one that runs for minutes.
WATCHABLE = {"steps": 300}
ENDLESS = {"steps": 200_000}


@pytest.fixture(autouse=True)
def one_torch_thread(monkeypatch):
    """Workers inherit this: on a small shared CI machine one thread runs the tiny model steadily,
    where two fight the test process and each other."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")


def wait_for(check, *, timeout: float, what: str, worker=None, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    log = worker.log()[-4000:] if worker else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{log}")


def row(job) -> BenchmarkJob:
    return BenchmarkJob.objects.get(pk=job.pk)


def running_with_progress(job, attempt: int = 1):
    current = row(job)
    return (
        current
        if current.status == JobStatus.RUNNING and current.attempts == attempt and current.progress_step > 0
        else None
    )


def events(job) -> list[tuple[str, str]]:
    return list(JobEvent.objects.filter(job=job).order_by("id").values_list("from_status", "to_status"))


@pytest.mark.urls("tests.benchmarks.urls_for_tests")
def test_it_runs_a_tiny_job_on_a_gpu_worker_and_proposes_its_evaluation(
    seed_tiny_recipe, operator, start_worker, client
):
    worker = start_worker("gpu")
    job = benchmark_job_enqueue(recipe=seed_tiny_recipe, requested_by=operator, overrides=WATCHABLE)

    observed: list[tuple[str, int, int]] = []

    def finished():
        current = row(job)
        point = (current.status, current.progress_step, current.progress_total)
        if not observed or observed[-1] != point:
            observed.append(point)
        return current if current.status in FINISHED else None

    done = wait_for(finished, timeout=120, what="the job to finish", worker=worker)
    assert done.status == JobStatus.SUCCEEDED, f"{done.error}\n{worker.log()[-3000:]}"

    # Progress was written while it ran, rising, and the row ends at the last step.
    during = [step for status, step, total in observed if status == JobStatus.RUNNING and 0 < step < total]
    assert during, observed
    assert during == sorted(during)
    assert (done.progress_step, done.progress_total) == (300, 300)
    assert done.attempts == 1 and done.worker_host.startswith("test-")
    assert events(job) == [("", "queued"), ("queued", "running"), ("running", "succeeded")]
    assert done.environment["device"] == "cpu" and done.environment["versions"]["torch"].startswith("2.13")
    assert done.figures["total_wall_time_s"] > 0 and done.report["steps"] == 300
    assert "IA3 tiny on promoter_tata" in done.log_tail  # the runner's summary ends the log tail

    # The proposed evaluation, measured by this portal, in the protocol's unit, linked to the job.
    evaluation = done.evaluation
    assert evaluation.measured_by == MeasuredBy.PORTAL and evaluation.review_state == "proposed"
    result = evaluation.results.get()
    assert result.unit == "minute"
    assert float(result.value) == pytest.approx(done.report["total_wall_time_s"] / 60, abs=1e-6)

    # ... and it shows on the protocol page beside the paper's 20 and 50 minutes, and on the job page.
    page = client.get(f"/protocols/{PROTOCOL_ID}/").content.decode()
    assert evaluation.title in page and "Measured by this portal" in page
    # Run with overrides (300 steps of a 40-step recipe): a different measurement, labelled, never compared.
    assert evaluation.different_measurement.endswith("steps 300 (the recipe's: 40)")
    assert "A different measurement, not compared with the protocol's" in page
    assert "Evaluations measured by this portal: 1" in page
    job_page = client.get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    assert "Succeeded" in job_page and f"/evaluations/{evaluation.stable_id}/" in job_page

    # A second delivery of the same message, or any other message for the job, does nothing.
    benchmark_job_run.apply_async(args=[job.pk], task_id=done.celery_task_id)
    wait_for(
        lambda: f"is succeeded: message {done.celery_task_id} does nothing" in worker.log(),
        timeout=60,
        what="the duplicate delivery",
        worker=worker,
    )
    assert benchmark_job_run.apply_async(args=[job.pk], task_id=str(uuid.uuid4())).get(timeout=60) == "skipped"
    again = row(job)
    assert (again.status, again.attempts, again.finished_at, again.evaluation_id) == (
        done.status,
        done.attempts,
        done.finished_at,
        done.evaluation_id,
    )
    assert len(events(job)) == 3
    assert Evaluation.objects.filter(measured_by=MeasuredBy.PORTAL).count() == 1


def test_it_cancels_a_running_and_a_queued_job_and_the_worker_goes_on(seed_tiny_recipe, operator, start_worker):
    worker = start_worker("gpu")
    long = benchmark_job_enqueue(recipe=seed_tiny_recipe, requested_by=operator, overrides=ENDLESS)
    wait_for(lambda: running_with_progress(long), timeout=90, what="the long job to run", worker=worker)

    waiting = benchmark_job_enqueue(recipe=seed_tiny_recipe, requested_by=operator, overrides={"steps": 50})
    time.sleep(0.5)
    assert row(waiting).status == JobStatus.QUEUED  # one job at a time per GPU worker
    benchmark_job_cancel(job=waiting, actor=operator, reason="queued by mistake")
    benchmark_job_cancel(job=long, actor=operator, reason="taking too long")

    # The worker is free again: a new job runs to the end (the long one would hold it for minutes).
    after = benchmark_job_enqueue(recipe=seed_tiny_recipe, requested_by=operator, overrides={"steps": 50})
    done = wait_for(
        lambda: row(after) if row(after).status in FINISHED else None, timeout=90, what="the next job", worker=worker
    )
    assert done.status == JobStatus.SUCCEEDED, done.error

    cancelled = row(long)
    assert cancelled.status == JobStatus.CANCELLED and cancelled.evaluation is None
    assert cancelled.progress_step < cancelled.progress_total
    assert events(long) == [("", "queued"), ("queued", "running"), ("running", "cancelled")]
    never_ran = row(waiting)
    assert never_ran.status == JobStatus.CANCELLED and never_ran.attempts == 0 and never_ran.started_at is None
    assert events(waiting) == [("", "queued"), ("queued", "cancelled")]
    assert Evaluation.objects.filter(measured_by=MeasuredBy.PORTAL).count() == 1


def test_it_retries_the_job_of_a_killed_worker_then_fails_it_after_the_last_attempt(
    tiny_recipe, operator, start_worker, settings
):
    settings.BENCHMARK_MAX_ATTEMPTS = 2
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator, overrides=ENDLESS)

    for attempt in (1, 2):
        worker = start_worker("gpu")
        wait_for(
            lambda: running_with_progress(job, attempt),  # noqa: B023 (called within this iteration)
            timeout=90,
            what=f"attempt {attempt} to run",
            worker=worker,
        )
        worker.kill(signal.SIGKILL)  # the whole process group: main process and pool child
        worker.process.wait(timeout=15)
        time.sleep(1.2)  # the heartbeat goes stale
        report = benchmark_jobs_sweep(stale_after=timedelta(seconds=1))
        current = row(job)
        if attempt == 1:
            assert report.requeued == [job.pk] and report.failed == []
            assert (current.status, current.attempts) == (JobStatus.QUEUED, 1)
        else:
            assert report.failed == [job.pk] and report.requeued == []
            assert (current.status, current.attempts) == (JobStatus.FAILED, 2)
    assert "no attempts left" in current.error
    assert events(job) == [
        ("", "queued"),
        ("queued", "running"),
        ("running", "queued"),
        ("queued", "running"),
        ("running", "failed"),
    ]
    assert current.evaluation is None
