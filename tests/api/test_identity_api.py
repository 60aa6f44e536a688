"""Models, works and their versions, task equivalences and agreement verdicts through the API, and the
identity filters and fields of the evaluation, result, configuration and source lists."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.cache import caches
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from common.api import RESPONSE_CACHE
from common.versions import version_bump
from records import models as m
from records.agreement import AGREEMENT_RULE
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    ProtocolFactory,
    ResultFactory,
    SourceFactory,
)

pytestmark = pytest.mark.django_db


# -- data -------------------------------------------------------------------------------------------


def work(stable_id: str, title: str = "", **fields) -> m.Work:
    return m.Work.objects.create(stable_id=stable_id, title=title or f"The work {stable_id}", **fields)


def model(stable_id: str, **fields) -> m.GenomicModel:
    fields.setdefault("name", f"Model {stable_id}")
    return m.GenomicModel.objects.create(stable_id=stable_id, **fields)


def measured(
    subject: m.GenomicModel | None,
    value: str,
    *,
    source: m.Source,
    dataset: m.Dataset,
    protocol: m.Protocol,
    by: str = m.MeasuredBy.AUTHORS,
    spread: str | None = None,
    unit: str = "MCC",
    configuration: m.Configuration | None = None,
    **fields,
) -> m.Evaluation:
    """One evaluation of `subject` (a new configuration of it) with one absolute result."""
    if by == m.MeasuredBy.THIRD_PARTY:
        fields.setdefault("measured_by_name", "An independent benchmark")
    evaluation = EvaluationFactory(
        protocol=protocol,
        configuration=configuration or ConfigurationFactory(model=subject),
        dataset=dataset,
        source=source,
        measured_by=by,
        **fields,
    )
    ResultFactory(
        evaluation=evaluation,
        value=Decimal(value),
        unit=unit,
        printed_value=value if spread is None else f"{value} ± {spread}",
        uncertainty_kind=m.UncertaintyKind.SD if spread is not None else "",
        uncertainty_value=Decimal(spread) if spread is not None else None,
    )
    return evaluation


def bump() -> None:
    """Factories write past the services, which move the catalogue version the response cache is keyed by."""
    with transaction.atomic():
        version_bump()


@pytest.fixture
def world(db):
    """Two works (one with two versions), models with aliases, two suites whose tasks a source says are
    the same data, and evaluations of every verdict."""
    nt = work("nt-work", "The Nucleotide Transformer", authors_short="Dalla-Torre et al. 2025")
    preprint = SourceFactory(
        stable_id="nt-preprint", work=nt, kind=m.SourceKind.PREPRINT, arxiv_id="2306.15006", arxiv_version="v2"
    )
    journal = SourceFactory(stable_id="nt-journal", work=nt, doi="10.1038/s41592-024-02523-z")
    repository_work = work("bench-work", "A benchmark repository")
    repository = SourceFactory(
        stable_id="bench-repo",
        work=repository_work,
        kind=m.SourceKind.REPOSITORY,
        url="https://github.com/example/bench",
        commit="abcdef1",
    )
    third = SourceFactory(stable_id="third-paper")
    suite_a = DatasetFactory(stable_id="suite-a", name="Suite A")
    suite_b = DatasetFactory(stable_id="suite-b", name="Suite B")
    task_a = DatasetFactory(stable_id="promoter-a", name="Promoter (A)", suite=suite_a, task_key="promoter")
    task_b = DatasetFactory(stable_id="promoter-b", name="Promoter (B)", suite=suite_b, task_key="promoter")
    lone = DatasetFactory(stable_id="enhancer-a", name="Enhancer (A)", suite=suite_a, task_key="enhancer")
    equivalence = m.TaskEquivalence.objects.create(
        stable_id="promoter-a-is-promoter-b",
        task=task_a,
        same_as=task_b,
        source=repository,
        locator="README, 'Datasets'",
        quote="The promoter task is the same data as suite B's.",
    )
    protocol = ProtocolFactory(
        source=journal, metric_name="MCC", metric_short_name="mcc", metric_unit="MCC", metric_direction="higher"
    )
    nt_500m = model(
        "nt-500m",
        name="NT 500M",
        family="Nucleotide Transformer",
        parameter_count=500_000_000,
        public_id="InstaDeepAI/nt-500m",
        revision="main",
        introduced_in=nt,
    )
    m.ModelAlias.objects.create(
        stable_id="alias-nt-500m", model=nt_500m, alias="NT-500M", key="nt500m", source=journal, locator="Table 1"
    )
    m.ModelAlias.objects.create(stable_id="alias-nt-500m-b", model=nt_500m, alias="NT (500M)", key="nt500m2")
    conflicted = model("conflicted", family="Other")
    single = model("single", family="Other")
    selfish = model("selfish", family="Other")
    copied = model("copied", family="Other")
    merged = model("old-name", merged_into=nt_500m)
    e = {
        # consistent: the authors' 0.80 on task A and a third party's 0.81 on task B (the same data)
        "consistent_authors": measured(nt_500m, "0.80", source=preprint, dataset=task_a, protocol=protocol),
        "consistent_journal": measured(nt_500m, "0.802", source=journal, dataset=task_a, protocol=protocol),
        "consistent_third": measured(
            nt_500m, "0.81", source=repository, dataset=task_b, protocol=protocol, by=m.MeasuredBy.THIRD_PARTY
        ),
        # conflicting: 0.80 ± 0.01 and 0.60 ± 0.01
        "conflicting_authors": measured(
            conflicted, "0.80", source=journal, dataset=task_a, protocol=protocol, spread="0.01"
        ),
        "conflicting_third": measured(
            conflicted,
            "0.60",
            source=third,
            dataset=task_a,
            protocol=protocol,
            spread="0.01",
            by=m.MeasuredBy.THIRD_PARTY,
        ),
        "single": measured(single, "0.70", source=journal, dataset=lone, protocol=protocol),
        # self-reported only: two works of the model's authors disagree, but nobody else measured it
        "selfish_one": measured(selfish, "0.90", source=journal, dataset=lone, protocol=protocol),
        "selfish_two": measured(selfish, "0.50", source=repository, dataset=lone, protocol=protocol),
        # a copy: a third paper prints the journal's 0.8123 rounded to 0.81, naming its original
        "original": measured(copied, "0.8123", source=journal, dataset=lone, protocol=protocol),
        "copy": measured(
            copied,
            "0.81",
            source=third,
            dataset=lone,
            protocol=protocol,
            original_source=journal,
            original_locator="Table 2",
        ),
    }
    return {
        "works": (nt, repository_work),
        "sources": (preprint, journal, repository, third),
        "tasks": (task_a, task_b, lone),
        "equivalence": equivalence,
        "models": (nt_500m, conflicted, single, selfish, copied, merged),
        "evaluations": e,
    }


def ids(body: dict, key: str) -> set[str]:
    return {row[key] for row in body["results"]}


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
            {"alias": "NT (500M)", "source_id": None, "locator": ""},
            {"alias": "NT-500M", "source_id": "nt-journal", "locator": "Table 1"},
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
    assert not m.GenomicModel.objects.filter(stable_id="new").exists()


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


# -- agreements -------------------------------------------------------------------------------------


def agreements(api, **query) -> list[dict]:
    response = api.get("/api/v1/agreements/", {"page_size": 200, **query})
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def by_subject(rows: list[dict]) -> dict[str, dict]:
    return {row["subject_id"]: row for row in rows}


def test_it_gives_each_models_verdict_on_a_task_family(api, world):
    rows = by_subject(agreements(api))
    assert {subject: row["verdict"] for subject, row in rows.items()} == {
        "nt-500m": "consistent",
        "conflicted": "conflicting",
        "single": "single_measurement",
        "selfish": "self_reported_only",
        "copied": "single_measurement",
    }
    assert rows["selfish"]["verdict_label"] == "self-reported only"
    assert all(row["rule"] == AGREEMENT_RULE for row in rows.values())
    consistent = rows["nt-500m"]
    assert (consistent["subject_kind"], consistent["subject_name"], consistent["metric"]) == ("model", "NT 500M", "mcc")
    assert consistent["task_ids"] == ["promoter-a", "promoter-b"]
    conflicting = rows["conflicted"]["measurements"]
    assert [(x["value"], x["spread"], x["measured_by"]) for x in conflicting] == [
        ("0.80", "0.01", "authors"),
        ("0.60", "0.01", "third_party"),
    ]
    assert conflicting[1]["measured_by_name"] == "An independent benchmark"
    assert conflicting[1]["source_id"] == "third-paper" and conflicting[1]["work_id"] is None


def test_it_counts_a_work_printed_in_two_versions_once_showing_the_more_precise_printing(api, world):
    e = world["evaluations"]
    measurements = by_subject(agreements(api))["nt-500m"]["measurements"]
    assert len(measurements) == 2  # the preprint's 0.80 and the journal's 0.802: one work, one measurement
    authors = next(x for x in measurements if x["measured_by"] == "authors")
    assert (authors["evaluation_id"], authors["value"], authors["work_id"]) == (
        e["consistent_journal"].stable_id,
        "0.802",
        "nt-work",
    )
    assert authors["copy_evaluation_ids"] == [e["consistent_authors"].stable_id]


def test_it_counts_a_rounded_copy_once_with_its_original(api, world):
    e = world["evaluations"]
    row = by_subject(agreements(api))["copied"]
    assert row["verdict"] == "single_measurement"
    [measurement] = row["measurements"]
    assert measurement == {
        "evaluation_id": e["original"].stable_id,
        "source_id": "nt-journal",
        "work_id": "nt-work",
        "measured_by": "authors",
        "measured_by_name": "",
        "value": "0.8123",
        "unit": "MCC",
        "printed_value": "0.8123",
        "scaled_value": "0.8123",
        "spread": None,
        "review_state": "proposed",
        "copy_evaluation_ids": [e["copy"].stable_id],
    }


def test_it_puts_a_unit_times_100_on_the_plain_scale_keeping_the_printed_value(api, world):
    task = world["tasks"][2]
    protocol = ProtocolFactory(metric_short_name="mcc", metric_unit="MCC x 100", metric_direction="higher")
    percent = model("percent")
    measured(percent, "66.47", source=world["sources"][1], dataset=task, protocol=protocol, unit="MCC x 100")
    bump()
    [measurement] = by_subject(agreements(api, model_id="percent"))["percent"]["measurements"]
    assert (measurement["value"], measurement["unit"], measurement["scaled_value"]) == ("66.47", "MCC x 100", "0.6647")


def test_it_computes_agreements_over_one_models_or_one_task_familys_evaluations(api, world):
    assert [row["subject_id"] for row in agreements(api, model_id="nt-500m")] == ["nt-500m"]
    on_b = agreements(api, task_id="promoter-b")
    assert {row["subject_id"] for row in on_b} == {"nt-500m", "conflicted"}
    assert agreements(api, model_id="single", task_id="promoter-a") == []


def test_it_names_a_configuration_as_the_subject_when_it_names_no_model(api, world):
    sources, task = world["sources"], world["tasks"][2]
    configuration = ConfigurationFactory(stable_id="bare-configuration", name="A bare configuration")
    protocol = world["evaluations"]["single"].protocol
    measured(None, "0.5", configuration=configuration, source=sources[1], dataset=task, protocol=protocol)
    bump()
    row = by_subject(agreements(api))["bare-configuration"]
    assert (row["subject_kind"], row["subject_name"], row["verdict"]) == (
        "configuration",
        "A bare configuration",
        "single_measurement",
    )


def test_it_pages_agreements_with_signed_cursors(api, world):
    everything = agreements(api)
    seen, url, pages = [], "/api/v1/agreements/?page_size=2", 0
    while url:
        body = api.get(url).json()
        seen.extend(body["results"])
        url, pages = body["next"], pages + 1
        if body["previous"]:
            assert api.get(body["previous"]).status_code == 200
    assert pages == 3 and seen == everything
    forged = api.get("/api/v1/agreements/", {"cursor": "bm90LWEtY3Vyc29y"})
    assert forged.status_code == 400 and "cursor" in forged.json()
    listed = api.get("/api/v1/agreements/")
    assert listed["ETag"] and listed["Last-Modified"]
    assert api.get("/api/v1/agreements/", HTTP_IF_NONE_MATCH=listed["ETag"]).status_code == 304


def test_it_documents_the_verdicts_as_an_enum_and_the_filters_in_the_schema(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    assert schema["components"]["schemas"]["VerdictEnum"]["enum"] == [
        "single_measurement",
        "self_reported_only",
        "consistent",
        "conflicting",
    ]
    parameters = {p["name"] for p in schema["paths"]["/api/v1/agreements/"]["get"]["parameters"]}
    assert parameters == {"model_id", "task_id", "cursor", "page_size"}
    evaluations = {p["name"] for p in schema["paths"]["/api/v1/evaluations/"]["get"]["parameters"]}
    assert {"model_id", "task_id", "work_id"} <= evaluations
    assert {"identifier"} <= {p["name"] for p in schema["paths"]["/api/v1/works/"]["get"]["parameters"]}


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
        m.ModelAlias.objects.create(stable_id=f"more-alias-{i}", model=extra, alias=f"More {i}", key=f"more{i}")
        one, other = DatasetFactory(), DatasetFactory()
        m.TaskEquivalence.objects.create(
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
