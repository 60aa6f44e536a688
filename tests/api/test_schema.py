"""The OpenAPI schema validates itself, and the live API keeps to it under schemathesis' generated requests."""

from __future__ import annotations

from io import StringIO

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

# Generated requests answer the same on both backends: CI runs them once, the anonymous run in the
# embedded pass and the curator's in the PostgreSQL pass (each run takes about half a minute: one a pass balances them).
pytestmark = [pytest.mark.django_db, pytest.mark.backend_independent]

EXAMPLES_PER_OPERATION = 6
# A schema-violating request must get one of these. Schemathesis' own list, and 413: a string far past
# its maxLength can make the body larger than the API takes (32 KB, documented where it applies), and
# that refusal had been reported as "schema-violating request accepted" (POST /api/v1/corrections/).
REJECTIONS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
CONFIG = SchemathesisConfig.from_dict({"checks": {"negative_data_rejection": {"expected-statuses": REJECTIONS}}})


@pytest.mark.embedded_pass
def test_the_schema_passes_its_own_validation_without_warnings():
    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", stdout=out)
    assert '"openapi": "3.' in out.getvalue()


@pytest.mark.embedded_pass
def test_the_schema_describes_auth_and_errors(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "429" in operation["responses"], (method, path)
            if method in {"post", "put", "patch"}:
                assert {"400", "401", "403"} <= set(operation["responses"]), (method, path)
    assert client.get("/api/v1/docs/").status_code == 200


@pytest.fixture
def api_schema(seeded, monkeypatch):
    from django.core.wsgi import get_wsgi_application
    from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

    # Thousands of generated requests in a few seconds: the read throttles have their own test.
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "100000/minute"})
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "100000/minute"})
    # As Django's test client does: requests must not close the test's connection (and transaction).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", get_wsgi_application(), config=CONFIG)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


generated = settings(
    max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


def exercise(schema, headers: dict[str, str], real_ids: dict[str, str]) -> list[str]:
    """Run schemathesis' generated cases against every operation; return the failures, named.

    Each operation gets schema-valid requests and schema-violating ones (negative mode: a missing
    required field, a wrong type, a value outside an enum must get a 4xx), and an operation on one
    record (`{evaluation_id}`, `{release_id}`, `{id}`: named as the record's id field) gets them both for a stable id that names no record and
    for one that does, so the shapes of real answers are checked too. Every check runs but
    "schema-valid data is accepted": a stable id or a reference that names no record, an opaque
    cursor, a result in another unit are schema-valid, and the right answer to them is a 400 or 404
    naming the problem.
    """
    failures = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20
    for operation in operations:
        parameters = [part[1:-1] for part in operation.path.split("/") if part.startswith("{")][:1]
        real = real_ids.get(operation.path.split("/")[3]) if parameters else None
        variants = [{}] + ([{parameters[0]: real}] if real else [])
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            for path_parameters in variants:

                @generated
                @given(case=operation.as_strategy(generation_mode=mode, path_parameters=path_parameters or None))
                def check(case):
                    try:
                        response = case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])
                    except (Exception, BaseExceptionGroup) as failure:
                        failure.add_note(f"request body: {case.body!r:.1500}")  # what to reproduce it with
                        raise
                    assert response.status_code < 500

                try:
                    check()
                except Unsatisfiable:
                    pass  # negative mode on a request with nothing to get wrong (a GET of one record)
                except (Exception, BaseExceptionGroup) as failure:  # every operation's failure, not just the first
                    label = f"{operation.method.upper()} {operation.path} {mode.value} {path_parameters or ''}"
                    failures.append(f"{label}: {failure_text(failure)[:4000]}")
    return failures


def failure_text(failure: BaseException) -> str:
    notes = " ".join(getattr(failure, "__notes__", []))
    if isinstance(failure, BaseExceptionGroup):
        return " | ".join([*(failure_text(inner) for inner in failure.exceptions), notes])
    return " ".join(f"{failure} {notes}".split())


@pytest.fixture
def real_ids(seeded):
    """One existing record per endpoint of records, by the path segment that names its type."""
    from records.models import (
        BaselineRole,
        Configuration,
        Dataset,
        Decision,
        Evaluation,
        EvidenceRow,
        GenomicModel,
        Protocol,
        Result,
        Source,
        Work,
    )
    from releases.models import Release
    from reviews.models import ReviewEvent

    models = {
        "sources": Source,
        "datasets": Dataset,
        "configurations": Configuration,
        "protocols": Protocol,
        "evaluations": Evaluation,
        "results": Result,
        "evidence-rows": EvidenceRow,
        "baseline-roles": BaselineRole,
        "decisions": Decision,
        "works": Work,
        "models": GenomicModel,
    }
    from tests.factories import GenomicModelFactory

    GenomicModelFactory(introduced_in=Work.objects.first())  # the seed names no model
    ids = {
        segment: model.objects.order_by("pk").values_list("stable_id", flat=True).first()
        for segment, model in models.items()
    }
    ids["releases"] = Release.objects.values_list("release_id", flat=True).first()
    ids["review-events"] = str(ReviewEvent.objects.values_list("pk", flat=True).first())
    assert sum(1 for value in ids.values() if value) >= 9, ids
    return {segment: value for segment, value in ids.items() if value}


@pytest.mark.embedded_pass
def test_the_api_answers_anonymous_requests_without_5xx_and_as_documented(api_schema, real_ids):
    failures = exercise(api_schema, headers={}, real_ids=real_ids)
    assert not failures, "\n\n".join(failures)


def test_the_api_answers_a_curators_requests_without_5xx_and_as_documented(api_schema, real_ids, curator_token):
    failures = exercise(api_schema, headers={"Authorization": f"Token {curator_token}"}, real_ids=real_ids)
    assert not failures, "\n\n".join(failures)


@pytest.fixture
def curator_token(curator):
    from portal.tokens import api_token_create

    return api_token_create(user=curator, replace=True)


@pytest.mark.embedded_pass
def test_the_schema_gives_generated_clients_what_they_need(client):
    """A summary per operation; no credentials declared where anyone may call (openapi-python-client
    reads any security entry as "token required"); path ids named as the answer's id field; values as
    the strings they are sent as; the cursors alone on every page."""
    schema = client.get("/api/v1/schema/?format=json").json()
    summaries = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            summaries.append(operation.get("summary"))
            assert operation["summary"] and operation.get("description"), (method, path)
            assert {} not in operation["security"], (method, path)
    assert len(set(summaries)) == len(summaries)
    paths = schema["paths"]
    assert paths["/api/v1/evaluations/"]["get"]["security"] == []
    assert paths["/api/v1/corrections/"]["post"]["security"] == []
    assert paths["/api/v1/evaluations/"]["post"]["security"] == [{"tokenAuth": []}, {"cookieAuth": []}]
    assert paths["/api/v1/benchmark-jobs/"]["get"]["security"]  # operators only
    assert [p["name"] for p in paths["/api/v1/evaluations/{evaluation_id}/"]["get"]["parameters"]] == ["evaluation_id"]
    assert "/api/v1/releases/{release_id}/" in paths and "/api/v1/protocols/{protocol_id}/transitions/" in paths
    components = schema["components"]["schemas"]
    assert components["Result"]["properties"]["value"]["type"] == "string"
    assert {"type": "number"} in components["ResultRequest"]["properties"]["value"]["oneOf"]  # written either way
    page = components["PaginatedEvaluationList"]
    assert {"next", "previous", "next_cursor", "previous_cursor", "results"} == set(page["required"])
    assert set(components["Evaluation"]["required"]) == set(components["Evaluation"]["properties"])
