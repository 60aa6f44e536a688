"""The release managers' admin: releases with their build's progress, files and log; a cut button.

Nothing here edits a release: every field is read-only, a published release can be neither
changed nor deleted (a failed one may be deleted), "Cut a new release" calls the one service, and
"Cancel this build" (on a requested or building release) calls `release_cancel`.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from common.admin import ReadOnlyAdminMixin, clamped, list_time
from releases import selectors
from releases.lifecycle import build_state
from releases.models import (
    UNFINISHED,
    Release,
    ReleaseBuild,
    ReleaseEvent,
    ReleaseFile,
    ReleaseFixityCheck,
    ReleaseStatus,
)
from releases.services import NothingChanged, ReleaseError, may_cut_release, release_cancel, release_cut

REFRESH_SECONDS = 3


class ReadOnlyInline(ReadOnlyAdminMixin, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False


class ReleaseFileInline(ReadOnlyInline):
    model = ReleaseFile
    fields = ("name", "kind", "bytes", "sha256", "sha512")
    readonly_fields = fields
    ordering = ("kind", "name")


class ReleaseEventInline(ReadOnlyInline):
    model = ReleaseEvent
    fields = ("created_at", "from_status", "to_status", "attempt", "actor", "reason")
    readonly_fields = fields
    verbose_name = "status change"
    verbose_name_plural = "status changes (the audit log)"


class ReleaseFixityCheckInline(ReadOnlyInline):
    model = ReleaseFixityCheck
    fields = ("checked_at", "intact", "files_checked", "problems")
    readonly_fields = fields
    verbose_name = "fixity check"
    verbose_name_plural = "fixity checks (verify_release and the weekly audit)"


def _build_field(name: str, description: str) -> Callable[[admin.ModelAdmin, Release], object]:
    """A read-only field of the release's page that shows one field of its build."""

    @admin.display(description=description)
    def shown(self: admin.ModelAdmin, release: Release) -> object:
        return getattr(release.build, name)

    return shown


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("release", "state", "rows", "changes_display", "fixity", "cut")
    list_display_links = ("release",)
    fitted_list = True  # static/css/admin.css sizes the columns
    list_filter = ("build__status", "is_external")
    search_fields = ("release_id", "note")
    date_hierarchy = "release_date"
    inlines = [ReleaseFileInline, ReleaseEventInline, ReleaseFixityCheckInline]
    change_list_template = "admin/releases/release/change_list.html"
    change_form_template = "admin/releases/release/change_form.html"
    actions = None
    fieldsets = (
        (
            None,
            {"fields": ("release_id", "status", "progress_display", "stage", "release_date", "is_external", "note")},
        ),
        ("Contents", {"fields": ("counts_display", "previous", "payload_sha256", "catalogue_watermark")}),
        (
            "Build",
            {
                "fields": (
                    "cut_by",
                    "created_at",
                    "attempts",
                    "celery_task_id",
                    "sent_at",
                    "started_at",
                    "heartbeat",
                    "finished_at",
                    "published_at",
                    "error",
                    "build_log_display",
                )
            },
        ),
    )
    readonly_fields = (
        "release_id",
        "status",
        "progress_display",
        "stage",
        "release_date",
        "is_external",
        "note",
        "counts_display",
        "previous",
        "payload_sha256",
        "catalogue_watermark",
        "cut_by",
        "created_at",
        "attempts",
        "celery_task_id",
        "sent_at",
        "started_at",
        "heartbeat",
        "finished_at",
        "published_at",
        "error",
        "build_log_display",
    )

    def get_queryset(self, request):
        queryset = super().get_queryset(request).select_related("build", "build__cut_by", "previous")
        return selectors.with_last_check(queryset)

    # -- permissions: nothing is edited by hand, a published release is never deleted

    def has_delete_permission(self, request, obj=None) -> bool:
        """Only a failed build may go, and only for whom the model permission allows it."""
        if obj is None or obj.status != ReleaseStatus.FAILED:
            return False
        return admin.ModelAdmin.has_delete_permission(self, request, obj)

    # -- the list: the release and its note, its state (a build's progress), what is in it, its fixity

    @admin.display(description="release", ordering="release_date")
    def release(self, release: Release) -> str | None:
        shown = f"{release}: {release.note}" if release.note else str(release)
        return clamped(shown)

    @admin.display(description="status", ordering="build__status")
    def state(self, release: Release) -> str:
        if release.is_unfinished:
            build = release.build
            return format_html(
                '<span class="clamp" title="{}"><progress max="100" value="{}">{}%</progress> {}%: {}</span>',
                build_state(build),
                build.progress,
                build.progress,
                build.progress,
                build_state(build),
            )
        published = f" {list_time(release.published_at)} UTC" if release.published_at else ""
        return clamped(f"{release.get_status_display()}{published}")

    @admin.display(description="rows")
    def rows(self, release: Release) -> str | None:
        """How many rows in how many tables; each table's count in the tooltip."""
        tables = (release.counts or {}).get("rows")
        if not tables:
            return None
        total = sum(number for number in tables.values() if isinstance(number, int))
        return clamped(f"{total:,} rows in {len(tables)} tables", full=self.rows_display(release))

    @admin.display(description="fixity")
    def fixity(self, release: Release) -> str | None:
        return clamped(self.fixity_display(release))

    @admin.display(description="cut (UTC)", ordering="created_at")
    def cut(self, release: Release) -> str | None:
        by = f" by {release.build.cut_by}" if release.build.cut_by else ""
        return clamped(f"{list_time(release.created_at)}{by}")

    # -- display

    @admin.display(description="fixity")
    def fixity_display(self, release: Release) -> str:
        """DAMAGED (with the files) when the latest fixity check failed: the release managers' cue."""
        damage = selectors.release_damage(release)
        if damage.damaged:
            return f"DAMAGED: {', '.join(damage.files) or 'see the fixity checks'}"
        return "" if damage.checked_at is None else "intact"

    @admin.display(description="progress")
    def progress_display(self, release: Release) -> str:
        if release.status == ReleaseStatus.PUBLISHED:
            return "done"
        progress = release.build.progress
        if release.is_unfinished:
            return format_html(
                '<progress max="100" value="{}">{}%</progress> {}%: {}',
                progress,
                progress,
                progress,
                build_state(release.build),
            )
        return format_html('<progress max="100" value="{}">{}%</progress> {}%', progress, progress, progress)

    @admin.display(description="rows")
    def rows_display(self, release: Release) -> str:
        rows = (release.counts or {}).get("rows")
        return ", ".join(f"{name} {number}" for name, number in rows.items()) if rows else "-"

    @admin.display(description="changes")
    def changes_display(self, release: Release) -> str:
        if release.added_total is None:
            return "-"
        return f"+{release.added_total} -{release.removed_total} ~{release.changed_total}"

    @admin.display(description="counts")
    def counts_display(self, release: Release) -> str:
        counts = release.counts or {}
        parts = []
        for key in ("rows", "records", "added", "removed", "changed"):
            if key in counts:
                values = ", ".join(f"{name}: {number}" for name, number in counts[key].items()) or "none"
                parts.append(f"{key}: {values}")
        return "; ".join(parts) or "-"

    @admin.display(description="build log")
    def build_log_display(self, release: Release) -> str:
        return format_html('<pre style="white-space: pre-wrap">{}</pre>', release.build.build_log or "(empty)")

    # -- the build's own fields (ReleaseBuild), shown on the release's page

    stage = _build_field("stage", "stage")
    cut_by = _build_field("cut_by", "cut by")
    attempts = _build_field("attempts", "attempts")
    celery_task_id = _build_field("celery_task_id", "last build message")
    sent_at = _build_field("sent_at", "sent at")
    started_at = _build_field("started_at", "started at")
    heartbeat = _build_field("heartbeat", "heartbeat")
    finished_at = _build_field("finished_at", "finished at")
    error = _build_field("error", "error")

    # -- the cut button

    def get_urls(self):
        custom = [
            path("cut/", self.admin_site.admin_view(self.cut_view), name="releases_release_cut"),
            path("<int:pk>/cancel/", self.admin_site.admin_view(self.cancel_view), name="releases_release_cancel"),
        ]
        return custom + super().get_urls()

    def cut_view(self, request):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not may_cut_release(request.user):
            raise PermissionDenied
        changelist = reverse("admin:releases_release_changelist")
        try:
            release = release_cut(actor=request.user, note=request.POST.get("note", "")[:2000])
        except NothingChanged as exc:
            self.message_user(request, f"Nothing was cut: {exc.message}.", messages.WARNING)
            return HttpResponseRedirect(changelist)
        except ReleaseError as exc:
            self.message_user(request, f"Nothing was cut: {exc.message}.", messages.ERROR)
            return HttpResponseRedirect(changelist)
        self.message_user(
            request, f"Release #{release.pk} was cut; it is queued for a releases worker to build.", messages.SUCCESS
        )
        return HttpResponseRedirect(reverse("admin:releases_release_change", args=[release.pk]))

    def cancel_view(self, request, pk: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not may_cut_release(request.user):
            raise PermissionDenied
        try:
            release = release_cancel(actor=request.user, release_pk=pk)
        except ReleaseError as exc:
            self.message_user(request, f"Nothing was cancelled: {exc.message}.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:releases_release_changelist"))
        self.message_user(request, f"Release #{release.pk} was cancelled; a new one can be cut.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:releases_release_change", args=[release.pk]))

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "may_cut_release": may_cut_release(request.user),
            "refresh_seconds": REFRESH_SECONDS if ReleaseBuild.objects.filter(status__in=UNFINISHED).exists() else None,
        }
        return super().changelist_view(request, extra_context)

    def get_object(self, request, object_id, from_field=None):
        """A release by its number in ASCII digits only: int() also reads "٣" as 3."""
        key = str(object_id)
        if from_field is None and not (key.isascii() and key.isdigit()):
            return None
        return super().get_object(request, object_id, from_field)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        key = str(object_id)
        release = (
            Release.objects.select_related("build").filter(pk=key).first() if key.isascii() and key.isdigit() else None
        )
        extra_context = {
            **(extra_context or {}),
            "refresh_seconds": REFRESH_SECONDS if release is not None and release.is_unfinished else None,
            "may_cancel_release": release is not None and release.is_unfinished and may_cut_release(request.user),
        }
        return super().change_view(request, object_id, form_url, extra_context)


@admin.register(ReleaseFixityCheck)
class ReleaseFixityCheckAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("release", "checked_at", "intact", "files_checked")
    list_filter = ("intact",)
    readonly_fields = ("release", "checked_at", "intact", "files_checked", "problems")
    actions = None
