"""Operators' ways in besides the API: admin actions and `manage.py run_benchmark`; who may use them."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from benchmarks.models import BenchmarkJob, JobEvent, JobStatus, Recipe
from benchmarks.services import benchmark_job_enqueue, recipe_save
from reviews.models import ReviewState
from reviews.services import review_transition_apply

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.benchmarks.urls_for_tests")]

ROLES = ["curator", "release_manager", "benchmark_operator", "superuser"]
OPERATES = {"benchmark_operator", "superuser"}


def logged_in(make_user, role):
    client = Client()
    user = make_user(role)
    client.force_login(user)
    return client, user


@pytest.mark.parametrize("role", ROLES)
def test_it_queues_from_the_recipe_admin_for_operators_only(tiny_recipe, make_user, broker, role):
    client, _ = logged_in(make_user, role)
    response = client.post(
        reverse("admin:benchmarks_recipe_changelist"), {"action": "queue_job", "_selected_action": [tiny_recipe.pk]}
    )
    if role in OPERATES:
        assert response.status_code == 302
        job = BenchmarkJob.objects.get()
        assert job.recipe == tiny_recipe and job.status == JobStatus.QUEUED
    else:
        assert response.status_code in (200, 302, 403)
        assert BenchmarkJob.objects.count() == 0


@pytest.mark.parametrize("role", ROLES)
def test_it_cancels_and_reruns_from_the_job_admin_for_operators_only(tiny_recipe, operator, make_user, broker, role):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    client, _ = logged_in(make_user, role)
    changelist = reverse("admin:benchmarks_benchmarkjob_changelist")
    client.post(changelist, {"action": "cancel_jobs", "_selected_action": [job.pk]})
    job.refresh_from_db()
    assert (job.status == JobStatus.CANCELLED) == (role in OPERATES)
    client.post(changelist, {"action": "rerun_jobs", "_selected_action": [job.pk]})
    assert BenchmarkJob.objects.filter(rerun_of=job).exists() == (role in OPERATES)


def test_it_shows_jobs_read_only_with_their_events(tiny_recipe, operator, broker):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    client = Client()
    client.force_login(operator)
    page = client.get(reverse("admin:benchmarks_benchmarkjob_change", args=[job.pk]))
    assert page.status_code == 200
    assert f"queued from recipe {tiny_recipe.stable_id}" in page.content.decode()
    before = BenchmarkJob.objects.values().get(pk=job.pk)
    client.post(reverse("admin:benchmarks_benchmarkjob_change", args=[job.pk]), {"status": "succeeded"})
    assert BenchmarkJob.objects.values().get(pk=job.pk) == before
    assert (
        client.post(reverse("admin:benchmarks_benchmarkjob_delete", args=[job.pk]), {"post": "yes"}).status_code == 403
    )
    assert client.get(reverse("admin:benchmarks_jobevent_changelist")).status_code == 200
    assert JobEvent.objects.count() == 1


def test_it_reviews_a_recipe_like_a_record_and_reopens_it_when_a_run_field_changes(tiny_recipe, make_user, operator):
    curator = make_user("curator")
    client = Client()
    client.force_login(curator)
    response = client.post(
        reverse("admin:benchmarks_recipe_transition", args=[tiny_recipe.pk]),
        {"transition": "check_source", "reason": "", "expected_state": "proposed"},
    )
    assert response.status_code == 302
    tiny_recipe.refresh_from_db()
    assert tiny_recipe.review_state == ReviewState.SOURCE_CHECKED
    tiny_recipe.notes = "A clarification."
    recipe_save(recipe=tiny_recipe, actor=operator, changed_fields=["notes"])
    tiny_recipe.refresh_from_db()
    assert tiny_recipe.review_state == ReviewState.SOURCE_CHECKED  # notes are not a run field
    tiny_recipe.steps = 80
    recipe_save(recipe=tiny_recipe, actor=operator, changed_fields=["steps"])
    tiny_recipe.refresh_from_db()
    assert tiny_recipe.review_state == ReviewState.PROPOSED
    assert tiny_recipe.history.first().history_change_reason == "Reopen: edited: steps"


def test_an_edited_excluded_recipe_stays_excluded_awaiting_its_recheck(tiny_recipe, make_user, operator):
    """Recipes follow the catalogue's one reopen-on-edit rule (records.services.record_save)."""
    curator = make_user("curator")
    review_transition_apply(record=tiny_recipe, transition="check_source", actor=curator)
    review_transition_apply(
        record=tiny_recipe, transition="exclude", actor=curator, reason="Steps differ from the paper's."
    )
    tiny_recipe.refresh_from_db()
    tiny_recipe.steps = 90
    recipe_save(recipe=tiny_recipe, actor=operator, changed_fields=["steps"])
    tiny_recipe.refresh_from_db()
    assert tiny_recipe.review_state == ReviewState.EXCLUDED_RECHECK
    assert tiny_recipe.concern == "Steps differ from the paper's."


def test_it_edits_a_recipe_in_the_admin_with_history_and_validation(tiny_recipe, operator):
    client = Client()
    client.force_login(operator)
    url = reverse("admin:benchmarks_recipe_change", args=[tiny_recipe.pk])
    form = {
        "title": tiny_recipe.title,
        "protocol": tiny_recipe.protocol_id,
        "preset": "tiny",
        "task": "promoter_tata",
        "steps": 60,
        "batch_size": 4,
        "learning_rate": 0.003,
        "precision": "auto",
        "eval_interval": 0,
        "seed": 0,
        "warmup_steps": 2,
        "notes": "",
    }
    assert client.post(url, {**form, "preset": "gpt-5"}).status_code == 200  # the form shows the error
    assert Recipe.objects.get(pk=tiny_recipe.pk).preset == "tiny"
    assert client.post(url, form).status_code == 302
    recipe = Recipe.objects.get(pk=tiny_recipe.pk)
    assert recipe.steps == 60 and recipe.history.first().history_user == operator


def test_it_queues_from_the_command_line_and_prints_the_job(tiny_recipe, operator, broker):
    out = StringIO()
    call_command(
        "run_benchmark", "--recipe", tiny_recipe.stable_id, "--user", operator.username, "--steps", "25", stdout=out
    )
    job = BenchmarkJob.objects.get()
    assert job.parameters["steps"] == 25 and job.requested_by == operator
    assert out.getvalue().strip() == f"queued benchmark job {job.pk}: /benchmarks/jobs/{job.pk}/"


@pytest.mark.parametrize("role", ["curator", "release_manager"])
def test_it_refuses_non_operators_on_the_command_line(tiny_recipe, make_user, broker, role):
    user = make_user(role)
    with pytest.raises(CommandError, match="you do not have permission to queue benchmark jobs"):
        call_command("run_benchmark", "--recipe", tiny_recipe.stable_id, "--user", user.username)
    assert BenchmarkJob.objects.count() == 0


def test_it_names_a_bad_option_on_the_command_line(tiny_recipe, operator, broker):
    with pytest.raises(CommandError, match="no recipe 'nope'"):
        call_command("run_benchmark", "--recipe", "nope", "--user", operator.username)
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("run_benchmark", "--recipe", tiny_recipe.stable_id, "--user", "nobody")
    with pytest.raises(CommandError, match="warmup_steps"):
        call_command("run_benchmark", "--recipe", tiny_recipe.stable_id, "--user", operator.username, "--steps", "2")


def test_it_exits_non_zero_with_one_line_for_a_non_operator(tiny_recipe, make_user, broker, capsys):
    from django.core.management import ManagementUtility

    user = make_user("curator")
    with pytest.raises(SystemExit) as exited:
        ManagementUtility(
            ["manage.py", "run_benchmark", "--recipe", tiny_recipe.stable_id, "--user", user.username]
        ).execute()
    assert exited.value.code == 1
    assert (
        capsys.readouterr().err.strip().splitlines()[-1]
        == "CommandError: you do not have permission to queue benchmark jobs"
    )


@pytest.mark.django_db(transaction=True)
def test_it_follows_the_job_to_its_end_with_wait(tiny_recipe, operator, monkeypatch):
    from benchmarks import execution
    from benchmarks.tasks import benchmark_job_run
    from tests.benchmarks.conftest import fake_report

    def a_worker_runs_it(args=None, task_id=None, **options):
        execution.benchmark_job_claim(job_id=args[0], task_id=task_id, worker_host="gpu-1")
        execution.benchmark_job_succeed(job_id=args[0], attempt=1, report=fake_report(seconds=30))

    monkeypatch.setattr(benchmark_job_run, "apply_async", a_worker_runs_it)
    out = StringIO()
    call_command(
        "run_benchmark",
        "--recipe",
        tiny_recipe.stable_id,
        "--user",
        operator.username,
        "--wait",
        "--poll",
        "0",
        stdout=out,
    )
    assert "succeeded: 30.000 s" in out.getvalue()
    assert "proposed evaluation benchmark-job-" in out.getvalue()
