"""The reaper of benchmark jobs (beat, every minute: `benchmarks.tasks.benchmark_jobs_sweep`).

Built on `common.lifecycle.Lifecycle.sweep`: each job is locked in its own transaction and moved by
the status table, with its `JobEvent`; one that raises is logged and skipped. Messages go out
through the `send` the caller passes (`benchmarks.tasks.benchmark_job_send`): this module imports
neither the tasks nor the services, so that the tasks may import it.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any, Protocol

from django.db.models import Q
from django.utils import timezone

from benchmarks import conf
from benchmarks.jobs import FAILED, JOBS, QUEUED, RUNNING, revoke_after_commit
from benchmarks.models import BenchmarkJob
from benchmarks.presets import time_limits
from common.lifecycle import SweepReport


class Send(Protocol):
    """Sends a job's message after the commit (`benchmarks.tasks.benchmark_job_send`)."""

    def __call__(self, *, job: BenchmarkJob) -> None: ...


def _resend(*, job: BenchmarkJob, send: Send, now: datetime, reason: str, new_message_id: bool, **fields: Any) -> None:
    """Inside the caller's transaction, with the job locked: the job queued, its message sent after commit.

    A queued job's re-send keeps the message id (`new_message_id=False`): the copy already waiting
    keeps the job's place in the queue, and whichever copy a worker takes first claims the job, the
    other doing nothing. A new id is only for a message that must no longer claim the job: a running
    job whose worker was lost goes back to the queue, and its old message is revoked.
    """
    task_id = str(uuid.uuid4()) if new_message_id else job.celery_task_id
    JOBS.change(row=job, to=QUEUED, reason=reason, celery_task_id=task_id, sends=job.sends + 1, sent_at=now, **fields)
    send(job=job)


def _sweep_running(job: BenchmarkJob, *, send: Send, now: datetime, stale_after: timedelta) -> str | None:
    """One running job (locked): failed past its hard time limit, queued again (or failed) when its worker was lost."""
    preset = job.parameters.get("preset")
    hard = timedelta(seconds=time_limits(preset).hard)
    old_task = job.celery_task_id
    if job.started_at + hard < now:
        error = (
            f"hard time limit exceeded: preset {preset} may run {hard}; "
            f"attempt {job.attempts} started {job.started_at:%Y-%m-%d %H:%M:%S} UTC on {job.worker_host}"
        )
        JOBS.change(row=job, to=FAILED, reason=f"hard time limit of {hard} exceeded", finished_at=now, error=error)
        revoke_after_commit(task_id=old_task, terminate=True)
        return "failed"
    if not JOBS.is_stale(job, now=now, stale_after=stale_after):
        return None
    lost = f"worker {job.worker_host} lost: no heartbeat since {job.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC"
    if job.attempts < job.max_attempts:
        reason = f"{lost}; attempt {job.attempts} of {job.max_attempts}, queued again"
        _resend(job=job, send=send, now=now, reason=reason, new_message_id=True, progress_step=0)
        outcome = "requeued"
    else:
        JOBS.change(
            row=job,
            to=FAILED,
            reason=f"{lost}; no attempts left",
            finished_at=now,
            error=f"{lost} on attempt {job.attempts} of {job.max_attempts}: no attempts left",
        )
        outcome = "failed"
    # A worker that is alive after all must not go on with an attempt that is not its own.
    revoke_after_commit(task_id=old_task, terminate=True)
    return outcome


#: A queued job's re-send waits at most 2**this times `resend_after` (4x: 40 min by default).
MAX_BACKOFF_DOUBLINGS = 2


def _sweep_queued(job: BenchmarkJob, *, send: Send, now: datetime, resend_after: timedelta) -> str | None:
    """One queued job (locked) no worker started: its message sent again (same id) once its back-off is over.

    The back-off doubles with each re-send, up to 2**`MAX_BACKOFF_DOUBLINGS` times `resend_after` and no
    further: a broker that kept nothing through restarts (the chaos run's Redis lost the messages
    again and again) must not leave a job waiting hours for its next copy."""
    backoff = resend_after * 2 ** min(job.sends - 1, MAX_BACKOFF_DOUBLINGS)
    if job.sent_at >= now - backoff:
        return None
    reason = f"re-sent: no worker started message {job.celery_task_id} within {now - job.sent_at}"
    _resend(job=job, send=send, now=now, reason=reason, new_message_id=False)
    return "resent"


def benchmark_jobs_sweep(
    *,
    send: Send,
    now: datetime | None = None,
    resend_after: timedelta | None = None,
    stale_after: timedelta | None = None,
) -> SweepReport:
    """The reaper.

    * A queued job whose last message went out `resend_after` ago (doubling with each re-send) and
      that no worker started gets its message again, under the same id: the first may have been lost
      with a broker restart, a duplicate is harmless because claiming is idempotent, and a copy that
      is only waiting behind a long run keeps the job's place in the queue.
    * A running job whose heartbeat is older than `stale_after` lost its worker: it is queued again
      (with a new message id, the old message revoked) while it has attempts left, and fails after
      the last. A running job past its preset's hard time limit fails at once (its worker's child was
      killed, or the pool enforces no limits).

    Each job is swept in its own transaction; one that raises is logged and skipped, and the others
    are still swept.
    """
    now = now or timezone.now()
    resend_after = conf.resend_after() if resend_after is None else resend_after  # zero means "now"
    stale_after = conf.stale_after() if stale_after is None else stale_after
    running = JOBS.sweep(
        statuses=[RUNNING], visit=lambda job: _sweep_running(job, send=send, now=now, stale_after=stale_after)
    )
    queued = JOBS.sweep(
        statuses=[QUEUED],
        where=Q(sent_at__lt=now - resend_after),
        visit=lambda job: _sweep_queued(job, send=send, now=now, resend_after=resend_after),
    )
    report = SweepReport()
    for outcomes in (running, queued):
        for outcome, job_ids in outcomes.items():
            getattr(report, outcome).extend(job_ids)
    return report
