"""The coverage page and its CSV read from benchmarks whether a protocol has a reviewed recipe: one
with a source-checked recipe has no "no reviewed recipe" gap; one with only a proposed recipe, or
none, has it."""

from __future__ import annotations

import csv
import io

import pytest

from tests.benchmarks.conftest import make_tiny_recipe
from tests.factories import EvaluationFactory, ProtocolFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def csv_rows(client) -> dict[str, dict[str, str]]:
    response = client.get("/coverage.csv")
    return {row["protocol_id"]: row for row in csv.DictReader(io.StringIO(response.getvalue().decode()))}


def page_rows(client) -> dict[str, str]:
    html = client.get("/coverage/").content.decode()
    return {row.split("</th>")[0]: row for row in html.split('<tr><th scope="row">')[1:]}


def test_it_says_which_protocols_have_a_reviewed_recipe_on_the_page_and_in_the_csv(client):
    reviewed, proposed, bare = (
        ProtocolFactory(stable_id=name, title=f"Protocol {name}") for name in ("reviewed", "proposed", "bare")
    )
    for protocol in (reviewed, proposed, bare):
        EvaluationFactory(protocol=protocol)
    apply_transitions(make_tiny_recipe(reviewed, stable_id="reviewed-recipe"), "check_source")
    make_tiny_recipe(proposed, stable_id="proposed-recipe")

    rows = csv_rows(client)
    assert {name: rows[name]["has_reviewed_recipe"] for name in rows} == {
        "reviewed": "true",
        "proposed": "false",
        "bare": "false",
    }
    assert "no reviewed recipe" not in rows["reviewed"]["missing"]
    assert "no reviewed recipe" in rows["proposed"]["missing"] and "no reviewed recipe" in rows["bare"]["missing"]

    gaps = {
        name: "no reviewed recipe" in row
        for key, row in page_rows(client).items()
        for name in ("reviewed", "proposed", "bare")
        if f'href="/protocols/{name}/' in key
    }
    assert gaps == {"reviewed": False, "proposed": True, "bare": True}
