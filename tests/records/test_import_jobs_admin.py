"""The admin's import page (records.admin_imports): a curator uploads a document (a file, or pasted),
reads the dry run's report on the job's page, then imports the same stored document for real. The
jobs run here through their task (`import_job_run.apply`); tests/browser/test_import_admin.py
walks the same pages in a browser with a real worker."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from records.import_jobs import import_job_enqueue
from records.models import ImportJob, Result
from records.tasks import import_job_run
from records.values import exact_text
from tests.records.import_job_documents import as_json, document_with_results

ADD = "/admin/records/importjob/add/"


def run(job: ImportJob) -> str:
    return import_job_run.apply(args=[job.pk], task_id=job.celery_task_id).get()


def page(job: ImportJob) -> str:
    return f"/admin/records/importjob/{job.pk}/change/"


@pytest.fixture
def curator_client(client, curator):
    client.force_login(curator)
    return client


@pytest.mark.django_db
def test_it_links_the_import_page_from_the_import_jobs_list(curator_client):
    response = curator_client.get("/admin/records/importjob/")
    assert response.status_code == 200
    assert 'href="/admin/records/importjob/add/"' in response.content.decode()
    assert "Import a document" in response.content.decode()


@pytest.mark.django_db
def test_the_import_jobs_list_runs_as_many_queries_for_many_jobs_as_for_one(curator_client, make_user):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert curator_client.get("/admin/records/importjob/").status_code == 200
        return len(captured)

    text = as_json(document_with_results(0))
    import_job_enqueue(document_text=text, actor=make_user("curator"), dry_run=True)
    one = queries()
    for _ in range(5):
        import_job_enqueue(document_text=text, actor=make_user("curator"), dry_run=False)
    assert queries() == one


@pytest.mark.django_db
def test_it_refuses_the_import_page_to_staff_who_may_not_import(client, make_user):
    client.force_login(make_user("release_manager"))
    assert client.get(ADD).status_code == 403
    assert client.post(ADD, {"document_text": as_json(document_with_results(0))}).status_code == 403
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Give a JSON file or paste the JSON."),
        ({"document_text": "{not json"}, "document: not JSON (Expecting property name enclosed in double quotes"),
        ({"document_text": "[1, 2]"}, "document: an import document is a JSON object"),
        ({"document_text": '{"value": NaN}'}, "document: not JSON"),
        ({"document_file": SimpleUploadedFile("paper.json", b"\xff\xfe{}")}, "The file is not UTF-8 text."),
    ],
)
def test_it_answers_bad_input_with_a_form_error(curator_client, data, message):
    response = curator_client.post(ADD, data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
def test_it_refuses_an_upload_without_the_csrf_token(curator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(curator)
    assert client.post(ADD, {"document_text": as_json(document_with_results(0))}).status_code == 403
    assert not ImportJob.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_curator_uploads_reads_the_dry_run_report_and_imports_the_same_document_for_real(curator_client):
    document = document_with_results(3)
    document["evaluations"][0]["results"][2]["unit"] = "fortnight"  # a second upload fixes it
    upload = SimpleUploadedFile("paper.json", as_json(document).encode(), content_type="application/json")
    response = curator_client.post(ADD, {"document_file": upload})
    dry_run = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == page(dry_run)
    assert dry_run.dry_run and dry_run.status == "queued"
    assert 'http-equiv="refresh"' in curator_client.get(page(dry_run)).content.decode()  # reloads until finished
    assert run(dry_run) == "failed"
    failed = curator_client.get(page(dry_run)).content.decode()
    assert "the document is invalid; nothing was written" in failed
    assert "<code>evaluations[0].results[2].unit</code>" in failed
    assert 'id="import-confirm"' not in failed  # nothing to import for real

    document["evaluations"][0]["results"][2]["unit"] = "minute"
    text = as_json(document).replace('"value": "21.50"', '"value": 21.50')
    response = curator_client.post(ADD, {"document_text": text})
    dry_run = ImportJob.objects.get(pk=int(re.search(r"/(\d+)/change/$", response["Location"]).group(1)))
    assert run(dry_run) == "succeeded"
    assert not Result.objects.exists()
    report = curator_client.get(page(dry_run)).content.decode()
    assert 'http-equiv="refresh"' not in report
    assert re.search(r'<th scope="row">results</th>\s*<td>5<details>', report), report
    assert 'id="import-confirm"' in report and "Import for real" in report

    response = curator_client.post(f"/admin/records/importjob/{dry_run.pk}/confirm/")
    real = ImportJob.objects.get(dry_run_job=dry_run)
    assert response.status_code == 302 and response["Location"] == page(real)
    assert real.document == dry_run.document and not real.dry_run  # the stored document, not a re-upload
    assert run(real) == "succeeded"
    assert Result.objects.count() == 5
    assert exact_text(Result.objects.get(stable_id__endswith="-runtime-1").value) == "21.50"
    imported = curator_client.get(page(real)).content.decode()
    assert "What the import did" in imported and f"dry run #{dry_run.pk}" in imported
    assert f'href="{page(real)}"' in curator_client.get(page(dry_run)).content.decode()
    assert list(real.events.values_list("to_status", flat=True)) == ["queued", "running", "succeeded"]


@pytest.mark.django_db
def test_it_takes_an_upload_of_a_few_megabytes(curator_client):
    document = document_with_results(2_000)
    document["notes"] = ["n" * 2_000] * 1_500  # 3.2 MiB, the size of the 2,000 results
    text = as_json(document)
    assert len(text) > 3 * 1024 * 1024
    upload = SimpleUploadedFile("paper.json", text.encode(), content_type="application/json")
    response = curator_client.post(ADD, {"document_file": upload})
    assert response.status_code == 302, response.content[:500]
    job = ImportJob.objects.get()
    assert job.document == text and job.record_count == 2_035


@pytest.mark.django_db
def test_it_imports_for_real_only_a_finished_dry_run(curator_client):
    curator_client.post(ADD, {"document_text": as_json(document_with_results(0))})
    queued = ImportJob.objects.get()
    response = curator_client.post(f"/admin/records/importjob/{queued.pk}/confirm/", follow=True)
    assert "Nothing was queued: import job" in response.content.decode()
    assert ImportJob.objects.count() == 1
    assert curator_client.get(f"/admin/records/importjob/{queued.pk}/confirm/").status_code == 405
    assert curator_client.post("/admin/records/importjob/999999/confirm/").status_code == 404
    assert curator_client.get("/admin/records/importjob/999999/change/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_conflict_the_dry_run_lists_is_refused_for_real_unless_the_curator_ticks_overwrite(
    seeded, curator_client, curator
):
    from records.services import record_save

    result_id = "nt-500m-ia3-finetune-runtime-dalla-torre-2025-runtime"
    result = Result.objects.get(stable_id=result_id)
    result.num_runs = 5  # a curator's edit since the seed's import
    record_save(record=result, actor=curator, changed_fields=["num_runs"])
    document = document_with_results(0)
    document["evaluations"][0]["results"][0]["num_runs"] = 7  # and the document's
    curator_client.post(ADD, {"document_text": as_json(document)})
    dry_run = ImportJob.objects.get()
    assert run(dry_run) == "succeeded"
    report = curator_client.get(page(dry_run)).content.decode()
    assert f'name="overwrite" value="results/{result_id}"' in report
    assert "num_runs: now 5, in the document 7" in report

    curator_client.post(f"/admin/records/importjob/{dry_run.pk}/confirm/")
    refused = ImportJob.objects.get(dry_run_job=dry_run)
    assert run(refused) == "failed"
    refused.refresh_from_db()
    assert refused.outcome == "conflict"
    assert [error["path"] for error in refused.errors] == ["evaluations[0].results[0].num_runs"]
    assert "<code>evaluations[0].results[0].num_runs</code>" in curator_client.get(page(refused)).content.decode()
    assert Result.objects.get(stable_id=result_id).num_runs == 5

    curator_client.post(f"/admin/records/importjob/{dry_run.pk}/confirm/", {"overwrite": [f"results/{result_id}"]})
    taken = ImportJob.objects.filter(dry_run_job=dry_run).latest("id")
    assert taken.overwrite == [f"results/{result_id}"]
    assert run(taken) == "succeeded"
    assert Result.objects.get(stable_id=result_id).num_runs == 7


@pytest.mark.django_db
def test_the_dry_run_report_says_which_model_each_configuration_is_matched_to(curator_client):
    from tests.factories import ModelAliasFactory

    alias = ModelAliasFactory(alias="HyenaDNA (1.6M)", model__stable_id="hyenadna-1-6m")
    document = document_with_results(1)
    document["configurations"][0]["short_name"] = "HyenaDNA-1.6m"
    response = curator_client.post(ADD, {"document_text": as_json(document)})
    dry_run = ImportJob.objects.get(pk=int(re.search(r"/(\d+)/change/$", response["Location"]).group(1)))
    assert run(dry_run) == "succeeded"
    report = curator_client.get(page(dry_run)).content.decode()
    configuration = document["configurations"][0]["stable_id"]
    assert re.search(
        rf'id="job-matched"><li><code>configurations/{configuration}</code>: model <code>{alias.model.stable_id}</code>'
        r' \(alias "HyenaDNA-1.6m"\)',
        report,
    ), report
