"""A visitor suggests a correction on the seed page; a curator accepts it; the visitor sees the decision."""

from __future__ import annotations

import pytest

from corrections.forms import MIN_SECONDS
from corrections.models import Correction
from records.seed import PROTOCOL_ID
from tests.browser.conftest import admin_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_visitor_suggests_a_correction_and_follows_it_to_acceptance(browser, live_server, seeded, curator):
    visitor = browser.new_context(base_url=live_server.url)
    page = visitor.new_page()
    page.goto(f"/protocols/{PROTOCOL_ID}/")
    page.select_option(
        "#id_target", label="value of NT 500M-parameter models on NT benchmark, all 18 tasks (20 minute)"
    )
    page.fill("#id_proposed_value", "15")
    page.fill("#id_explanation", "The Discussion says the largest models fine-tune in under 15 min on a single GPU.")
    page.fill("#id_supporting_source", "https://pmc.ncbi.nlm.nih.gov/articles/PMC11810778/")
    page.wait_for_timeout((MIN_SECONDS + 0.5) * 1000)  # a person takes a few seconds; the form checks it
    page.get_by_role("button", name="Send suggestion").click()
    page.wait_for_selector("h1:text('Thank you')")
    status_url = page.locator("main a[href^='/corrections/']").first.get_attribute("href")
    page.goto(status_url)
    assert page.locator(".correction-status").inner_text() == "New"

    correction = Correction.objects.get()
    moderator = browser.new_context(base_url=live_server.url)
    admin_page = moderator.new_page()
    admin_login(admin_page, curator.username)
    admin_page.goto(f"/admin/corrections/correction/{correction.pk}/change/")
    assert admin_page.locator("#value-now").inner_text() == "20"
    admin_page.fill(
        "#moderation-response", "Thank you: the single-GPU figure is recorded as a concern, not as a value."
    )
    admin_page.get_by_role("button", name="Accept").click()
    admin_page.wait_for_selector(f"text=Suggestion #{correction.pk}: accepted.")

    page.goto(status_url)
    assert page.locator(".correction-status").inner_text() == "Accepted"
    assert "the single-GPU figure is recorded as a concern" in page.locator(".correction-response").inner_text()
    visitor.close()
    moderator.close()
