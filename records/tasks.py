"""Celery tasks of the records app. Thin: they take ids and call the worker side (`records.jobs`).

`import_job_run` runs one import job (the `default` queue); its message is only a nudge, so a
second delivery, or a message for a finished job, does nothing. It acknowledges late (a worker that
dies mid-import leaves the message unacknowledged, and the sweeper queues the job again).
`import_jobs_sweep` is the reaper, run by beat every minute.

Imports point one way: `records.import_jobs` (the request side) imports this module to send
messages; this module imports `records.jobs`, which imports neither.
"""

from __future__ import annotations

import socket

from celery import Task, shared_task
from django.db import transaction

from records import jobs
from records.models import ImportJob


@shared_task(name="records.tasks.import_job_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def import_job_run(self: Task, job_pk: int) -> str:
    return jobs.import_job_execute(
        job_id=job_pk, task_id=self.request.id or "", worker_host=self.request.hostname or socket.gethostname()
    )


@shared_task(name="records.tasks.import_jobs_sweep")
def import_jobs_sweep() -> dict[str, list[int]]:
    return jobs.import_jobs_sweep(send=import_job_send).as_dict()


def import_job_send(*, job: ImportJob) -> None:
    """After the commit, send the job's message (its id is already on the row).

    A broker that cannot be reached leaves the job queued: the sweeper sends it again later.
    """
    job_id, task_id = job.pk, job.celery_task_id

    def send() -> None:
        import_job_run.apply_async(args=[job_id], task_id=task_id)

    transaction.on_commit(send, robust=True)
