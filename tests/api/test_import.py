"""Bulk import of one paper's records: all or nothing, idempotent by stable id, with a dry run."""

from __future__ import annotations

import copy
import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from benchmarks.models import Recipe
from benchmarks.seed import seed_recipes
from common.append_only import guards_lifted
from records.models import (
    BaselineRole,
    Configuration,
    Dataset,
    Decision,
    Evaluation,
    Limitation,
    Protocol,
    Result,
    Source,
)
from records.seed import PROTOCOL_ID, seed_document
from reviews.models import ReviewEvent

pytestmark = pytest.mark.django_db

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "import-example.json"
PAGES = [
    f"/protocols/{PROTOCOL_ID}/",
    "/evaluations/nt-500m-ia3-finetune-runtime-dalla-torre-2025/",
    "/datasets/nt-benchmark-revised-18-tasks/",
    "/sources/dalla-torre-2025-nature-methods-nucleotide-transformer/",
]


def visible(html: str) -> str:
    """A page's text without the parts that differ between two databases (form stamps, tokens, dates
    and the review log's times: the two imports may fall in different minutes)."""
    text = re.sub(r'name="(csrfmiddlewaretoken|started)" value="[^"]*"', "", html)
    return re.sub(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?Z?)?", "DATE", text)


def counts() -> dict[str, int]:
    models = [
        Source,
        Dataset,
        Configuration,
        Protocol,
        Limitation,
        Evaluation,
        Result,
        BaselineRole,
        Decision,
    ]
    return {model.__name__: model.objects.count() for model in models} | {
        f"h-{model.__name__}": model.history.count() for model in models
    }


def test_the_documented_example_is_the_seed_document():
    assert json.loads(EXAMPLE.read_text()) == json.loads(json.dumps(seed_document()))


def test_importing_the_seed_document_into_an_empty_database_reproduces_the_seed_pages(
    token_client, client, django_db_blocker
):
    curator = token_client("curator")
    response = curator.post("/api/v1/imports/", seed_document(), format="json")
    assert response.status_code == 201, response.content
    assert sorted(response.json()["created"]) == [
        "areas",
        "baseline_roles",
        "configurations",
        "contexts",
        "datasets",
        "decisions",
        "evaluations",
        "protocols",
        "results",
        "sources",
        "works",
    ]
    imported = {url: client.get(url) for url in PAGES}
    assert all(r.status_code == 200 for r in imported.values())
    assert Evaluation.objects.filter(review_state="proposed").count() == 2  # the import writes proposed records
    body = imported[f"/protocols/{PROTOCOL_ID}/"].content.decode()
    for fact in (
        "Runtime (Mean wall time per IA3 fine-tuning run)",
        "20",
        "50",
        "Methods, &#x27;Data preparation &gt; Hardware&#x27;, paragraph 1",
        "NT benchmark, all 18 tasks",
    ):
        assert fact in body


def test_the_import_reproduces_the_seed_import_pages_once_reviewed_alike(client, token_client):
    from records.seed import SEED_REVIEWS
    from reviews.services import review_transition_apply

    call_command("import_seed", stdout=StringIO())  # the release line; its records are replaced below
    for model in (
        Recipe,
        Result,
        Evaluation,
        BaselineRole,
        Limitation,
        Decision,
        Protocol,
        Configuration,
    ):
        model.objects.all().delete()
    Dataset.objects.filter(suite__isnull=False).delete()
    Dataset.objects.all().delete()
    Source.objects.all().delete()
    with guards_lifted(connection):  # a fresh start for the second import: the test's own reset of audit rows
        ReviewEvent.objects.all().delete()
    token_client("curator").post("/api/v1/imports/", seed_document(), format="json")
    for model, stable_id, transitions in SEED_REVIEWS:
        for name, reason in transitions:
            review_transition_apply(
                record=model.objects.get(stable_id=stable_id),
                transition=name,
                actor=None,
                reason=reason,
                automatic=True,
            )
    seed_recipes()  # recipes are the benchmarks app's, outside the import format
    through_api = {url: visible(client.get(url).content.decode()) for url in PAGES}
    for model in (
        Recipe,
        Result,
        Evaluation,
        BaselineRole,
        Limitation,
        Decision,
        Protocol,
        Configuration,
    ):
        model.objects.all().delete()
    Dataset.objects.filter(suite__isnull=False).delete()
    Dataset.objects.all().delete()
    Source.objects.all().delete()
    with guards_lifted(connection):  # a fresh start for the second import: the test's own reset of audit rows
        ReviewEvent.objects.all().delete()
    call_command("import_seed", stdout=StringIO())
    assert {url: visible(client.get(url).content.decode()) for url in PAGES} == through_api


def test_a_second_import_changes_nothing(token_client):
    curator = token_client("curator")
    curator.post("/api/v1/imports/", seed_document(), format="json")
    before = counts()
    again = curator.post("/api/v1/imports/", seed_document(), format="json")
    assert again.status_code == 200
    assert again.json()["created"] == {} and again.json()["updated"] == {}
    assert counts() == before


def test_a_document_with_one_bad_row_writes_nothing_and_names_the_row(token_client):
    document = copy.deepcopy(seed_document())
    document["evaluations"][1]["results"][0]["unit"] = "hour"
    document["datasets"][0]["tasks"][3]["train_size"] = -1
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 400
    paths = {error["path"] for error in response.json()["errors"]}
    assert paths == {"evaluations[1].results[0].unit", "datasets[0].tasks[3].train_size"}
    assert sum(counts().values()) == 0


def test_a_value_of_the_wrong_json_type_is_named_not_a_server_error(token_client):
    document = copy.deepcopy(seed_document())
    document["sources"][0]["published_date"] = 20241128
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"path": "sources[0].published_date", "message": "Write the date as YYYY, YYYY-MM or YYYY-MM-DD."}
    ]
    assert sum(counts().values()) == 0


def test_a_task_listed_at_the_top_level_before_its_suite_is_written_after_it(token_client):
    document = copy.deepcopy(seed_document())
    suite = document["datasets"][0]
    task = suite["tasks"].pop()
    document["datasets"].insert(0, {**task, "suite": suite["stable_id"]})
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 201, response.json()
    assert Dataset.objects.get(stable_id=task["stable_id"]).suite.stable_id == suite["stable_id"]


def test_a_suite_inside_its_own_task_is_refused_by_name(token_client):
    document = copy.deepcopy(seed_document())
    suite = document["datasets"][0]
    task = suite["tasks"][0]
    document["datasets"].append(
        {k: v for k, v in suite.items() if k != "tasks"} | {"stable_id": "loop-a", "suite": "loop-b"}
    )
    document["datasets"].append({k: v for k, v in task.items()} | {"stable_id": "loop-b", "suite": "loop-a"})
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 400
    assert {"refers to a record that depends on this one"} == {e["message"] for e in response.json()["errors"]}
    assert sum(counts().values()) == 0


def test_a_database_rule_found_while_writing_rolls_everything_back(token_client):
    document = copy.deepcopy(seed_document())
    document["evaluations"][0]["coverage_scored"] = 10
    document["evaluations"][0]["coverage_eligible"] = 5
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"path": "evaluations[0].coverage_scored", "message": "More items scored than eligible."}
    ]
    assert sum(counts().values()) == 0


def test_a_dry_run_reports_what_would_change_and_writes_nothing(token_client):
    curator = token_client("curator")
    dry = curator.post("/api/v1/imports/?dry_run=1", seed_document(), format="json")
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    assert len(dry.json()["created"]["datasets"]) == 19
    assert sum(counts().values()) == 0
    curator.post("/api/v1/imports/", seed_document(), format="json")
    changed = copy.deepcopy(seed_document())
    changed["configurations"][0]["parameter_count"] = 480_000_000
    report = curator.post("/api/v1/imports/?dry_run=true", changed, format="json").json()
    assert report["updated"] == {"configurations": {"nt-500m-ia3-dalla-torre-2025": ["parameter_count"]}}
    assert Configuration.objects.get(stable_id="nt-500m-ia3-dalla-torre-2025").parameter_count == 500_000_000


@pytest.mark.parametrize("role, status", [("anonymous", 401), ("release_manager", 403), ("benchmark_operator", 403)])
def test_only_curators_import(token_client, role, status):
    assert token_client(role).post("/api/v1/imports/", seed_document(), format="json").status_code == status
    assert sum(counts().values()) == 0


@pytest.mark.parametrize(
    "document", [[], "text", {"format": "benchmark-evidence-import", "version": 1, "surprise": []}]
)
def test_it_refuses_a_malformed_document_with_a_reason(token_client, document):
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 400 and response.json()["errors"]


def test_the_command_imports_a_file_and_refuses_a_non_curator(make_user, tmp_path):
    make_user("curator", "importer")
    make_user("release_manager", "not-a-curator")
    out = StringIO()
    call_command("import_records", str(EXAMPLE), "--user", "importer", stdout=out)
    assert json.loads(out.getvalue())["created"]["protocols"] == [PROTOCOL_ID]
    with pytest.raises(CommandError, match="may not import"):
        call_command("import_records", str(EXAMPLE), "--user", "not-a-curator")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("import_records", str(broken), "--user", "importer")


def test_a_background_import_of_something_that_is_no_import_document_is_refused_at_once(token_client):
    from records.models import ImportJob

    response = token_client("curator").post(
        "/api/v1/imports/?background=1", {"format": "x", "planets": []}, format="json"
    )
    assert response.status_code == 400
    assert {error["path"] for error in response.json()["errors"]} == {"format", "planets"}
    assert not ImportJob.objects.exists()  # nothing queued
