"""The benchmark operator queues the seed recipe (500M shape, 10,000 steps) with the tiny preset from
the admin (a smoke test: 20 steps, not the recipe's 10,000), finds the job in the job list named by what it runs, cancels it there, and
the job's public page says it was cancelled, by whom and why."""

from __future__ import annotations

import pytest

from benchmarks.models import BenchmarkJob, JobStatus
from tests.browser.conftest import admin_login, axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def no_broker(monkeypatch):
    """The job's message goes nowhere: this test is about the admin, not the worker."""
    from celery import current_app

    from benchmarks.tasks import benchmark_job_run

    monkeypatch.setattr(benchmark_job_run, "apply_async", lambda *args, **kwargs: None)
    monkeypatch.setattr(current_app.control, "revoke", lambda *args, **kwargs: None)


def run_action(page, action: str, pk: int) -> None:
    page.check(f'input.action-select[value="{pk}"]')
    page.select_option('select[name="action"]', action)
    page.get_by_role("button", name="Run").or_(page.get_by_role("button", name="Go")).first.click()


def test_the_operator_queues_the_tiny_preset_from_the_admin_and_cancels_it(
    browser, live_server, seeded, make_user, no_broker
):
    from benchmarks.seed import seed_recipes

    [(recipe, _created)] = seed_recipes()
    assert (recipe.preset, recipe.steps) == ("nt-v1-500m", 10_000)
    make_user("benchmark_operator", "benchmark-operator")
    context = browser.new_context(base_url=live_server.url, bypass_csp=True)  # axe-core is an inline script
    page = context.new_page()
    page.set_default_timeout(15_000)
    admin_login(page, "benchmark-operator")

    page.goto("/admin/benchmarks/recipe/")
    run_action(page, "queue_job_with_overrides", recipe.pk)
    page.wait_for_selector("#queue-job-form")
    assert "Blank: 10000 (the recipe's)" in page.locator("#queue-job-form").inner_text()
    assert axe_violations(page) == []

    page.fill("#id_steps", "0")  # a slip first: said on its field, nothing queued
    page.get_by_role("button", name="Queue the job").click()
    page.wait_for_selector("#id_steps_errors")
    assert "Correct the field marked below: Steps." in page.locator("#form-errors").inner_text()
    assert not BenchmarkJob.objects.exists()

    page.select_option("#id_preset", "tiny")  # a smoke test: the steps left blank
    page.fill("#id_steps", "")
    page.get_by_role("button", name="Queue the job").click()
    page.wait_for_url("**/admin/benchmarks/benchmarkjob/?id__in=*")
    job = BenchmarkJob.objects.get()
    # the queued job runs the tiny preset's few steps, not the recipe's 10,000
    assert (job.parameters["preset"], job.parameters["steps"], job.parameters["warmup_steps"]) == ("tiny", 20, 2)
    label = "tiny on splice_sites_all, 20 steps, batch 8"
    assert f"Queued: job {job.pk} ({label})" in page.locator(".messagelist").inner_text()
    row = page.locator("#result_list tbody tr", has=page.locator(f'input.action-select[value="{job.pk}"]'))
    assert row.count() == 1 and f"Job {job.pk}: {label}" in row.inner_text()
    assert axe_violations(page) == []

    run_action(page, "cancel_jobs", job.pk)
    page.wait_for_selector(f"text=Cancelled: job {job.pk} ({label})")
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED

    public = browser.new_page(base_url=live_server.url)  # a reader without an account
    public.goto(f"/benchmarks/jobs/{job.pk}/")
    ending = public.locator("#job-ending").inner_text()
    assert ending.startswith(f"Cancelled on {job.finished_at:%Y-%m-%d} at {job.finished_at:%H:%M:%S} UTC")
    assert "by benchmark operator: cancelled in the admin." in ending
    assert "No evaluation yet" not in public.content() and "benchmark-operator" not in public.content()
    public.close()
    context.close()
