"""A researcher goes from search to a task page to a model page by clicking links, in a real
browser, on a phone and a desktop."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from tests.browser.conftest import axe_violations
from tests.pages.test_identity_pages import evidence  # noqa: F401 (the fixture: papers, models, a task)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_a_researcher_searches_a_task_then_opens_a_model_from_its_table(
    browser,
    live_server,
    evidence,  # noqa: F811 (the fixture imported above)
    device,
    tmp_path,  # noqa: F811
):
    cache.clear()  # the factories write around the services: no catalogue version bump
    context = browser.new_context(base_url=live_server.url, viewport=VIEWPORTS[device], bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    visited = []

    page.goto("/search/")
    page.fill("#q", "promoter")
    page.locator("main form.search-box button").click()
    page.wait_for_selector(".search-results")
    visited.append(page.url)
    page.locator(".search-results a[href='/datasets/nt-promoter-all/']").first.click()  # the task, and rows on it
    page.wait_for_selector("h1#record-title")
    assert page.locator("h1").inner_text() == "Promoter (all)"
    table = page.locator("table.task-results")
    assert table.locator("tbody tr").count() == 5
    assert "0.549 ±0.056 MCC" in table.inner_text() and "also printed as 0.55" in table.inner_text()
    assert page.locator("figure.chart-figure svg.chart title").count() == 1
    assert page.get_by_role("heading", name="Do independent measurements agree?").is_visible()
    assert "HyenaDNA tiny 1k · mcc: consistent" in page.locator("main").inner_text()
    page.screenshot(path=str(tmp_path / f"task-{device}.png"), full_page=True)
    visited.append(page.url)

    table.get_by_role("link", name="HyenaDNA tiny 1k").first.click()
    page.wait_for_url("**/models/hyenadna-tiny-1k/")
    assert page.locator("h1").inner_text() == "HyenaDNA tiny 1k"
    main = page.locator("main").inner_text()
    assert "consistent" in main and "HyenaDNA-1KB" in main and "Rank 4 of 4" in main
    visited.append(page.url)

    # back to the task through the model page's own link, and the page fits the screen
    page.locator("section.agreement h3 a[href='/datasets/nt-promoter-all/']").click()
    page.wait_for_url("**/datasets/nt-promoter-all/")
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"the task page scrolls sideways on a {device}: {widths}"

    problems = {}
    for url in visited:
        page.goto(url)
        found = axe_violations(page)
        if found:
            problems[url] = found
    assert problems == {}
    context.close()
