"""The review state as the admin's lists show it: a short label in a narrow column, the whole label in
its tooltip, sortable and filterable by the state. For reviewable records, and for rows whose state is
another record's (a result shows its evaluation's)."""

from __future__ import annotations

from django.contrib import admin

from common.admin import clamped
from reviews.models import Reviewable, ReviewState

SHORT_LABELS = {
    ReviewState.PROPOSED: "Proposed",
    ReviewState.SOURCE_CHECKED: "Source checked",
    ReviewState.EXCLUDED: "Excluded",
    ReviewState.EXCLUDED_RECHECK: "Excluded, re-check pending",
}


def review_state_cell(state: str) -> str | None:
    """A state's short label ("Excluded"), its whole label ("Excluded from comparison") in the tooltip."""
    if state not in ReviewState.values:
        return clamped(state)
    return clamped(SHORT_LABELS.get(ReviewState(state), ReviewState(state).label), full=ReviewState(state).label)


class ReviewStateColumn:
    """The "review state" column of a list of reviewable records (list_display's "review")."""

    @admin.display(description="review state", ordering="review_state")
    def review(self, record: Reviewable) -> str | None:
        return review_state_cell(record.review_state)
