"""The job page, its JSON status, and the protocol page's recipe lines and run instructions."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from benchmarks.execution import benchmark_job_claim, benchmark_job_fail, benchmark_job_progress, benchmark_job_succeed
from benchmarks.models import Recipe
from benchmarks.services import benchmark_job_enqueue, benchmark_jobs_sweep
from pages.parts import job_part, recipes_part
from tests.benchmarks.conftest import fake_report, make_tiny_recipe
from tests.factories import EvaluationFactory
from tests.helpers import apply_transitions

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.benchmarks.urls_for_tests")]


def running_job(recipe, operator, *, step=10):
    job = benchmark_job_enqueue(recipe=recipe, requested_by=operator)
    benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-host-1")
    benchmark_job_progress(job_id=job.pk, attempt=1, step=step, total=40)
    job.refresh_from_db()
    return job


def test_it_shows_a_running_job_with_live_progress_to_anyone(tiny_recipe, operator, broker):
    job = running_job(tiny_recipe, operator)
    response = Client().get(f"/benchmarks/jobs/{job.pk}/")
    assert response.status_code == 200
    assert response["Refresh"] == "5" and response["Cache-Control"] == "no-store"
    page = response.content.decode()
    assert '<progress id="job-progress" max="40" value="10">' in page
    assert "10 of 40 steps (25%)" in page
    assert "Running" in page and "1 of at most 3" in page
    assert "s ago" in page  # the heartbeat's age
    assert "python -m benchmarks.ia3 --preset tiny --task promoter_tata --steps 40" in page
    assert operator.username not in page  # who queued it is for operators' eyes
    client = Client()
    client.force_login(operator)
    assert operator.username in client.get(f"/benchmarks/jobs/{job.pk}/").content.decode()


def test_it_names_the_worker_host_to_operators_only(tiny_recipe, operator, broker, settings):
    job = running_job(tiny_recipe, operator)
    benchmark_job_progress(job_id=job.pk, attempt=1, step=12, total=40)
    # The worker goes silent: the sweeper's reason and, after the last attempt, the error name it too.
    job.max_attempts = 1
    job.save(update_fields=["max_attempts"])
    BenchmarkJob = type(job)
    BenchmarkJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    benchmark_jobs_sweep()
    job.refresh_from_db()
    public_status = Client().get(f"/benchmarks/jobs/{job.pk}/status.json")
    public_page = Client().get(f"/benchmarks/jobs/{job.pk}/")
    assert public_status.status_code == public_page.status_code == 200
    assert "gpu-host-1" not in public_status.content.decode() and "worker_host" not in public_status.json()
    assert "gpu-host-1" not in public_page.content.decode()
    assert "claimed by a worker" in public_page.content.decode()
    client = Client()
    client.force_login(operator)
    staff_status = client.get(f"/benchmarks/jobs/{job.pk}/status.json").json()
    assert staff_status["worker_host"] == "gpu-host-1"
    staff_page = client.get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    assert "gpu-host-1" in staff_page and "claimed by gpu-host-1" in staff_page


def test_it_shows_a_failure_with_the_log_tail_to_operators_only(tiny_recipe, operator, broker):
    job = running_job(tiny_recipe, operator)
    benchmark_job_fail(
        job_id=job.pk,
        attempt=1,
        error="RuntimeError: CUDA out of memory\nTraceback: /srv/app/x.py",
        log_tail="loading /srv/app/weights",
    )
    public = Client().get(f"/benchmarks/jobs/{job.pk}/")
    assert "Refresh" not in public
    text = public.content.decode()
    assert "RuntimeError: CUDA out of memory" in text and "/srv/app" not in text
    client = Client()
    client.force_login(operator)
    text = client.get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    assert "loading /srv/app/weights" in text and "Traceback: /srv/app/x.py" in text
    status = Client().get(f"/benchmarks/jobs/{job.pk}/status.json").json()
    assert status["status"] == "failed" and status["error"] == "RuntimeError: CUDA out of memory"
    assert "log_tail" not in status
    assert client.get(f"/benchmarks/jobs/{job.pk}/status.json").json()["log_tail"] == "loading /srv/app/weights"


def test_a_finished_job_shows_when_it_finished_not_a_heartbeat_age(tiny_recipe, operator, broker):
    job = running_job(tiny_recipe, operator)
    benchmark_job_fail(job_id=job.pk, attempt=1, error="RuntimeError: CUDA out of memory", log_tail="")
    text = Client().get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    assert "Heartbeat" not in text and "s ago" not in text
    assert re.search(r"<dt>Finished</dt><dd>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</dd>", text)


def test_it_links_a_succeeded_job_to_its_evaluation_and_report(tiny_recipe, operator, broker):
    job = running_job(tiny_recipe, operator)
    benchmark_job_succeed(job_id=job.pk, attempt=1, report=fake_report(seconds=75))
    job.refresh_from_db()
    page = Client().get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    assert f"/evaluations/{job.evaluation.stable_id}/" in page and "75.000 s" in page
    report = Client().get(f"/benchmarks/jobs/{job.pk}/report.json")
    assert report.json()["total_wall_time_s"] == 75
    status = Client().get(f"/benchmarks/jobs/{job.pk}/status.json").json()
    assert status["progress"] == {"step": 40, "total": 40, "fraction": 1.0}
    assert status["environment"]["device_name"] == "Test CPU" and "platform" not in status["environment"]
    assert "worker_host" not in status and "log_tail" not in status
    assert status["evaluation"]["stable_id"] == job.evaluation.stable_id
    assert Client().get("/benchmarks/jobs/999999/").status_code == 404
    assert Client().get("/benchmarks/jobs/999999/status.json").status_code == 404


def test_a_cancelled_job_says_it_was_cancelled_when_by_which_role_and_why(tiny_recipe, operator, broker):
    from benchmarks.services import benchmark_job_cancel

    job = running_job(tiny_recipe, operator, step=12)
    benchmark_job_cancel(job=job, actor=operator, reason="wrong task chosen")
    job.refresh_from_db()
    at = f"on {job.finished_at:%Y-%m-%d} at {job.finished_at:%H:%M:%S} UTC"
    public = Client().get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    assert f"Cancelled {at} by benchmark operator: wrong task chosen." in public
    assert "it had run 12 of 40 steps" in public
    assert "No evaluation yet" not in public and operator.username not in public
    client = Client()
    client.force_login(operator)
    staff = client.get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    assert f"Cancelled {at} by {operator.username} (benchmark operator): wrong task chosen." in staff


def test_a_failed_job_says_it_failed_and_a_queued_one_that_an_evaluation_may_come(tiny_recipe, operator, broker):
    waiting = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    assert (
        "No evaluation yet: a job becomes a proposed evaluation"
        in Client().get(f"/benchmarks/jobs/{waiting.pk}/").content.decode()
    )
    job = running_job(tiny_recipe, operator)
    benchmark_job_fail(job_id=job.pk, attempt=1, error="RuntimeError: CUDA out of memory\nTraceback", log_tail="")
    job.refresh_from_db()
    text = Client().get(f"/benchmarks/jobs/{job.pk}/").content.decode()
    at = f"on {job.finished_at:%Y-%m-%d} at {job.finished_at:%H:%M:%S} UTC"
    assert f"Failed {at} after 1 of at most 3 attempts: RuntimeError: CUDA out of memory." in text
    assert "No evaluation yet" not in text


def test_it_renders_the_job_page_in_a_constant_number_of_queries(tiny_recipe, operator, broker):
    job = running_job(tiny_recipe, operator)
    client = Client()
    client.force_login(operator)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"/benchmarks/jobs/{job.pk}/").status_code == 200
        return len(captured)

    few = queries()
    for step in (20, 30):  # more events: another attempt's worth
        benchmark_job_progress(job_id=job.pk, attempt=1, step=step, total=40)
    benchmark_jobs_sweep(now=timezone.now() + timedelta(minutes=6))
    job.refresh_from_db()
    benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-host-2")
    assert queries() == few


def render_part(protocol, part=None) -> str:
    """The protocol page's part from benchmarks: its recipe line, its run instructions, or both."""
    parts = recipes_part(protocol)
    html = {"line": parts["recipe_line"], "instructions": parts["run_instructions"]}.get(
        part, parts["recipe_line"] + parts["run_instructions"]
    )
    return " ".join(html.split())


def test_it_says_when_a_protocol_has_no_recipe(timed_protocol):
    text = render_part(timed_protocol)
    assert (
        "No execution recipe linked to this protocol. Recipe availability does not establish a completed evaluation."
        in text
    )
    assert "No runnable recipe has been reviewed for this protocol." in text
    assert "celery -A portal worker" not in text


def test_it_lists_an_unreviewed_recipe_with_its_commands(seed_recipe):
    protocol = seed_recipe.protocol
    line = render_part(protocol, "line")
    assert "No reviewed execution recipe; 1 execution recipe linked to this protocol." in line
    assert "Preset nt-v1-500m, task splice_sites_all, 10000 steps, batch size 8, learning rate 0.003" in line
    assert "proposed, not yet reviewed" in line
    assert "No runnable recipe" not in line
    instructions = render_part(protocol, "instructions")
    assert "No runnable recipe has been reviewed for this protocol." in instructions
    assert "Unreviewed recipe, for inspection" in instructions
    assert (
        "python -m benchmarks.ia3 --preset nt-v1-500m --task splice_sites_all --steps 10000 --batch-size 8 "
        "--learning-rate 0.003 --precision auto --eval-interval 0 --seed 0 --warmup-steps 5"
    ) in instructions
    assert "celery -A portal worker -Q gpu -c 1 --prefetch-multiplier 1" in instructions
    assert "No execution recipe" not in instructions


def test_it_says_when_a_recipe_was_reviewed(seed_recipe):
    apply_transitions(seed_recipe, "check_source")
    text = render_part(Recipe.objects.get(pk=seed_recipe.pk).protocol)
    assert "1 reviewed execution recipe; 1 execution recipe linked" in text
    assert "source checked (parameters checked against the protocol's source)" in text
    assert "No runnable recipe has been reviewed" not in text
    assert "Reviewed recipe <code>nt-v1-500m-ia3-splice-sites-all-10000-steps</code>" in text


def test_it_reads_the_recipes_once_per_protocol_however_often_asked(timed_protocol):
    for n in range(3):
        make_tiny_recipe(timed_protocol, stable_id=f"tiny-{n}")
    with CaptureQueriesContext(connection) as captured:
        render_part(timed_protocol, "line")
        render_part(timed_protocol, "instructions")
    assert len(captured) == 1


def test_it_links_a_measured_evaluation_to_its_job(tiny_recipe, operator, broker):
    job = running_job(tiny_recipe, operator)
    benchmark_job_succeed(job_id=job.pk, attempt=1, report=fake_report())
    job.refresh_from_db()
    text = job_part(job.evaluation)["benchmark_job"]
    assert f'<a href="/benchmarks/jobs/{job.pk}/">benchmark job {job.pk}</a>' in text
    assert f"/benchmarks/jobs/{job.pk}/report.json" in text
    assert job_part(EvaluationFactory())["benchmark_job"].strip() == ""  # author-reported


def test_it_hides_the_worker_host_only_where_the_whole_name_stands():
    from benchmarks.views import public_text

    text = "CUDA out of memory on node7 while node7b and node7.lab ran; see node7's log"
    assert public_text(text, worker_host="node7") == (
        "CUDA out of memory on a worker while node7b and node7.lab ran; see a worker's log"
    )
