"""The rendered-response cache of API GETs: keyed by the catalogue version and everything the bytes
depend on, so a change is seen at once and no answer is served to a request it does not fit."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records.services import record_save
from tests.factories import EvaluationFactory

pytestmark = pytest.mark.django_db

HIT = 1  # the catalogue version (the X-Portal-Release header is cached by it too)


def counted(api, url, **extra):
    with CaptureQueriesContext(connection) as captured:
        response = api.get(url, **extra)
    assert response.status_code == 200, response.content
    return response, len(captured)


def test_a_change_through_the_services_is_seen_at_once(api, curator):
    evaluation = EvaluationFactory()
    for url in ("/api/v1/evaluations/", f"/api/v1/evaluations/{evaluation.stable_id}/"):
        first, _ = counted(api, url)
        again, queries = counted(api, url)
        assert queries == HIT and again.content == first.content and again["ETag"] == first["ETag"]
    evaluation.title = "A better title"
    record_save(record=evaluation, actor=curator, changed_fields=["title"])
    for url in ("/api/v1/evaluations/", f"/api/v1/evaluations/{evaluation.stable_id}/"):
        response, queries = counted(api, url)
        assert queries > HIT and b"A better title" in response.content


def test_the_same_filters_in_another_order_share_an_entry_and_other_filters_do_not(api):
    EvaluationFactory(measured_by="authors")
    EvaluationFactory(measured_by="portal", reading_method="job_report", source=None)
    counted(api, "/api/v1/evaluations/?measured_by=authors&page_size=5")
    same, queries = counted(api, "/api/v1/evaluations/?page_size=5&measured_by=authors")
    assert queries == HIT and len(same.json()["results"]) == 1
    other, queries = counted(api, "/api/v1/evaluations/?page_size=5&measured_by=portal")
    assert queries > HIT and other.json()["results"][0]["measured_by"] == "portal"
    last_wins, _ = counted(api, "/api/v1/evaluations/?measured_by=authors&measured_by=portal&page_size=5")
    assert last_wins.json()["results"][0]["measured_by"] == "portal"


def test_each_host_gets_its_own_links_and_304s_still_come(api):
    EvaluationFactory(), EvaluationFactory()
    a, _ = counted(api, "/api/v1/evaluations/?page_size=1", HTTP_HOST="localhost")
    b, _ = counted(api, "/api/v1/evaluations/?page_size=1", HTTP_HOST="127.0.0.1")
    assert a.json()["next"].startswith("http://localhost/") and b.json()["next"].startswith("http://127.0.0.1/")
    cached = api.get("/api/v1/evaluations/?page_size=1", HTTP_HOST="localhost", HTTP_IF_NONE_MATCH=a["ETag"])
    assert cached.status_code == 304 and cached["ETag"] == a["ETag"]


def test_the_browsable_api_is_rendered_each_time(api):
    EvaluationFactory()
    counted(api, "/api/v1/evaluations/?format=api")
    _, queries = counted(api, "/api/v1/evaluations/?format=api")
    assert queries > HIT
