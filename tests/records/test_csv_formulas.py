"""Page-level CSV downloads never hand a spreadsheet a formula (OWASP's CSV injection advice); the
release tables keep the recorded text exactly, and their data package says so."""

from __future__ import annotations

import csv
import gzip
import io
import json
from decimal import Decimal

import pytest

from records.exports import spreadsheet_cell
from records.models import Evaluation
from records.seed import PROTOCOL_ID
from releases.store import release_file_path
from tests.releases.conftest import build_now, release_manager, releases_dir  # noqa: F401

pytestmark = pytest.mark.django_db

# Text a hostile or careless editor could store: each starts as a formula would.
FORMULAS = {
    "name": '=HYPERLINK("https://example.org/x","click")',
    "setup": "+cmd|' /C calc'!A0",
    "aggregation": "-2+3+cmd|' /C calc'!A0",
    "concern": "@SUM(1+1)*cmd|' /C calc'!A0",
    "quote": "\t=1+1 lasted 20 min and 50 min",  # it prints the seed's values
}


def test_it_prefixes_formula_text_with_a_quote_and_leaves_numbers_alone():
    assert spreadsheet_cell("=1+1") == "'=1+1"
    assert spreadsheet_cell("+1+1") == "'+1+1"
    assert spreadsheet_cell("-1+1") == "'-1+1"
    assert spreadsheet_cell("@SUM(A1)") == "'@SUM(A1)"
    assert spreadsheet_cell("\t=1") == "'\t=1" and spreadsheet_cell("\r=1") == "'\r=1"
    # Numbers, and text that is wholly a plain number (a printed "-0.5"), go out as they are.
    assert spreadsheet_cell(Decimal("-0.5")) == "-0.5" and spreadsheet_cell(-3) == "-3"
    assert [spreadsheet_cell(text) for text in ("-0.5", "+3", "-.5", "-1e-3")] == ["-0.5", "+3", "-.5", "-1e-3"]
    assert spreadsheet_cell("0.5 (−0.1)") == "0.5 (−0.1)" and spreadsheet_cell("a=b") == "a=b"
    assert spreadsheet_cell(None) == "" and spreadsheet_cell(True) == "true"


@pytest.fixture
def formulas_stored(seeded):
    """The seed protocol's evaluations and configurations with formula-like text in them."""
    evaluations = list(Evaluation.objects.filter(protocol__stable_id=PROTOCOL_ID).select_related("configuration"))
    for evaluation in evaluations:
        evaluation.configuration.name = FORMULAS["name"]
        evaluation.configuration.save()
        for field in ("setup", "aggregation", "concern", "quote"):
            setattr(evaluation, field, FORMULAS[field])
        evaluation.save()
    return evaluations


def csv_rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8"), newline="")))


def test_the_protocol_results_csv_neutralises_formulas_and_keeps_values(client, formulas_stored):
    rows = csv_rows(client.get(f"/protocols/{PROTOCOL_ID}/results.csv").content)
    assert rows and [row["value"] for row in rows] == ["50", "20"]  # the seed's values, untouched
    for row in rows:
        assert row["configuration_name"] == "'" + FORMULAS["name"]
        assert row["setup"] == "'" + FORMULAS["setup"]
        assert row["aggregation"] == "'" + FORMULAS["aggregation"]
        assert row["concern"] == "'" + FORMULAS["concern"]
        assert row["quote"] == "'" + FORMULAS["quote"]
    # The JSON download is data, not a spreadsheet: exact text.
    data = client.get(f"/protocols/{PROTOCOL_ID}/results.json").json()
    assert {row["configuration_name"] for row in data["rows"]} == {FORMULAS["name"]}


def test_the_coverage_csv_neutralises_formulas(client, formulas_stored):
    rows = csv_rows(client.get("/coverage.csv").getvalue())  # streamed
    names = {row["configuration_name"] for row in rows if row["protocol_id"] == PROTOCOL_ID}
    assert "'" + FORMULAS["name"] in names and FORMULAS["name"] not in names
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for row in rows for cell in row.values())


def test_the_release_tables_keep_the_exact_text_and_the_data_package_says_so(
    formulas_stored,
    releases_dir,  # noqa: F811
    release_manager,  # noqa: F811
    build_now,  # noqa: F811
):
    from releases.services import release_cut

    release = build_now(release_cut(actor=release_manager))
    assert release.status == "published", release.build.error
    matrix = next(f.name for f in release.files.all() if "model_evaluation_matrix" in f.name)
    with gzip.open(release_file_path(release, matrix), "rt", encoding="utf-8", newline="") as stream:
        rows = [row for row in csv.DictReader(stream) if row["protocol_id"] == PROTOCOL_ID]
    assert rows and {row["configuration_name"] for row in rows} == {FORMULAS["name"]}
    assert {row["setup"] for row in rows} == {FORMULAS["setup"]} and {row["quote"] for row in rows} == {
        FORMULAS["quote"]
    }
    note = json.loads(release_file_path(release, "data/datapackage.json").read_text())["description"]
    assert "exactly" in note and "=, +, - or @" in note and "single quote" in note
