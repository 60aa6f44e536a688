"""Re-imports and corrections agree: a re-import never silently overwrites what a curator or an
accepted correction changed since the document's last import; sources are found, not duplicated;
the format takes what real curators meet (partial dates, model cards, exact values, choices named)."""

from __future__ import annotations

import copy
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from corrections.services import correction_decide, correction_submit
from records.imports import records_import
from records.models import Result, Source
from records.seed import seed_document
from records.values import exact_text

pytestmark = pytest.mark.django_db

RESULT = "nt-500m-ia3-finetune-runtime-dalla-torre-2025-runtime"
EVALUATION = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"
PAPER = "dalla-torre-2025-nature-methods-nucleotide-transformer"


def accept_correction(curator, value: str) -> None:
    suggestion = correction_submit(
        target=Result.objects.get(stable_id=RESULT),
        field_name="value",
        proposed_value=value,
        explanation="The Discussion's single-GPU figure.",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.9",
    )
    correction_decide(
        correction=suggestion,
        actor=curator,
        decision="accept",
        response="Applied.",
        apply_value=True,
        quote_reason="A test of merging.",
    )


def document_with(**changes) -> dict:
    """The seed document with the 500M result's fields changed."""
    document = copy.deepcopy(seed_document())
    row = next(e for e in document["evaluations"] if e["stable_id"] == EVALUATION)
    row["results"][0].update(changes)
    return document


def test_re_importing_the_same_document_keeps_an_accepted_correction_and_says_so(seeded, curator):
    accept_correction(curator, "15")
    report = records_import(document=seed_document(), actor=curator)
    result = Result.objects.get(stable_id=RESULT)
    assert (exact_text(result.value), result.printed_value) == ("15", "15 min")
    assert (
        report.kept == {"results": {RESULT: ["printed_value", "quote_mismatch_reason", "value"]}}
        and not report.updated
        and not report.conflicts
    )


def test_a_field_changed_on_both_sides_is_a_conflict_the_dry_run_lists_and_the_import_refuses(
    seeded, curator, token_client
):
    accept_correction(curator, "15")
    document = document_with(value="21", printed_value="21 min")
    api = token_client("curator")
    dry = api.post("/api/v1/imports/?dry_run=1", document, format="json")
    assert dry.status_code == 200
    conflicts = dry.json()["conflicts"]["results"][RESULT]
    assert {c["field"]: (c["current"], c["document"], c["last_imported"]) for c in conflicts} == {
        "value": ("15", "21", "20"),
        "printed_value": ("15 min", "21 min", "20 min"),
    }
    assert conflicts[0]["changed_by"].startswith(curator.username) and "correction #" in conflicts[0]["changed_by"]
    refused = api.post("/api/v1/imports/", document, format="json")
    assert refused.status_code == 409
    errors = refused.json()["errors"]
    assert {e["path"] for e in errors} == {"evaluations[0].results[0].value", "evaluations[0].results[0].printed_value"}
    assert "overwrite=results/" + RESULT in errors[0]["message"]
    assert exact_text(Result.objects.get(stable_id=RESULT).value) == "15"  # nothing written
    taken = api.post(f"/api/v1/imports/?overwrite=results/{RESULT}", document, format="json")
    assert taken.status_code == 200, taken.json()
    assert taken.json()["overwritten"] == {"results": {RESULT: ["printed_value", "value"]}}
    assert exact_text(Result.objects.get(stable_id=RESULT).value) == "21"


def test_a_field_only_the_document_changed_is_updated(seeded, curator):
    report = records_import(document=document_with(num_runs=3), actor=curator)
    assert report.updated == {"results": {RESULT: ["num_runs"]}} and not report.conflicts
    assert Result.objects.get(stable_id=RESULT).num_runs == 3


def test_the_command_refuses_a_conflict_in_one_line_and_overwrites_when_told(seeded, curator, tmp_path):
    accept_correction(curator, "15")
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document_with(value="21", printed_value="21 min")))
    with pytest.raises(CommandError, match="changed both here and in the document"):
        call_command("import_records", str(path), "--user", curator.username, stderr=StringIO())
    out = StringIO()
    call_command(
        "import_records", str(path), "--user", curator.username, "--overwrite", f"results/{RESULT}", stdout=out
    )
    assert json.loads(out.getvalue())["overwritten"] == {"results": {RESULT: ["printed_value", "value"]}}


def test_a_source_with_a_doi_or_arxiv_id_already_held_is_refused_by_name(seeded, token_client):
    document = copy.deepcopy(seed_document())
    document["sources"][0]["doi"] = "https://doi.org/10.1038/S41592-024-02523-Z"
    assert token_client("curator").post("/api/v1/imports/", document, format="json").status_code == 200  # an update
    assert Source.objects.get(stable_id=PAPER).doi == "10.1038/s41592-024-02523-z"  # one spelling
    duplicate = {
        "format": "benchmark-evidence-import",
        "version": 2,
        "sources": [{"stable_id": "nt-again", "title": "The NT paper again", "doi": "10.1038/s41592-024-02523-Z"}],
    }
    response = token_client("curator").post("/api/v1/imports/", duplicate, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "path": "sources[0].doi",
            "message": f"source '{PAPER}' already has this DOI: use it instead of creating a duplicate",
        }
    ]


def test_partial_dates_model_cards_and_exact_numbers_are_taken_as_curators_meet_them(seeded, token_client):
    document = {
        "format": "benchmark-evidence-import",
        "version": 2,
        "sources": [
            {"stable_id": "card-2023", "title": "A model card", "kind": "model_card", "published_date": "2023"},
            {"stable_id": "board", "title": "A leaderboard", "kind": "leaderboard", "published_date": "2024-06"},
            {
                "stable_id": "preprint",
                "title": "A preprint",
                "kind": "preprint",
                "arxiv_id": "arXiv:2306.15794",
                "arxiv_version": "v2",
            },
        ],
    }
    assert token_client("curator").post("/api/v1/imports/", document, format="json").status_code == 201
    assert Source.objects.get(stable_id="card-2023").published_date == "2023"
    assert Source.objects.get(stable_id="preprint").arxiv_id == "2306.15794"
    bad = copy.deepcopy(document)
    bad["sources"][0]["published_date"] = "2023-02-30"
    bad["sources"][1]["kind"] = "tweet"
    errors = {
        e["path"]: e["message"]
        for e in token_client("curator").post("/api/v1/imports/", bad, format="json").json()["errors"]
    }
    assert errors["sources[0].published_date"] == "2023-02-30 is not a date in the calendar."
    assert errors["sources[1].kind"].startswith(
        "'tweet' is not a valid choice: use one of 'paper', 'preprint', 'dataset_card', 'model_card'"
    )


def test_a_json_number_keeps_its_trailing_zero_through_the_api(seeded, token_client):
    document = document_with(value=0, printed_value="0.410 min", quote_mismatch_reason="A test of digits.")
    raw = json.dumps(document).replace('"value": 0,', '"value": 0.410,')
    api = token_client("curator")
    response = api.post("/api/v1/imports/", raw, content_type="application/json")
    assert response.status_code == 200, response.json()
    assert exact_text(Result.objects.get(stable_id=RESULT).value) == "0.410"


def test_the_reviews_of_a_document_are_checked_but_not_applied(seeded, token_client):
    document = copy.deepcopy(seed_document())
    document["reviews"] = [
        {"record": "evaluations/nobody", "action": "exclude", "reason": "x"},
        {"record": f"evaluations/{EVALUATION}", "action": "exclude", "reason": " "},
        {
            "record": f"evaluations/{EVALUATION}",
            "action": "reinstate",
            "reason": "a document never brings a record back",
        },
        {"record": f"evaluations/{EVALUATION}", "action": ["exclude"], "reason": "x"},
    ]
    errors = token_client("curator").post("/api/v1/imports/", document, format="json").json()["errors"]
    assert [e["path"] for e in errors] == [
        "reviews[0].record",
        "reviews[1].reason",
        "reviews[2].action",
        "reviews[3].action",
    ]
