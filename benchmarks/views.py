"""The job page (public), its JSON status for scripts, and the full report.

Public: a job page says how a "measured by this portal" evaluation was produced, and holds no
secret. The log tail, the full error (tracebacks name paths on the worker), the worker's platform
(kernel) and who asked for the job are shown only to users who may view jobs in the admin
(benchmark operators, curators).
"""

from __future__ import annotations

import re

from django.db.models import Prefetch
from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from benchmarks.models import BenchmarkJob, JobEvent, JobStatus
from benchmarks.parameters import run_command
from benchmarks.presets import PRESETS, time_limits

VIEW_PERMISSION = "benchmarks.view_benchmarkjob"
#: Seconds between automatic reloads of the page of a queued or running job.
REFRESH_SECONDS = 5


def _job_or_404(job_id: int, *, with_events: bool = False) -> BenchmarkJob:
    queryset = BenchmarkJob.objects.select_related("recipe__protocol", "evaluation", "requested_by", "rerun_of")
    if with_events:
        queryset = queryset.prefetch_related(Prefetch("events", queryset=JobEvent.objects.select_related("actor")))
    job = queryset.filter(pk=job_id).first()
    if job is None:
        raise Http404(f"No benchmark job {job_id}")
    return job


#: What the public sees of a run's environment: the hardware and software that shaped the figures;
#: not the host's kernel, nor the worker's name (a Celery node name holds the machine's host name).
PUBLIC_ENVIRONMENT = ("device", "device_name", "precision", "versions")
#: Where status changes and errors name the worker (benchmarks.execution, benchmarks.sweeper).
_WORKER_NAMED = [
    (re.compile(r"claimed by \S+ \(message [^)]*\)"), "claimed by a worker"),
    (re.compile(r"\bUTC on \S+"), "UTC on a worker"),
    (re.compile(r"\bworker \S+ lost\b"), "worker lost"),
]


def _public_environment(environment: dict) -> dict:
    return {key: value for key, value in environment.items() if key in PUBLIC_ENVIRONMENT}


def public_text(text: str, *, worker_host: str = "") -> str:
    """A status change's reason or an error as the public reads it: without the worker's name."""
    for pattern, replacement in _WORKER_NAMED:
        text = pattern.sub(replacement, text)
    if not worker_host:
        return text
    # the whole name only (a short host name such as "gpu" must not blank out ordinary words)
    return re.sub(rf"(?<![\w@.-]){re.escape(worker_host)}(?![\w@.-])", "a worker", text)


def _error_summary(error: str, *, worker_host: str = "") -> str:
    return public_text(error.strip().splitlines()[0], worker_host=worker_host) if error.strip() else ""


def job_status(job: BenchmarkJob, *, detailed: bool) -> dict:
    """The job as JSON (the status endpoint; the API adds to it)."""
    now = timezone.now()
    data = {
        "id": job.pk,
        "url": reverse("benchmarks:job", args=[job.pk]),
        "recipe": job.recipe.stable_id,
        "protocol": job.recipe.protocol.stable_id,
        "status": job.status,
        "parameters": job.parameters,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "progress": {"step": job.progress_step, "total": job.progress_total, "fraction": job.progress_fraction},
        "queued_at": job.queued_at,
        "started_at": job.started_at,
        "heartbeat_at": job.heartbeat_at,
        "heartbeat_age_s": (now - job.heartbeat_at).total_seconds() if job.heartbeat_at else None,
        "finished_at": job.finished_at,
        "environment": job.environment if detailed else _public_environment(job.environment),
        "figures": job.figures,
        "error": job.error if detailed else _error_summary(job.error, worker_host=job.worker_host),
        "evaluation": (
            {
                "stable_id": job.evaluation.stable_id,
                "url": job.evaluation.get_absolute_url(),
            }
            if job.evaluation
            else None
        ),
        "rerun_of": job.rerun_of_id,
        "report_url": reverse("benchmarks:job-report", args=[job.pk]) if job.report else None,
    }
    if detailed:
        data.update(
            {
                "worker_host": job.worker_host,
                "requested_by": job.requested_by.get_username(),
                "celery_task_id": job.celery_task_id,
                "log_tail": job.log_tail,
            }
        )
    return data


def _ending(job: BenchmarkJob, events: list[tuple[JobEvent, str]], *, detailed: bool) -> dict | None:
    """How a cancelled or failed job ended: when, by whom (the role; the person for operators' eyes) and
    why, from the status change that ended it. None for a job that may still produce an evaluation."""
    if job.status not in (JobStatus.CANCELLED, JobStatus.FAILED):
        return None
    event, reason = next(((e, r) for e, r in reversed(events) if e.to_status == job.status), (None, ""))
    by = (event.actor_role if event else "") or "portal"
    if detailed and event and event.actor:
        by = f"{event.actor.get_username()} ({by})"
    return {"at": job.finished_at, "by": by, "reason": reason}


@require_safe
def job_detail(request, job_id: int):
    job = _job_or_404(job_id, with_events=True)
    detailed = request.user.has_perm(VIEW_PERMISSION)
    limits = time_limits(job.preset) if job.preset in PRESETS else None
    events = [
        (event, event.reason if detailed else public_text(event.reason, worker_host=job.worker_host))
        for event in job.events.all()
    ]
    context = {
        "job": job,
        "environment": job.environment if detailed else _public_environment(job.environment),
        "events": events,
        "ending": _ending(job, events, detailed=detailed),
        "detailed": detailed,
        "error_summary": _error_summary(job.error, worker_host="" if detailed else job.worker_host),
        "refresh_seconds": REFRESH_SECONDS if job.is_active else None,
        "heartbeat_age": (timezone.now() - job.heartbeat_at) if job.heartbeat_at else None,
        "command": run_command(job.parameters),
        "limits": limits,
        "finished_statuses": (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED),
    }
    response = render(request, "benchmarks/job_detail.html", context)
    if job.is_active:
        # Live status without JavaScript: browsers reload a page sent with a Refresh header, as
        # they do one with <meta http-equiv="refresh">.
        response["Refresh"] = str(REFRESH_SECONDS)
        response["Cache-Control"] = "no-store"
    return response


@never_cache
@require_safe
def job_status_json(request, job_id: int):
    job = _job_or_404(job_id)
    return JsonResponse(job_status(job, detailed=request.user.has_perm(VIEW_PERMISSION)))


@require_safe
def job_report_json(request, job_id: int):
    job = _job_or_404(job_id)
    if not job.report:
        raise Http404(f"Benchmark job {job_id} has no report")
    return JsonResponse(job.report, json_dumps_params={"indent": 2})
