"""An import plans the whole document with reads only: a dry run never holds the catalogue's write
lock, one dry run lists the problems of every check at once, and a real import re-plans when the
catalogue changed while it was planning."""

from __future__ import annotations

import copy
import threading
import time

import pytest
from django.db import connections

from records.imports import ImportStale, records_import
from records.models import Configuration, Dataset, Evaluation, ImportSnapshot, Result, Source
from records.seed import seed_document

CONFIGURATION = "nt-500m-ia3-dalla-torre-2025"
PAPER = "dalla-torre-2025-nature-methods-nucleotide-transformer"


def patch_configuration(client, description: str):
    return client.patch(f"/api/v1/configurations/{CONFIGURATION}/", {"description": description}, format="json")


@pytest.mark.django_db(transaction=True)
def test_a_dry_run_lets_another_curator_write_while_it_plans(token_client, make_user):
    importer, editor = token_client("curator"), token_client("curator")
    assert importer.post("/api/v1/imports/", seed_document(), format="json").status_code == 201
    curator = make_user("curator")
    answered: dict[str, object] = {}

    def write_elsewhere() -> None:
        started = time.perf_counter()
        try:
            answered["status"] = patch_configuration(editor, "edited while a dry run plans").status_code
        finally:
            answered["seconds"] = time.perf_counter() - started
            connections.close_all()

    def progress(done: int, total: int) -> None:
        if "status" not in answered and "seconds" not in answered:
            other = threading.Thread(target=write_elsewhere)
            other.start()
            other.join(timeout=10)  # the dry run waits for the other write: a lock it held would deadlock here
            assert not other.is_alive(), "the other curator's write waited for the dry run"

    report = records_import(document=seed_document(), actor=curator, dry_run=True, progress=progress)
    assert answered["status"] == 200 and answered["seconds"] < 2, answered
    assert report.dry_run and not report.created
    assert Configuration.objects.get(stable_id=CONFIGURATION).description == "edited while a dry run plans"


def test_one_dry_run_lists_the_problems_of_every_check(token_client):
    document = copy.deepcopy(seed_document())
    document["datasets"][0]["tasks"][3]["train_size"] = -1  # a field as written
    document["sources"].append(  # the same work twice: found only once the first would be written
        {"stable_id": "the-same-paper-again", "title": "Nucleotide Transformer", "url": document["sources"][0]["url"]}
    )
    document["evaluations"][0]["results"][0]["value"] = "20.0"  # printed "20 min": a digit more than printed
    document["evaluations"][1]["configuration"] = "no-such-configuration"  # a reference
    document["evaluations"][0]["coverage_scored"], document["evaluations"][0]["coverage_eligible"] = 10, 5
    response = token_client("curator").post("/api/v1/imports/?dry_run=1", document, format="json")
    assert response.status_code == 400, response.content
    errors = {error["path"]: error["message"] for error in response.json()["errors"]}
    assert set(errors) == {
        "datasets[0].tasks[3].train_size",
        "sources[2].url",
        "evaluations[0].results[0].printed_value",
        "evaluations[1].configuration",
        "evaluations[0].coverage_scored",
    }, errors
    assert errors["sources[2].url"].startswith(f"source {PAPER!r} already has this URL")
    assert "precision" in errors["evaluations[0].results[0].printed_value"]
    assert errors["evaluations[0].coverage_scored"] == "More items scored than eligible."
    assert not Source.objects.exists()


def test_a_real_import_plans_again_when_the_catalogue_changed_while_it_planned(token_client, make_user):
    editor = token_client("curator")
    curator = make_user("curator")
    records_import(document=seed_document(), actor=curator)
    plans: list[int] = []

    def progress(done: int, total: int) -> None:
        if done == 0:
            plans.append(total)
            if len(plans) == 1:  # a curator's edit lands while the first plan is being read
                assert patch_configuration(editor, "a curator's description").status_code == 200

    report = records_import(document=seed_document(), actor=curator, progress=progress)
    assert len(plans) == 2
    assert report.kept == {"configurations": {CONFIGURATION: ["description"]}}  # the second plan saw the edit
    assert Configuration.objects.get(stable_id=CONFIGURATION).description == "a curator's description"


def test_a_write_to_a_record_the_import_does_not_touch_never_makes_it_plan_again(token_client, make_user):
    from tests.factories import ConfigurationFactory

    editor = token_client("curator")
    curator = make_user("curator")
    elsewhere = ConfigurationFactory(stable_id="another-papers-configuration")
    plans: list[int] = []

    def progress(done: int, total: int) -> None:
        if done == 0:
            plans.append(total)
            response = editor.patch(
                f"/api/v1/configurations/{elsewhere.stable_id}/", {"description": f"edit {len(plans)}"}, format="json"
            )
            assert response.status_code == 200, response.content

    report = records_import(document=seed_document(), actor=curator, progress=progress)
    assert len(plans) == 1 and report.created["evaluations"]
    assert Configuration.objects.get(stable_id=elsewhere.stable_id).description == "edit 1"


def test_it_refuses_an_import_whose_catalogue_keeps_changing_while_it_plans(token_client, make_user):
    editor = token_client("curator")
    curator = make_user("curator")
    records_import(document=seed_document(), actor=curator)
    edits = iter(range(100))

    def progress(done: int, total: int) -> None:
        if done == 0:
            assert patch_configuration(editor, f"edit {next(edits)}").status_code == 200

    changed = copy.deepcopy(seed_document())
    changed["configurations"][1]["parameter_count"] = 2_600_000_000
    with pytest.raises(ImportStale) as refused:
        records_import(document=changed, actor=curator, progress=progress)
    message = refused.value.errors[0]["message"]
    assert refused.value.status == 409 and "send it again" in message
    assert f"configurations {CONFIGURATION}: changed since the import read it" in message, message
    assert Configuration.objects.get(stable_id="nt-2-5b-ia3-dalla-torre-2025").parameter_count != 2_600_000_000


def test_the_records_written_in_bulk_have_the_history_a_save_gives_them(token_client, make_user):
    curator = make_user("curator")
    report = records_import(document=seed_document(), actor=curator)
    evaluations = Evaluation.objects.filter(stable_id__in=report.created["evaluations"])
    assert {e.last_edited_by_id for e in evaluations} == {curator.pk}
    for model, section in ((Evaluation, "evaluations"), (Result, "results"), (Dataset, "datasets")):
        rows = model.history.filter(stable_id__in=report.created[section])
        assert rows.count() == len(report.created[section])
        assert set(rows.values_list("history_type", "history_user_id", "history_change_reason")) == {
            ("+", curator.pk, "import")
        }
    result = Result.objects.get(stable_id=report.created["results"][0])
    fields = [field.attname for field in Result._meta.concrete_fields]
    assert {name: getattr(result.history.get(), name) for name in fields} == {
        name: getattr(result, name) for name in fields
    }
    assert ImportSnapshot.objects.filter(stable_id__in=report.created["results"]).count() == len(
        report.created["results"]
    )


def test_a_result_added_to_a_reviewed_evaluation_reopens_its_review_with_an_audit_row(seeded, make_user):
    from reviews.models import ReviewEvent

    curator = make_user("curator")
    document = copy.deepcopy(seed_document())
    evaluation = document["evaluations"][0]
    assert Evaluation.objects.get(stable_id=evaluation["stable_id"]).review_state == "excluded"
    added = {**evaluation["results"][0], "stable_id": f"{evaluation['stable_id']}-again"}
    evaluation["results"].append(added)
    report = records_import(document=document, actor=curator)
    assert report.created == {"results": [added["stable_id"]]}
    event = ReviewEvent.objects.filter(record_stable_id=evaluation["stable_id"]).latest("created_at")
    assert (event.transition, event.actor_id) == ("reopen_excluded", curator.pk)
    assert event.reason == f"edited: result {added['stable_id']} added (import)"
    assert Result.history.get(stable_id=added["stable_id"]).history_change_reason == "import"
