"""On the demo content at 1,280 px: the GUE protocol page shows its matrix's first row in the
first screen, and the coverage matrix keeps its header row and first column in view as it is
scrolled both ways, so every cell can be tied to its configuration and its protocol."""

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


def test_the_coverage_matrix_keeps_its_header_row_and_first_column_in_view(page, demo):
    page.goto("/coverage/")
    box = page.locator(".table-wrap:has(> table.coverage)")
    header = page.locator("table.coverage thead th").nth(6)  # a configuration's column
    first_cell = page.locator("table.coverage tbody tr").nth(5).locator("th")  # a protocol's name
    before_header, before_cell = header.bounding_box(), first_cell.bounding_box()
    scrolled = box.evaluate(
        "wrap => { wrap.scrollTop = 400; wrap.scrollLeft = 600; return [wrap.scrollTop, wrap.scrollLeft]; }"
    )
    assert scrolled[0] > 0 and scrolled[1] > 0  # the matrix is taller and wider than its box
    after_header, after_cell = header.bounding_box(), first_cell.bounding_box()
    assert before_header and after_header and before_cell and after_cell
    wrap = box.bounding_box()
    assert wrap is not None
    assert abs(after_header["y"] - wrap["y"]) <= 2  # the header row stays at the box's top
    assert abs(after_cell["x"] - wrap["x"]) <= 2  # the protocols' column stays at its left
    assert after_header["x"] < before_header["x"]  # while the columns themselves scrolled
