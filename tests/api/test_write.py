"""Writing through the API as a curator: roles, auth, transitions with the admin's audit, errors as JSON."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from records.models import Configuration, Protocol
from records.seed import PROTOCOL_ID
from reviews.models import ReviewEvent
from tests.factories import EvaluationFactory, ProtocolFactory, SourceFactory

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "curator", "release_manager", "benchmark_operator", "superuser"]
WRITERS = {"curator", "superuser"}


def new_configuration(stable_id: str = "config-new") -> dict:
    return {"configuration_id": stable_id, "name": "A new model", "family": "Test", "parameter_count": 1000}


@pytest.mark.parametrize("role", ROLES)
def test_it_lets_only_curators_and_superusers_create_and_update(token_client, role):
    client = token_client(role)
    created = client.post("/api/v1/configurations/", new_configuration(), format="json")
    if role in WRITERS:
        assert created.status_code == 201, created.content
        updated = client.patch("/api/v1/configurations/config-new/", {"name": "Renamed"}, format="json")
        assert updated.status_code == 200 and updated.json()["name"] == "Renamed"
    else:
        assert created.status_code == (401 if role == "anonymous" else 403)
        assert "detail" in created.json()
        assert not Configuration.objects.exists()


def test_it_answers_a_unit_its_results_do_not_use_with_400_naming_the_field(token_client, seeded):
    response = token_client("curator").patch(
        f"/api/v1/protocols/{PROTOCOL_ID}/", {"metric_unit": "hour"}, format="json"
    )
    assert response.status_code == 400
    assert "metric_unit" in response.json()
    assert Protocol.objects.get(stable_id=PROTOCOL_ID).metric_unit == "minute"


def test_it_writes_history_under_the_token_user(token_client):
    client = token_client("curator")
    client.post("/api/v1/configurations/", new_configuration(), format="json")
    record = Configuration.objects.get(stable_id="config-new")
    assert record.history.first().history_user.groups.filter(name="Curators").exists()
    assert record.history.first().history_change_reason == "API"


def test_it_refuses_a_session_write_without_the_csrf_token(make_user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(make_user("curator"))
    response = client.post("/api/v1/configurations/", new_configuration(), format="json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]
    assert client.get("/api/v1/configurations/").status_code == 200


def test_it_names_the_bad_field_and_refuses_to_change_a_stable_id(token_client):
    client = token_client("curator")
    response = client.post("/api/v1/configurations/", {**new_configuration(), "parameter_count": -5}, format="json")
    assert response.status_code == 400 and "parameter_count" in response.json()
    client.post("/api/v1/configurations/", new_configuration(), format="json")
    duplicate = client.post("/api/v1/configurations/", new_configuration(), format="json")
    assert duplicate.status_code == 400 and "configuration_id" in duplicate.json()
    renamed = client.patch("/api/v1/configurations/config-new/", {"configuration_id": "other-id"}, format="json")
    assert renamed.status_code == 400 and "configuration_id" in renamed.json()
    assert Configuration.objects.filter(stable_id="config-new").exists()


def test_it_refuses_a_result_in_another_unit_naming_the_unit(token_client):
    evaluation = EvaluationFactory(protocol__metric_unit="minute")
    response = token_client("curator").post(
        "/api/v1/results/",
        {
            "result_id": "r1",
            "evaluation_id": evaluation.stable_id,
            "value": "3",
            "unit": "hour",
            "printed_value": "3 h",
        },
        format="json",
    )
    assert response.status_code == 400 and "unit" in response.json()


def test_it_creates_a_protocol_with_limitations_and_references(token_client):
    source = SourceFactory(stable_id="paper-x")
    body = {
        "protocol_id": "protocol-x",
        "title": "A protocol",
        "summary": "What it measures.",
        "metric_name": "MCC",
        "metric_short_name": "mcc",
        "metric_unit": "MCC",
        "metric_direction": "higher",
        "source_id": "paper-x",
        "limitations": ["First.", "Second."],
    }
    response = token_client("curator").post("/api/v1/protocols/", body, format="json")
    assert response.status_code == 201, response.content
    protocol = Protocol.objects.get(stable_id="protocol-x")
    assert [limitation.text for limitation in protocol.limitations.all()] == ["First.", "Second."]
    assert protocol.source == source and protocol.review_state == "proposed"


def audit_of(evaluation) -> list[tuple]:
    events = ReviewEvent.objects.filter(object_id=evaluation.pk, record_stable_id=evaluation.stable_id).order_by("id")
    history = evaluation.history.order_by("history_id")[1:]
    return [(e.transition, e.from_state, e.to_state, e.reason, e.actor.username, e.actor_role) for e in events] + [
        (h.history_user.username, h.history_change_reason, h.review_state) for h in history
    ]


def test_a_transition_through_the_api_writes_the_same_event_and_history_as_through_the_admin(client, make_user):
    curator = make_user("curator", "same-curator")
    through_admin, through_api = EvaluationFactory(), EvaluationFactory()
    client.force_login(curator)
    for name, reason in (("check_source", ""), ("exclude", "Numbers conflict.")):
        client.post(
            reverse("admin:records_evaluation_transition", args=[through_admin.pk]),
            {"transition": name, "reason": reason},
        )
    api = APIClient()
    api.force_authenticate(curator)
    for name, reason in (("check_source", ""), ("exclude", "Numbers conflict.")):
        response = api.post(
            f"/api/v1/evaluations/{through_api.stable_id}/transitions/",
            {"transition": name, "reason": reason},
            format="json",
        )
        assert response.status_code == 200, response.content
    assert response.json()["review_state"] == "excluded" and response.json()["event"]["reason"] == "Numbers conflict."
    assert audit_of(through_admin) == audit_of(through_api)
    assert len(audit_of(through_api)) == 4


def test_the_transition_endpoint_answers_409_403_and_400_as_documented(token_client):
    evaluation = EvaluationFactory()
    url = f"/api/v1/evaluations/{evaluation.stable_id}/transitions/"
    curator = token_client("curator")
    assert [t["name"] for t in curator.get(url).json()] == ["check_source", "refuse"]
    assert (
        curator.post(url, {"transition": "check_source", "expected_state": "proposed"}, format="json").status_code
        == 200
    )
    conflict = curator.post(url, {"transition": "check_source", "expected_state": "proposed"}, format="json")
    assert conflict.status_code == 409 and "changed meanwhile" in conflict.json()["detail"]
    assert curator.post(url, {"transition": "check_source"}, format="json").status_code == 409
    missing = curator.post(url, {"transition": "exclude"}, format="json")
    assert missing.status_code == 400 and missing.json()["field"] == "reason"
    unknown = curator.post(url, {"transition": "approve"}, format="json")
    assert unknown.status_code == 400 and unknown.json()["field"] == "transition" and unknown.json()["detail"]
    forbidden = token_client("release_manager").post(url, {"transition": "exclude", "reason": "x"}, format="json")
    assert forbidden.status_code == 403
    assert (
        token_client("anonymous").post(url, {"transition": "exclude", "reason": "x"}, format="json").status_code == 401
    )
    assert ReviewEvent.objects.count() == 1


def test_every_error_is_a_json_body_naming_the_reason(api, token_client):
    ProtocolFactory(stable_id="p1")
    assert api.get("/api/v1/no-such-endpoint/").json()["detail"]
    assert api.get("/api/v1/protocols/no-such-protocol/").status_code == 404
    assert api.delete("/api/v1/protocols/p1/").status_code in (401, 405)
    curator = token_client("curator")
    not_allowed = curator.delete("/api/v1/protocols/p1/")
    assert not_allowed.status_code == 405 and "detail" in not_allowed.json()
    broken = curator.post("/api/v1/configurations/", "{not json", content_type="application/json")
    assert broken.status_code == 400 and "JSON parse error" in broken.json()["detail"]
    huge = curator.post(
        "/api/v1/configurations/", json.dumps({"name": "x" * 3_000_000}), content_type="application/json"
    )
    assert huge.status_code == 413 and "too large" in huge.json()["detail"]


def test_it_throttles_anonymous_reads_more_than_token_reads(api, token_client, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "5/minute"})
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "50/minute"})
    statuses = [api.get("/api/v1/sources/").status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    limited = api.get("/api/v1/sources/")
    assert int(limited["Retry-After"]) > 0 and "throttled" in limited.json()["detail"].lower()
    curator = token_client("curator")
    assert all(curator.get("/api/v1/sources/").status_code == 200 for _ in range(10))
