"""On the demo content at 1,280 px: the GUE protocol page shows its matrix's first row in the
first screen. (The coverage matrix's header row and first column: tests/browser/test_coverage_matrix.py.)"""

from __future__ import annotations

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GUE = "/protocols/gue-mcc-x100-zhou-2024/"
SCREEN_HEIGHT = 900  # the page fixture's viewport


@pytest.fixture
def demo(seeded):
    call_command("load_examples", stdout=open("/dev/null", "w"))


def test_the_gue_page_shows_the_matrixs_first_row_in_the_first_screen(page, demo):
    page.goto(GUE)
    rows = page.locator("table.matrix tbody tr")
    assert rows.count() > 3
    first = rows.nth(0).bounding_box()
    assert first is not None and first["y"] + first["height"] <= SCREEN_HEIGHT
    assert page.evaluate("window.scrollY") == 0
