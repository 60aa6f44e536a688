"""The broker restarts while jobs are queued: nothing is lost, and the jobs run once it is back."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.models import BenchmarkJob, JobStatus
from tests.benchmarks.conftest import make_tiny_recipe
from tests.conftest import database_url_for

pytestmark = [pytest.mark.worker, pytest.mark.backend_independent, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
JOBS = 3


def test_queued_jobs_survive_a_broker_restart_and_run_after_it(
    private_redis, timed_protocol, make_user, start_worker, tmp_path
):
    from django.db import connection

    recipe = make_tiny_recipe(timed_protocol, steps=10)
    make_user("benchmark_operator", "fault-operator")
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor),
        "REDIS_URL": private_redis.url,
        "CACHE_URL": private_redis.url.replace("/0", "/1"),
        "PORTAL_VAR_DIR": str(tmp_path / "var"),
    }
    for _ in range(JOBS):  # the operator's own command, through the private broker
        subprocess.run(
            [sys.executable, "manage.py", "run_benchmark", "--recipe", recipe.stable_id, "--user", "fault-operator"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
    assert BenchmarkJob.objects.filter(status=JobStatus.QUEUED).count() == JOBS

    private_redis.stop()
    private_redis.start()  # same port, same append-only file

    start_worker(
        "gpu", env={key: env[key] for key in ("REDIS_URL", "CACHE_URL", "PORTAL_VAR_DIR")} | {"OMP_NUM_THREADS": "1"}
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and BenchmarkJob.objects.filter(status=JobStatus.SUCCEEDED).count() < JOBS:
        assert not BenchmarkJob.objects.filter(status=JobStatus.FAILED).exists(), BenchmarkJob.objects.values_list(
            "error", flat=True
        )
        time.sleep(0.5)
    assert BenchmarkJob.objects.filter(status=JobStatus.SUCCEEDED).count() == JOBS
    assert all(job.attempts == 1 and job.evaluation_id for job in BenchmarkJob.objects.all())
