"""Agreement verdicts through the API: each model's verdict on a task family, copies and versions
counted once, scales put on one, subjects without a model, signed cursors, the schema's enum."""

from __future__ import annotations

import pytest

from records.agreement import AGREEMENT_RULE, MEASUREMENT_RULE
from tests.api.identity_world import (
    bump,
    measured,
    model,
)
from tests.factories import (
    ConfigurationFactory,
    ProtocolFactory,
)

pytestmark = pytest.mark.django_db

# -- agreements -------------------------------------------------------------------------------------


def agreements(api, **query) -> list[dict]:
    response = api.get("/api/v1/agreements/", {"page_size": 200, **query})
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def by_subject(rows: list[dict]) -> dict[str, dict]:
    return {row["subject_id"]: row for row in rows}


def test_it_gives_each_models_verdict_on_a_task_family(api, world):
    rows = by_subject(agreements(api))
    assert {subject: row["verdict"] for subject, row in rows.items()} == {
        "nt-500m": "consistent",
        "conflicted": "conflicting",
        "single": "single_measurement",
        "selfish": "self_reported_conflicting",  # the authors' 0.90 and 0.50
        "copied": "single_measurement",
    }
    assert rows["selfish"]["verdict_label"] == "self-reported, conflicting"
    assert all(row["rule"] == f"{AGREEMENT_RULE} {MEASUREMENT_RULE}" for row in rows.values())
    consistent = rows["nt-500m"]
    assert (consistent["subject_kind"], consistent["subject_name"], consistent["metric"]) == ("model", "NT 500M", "mcc")
    assert consistent["task_ids"] == ["promoter-a", "promoter-b"]
    conflicting = rows["conflicted"]["measurements"]
    assert [(x["value"], x["spread"], x["measured_by"]) for x in conflicting] == [
        ("0.80", "0.01", "authors"),
        ("0.60", "0.01", "third_party"),
    ]
    assert conflicting[1]["measured_by_name"] == "An independent benchmark"
    assert conflicting[1]["source_id"] == "third-paper" and conflicting[1]["work_id"] is None


def test_it_counts_a_work_printed_in_two_versions_once_showing_the_more_precise_printing(api, world):
    e = world["evaluations"]
    measurements = by_subject(agreements(api))["nt-500m"]["measurements"]
    assert len(measurements) == 2  # the preprint's 0.80 and the journal's 0.802: one work, one measurement
    authors = next(x for x in measurements if x["measured_by"] == "authors")
    assert (authors["evaluation_id"], authors["value"], authors["work_id"]) == (
        e["consistent_journal"].stable_id,
        "0.802",
        "nt-work",
    )
    assert authors["copy_evaluation_ids"] == [e["consistent_authors"].stable_id]


def test_it_counts_a_rounded_copy_once_with_its_original(api, world):
    e = world["evaluations"]
    row = by_subject(agreements(api))["copied"]
    assert row["verdict"] == "single_measurement"
    [measurement] = row["measurements"]
    assert measurement == {
        "evaluation_id": e["original"].stable_id,
        "source_id": "nt-journal",
        "work_id": "nt-work",
        "measured_by": "authors",
        "measured_by_name": "",
        "value": "0.8123",
        "unit": "MCC",
        "printed_value": "0.8123",
        "scaled_value": "0.8123",
        "spread": None,
        "review_state": "proposed",
        "locator": "Table 1",
        "quote": "",
        "copy_evaluation_ids": [e["copy"].stable_id],
    }
    assert row["disagreements"] == []  # 0.8123 rounds to the copy's 0.81


def test_it_puts_a_unit_times_100_on_the_plain_scale_keeping_the_printed_value(api, world):
    task = world["tasks"][2]
    protocol = ProtocolFactory(metric_short_name="mcc", metric_unit="MCC x 100", metric_direction="higher")
    percent = model("percent")
    measured(percent, "66.47", source=world["sources"][1], dataset=task, protocol=protocol, unit="MCC x 100")
    bump()
    [measurement] = by_subject(agreements(api, model_id="percent"))["percent"]["measurements"]
    assert (measurement["value"], measurement["unit"], measurement["scaled_value"]) == ("66.47", "MCC x 100", "0.6647")


def test_it_computes_agreements_over_one_models_or_one_task_familys_evaluations(api, world):
    assert [row["subject_id"] for row in agreements(api, model_id="nt-500m")] == ["nt-500m"]
    on_b = agreements(api, task_id="promoter-b")
    assert {row["subject_id"] for row in on_b} == {"nt-500m", "conflicted"}
    assert agreements(api, model_id="single", task_id="promoter-a") == []


def test_it_names_a_configuration_as_the_subject_when_it_names_no_model(api, world):
    sources, task = world["sources"], world["tasks"][2]
    configuration = ConfigurationFactory(stable_id="bare-configuration", name="A bare configuration")
    protocol = world["evaluations"]["single"].protocol
    measured(None, "0.5", configuration=configuration, source=sources[1], dataset=task, protocol=protocol)
    bump()
    row = by_subject(agreements(api))["bare-configuration"]
    assert (row["subject_kind"], row["subject_name"], row["verdict"]) == (
        "configuration",
        "A bare configuration",
        "single_measurement",
    )


def test_it_pages_agreements_with_signed_cursors(api, world):
    everything = agreements(api)
    seen, url, pages = [], "/api/v1/agreements/?page_size=2", 0
    while url:
        body = api.get(url).json()
        seen.extend(body["results"])
        url, pages = body["next"], pages + 1
        if body["previous"]:
            assert api.get(body["previous"]).status_code == 200
    assert pages == 3 and seen == everything
    forged = api.get("/api/v1/agreements/", {"cursor": "bm90LWEtY3Vyc29y"})
    assert forged.status_code == 400 and "cursor" in forged.json()
    listed = api.get("/api/v1/agreements/")
    assert listed["ETag"] and listed["Last-Modified"]
    assert api.get("/api/v1/agreements/", HTTP_IF_NONE_MATCH=listed["ETag"]).status_code == 304


def test_it_documents_the_verdicts_as_an_enum_and_the_filters_in_the_schema(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    assert schema["components"]["schemas"]["VerdictEnum"]["enum"] == [
        "single_measurement",
        "self_reported_consistent",
        "self_reported_conflicting",
        "consistent",
        "conflicting",
        "transcription_conflict",
    ]
    parameters = {p["name"] for p in schema["paths"]["/api/v1/agreements/"]["get"]["parameters"]}
    assert parameters == {"model_id", "task_id", "cursor", "page_size"}
    evaluations = {p["name"] for p in schema["paths"]["/api/v1/evaluations/"]["get"]["parameters"]}
    assert {"model_id", "task_id", "work_id"} <= evaluations
    assert {"identifier"} <= {p["name"] for p in schema["paths"]["/api/v1/works/"]["get"]["parameters"]}
