"""A benchmark run landing as an evaluation is found by search at once (records.search_index,
through records' services), with the value it measured."""

from __future__ import annotations

import pytest

from benchmarks.execution import benchmark_job_claim, benchmark_job_succeed
from benchmarks.services import benchmark_job_enqueue
from records.search import search
from tests.benchmarks.conftest import fake_report

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.benchmarks.urls_for_tests")]


def test_a_measured_evaluation_is_found_by_its_title_and_its_value(seed_recipe, operator, broker):
    job = benchmark_job_enqueue(recipe=seed_recipe, requested_by=operator, overrides={})
    benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-host-1")
    benchmark_job_succeed(job_id=job.pk, attempt=1, report=fake_report())
    job.refresh_from_db()
    evaluation = job.evaluation
    found = {(hit.type, hit.stable_id) for hit in search(query=evaluation.stable_id).hits}
    assert ("evaluation", evaluation.stable_id) in found
    result = evaluation.results.get()
    hits = search(query=str(result.value), record_type="result").hits
    assert result.stable_id in {hit.stable_id for hit in hits}
