"""Helpers shared by tests."""

from __future__ import annotations


def apply_transitions(record, *names: str, reason: str = "test reason") -> None:
    """Move a record along the workflow through the one service, as the portal's importer does."""
    from reviews.services import review_transition_apply

    for name in names:
        review_transition_apply(record=record, transition=name, actor=None, reason=reason, automatic=True)
