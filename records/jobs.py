"""The import job's lifecycle and its worker side: the status table, `IMPORT_JOBS` (the
`common.lifecycle` binding every status change, claim, heartbeat and sweep of an import job goes
through), the task's body (`import_job_execute`) and the reaper (`import_jobs_sweep`).

The row is the truth, a Celery message only a nudge: the worker claims the job by one conditional
UPDATE (queued, this attempt and the message the row names), runs `records_import` on the document
the row holds, and records the report or the errors while the row is still this attempt's. A
thread beside the import writes the heartbeat and the progress on its own database connection
(the import writes in one transaction of its own, whose rows nobody sees before it commits). An
import is all or nothing and idempotent by stable id, so a job whose worker was lost is simply run
again, and fails after its last attempt.

Imports neither `records.import_jobs` (the request side) nor `records.tasks`: they import this.
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Greatest
from django.utils import timezone
from rest_framework.utils.json import strict_constant

from common.errors import Conflict
from common.lifecycle import NEW, Lifecycle, SweepReport, TransitionTable, duration_setting
from common.parsers import JSONNumber
from records.imports import ImportConflict, ImportInvalid, records_import
from records.models import ImportJob, ImportJobEvent, ImportJobOutcome, ImportJobStatus
from reviews.roles import role_label_for

logger = logging.getLogger(__name__)

QUEUED, RUNNING, SUCCEEDED, FAILED = (
    ImportJobStatus.QUEUED,
    ImportJobStatus.RUNNING,
    ImportJobStatus.SUCCEEDED,
    ImportJobStatus.FAILED,
)


class ImportJobConflict(Conflict):
    default_field = "status"


#: The legal status changes, as data: (from, to) -> what it is. NEW ("") is a job being created.
STATUS_CHANGES = TransitionTable(
    states=tuple(ImportJobStatus.values),
    moves={
        (NEW, QUEUED): "queue",
        (QUEUED, QUEUED): "re-send",  # the message sent again: audited like a change
        (QUEUED, RUNNING): "claim",
        (RUNNING, SUCCEEDED): "succeed",
        (RUNNING, FAILED): "fail",
        (RUNNING, QUEUED): "requeue",  # the worker was lost; another attempt is allowed
    },
    terminal=frozenset({SUCCEEDED, FAILED}),
    working=frozenset({RUNNING}),
)

#: A job's claim is its attempt number: a heartbeat or an outcome of attempt N counts only while the
#: row is running attempt N.
IMPORT_JOBS: Lifecycle[ImportJob] = Lifecycle(
    model=ImportJob,
    table=STATUS_CHANGES,
    event_model=ImportJobEvent,
    event_row_field="job",
    label="import job",
    claim_field="attempts",
    event_fields=lambda actor: {"actor_role": role_label_for(actor)},
    refused=ImportJobConflict,
)


def heartbeat_interval() -> float:
    return float(getattr(settings, "IMPORT_JOB_HEARTBEAT_SECONDS", 2))


def stale_after() -> timedelta:
    return duration_setting("IMPORT_JOB_STALE_AFTER_SECONDS", 120)


def resend_after() -> timedelta:
    return duration_setting("IMPORT_JOB_RESEND_AFTER_SECONDS", 300)


def document_parse(text: str) -> Any:
    """The document's JSON text read as the API's parser reads a request (common.parsers): numbers
    with a fraction or exponent keep their digits, NaN and Infinity are refused (ValueError)."""
    return json.loads(text, parse_float=JSONNumber, parse_constant=strict_constant)


# --- the worker side ----------------------------------------------------------------------------


class ImportStopped(Exception):
    """The row is no longer this attempt's (taken over by the sweeper): the import must not commit."""


class Heartbeat:
    """Beside the import, on a thread of its own (so on a database connection of its own): every
    `interval` seconds one conditional UPDATE of the heartbeat and the progress the import last
    reported. `progress` is the import's callback; it raises ImportStopped once a heartbeat found
    the row no longer this attempt's, which rolls the import back.

    Between two of the import's batches (no transaction open on its connection) `progress` writes a
    heartbeat that is due itself: on SQLite the thread's UPDATE waits for the write lock, which the
    next batch can take first every time, so a fast import's progress would show only at its end.
    The progress written never goes back (a write that waited may carry an older count)."""

    def __init__(self, *, job_id: int, attempt: int, total: int, interval: float) -> None:
        self.job_id, self.attempt, self.interval = job_id, attempt, interval
        self.done, self.total = 0, total
        self.beaten = time.monotonic()  # when a heartbeat was last begun
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"import-job-{job_id}-heartbeat", daemon=True)

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = max(0, done), max(0, total)
        if not connection.in_atomic_block and time.monotonic() - self.beaten >= self.interval:
            self.beat()
        if self.lost.is_set():
            raise ImportStopped(f"import job {self.job_id} is no longer attempt {self.attempt}'s")

    def beat(self) -> None:
        self.beaten = time.monotonic()
        total = max(self.total, self.done)
        try:
            held = IMPORT_JOBS.heartbeat(
                pk=self.job_id,
                claim=self.attempt,
                progress_done=Greatest(F("progress_done"), Value(self.done)),
                progress_total=total,
            )
        except DatabaseError as exc:  # SQLite's write lock, held by the import's own transaction: next time
            logger.info("import job %s: heartbeat not written (%s)", self.job_id, exc)
            return
        if not held:
            self.lost.set()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                self.beat()
                if self.lost.is_set():
                    return
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def import_job_claim(*, job_id: int, task_id: str, worker_host: str) -> ImportJob | None:
    """Take a queued job for the message the row names; None (the row left alone) for anything else:
    a second delivery, a job already running or finished, a message the row no longer names."""
    with transaction.atomic():
        job = ImportJob.objects.filter(pk=job_id).first()
        if job is None or job.status != QUEUED:
            logger.info("import job %s is %s: message %s does nothing", job_id, job.status if job else "gone", task_id)
            return None
        if task_id != job.celery_task_id:
            logger.info("import job %s waits for message %s: %s does nothing", job_id, job.celery_task_id, task_id)
            return None
        attempt = job.attempts + 1
        claimed = IMPORT_JOBS.claim(
            row=job,
            to=RUNNING,
            match={"celery_task_id": task_id},
            reason=f"attempt {attempt} of {job.max_attempts} claimed by {worker_host} (message {task_id})",
            worker_host=worker_host[:200],
            progress_done=0,
            progress_total=job.record_count,
        )
        if not claimed:
            logger.info("import job %s changed meanwhile: message %s does nothing", job_id, task_id)
            return None
    return job


def _holding(job_id: int, attempt: int) -> ImportJob | None:
    job = IMPORT_JOBS.locked(job_id)
    if job is None or job.status != RUNNING or job.attempts != attempt:
        return None
    return job


def _finish(*, job_id: int, attempt: int, to: str, reason: str, **fields: Any) -> bool:
    """Record the outcome while the row is this attempt's; False (nothing recorded) once it is not."""
    with transaction.atomic():
        job = _holding(job_id, attempt)
        if job is None:
            logger.info("import job %s is no longer attempt %s's: its outcome is discarded", job_id, attempt)
            return False
        now = timezone.now()
        IMPORT_JOBS.change(row=job, to=to, reason=reason, finished_at=now, heartbeat_at=now, **fields)
    return True


def _run_import(job: ImportJob, progress: Callable[[int, int], None]) -> Any:
    keywords: dict[str, Any] = {}
    if "progress" in inspect.signature(records_import).parameters:
        keywords["progress"] = progress
    return records_import(
        document=document_parse(job.document),
        actor=job.requested_by,
        dry_run=job.dry_run,
        overwrite=list(job.overwrite or []),
        **keywords,
    )


def _counted(report: dict[str, Any]) -> str:
    created = sum(len(ids) for ids in report.get("created", {}).values())
    updated = sum(len(ids) for ids in report.get("updated", {}).values())
    unchanged = sum(report.get("unchanged", {}).values())
    return f"{created} created, {updated} updated, {unchanged} unchanged"


def import_job_execute(*, job_id: int, task_id: str, worker_host: str) -> str:
    """The task's body: claim the job, import its document with heartbeat and progress, record the
    report or the errors. Returns "skipped", "succeeded", "failed" or "stopped"."""
    job = import_job_claim(job_id=job_id, task_id=task_id, worker_host=worker_host)
    if job is None:
        return "skipped"
    attempt, total = job.attempts, job.record_count
    done: dict[str, Any]
    with Heartbeat(job_id=job_id, attempt=attempt, total=total, interval=heartbeat_interval()) as beat:
        try:
            report = _run_import(job, beat.progress).as_dict()
        except ImportStopped as stop:
            logger.info("import job %s attempt %s stopped: %s", job_id, attempt, stop)
            return "stopped"
        except ImportConflict as conflict:
            done = {
                "to": FAILED,
                "reason": f"refused: {len(conflict.errors)} fields changed on both sides",
                "outcome": ImportJobOutcome.CONFLICT,
                "detail": f"fields changed both here and in the document since its last import; {conflict.outcome}",
                "errors": conflict.errors,
            }
        except ImportInvalid as invalid:
            done = {
                "to": FAILED,
                "reason": f"refused: {len(invalid.errors)} errors in the document",
                "outcome": ImportJobOutcome.INVALID,
                "detail": f"the document is invalid; {invalid.outcome}",
                "errors": invalid.errors,
            }
        except Exception as exc:
            logger.exception("import job %s failed", job_id)
            done = {
                "to": FAILED,
                "reason": f"{type(exc).__name__}: {exc}"[:500],
                "outcome": ImportJobOutcome.ERROR,
                "detail": f"the import raised {type(exc).__name__}; nothing was written",
                "errors": [{"path": "document", "message": f"{type(exc).__name__}: {exc}"[:2000]}],
            }
        else:
            done = {
                "to": SUCCEEDED,
                "reason": ("dry run: " if job.dry_run else "imported: ") + _counted(report),
                "report": report,
                "progress_done": max(beat.total, total),
                "progress_total": max(beat.total, total),
            }
    if "progress_total" not in done:
        done["progress_done"], done["progress_total"] = min(beat.done, max(beat.total, total)), max(beat.total, total)
    recorded = _finish(job_id=job_id, attempt=attempt, **done)
    return str(done["to"]) if recorded else "stopped"


# --- the reaper ---------------------------------------------------------------------------------


Send = Callable[..., None]


def _resend(*, job: ImportJob, send: Send, now: datetime, reason: str, new_message_id: bool) -> None:
    task_id = str(uuid.uuid4()) if new_message_id else job.celery_task_id
    IMPORT_JOBS.change(
        row=job, to=QUEUED, reason=reason, celery_task_id=task_id, sends=job.sends + 1, sent_at=now, progress_done=0
    )
    send(job=job)


def _sweep_running(job: ImportJob, *, send: Send, now: datetime, stale: timedelta) -> str | None:
    if not IMPORT_JOBS.is_stale(job, now=now, stale_after=stale):
        return None
    beat = job.heartbeat_at or job.started_at
    lost = f"worker {job.worker_host} lost: no heartbeat since {beat:%Y-%m-%d %H:%M:%S} UTC"
    if job.attempts < job.max_attempts:
        _resend(
            job=job,
            send=send,
            now=now,
            reason=f"{lost}; attempt {job.attempts} of {job.max_attempts}, queued again",
            new_message_id=True,
        )
        return "requeued"
    IMPORT_JOBS.change(
        row=job,
        to=FAILED,
        reason=f"{lost}; no attempts left",
        finished_at=now,
        outcome=ImportJobOutcome.ERROR,
        detail=f"{lost} on attempt {job.attempts} of {job.max_attempts}: no attempts left; nothing was written",
    )
    return "failed"


def _sweep_queued(job: ImportJob, *, send: Send, now: datetime, resend: timedelta) -> str | None:
    if job.sent_at is not None and job.sent_at >= now - resend:
        return None
    reason = f"re-sent: no worker started message {job.celery_task_id} in time"
    _resend(job=job, send=send, now=now, reason=reason, new_message_id=False)
    return "resent"


def import_jobs_sweep(*, send: Send, now: datetime | None = None) -> SweepReport:
    """The reaper (beat, every minute): a running job whose heartbeat is older than
    `IMPORT_JOB_STALE_AFTER_SECONDS` lost its worker and is queued again under a new message id (or
    fails after its last attempt); a queued job whose message went out `IMPORT_JOB_RESEND_AFTER_SECONDS`
    ago and that no worker started gets its message again, under the same id (claiming is idempotent).
    Each job is swept in its own transaction (common.lifecycle.Lifecycle.sweep)."""
    now = now or timezone.now()
    stale, resend = stale_after(), resend_after()
    running = IMPORT_JOBS.sweep(
        statuses=[RUNNING], visit=lambda job: _sweep_running(job, send=send, now=now, stale=stale)
    )
    queued = IMPORT_JOBS.sweep(
        statuses=[QUEUED],
        where=Q(sent_at__lt=now - resend) | Q(sent_at__isnull=True),
        visit=lambda job: _sweep_queued(job, send=send, now=now, resend=resend),
    )
    report = SweepReport()
    for outcomes in (running, queued):
        for outcome, job_ids in outcomes.items():
            getattr(report, outcome).extend(job_ids)
    return report
