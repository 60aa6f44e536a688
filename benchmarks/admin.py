"""Admin for recipes and jobs. Recipes are edited and reviewed like catalogue records; jobs are read-only
and change only through the actions, each of which calls one service (queue, cancel, rerun).

"Queue a job with a preset and overrides…" is an action with a page of its own (`QueueForm`): blank
fields keep the recipe's values; the form checks each value's type and bounds, and the service the
whole (a warm-up shorter than the steps, a task the catalogue has), its refusals shown on the form."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from benchmarks.jobs import JobError
from benchmarks.models import BenchmarkJob, JobEvent, Recipe
from benchmarks.parameters import OVERRIDABLE
from benchmarks.presets import DEVICES, MAX_BATCH_SIZE, MAX_STEPS, PRECISIONS, PRESETS, task_shapes
from benchmarks.services import (
    CANCEL_PERMISSION,
    QUEUE_PERMISSION,
    benchmark_job_cancel,
    benchmark_job_enqueue,
    benchmark_job_rerun,
    recipe_save,
)
from common.admin import ReadOnlyAdminMixin, clamped, list_time
from common.numbers import ASCII_NUMBER_FORM_FIELDS, AsciiFloatFormField, AsciiIntegerFormField
from reviews.admin import ReviewableAdminMixin
from reviews.admin_lists import ReviewStateColumn

REVIEW_FIELDS = ("review_state", "review_state_changed_at", "review_state_changed_by_role", "concern")


def _job_link(job: BenchmarkJob) -> str:
    return format_html('<a href="{}">job {}</a> ({})', reverse("benchmarks:job", args=[job.pk]), job.pk, job.run_label)


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


KEEP = ("", "as the recipe says")
INT_MAX = 2**31 - 1  # the recipe's integer columns hold no more


class QueueForm(forms.Form):
    """The overrides of "Queue a job with a preset and overrides…": every field blank keeps the recipe's."""

    preset = forms.ChoiceField(
        required=False,
        choices=[KEEP, *((name, f"{name}: {limits.label}") for name, limits in PRESETS.items())],
        help_text=(
            "The model's shape. tiny and tiny-v2 are smoke tests: 20 steps unless you give the steps, "
            "seconds even on a CPU."
        ),
    )
    task = forms.ChoiceField(required=False, choices=[KEEP, *((name, name) for name in task_shapes())])
    steps = AsciiIntegerFormField(required=False, min_value=1, max_value=MAX_STEPS)
    batch_size = AsciiIntegerFormField(required=False, min_value=1, max_value=MAX_BATCH_SIZE, label="Batch size")
    learning_rate = AsciiFloatFormField(
        required=False, label="Learning rate", help_text="A positive number, e.g. 3e-3."
    )
    precision = forms.ChoiceField(required=False, choices=[KEEP, *((name, name) for name in PRECISIONS)])
    eval_interval = AsciiIntegerFormField(
        required=False, min_value=0, max_value=INT_MAX, label="Evaluation interval", help_text="Steps; 0: off."
    )
    seed = AsciiIntegerFormField(required=False, min_value=-(2**31), max_value=INT_MAX)
    warmup_steps = AsciiIntegerFormField(
        required=False,
        min_value=0,
        max_value=INT_MAX,
        label="Warm-up steps",
        help_text="Leading steps left out of the timing; fewer than the steps.",
    )
    device = forms.ChoiceField(
        required=False, choices=[("", "auto"), *((name, name) for name in DEVICES if name != "auto")]
    )

    def __init__(self, *args: Any, recipes: list[Recipe], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if len(recipes) == 1:  # say what a blank field keeps
            for name, value in recipes[0].run_parameters().items():
                field = self.fields[name]
                field.help_text = f"Blank: {value} (the recipe's). {field.help_text}".strip()

    def clean_learning_rate(self) -> float | None:
        rate = self.cleaned_data["learning_rate"]
        if rate is not None and not rate > 0:
            raise forms.ValidationError("Give a positive number, e.g. 3e-3.")
        return rate

    def overrides(self) -> dict[str, Any]:
        """What differs from the recipe: the fields given, as the service takes them."""
        return {name: self.cleaned_data[name] for name in OVERRIDABLE if self.cleaned_data.get(name) not in (None, "")}


def _queue_page(modeladmin: Any, request: HttpRequest, recipes: list[Recipe]) -> HttpResponse | None:
    if not modeladmin.has_queue_permission(request):  # the action is offered to them only; a forged post too
        raise PermissionDenied
    applying = "apply" in request.POST
    form = QueueForm(request.POST if applying else None, recipes=recipes)
    if applying and form.is_valid():
        overrides, jobs = form.overrides(), []
        try:
            with transaction.atomic():  # several recipes: every job queued, or none
                for recipe in recipes:
                    jobs.append(benchmark_job_enqueue(recipe=recipe, requested_by=request.user, overrides=overrides))
        except JobError as refused:
            prefix = f"{recipe.stable_id}: " if len(recipes) > 1 else ""
            for field, message in refused.errors.items():
                form.add_error(field if field in form.fields else None, prefix + message)
        else:
            _report(modeladmin, request, "Queued", jobs, [])
            ids = ",".join(str(job.pk) for job in jobs)
            return HttpResponseRedirect(f"{reverse('admin:benchmarks_benchmarkjob_changelist')}?id__in={ids}")
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.opts,
        "title": "Queue a job with a preset and overrides",
        "form": form,
        "fields_in_error": [form[name].label for name in form.errors if name in form.fields],
        "recipes": recipes,
        "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
    }
    return TemplateResponse(request, "admin/benchmarks/recipe/queue.html", context)


@admin.action(description="Queue a job with a preset and overrides…", permissions=["queue"])
def queue_job_with_overrides(modeladmin, request: HttpRequest, queryset: QuerySet[Recipe]) -> HttpResponse | None:
    return _queue_page(modeladmin, request, list(queryset.select_related("protocol").order_by("stable_id")))


@admin.action(description="Cancel the selected jobs (queued or running)", permissions=["cancel"])
def cancel_jobs(modeladmin, request, queryset):
    done, refused = [], []
    for job in queryset.order_by("pk"):
        try:
            done.append(benchmark_job_cancel(job=job, actor=request.user, reason="cancelled in the admin"))
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
class RecipeAdmin(QueuePermissionMixin, ReviewStateColumn, ReviewableAdminMixin, SimpleHistoryAdmin):
    list_display = ("recipe_title", "protocol_title", "run", "task", "review")
    list_display_links = ("recipe_title",)
    fitted_list = True  # static/css/admin.css sizes the columns
    list_filter = ("review_state", "preset", "precision")
    search_fields = ("stable_id", "title", "protocol__stable_id", "task")
    list_select_related = ("protocol",)
    autocomplete_fields = ["protocol"]
    actions = [*ReviewableAdminMixin.actions, queue_job, queue_job_with_overrides]
    formfield_overrides = ASCII_NUMBER_FORM_FIELDS  # '١٢٣' is refused, not stored as 123 (common.numbers)
    save_on_top = True

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj)) + list(REVIEW_FIELDS)
        if obj is not None and obj.pk:
            readonly.append("stable_id")
        return readonly

    @admin.display(description="recipe", ordering="title")
    def recipe_title(self, recipe: Recipe) -> str | None:
        return clamped(str(recipe), full=f"{recipe} ({recipe.stable_id})")

    @admin.display(description="protocol", ordering="protocol__title")
    def protocol_title(self, recipe: Recipe) -> str | None:
        return clamped(recipe.protocol.title, full=f"{recipe.protocol.title} ({recipe.protocol.stable_id})")

    @admin.display(description="run", ordering="preset")
    def run(self, recipe: Recipe) -> str | None:
        return clamped(f"{recipe.preset}, {recipe.steps:,} steps, batch {recipe.batch_size}, {recipe.precision}")

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

    list_display = ("job", "recipe_title", "state", "progress", "queued", "finished", "public_page")
    list_display_links = ("job",)
    fitted_list = True  # static/css/admin.css sizes the columns
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

    @admin.display(description="job", ordering="id")
    def job(self, job: BenchmarkJob) -> str | None:
        """What the job runs, from its own parameters (a tiny 30-step run of a 10,000-step recipe says so)."""
        return clamped(f"Job {job.pk}: {job.run_label}")

    @admin.display(description="recipe", ordering="recipe__title")
    def recipe_title(self, job: BenchmarkJob) -> str | None:
        return clamped(str(job.recipe), full=f"{job.recipe} ({job.recipe.stable_id})")

    @admin.display(description="status", ordering="status")
    def state(self, job: BenchmarkJob) -> str | None:
        attempt = f", attempt {job.attempts}" if job.attempts > 1 else ""
        worker = f" on {job.worker_host}" if job.worker_host else ""
        return clamped(f"{job.get_status_display()}{attempt}{worker}")

    @admin.display(description="queued (UTC)", ordering="queued_at")
    def queued(self, job: BenchmarkJob) -> str | None:
        return clamped(f"{list_time(job.queued_at)} by {job.requested_by}")

    @admin.display(description="page")
    def public_page(self, job: BenchmarkJob) -> str:
        return format_html('<a class="clamp" href="{}">public page</a>', reverse("benchmarks:job", args=[job.pk]))

    @admin.display(description="finished (UTC)", ordering="finished_at")
    def finished(self, job: BenchmarkJob) -> str | None:
        return clamped(list_time(job.finished_at))

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
