"""A curator checks the source of a proposed evaluation, excludes it, and the public page shows why."""

from __future__ import annotations

import pytest

from records.models import Evaluation
from reviews.models import ReviewEvent, ReviewState
from tests.browser.conftest import admin_login
from tests.factories import EvaluationFactory, ResultFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_curator_checks_then_excludes_an_evaluation_and_the_public_page_shows_the_concern(page, curator):
    result = ResultFactory(evaluation=EvaluationFactory(title="A proposed run-time evaluation"))
    evaluation = result.evaluation
    admin_login(page, curator.username)

    page.goto(f"/admin/records/evaluation/{evaluation.pk}/change/")
    page.get_by_role("button", name="Check source").click()
    page.wait_for_selector("text=Check source: the record is now source checked.")

    page.fill("#review-reason", "The table and the text of the paper disagree on this value.")
    page.get_by_role("button", name="Exclude from comparison").click()
    page.wait_for_selector("text=Exclude from comparison: the record is now excluded from comparison.")

    evaluation = Evaluation.objects.get(pk=evaluation.pk)
    assert evaluation.review_state == ReviewState.EXCLUDED
    assert [e.transition for e in ReviewEvent.objects.order_by("id")] == ["check_source", "exclude"]
    assert {e.actor_id for e in ReviewEvent.objects.all()} == {curator.pk}

    page.goto(f"/protocols/{evaluation.protocol.stable_id}/")
    concern = page.locator(f"#evaluation-{evaluation.stable_id} .concern")
    assert "Evidence concern: excluded from comparisons" in concern.inner_text()
    assert "The table and the text of the paper disagree on this value." in concern.inner_text()
    assert page.locator("text=(best in column").count() == 0
