"""Celery tasks of the benchmarks app. Thin: they take ids and call the worker side (`benchmarks.execution`,
`benchmarks.sweeper`).

`benchmark_job_run` goes to the `gpu` queue (CELERY_TASK_ROUTES); its message is only a nudge, so a
second delivery, or a message for a cancelled or finished job, does nothing. It acknowledges late
(a worker that dies mid-run leaves the message unacknowledged) and is sent with the time limits of
its preset (`benchmarks.presets.PRESETS`), by `benchmark_job_send`.

Imports point one way: `benchmarks.services` (the request side) imports this module to send
messages; this module imports `benchmarks.execution` and `benchmarks.sweeper`, which import neither.
The sweeper re-sends through the `send` it is given (`benchmark_job_send`, from here).
"""

from __future__ import annotations

import socket

from celery import shared_task
from django.db import transaction

from benchmarks import execution, sweeper
from benchmarks.models import BenchmarkJob
from benchmarks.presets import time_limits


@shared_task(name="benchmarks.tasks.benchmark_job_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def benchmark_job_run(self, job_pk: int) -> str:
    return execution.benchmark_job_execute(
        job_id=job_pk, task_id=self.request.id or "", worker_host=self.request.hostname or socket.gethostname()
    )


@shared_task(name="benchmarks.tasks.benchmark_jobs_sweep")
def benchmark_jobs_sweep() -> dict[str, list[int]]:
    return sweeper.benchmark_jobs_sweep(send=benchmark_job_send).as_dict()


def benchmark_job_send(*, job: BenchmarkJob) -> None:
    """After the commit, send the job's message (its id is already on the row) to the gpu queue.

    A broker that cannot be reached leaves the job queued: the sweeper sends it again later.
    """
    job_id, task_id, limits = job.pk, job.celery_task_id, time_limits(job.parameters.get("preset"))

    def send() -> None:
        benchmark_job_run.apply_async(
            args=[job_id], task_id=task_id, soft_time_limit=limits.soft, time_limit=limits.hard
        )

    transaction.on_commit(send, robust=True)
