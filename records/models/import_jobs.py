"""An import run as a background job (records.jobs): the document it holds, who asked, its status
and progress, and what came of it (the report, or the errors). Bookkeeping of the import, not a
catalogue record; its status changes go through `records.jobs.IMPORT_JOBS` (common.lifecycle), one
`ImportJobEvent` each."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from common.models import StatusEvent


class ImportJobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


IMPORT_JOB_FINISHED = (ImportJobStatus.SUCCEEDED, ImportJobStatus.FAILED)


class ImportJobOutcome(models.TextChoices):
    """Why a job failed: the answer a synchronous import would have given (400, 409), or neither."""

    NONE = "", "-"
    INVALID = "invalid", "The document is invalid"
    CONFLICT = "conflict", "Fields changed on both sides"
    ERROR = "error", "The import raised or its worker was lost"


class ImportJob(models.Model):
    document = models.TextField(help_text="The import document as sent (JSON text: numbers keep their digits).")
    title = models.CharField(max_length=500, blank=True, help_text="The document's title.")
    record_count = models.PositiveIntegerField(default=0, help_text="Entries in the document's sections.")
    dry_run = models.BooleanField(default=False)
    overwrite = models.JSONField(default=list, blank=True, help_text="Records (section/stable id) to overwrite.")
    dry_run_job = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="real_imports",
        help_text="The dry run whose document this import writes.",
    )
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(
        max_length=20, choices=ImportJobStatus.choices, default=ImportJobStatus.QUEUED, db_index=True
    )
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker claimed the job.")
    max_attempts = models.PositiveSmallIntegerField(default=3)
    celery_task_id = models.CharField(max_length=64, blank=True, help_text="The id of the last message sent.")
    sends = models.PositiveSmallIntegerField(default=0, help_text="Messages sent for the job (re-sends included).")
    sent_at = models.DateTimeField(null=True, blank=True)
    worker_host = models.CharField(max_length=200, blank=True)
    queued_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    report = models.JSONField(null=True, blank=True, help_text="The import's report (created, updated, ...).")
    outcome = models.CharField(max_length=20, choices=ImportJobOutcome.choices, default="", blank=True)
    detail = models.TextField(blank=True, help_text="Why the job failed, in one sentence.")
    errors = models.JSONField(default=list, blank=True, help_text="Each problem with its path in the document.")

    class Meta:
        ordering = ["-queued_at", "-id"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="importjob_status_heartbeat"),
            models.Index(fields=["status", "sent_at"], name="importjob_status_sent"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=ImportJobStatus.values), name="importjob_status_valid"),
            models.CheckConstraint(condition=Q(max_attempts__gte=1), name="importjob_max_attempts_positive"),
            models.CheckConstraint(condition=Q(attempts__lte=F("max_attempts")), name="importjob_attempts_within_max"),
            models.CheckConstraint(
                condition=Q(progress_done__lte=F("progress_total")), name="importjob_progress_within_total"
            ),
            models.CheckConstraint(
                condition=Q(status__in=IMPORT_JOB_FINISHED, finished_at__isnull=False)
                | (~Q(status__in=IMPORT_JOB_FINISHED) & Q(finished_at__isnull=True)),
                name="importjob_finished_iff_finished_at",
            ),
            models.CheckConstraint(
                condition=~Q(status=ImportJobStatus.RUNNING)
                | Q(started_at__isnull=False, heartbeat_at__isnull=False, attempts__gte=1),
                name="importjob_running_was_started",
            ),
        ]

    def __str__(self) -> str:
        kind = "dry run" if self.dry_run else "import"
        return f"{kind} #{self.pk}: {self.title or '(untitled)'}"

    @property
    def is_unfinished(self) -> bool:
        return self.status not in IMPORT_JOB_FINISHED


class ImportJobEvent(StatusEvent):
    """The audit log of an import job's status changes: one row per change (append-only)."""

    job = models.ForeignKey(ImportJob, on_delete=models.PROTECT, related_name="events")
    to_status = models.CharField(max_length=20, choices=ImportJobStatus.choices)

    class Meta(StatusEvent.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(to_status__in=ImportJobStatus.values), name="importjobevent_to_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(from_status__in=["", *ImportJobStatus.values]), name="importjobevent_from_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"import job {self.job_id}: {self.from_status or '(new)'} -> {self.to_status}"
