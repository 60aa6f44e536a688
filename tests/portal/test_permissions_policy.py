"""A restrictive Permissions-Policy on every answer: pages, API answers, static files, errors, refusals."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

DENIED = ("camera=()", "microphone=()", "geolocation=()", "payment=()", "usb=()", "browsing-topics=()")


def assert_restrictive(response) -> None:
    policy = response["Permissions-Policy"]
    directives = [directive.strip() for directive in policy.split(",")]
    assert all(denied in directives for denied in DENIED), policy
    assert "interest-cohort" not in policy  # FLoC's name, gone from browsers: browsing-topics replaced it


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/coverage/", 200),
        ("get", "/api/v1/protocols/", 200),
        ("get", "/static/favicon.svg", 200),
        ("get", "/healthz", 200),
        ("get", "/no-such-page/", 404),
        ("get", "/api/v1/no-such-thing/", 404),
        ("post", "/api/v1/protocols/", 401),
    ],
)
def test_every_answer_carries_a_restrictive_permissions_policy(client, method, path, status):
    response = getattr(client, method)(path)
    assert response.status_code == status
    assert_restrictive(response)


def test_a_refused_body_and_a_server_error_carry_it_too(client, monkeypatch):
    too_large = client.post("/corrections/new/", data=b"x", content_type="text/plain", CONTENT_LENGTH="99999999")
    assert too_large.status_code == 413
    assert_restrictive(too_large)

    from pages import views

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(views.coverage_matrix, "coverage_matrix", broken)
    client.raise_request_exception = False
    failed = client.get("/coverage/")
    assert failed.status_code == 500
    assert_restrictive(failed)
