"""On the demo content at 1,280 px: the GUE protocol page shows its matrix's first row in the
first screen. (The coverage matrix's header row and first column: tests/browser/test_coverage_matrix.py.)"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GUE = "/protocols/gue-mcc-x100-zhou-2024/"
SCREEN_HEIGHT = 900  # the page fixture's viewport


def test_the_gue_page_shows_its_title_what_it_compares_and_the_matrixs_first_rows_in_the_first_screen(
    page, demo_content
):
    response = page.goto(GUE)
    assert len(response.body()) < 200_000
    for selector in ("h1", "p.scope", "table.matrix thead"):
        box = page.locator(selector).first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= SCREEN_HEIGHT, selector
    assert page.locator("p.scope").inner_text().startswith("10 tested configurations × 27 tasks")
    rows = page.locator("table.matrix tbody tr")
    assert rows.count() == 10
    third = rows.nth(2).bounding_box()
    assert third is not None and third["y"] + third["height"] <= SCREEN_HEIGHT
    assert page.evaluate("window.scrollY") == 0
