"""The coverage matrix on the demo content at 390 and 1,280 px: scrolled both ways inside its own box,
its header row (the models) and first column (the protocols) stay in view, so every cell can be
tied to both; nothing scrolls the page sideways; axe-core finds nothing."""

from __future__ import annotations

import pytest

from tests.browser.conftest import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (390, 1280)


def test_the_coverage_matrix_keeps_its_header_row_and_first_column_in_view_at_390_and_1280_px(
    browser, live_server, demo_content
):
    for width in WIDTHS:
        context = browser.new_context(
            base_url=live_server.url,
            viewport={"width": width, "height": 900},
            bypass_csp=True,  # axe-core
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto("/coverage/")
        box = page.locator(".table-wrap:has(> table.coverage)")
        box.scroll_into_view_if_needed()
        header = page.locator("table.coverage thead th").nth(6)  # the second model's column
        first_cell = page.locator("table.coverage tbody tr").nth(5).locator("th")  # a protocol's name
        before_header, before_cell = header.bounding_box(), first_cell.bounding_box()
        scrolled = box.evaluate(
            "wrap => { wrap.scrollTop = 400; wrap.scrollLeft = 600; return [wrap.scrollTop, wrap.scrollLeft]; }"
        )
        assert scrolled[0] > 0 and scrolled[1] > 0, width  # the matrix is taller and wider than its box
        after_header, after_cell, wrap = header.bounding_box(), first_cell.bounding_box(), box.bounding_box()
        assert before_header and after_header and before_cell and after_cell and wrap
        assert abs(after_header["y"] - wrap["y"]) <= 2, width  # the header row stays at the box's top
        assert abs(after_cell["x"] - wrap["x"]) <= 2, width  # the protocols' column stays at its left
        assert after_header["x"] < before_header["x"], width  # while the columns themselves scrolled
        assert after_cell["y"] < before_cell["y"], width  # and so did the rows
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth, window.scrollX]")
        assert widths[0] <= widths[1] and widths[2] == 0, f"the page scrolls sideways at {width} px: {widths}"
        assert axe_violations(page, impacts=None) == [], width
        context.close()
