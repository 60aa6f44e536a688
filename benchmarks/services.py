"""The request side of benchmark recipes and jobs: what views, the API, admin actions and the command call.

A job's row is the truth; a Celery message only says "look at job N". Every status change goes
through `benchmarks.jobs.JOBS` (`common.lifecycle`): inside `transaction.atomic()`, with the row
locked (`SELECT ... FOR UPDATE` on PostgreSQL, the IMMEDIATE transaction on SQLite), checked
against the status table, and written together with one `JobEvent`. Messages are sent (through
`benchmarks.tasks.benchmark_job_send`) and revocations broadcast only after the commit.

The worker's side (claim, progress, recording a run) is `benchmarks.execution`; the reaper is
`benchmarks.sweeper`. Imports point one way: services -> tasks -> execution, sweeper -> jobs.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmarks import conf, sweeper
from benchmarks.jobs import CANCELLED, JOBS, QUEUED, JobConflict, JobForbidden, JobInvalid, revoke_after_commit
from benchmarks.measurement import TIME_UNITS
from benchmarks.models import ACTIVE, BenchmarkJob, Recipe
from benchmarks.parameters import OVERRIDABLE, ParameterError, job_parameters, parameter_errors
from benchmarks.tasks import benchmark_job_send
from common.types import Actor, acting_user
from records.models import Dataset
from records.seed import task_stable_id
from records.services import record_save

QUEUE_PERMISSION = "benchmarks.queue_job"
CANCEL_PERMISSION = "benchmarks.cancel_job"


def _require(actor: Actor, permission: str, doing: str) -> None:
    if actor is None or not actor.is_authenticated or not actor.is_active or not actor.has_perm(permission):
        raise JobForbidden(f"you do not have permission to {doing}", field="permission")


# --- recipes ------------------------------------------------------------------------------------


@transaction.atomic
def recipe_save(*, recipe: Recipe, actor: Actor, changed_fields: list[str] | None = None) -> bool:
    """Create or edit a recipe, with history. Editing a run field of a reviewed recipe reopens its review
    (records' one rule: a source-checked recipe goes back to proposed, an excluded one awaits its re-check)."""
    return record_save(record=recipe, actor=actor, changed_fields=changed_fields, sourced_fields=Recipe.RUN_FIELDS)


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
    if not Dataset.objects.filter(stable_id=task_stable_id(parameters["task"])).exists():
        raise JobInvalid(
            f"no dataset record {task_stable_id(parameters['task'])!r} for task {parameters['task']} (run import_seed)",
            field="task",
        )


def _enqueue(
    *, recipe: Recipe, requested_by: Actor, parameters: dict[str, Any], reason: str, rerun_of: BenchmarkJob | None
) -> BenchmarkJob:
    _check_measurable(recipe=recipe, parameters=parameters)
    with transaction.atomic():
        now = timezone.now()
        job = BenchmarkJob(
            recipe=recipe,
            parameters=parameters,
            recipe_review_state=recipe.review_state,
            requested_by=acting_user(requested_by),
            rerun_of=rerun_of,
            max_attempts=conf.max_attempts(),
            queued_at=now,
            celery_task_id=str(uuid.uuid4()),
            sends=1,
            sent_at=now,
        )
        JOBS.change(row=job, to=QUEUED, actor=requested_by, reason=reason)
        benchmark_job_send(job=job)
    return job


def benchmark_job_enqueue(
    *, recipe: Recipe, requested_by: Actor, overrides: dict[str, Any] | None = None
) -> BenchmarkJob:
    """Queue one run of `recipe` (with `overrides`): the row first, the message after the commit."""
    _require(requested_by, QUEUE_PERMISSION, "queue benchmark jobs")
    try:
        parameters = job_parameters(recipe=recipe, overrides=overrides)
    except ParameterError as error:
        raise JobInvalid(str(error), errors=error.errors) from None
    given, recipes = overrides or {}, recipe.run_parameters()
    changed = {  # what was given, and what a smoke test's preset changed with it (its steps)
        name: parameters[name]
        for name in OVERRIDABLE
        if given.get(name) is not None or (name in recipes and parameters[name] != recipes[name])
    }
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
    return _enqueue(
        recipe=job.recipe,
        requested_by=actor,
        parameters=dict(job.parameters),
        reason=f"rerun of job {job.pk}",
        rerun_of=job,
    )


def benchmark_job_cancel(*, job: BenchmarkJob, actor: Actor, reason: str = "") -> BenchmarkJob:
    """Cancel a queued or running job; its message is revoked after the commit. A running job stops
    itself at its next progress point or heartbeat, when its row says it is cancelled: its process
    is not killed (Celery's prefork pool with late acknowledgement and one slot can leave the next
    task stuck after a terminate, celery/celery#1028), so the worker takes the next job at once."""
    _require(actor, CANCEL_PERMISSION, "cancel benchmark jobs")
    with transaction.atomic():
        locked = JOBS.locked(job.pk)
        if locked is None or locked.status not in ACTIVE:
            state = locked.status if locked else "gone"
            raise JobConflict(f"job {job.pk} is {state}: only queued or running jobs can be cancelled", field="status")
        JOBS.change(
            row=locked, to=CANCELLED, actor=actor, reason=reason.strip() or "cancelled", finished_at=timezone.now()
        )
        revoke_after_commit(task_id=locked.celery_task_id, terminate=False)
    return locked


def benchmark_jobs_sweep(
    *, now: datetime | None = None, resend_after: timedelta | None = None, stale_after: timedelta | None = None
) -> sweeper.SweepReport:
    """Sweep now, sending through the gpu task: what the beat task (`benchmarks.tasks.benchmark_jobs_sweep`)
    does every minute. See `benchmarks.sweeper.benchmark_jobs_sweep`."""
    return sweeper.benchmark_jobs_sweep(
        send=benchmark_job_send, now=now, resend_after=resend_after, stale_after=stale_after
    )
