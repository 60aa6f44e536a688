"""The lean list path (records.api_rows) and the rendered-response cache answer the same bytes and
headers as the serializer path they replace, on the seed and the real papers' records."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone
from rest_framework.test import APIRequestFactory

from records.api import (
    BaselineRoleViewSet,
    ConfigurationViewSet,
    EvaluationViewSet,
    EvidenceRowViewSet,
    ResultViewSet,
    SourceViewSet,
)
from tests.helpers import load_for_module

pytestmark = pytest.mark.django_db

HEADERS = ("Content-Type", "ETag", "Last-Modified", "Cache-Control", "Vary", "Allow")


def serializer_path(view_class):
    """A lean list's viewset answering through its serializer (the detail's path), uncached."""
    return type(
        f"SerializerPath{view_class.__name__}", (view_class,), {"cached_actions": frozenset(), "lean_list": False}
    )


def answer(view_class, url: str, **headers):
    response = view_class.as_view({"get": "list"})(APIRequestFactory().get(url, **headers))
    if hasattr(response, "render"):
        response.render()
    return response


def same_answer(url: str, view_class=EvaluationViewSet, **headers) -> bytes:
    reference = answer(serializer_path(view_class), url, **headers)
    assert reference.status_code == 200, reference.content
    for attempt in ("built", "cached"):
        lean = answer(view_class, url, **headers)
        assert lean.status_code == 200, (attempt, url)
        assert lean.content == reference.content, (attempt, url)
        assert {h: lean.get(h) for h in HEADERS} == {h: reference.get(h) for h in HEADERS}, (attempt, url)
    return reference.content


@pytest.fixture(scope="module")
def papers(demo_snapshot, module_transaction):
    """The seed and every example paper, put in once for the module's tests (each reads only)."""
    load_for_module(module_transaction, demo=demo_snapshot)


QUERIES = [
    "",
    "page_size=100",
    "page_size=200&ordering=title",
    "ordering=-title&page_size=30",
    "ordering=created_at",
    "ordering=-updated_at",
    "ordering=measured_by&page_size=50",
    "ordering=review_state",
    "ordering=stable_id&page_size=7",
    "comparable=true&page_size=200",
    "comparable=false",
    "review_state=excluded",
    "review_state=source_checked&ordering=-title",
    "measured_by=authors&page_size=200",
    "area=dna-genomes",
    "protocol_id=gfm-guide-20261014-protocol-nt-ia3-finetune-runtime",
    "configuration_id=nt-500m-ia3-dalla-torre-2025",
    "dataset_id=nt-benchmark-revised-18-tasks&page_size=3",
    "protocol_id=gfm-guide-20261014-protocol-nt-ia3-finetune-runtime&comparable=true",  # none: both are excluded
    "format=json&page_size=2",
]


def test_the_lean_list_answers_the_serializer_paths_bytes(papers):
    for query in QUERIES:  # one load of the papers for all of them
        same_answer(f"/api/v1/evaluations/?{query}")
    same_answer("/api/v1/evaluations/?page_size=5", HTTP_ACCEPT="application/json; indent=2")
    with timezone.override("Europe/Berlin"):
        assert b"+01:00" in same_answer("/api/v1/evaluations/?page_size=5&ordering=-title")
    url, pages = "/api/v1/evaluations/?page_size=40&ordering=title", 0
    while url:
        body = json.loads(answer(serializer_path(EvaluationViewSet), url).content)
        same_answer(url)
        url, pages = body["next"], pages + 1
        if pages == 3:  # and back again
            same_answer(body["previous"])
    assert pages > 3


OTHER_LISTS = [
    (
        ResultViewSet,
        "results",
        [
            "",
            "page_size=200&ordering=value",
            "ordering=-value&page_size=60",
            "relation=absolute&page_size=200",
            "comparable=true&ordering=-updated_at",
            "protocol_id=gfm-guide-20261014-protocol-nt-ia3-finetune-runtime",
        ],
    ),
    (SourceViewSet, "sources", ["", "ordering=published_date", "ordering=-title&page_size=3", "kind=paper"]),
    (
        ConfigurationViewSet,
        "configurations",
        ["", "ordering=parameter_count&page_size=200", "ordering=-name&page_size=9"],
    ),
    (EvidenceRowViewSet, "evidence-rows", ["", "comparable=true", "comparable=false&page_size=2"]),
    (BaselineRoleViewSet, "baseline-roles", ["", "kind=null_control", "review_state=proposed"]),
]


def test_the_other_lean_lists_answer_their_serializers_bytes(papers):
    for view_class, path, queries in OTHER_LISTS:
        for query in queries:
            same_answer(f"/api/v1/{path}/?{query}", view_class)
    url, pages = "/api/v1/results/?page_size=150&ordering=value", 0  # a crawl whose cursor is a number
    while url:
        same_answer(url, ResultViewSet)
        url, pages = json.loads(answer(serializer_path(ResultViewSet), url).content)["next"], pages + 1
    assert pages > 3
