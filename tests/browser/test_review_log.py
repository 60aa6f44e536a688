"""A curator reviews an evaluation in the admin; its public page shows the review log a reader can follow."""

from __future__ import annotations

import pytest

from reviews.models import ReviewEvent
from tests.browser.conftest import admin_login
from tests.factories import EvaluationFactory, ResultFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_evaluation_page_shows_each_transition_by_role_with_its_reason_on_a_phone(page, curator):
    evaluation = ResultFactory(evaluation=EvaluationFactory(title="A reviewed evaluation")).evaluation
    admin_login(page, curator.username)
    page.goto(f"/admin/records/evaluation/{evaluation.pk}/change/")
    page.get_by_role("button", name="Check source").click()
    page.wait_for_selector("text=Check source: the record is now source checked.")
    page.fill("#review-reason", "The value is the validation split's, not the test split's.")
    page.get_by_role("button", name="Exclude from comparison").click()
    page.wait_for_selector("text=Exclude from comparison: the record is now excluded from comparison.")
    checked, excluded = ReviewEvent.objects.order_by("id")

    page.context.clear_cookies()  # a reader, not the curator
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/evaluations/{evaluation.stable_id}/")
    log = page.get_by_role("region", name="Review log")
    log.scroll_into_view_if_needed()
    assert log.is_visible()
    entries = log.locator("li").all_inner_texts()
    when = [event.created_at.strftime("%Y-%m-%d %H:%M UTC") for event in (checked, excluded)]
    assert entries == [
        f"{when[0]}: Source checked, by a curator.",
        f"{when[1]}: Excluded from comparison, by a curator. "
        "Reason: The value is the validation split's, not the test split's.",
    ]
    assert curator.username not in log.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing scrolls sideways
