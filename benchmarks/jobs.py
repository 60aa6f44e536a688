"""The benchmark job's lifecycle: its status table, its refusals, and `JOBS`, the `common.lifecycle`
binding through which every status change, claim, heartbeat and sweep of a job goes.

Both sides use it: the request side (`benchmarks.services`: queue, cancel, rerun) and the worker
side (`benchmarks.execution`: claim, run, record, sweep). It imports neither of them, nor the tasks.
"""

from __future__ import annotations

from celery import current_app
from django.db import transaction

from benchmarks.models import BenchmarkJob, JobEvent, JobStatus
from common.errors import DomainError
from common.lifecycle import NEW, Lifecycle, TransitionTable
from reviews.roles import role_label_for

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    JobStatus.QUEUED,
    JobStatus.RUNNING,
    JobStatus.SUCCEEDED,
    JobStatus.FAILED,
    JobStatus.CANCELLED,
)


class JobError(DomainError):
    """A refused request; `errors` maps each field to its reason (one or several)."""

    def __init__(self, message: str, *, field: str | None = None, errors: dict[str, str] | None = None):
        super().__init__(message, field=field)
        self.errors = errors or {self.field: message}


class JobInvalid(JobError):
    status = 400


class JobForbidden(JobError):
    status = 403
    code = "permission_denied"


class JobConflict(JobError):
    status = 409
    code = "conflict"


#: The legal status changes, as data: (from, to) -> what it is. NEW ("") is a job being created.
STATUS_CHANGES = TransitionTable(
    states=tuple(JobStatus.values),
    moves={
        (NEW, QUEUED): "queue",
        (QUEUED, QUEUED): "re-send",  # not a change of status, but the message sent again: audited all the same
        (QUEUED, RUNNING): "claim",
        (RUNNING, SUCCEEDED): "succeed",
        (RUNNING, FAILED): "fail",
        (RUNNING, QUEUED): "requeue",  # the worker was lost; another attempt is allowed
        (QUEUED, CANCELLED): "cancel",
        (RUNNING, CANCELLED): "cancel",
    },
    terminal=frozenset({SUCCEEDED, FAILED, CANCELLED}),
    working=frozenset({RUNNING}),
)

#: A job's claim is its attempt number: a heartbeat or a report of attempt N counts only while the
#: row is running attempt N.
JOBS: Lifecycle[BenchmarkJob] = Lifecycle(
    model=BenchmarkJob,
    table=STATUS_CHANGES,
    event_model=JobEvent,
    event_row_field="job",
    label="benchmark job",
    claim_field="attempts",
    heartbeat_field="heartbeat_at",
    started_field="started_at",
    event_fields=lambda actor: {"actor_role": role_label_for(actor)},
    refused=JobConflict,
)


def revoke_after_commit(*, task_id: str, terminate: bool) -> None:
    """Tell the workers to drop the message (a queued job's, or a second delivery of a running one's).

    `terminate` also sends SIGTERM to the prefork child running the task: the sweeper's last resort
    for a run whose worker stopped answering. A cancelled run is not terminated: it stops by itself
    at its next progress point or heartbeat, when the row says it is no longer this attempt's.
    """
    if not task_id:
        return

    def revoke() -> None:
        current_app.control.revoke(task_id, terminate=terminate, signal="SIGTERM")

    transaction.on_commit(revoke, robust=True)
