"""On the demo content, a researcher searches "HyenaDNA" and pages through every evaluation
it finds, the counts on the page the database's own, on a desktop and on a phone."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import axe_violations
from tests.records.test_search import evaluations_mentioning

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def count_in(label: str) -> int:
    return int(re.search(r"\((\d+)\)$", label.strip()).group(1))


def test_searching_hyenadna_pages_through_all_its_evaluations_with_true_counts(browser, live_server, demo_content):
    expected = evaluations_mentioning("hyenadna")  # the database's own reading of the same fields
    assert len(expected) > 100
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/search/")
    page.fill("#q", "HyenaDNA")
    page.locator("main form.search-box button").click()
    page.wait_for_selector(".search-results")
    facets = [text.strip() for text in page.locator(".type-facets a").all_inner_texts()]
    assert f"Evaluations ({len(expected)})" in facets
    total = sum(count_in(label) for label in facets[1:])
    assert facets[0] == f"All types ({total})"
    assert page.inner_text(".match-count").startswith(f"{total} results for “HyenaDNA”")

    page.get_by_role("link", name=f"Evaluations ({len(expected)})").click()
    seen: list[str] = []
    pages = 0
    while True:
        page.wait_for_selector(".search-results")
        pages += 1
        assert page.inner_text(".match-count").startswith(f"{len(expected)} results for “HyenaDNA”")
        links = page.locator(".search-results > li > a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert 1 <= len(links) <= 20 and all(link.startswith("/evaluations/") for link in links)
        types = page.locator(".search-results > li > .record-type").evaluate_all(
            "spans => spans.map(s => s.textContent)"
        )
        assert set(types) == {"Evaluation"}
        seen += [link.split("/")[2] for link in links]
        if pages == 2:  # a page between others: its pager links both ways, and reads well to assistive technology
            assert page.locator("nav.search-pages a[rel=prev]").count() == 1
            assert axe_violations(page, impacts=None) == []
        following = page.locator("nav.search-pages a[rel=next]")
        if not following.count():
            break
        following.click()
        page.wait_for_url(f"**page={pages + 1}")
    assert pages == -(-len(expected) // 20)
    assert len(seen) == len(set(seen)) and set(seen) == expected  # every one, once

    # The last page reads well on a phone: nothing scrolls sideways, each hit names its protocol and task.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    first = page.locator(".search-results > li").first.inner_text()
    assert "protocol " in first and "task " in first
    context.close()
