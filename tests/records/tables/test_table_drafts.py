"""A table draft, as the command line, the API and the admin make it: the same document from a PDF
copy, a TSV and a Markdown paste; bad pastes pinned to their cells with nothing stored; the whole
table reviewed from one page by a second curator."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.urls import reverse

from records.imports import records_import
from records.models import Evaluation, GenomicModel, Source
from records.tables import request_read, table_draft
from reviews.models import ReviewState
from tests.records.tables.catalogue import HERE, ROOT, catalogue_load, example, pasted, reference, request_of

pytestmark = pytest.mark.django_db

PASTES = ["caduceus-table-1.pdf.txt", "caduceus-table-1.tsv", "caduceus-table-1.md"]


@pytest.fixture
def catalogue(seeded):
    catalogue_load()


def drafted(name: str, **changes):
    return table_draft(request=request_read({**request_of(name), **changes}), actor=None)


@pytest.mark.parametrize("name", PASTES)
def test_each_copy_of_the_table_drafts_the_reference_document(catalogue, name):
    draft = drafted(name)
    assert [p.message for p in draft.problems] == []
    assert draft.values == 48
    assert draft.document == reference()
    assert draft.report is not None and draft.report["created"]["evaluations"]


def test_the_reference_holds_the_values_document_02_curated_by_hand():
    """The 32 cells document 02 holds (curated by hand from the same table) are the reference's, digit for digit."""
    by_cell = {}
    for evaluation in reference()["evaluations"]:
        result = evaluation["results"][0]
        by_cell[(evaluation["dataset"], evaluation["source_locator"].rsplit("column ", 1)[1].strip("'"))] = result
    curated = [e for e in example()["evaluations"] if e["protocol"] == "cad-gb-top1-accuracy"]
    assert len(curated) == 32
    for evaluation in curated:
        column = evaluation["source_locator"].split("column '", 1)[1].split("'", 1)[0]
        ours = by_cell[(evaluation["dataset"], column)]
        theirs = evaluation["results"][0]
        assert (ours["value"], ours["printed_value"], ours["uncertainty_value"], ours["num_runs"]) == (
            theirs["value"], theirs["printed_value"], theirs["uncertainty_value"], theirs["num_runs"]
        )  # fmt: skip


def test_every_value_has_its_locator_and_the_row_as_printed_under_its_header(catalogue):
    document = drafted(PASTES[0]).document
    cell = next(e for e in document["evaluations"] if e["stable_id"].endswith("caduceus-ps-470k-mouse-enhancers"))
    assert cell["source_locator"] == "Table 1, row 'MOUSE ENHANCERS', column 'CADUCEUS-PS (470K)'"
    assert cell["quote"].split("\n") == [
        "CNN (264K) | HYENADNA (436K) | MAMBA (468K) | CADUCEUS W/O EQUIV. (470K) | CADUCEUS-PH (470K) | CADUCEUS-PS (470K)",
        "MOUSE ENHANCERS | 0.715 ±0.087 | 0.780 ±0.025 | 0.743 ±0.054 | 0.770 ±0.058 | 0.754 ±0.074 | 0.793 ±0.058",
    ]
    assert cell["results"][0] | {"stable_id": ""} == {
        "stable_id": "", "value": "0.793", "unit": "accuracy (fraction)", "printed_value": "0.793 ±0.058",
        "uncertainty_kind": "range", "uncertainty_value": "0.058", "num_runs": 5,
    }  # fmt: skip
    assert cell["measured_by"] == "authors"
    cnn = next(e for e in document["evaluations"] if e["configuration"] == "schiff-2024-caduceus-cnn-264k")
    assert (cnn["measured_by"], cnn["measured_by_name"]) == ("third_party", "Schiff et al.")
    assert document["protocols"][0]["best_marking"] == "best"  # the paste marks its best values in bold


def test_a_label_nothing_matches_exactly_is_offered_with_scores_and_not_merged(catalogue):
    request = request_of(PASTES[0])
    del request["columns"]["CNN (264K)"]
    draft = table_draft(request=request_read(request), actor=None)
    column = next(c for c in draft.drafted.columns if c.label == "CNN (264K)")
    assert column.chosen == "" and column.match.candidates
    assert all(0 < c.score < 100 for c in column.match.candidates)
    problem = next(p for p in draft.problems if p.pin.column == column.index and p.pin.row is None)
    assert problem.message.startswith("unknown model 'CNN (264K)'")
    assert not any(e["configuration"].endswith("cnn-264k") for e in draft.document["evaluations"])


BAD_PASTES = [
    ("ragged", lambda t: t.replace("0.715 ±0.087  ", "", 1), "row", "has 6 cells, the header 7"),
    ("two numbers", lambda t: t.replace("0.780 ±0.025", "0.780 0.025", 1), "cell", "prints 2 numbers"),
    ("unknown model", lambda t: t.replace("HYENADNA (436K)", "HYENA-X (436K)", 1), "column", "unknown model 'HYENA-X (436K)'"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "change", "where", "message"), BAD_PASTES, ids=[c[0] for c in BAD_PASTES])
def test_a_bad_paste_is_pinned_where_it_is(catalogue, case, change, where, message):
    draft = drafted(PASTES[0], text=change(pasted(PASTES[0])))
    pinned = [p for p in draft.problems if message in p.message]
    assert pinned and pinned[0].pin.where == where
    if where == "cell":
        assert (pinned[0].pin.row, pinned[0].pin.column) == (0, 2)


def test_a_unit_without_a_scale_is_pinned_to_every_column_it_reads(catalogue):
    draft = drafted(
        PASTES[0], metric={"name": "Top-1 accuracy", "short_name": "accuracy", "unit": "score", "direction": "higher"}
    )
    pinned = [p for p in draft.problems if "gives no scale" in p.message]
    assert len(pinned) == 8 and all(p.pin.where == "row" for p in pinned)  # the tasks are the rows here
    assert draft.document["evaluations"] == []


def test_a_spread_the_request_does_not_name_is_refused(catalogue):
    draft = drafted(PASTES[0], uncertainty_kind="")
    assert len([p for p in draft.problems if "say what the table's spreads are" in p.message]) == 48


def test_the_command_prints_the_same_document_and_fails_while_a_problem_is_left(catalogue, tmp_path, settings):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    request = {key: value for key, value in request_of(PASTES[1]).items() if key != "text"}
    (tmp_path / "request.json").write_text(json.dumps(request))
    out = tmp_path / "out.json"
    with out.open("w") as handle:
        call_command(
            "draft_table",
            str(HERE / PASTES[1]),
            "--request",
            str(tmp_path / "request.json"),
            "--document-only",
            stdout=handle,
        )
    assert json.loads(out.read_text()) == reference()
    (tmp_path / "bad.txt").write_text(pasted(PASTES[1]).replace("0.780 ±0.025", "0.780 0.025"))
    with pytest.raises(CommandError, match="the draft has 1 problem"):
        call_command(
            "draft_table",
            str(tmp_path / "bad.txt"),
            "--request",
            str(tmp_path / "request.json"),
            stdout=open("/dev/null", "w"),
            stderr=open("/dev/null", "w"),
        )
    assert not Evaluation.objects.filter(source__stable_id="schiff-2024-caduceus").exists()


def test_the_command_refuses_an_unreadable_file_in_one_line():
    done = subprocess.run(
        [sys.executable, "manage.py", "draft_table", "/no/such/table.txt", "--source", "x", "--table", "T"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert (
        done.stderr.strip().splitlines()[-1]
        == "CommandError: cannot read /no/such/table.txt: No such file or directory"
    )


def test_the_api_answers_the_same_draft_and_names_a_bad_field(catalogue, client, curator):
    client.force_login(curator)
    url = reverse("api-table-drafts")
    answer = client.post(url, request_of(PASTES[2]), content_type="application/json")
    assert answer.status_code == 200
    assert answer.json()["document"] == reference() and answer.json()["problems"] == []
    refused = client.post(url, {**request_of(PASTES[2]), "colums": {}}, content_type="application/json")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"path": "colums", "message": "is not a field of a table draft request"}]
    typed = client.post(url, {**request_of(PASTES[2]), "num_runs": True}, content_type="application/json")
    assert typed.status_code == 400 and typed.json()["errors"][0]["path"] == "num_runs"
    assert not Evaluation.objects.filter(source__stable_id="schiff-2024-caduceus").exists()


def test_the_api_refuses_the_public(catalogue, client):
    answer = client.post(reverse("api-table-drafts"), request_of(PASTES[2]), content_type="application/json")
    assert answer.status_code in (401, 403)


def test_the_admin_page_drafts_the_same_document_from_its_fields(catalogue, client, curator):
    client.force_login(curator)
    url = reverse("admin:records_importjob_table")
    assert client.get(url).status_code == 200
    fields = {
        "source": "https://arxiv.org/abs/2403.03234v2", "table": "Table 1", "text": pasted(PASTES[0]).replace("\n", "\r\n"),
        "caption": request_of(PASTES[0])["caption"], "format": "auto", "header_rows": "1", "models_in": "columns",
        "measured_by": "third_party", "measured_by_name": "Schiff et al.", "metric_name": "Top-1 accuracy",
        "metric_short_name": "accuracy", "metric_unit": "accuracy (fraction)", "metric_direction": "higher",
        "uncertainty_kind": "range", "uncertainty": request_of(PASTES[0])["uncertainty"], "num_runs": "5", "suite": "",
    }  # fmt: skip
    first = client.post(url, {**fields, "action": "read"})
    assert first.status_code == 200
    body = first.content.decode()
    assert "unknown model &#x27;CNN (264K)&#x27;" in body and 'id="draft-grid"' in body
    choices = {
        "label-c-1": "CNN (264K)", "map-c-1": "genomic-benchmarks-cnn", "label-c-3": "MAMBA (468K)", "map-c-3": "new",
        "label-c-4": "CADUCEUS W/O EQUIV. (470K)", "map-c-4": "new", "label-c-5": "CADUCEUS-PH (470K)", "by-c-5": "authors",
        "label-c-6": "CADUCEUS-PS (470K)", "by-c-6": "authors",
        "label-r-1": "CODING VS. INTERGENOMIC", "map-r-1": "hyena-gb-coding-vs-intergenomic",
        "label-r-2": "HUMAN VS. WORM", "map-r-2": "hyena-gb-human-vs-worm",
        "label-r-4": "HUMAN ENHANCER ENSEMBL", "id-r-4": "hyena-gb-human-enhancers-ensembl",
    }  # fmt: skip
    download = client.post(url, {**fields, **choices, "action": "download"})
    assert download["Content-Disposition"] == 'attachment; filename="table-1.json"'
    assert json.loads(download.content) == reference()


def test_a_second_curator_checks_the_whole_table_from_one_page(catalogue, client, curator, other_curator):
    records_import(document=reference(), actor=curator)
    source = Source.objects.get(stable_id="schiff-2024-caduceus")
    url = reverse("admin:records_source_review_table", args=[source.pk]) + "?table=Table+1"
    client.force_login(other_curator)
    body = client.get(url).content.decode()
    assert 'id="review-grid"' in body and body.count('name="rows"') == 48
    assert "MOUSE ENHANCERS | 0.715 ±0.087" in body
    cells = list(Evaluation.objects.filter(source=source).values_list("pk", flat=True))
    refused = Evaluation.objects.get(stable_id__endswith="caduceus-wo-equiv-470k-human-regulatory")
    client.post(
        url,
        {
            "action": "apply",
            "transition": "refuse",
            "reason": "Not a released model",
            "rows": [refused.pk],
            "shown": cells,
        },
    )
    rest = [pk for pk in cells if pk != refused.pk]
    client.post(url, {"action": "apply", "transition": "check_source", "reason": "", "all_rows": "on", "shown": rest})
    assert Evaluation.objects.filter(source=source, review_state=ReviewState.SOURCE_CHECKED).count() == 47
    assert Evaluation.objects.get(pk=refused.pk).review_state == ReviewState.EXCLUDED_RECHECK


def test_the_importing_curator_cannot_check_their_own_table(catalogue, client, curator):
    records_import(document=reference(), actor=curator)
    source = Source.objects.get(stable_id="schiff-2024-caduceus")
    url = reverse("admin:records_source_review_table", args=[source.pk]) + "?table=Table+1"
    client.force_login(curator)
    cells = list(Evaluation.objects.filter(source=source).values_list("pk", flat=True))
    client.post(url, {"action": "apply", "transition": "check_source", "all_rows": "on", "shown": cells})
    assert not Evaluation.objects.filter(source=source).exclude(review_state=ReviewState.PROPOSED).exists()
    assert GenomicModel.objects.filter(stable_id="mamba-468k").exists()
    assert Evaluation.objects.filter(source=source).count() == 48
