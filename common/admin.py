"""What the apps' admins share."""

from __future__ import annotations


class ReadOnlyAdminMixin:
    """For audit logs and rows that change only through their services: shown, never added,
    changed or deleted through the admin. Works for model admins and inlines alike."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
