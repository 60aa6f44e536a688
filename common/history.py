"""What django-simple-history records with the next save of a row: who changed it and why."""

from __future__ import annotations

from typing import Any

from common.types import Actor


def history_note(record: Any, *, user: Actor, reason: str) -> None:
    """Set the history row's user and change reason for the next `save()` of `record` (simple-history
    reads them from these two attributes, which the model classes do not declare)."""
    record._history_user = user
    record._change_reason = reason
