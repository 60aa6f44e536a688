"""The OpenAPI schema validates itself, and the live API keeps to it under schemathesis' generated requests."""

from __future__ import annotations

from io import StringIO

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

pytestmark = [pytest.mark.django_db, pytest.mark.backend_independent]

EXAMPLES_PER_OPERATION = 12


def test_the_schema_passes_its_own_validation_without_warnings():
    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", stdout=out)
    assert '"openapi": "3.' in out.getvalue()


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
    yield schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", get_wsgi_application())
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


generated = settings(
    max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


def exercise(schema, headers: dict[str, str]) -> list[str]:
    """Run schemathesis' generated cases against every operation; return the failures, named.

    Every check runs but "schema-valid data is accepted": an opaque cursor or a stable id that names
    no record is schema-valid text, and the right answer to it is a 400 or 404 naming the problem.
    """
    failures = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20
    for operation in operations:

        @generated
        @given(case=operation.as_strategy())
        def check(case):
            response = case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])
            assert response.status_code < 500

        try:
            check()
        except Exception as failure:  # collect every operation's failure, not just the first
            failures.append(f"{operation.method.upper()} {operation.path}: {str(failure)[:600]}")
    return failures


def test_the_api_answers_anonymous_requests_without_5xx_and_as_documented(api_schema):
    assert exercise(api_schema, headers={}) == []


def test_the_api_answers_a_curators_requests_without_5xx_and_as_documented(api_schema, curator_token):
    assert exercise(api_schema, headers={"Authorization": f"Token {curator_token}"}) == []


@pytest.fixture
def curator_token(curator):
    from rest_framework.authtoken.models import Token

    return Token.objects.get_or_create(user=curator)[0].key
