"""What the apps' admins share."""

from __future__ import annotations

from typing import Any

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
