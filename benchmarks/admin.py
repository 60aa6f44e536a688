"""Admin for recipes and jobs. Recipes are edited and reviewed like catalogue records; jobs are read-only
and change only through the actions, each of which calls one service (queue, cancel, rerun)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from benchmarks.jobs import JobError
from benchmarks.models import BenchmarkJob, JobEvent, Recipe
from benchmarks.services import (
    CANCEL_PERMISSION,
    QUEUE_PERMISSION,
    benchmark_job_cancel,
    benchmark_job_enqueue,
    benchmark_job_rerun,
    recipe_save,
)
from common.admin import ReadOnlyAdminMixin
from common.numbers import ASCII_NUMBER_FORM_FIELDS
from reviews.admin import ReviewableAdminMixin

REVIEW_FIELDS = ("review_state", "review_state_changed_at", "review_state_changed_by_role", "concern")


def _job_link(job: BenchmarkJob) -> str:
    return format_html('<a href="{}">job {}</a>', reverse("benchmarks:job", args=[job.pk]), job.pk)


def _report(modeladmin, request, label: str, done: list, refused: list[str]) -> None:
    if done:
        links = format_html_join(", ", "{}", ((_job_link(job),) for job in done))
        modeladmin.message_user(request, format_html("{}: {}", label, links), messages.SUCCESS)
    if refused:
        modeladmin.message_user(request, f"{label}: {len(refused)} refused. " + "; ".join(refused), messages.ERROR)


@admin.action(description="Queue a job from this recipe", permissions=["queue"])
def queue_job(modeladmin, request, queryset):
    done, refused = [], []
    for recipe in queryset.select_related("protocol").order_by("pk"):
        try:
            done.append(benchmark_job_enqueue(recipe=recipe, requested_by=request.user))
        except JobError as error:
            refused.append(f"{recipe.stable_id}: {error.message}")
    _report(modeladmin, request, "Queued", done, refused)


@admin.action(description="Cancel the selected jobs (queued or running)", permissions=["cancel"])
def cancel_jobs(modeladmin, request, queryset):
    done, refused = [], []
    for job in queryset.order_by("pk"):
        try:
            done.append(
                benchmark_job_cancel(job=job, actor=request.user, reason=f"cancelled in the admin by {request.user}")
            )
        except JobError as error:
            refused.append(f"job {job.pk}: {error.message}")
    _report(modeladmin, request, "Cancelled", done, refused)


@admin.action(description="Rerun the selected jobs with the same parameters", permissions=["queue"])
def rerun_jobs(modeladmin, request, queryset):
    done, refused = [], []
    for job in queryset.select_related("recipe__protocol").order_by("pk"):
        try:
            done.append(benchmark_job_rerun(job=job, actor=request.user))
        except JobError as error:
            refused.append(f"job {job.pk}: {error.message}")
    _report(modeladmin, request, "Queued again", done, refused)


class QueuePermissionMixin:
    def has_queue_permission(self, request) -> bool:
        return request.user.has_perm(QUEUE_PERMISSION)

    def has_cancel_permission(self, request) -> bool:
        return request.user.has_perm(CANCEL_PERMISSION)


@admin.register(Recipe)
class RecipeAdmin(QueuePermissionMixin, ReviewableAdminMixin, SimpleHistoryAdmin):
    list_display = ("stable_id", "protocol", "preset", "task", "steps", "batch_size", "precision", "review_state")
    list_filter = ("review_state", "preset", "precision")
    search_fields = ("stable_id", "title", "protocol__stable_id", "task")
    list_select_related = ("protocol",)
    autocomplete_fields = ["protocol"]
    actions = [*ReviewableAdminMixin.actions, queue_job]
    formfield_overrides = ASCII_NUMBER_FORM_FIELDS  # '١٢٣' is refused, not stored as 123 (common.numbers)
    save_on_top = True

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj)) + list(REVIEW_FIELDS)
        if obj is not None and obj.pk:
            readonly.append("stable_id")
        return readonly

    def save_model(self, request, obj, form, change):
        recipe_save(recipe=obj, actor=request.user, changed_fields=list(form.changed_data) if change else None)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        if request.method == "POST":  # history is for reading; a revert would bypass the review
            raise PermissionDenied
        return super().history_form_view(request, object_id, version_id, extra_context)


class JobEventInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = JobEvent
    extra = 0
    can_delete = False
    fields = ("created_at", "from_status", "to_status", "attempt", "actor", "actor_role", "reason")
    readonly_fields = fields


@admin.register(BenchmarkJob)
class BenchmarkJobAdmin(QueuePermissionMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Read-only: a job's row changes only through its services (the actions here, the worker, the sweeper)."""

    list_display = (
        "id",
        "recipe",
        "status",
        "progress",
        "attempts",
        "worker_host",
        "queued_at",
        "finished_at",
        "requested_by",
        "page",
    )
    list_filter = ("status", "recipe")
    search_fields = ("=id", "recipe__stable_id", "worker_host", "celery_task_id")
    list_select_related = ("recipe", "requested_by")
    date_hierarchy = "queued_at"
    actions = [cancel_jobs, rerun_jobs]
    inlines = [JobEventInline]
    readonly_fields = (
        "page",
        "recipe",
        "parameters",
        "recipe_review_state",
        "requested_by",
        "rerun_of",
        "status",
        "attempts",
        "max_attempts",
        "celery_task_id",
        "sends",
        "sent_at",
        "worker_host",
        "queued_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "progress_step",
        "progress_total",
        "environment",
        "figures",
        "evaluation",
        "error",
        "log_tail",
        "report",
    )
    fields = readonly_fields

    @admin.display(description="progress")
    def progress(self, job: BenchmarkJob) -> str:
        return f"{job.progress_step}/{job.progress_total}" if job.progress_total else "-"

    @admin.display(description="page")
    def page(self, job: BenchmarkJob) -> str:
        return format_html('<a href="{}">public job page</a>', reverse("benchmarks:job", args=[job.pk]))


@admin.register(JobEvent)
class JobEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The audit log of job status changes: never added to, edited or deleted through the admin."""

    list_display = ("created_at", "job", "from_status", "to_status", "attempt", "actor_role", "actor", "reason")
    list_filter = ("to_status", "actor_role")
    search_fields = ("=job__id", "reason")
    list_select_related = ("job__recipe", "actor")
