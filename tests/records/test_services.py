"""Editing a sourced field of a reviewed record sends it back to review, through the review service."""

from __future__ import annotations

from decimal import Decimal

import pytest

from records import models as m
from records.services import record_save
from reviews.models import ReviewEvent, ReviewState
from tests.factories import EvaluationFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def last_event(record) -> ReviewEvent:
    return ReviewEvent.objects.filter(object_id=record.pk, record_stable_id=record.stable_id).last()


@pytest.mark.parametrize("path", [("check_source",), ("check_source", "exclude")])
@pytest.mark.parametrize("field, value", [("source_locator", "Table 2"), ("quote", "Another sentence.")])
def test_it_reopens_a_reviewed_evaluation_when_a_sourced_field_changes(curator, path, field, value):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, *path)
    evaluation.refresh_from_db()
    setattr(evaluation, field, value)
    record_save(record=evaluation, actor=curator, changed_fields=[field])
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.PROPOSED
    event = last_event(evaluation)
    assert (event.transition, event.reason, event.actor) == ("reopen", f"edited: {field}", curator)
    assert evaluation.history.first().history_change_reason == f"Reopen: edited: {field}"


def test_it_reopens_an_evaluation_when_the_source_changes(curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    evaluation.source = m.Source.objects.create(stable_id="other-source", title="Another paper")
    record_save(record=evaluation, actor=curator, changed_fields=["source"])
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.PROPOSED
    assert last_event(evaluation).reason == "edited: source"


@pytest.mark.parametrize("field, value", [("value", Decimal("21")), ("printed_value", "21 min")])
def test_it_reopens_the_evaluation_when_its_results_value_changes(curator, field, value):
    result = ResultFactory()
    apply_transitions(result.evaluation, "check_source")
    setattr(result, field, value)
    record_save(record=result, actor=curator, changed_fields=[field])
    result.evaluation.refresh_from_db()
    assert result.evaluation.review_state == ReviewState.PROPOSED
    assert last_event(result.evaluation).reason == f"edited: result {result.stable_id} {field}"


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
