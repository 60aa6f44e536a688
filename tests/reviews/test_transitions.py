"""The transition table applied by the one service: legal moves, refusals, reasons, four-eyes, audit."""

from __future__ import annotations

import pytest

from records.models import Evaluation
from records.services import record_save
from reviews.models import ReviewEvent, ReviewState
from reviews.services import (
    ReviewError,
    TransitionConflict,
    TransitionForbidden,
    available_transitions,
    review_transition_apply,
)
from reviews.transitions import TRANSITIONS
from tests.factories import EvaluationFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

# (transitions to reach the start state, transition under test, expected end state)
LEGAL = [
    ((), "check_source", ReviewState.SOURCE_CHECKED),
    (("check_source",), "exclude", ReviewState.EXCLUDED),
    (("check_source", "exclude"), "reinstate", ReviewState.SOURCE_CHECKED),
    (("check_source",), "reopen", ReviewState.PROPOSED),
    (("check_source", "exclude"), "reopen_excluded", ReviewState.EXCLUDED_RECHECK),
    (("check_source", "exclude", "reopen_excluded"), "recheck", ReviewState.EXCLUDED),
    (("check_source", "exclude", "reopen_excluded"), "reinstate", ReviewState.SOURCE_CHECKED),
]
START = {
    ReviewState.PROPOSED: (),
    ReviewState.SOURCE_CHECKED: ("check_source",),
    ReviewState.EXCLUDED: ("check_source", "exclude"),
    ReviewState.EXCLUDED_RECHECK: ("check_source", "exclude", "reopen_excluded"),
}
ILLEGAL = [
    (state, name) for state, path in START.items() for name, spec in TRANSITIONS.items() if state not in spec.sources
]


def evaluation_in(path: tuple[str, ...]) -> Evaluation:
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, *path)
    return evaluation


def audit_counts(record) -> tuple[int, int]:
    return ReviewEvent.objects.filter(
        object_id=record.pk, record_stable_id=record.stable_id
    ).count(), record.history.count()


@pytest.mark.parametrize("path, name, target", LEGAL)
def test_it_applies_every_legal_transition_with_one_event_and_one_history_row(curator, path, name, target):
    evaluation = evaluation_in(path)
    events_before, history_before = audit_counts(evaluation)
    event = review_transition_apply(
        record=evaluation, transition=name, actor=curator, reason="because the source says so"
    )
    evaluation.refresh_from_db()
    assert evaluation.review_state == target
    assert audit_counts(evaluation) == (events_before + 1, history_before + 1)
    assert (event.transition, event.to_state, event.actor, event.actor_role, event.reason) == (
        name,
        target,
        curator,
        "curator",
        "because the source says so",
    )
    latest = evaluation.history.first()
    assert latest.history_user == curator
    assert latest.history_change_reason == f"{TRANSITIONS[name].label}: because the source says so"
    assert latest.review_state == target


@pytest.mark.parametrize("state, name", ILLEGAL)
def test_it_refuses_every_illegal_transition_and_writes_nothing(curator, state, name):
    evaluation = evaluation_in(START[state])
    before = audit_counts(evaluation)
    with pytest.raises(TransitionConflict):
        review_transition_apply(record=evaluation, transition=name, actor=curator, reason="a reason")
    evaluation.refresh_from_db()
    assert evaluation.review_state == state
    assert audit_counts(evaluation) == before


@pytest.mark.parametrize(
    "path, name",
    [(("check_source",), "exclude"), (("check_source", "exclude"), "reinstate"), (("check_source",), "reopen")],
)
@pytest.mark.parametrize("reason", ["", "   "])
def test_it_refuses_a_transition_without_reason(curator, path, name, reason):
    evaluation = evaluation_in(path)
    before = audit_counts(evaluation)
    with pytest.raises(ReviewError) as refused:
        review_transition_apply(record=evaluation, transition=name, actor=curator, reason=reason)
    assert refused.value.field == "reason" and refused.value.status == 400
    assert audit_counts(evaluation) == before


def test_it_refuses_an_unknown_transition(curator):
    with pytest.raises(ReviewError, match="unknown transition"):
        review_transition_apply(record=EvaluationFactory(), transition="approve", actor=curator)


def test_it_refuses_the_check_by_the_records_last_editor(curator, other_curator):
    evaluation = EvaluationFactory()
    evaluation.setup = "edited by the first curator"
    record_save(record=evaluation, actor=curator, changed_fields=["setup"])
    with pytest.raises(TransitionForbidden, match="four-eyes"):
        review_transition_apply(record=evaluation, transition="check_source", actor=curator)
    assert [t.name for t in available_transitions(record=evaluation, user=curator)] == []
    review_transition_apply(record=evaluation, transition="check_source", actor=other_curator)
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.SOURCE_CHECKED


def test_it_lets_a_one_person_deployment_turn_the_four_eyes_rule_off(curator, settings):
    settings.REVIEW_FOUR_EYES = False
    evaluation = EvaluationFactory()
    record_save(record=evaluation, actor=curator, changed_fields=["setup"])
    review_transition_apply(record=evaluation, transition="check_source", actor=curator)


def test_it_makes_the_exclude_reason_the_public_concern_and_clears_it_on_reinstate(curator):
    evaluation = evaluation_in(("check_source",))
    review_transition_apply(
        record=evaluation, transition="exclude", actor=curator, reason="Values conflict within the article."
    )
    evaluation.refresh_from_db()
    assert evaluation.concern == "Values conflict within the article."
    review_transition_apply(
        record=evaluation, transition="reinstate", actor=curator, reason="Corrected by the authors."
    )
    evaluation.refresh_from_db()
    assert evaluation.concern == ""


def test_it_refuses_when_the_record_changed_since_the_curator_saw_it(curator):
    evaluation = evaluation_in(("check_source",))
    with pytest.raises(TransitionConflict, match="changed meanwhile"):
        review_transition_apply(
            record=evaluation, transition="exclude", actor=curator, reason="r", expected_state=ReviewState.PROPOSED
        )


def test_it_offers_only_the_legal_transitions(curator):
    evaluation = evaluation_in(("check_source",))
    assert [t.name for t in available_transitions(record=evaluation, user=curator)] == ["exclude", "reopen"]
    evaluation = evaluation_in(("check_source", "exclude"))
    assert [t.name for t in available_transitions(record=evaluation, user=curator)] == ["reinstate", "reopen_excluded"]
    evaluation = evaluation_in(("check_source", "exclude", "reopen_excluded"))
    assert [t.name for t in available_transitions(record=evaluation, user=curator)] == ["reinstate", "recheck"]
