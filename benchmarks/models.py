"""Benchmark recipes and jobs (docs/architecture/design-map.md, "Benchmark jobs").

Plain models: every write goes through `benchmarks.services`. A job's row is the truth about it;
the Celery message that carries its id is only a nudge to look at the row. Every change of a job's
status writes one `JobEvent` in the same transaction, with the row locked.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from benchmarks.parameters import recipe_errors
from benchmarks.presets import PRECISIONS
from common.history import AuditHistory
from common.models import StatusEvent
from reviews.models import Reviewable


class Precision(models.TextChoices):
    AUTO = "auto", "auto (bf16 on CUDA, fp32 on CPU)"
    BF16 = "bf16", "bf16 autocast"
    FP32 = "fp32", "fp32"


class Recipe(Reviewable, models.Model):
    """How to measure a protocol: the runner's parameters for one run.

    Review: "source checked" means a curator compared the parameters with the protocol's source
    (preset, task, steps, batch, learning rate, precision). Jobs may be queued from a recipe in any
    state; the protocol page says whether a reviewed recipe exists.
    """

    stable_id = models.SlugField(
        max_length=150,
        unique=True,
        help_text="Permanent identifier (letters, digits, hyphens); never changes once published.",
    )
    title = models.CharField(max_length=300)
    protocol = models.ForeignKey("records.Protocol", on_delete=models.PROTECT, related_name="recipes")
    preset = models.CharField(max_length=50, help_text="Model shape of benchmarks.ia3, e.g. nt-v1-500m.")
    task = models.CharField(max_length=100, help_text="One of the 18 NT downstream tasks, e.g. splice_sites_all.")
    steps = models.PositiveIntegerField(default=10_000)
    batch_size = models.PositiveIntegerField(default=8)
    learning_rate = models.FloatField(default=3e-3)
    precision = models.CharField(max_length=10, choices=Precision.choices, default=Precision.AUTO)
    eval_interval = models.PositiveIntegerField(default=0, help_text="Evaluate every N steps; 0: off.")
    seed = models.IntegerField(default=0)
    warmup_steps = models.PositiveIntegerField(default=5, help_text="Leading steps left out of the loop timing.")
    notes = models.TextField(blank=True, help_text="Where the parameters come from (source, locator).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = AuditHistory()

    #: The fields that define the measurement; editing one of a reviewed recipe reopens its review.
    RUN_FIELDS = (
        "preset",
        "task",
        "steps",
        "batch_size",
        "learning_rate",
        "precision",
        "eval_interval",
        "seed",
        "warmup_steps",
    )

    class Meta:
        ordering = ["protocol_id", "stable_id"]
        constraints = [
            models.CheckConstraint(condition=~Q(stable_id=""), name="recipe_stable_id_not_empty"),
            models.CheckConstraint(condition=~Q(title=""), name="recipe_title_not_empty"),
            models.CheckConstraint(condition=Q(steps__gte=1), name="recipe_steps_positive"),
            models.CheckConstraint(condition=Q(batch_size__gte=1), name="recipe_batch_positive"),
            models.CheckConstraint(condition=Q(learning_rate__gt=0), name="recipe_learning_rate_positive"),
            models.CheckConstraint(condition=Q(precision__in=PRECISIONS), name="recipe_precision_valid"),
            models.CheckConstraint(condition=Q(warmup_steps__lt=F("steps")), name="recipe_warmup_below_steps"),
        ]

    def __str__(self) -> str:
        return self.title or self.stable_id

    def clean(self) -> None:
        errors = recipe_errors(self)
        if errors:
            raise ValidationError(errors)

    def run_parameters(self) -> dict:
        return {name: getattr(self, name) for name in self.RUN_FIELDS}


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)
ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


class BenchmarkJob(models.Model):
    recipe = models.ForeignKey(Recipe, on_delete=models.PROTECT, related_name="jobs")
    parameters = models.JSONField(
        help_text="The runner's options for this job: the recipe's, with the overrides applied."
    )
    recipe_review_state = models.CharField(
        max_length=20, blank=True, help_text="The recipe's review state when the job was queued."
    )
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    rerun_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="reruns")
    status = models.CharField(max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED, db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker claimed the job.")
    max_attempts = models.PositiveSmallIntegerField(default=3)
    celery_task_id = models.CharField(
        max_length=64, blank=True, help_text="The id of the last message sent for the job."
    )
    sends = models.PositiveSmallIntegerField(default=0, help_text="Messages sent for the job (re-sends included).")
    sent_at = models.DateTimeField(null=True, blank=True)
    worker_host = models.CharField(max_length=200, blank=True)
    queued_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    progress_step = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    environment = models.JSONField(default=dict, blank=True, help_text="Device, versions and host of the run.")
    figures = models.JSONField(default=dict, blank=True, help_text="The measured figures (times, rates, memory).")
    report = models.JSONField(null=True, blank=True, help_text="The runner's full JSON report.")
    log_tail = models.TextField(blank=True)
    error = models.TextField(blank=True)
    evaluation = models.OneToOneField(
        "records.Evaluation", null=True, blank=True, on_delete=models.SET_NULL, related_name="benchmark_job"
    )

    class Meta:
        ordering = ["-queued_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"]), models.Index(fields=["status", "sent_at"])]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=JobStatus.values), name="benchmarkjob_status_valid"),
            models.CheckConstraint(condition=Q(max_attempts__gte=1), name="benchmarkjob_max_attempts_positive"),
            models.CheckConstraint(
                condition=Q(attempts__lte=F("max_attempts")), name="benchmarkjob_attempts_within_max"
            ),
            models.CheckConstraint(
                condition=Q(progress_step__lte=F("progress_total")), name="benchmarkjob_progress_within_total"
            ),
            models.CheckConstraint(
                condition=Q(status__in=FINISHED, finished_at__isnull=False)
                | (~Q(status__in=FINISHED) & Q(finished_at__isnull=True)),
                name="benchmarkjob_finished_iff_finished_at",
            ),
            models.CheckConstraint(
                condition=~Q(status=JobStatus.RUNNING)
                | Q(started_at__isnull=False, heartbeat_at__isnull=False, attempts__gte=1),
                name="benchmarkjob_running_was_started",
            ),
        ]
        permissions = [
            ("queue_job", "Can queue (and rerun) a benchmark job"),
            ("cancel_job", "Can cancel a benchmark job"),
        ]

    def __str__(self) -> str:
        return f"Benchmark job {self.pk}: {self.run_label} ({self.status})"

    @property
    def run_label(self) -> str:
        """What this job runs, from its own parameters: a recipe's title names the recipe's steps and
        batch, which the job's overrides (a 30-step tiny run of a 10,000-step recipe) may change."""
        parameters = self.parameters if isinstance(self.parameters, dict) else {}
        steps, batch = parameters.get("steps"), parameters.get("batch_size")
        steps_text = f"{steps:,}" if isinstance(steps, int) else str(steps)
        return f"{parameters.get('preset', '?')} on {parameters.get('task', '?')}, {steps_text} steps, batch {batch}"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

    @property
    def progress_fraction(self) -> float | None:
        return self.progress_step / self.progress_total if self.progress_total else None

    @property
    def preset(self) -> str:
        return self.parameters.get("preset", "")

    @property
    def task(self) -> str:
        return self.parameters.get("task", "")


class JobEvent(StatusEvent):
    """The audit log of job state changes: one row per change, written with the row locked."""

    job = models.ForeignKey(BenchmarkJob, on_delete=models.PROTECT, related_name="events")
    to_status = models.CharField(max_length=20, choices=JobStatus.choices)

    class Meta(StatusEvent.Meta):
        constraints = [
            models.CheckConstraint(condition=Q(to_status__in=JobStatus.values), name="jobevent_to_status_valid"),
            models.CheckConstraint(
                condition=Q(from_status__in=["", *JobStatus.values]), name="jobevent_from_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"job {self.job_id}: {self.from_status or '(new)'} -> {self.to_status}"
