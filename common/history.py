"""What django-simple-history records with the next save of a row: who changed it and why; and
the history model every app uses (`AuditHistory`)."""

from __future__ import annotations

from typing import Any

from django.db import models
from simple_history.models import HistoricalRecords

from common.types import Actor


def history_note(record: Any, *, user: Actor, reason: str) -> None:
    """Set the history row's user and change reason for the next `save()` of `record` (simple-history
    reads them from these two attributes, which the model classes do not declare)."""
    record._history_user = user
    record._change_reason = reason


class AuditHistory(HistoricalRecords):
    """simple-history's HistoricalRecords, whose rows keep who made them.

    History tables are append-only in the database (`common.append_only`); simple-history's own
    `history_user` is SET_NULL, so deleting a user who edited would rewrite their history rows (and
    the trigger would refuse it with an integrity error). Here it is PROTECT: the admin says which
    history keeps the user, who is deactivated instead. (Overrides a private method of
    django-simple-history 3.x, pinned in requirements.txt; tests/common/test_append_only.py checks it.)
    """

    def _get_history_user_fields(self) -> dict[str, Any]:
        fields = super()._get_history_user_fields()
        user = fields.get("history_user")
        if isinstance(user, models.ForeignKey):
            fields["history_user"] = models.ForeignKey(
                user.remote_field.model,
                null=True,
                related_name=self.user_related_name,
                on_delete=models.PROTECT,
                db_constraint=self.user_db_constraint,
            )
        return fields
