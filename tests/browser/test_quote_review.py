"""A second curator checks a row in the real browser with its quote on the screen: a value the quote
does not print is marked, and checking it needs their reason; a junk proposed row is refused."""

from __future__ import annotations

from decimal import Decimal

import pytest

from records.models import Evaluation, Result
from reviews.models import ReviewEvent, ReviewState
from tests.browser.conftest import admin_login
from tests.factories import EvaluationFactory, ResultFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_checker_reads_the_quote_beside_the_value_and_gives_a_reason_for_a_contradiction(
    page, curator, other_curator
):
    result = ResultFactory(
        value=Decimal("20"),
        printed_value="20 min",
        evaluation=EvaluationFactory(quote="a fine-tuning run lasted 20 min", last_edited_by=curator),
    )
    Result.objects.filter(pk=result.pk).update(
        value="15", printed_value="15 min"
    )  # as the old correction path wrote it
    admin_login(page, other_curator.username)
    page.goto(f"/admin/records/evaluation/{result.evaluation_id}/change/")
    evidence = page.locator("#review-evidence")
    assert "a fine-tuning run lasted 20 min" in evidence.inner_text()
    assert "Contradicts the quote: its quote does not print 15 (it prints 20)" in evidence.inner_text()
    page.get_by_role("button", name="Check source", exact=True).click()
    page.wait_for_selector("text=Nothing changed: 'Check source' needs a reason here")
    assert Evaluation.objects.get(pk=result.evaluation_id).review_state == ReviewState.PROPOSED
    page.fill("#review-reason", "The journal version's Table 2 prints 15 min; the quote is the preprint's.")
    page.get_by_role("button", name="Check source", exact=True).click()
    page.wait_for_selector("text=Check source: the record is now source checked.")
    event = ReviewEvent.objects.get(record_stable_id=result.evaluation.stable_id, transition="check_source")
    assert event.reason.startswith("The journal version's Table 2")


def test_a_second_curator_refuses_a_junk_proposed_row_with_a_reason(page, curator, other_curator):
    evaluation = EvaluationFactory(last_edited_by=curator)
    admin_login(page, other_curator.username)
    page.goto(f"/admin/records/evaluation/{evaluation.pk}/change/")
    page.fill("#review-reason", "A protein benchmark: out of scope.")
    page.get_by_role("button", name="Refuse (exclude unchecked)").click()
    page.wait_for_selector("text=the record is now excluded")
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.EXCLUDED_RECHECK
    assert evaluation.concern == "A protein benchmark: out of scope."
