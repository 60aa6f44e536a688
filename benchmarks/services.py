"""Writes to benchmark recipes and jobs. Views, the API, admin actions, the command and tasks call these.

A job's row is the truth; a Celery message only says "look at job N". Every status change goes
through `_change_status`: inside `transaction.atomic()`, with the row locked (`SELECT ... FOR UPDATE`
on PostgreSQL, the IMMEDIATE transaction on SQLite), checked against `STATUS_CHANGES`, and written
together with one `JobEvent`. Messages are sent and revocations broadcast only after the commit.
"""

from __future__ import annotations

import logging
import math
import platform
import traceback
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmarks import conf
from common.errors import DomainError
from benchmarks.execution import JobStopped, LogTail, run_measurement
from benchmarks.models import ACTIVE, BenchmarkJob, JobEvent, JobStatus, Recipe
from benchmarks.parameters import OVERRIDABLE, ParameterError, job_parameters, parameter_errors
from benchmarks.presets import PRESETS, time_limits
from records import models as rm
from records.values import exact_text
from records.seed import task_stable_id
from records.services import record_save
from reviews.models import ReviewState
from reviews.roles import role_label_for
from reviews.services import review_transition_apply

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

    #: Who asks: a user, the anonymous user of a request (refused where a permission is needed), or None (the portal).
    Actor = AbstractBaseUser | AnonymousUser | None

logger = logging.getLogger(__name__)

QUEUE_PERMISSION = "benchmarks.queue_job"
CANCEL_PERMISSION = "benchmarks.cancel_job"

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED,
)
#: The legal status changes, as data: (from, to) -> what it is. "" is a job being created.
STATUS_CHANGES: dict[tuple[str, str], str] = {
    ("", QUEUED): "queue",
    (QUEUED, QUEUED): "re-send",  # not a change of status, but the message sent again: audited all the same
    (QUEUED, RUNNING): "claim",
    (RUNNING, SUCCEEDED): "succeed",
    (RUNNING, FAILED): "fail",
    (RUNNING, QUEUED): "requeue",  # the worker was lost; another attempt is allowed
    (QUEUED, CANCELLED): "cancel",
    (RUNNING, CANCELLED): "cancel",
}

#: Seconds per unit of the protocol's metric, for the units a run-time protocol may use.
TIME_UNITS: dict[str, int] = {
    "second": 1, "seconds": 1, "s": 1,
    "minute": 60, "minutes": 60, "min": 60,
    "hour": 3600, "hours": 3600, "h": 3600,
}
#: The figures of a report kept on the job (the whole report is kept beside them).
FIGURES = (
    "total_wall_time_s", "setup_time_s", "warmup_time_s", "training_loop_time_s", "eval_time_s", "steps_per_s",
    "tokens_per_s", "achieved_tflops", "peak_memory_bytes", "peak_memory_source", "loss_start", "loss_end",
    "sequence_length_tokens", "trainable_parameters", "total_parameters", "evaluations",
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


def _require(actor: Actor, permission: str, doing: str) -> None:
    if actor is None or not actor.is_authenticated or not actor.is_active or not actor.has_perm(permission):
        raise JobForbidden(f"you do not have permission to {doing}", field="permission")


def _change_status(*, job: BenchmarkJob, to: str, actor: Actor = None, reason: str = "", **fields: Any) -> JobEvent:
    """Apply one status change to a job the caller has locked, inside the caller's transaction."""
    assert transaction.get_connection().in_atomic_block, "status changes run inside transaction.atomic()"
    from_status = job.status if job.pk else ""
    if (from_status, to) not in STATUS_CHANGES:
        raise JobConflict(f"job {job.pk} is {from_status or 'new'}: it cannot become {to}", field="status")
    for name, value in fields.items():
        setattr(job, name, value)
    job.status = to
    job.save()
    return JobEvent.objects.create(
        job=job,
        from_status=from_status,
        to_status=to,
        attempt=job.attempts,
        actor=actor,
        actor_role=role_label_for(actor),
        reason=reason,
    )


def _locked(job_id: int) -> BenchmarkJob | None:
    return BenchmarkJob.objects.select_for_update().filter(pk=job_id).first()


def _send_after_commit(*, job: BenchmarkJob) -> None:
    """After the commit, send the job's message (its id is already on the row) to the gpu queue.

    A broker that cannot be reached leaves the job queued: the sweeper sends it again later.
    """
    job_id, task_id, limits = job.pk, job.celery_task_id, time_limits(job.parameters.get("preset"))

    def send() -> None:
        from benchmarks.tasks import benchmark_job_run

        benchmark_job_run.apply_async(args=[job_id], task_id=task_id, soft_time_limit=limits.soft, time_limit=limits.hard)

    transaction.on_commit(send, robust=True)


def _revoke_after_commit(*, task_id: str, terminate: bool) -> None:
    """Tell the workers to drop the message (queued) or stop the process running it (running).

    `terminate` sends SIGTERM to the prefork child running the task; it is a second line only: the
    run also stops by itself at its next progress point or heartbeat, when the row says it is no
    longer this attempt's.
    """
    if not task_id:
        return

    def revoke() -> None:
        current_app.control.revoke(task_id, terminate=terminate, signal="SIGTERM")

    transaction.on_commit(revoke, robust=True)


# --- recipes ------------------------------------------------------------------------------------


@transaction.atomic
def recipe_save(*, recipe: Recipe, actor: Actor, changed_fields: list[str] | None = None) -> bool:
    """Create or edit a recipe, with history. Editing a run field of a reviewed recipe reopens its review."""
    written = record_save(record=recipe, actor=actor, changed_fields=changed_fields)
    run_fields = sorted(set(changed_fields or []) & set(Recipe.RUN_FIELDS))
    if written and recipe.review_state != ReviewState.PROPOSED and run_fields and changed_fields is not None:
        review_transition_apply(
            record=recipe, transition="reopen", actor=actor, reason=f"edited: {', '.join(run_fields)}", automatic=True
        )
    return written


def recipe_ensure(*, stable_id: str, actor: Actor = None, **values: Any) -> tuple[Recipe, bool]:
    """The recipe with this stable id, created with `values` when missing (an idempotent import step).

    An existing recipe is left as it is: curators may have edited or reviewed it since.
    """
    recipe = Recipe.objects.filter(stable_id=stable_id).first()
    if recipe is not None:
        return recipe, False
    recipe = Recipe(stable_id=stable_id, **values)
    recipe_save(recipe=recipe, actor=actor)
    return recipe, True


# --- queueing -----------------------------------------------------------------------------------


def _check_measurable(*, recipe: Recipe, parameters: dict[str, Any]) -> None:
    unit = recipe.protocol.metric_unit
    if unit not in TIME_UNITS:
        raise JobInvalid(
            f"protocol {recipe.protocol.stable_id} reports in {unit!r}, not a time unit; the runner measures wall time",
            field="recipe",
        )
    if not rm.Dataset.objects.filter(stable_id=task_stable_id(parameters["task"])).exists():
        raise JobInvalid(
            f"no dataset record {task_stable_id(parameters['task'])!r} for task {parameters['task']} (run import_seed)",
            field="task",
        )


def _enqueue(*, recipe: Recipe, requested_by: Actor, parameters: dict[str, Any], reason: str, rerun_of: BenchmarkJob | None) -> BenchmarkJob:
    _check_measurable(recipe=recipe, parameters=parameters)
    with transaction.atomic():
        now = timezone.now()
        job = BenchmarkJob(
            recipe=recipe,
            parameters=parameters,
            recipe_review_state=recipe.review_state,
            requested_by=requested_by,
            rerun_of=rerun_of,
            max_attempts=conf.max_attempts(),
            queued_at=now,
            celery_task_id=str(uuid.uuid4()),
            sends=1,
            sent_at=now,
        )
        _change_status(job=job, to=QUEUED, actor=requested_by, reason=reason)
        _send_after_commit(job=job)
    return job


def benchmark_job_enqueue(*, recipe: Recipe, requested_by: Actor, overrides: dict[str, Any] | None = None) -> BenchmarkJob:
    """Queue one run of `recipe` (with `overrides`): the row first, the message after the commit."""
    _require(requested_by, QUEUE_PERMISSION, "queue benchmark jobs")
    try:
        parameters = job_parameters(recipe=recipe, overrides=overrides)
    except ParameterError as error:
        raise JobInvalid(str(error), errors=error.errors) from None
    changed = {name: parameters[name] for name in OVERRIDABLE if name in (overrides or {}) and overrides[name] is not None}
    reason = f"queued from recipe {recipe.stable_id}" + (f" with {changed}" if changed else "")
    return _enqueue(recipe=recipe, requested_by=requested_by, parameters=parameters, reason=reason, rerun_of=None)


def benchmark_job_rerun(*, job: BenchmarkJob, actor: Actor) -> BenchmarkJob:
    """Queue a new job with a finished job's recipe and parameters."""
    _require(actor, QUEUE_PERMISSION, "rerun benchmark jobs")
    job.refresh_from_db()
    if job.status in ACTIVE:
        raise JobConflict(f"job {job.pk} is still {job.status}: cancel it or wait for it to finish", field="status")
    errors = parameter_errors(job.parameters)
    if errors:
        raise JobInvalid(f"job {job.pk}'s parameters no longer run: {errors}", errors=errors)
    return _enqueue(recipe=job.recipe, requested_by=actor, parameters=dict(job.parameters), reason=f"rerun of job {job.pk}", rerun_of=job)


def benchmark_job_cancel(*, job: BenchmarkJob, actor: Actor, reason: str = "") -> BenchmarkJob:
    """Cancel a queued or running job; its message is revoked (and its process terminated) after the commit."""
    _require(actor, CANCEL_PERMISSION, "cancel benchmark jobs")
    with transaction.atomic():
        locked = _locked(job.pk)
        if locked is None or locked.status not in ACTIVE:
            state = locked.status if locked else "gone"
            raise JobConflict(f"job {job.pk} is {state}: only queued or running jobs can be cancelled", field="status")
        was_running = locked.status == RUNNING
        _change_status(job=locked, to=CANCELLED, actor=actor, reason=reason.strip() or "cancelled", finished_at=timezone.now())
        _revoke_after_commit(task_id=locked.celery_task_id, terminate=was_running)
    return locked


# --- the worker's side --------------------------------------------------------------------------


def benchmark_job_claim(*, job_id: int, task_id: str, worker_host: str) -> BenchmarkJob | None:
    """Take a queued job for the message the row names. Anything else leaves the row alone and
    returns None: a second delivery, a job already running, finished or cancelled, or a message the
    row no longer names (that of an attempt whose worker was lost, or one left in the broker from
    another database). A queued job's re-sends carry the same id: whichever copy arrives first claims."""
    with transaction.atomic():
        job = _locked(job_id)
        if job is None or job.status != QUEUED:
            logger.info("benchmark job %s is %s: message %s does nothing", job_id, job.status if job else "gone", task_id)
            return None
        if task_id != job.celery_task_id:
            logger.info("benchmark job %s waits for message %s: message %s does nothing", job_id, job.celery_task_id, task_id)
            return None
        now = timezone.now()
        attempt = job.attempts + 1
        _change_status(
            job=job,
            to=RUNNING,
            reason=f"attempt {attempt} of {job.max_attempts} claimed by {worker_host} (message {task_id})",
            attempts=attempt,
            started_at=now,
            heartbeat_at=now,
            worker_host=worker_host[:200],
            progress_step=0,
            progress_total=job.parameters["steps"],
            error="",
            log_tail="",
        )
    return job


def benchmark_job_progress(*, job_id: int, attempt: int, step: int, total: int) -> bool:
    """Write progress and heartbeat; False when the row is no longer this attempt's (stop the run).

    Not a status change: one conditional UPDATE, no lock held across the run.
    """
    step = min(step, total)
    updated = BenchmarkJob.objects.filter(pk=job_id, status=RUNNING, attempts=attempt).update(
        progress_step=step, progress_total=total, heartbeat_at=timezone.now()
    )
    return updated == 1


def benchmark_job_heartbeat(*, job_id: int, attempt: int) -> bool:
    """Write the heartbeat; False when the row is no longer this attempt's."""
    return BenchmarkJob.objects.filter(pk=job_id, status=RUNNING, attempts=attempt).update(heartbeat_at=timezone.now()) == 1


def _preset_label(preset: str) -> str:
    return PRESETS[preset].label if preset in PRESETS else preset


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _configuration_for(*, preset: str, precision: str, device: str, actor: Actor) -> rm.Configuration:
    """The tested configuration: the preset's shape, IA3, at this precision on this kind of device.

    Created on first use. Two jobs of one configuration may finish at once: the loser's insert fails
    inside its own savepoint (`record_save` reports the taken stable id as a ValidationError), and it
    takes the winner's row instead of failing its successful run.
    """
    stable_id = f"portal-ia3-{_slug(preset)}-{precision}-{device}"
    configuration = rm.Configuration.objects.filter(stable_id=stable_id).first()
    if configuration is None:
        label = _preset_label(preset)
        configuration = rm.Configuration(
            stable_id=stable_id,
            name=f"{label}, random weights, IA3 fine-tuning, {precision} on {device.upper()} (benchmarks.ia3 preset {preset})",
            short_name=f"{preset} IA3 {precision} {device}",
            family="Nucleotide Transformer (architecture only)",
            method="IA3 fine-tuning",
            description=(
                f"{label}, built with random weights by the portal's runner (benchmarks.ia3, preset {preset}): "
                "a run's time depends on the architecture, not on the weights. Measured by this portal."
            ),
        )
        try:
            with transaction.atomic():
                record_save(record=configuration, actor=actor, reason="created for a measurement by this portal")
        except (IntegrityError, ValidationError):
            existing = rm.Configuration.objects.filter(stable_id=stable_id).first()
            if existing is None:  # not a concurrent create: a real error
                raise
            return existing
    return configuration


# The measured time is stored to the microminute: the runner's clock is no finer.
VALUE_PLACES = 6


def _value_in_unit(*, seconds: float, unit: str) -> Decimal:
    exact = Decimal(repr(seconds)) / TIME_UNITS[unit]
    return exact.quantize(Decimal(1).scaleb(-VALUE_PLACES), rounding=ROUND_HALF_UP)


def _record_measurement(*, job: BenchmarkJob, report: dict[str, Any]) -> rm.Evaluation:
    """The proposed evaluation (measured by this portal) and its one result, in the protocol's unit."""
    protocol = job.recipe.protocol
    p = job.parameters
    actor = job.requested_by
    reason = f"measured by benchmark job {job.pk}"
    configuration = _configuration_for(preset=p["preset"], precision=report["precision"], device=report["device"], actor=actor)
    dataset = rm.Dataset.objects.get(stable_id=task_stable_id(p["task"]))
    seconds = float(report["total_wall_time_s"])
    unit = protocol.metric_unit
    value = _value_in_unit(seconds=seconds, unit=unit)
    recipe_state = ReviewState(job.recipe_review_state).label.lower() if job.recipe_review_state else "unknown"
    setup = (
        f"benchmarks.ia3, one run: {p['steps']} steps x batch {p['batch_size']}, Adam lr {p['learning_rate']:g}, "
        f"{report['precision']}, synthetic {p['task']}-shaped sequences ({report['sequence_length_tokens']} tokens), "
        f"seed {p['seed']}; {report['device_name']} ({report['device']}); recipe {job.recipe.stable_id} ({recipe_state})"
    )
    evaluation = rm.Evaluation(
        stable_id=f"benchmark-job-{job.pk}-{_slug(p['preset'])}-{_slug(p['task'])}-runtime",
        title=f"{_preset_label(p['preset'])} IA3 fine-tuning run time on {p['task']}, measured by this portal (benchmark job {job.pk})",
        protocol=protocol,
        configuration=configuration,
        dataset=dataset,
        measured_by=rm.MeasuredBy.PORTAL,
        reading_method=rm.ReadingMethod.JOB_REPORT,
        setup=setup[:300],
        aggregation=(
            f"One run: the runner's total wall time (set-up, {p['warmup_steps']} warm-up steps and the timed loop) "
            f"in {unit}s, rounded to {VALUE_PLACES} decimals"
        )[:300],
        uncertainty="",
        coverage_scored=1,
        coverage_eligible=1,
    )
    record_save(record=evaluation, actor=actor, reason=reason)
    result = rm.Result(
        stable_id=f"{evaluation.stable_id}-wall-time",
        evaluation=evaluation,
        value=value,
        unit=unit,
        printed_value=f"{exact_text(value)} {unit} ({seconds:.3f} s total wall time)",
        num_runs=1,
    )
    record_save(record=result, actor=actor, reason=reason)
    return evaluation


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
    environment: dict[str, Any] = {"worker_host": worker_host, "platform": platform.platform(), "python": platform.python_version()}
    if report:
        environment.update({key: report.get(key) for key in ("device", "device_name", "precision", "versions")})
    return environment


def benchmark_job_succeed(*, job_id: int, attempt: int, report: dict[str, Any], log_tail: str = "") -> BenchmarkJob | None:
    """Record a finished run: the proposed evaluation with its result, the figures, the report.

    Returns None (and records nothing) when the row is no longer this attempt's: a job cancelled
    while it finished stays cancelled.
    """
    with transaction.atomic():
        job = _locked(job_id)
        if job is None or job.status != RUNNING or job.attempts != attempt:
            logger.info("benchmark job %s is no longer attempt %s's: its report is discarded", job_id, attempt)
            return None
        report = _json_safe(report)
        evaluation = _record_measurement(job=job, report=report)
        result = evaluation.results.get()
        _change_status(
            job=job,
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
        job = _locked(job_id)
        if job is None or job.status != RUNNING or job.attempts != attempt:
            logger.info("benchmark job %s is no longer attempt %s's: its error is discarded: %s", job_id, attempt, error)
            return None
        _change_status(
            job=job,
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
                write_progress=lambda step, total: benchmark_job_progress(job_id=job_id, attempt=attempt, step=step, total=total),
                beat=lambda: benchmark_job_heartbeat(job_id=job_id, attempt=attempt),
                heartbeat_interval=conf.heartbeat_interval(),
                log=log,
            )
        except JobStopped as stop:
            logger.info("benchmark job %s attempt %s stopped: %s", job_id, attempt, stop)
            return "stopped"
        except SoftTimeLimitExceeded:
            limit = time_limits(job.parameters.get("preset")).soft
            error = f"soft time limit exceeded: preset {job.parameters.get('preset')} may run {timedelta(seconds=limit)}"
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


# --- the sweeper --------------------------------------------------------------------------------


@dataclass
class SweepReport:
    resent: list[int] = field(default_factory=list)
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[int]]:
        return {"resent": self.resent, "requeued": self.requeued, "failed": self.failed}


def _resend(*, job: BenchmarkJob, now, reason: str, new_message_id: bool, **fields: Any) -> None:
    """Inside the caller's transaction, with the job locked: the job queued, its message sent after commit.

    A queued job's re-send keeps the message id (`new_message_id=False`): the copy already waiting
    keeps the job's place in the queue, and whichever copy a worker takes first claims the job, the
    other doing nothing. A new id is only for a message that must no longer claim the job: a running
    job whose worker was lost goes back to the queue, and its old message is revoked.
    """
    task_id = str(uuid.uuid4()) if new_message_id else job.celery_task_id
    _change_status(job=job, to=QUEUED, reason=reason, celery_task_id=task_id, sends=job.sends + 1, sent_at=now, **fields)
    _send_after_commit(job=job)


def _sweep_running(*, job_id: int, now, stale_after: timedelta) -> str | None:
    """One running job: failed past its hard time limit, queued again (or failed) when its worker was lost."""
    with transaction.atomic():
        job = _locked(job_id)
        if job is None or job.status != RUNNING:
            return None
        preset = job.parameters.get("preset")
        hard = timedelta(seconds=time_limits(preset).hard)
        old_task = job.celery_task_id
        if job.started_at + hard < now:
            error = (
                f"hard time limit exceeded: preset {preset} may run {hard}; "
                f"attempt {job.attempts} started {job.started_at:%Y-%m-%d %H:%M:%S} UTC on {job.worker_host}"
            )
            _change_status(job=job, to=FAILED, reason=f"hard time limit of {hard} exceeded", finished_at=now, error=error)
            _revoke_after_commit(task_id=old_task, terminate=True)
            return "failed"
        if job.heartbeat_at >= now - stale_after:
            return None
        lost = f"worker {job.worker_host} lost: no heartbeat since {job.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC"
        if job.attempts < job.max_attempts:
            reason = f"{lost}; attempt {job.attempts} of {job.max_attempts}, queued again"
            _resend(job=job, now=now, reason=reason, new_message_id=True, progress_step=0)
            outcome = "requeued"
        else:
            _change_status(
                job=job, to=FAILED, reason=f"{lost}; no attempts left", finished_at=now,
                error=f"{lost} on attempt {job.attempts} of {job.max_attempts}: no attempts left",
            )
            outcome = "failed"
        # A worker that is alive after all must not go on with an attempt that is not its own.
        _revoke_after_commit(task_id=old_task, terminate=True)
        return outcome


def _sweep_queued(*, job_id: int, now, resend_after: timedelta) -> str | None:
    """One queued job no worker started: its message sent again (same id) once its back-off is over."""
    with transaction.atomic():
        job = _locked(job_id)
        if job is None or job.status != QUEUED:
            return None
        backoff = resend_after * 2 ** (min(job.sends, 7) - 1)
        if job.sent_at >= now - backoff:
            return None
        reason = f"re-sent: no worker started message {job.celery_task_id} within {now - job.sent_at}"
        _resend(job=job, now=now, reason=reason, new_message_id=False)
        return "resent"


def benchmark_jobs_sweep(
    *, now=None, resend_after: timedelta | None = None, stale_after: timedelta | None = None
) -> SweepReport:
    """The reaper (beat, every minute).

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
    report = SweepReport()
    running = BenchmarkJob.objects.filter(status=RUNNING).order_by("pk").values_list("pk", flat=True)
    queued = BenchmarkJob.objects.filter(status=QUEUED, sent_at__lt=now - resend_after).order_by("pk").values_list("pk", flat=True)
    for sweep, job_ids, options in (
        (_sweep_running, running, {"stale_after": stale_after}),
        (_sweep_queued, queued, {"resend_after": resend_after}),
    ):
        for job_id in list(job_ids):
            try:
                outcome = sweep(job_id=job_id, now=now, **options)
            except Exception:  # one bad row must not stop the sweep of the others
                logger.exception("benchmark job %s could not be swept", job_id)
                continue
            if outcome:
                getattr(report, outcome).append(job_id)
    return report
