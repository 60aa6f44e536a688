"""record_save is the one place that decides whether an edit reopens a review: sourced fields by
default, any edit with `reopen=True` (an accepted correction), and the sourced fields an app above
names for its own records (`sourced_fields`)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from records.models import Evaluation
from records.services import record_save
from reviews.models import ReviewEvent, ReviewState
from tests.factories import ConfigurationFactory, EvaluationFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def events(record) -> list[tuple[str, str]]:
    return list(
        ReviewEvent.objects.filter(record_stable_id=record.stable_id).order_by("pk").values_list("transition", "reason")
    )


@pytest.mark.parametrize(
    "path, state, transition",
    [
        (("check_source",), ReviewState.PROPOSED, "reopen"),
        (("check_source", "exclude"), ReviewState.EXCLUDED_RECHECK, "reopen_excluded"),
    ],
)
def test_reopen_reopens_a_reviewed_record_though_no_sourced_field_changed(curator, path, state, transition):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, *path)
    evaluation.refresh_from_db()
    evaluation.setup = "a clearer setup"
    record_save(
        record=evaluation, actor=curator, changed_fields=["setup"], reason="correction #7 accepted: setup", reopen=True
    )
    evaluation.refresh_from_db()
    assert (evaluation.review_state, evaluation.last_edited_by) == (state, curator)
    assert events(evaluation)[-1] == (transition, "correction #7 accepted: setup")
    if state == ReviewState.EXCLUDED_RECHECK:
        assert evaluation.concern == "test reason"  # still out, its concern public


def test_reopen_without_a_reason_says_what_was_edited(curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    evaluation.setup = "a clearer setup"
    record_save(record=evaluation, actor=curator, changed_fields=["setup"], reopen=True)
    assert events(evaluation)[-1] == ("reopen", "edited: setup")


def test_reopen_with_a_sourced_change_reopens_once_with_the_edit_named(curator):
    result = ResultFactory()
    apply_transitions(result.evaluation, "check_source")
    before = len(events(result.evaluation))
    result.value, result.printed_value = Decimal("15"), "15"
    record_save(
        record=result,
        actor=curator,
        changed_fields=["value", "printed_value"],
        reason="correction #8 accepted: value",
        reopen=True,
    )
    assert events(result.evaluation)[before:] == [
        ("reopen", f"edited: result {result.stable_id} printed_value, value (correction #8 accepted: value)")
    ]


def test_reopen_leaves_a_proposed_record_and_a_record_without_review_alone(curator):
    evaluation = EvaluationFactory()
    evaluation.setup = "changed"
    record_save(record=evaluation, actor=curator, changed_fields=["setup"], reopen=True)
    configuration = ConfigurationFactory()
    configuration.family = "changed"
    assert record_save(record=configuration, actor=curator, changed_fields=["family"], reopen=True)
    assert not ReviewEvent.objects.exists()


def test_without_reopen_an_unsourced_edit_keeps_the_review(curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    evaluation.setup = "a clearer setup"
    record_save(record=evaluation, actor=curator, changed_fields=["setup"], reason="correction #9 accepted: setup")
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.SOURCE_CHECKED


def test_sourced_fields_names_what_reopens_a_record_of_an_app_above(curator):
    """How benchmarks' recipes (their run fields) can reopen through the same rule."""
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source", "exclude")
    evaluation.quote = "not sourced for this caller"
    record_save(record=evaluation, actor=curator, changed_fields=["quote"], sourced_fields={"setup"})
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.EXCLUDED
    evaluation.setup = "sourced for this caller"
    record_save(record=evaluation, actor=curator, changed_fields=["setup"], sourced_fields={"setup"})
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.EXCLUDED_RECHECK
    assert events(evaluation)[-1] == ("reopen_excluded", "edited: setup")
    assert Evaluation.objects.get(pk=evaluation.pk).last_edited_by == curator
