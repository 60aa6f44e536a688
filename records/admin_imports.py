"""The curators' import page in the admin: upload a JSON document (a file, or pasted), read the dry
run's report, then import the same stored document for real. Both run as import jobs
(records.import_jobs); each job's page reloads itself until the job is finished.

"Add import job" is the upload form; a job's change page is its status page (nothing on it is
edited by hand). Every form posts with Django's CSRF token (admin views are CSRF-protected) and
every view checks the curators' import permissions (`records.import_jobs.may_import`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from common.errors import DomainError
from records.admin_tables import table_draft_view
from records.import_jobs import (
    import_document_read,
    import_job_confirm,
    import_job_enqueue,
    import_job_visible,
    may_import,
)
from records.models import ImportJob, ImportJobStatus

REFRESH_SECONDS = 2
#: The largest upload, as the request size limit for this page (portal.settings.REQUEST_BODY_LIMITS).
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024


class ImportUploadForm(forms.Form):
    document_file = forms.FileField(
        required=False, label="JSON file", help_text="An import document (the docs' “Import format”)."
    )
    document_text = forms.CharField(
        required=False,
        label="or paste the JSON",
        widget=forms.Textarea(attrs={"rows": 12, "cols": 100, "spellcheck": "false"}),
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        upload, pasted = cleaned.get("document_file"), (cleaned.get("document_text") or "").strip()
        if upload and pasted:
            raise forms.ValidationError("Give a file or pasted JSON, not both.")
        if not upload and not pasted:
            raise forms.ValidationError("Give a JSON file or paste the JSON.")
        field = "document_file" if upload else "document_text"
        if upload:
            if upload.size > MAX_DOCUMENT_BYTES:
                self.add_error(field, f"The file is {upload.size} bytes; the limit is {MAX_DOCUMENT_BYTES}.")
                return cleaned
            try:
                text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error(field, "The file is not UTF-8 text.")
                return cleaned
        else:
            text = pasted
        try:
            import_document_read(text)
        except DomainError as invalid:
            self.add_error(field, invalid.message)
            return cleaned
        cleaned["text"] = text
        return cleaned


def report_rows(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per section the report names: created, updated and unchanged counts, with the ids."""
    if not report:
        return []
    created, updated, unchanged = report.get("created", {}), report.get("updated", {}), report.get("unchanged", {})
    sections = [key for key in (*created, *updated, *unchanged) if key]
    return [
        {
            "section": section,
            "created": created.get(section, []),
            "updated": sorted((updated.get(section) or {}).items()),
            "unchanged": unchanged.get(section, 0),
        }
        for section in dict.fromkeys(sections)
    ]


def conflict_rows(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each record with fields changed on both sides: its `section/stable id` (what overwrite takes) and fields."""
    rows = []
    for section, records in ((report or {}).get("conflicts") or {}).items():
        for stable_id, items in records.items():
            rows.append({"name": f"{section}/{stable_id}", "items": items})
    return rows


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("__str__", "status", "progress_display", "record_count", "requested_by", "queued_at", "finished_at")
    list_filter = ("status", "dry_run", "outcome")
    list_select_related = ("requested_by",)
    search_fields = ("title",)
    actions = None
    change_list_template = "admin/records/importjob/change_list.html"

    # -- permissions: curators who may import; nothing is edited or deleted by hand

    def has_module_permission(self, request) -> bool:
        return may_import(request.user)

    def has_view_permission(self, request, obj=None) -> bool:
        return may_import(request.user)

    def has_add_permission(self, request) -> bool:
        return may_import(request.user)

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="progress")
    def progress_display(self, job: ImportJob) -> str:
        return f"{job.progress_done} / {job.progress_total}"

    # -- the upload, the status page, the real import

    def get_urls(self):
        custom = [
            path("<int:pk>/confirm/", self.admin_site.admin_view(self.confirm_view), name="records_importjob_confirm"),
            path(
                "table/",
                self.admin_site.admin_view(lambda request: table_draft_view(self, request)),
                name="records_importjob_table",
            ),
        ]
        return custom + super().get_urls()

    def add_view(self, request, form_url="", extra_context=None):
        if not may_import(request.user):
            raise PermissionDenied
        form = ImportUploadForm(request.POST, request.FILES) if request.method == "POST" else ImportUploadForm()
        if request.method == "POST" and form.is_valid():
            try:
                job = import_job_enqueue(document_text=form.cleaned_data["text"], actor=request.user, dry_run=True)
            except DomainError as refused:
                form.add_error(None, refused.message)
            else:
                self.message_user(
                    request, f"Dry run #{job.pk} is queued: its report shows here when it is done.", messages.SUCCESS
                )
                return HttpResponseRedirect(reverse("admin:records_importjob_change", args=[job.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Import a document",
            "form": form,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/records/importjob/upload.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        key = str(object_id)
        job = import_job_visible(job_id=int(key), actor=request.user) if key.isascii() and key.isdigit() else None
        if job is None or not may_import(request.user):
            raise Http404("no such import job")
        report = job.report or {}
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": str(job),
            "job": job,
            "rows": report_rows(report),
            "conflicts": conflict_rows(report),
            "kept": sorted((report.get("kept") or {}).items()),
            "matched": sorted((report.get("matched") or {}).items()),
            "events": job.events.select_related("actor").order_by("id"),
            "real_imports": job.real_imports.order_by("-id"),
            "refresh_seconds": REFRESH_SECONDS if job.is_unfinished else None,
            "may_confirm": job.dry_run and job.status == ImportJobStatus.SUCCEEDED,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/records/importjob/status.html", context)

    def confirm_view(self, request, pk: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not may_import(request.user):
            raise PermissionDenied
        dry_run = import_job_visible(job_id=pk, actor=request.user)
        if dry_run is None:
            raise Http404("no such import job")
        try:
            job = import_job_confirm(
                dry_run_job=dry_run, actor=request.user, overwrite=request.POST.getlist("overwrite")
            )
        except DomainError as refused:
            self.message_user(request, f"Nothing was queued: {refused.message}.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:records_importjob_change", args=[pk]))
        self.message_user(request, f"Import #{job.pk} of dry run #{pk}'s document is queued.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:records_importjob_change", args=[job.pk]))
