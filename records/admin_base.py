"""The base of every catalogue admin (records.admin, records.admin_identity): saves and deletes
through `records.services`, so the admin writes the same history (and reopens reviewed records on
sourced-field edits) as every other way in."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import models
from simple_history.admin import SimpleHistoryAdmin

from common.numbers import ASCII_NUMBER_FORM_FIELDS
from records.services import record_delete, record_save

# A reviewable record's review fields: changed only by a review transition, never by its form.
REVIEW_FIELDS = ("review_state", "review_state_changed_at", "review_state_changed_by_role", "concern")


class ServiceSaveMixin:
    """Route the admin's writes of records and their inline rows through the records service."""

    def save_model(self, request, obj, form, change):
        record_save(record=obj, actor=request.user, changed_fields=list(form.changed_data) if change else None)

    def delete_model(self, request, obj):
        record_delete(record=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for record in queryset:
            record_delete(record=record, actor=request.user)

    def save_formset(self, request, form, formset, change):
        instances = formset.save(commit=False)
        for deleted in formset.deleted_objects:
            record_delete(record=deleted, actor=request.user)
        changed_by_instance = {id(f.instance): list(f.changed_data) for f in formset.forms}
        for instance in instances:
            changed = None if instance.pk is None else changed_by_instance.get(id(instance), [])
            record_save(record=instance, actor=request.user, changed_fields=changed)
        formset.save_m2m()


class CatalogueAdmin(ServiceSaveMixin, SimpleHistoryAdmin):
    # Lists: their columns, filters and sorting in records.admin_lists (a first base class each).
    list_per_page = 50
    save_on_top = True
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}, **ASCII_NUMBER_FORM_FIELDS}

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        # History is for reading: a revert would be an edit that bypasses the review panel's reasons.
        if request.method == "POST":
            raise PermissionDenied
        return super().history_form_view(request, object_id, version_id, extra_context)

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.pk and "stable_id" in {f.name for f in self.model._meta.fields}:
            readonly.append("stable_id")  # stable ids never change once created
        if hasattr(self.model, "review_state"):
            readonly += list(REVIEW_FIELDS)
        return readonly
