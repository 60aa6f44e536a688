"""The review workflow as data: one table, one guard (docs/architecture/design-map.md, "Review workflow")."""

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
    # It says the record matches its source: where the record itself finds a contradiction
    # (`Reviewable.review_check_problems`, a value its quote does not print), it needs a reason.
    checks_source: bool = False


# Exclusion is sticky: from either excluded state the only way back into comparisons is
# `reinstate`, with a reason, by a curator other than the record's last editor. An edit of an
# excluded record (automatic, or a curator's `reopen`) leads to "excluded, re-check pending", never
# to proposed, so no later `check_source` can make it comparable; its concern stays public. A
# proposed record that should never be compared (junk, out of scope) is refused: excluded with a
# reason by a curator other than its last editor, its source still unchecked ("excluded, re-check
# pending"), so a reinstatement is a second curator's reasoned decision as for any exclusion.
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
            checks_source=True,
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
            name="refuse",
            label="Refuse (exclude unchecked)",
            sources=frozenset({ReviewState.PROPOSED}),
            target=ReviewState.EXCLUDED_RECHECK,
            permission="reviews.exclude_record",
            needs_reason=True,
            four_eyes=True,
        ),
        Transition(
            name="reinstate",
            label="Reinstate",
            sources=frozenset({ReviewState.EXCLUDED, ReviewState.EXCLUDED_RECHECK}),
            target=ReviewState.SOURCE_CHECKED,
            permission="reviews.reinstate_record",
            needs_reason=True,
            four_eyes=True,
        ),
        Transition(
            name="reopen",
            label="Reopen",
            sources=frozenset({ReviewState.SOURCE_CHECKED}),
            target=ReviewState.PROPOSED,
            permission="reviews.reopen_record",
            needs_reason=True,
        ),
        Transition(
            name="reopen_excluded",
            label="Reopen (stays excluded)",
            sources=frozenset({ReviewState.EXCLUDED}),
            target=ReviewState.EXCLUDED_RECHECK,
            permission="reviews.reopen_record",
            needs_reason=True,
        ),
        Transition(
            name="recheck",
            label="Check source (stays excluded)",
            sources=frozenset({ReviewState.EXCLUDED_RECHECK}),
            target=ReviewState.EXCLUDED,
            permission="reviews.check_source",
            needs_reason=False,
            four_eyes=True,
            checks_source=True,
        ),
    )
}

#: The transition an edit applies to a reviewed record, by its state (a proposed record, or one
#: already waiting for its re-check, stays as it is).
REOPEN_ON_EDIT: dict[str, str] = {
    ReviewState.SOURCE_CHECKED: "reopen",
    ReviewState.EXCLUDED: "reopen_excluded",
}
