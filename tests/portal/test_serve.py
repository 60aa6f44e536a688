"""The embedded default's processes as `bin/serve` runs them (`bin/_serve_processes`): gunicorn, a worker
on the default and releases queues with beat, and a gpu worker, on the test database and the filesystem
queue. A release cut while a benchmark job runs is published within seconds (the job has its own
worker), and Ctrl-C (SIGINT to the process group, as a terminal sends it) stops everything cleanly in a
few seconds, the second time as the first, leaving a running job to the sweeper."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest

from bench.fresh_start import default_sigint, free_port, kill_session
from benchmarks.models import BenchmarkJob, JobStatus
from benchmarks.services import benchmark_job_enqueue, benchmark_jobs_sweep
from releases.models import ReleaseBuild, ReleaseStatus
from releases.services import release_cut
from tests.benchmarks.conftest import make_tiny_recipe
from tests.conftest import database_url_for

# bin/serve runs the embedded default: CI runs this once, in its embedded pass.
pytestmark = [
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.backend_independent,
    pytest.mark.embedded_pass,
]

ROOT = Path(__file__).resolve().parents[2]
#: The script escalates to a cold shutdown after 10 s and to SIGKILL after 20 s: a clean stop (exit
#: 0) ends before the kill. On a quiet machine it takes about 4 s; on a loaded CI machine a worker's
#: warm shutdown and beat's have taken over 8 s.
STOP_LIMIT_SECONDS = 20


def wait_for(check, *, timeout: float, what: str, log=lambda: ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{log()[-5000:]}")


class Served:
    """bin/_serve_processes, started on the test database; `stop()` sends what Ctrl-C sends."""

    def __init__(self, log_path: Path, env: dict[str, str]):
        self.log_path = log_path
        self.port = free_port()
        self.log_file = open(log_path, "w")
        self.process = subprocess.Popen(
            ["bin/_serve_processes"],
            cwd=ROOT,
            env={**env, "PORTAL_BIND": f"127.0.0.1:{self.port}"},
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=default_sigint,
        )

    def log(self) -> str:
        if not self.log_file.closed:
            self.log_file.flush()
        return self.log_path.read_text()

    def status(self, path: str) -> int | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as answer:
                return answer.status
        except urllib.error.HTTPError as error:
            return error.code
        except OSError:
            return None

    def wait_ready(self) -> None:
        wait_for(lambda: self.status("/") == 200, timeout=120, what="the site", log=self.log)
        wait_for(
            lambda: self.log().count(" ready.") >= 2,
            timeout=120,
            what="both workers (celery prints '<name>@<host> ready.')",
            log=self.log,
        )

    def stop(self) -> tuple[float, int]:
        started = time.monotonic()
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill_session(self.process.pid)
            code = self.process.wait()
        return time.monotonic() - started, code

    def assert_stopped_cleanly(self, seconds: float, code: int) -> None:
        log = self.log()
        assert code == 0, log[-5000:]
        assert seconds < STOP_LIMIT_SECONDS, log[-5000:]
        assert "SIGKILL" not in log and "killing what is left" not in log, log[-5000:]
        assert "bin/serve: stopped" in log
        # Nothing it started outlives it: the port is free again.
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds: past TIME_WAIT
            probe.bind(("127.0.0.1", self.port))


@pytest.fixture
def serve(tmp_path, settings, monkeypatch):
    from django.db import connection

    settings.RELEASES_DIR = tmp_path / "releases"
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor),
        "PORTAL_PYTHON": sys.executable,
        "PORTAL_RUNNER_INSTALL": "off",  # the test environment has the runner
        "PORTAL_RELEASES_DIR": str(settings.RELEASES_DIR),
        "PORTAL_LOG_FORMAT": "plain",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
    }
    started: list[Served] = []

    def start() -> Served:
        served = Served(tmp_path / f"serve-{len(started)}.log", env)
        started.append(served)
        return served

    yield start
    for served in started:
        if served.process.poll() is None:
            served.stop()
        served.log_file.close()
        print(f"--- {served.log_path} ---\n{served.log()[-4000:]}")


def test_it_publishes_a_release_cut_while_a_benchmark_job_runs_and_stops_cleanly_twice(seeded, make_user, serve):
    from portal.celery import app

    with app.connection_for_write() as connection:
        for queue in ("default", "releases", "gpu"):
            connection.default_channel.queue_purge(queue)  # messages an earlier run may have left
    operator = make_user("benchmark_operator", "operator-one")
    release_manager = make_user("release_manager", "release-manager-one")
    from records.models import Protocol
    from records.seed import PROTOCOL_ID

    recipe = make_tiny_recipe(Protocol.objects.get(stable_id=PROTOCOL_ID))

    served = serve()
    served.wait_ready()
    # The default worker runs beat's heartbeat (every 30 s), which /readyz checks.
    wait_for(lambda: served.status("/readyz") == 200, timeout=90, what="/readyz", log=served.log)

    # A CPU benchmark job that runs for minutes occupies the gpu worker ...
    job = benchmark_job_enqueue(recipe=recipe, requested_by=operator, overrides={"steps": 200_000})
    wait_for(
        lambda: BenchmarkJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING, progress_step__gt=0).exists(),
        timeout=120,
        what="the job to run",
        log=served.log,
    )
    # ... and a release cut meanwhile is built and published by the other worker, within seconds.
    cut_at = time.monotonic()
    release = release_cut(actor=release_manager)
    wait_for(
        lambda: (
            ReleaseBuild.objects.filter(pk=release.pk, status__in=(ReleaseStatus.PUBLISHED, ReleaseStatus.FAILED))
            .exclude(status=ReleaseStatus.REQUESTED)
            .exists()
        ),
        timeout=60,
        what="the release to be published",
        log=served.log,
    )
    published_in = time.monotonic() - cut_at
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PUBLISHED, release.build.error
    assert published_in < 30, published_in
    print(f"release published {published_in:.1f} s after its cut, beside a running job")
    assert BenchmarkJob.objects.get(pk=job.pk).status == JobStatus.RUNNING  # the job never blocked it

    # Ctrl-C: everything stops in a few seconds, cleanly; the job stays "running" with its heartbeat
    # stopped, which is what the sweeper recovers.
    seconds, code = served.stop()
    print(f"first stop: {seconds:.1f} s")
    served.assert_stopped_cleanly(seconds, code)
    stopped = BenchmarkJob.objects.get(pk=job.pk)
    assert (stopped.status, stopped.attempts) == (JobStatus.RUNNING, 1)
    report = benchmark_jobs_sweep(stale_after=timedelta(0))
    assert report.requeued == [job.pk]
    requeued = BenchmarkJob.objects.get(pk=job.pk)
    assert requeued.status == JobStatus.QUEUED and requeued.celery_task_id != stopped.celery_task_id

    # The second start and stop: the requeued job is taken up again, and Ctrl-C is as quick and clean.
    again = serve()
    again.wait_ready()
    wait_for(
        # running again and past its first step, as at the first stop: a Ctrl-C within a second of the
        # gpu worker taking the job up (its pool child being replaced) has left a process that its cold
        # shutdown does not end, and bin/serve then ends it at 10 s (the sweeper recovers the job
        # either way)
        lambda: BenchmarkJob.objects.filter(
            pk=job.pk, status=JobStatus.RUNNING, attempts=2, progress_step__gt=0
        ).exists(),
        timeout=120,
        what="the requeued job to run again",
        log=again.log,
    )
    seconds, code = again.stop()
    print(f"second stop: {seconds:.1f} s")
    again.assert_stopped_cleanly(seconds, code)
