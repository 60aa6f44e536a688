"""Editing a sourced field of a reviewed record sends it back to review, through the review service."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from records.models import Evaluation, Result, Source
from records.services import record_delete, record_save
from reviews.models import ReviewEvent, ReviewState
from reviews.services import TransitionForbidden, review_transition_apply
from tests.factories import EvaluationFactory, ProtocolFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def last_event(record) -> ReviewEvent:
    return ReviewEvent.objects.filter(object_id=record.pk, record_stable_id=record.stable_id).last()


@pytest.mark.parametrize(
    "path, state, transition, label",
    [
        (("check_source",), ReviewState.PROPOSED, "reopen", "Reopen"),
        # An excluded record stays excluded: only a reinstate brings it back into comparisons.
        (("check_source", "exclude"), ReviewState.EXCLUDED_RECHECK, "reopen_excluded", "Reopen (stays excluded)"),
    ],
)
@pytest.mark.parametrize("field, value", [("source_locator", "Table 2"), ("quote", "Another sentence.")])
def test_it_reopens_a_reviewed_evaluation_when_a_sourced_field_changes(
    curator, path, state, transition, label, field, value
):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, *path)
    evaluation.refresh_from_db()
    setattr(evaluation, field, value)
    record_save(record=evaluation, actor=curator, changed_fields=[field])
    evaluation.refresh_from_db()
    assert evaluation.review_state == state
    event = last_event(evaluation)
    assert (event.transition, event.reason, event.actor) == (transition, f"edited: {field}", curator)
    assert evaluation.history.first().history_change_reason == f"{label}: edited: {field}"


def test_it_reopens_an_evaluation_when_the_source_changes(curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    evaluation.source = Source.objects.create(stable_id="other-source", title="Another paper")
    record_save(record=evaluation, actor=curator, changed_fields=["source"])
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.PROPOSED
    assert last_event(evaluation).reason == "edited: source"


@pytest.mark.parametrize(
    "changes",
    [
        {"value": Decimal("21"), "printed_value": "21"},
        {"value": Decimal("1.0"), "printed_value": "1.0"},
        {"num_runs": 3},
    ],
)
def test_it_reopens_the_evaluation_when_its_results_value_changes(curator, changes):
    result = ResultFactory()
    apply_transitions(result.evaluation, "check_source")
    for field, value in changes.items():
        setattr(result, field, value)
    record_save(record=result, actor=curator, changed_fields=list(changes))
    result.evaluation.refresh_from_db()
    assert result.evaluation.review_state == ReviewState.PROPOSED
    assert last_event(result.evaluation).reason == f"edited: result {result.stable_id} {', '.join(sorted(changes))}"


def test_it_keeps_the_review_when_an_unsourced_field_changes(curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    evaluation.setup = "a clearer description of the setup"
    record_save(record=evaluation, actor=curator, changed_fields=["setup"])
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.SOURCE_CHECKED
    assert evaluation.last_edited_by == curator


def test_it_leaves_a_proposed_record_proposed_without_an_event(curator):
    evaluation = EvaluationFactory()
    evaluation.quote = "changed"
    record_save(record=evaluation, actor=curator, changed_fields=["quote"])
    assert not ReviewEvent.objects.exists()


def test_it_reopens_through_the_admin_too(client, curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    client.force_login(curator)
    from django.forms.models import model_to_dict

    data = {k: ("" if v is None else v) for k, v in model_to_dict(evaluation).items() if k not in {"id"}}
    data.update({"source_locator": "Figure 3", "results-TOTAL_FORMS": 0, "results-INITIAL_FORMS": 0})
    response = client.post(f"/admin/records/evaluation/{evaluation.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.PROPOSED
    assert last_event(evaluation).reason == "edited: source_locator"


def test_it_reopens_a_checked_evaluation_when_a_result_is_added(curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    result = Result(
        stable_id="late-result",
        evaluation=evaluation,
        value=Decimal("3"),
        unit=evaluation.protocol.metric_unit,
        printed_value="3",
    )
    record_save(record=result, actor=curator)
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.PROPOSED
    assert last_event(evaluation).reason == "edited: result late-result added"


def test_it_reopens_the_evaluation_when_a_result_is_deleted(curator):
    result = ResultFactory()
    evaluation = result.evaluation
    apply_transitions(evaluation, "check_source", "exclude")
    record_delete(record=result, actor=curator)
    evaluation.refresh_from_db()
    assert (evaluation.review_state, evaluation.concern) == (
        ReviewState.EXCLUDED_RECHECK,
        "test reason",
    )  # still out, concern public
    assert last_event(evaluation).reason == f"edited: result {result.stable_id} deleted"
    assert Result.history.filter(stable_id=result.stable_id).first().history_user == curator


def test_it_reopens_both_evaluations_when_a_result_moves(curator):
    result = ResultFactory()
    old, new = result.evaluation, EvaluationFactory(protocol=result.evaluation.protocol)
    apply_transitions(old, "check_source")
    apply_transitions(new, "check_source")
    result.evaluation = new
    record_save(record=result, actor=curator, changed_fields=["evaluation"])
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.review_state, new.review_state) == (ReviewState.PROPOSED, ReviewState.PROPOSED)
    assert last_event(old).reason == f"edited: result {result.stable_id} moved away"


def test_it_makes_the_editor_of_a_result_its_evaluations_last_editor(curator, other_curator):
    """The four-eyes rule cannot be dodged by editing the number instead of the evaluation."""
    result = ResultFactory(evaluation=EvaluationFactory(last_edited_by=other_curator))
    result.value, result.printed_value = Decimal("2"), "2"
    record_save(record=result, actor=curator, changed_fields=["value", "printed_value"])
    with pytest.raises(TransitionForbidden, match="four-eyes"):
        review_transition_apply(record=result.evaluation, transition="check_source", actor=curator, reason="")
    assert review_transition_apply(record=result.evaluation, transition="check_source", actor=other_curator, reason="")


def test_it_keeps_a_transition_made_while_an_edit_was_open(curator, other_curator):
    """An edit saved from a copy loaded before another curator's exclusion does not undo it."""
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    stale = Evaluation.objects.get(pk=evaluation.pk)
    apply_transitions(evaluation, "exclude", reason="runs on different hardware")
    stale.title = "A clearer title"
    record_save(record=stale, actor=curator, changed_fields=["title"])
    evaluation.refresh_from_db()
    assert (evaluation.title, evaluation.review_state, evaluation.concern) == (
        "A clearer title",
        ReviewState.EXCLUDED,
        "runs on different hardware",
    )


def test_it_refuses_a_result_in_another_unit_as_a_field_error(curator):
    evaluation = EvaluationFactory()
    result = Result(stable_id="wrong-unit", evaluation=evaluation, value=Decimal("1"), unit="hour", printed_value="1 h")
    with pytest.raises(ValidationError) as error:
        record_save(record=result, actor=curator)
    assert "unit" in error.value.message_dict
    assert not Result.objects.filter(stable_id="wrong-unit").exists()


def test_it_refuses_a_metric_unit_its_results_do_not_use_as_a_field_error(curator):
    protocol = ResultFactory().evaluation.protocol
    protocol.metric_unit = "hour"
    with pytest.raises(ValidationError) as error:
        record_save(record=protocol, actor=curator, changed_fields=["metric_unit"])
    assert "1 result(s)" in error.value.message_dict["metric_unit"][0]


def test_it_refuses_moving_an_evaluation_to_a_protocol_of_another_unit(curator):
    result = ResultFactory()
    evaluation = result.evaluation
    evaluation.protocol = ProtocolFactory(metric_unit="hour")
    with pytest.raises(ValidationError) as error:
        record_save(record=evaluation, actor=curator, changed_fields=["protocol"])
    assert "protocol" in error.value.message_dict


def test_it_reopens_the_evaluation_when_a_result_is_deleted_in_the_admin(admin_client):
    result = ResultFactory()
    apply_transitions(result.evaluation, "check_source")
    response = admin_client.post(f"/admin/records/result/{result.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    result.evaluation.refresh_from_db()
    assert result.evaluation.review_state == ReviewState.PROPOSED
    assert last_event(result.evaluation).reason == f"edited: result {result.stable_id} deleted"
