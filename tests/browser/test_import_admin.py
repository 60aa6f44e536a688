"""A curator imports a paper's document from the admin in a real browser, with a real worker: the
file is uploaded, the dry run's report appears on the job's page as it reloads itself, and "Import
for real" imports the same stored document."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import admin_login, axe_violations
from tests.records.import_job_documents import document_with_results

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_curator_uploads_a_document_reads_the_dry_run_and_imports_it_for_real(
    browser, live_server, curator, start_worker, monkeypatch, tmp_path
):
    from portal.celery import app
    from records.models import ImportJob, Result

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("default")  # messages an earlier test may have left
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "tests.records.import_worker_settings")
    start_worker("default")
    document = tmp_path / "paper.json"
    document.write_text(json.dumps(document_with_results(40)))

    context = browser.new_context(base_url=live_server.url, bypass_csp=True)  # axe-core is an inline script
    page = context.new_page()
    page.set_default_timeout(15_000)
    admin_login(page, curator.username)
    page.goto("/admin/records/importjob/")
    page.get_by_role("link", name="Import a document").click()
    assert axe_violations(page) == []
    page.get_by_label("JSON file").set_input_files(str(document))
    page.get_by_role("button", name="Check it (dry run)").click()

    page.wait_for_selector('#import-job[data-status="succeeded"]', timeout=90_000)  # the page reloads itself
    report = page.locator("#job-report")
    assert "results" in report.inner_text()
    assert page.locator("#job-report tr", has_text="results").locator("td").first.inner_text().startswith("42")
    assert not Result.objects.exists()
    assert axe_violations(page) == []

    page.get_by_role("button", name="Import for real").click()
    page.wait_for_selector('#import-job[data-status="succeeded"]', timeout=90_000)
    assert "What the import did" in page.content()
    assert Result.objects.count() == 42
    real = ImportJob.objects.get(dry_run=False)
    assert real.dry_run_job is not None and real.document == real.dry_run_job.document
    context.close()
