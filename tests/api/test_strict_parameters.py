"""The API refuses what it does not understand: an unknown query parameter on any endpoint is a 400
naming it and listing the ones the endpoint takes (common.api.KnownParametersMixin); a filter by a
stable id that names no record is a 400 naming the filter (common.api.record_filter); a boolean takes
the spellings clients send (common.api.QUERY_BOOLEANS), and nothing else."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from benchmarks.services import benchmark_job_enqueue
from portal.tokens import api_token_create
from records.models import Protocol
from records.seed import PROTOCOL_ID
from reviews.models import ReviewEvent
from tests.benchmarks.conftest import make_tiny_recipe

pytestmark = pytest.mark.django_db

E500 = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"
UNKNOWN = "protocol"  # the issue's own slip: `?protocol=` for `?protocol_id=`


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.org", "a-password")


@pytest.fixture
def superuser_api(superuser) -> APIClient:
    """A client every permission lets through, so what answers is the parameter check alone."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=superuser)}")
    return client


def takes(body: dict, name: str) -> list[str]:
    """The parameters a 400 says the endpoint takes, from its message about `name`."""
    message = body[name] if name in body else body["errors"][0]["message"]  # the import's own error shape
    assert "unknown query parameter" in message, body
    return message.split(" takes ", 1)[1].split(", ")


LISTS = "area, comparable, configuration_id, cursor, dataset_id, format, measured_by, model_id, ordering, page_size"


@pytest.mark.parametrize(
    ("app", "method", "path", "expected"),
    [
        ("records", "get", "/api/v1/evaluations/", LISTS),
        ("records", "get", f"/api/v1/evaluations/{E500}/", "format"),
        ("records", "post", f"/api/v1/evaluations/{E500}/transitions/", "format"),
        ("records", "post", "/api/v1/imports/", "background, dry_run, format, overwrite"),
        ("records", "get", "/api/v1/agreements/", "cursor, format, model_id, page_size, task_id"),
        ("reviews", "get", "/api/v1/review-events/", "actor_role, cursor, format, page_size, record, record_type"),
        ("reviews", "get", "/api/v1/review-events/{event}/", "format"),
        ("reviews", "get", f"/api/v1/evaluations/{E500}/events/", "cursor, format, page_size"),
        ("corrections", "post", "/api/v1/corrections/", "format"),
        ("benchmarks", "get", "/api/v1/benchmark-jobs/", "cursor, format, page_size, recipe, status"),
        ("benchmarks", "get", "/api/v1/benchmark-jobs/{job}/", "format"),
        ("benchmarks", "post", "/api/v1/benchmark-jobs/{job}/cancel/", "format"),
        ("releases", "get", "/api/v1/releases/", "format"),
        ("releases", "get", "/api/v1/releases/1/", "format"),
        ("releases", "post", "/api/v1/releases/", "format"),
        ("portal", "get", "/api/v1/", "format"),
    ],
)
def test_it_refuses_an_unknown_parameter_on_a_list_a_record_and_an_action_of_every_app(
    superuser_api, superuser, seeded, app, method, path, expected
):
    recipe = make_tiny_recipe(Protocol.objects.get(stable_id=PROTOCOL_ID))
    job = benchmark_job_enqueue(recipe=recipe, requested_by=superuser)
    url = path.format(event=ReviewEvent.objects.order_by("pk").first().pk, job=job.pk)
    before = (ReviewEvent.objects.count(), job.status)
    response = getattr(superuser_api, method)(f"{url}?{UNKNOWN}={PROTOCOL_ID}", {}, format="json")
    assert response.status_code == 400, (app, response.content)
    body = response.json()
    assert UNKNOWN in body or body["errors"][0]["path"] == f"?{UNKNOWN}"
    listed = takes(body, UNKNOWN)
    assert listed == sorted(listed) and ", ".join(listed).startswith(expected), listed
    job.refresh_from_db()
    assert (ReviewEvent.objects.count(), job.status) == before  # refused before anything was done


def test_every_operation_of_the_schema_refuses_an_unknown_parameter_and_lists_what_it_documents(superuser_api):
    """Every endpoint, whatever app it comes from: the parameters a 400 lists are the ones the schema
    documents for it (and DRF's `format`), so the message and the documentation agree."""
    schema = superuser_api.get("/api/v1/schema/?format=json").json()
    failures, operations = [], 0
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            operations += 1
            url = re.sub(r"\{[^}]+\}", "1", path)
            response = getattr(superuser_api, method)(f"{url}?zz_unknown=1", {}, format="json")
            documented = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
            try:
                assert response.status_code == 400, response.status_code
                assert set(takes(response.json(), "zz_unknown")) == documented | {"format"}
            except (AssertionError, KeyError) as failure:
                failures.append(f"{method.upper()} {path}: {failure} {response.content[:300]!r}")
    assert operations > 30 and failures == []


#: Every list filter by a stable id, as (list, filter): each names its record, and a typo is a 400.
ID_FILTERS = {
    ("/api/v1/protocols/", "area"),
    ("/api/v1/protocols/", "context"),
    ("/api/v1/protocols/", "dataset_id"),
    ("/api/v1/datasets/", "suite_id"),
    ("/api/v1/configurations/", "model_id"),
    ("/api/v1/configurations/", "work_id"),
    ("/api/v1/evaluations/", "area"),
    ("/api/v1/evaluations/", "configuration_id"),
    ("/api/v1/evaluations/", "dataset_id"),
    ("/api/v1/evaluations/", "model_id"),
    ("/api/v1/evaluations/", "protocol_id"),
    ("/api/v1/evaluations/", "repeats_id"),
    ("/api/v1/evaluations/", "source_id"),
    ("/api/v1/evaluations/", "task_id"),
    ("/api/v1/evaluations/", "work_id"),
    ("/api/v1/results/", "area"),
    ("/api/v1/results/", "configuration_id"),
    ("/api/v1/results/", "dataset_id"),
    ("/api/v1/results/", "evaluation_id"),
    ("/api/v1/results/", "model_id"),
    ("/api/v1/results/", "protocol_id"),
    ("/api/v1/results/", "reference_configuration_id"),
    ("/api/v1/results/", "task_id"),
    ("/api/v1/results/", "work_id"),
    ("/api/v1/evidence-rows/", "evaluation_id"),
    ("/api/v1/evidence-rows/", "protocol_id"),
    ("/api/v1/baseline-roles/", "protocol_id"),
    ("/api/v1/models/", "work_id"),
    ("/api/v1/task-equivalences/", "task_id"),
    ("/api/v1/agreements/", "model_id"),
    ("/api/v1/agreements/", "task_id"),
    ("/api/v1/review-events/", "record"),
    ("/api/v1/benchmark-jobs/", "recipe"),
}
ID_NAMED = {"area", "context", "record", "recipe"}  # the id filters whose names do not end in _id


def test_every_id_filter_of_every_list_refuses_an_id_that_names_no_record(superuser_api, seeded):
    schema = superuser_api.get("/api/v1/schema/?format=json").json()
    found = {
        (path, parameter["name"])
        for path, methods in schema["paths"].items()
        for parameter in methods.get("get", {}).get("parameters", [])
        if parameter["in"] == "query" and (parameter["name"].endswith("_id") or parameter["name"] in ID_NAMED)
    }
    assert found == ID_FILTERS  # a new id filter joins the table (and this test) when it is added
    for path, name in sorted(found):
        response = superuser_api.get(path, {name: "no-such-record"})
        assert response.status_code == 400, (path, name, response.content)
        assert list(response.json()) == [name], (path, response.content)
        assert "no-such-record" in response.json()[name][0] and "stable id" in response.json()[name][0]


def test_an_id_filter_naming_a_record_filters_by_it_as_before(api, seeded):
    assert len(api.get("/api/v1/evaluations/", {"protocol_id": PROTOCOL_ID}).json()["results"]) == 2
    assert len(api.get("/api/v1/results/", {"evaluation_id": E500}).json()["results"]) == 1
    assert api.get("/api/v1/review-events/", {"record": E500}).json()["results"]
    assert api.get("/api/v1/review-events/", {"record_type": "rumour"}).status_code == 400


@pytest.mark.parametrize(
    ("value", "comparable"),
    [("true", True), ("True", True), ("1", True), ("false", False), ("False", False), ("0", False)],
)
def test_a_boolean_filter_takes_true_and_false_as_clients_spell_them(api, seeded, value, comparable):
    as_spelt = api.get("/api/v1/evaluations/", {"comparable": value})
    assert as_spelt.status_code == 200, as_spelt.content
    canonical = api.get("/api/v1/evaluations/", {"comparable": "true" if comparable else "false"})
    assert as_spelt.json()["results"] == canonical.json()["results"]
    assert len(canonical.json()["results"]) == (0 if comparable else 2)  # the seed's two are excluded


def test_the_schema_documents_each_boolean_parameter_with_the_spellings_it_takes(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    booleans = {
        (path, parameter["name"]): parameter
        for path, methods in schema["paths"].items()
        for operation in methods.values()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query" and parameter["name"] in {"comparable", "is_suite", "dry_run", "background"}
    }
    assert ("/api/v1/evaluations/", "comparable") in booleans and ("/api/v1/imports/", "dry_run") in booleans
    for key, parameter in booleans.items():
        assert parameter["schema"]["type"] == "string", key
        assert sorted(parameter["schema"]["enum"]) == ["0", "1", "False", "True", "false", "true"], key
        assert "true or false (also True/False, 1/0)" in parameter["description"], key


@pytest.mark.parametrize("value", ["True", "1", "true"])
def test_the_import_reads_a_dry_run_as_clients_spell_it(token_client, value):
    from records.seed import seed_document

    response = token_client("curator").post(f"/api/v1/imports/?dry_run={value}", seed_document(), format="json")
    assert response.status_code == 200 and response.json()["dry_run"] is True
    assert not Protocol.objects.exists()


def test_a_refusal_is_json_naming_each_unknown_parameter(api, seeded):
    response = api.get("/api/v1/evaluations/", {"protocol": PROTOCOL_ID, "sort": "title", "comparable": "true"})
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert sorted(response.json()) == ["protocol", "sort"]
    assert "protocol_id" in json.dumps(response.json())  # the one meant is among those listed
