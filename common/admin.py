"""What the apps' admins share."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html


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


# -- admin lists: at most two lines a row, long texts whole in a tooltip (static/css/admin.css)

LONG_TEXT = 40  # a text this long may be cut by its column: its whole is then in the title attribute


def clamped(text: object, *, full: object = None) -> str | None:
    """A list cell's text cut to two lines by the stylesheet (`.clamp`), its whole text (or `full`, when
    the cell shows a shorter form) in the title attribute when it may be cut; None (Django's "-") when empty."""
    shown = "" if text is None else str(text)
    whole = shown if full is None else str(full)
    if not shown:
        return None
    if len(whole) > LONG_TEXT or whole != shown:
        return format_html('<span class="clamp" title="{}">{}</span>', whole, shown)
    return format_html('<span class="clamp">{}</span>', shown)


def list_time(moment: datetime | None) -> str | None:
    """A list's time to the minute in the site's time zone; None (Django's "-") when there is none."""
    return None if moment is None else timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")


class ChangedColumn:
    """The "last change" column of a list of records with `updated_at` (a review transition moves it too)."""

    @admin.display(description="last change (UTC)", ordering="updated_at")
    def changed(self, obj: Any) -> str | None:
        return clamped(list_time(obj.updated_at))  # the date above the time in a narrow column


class ValuesListFilter(admin.AllValuesFieldListFilter):
    """Django's filter by each value of a text column, with the blank value named ("none given")
    rather than shown as a link without text."""

    def choices(self, changelist: Any) -> Any:
        for choice in super().choices(changelist):
            display = str(choice["display"])
            if display == "" or display.startswith(" ("):  # blank, or blank with its count
                choice = {**choice, "display": f"none given{display}"}
            yield choice
