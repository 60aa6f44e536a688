"""The review workflow as data: one table, one guard (see DESIGN.md, "Review workflow")."""

from __future__ import annotations

from dataclasses import dataclass

from reviews.models import ReviewState


@dataclass(frozen=True)
class Transition:
    name: str
    label: str
    sources: frozenset[str]
    target: str
    permission: str
    needs_reason: bool
    # The four-eyes rule applies: the record's last editor may not apply it.
    four_eyes: bool = False


TRANSITIONS: dict[str, Transition] = {
    t.name: t
    for t in (
        Transition(
            name="check_source",
            label="Check source",
            sources=frozenset({ReviewState.PROPOSED}),
            target=ReviewState.SOURCE_CHECKED,
            permission="reviews.check_source",
            needs_reason=False,
            four_eyes=True,
        ),
        Transition(
            name="exclude",
            label="Exclude from comparison",
            sources=frozenset({ReviewState.SOURCE_CHECKED}),
            target=ReviewState.EXCLUDED,
            permission="reviews.exclude_record",
            needs_reason=True,
        ),
        Transition(
            name="reinstate",
            label="Reinstate",
            sources=frozenset({ReviewState.EXCLUDED}),
            target=ReviewState.SOURCE_CHECKED,
            permission="reviews.reinstate_record",
            needs_reason=True,
        ),
        Transition(
            name="reopen",
            label="Reopen",
            sources=frozenset({ReviewState.SOURCE_CHECKED, ReviewState.EXCLUDED}),
            target=ReviewState.PROPOSED,
            permission="reviews.reopen_record",
            needs_reason=True,
        ),
    )
}
