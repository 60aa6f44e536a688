"""A researcher's path through the public site in a real browser, on a phone and a desktop."""

from __future__ import annotations

import pytest

from records.seed import PROTOCOL_ID
from tests.browser.conftest import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_a_researcher_searches_opens_filters_and_checks_coverage_accessibly(
    browser, live_server, seeded, device, tmp_path
):
    context = browser.new_context(base_url=live_server.url, viewport=VIEWPORTS[device], bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    visited = []

    page.goto("/")
    visited.append(page.url)
    page.fill("#q", "IA3")
    page.locator("main form.search-box button").click()
    page.wait_for_selector(".search-results")
    visited.append(page.url)
    page.locator(f".search-results > li > a[href='/protocols/{PROTOCOL_ID}/']").click()  # the hit's own link
    page.wait_for_selector("h1#record-title")
    assert "IA3 fine-tuning run time" in page.locator("h1").inner_text()
    chart = page.locator("figure.chart-figure img")
    assert chart.count() == 1 and "Bar chart of Runtime" in chart.get_attribute("alt")
    visited.append(page.url)

    page.get_by_role(
        "link", name="Nucleotide Transformer 500M-parameter models, IA3 fine-tuning (Dalla-Torre et al. 2025) (1)"
    ).first.click()
    page.wait_for_selector("text=1 of 2 evaluations match.")
    rows = page.locator("table.evaluations tbody tr")
    assert rows.count() == 1 and "500M" in rows.first.inner_text()
    assert "configuration=nt-500m-ia3-dalla-torre-2025" in page.url
    visited.append(page.url)

    page.get_by_role("link", name="View coverage and remaining gaps across all benchmarks").click()
    page.wait_for_selector("table.coverage")
    assert "✕ 1 excluded" in page.locator("table.coverage").inner_text()
    visited.append(page.url)

    page.screenshot(path=str(tmp_path / f"coverage-{device}.png"), full_page=True)
    page.goto(f"/protocols/{PROTOCOL_ID}/")
    page.screenshot(path=str(tmp_path / f"protocol-{device}.png"), full_page=True)
    assert (tmp_path / f"protocol-{device}.png").stat().st_size > 10_000

    problems = {}
    for url in visited:
        page.goto(url)
        found = axe_violations(page)
        if found:
            problems[url] = found
    assert problems == {}
    context.close()


def test_a_researcher_downloads_a_release_file_and_its_sha256_matches_the_page(
    browser, live_server, seeded, make_user, settings, tmp_path
):
    import hashlib

    from releases.build import release_build
    from releases.services import release_cut

    settings.RELEASES_DIR = tmp_path / "releases"
    release = release_build(release_pk=release_cut(actor=make_user("release_manager")).pk)
    assert release.status == "published", release.build.error

    context = browser.new_context(base_url=live_server.url, accept_downloads=True)
    page = context.new_page()
    page.goto(f"/protocols/{PROTOCOL_ID}/")
    item = page.locator("ul.release-files li", has_text="Model evaluation matrix (gzip)")
    shown = item.locator("code").inner_text()
    with page.expect_download() as download:
        item.get_by_role("link").click()
    path = download.value.path()
    assert download.value.suggested_filename.endswith("model_evaluation_matrix.csv.gz")
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == shown
    assert f"Coverage is derived from release {release.release_id}." in page.locator("main").inner_text()
    context.close()
