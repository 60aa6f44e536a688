"""Models, works and their versions, task equivalences and agreement verdicts through the API, and the
identity filters and fields of the evaluation, result, configuration and source lists."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.api import RESPONSE_CACHE
from records.models import GenomicModel, ModelAlias, TaskEquivalence
from tests.api.identity_world import (
    bump,
    ids,
    measured,
    model,
    work,
)
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    SourceFactory,
)

pytestmark = pytest.mark.django_db

# -- models -----------------------------------------------------------------------------------------


def test_it_serves_a_model_with_its_work_aliases_configurations_and_page(api, world):
    nt_500m = world["models"][0]
    body = api.get("/api/v1/models/nt-500m/").json()
    configurations = sorted(nt_500m.configurations.values_list("stable_id", flat=True))
    assert len(configurations) == 3
    assert {key: value for key, value in body.items() if key not in ("created_at", "updated_at")} == {
        "model_id": "nt-500m",
        "name": "NT 500M",
        "family": "Nucleotide Transformer",
        "parameter_count": 500_000_000,
        "public_id": "InstaDeepAI/nt-500m",
        "revision": "main",
        "description": "",
        "introduced_in_id": "nt-work",
        "merged_into_id": None,
        "aliases": [
            {
                "alias": "NT (500M)",
                "source_id": None,
                "locator": "",
                "basis": "inferred",
                "quote": "",
                "reason": "A curator reads it as the same checkpoint.",
                "review_state": "proposed",
            },
            {
                "alias": "NT-500M",
                "source_id": "nt-journal",
                "locator": "Table 1",
                "basis": "stated",
                "quote": "",
                "reason": "",
                "review_state": "proposed",
            },
        ],
        "configuration_ids": configurations,
        "page_url": "http://testserver" + nt_500m.get_absolute_url(),
    }
    assert body["page_url"].endswith("/models/nt-500m/")
    assert api.get("/api/v1/models/old-name/").json()["merged_into_id"] == "nt-500m"
    assert api.get("/api/v1/models/no-such-model/").status_code == 404


def test_it_filters_models_by_family_and_by_the_work_that_introduced_them(api, world):
    assert ids(api.get("/api/v1/models/", {"family": "Nucleotide Transformer"}).json(), "model_id") == {"nt-500m"}
    assert ids(api.get("/api/v1/models/", {"work_id": "nt-work"}).json(), "model_id") == {"nt-500m"}
    assert ids(api.get("/api/v1/models/", {"work_id": "bench-work"}).json(), "model_id") == set()
    assert len(api.get("/api/v1/models/").json()["results"]) == 6


def test_it_answers_a_models_etag_and_last_modified_and_a_304_for_a_current_copy(api, world):
    first = api.get("/api/v1/models/nt-500m/")
    assert first["ETag"] and first["Last-Modified"]
    assert api.get("/api/v1/models/nt-500m/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    listed = api.get("/api/v1/models/")
    assert api.get("/api/v1/models/", HTTP_IF_NONE_MATCH=listed["ETag"]).status_code == 304


def test_it_refuses_to_write_a_model_through_the_read_only_endpoint(token_client, world):
    response = token_client("curator").post("/api/v1/models/", {"model_id": "new", "name": "New"}, format="json")
    assert response.status_code == 405
    assert not GenomicModel.objects.filter(stable_id="new").exists()


# -- works ------------------------------------------------------------------------------------------


def test_it_serves_a_work_with_its_versions_and_their_identifiers(api, world):
    body = api.get("/api/v1/works/nt-work/").json()
    assert (body["work_id"], body["title"], body["authors_short"]) == (
        "nt-work",
        "The Nucleotide Transformer",
        "Dalla-Torre et al. 2025",
    )
    versions = {version["source_id"]: version for version in body["versions"]}
    assert set(versions) == {"nt-preprint", "nt-journal"}
    assert (versions["nt-preprint"]["arxiv_id"], versions["nt-preprint"]["arxiv_version"]) == ("2306.15006", "v2")
    assert versions["nt-journal"]["doi"] == "10.1038/s41592-024-02523-z"
    assert {"url", "commit", "kind", "title"} <= set(versions["nt-journal"])
    assert body["page_url"] == "http://testserver" + world["works"][0].get_absolute_url()


@pytest.mark.parametrize(
    ("identifier", "found"),
    [
        ("10.1038/s41592-024-02523-z", "nt-work"),
        ("https://doi.org/10.1038/S41592-024-02523-Z", "nt-work"),
        ("2306.15006v2", "nt-work"),
        ("2306.15006", "nt-work"),
        ("https://arxiv.org/abs/2306.15006v1", "nt-work"),
        ("https://github.com/example/bench", "bench-work"),
        ("10.1000/not-catalogued", None),
        ("https://example.org/nothing", None),
    ],
)
def test_it_finds_a_work_by_any_versions_doi_arxiv_id_or_url(api, world, identifier, found):
    response = api.get("/api/v1/works/", {"identifier": identifier})
    assert response.status_code == 200
    assert ids(response.json(), "work_id") == ({found} if found else set())


# -- task equivalences ------------------------------------------------------------------------------


def test_it_serves_task_equivalences_filtered_by_a_task_on_either_side(api, world):
    expected = {
        "equivalence_id": "promoter-a-is-promoter-b",
        "task_id": "promoter-a",
        "same_as_id": "promoter-b",
        "source_id": "bench-repo",
        "locator": "README, 'Datasets'",
        "quote": "The promoter task is the same data as suite B's.",
    }
    for task in ("promoter-a", "promoter-b"):
        rows = api.get("/api/v1/task-equivalences/", {"task_id": task}).json()["results"]
        assert [{k: v for k, v in row.items() if k in expected} for row in rows] == [expected]
    assert api.get("/api/v1/task-equivalences/", {"task_id": "enhancer-a"}).json()["results"] == []
    detail = api.get("/api/v1/task-equivalences/promoter-a-is-promoter-b/").json()
    assert {k: v for k, v in detail.items() if k in expected} == expected


# -- filters and fields on the existing lists ----------------------------------------------------------


def test_it_filters_evaluations_by_task_including_the_tasks_a_source_says_are_the_same_data(api, world):
    e = world["evaluations"]
    on_a = ids(api.get("/api/v1/evaluations/", {"task_id": "promoter-a", "page_size": 200}).json(), "evaluation_id")
    expected = {e[name].stable_id for name in e if name.startswith(("consistent", "conflicting"))}
    assert e["consistent_third"].dataset.stable_id == "promoter-b" and on_a == expected
    on_b = ids(api.get("/api/v1/evaluations/", {"task_id": "promoter-b", "page_size": 200}).json(), "evaluation_id")
    assert on_b == expected
    only_a = ids(api.get("/api/v1/evaluations/", {"dataset_id": "promoter-a"}).json(), "evaluation_id")
    assert e["consistent_third"].stable_id not in only_a  # dataset_id stays the one dataset
    results = api.get("/api/v1/results/", {"task_id": "promoter-b", "page_size": 200}).json()
    assert {row["evaluation_id"] for row in results["results"]} == expected


def test_it_filters_evaluations_by_a_work_gathering_its_two_versions(api, world):
    e = world["evaluations"]
    body = api.get("/api/v1/evaluations/", {"work_id": "nt-work", "page_size": 200}).json()
    sources = {row["source_id"] for row in body["results"]}
    assert sources == {"nt-preprint", "nt-journal"}
    assert e["consistent_authors"].stable_id in ids(body, "evaluation_id")
    assert e["consistent_journal"].stable_id in ids(body, "evaluation_id")
    results = api.get("/api/v1/results/", {"work_id": "nt-work", "page_size": 200}).json()["results"]
    assert {row["evaluation_id"] for row in results} == ids(body, "evaluation_id")


def test_it_filters_evaluations_results_and_configurations_by_model(api, world):
    e = world["evaluations"]
    mine = {e[name].stable_id for name in ("consistent_authors", "consistent_journal", "consistent_third")}
    assert ids(api.get("/api/v1/evaluations/", {"model_id": "nt-500m"}).json(), "evaluation_id") == mine
    results = api.get("/api/v1/results/", {"model_id": "nt-500m"}).json()["results"]
    assert {row["evaluation_id"] for row in results} == mine
    configurations = api.get("/api/v1/configurations/", {"model_id": "nt-500m"}).json()["results"]
    names = ("consistent_authors", "consistent_journal", "consistent_third")
    assert {row["configuration_id"] for row in configurations} == {e[name].configuration.stable_id for name in names}
    assert {row["model_id"] for row in configurations} == {"nt-500m"}
    both = api.get("/api/v1/evaluations/", {"model_id": "nt-500m", "task_id": "promoter-b", "work_id": "nt-work"})
    assert ids(both.json(), "evaluation_id") == {e["consistent_authors"].stable_id, e["consistent_journal"].stable_id}


def test_it_shows_a_sources_work_a_configurations_model_and_an_evaluations_original(api, world):
    e = world["evaluations"]
    assert api.get("/api/v1/sources/nt-preprint/").json()["work_id"] == "nt-work"
    assert api.get("/api/v1/sources/third-paper/").json()["work_id"] is None
    configuration = e["single"].configuration.stable_id
    assert api.get(f"/api/v1/configurations/{configuration}/").json()["model_id"] == "single"
    copy = api.get(f"/api/v1/evaluations/{e['copy'].stable_id}/").json()
    assert (copy["original_source_id"], copy["original_citation"], copy["original_locator"]) == (
        "nt-journal",
        "",
        "Table 2",
    )
    listed = api.get("/api/v1/evaluations/", {"source_id": "third-paper", "page_size": 200}).json()["results"]
    assert {row["evaluation_id"]: row["original_source_id"] for row in listed}[e["copy"].stable_id] == "nt-journal"


def test_it_writes_an_evaluations_original_and_refuses_one_named_twice_naming_the_field(token_client, world):
    curator = token_client("curator")
    evaluation = world["evaluations"]["single"]
    url = f"/api/v1/evaluations/{evaluation.stable_id}/"
    written = curator.patch(url, {"original_citation": "A leaderboard", "original_locator": "row 3"}, format="json")
    assert written.status_code == 200, written.json()
    evaluation.refresh_from_db()
    assert (evaluation.original_citation, evaluation.original_locator) == ("A leaderboard", "row 3")
    refused = curator.patch(url, {"original_source_id": "third-paper"}, format="json")
    assert refused.status_code == 400 and "original_citation" in refused.json()
    evaluation.refresh_from_db()
    assert evaluation.original_source_id is None
    own = curator.patch(url, {"original_citation": "", "original_source_id": "nt-journal"}, format="json")
    assert own.status_code == 400 and "original_source_id" in own.json()  # its own source is no original
    unknown = curator.patch(url, {"original_source_id": "no-such-source"}, format="json")
    assert unknown.status_code == 400 and "original_source_id" in unknown.json()


def test_it_writes_a_configurations_model_and_a_sources_work(token_client, world):
    curator = token_client("curator")
    configuration = ConfigurationFactory()
    response = curator.patch(
        f"/api/v1/configurations/{configuration.stable_id}/", {"model_id": "single"}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["model_id"] == "single"
    configuration.refresh_from_db()
    assert configuration.model.stable_id == "single"
    source = SourceFactory(title="The benchmark's documentation site")  # factory titles are near-identical
    response = curator.patch(f"/api/v1/sources/{source.stable_id}/", {"work_id": "bench-work"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["work_id"] == "bench-work"
    versions = token_client("anonymous").get("/api/v1/works/bench-work/").json()["versions"]
    assert {version["source_id"] for version in versions} == {"bench-repo", source.stable_id}


# -- refusals ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/models/",
        "/api/v1/models/nt-500m/",
        "/api/v1/works/",
        "/api/v1/works/nt-work/",
        "/api/v1/task-equivalences/",
        "/api/v1/agreements/",
        "/api/v1/evaluations/",
        "/api/v1/results/",
        "/api/v1/configurations/",
    ],
)
def test_it_refuses_an_unknown_query_parameter_naming_it(api, world, path):
    response = api.get(path, {"modle_id": "nt-500m"})
    assert response.status_code == 400
    assert list(response.json()) == ["modle_id"] and "unknown query parameter" in response.json()["modle_id"]


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/api/v1/agreements/", "model_id"),
        ("/api/v1/agreements/", "task_id"),
        ("/api/v1/evaluations/", "model_id"),
        ("/api/v1/evaluations/", "task_id"),
        ("/api/v1/evaluations/", "work_id"),
        ("/api/v1/results/", "task_id"),
        ("/api/v1/configurations/", "model_id"),
        ("/api/v1/models/", "work_id"),
        ("/api/v1/task-equivalences/", "task_id"),
    ],
)
def test_it_refuses_an_id_that_names_no_record_naming_the_filter(api, world, path, name):
    response = api.get(path, {name: "no-such-record"})
    assert response.status_code == 400
    assert "no-such-record" in response.json()[name][0]
    assert api.get(path, {name: ""}).status_code == 200  # empty: no filter


# -- query counts ---------------------------------------------------------------------------------------


def more_of_everything(world: dict, n: int) -> None:
    """n more works, models (each with an alias and a configuration), equivalences and evaluations."""
    protocol = world["evaluations"]["single"].protocol
    source = world["sources"][1]
    for i in range(n):
        w = work(f"more-work-{i}")
        SourceFactory(work=w)
        SourceFactory(work=w)
        extra = model(f"more-model-{i}", introduced_in=w)
        ModelAlias.objects.create(
            stable_id=f"more-alias-{i}", model=extra, alias=f"More {i}", key=f"more{i}", source=source, locator="p. 2"
        )
        one, other = DatasetFactory(), DatasetFactory()
        TaskEquivalence.objects.create(
            stable_id=f"more-eq-{i}", task=one, same_as=other, source=source, locator="p. 1", quote="Same data."
        )
        measured(extra, "0.5", source=source, dataset=one, protocol=protocol)
        measured(extra, "0.6", source=world["sources"][3], dataset=other, protocol=protocol, by="third_party")
    bump()


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/models/",
        "/api/v1/works/",
        "/api/v1/task-equivalences/",
        "/api/v1/agreements/",
        "/api/v1/agreements/?task_id=promoter-a&model_id=nt-500m",
        "/api/v1/evaluations/?task_id=promoter-a&model_id=nt-500m&work_id=nt-work",
        "/api/v1/results/?task_id=promoter-a&model_id=nt-500m&work_id=nt-work",
        "/api/v1/configurations/?model_id=nt-500m&work_id=nt-work",
    ],
)
def test_it_runs_a_constant_number_of_queries_per_list_page(api, world, path):
    def count() -> int:
        caches[RESPONSE_CACHE].clear()
        with CaptureQueriesContext(connection) as captured:
            response = api.get(path, {"page_size": 200})
        assert response.status_code == 200 and response.json()["results"]
        return len(captured)

    few = count()
    more_of_everything(world, 15)
    assert count() == few
    assert few <= 8
