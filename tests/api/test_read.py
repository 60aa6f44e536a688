"""Reading the catalogue through the API: shapes, filters, ordering, pagination, conditional GET, query counts."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from common.versions import version_bump
from records.models import Area, Evaluation
from records.seed import PROTOCOL_ID, SUITE_ID
from records.services import record_save
from reviews.services import review_transition_apply
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    ProtocolFactory,
    ResultFactory,
    SourceFactory,
)
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

E500 = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"


def test_it_serves_the_seed_evaluation_with_results_review_state_concern_locator_and_quote(api, seeded):
    body = api.get(f"/api/v1/evaluations/{E500}/").json()
    assert body["evaluation_id"] == E500 and body["protocol_id"] == PROTOCOL_ID
    assert body["configuration_id"] == "nt-500m-ia3-dalla-torre-2025" and body["dataset_id"] == SUITE_ID
    assert (body["measured_by"], body["reading_method"], body["review_state"], body["comparable"]) == (
        "authors",
        "text",
        "excluded",
        False,
    )
    assert body["concern"].startswith("Fine-tuning time conflicts within the article.")
    assert body["source_locator"] == "Methods, 'Data preparation > Hardware', paragraph 1"
    assert body["quote"].startswith("On average, a fine-tuning run lasted 20 min")
    assert body["results"] == [
        {
            "result_id": f"{E500}-runtime",
            "value": "20",
            "unit": "minute",
            "printed_value": "20 min",
            "uncertainty_kind": "",
            "uncertainty_value": None,
            "lower_bound": None,
            "upper_bound": None,
            "uncertainty_level": None,
            "num_runs": None,
            "relation": "absolute",
            "quote_mismatch_reason": "",
            "reference_configuration_id": None,
        }
    ]


@pytest.mark.parametrize(
    "path, keys",
    [
        (
            f"/api/v1/protocols/{PROTOCOL_ID}/",
            {
                "protocol_id",
                "metric_unit",
                "metric_direction",
                "limitations",
                "baseline_roles",
                "areas",
                "contexts",
                "dataset_ids",
                "review_state",
                "comparable",
            },
        ),
        (f"/api/v1/datasets/{SUITE_ID}/", {"dataset_id", "tasks", "metric", "source_id"}),
        (
            "/api/v1/configurations/nt-500m-ia3-dalla-torre-2025/",
            {"configuration_id", "name", "parameter_count", "method"},
        ),
        (
            "/api/v1/sources/dalla-torre-2025-nature-methods-nucleotide-transformer/",
            {"source_id", "title", "pmcid", "published_date"},
        ),
        (f"/api/v1/results/{E500}-runtime/", {"result_id", "evaluation_id", "value", "unit", "printed_value"}),
        (
            f"/api/v1/baseline-roles/{PROTOCOL_ID}-null-control/",
            {"baseline_role_id", "protocol_id", "kind", "status", "selection_rule", "review_state"},
        ),
        (
            "/api/v1/decisions/select-execution-workflow-large-scale-diagnostic-genomics/",
            {"decision_id", "title", "protocol_ids"},
        ),
    ],
)
def test_it_serves_every_record_type_by_stable_id(api, seeded, path, keys):
    response = api.get(path)
    assert response.status_code == 200
    assert keys <= set(response.json())


def test_it_serves_the_protocol_with_its_limitations_in_order_and_the_suite_with_its_18_tasks(api, seeded):
    protocol = api.get(f"/api/v1/protocols/{PROTOCOL_ID}/").json()
    assert protocol["limitations"][0].startswith("Developer-reported average")
    assert [role["kind"] for role in protocol["baseline_roles"]] == ["conventional_reference", "null_control"]
    tasks = api.get(f"/api/v1/datasets/{SUITE_ID}/").json()["tasks"]
    assert len(tasks) == 18 and tasks[5]["task_key"] == "splice_sites_all" and tasks[5]["sequence_length_bp"] == 600


def test_it_serves_a_records_review_events_oldest_first(api, seeded):
    events = api.get(f"/api/v1/evaluations/{E500}/events/").json()["results"]
    assert [e["transition"] for e in events] == ["check_source", "exclude"]
    assert all(e["actor_role"] == "portal" for e in events)
    assert api.get("/api/v1/review-events/", {"record": E500}).json()["results"][0]["transition"] == "exclude"


def ids(response, key="evaluation_id") -> list[str]:
    assert response.status_code == 200, response.content
    return [row[key] for row in response.json()["results"]]


def test_it_filters_evaluations_by_every_documented_field(api):
    source = SourceFactory()
    protocol = ProtocolFactory(source=source)
    protocol.areas.add(Area.objects.create(stable_id="dna-genomes", label="DNA"))
    other = ProtocolFactory(source=source)
    config, dataset = ConfigurationFactory(), DatasetFactory()
    a = EvaluationFactory(protocol=protocol, configuration=config, dataset=dataset, measured_by="authors")
    b = EvaluationFactory(protocol=protocol, measured_by="third_party", measured_by_name="Someone et al. 2024")
    c = EvaluationFactory(
        protocol=other, configuration=config, measured_by="portal", reading_method="job_report", source=None
    )
    apply_transitions(a, "check_source")
    apply_transitions(b, "check_source", "exclude")
    url = "/api/v1/evaluations/"
    assert set(ids(api.get(url, {"protocol_id": protocol.stable_id}))) == {a.stable_id, b.stable_id}
    assert set(ids(api.get(url, {"configuration_id": config.stable_id}))) == {a.stable_id, c.stable_id}
    assert ids(api.get(url, {"dataset_id": dataset.stable_id})) == [a.stable_id]
    assert ids(api.get(url, {"measured_by": "portal"})) == [c.stable_id]
    assert ids(api.get(url, {"review_state": "excluded"})) == [b.stable_id]
    assert set(ids(api.get(url, {"area": "dna-genomes"}))) == {a.stable_id, b.stable_id}
    assert ids(api.get(url, {"comparable": "true"})) == [a.stable_id]
    assert set(ids(api.get(url, {"comparable": "false"}))) == {b.stable_id, c.stable_id}
    assert ids(api.get(url, {"protocol_id": protocol.stable_id, "comparable": "true"})) == [a.stable_id]
    bad = api.get(url, {"measured_by": "rumour"})
    assert bad.status_code == 400 and "measured_by" in bad.json()


def test_it_orders_by_the_requested_field(api):
    evaluations = [EvaluationFactory(title=title) for title in ("Beta", "Alpha", "Gamma")]
    assert [e["title"] for e in api.get("/api/v1/evaluations/", {"ordering": "title"}).json()["results"]] == [
        "Alpha",
        "Beta",
        "Gamma",
    ]
    assert [e["title"] for e in api.get("/api/v1/evaluations/", {"ordering": "-title"}).json()["results"]] == [
        "Gamma",
        "Beta",
        "Alpha",
    ]
    assert len(evaluations) == 3


def test_it_pages_with_cursors_and_caps_the_page_size(api):
    for _ in range(7):
        ResultFactory()
    first = api.get("/api/v1/results/", {"page_size": 3}).json()
    assert len(first["results"]) == 3 and first["next"]
    second = api.get(first["next"]).json()
    third = api.get(second["next"]).json()
    seen = [r["result_id"] for page in (first, second, third) for r in page["results"]]
    assert len(seen) == 7 == len(set(seen)) and third["next"] is None
    assert len(api.get("/api/v1/results/", {"page_size": 100000}).json()["results"]) == 7


def test_it_answers_304_when_the_etag_still_matches_and_200_after_a_change(api, curator):
    evaluation = EvaluationFactory()
    url = f"/api/v1/evaluations/{evaluation.stable_id}/"
    first = api.get(url)
    assert first["ETag"] and first["Last-Modified"]
    assert api.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert api.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    listing = api.get("/api/v1/evaluations/")
    assert api.get("/api/v1/evaluations/", HTTP_IF_NONE_MATCH=listing["ETag"]).status_code == 304
    review_transition_apply(record=evaluation, transition="check_source", actor=curator)
    changed = api.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed.json()["review_state"] == "source_checked"
    assert api.get("/api/v1/evaluations/", HTTP_IF_NONE_MATCH=listing["ETag"]).status_code == 200


def test_a_list_moves_its_last_modified_on_when_a_row_leaves_its_filter(api, curator):
    kept, leaving = EvaluationFactory(), EvaluationFactory()
    Evaluation.objects.update(updated_at=datetime(2026, 1, 1, tzinfo=UTC))  # HTTP dates count whole seconds
    url = "/api/v1/evaluations/?review_state=proposed"
    first = api.get(url)
    review_transition_apply(record=leaving, transition="check_source", actor=curator)
    later = api.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert later.status_code == 200, "a stale 304 would keep the departed row in the client's copy"
    assert [row["evaluation_id"] for row in later.json()["results"]] == [kept.stable_id]


def test_a_record_edited_during_a_crawl_keeps_its_place_in_the_pages(api, curator):
    made = [EvaluationFactory() for _ in range(4)]
    first = api.get("/api/v1/evaluations/", {"page_size": 2}).json()
    last = made[0]  # the oldest, on the second page
    last.title = "Edited while the client was on page one"
    record_save(record=last, actor=curator, changed_fields=["title"])
    second = api.get(first["next"]).json()
    seen = [row["evaluation_id"] for page in (first, second) for row in page["results"]]
    assert sorted(seen) == sorted(e.stable_id for e in made)


def test_it_names_the_latest_published_release_in_a_header(api, seeded):
    assert api.get("/api/v1/protocols/")["X-Portal-Release"] == "2026-10-22-1b7cf027e4f6"


@pytest.mark.parametrize(
    "path, make",
    [
        (
            "/api/v1/evaluations/",
            lambda i, ctx: (
                ResultFactory(evaluation__protocol=ctx["protocol"], evaluation__configuration=ctx["config"]).evaluation
            ),
        ),
        ("/api/v1/results/", lambda i, ctx: ResultFactory(evaluation=ctx["evaluation"], value=Decimal(i))),
        ("/api/v1/protocols/", lambda i, ctx: ProtocolFactory(source=ctx["source"])),
        ("/api/v1/datasets/", lambda i, ctx: DatasetFactory(suite=ctx["suite"], task_key=f"t{i}")),
        ("/api/v1/configurations/", lambda i, ctx: ConfigurationFactory(source=ctx["source"])),
        ("/api/v1/sources/", lambda i, ctx: SourceFactory()),
        (
            "/api/v1/review-events/",
            lambda i, ctx: apply_transitions(EvaluationFactory(protocol=ctx["protocol"]), "check_source"),
        ),
    ],
)
def test_it_runs_a_constant_number_of_queries_per_list_page(api, path, make):
    source = SourceFactory()
    protocol = ProtocolFactory(source=source)
    ctx = {
        "source": source,
        "protocol": protocol,
        "config": ConfigurationFactory(),
        "suite": DatasetFactory(),
        "evaluation": EvaluationFactory(protocol=protocol),
    }

    made = []

    def queries(count: int) -> tuple[int, int]:
        for i in range(len(made), len(made) + count):
            made.append(make(i, ctx))
        with transaction.atomic():
            version_bump()  # the factories write past the services, which would have moved it
        counts, bodies = [], []
        for _ in ("built", "from the rendered-response cache"):
            with CaptureQueriesContext(connection) as captured:
                response = api.get(path, {"page_size": 200})
            assert response.status_code == 200
            counts.append(len(captured))
            bodies.append(response.content)
        assert bodies[0] == bodies[1]
        return counts[0], counts[1]

    small = queries(5)
    large = queries(195)
    assert small == large
    if path != "/api/v1/review-events/":  # the review log (reviews.api) is built each time
        assert small[1] == 1, "a cached answer reads the catalogue version only (the release header is cached by it)"
