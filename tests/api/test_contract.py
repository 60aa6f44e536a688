"""The API answers what its OpenAPI schema says: shapes, error bodies, required and immutable ids, enums."""

from __future__ import annotations

import json

import pytest
from openapi_spec_validator import OpenAPIV30SpecValidator

from records.models import Configuration, Decision, Protocol
from tests.factories import EvaluationFactory

pytestmark = pytest.mark.django_db

E500 = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"


@pytest.fixture
def schema(api):
    return api.get("/api/v1/schema/?format=json").json()


def configuration(stable_id: str = "config-new") -> dict:
    return {"configuration_id": stable_id, "name": "A new model", "family": "Test", "parameter_count": 1000}


def test_it_publishes_a_schema_the_strict_openapi_validator_accepts(schema):
    errors = [str(error).splitlines()[0] for error in OpenAPIV30SpecValidator(schema).iter_errors()]
    assert errors == []


def test_it_pages_a_records_review_log_as_the_schema_says(api, schema, seeded):
    operation = schema["paths"]["/api/v1/evaluations/{evaluation_id}/events/"]["get"]
    documented = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert documented.endswith("/PaginatedReviewEventList")
    assert {p["name"] for p in operation["parameters"]} == {"evaluation_id", "cursor", "page_size"}
    first = api.get(f"/api/v1/evaluations/{E500}/events/", {"page_size": 1}).json()
    assert set(first) == {"next", "previous", "next_cursor", "previous_cursor", "results"}
    assert [event["transition"] for event in first["results"]] == ["check_source"]
    second = api.get(first["next"]).json()
    assert [event["transition"] for event in second["results"]] == ["exclude"] and second["next"] is None


def test_it_lists_the_available_transitions_as_one_array_as_the_schema_says(token_client, schema):
    evaluation = EvaluationFactory()
    operation = schema["paths"]["/api/v1/evaluations/{evaluation_id}/transitions/"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["type"] == "array"
    assert [p["name"] for p in operation["parameters"]] == ["evaluation_id"]
    answer = token_client("curator").get(f"/api/v1/evaluations/{evaluation.stable_id}/transitions/").json()
    assert [transition["name"] for transition in answer] == ["check_source", "refuse"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"transition": "approve"}, "transition"),
        ({"transition": "exclude", "expected_state": "gone"}, "expected_state"),
    ],
)
def test_it_refuses_an_unknown_transition_with_the_documented_detail_and_field(token_client, body, field):
    evaluation = EvaluationFactory()
    response = token_client("curator").post(
        f"/api/v1/evaluations/{evaluation.stable_id}/transitions/", body, format="json"
    )
    assert response.status_code == 400
    assert response.json()["field"] == field and "not a valid choice" in response.json()["detail"]
    evaluation.refresh_from_db()
    assert evaluation.review_state == "proposed"


def test_it_refuses_a_put_without_the_required_stable_id_naming_it(token_client):
    client = token_client("curator")
    client.post("/api/v1/configurations/", configuration(), format="json")
    body = {key: value for key, value in configuration().items() if key != "configuration_id"}
    response = client.put("/api/v1/configurations/config-new/", {**body, "name": "Renamed"}, format="json")
    assert response.status_code == 400 and "configuration_id" in response.json()
    assert Configuration.objects.get(stable_id="config-new").name == "A new model"
    same = client.put("/api/v1/configurations/config-new/", {**configuration(), "name": "Renamed"}, format="json")
    assert same.status_code == 200 and same.json()["name"] == "Renamed"


@pytest.mark.parametrize("method", ["put", "patch"])
def test_it_refuses_another_stable_id_in_an_update_naming_the_field(token_client, method):
    client = token_client("curator")
    client.post("/api/v1/configurations/", configuration(), format="json")
    body = {**configuration("other-id"), "name": "Renamed"}
    response = getattr(client, method)("/api/v1/configurations/config-new/", body, format="json")
    assert response.status_code == 400
    assert "never change" in response.json()["configuration_id"][0]
    assert list(Configuration.objects.values_list("stable_id", "name")) == [("config-new", "A new model")]


def test_it_documents_record_types_of_a_correction_as_the_fixed_list_it_accepts(api, schema, seeded):
    field = schema["components"]["schemas"]["CorrectionCreateRequest"]["properties"]["target_type"]
    enum = schema["components"]["schemas"][field["allOf"][0]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert set(enum) == {
        "protocol",
        "evaluation",
        "result",
        "configuration",
        "dataset",
        "source",
        "evidencerow",
        "baselinerole",
        "decision",
    }
    refused = api.post(
        "/api/v1/corrections/",
        {"target_type": "rumour", "target_id": E500, "explanation": "x"},
        format="json",
    )
    assert refused.status_code == 400 and "use one of: protocol, evaluation" in refused.json()["target_type"][0]


def test_it_documents_the_contact_email_without_an_empty_default(schema):
    email = schema["components"]["schemas"]["CorrectionCreateRequest"]["properties"]["contact_email"]
    assert "default" not in json.dumps(email)


@pytest.mark.parametrize("page_size", ["null", "0", "-6", "2.5", "x"])
def test_it_refuses_a_page_size_that_is_not_a_whole_number_from_one(api, seeded, page_size):
    response = api.get("/api/v1/evaluations/", {"page_size": page_size})
    assert response.status_code == 400 and "page_size" in response.json()
    assert len(api.get("/api/v1/evaluations/", {"page_size": "100000"}).json()["results"]) == 2


@pytest.mark.parametrize(("path", "name"), [("/api/v1/evaluations/", "comparable"), ("/api/v1/datasets/", "is_suite")])
@pytest.mark.parametrize("value", ["null", "yes", "TRUE", "on", "2"])
def test_it_refuses_a_boolean_filter_that_spells_no_boolean(api, seeded, path, name, value):
    response = api.get(path, {name: value})
    assert response.status_code == 400 and "true or false (also True/False, 1/0)" in response.json()[name][0]
    assert api.get(path, {name: ""}).status_code == 200  # empty: no filter, as the schema's allowEmptyValue says


def test_it_refuses_a_misspelt_dry_run_instead_of_importing(token_client):
    from records.seed import seed_document

    client = token_client("curator")
    response = client.post("/api/v1/imports/?dry_run=yes-please", seed_document(), format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == "?dry_run"
    assert not Protocol.objects.exists()
    assert client.post("/api/v1/imports/?dry_run=1", seed_document(), format="json").status_code == 200
    assert not Protocol.objects.exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": 5}, "name"),
        ({"description": True}, "description"),
        ({"source_id": ""}, "source_id"),
        ({"source_id": 7}, "source_id"),
    ],
)
def test_it_refuses_text_that_is_not_a_string_and_an_empty_reference_naming_the_field(token_client, change, field):
    # schemathesis (negative mode) found numbers stored as their text and "" read as null, where the
    # schema promises a string (a stable id of at least one character, or null)
    client = token_client("curator")
    client.post("/api/v1/configurations/", configuration(), format="json")
    response = client.patch("/api/v1/configurations/config-new/", change, format="json")
    assert response.status_code == 400 and field in response.json(), response.content
    assert list(Configuration.objects.values_list("stable_id", "name")) == [("config-new", "A new model")]


def test_it_refuses_references_that_are_not_a_list_naming_the_field(token_client):
    # schemathesis (negative mode) found a JSON object accepted as the list of its keys
    client = token_client("curator")
    body = {"decision_id": "decision-new", "title": "A decision", "description": "Why.", "protocol_ids": {"a": 1}}
    response = client.post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 400 and "protocol_ids" in response.json(), response.content
    assert not Decision.objects.exists()
    body["protocol_ids"] = []
    assert client.post("/api/v1/decisions/", body, format="json").status_code == 201


@pytest.mark.parametrize(
    ("padding", "field"),
    [({"proposed_value": "0.5" + " " * 2000}, "proposed_value"), ({"explanation": "Why." + " " * 5000}, "explanation")],
)
def test_it_refuses_text_longer_than_the_schema_allows_even_when_spaces_make_it_long(api, seeded, padding, field):
    # schemathesis (negative mode) found a suggestion padded past maxLength accepted: DRF trims, then counts
    from corrections.models import Correction

    body = {
        "target_type": "protocol",
        "target_id": Protocol.objects.values_list("stable_id", flat=True).first(),
        "explanation": "Why.",
        **padding,
    }
    response = api.post("/api/v1/corrections/", body, format="json")
    assert response.status_code == 400 and field in response.json(), response.content
    assert not Correction.objects.exists()
    assert api.post("/api/v1/corrections/", {**body, field: padding[field].strip()}, format="json").status_code == 201


def test_it_refuses_a_catalogue_text_padded_past_its_length(token_client):
    client = token_client("curator")
    client.post("/api/v1/configurations/", configuration(), format="json")
    response = client.patch("/api/v1/configurations/config-new/", {"name": "A" + " " * 400}, format="json")
    assert response.status_code == 400 and "name" in response.json(), response.content
    assert list(Configuration.objects.values_list("name", flat=True)) == ["A new model"]


def test_it_refuses_a_reason_that_is_not_a_string_and_applies_no_transition(token_client):
    # schemathesis (negative mode) found a number accepted as a transition's reason, stored as its text
    evaluation = EvaluationFactory()
    response = token_client("curator").post(
        f"/api/v1/evaluations/{evaluation.stable_id}/transitions/",
        {"transition": "check_source", "reason": -1.9e16},
        format="json",
    )
    assert response.status_code == 400 and response.json()["field"] == "reason", response.content
    evaluation.refresh_from_db()
    assert evaluation.review_state == "proposed"
