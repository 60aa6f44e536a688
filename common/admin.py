"""What the apps' admins share."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """For audit logs and rows that change only through their services: shown, never added,
    changed or deleted through the admin. Works for model admins and inlines alike."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class LabelledTabularInline(admin.TabularInline):
    """A tabular inline whose inputs carry their column's name (`aria-label`): a table row's inputs
    have no <label> of their own, so screen readers (and axe) would meet them unnamed. The table
    scrolls inside its own box (static/css/admin.css), never the page."""

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        formset = super().get_formset(request, obj, **kwargs)
        for name, field in formset.form.base_fields.items():
            field.widget.attrs.setdefault("aria-label", str(field.label or name))
        return formset
