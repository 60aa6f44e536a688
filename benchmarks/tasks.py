"""Celery tasks of the benchmarks app. Thin: they take ids and call one service.

`benchmark_job_run` goes to the `gpu` queue (CELERY_TASK_ROUTES); its message is only a nudge, so a
second delivery, or a message for a cancelled or finished job, does nothing. It acknowledges late
(a worker that dies mid-run leaves the message unacknowledged) and is sent with the time limits of
its preset (`benchmarks.presets.PRESETS`).
"""

from __future__ import annotations

import socket

from celery import shared_task

from benchmarks import services


@shared_task(name="benchmarks.tasks.benchmark_job_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def benchmark_job_run(self, job_pk: int) -> str:
    return services.benchmark_job_execute(
        job_id=job_pk, task_id=self.request.id or "", worker_host=self.request.hostname or socket.gethostname()
    )


@shared_task(name="benchmarks.tasks.benchmark_jobs_sweep")
def benchmark_jobs_sweep() -> dict[str, list[int]]:
    return services.benchmark_jobs_sweep().as_dict()
