"""Real-browser tests: playwright drives Debian's chromium against pytest-django's live server."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("PORTAL_CHROMIUM", "/usr/bin/chromium")
# Flags for a root, headless chromium on a machine without network access (docs/development/testing.md).
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: bin/test installs Debian's chromium (apt-get install chromium)")
    # playwright's sync API runs an event loop in the test thread; the test's own ORM calls are
    # synchronous and safe there.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def admin_login(page, username: str, password: str = "a-long-test-password") -> None:
    page.goto("/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/")


AXE = __import__("pathlib").Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_violations(page, impacts: tuple[str, ...] | None = SERIOUS) -> list[str]:
    """axe-core's accessibility violations on the page of these impacts (None: every impact), one line each."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: bin/test installs it (npm ci)")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in violations
        if impacts is None or v["impact"] in impacts
    ]


def pytest_collection_modifyitems(items):
    """Pages render the same on both backends (other tests cover the queries): CI runs these once, in
    the embedded pass (the one a newcomer's machine runs)."""
    for item in items:
        if "/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.backend_independent)
            item.add_marker(pytest.mark.embedded_pass)
