"""Units and join keys as a curator sends a document to the API: a scale word read and mapped, an
unknown one refused with the accepted spellings, the dry run saying how each value will be
compared, and a warning where a new metric short name looks like a catalogued one."""

from __future__ import annotations

import pytest

from records.models import Protocol

pytestmark = pytest.mark.django_db


def table_document(
    *, unit: str, short_name: str = "mcc", value: str = "61.2", scale: str | None = None, table: str = ""
) -> dict:
    metric = {"name": "MCC", "short_name": short_name, "unit": unit, "direction": "higher"}
    if scale is not None:
        metric["scale"] = scale
    return {
        "format": "benchmark-evidence-import",
        "version": 2,
        "title": "A paper's MCC table",
        "sources": [{"stable_id": "a-paper", "title": "A paper that prints MCC"}],
        "datasets": [{"stable_id": "a-task", "name": "A task", "source": "a-paper"}],
        "configurations": [{"stable_id": "a-model", "name": "A model, fine-tuned"}],
        "protocols": [
            {
                "stable_id": f"mcc-{short_name}{table}",
                "title": "A paper's MCC table",
                "summary": "Fine-tuned, scored by MCC.",
                "metric": metric,
                "source": "a-paper",
            }
        ],
        "evaluations": [
            {
                "stable_id": f"an-evaluation-{short_name}{table}",
                "title": "A model on a task",
                "protocol": f"mcc-{short_name}{table}",
                "configuration": "a-model",
                "dataset": "a-task",
                "measured_by": "authors",
                "reading_method": "table",
                "source": "a-paper",
                "source_locator": "Table 1",
                "quote": f"A model {value}",
                "results": [
                    {"stable_id": f"a-result-{short_name}{table}", "value": value, "unit": unit, "printed_value": value}
                ],
            }
        ],
    }


def test_the_dry_run_says_how_each_value_will_be_compared(token_client):
    curator = token_client("curator")
    dry = curator.post("/api/v1/imports/?dry_run=1", table_document(unit="MCC (x100)"), format="json")
    assert dry.status_code == 200, dry.json()
    compared = dry.json()["comparisons"]["mcc-mcc"]
    assert (compared["scale"], compared["divided_by"], compared["compared_as"]) == (
        "x100",
        "100",
        "mcc on the plain scale",
    )
    assert compared["values"] == {"a-result-mcc": "61.2 MCC (x100) -> 0.612"}
    assert curator.post("/api/v1/imports/", table_document(unit="MCC (x100)"), format="json").status_code == 201
    assert Protocol.objects.get(stable_id="mcc-mcc").metric_scale == "x100"


def test_it_refuses_an_unknown_scale_word_naming_the_field_and_the_accepted_spellings(token_client):
    curator = token_client("curator")
    refused = curator.post("/api/v1/imports/?dry_run=1", table_document(unit="MCC x10"), format="json")
    assert refused.status_code == 400
    [error] = [e for e in refused.json()["errors"] if "scale word" in e["message"]]
    assert error["path"].startswith("protocols[0].metric")
    assert "unknown scale word 'x10'" in error["message"] and '"×100"' in error["message"]
    contradicted = curator.post(
        "/api/v1/imports/?dry_run=1", table_document(unit="MCC x 100", scale="percent"), format="json"
    )
    assert contradicted.status_code == 400
    assert any("says the scale is 'x100'" in e["message"] for e in contradicted.json()["errors"])


def test_a_new_metric_short_name_like_a_catalogued_one_is_warned_of_and_joins_nothing(token_client):
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", table_document(unit="MCC"), format="json").status_code == 201
    dry = curator.post(
        "/api/v1/imports/?dry_run=1", table_document(unit="MCC x100", short_name="mcc_x100"), format="json"
    )
    assert dry.status_code == 200, dry.json()
    [warning] = dry.json()["warnings"]
    assert warning["path"] == "protocols[0].metric.short_name"
    assert "'mcc_x100' is new, while the catalogue has 'mcc'" in warning["message"]
    assert dry.json()["comparisons"]["mcc-mcc_x100"]["compared_with"] == []
    same = curator.post(
        "/api/v1/imports/?dry_run=1", table_document(unit="MCC x100", short_name="mcc", table="-b"), format="json"
    ).json()
    assert same["warnings"] == [] and same["comparisons"]["mcc-mcc-b"]["compared_with"] == ["mcc-mcc"]
