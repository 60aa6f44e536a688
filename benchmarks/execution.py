"""The worker's side of a benchmark job: claim it, run it watched, record what came of it.

`benchmark_job_execute` is the gpu task's body. The claim is one conditional UPDATE
(`common.lifecycle.Lifecycle.claim`): queued, this attempt count and the message the row names,
or nothing. Progress and heartbeat are conditional UPDATEs that tell the run whether the row is
still this attempt's; a report or an error is recorded only while it is (a job cancelled while it
finished stays cancelled). Every status change writes one `JobEvent` (`benchmarks.jobs.JOBS`).

Imports neither `benchmarks.services` nor `benchmarks.tasks`: they import this.
"""

from __future__ import annotations

import logging
import math
import platform
import traceback
from datetime import timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.utils import timezone

from benchmarks import conf
from benchmarks.jobs import FAILED, JOBS, QUEUED, RUNNING, SUCCEEDED
from benchmarks.measurement import measured_evaluation_create
from benchmarks.models import BenchmarkJob
from benchmarks.monitor import JobStopped, LogTail, run_measurement
from benchmarks.presets import time_limits
from records.values import exact_text

logger = logging.getLogger(__name__)

#: The figures of a report kept on the job (the whole report is kept beside them).
FIGURES = (
    "total_wall_time_s",
    "setup_time_s",
    "warmup_time_s",
    "training_loop_time_s",
    "eval_time_s",
    "steps_per_s",
    "tokens_per_s",
    "achieved_tflops",
    "peak_memory_bytes",
    "peak_memory_source",
    "loss_start",
    "loss_end",
    "sequence_length_tokens",
    "trainable_parameters",
    "total_parameters",
    "evaluations",
)


def benchmark_job_claim(*, job_id: int, task_id: str, worker_host: str) -> BenchmarkJob | None:
    """Take a queued job for the message the row names. Anything else leaves the row alone and
    returns None: a second delivery, a job already running, finished or cancelled, or a message the
    row no longer names (that of an attempt whose worker was lost, or one left in the broker from
    another database). A queued job's re-sends carry the same id: whichever copy arrives first claims."""
    with transaction.atomic():
        job = BenchmarkJob.objects.filter(pk=job_id).first()
        if job is None or job.status != QUEUED:
            logger.info(
                "benchmark job %s is %s: message %s does nothing", job_id, job.status if job else "gone", task_id
            )
            return None
        if task_id != job.celery_task_id:
            logger.info(
                "benchmark job %s waits for message %s: message %s does nothing", job_id, job.celery_task_id, task_id
            )
            return None
        attempt = job.attempts + 1
        claimed = JOBS.claim(
            row=job,
            to=RUNNING,
            match={"celery_task_id": task_id},
            reason=f"attempt {attempt} of {job.max_attempts} claimed by {worker_host} (message {task_id})",
            worker_host=worker_host[:200],
            progress_step=0,
            progress_total=job.parameters["steps"],
            error="",
            log_tail="",
        )
        if not claimed:  # another copy of the message, a cancel or the sweeper got there first
            logger.info("benchmark job %s changed meanwhile: message %s does nothing", job_id, task_id)
            return None
    return job


def benchmark_job_progress(*, job_id: int, attempt: int, step: int, total: int) -> bool:
    """Write progress and heartbeat; False when the row is no longer this attempt's (stop the run).

    Not a status change: one conditional UPDATE, no lock held across the run.
    """
    return JOBS.heartbeat(pk=job_id, claim=attempt, progress_step=min(step, total), progress_total=total)


def benchmark_job_heartbeat(*, job_id: int, attempt: int) -> bool:
    """Write the heartbeat; False when the row is no longer this attempt's."""
    return JOBS.heartbeat(pk=job_id, claim=attempt)


def _holding(job_id: int, attempt: int) -> BenchmarkJob | None:
    """The job, locked, while it is running this attempt; None once it is not (cancelled, taken over)."""
    job = JOBS.locked(job_id)
    if job is None or job.status != RUNNING or job.attempts != attempt:
        return None
    return job


def _json_safe(value: Any) -> Any:
    """`value` with every NaN and infinity, however deep, replaced by None: JSON has no such numbers
    (PostgreSQL's jsonb refuses them), and a diverged loss must not fail a run whose time was measured."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return value


def _environment(report: dict[str, Any] | None, worker_host: str) -> dict[str, Any]:
    environment: dict[str, Any] = {
        "worker_host": worker_host,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    if report:
        environment.update({key: report.get(key) for key in ("device", "device_name", "precision", "versions")})
    return environment


def benchmark_job_succeed(
    *, job_id: int, attempt: int, report: dict[str, Any], log_tail: str = ""
) -> BenchmarkJob | None:
    """Record a finished run: the proposed evaluation with its result, the figures, the report.

    Returns None (and records nothing) when the row is no longer this attempt's: a job cancelled
    while it finished stays cancelled.
    """
    with transaction.atomic():
        job = _holding(job_id, attempt)
        if job is None:
            logger.info("benchmark job %s is no longer attempt %s's: its report is discarded", job_id, attempt)
            return None
        report = _json_safe(report)
        evaluation = measured_evaluation_create(job=job, report=report)
        result = evaluation.results.get()
        JOBS.change(
            row=job,
            to=SUCCEEDED,
            reason=f"measured {exact_text(result.value)} {result.unit}; proposed evaluation {evaluation.stable_id}",
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
            progress_step=job.progress_total,
            report=report,
            figures={key: report.get(key) for key in FIGURES},
            environment=_environment(report, job.worker_host),
            log_tail=log_tail,
            evaluation=evaluation,
        )
    return job


def benchmark_job_fail(*, job_id: int, attempt: int, error: str, log_tail: str = "") -> BenchmarkJob | None:
    """Record a run that raised. Returns None when the row is no longer this attempt's."""
    with transaction.atomic():
        job = _holding(job_id, attempt)
        if job is None:
            logger.info(
                "benchmark job %s is no longer attempt %s's: its error is discarded: %s", job_id, attempt, error
            )
            return None
        JOBS.change(
            row=job,
            to=FAILED,
            reason=error.splitlines()[0][:500] if error else "failed",
            finished_at=timezone.now(),
            error=error,
            log_tail=log_tail,
            environment=_environment(None, job.worker_host),
        )
    return job


def benchmark_job_execute(*, job_id: int, task_id: str, worker_host: str) -> str:
    """The gpu task's body: claim the job, run it with progress and heartbeat, record the outcome.

    Returns what happened: "skipped" (not this message's to run), "succeeded", "failed", "stopped".
    """
    job = benchmark_job_claim(job_id=job_id, task_id=task_id, worker_host=worker_host)
    if job is None:
        return "skipped"
    attempt = job.attempts
    with LogTail() as log:
        logger.info("benchmark job %s attempt %s on %s", job_id, attempt, worker_host)
        try:
            report = run_measurement(
                parameters=job.parameters,
                write_progress=lambda step, total: benchmark_job_progress(
                    job_id=job_id, attempt=attempt, step=step, total=total
                ),
                beat=lambda: benchmark_job_heartbeat(job_id=job_id, attempt=attempt),
                heartbeat_interval=conf.heartbeat_interval(),
                log=log,
            )
        except JobStopped as stop:
            logger.info("benchmark job %s attempt %s stopped: %s", job_id, attempt, stop)
            return "stopped"
        except SoftTimeLimitExceeded:
            limit = time_limits(job.parameters.get("preset")).soft
            error = (
                f"soft time limit exceeded: preset {job.parameters.get('preset')} may run {timedelta(seconds=limit)}"
            )
            logger.error("benchmark job %s: %s", job_id, error)
            outcome = benchmark_job_fail(job_id=job_id, attempt=attempt, error=error, log_tail=log.text())
            return "failed" if outcome else "stopped"
        except Exception as exc:
            logger.exception("benchmark job %s failed", job_id)
            error = f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
            outcome = benchmark_job_fail(job_id=job_id, attempt=attempt, error=error, log_tail=log.text())
            return "failed" if outcome else "stopped"
        logger.info("benchmark job %s measured %.3f s", job_id, report["total_wall_time_s"])
        try:
            outcome = benchmark_job_succeed(job_id=job_id, attempt=attempt, report=report, log_tail=log.text())
        except Exception as exc:  # the run worked but its evaluation could not be written: say why on the row
            logger.exception("benchmark job %s: recording the measurement failed", job_id)
            error = f"recording the measurement failed: {type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
            benchmark_job_fail(job_id=job_id, attempt=attempt, error=error, log_tail=log.text())
            return "failed"
    return "succeeded" if outcome else "stopped"
