"""A whole imported paper reviewed against its source in a few page loads: the first curator imports
the GUE table (every value proposed, that curator its last editor); the review queue lists records by
the time they entered their state (one reopened after the import comes first, newest first), counts
what waits by source and links the table; the first curator sees the four-eyes reason beside each row and
their submission refused; the second curator ticks every row of a page and checks them all, page
after page, until nothing of the source waits."""

from __future__ import annotations

import pytest
from django.db.models import Count

from records.admin_review_table import ROWS_PER_PAGE
from records.examples import EXAMPLES_DIR, example_document
from records.imports.service import records_import
from records.models import Evaluation, ModelAlias, Protocol, Source
from reviews.models import ReviewEvent, ReviewState
from reviews.services import review_transition_apply
from tests.browser.conftest import admin_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def imported(seeded, curator):
    records_import(document=example_document(EXAMPLES_DIR / "01-dnabert2-gue.json"), actor=curator)
    counted = Evaluation.objects.values("source").annotate(n=Count("pk")).order_by("-n")
    return Source.objects.get(pk=counted[0]["source"])


def apply_to_every_row(page, reason: str) -> None:
    page.get_by_label("Every row on this page").check()
    page.select_option("#id_transition", "check_source")
    page.fill("#id_reason", reason)
    page.get_by_role("button", name="Apply to the ticked rows").click()
    page.wait_for_load_state()


def test_the_second_curator_reviews_a_whole_imported_table_in_a_few_page_loads(
    browser, live_server, imported, curator, other_curator
):
    total = Evaluation.objects.filter(source=imported, review_state=ReviewState.PROPOSED).count()
    assert total > 2 * ROWS_PER_PAGE
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    loads = []
    page.on("load", lambda frame: loads.append(page.url))

    # The importer is refused: the reason stands beside each row, and again after trying.
    admin_login(page, curator.username)
    page.goto(f"/admin/records/source/{imported.pk}/review-table/")
    assert (
        page.locator("#review-table .refusal")
        .first.inner_text()
        .startswith("Check source: four-eyes rule: you edited this record last")
    )
    apply_to_every_row(page, "Matches the table.")
    assert "four-eyes rule: you edited this record last" in page.locator(".messagelist").inner_text()
    assert not ReviewEvent.objects.filter(actor=curator).exists()
    context.clear_cookies()

    # A protocol created before the import, reopened after it: it waits since its reopening.
    reopened = Protocol.objects.filter(review_state__in=[ReviewState.PROPOSED, ReviewState.SOURCE_CHECKED]).earliest(
        "created_at"
    )
    assert reopened.created_at < Evaluation.objects.filter(source=imported).earliest("created_at").created_at
    if reopened.review_state == ReviewState.PROPOSED:
        review_transition_apply(record=reopened, transition="check_source", actor=other_curator)
    review_transition_apply(record=reopened, transition="reopen", actor=curator, reason="The table was reissued.")

    # The second curator: the queue by time in state, the source's table, every row of each page checked.
    loads.clear()
    admin_login(page, other_curator.username)
    page.goto("/admin/review-queue/?order=newest")
    ids = page.locator("#review-queue tbody td:nth-child(3) code")
    assert ids.first.inner_text() == reopened.stable_id
    page.goto("/admin/review-queue/")
    waiting_since = page.locator("#review-queue tbody tr td:first-child").all_inner_texts()
    assert waiting_since == sorted(waiting_since) and reopened.stable_id not in ids.all_inner_texts()
    by_source = page.locator("#waiting-by-source")
    aliases = ModelAlias.objects.filter(source=imported, review_state=ReviewState.PROPOSED).count()
    assert str(total + aliases) in by_source.inner_text()  # the aliases the table prints wait too
    by_source.get_by_role("link", name="Review its table").first.click()
    page.wait_for_selector("#review-table")
    submissions = 0
    while page.locator("#review-table").count():
        apply_to_every_row(page, "Matches Table 4 of the paper.")
        submissions += 1
        assert "Check source: applied to" in page.locator(".messagelist").inner_text()
        assert submissions <= 4
    assert page.get_by_text("No evaluation of this source is proposed").count() == 1
    context.close()

    assert submissions == -(-total // ROWS_PER_PAGE)
    assert not Evaluation.objects.filter(source=imported, review_state=ReviewState.PROPOSED).exists()
    events = ReviewEvent.objects.filter(actor=other_curator)
    assert events.count() == total and set(events.values_list("transition", flat=True)) == {"check_source"}
    assert (
        len(loads) <= 4 + 2 * submissions
    )  # login, the queue in two orders, the table, then a submit and its redirect each
