"""Imports and identity across papers, as a curator sends documents to the API: configurations
matched to models by the names papers print (said in the dry run), two versions of one paper as
one work, duplicates of a catalogued source refused with the record they duplicate named, copies
naming their original, and tasks of two suites recorded as the same data."""

from __future__ import annotations

import copy

import pytest

from records.models import Configuration, Evaluation, ModelAlias, Source, TaskEquivalence, Work
from records.seed import PAPER_ID, seed_document
from tests.factories import GenomicModelFactory, SourceFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

BASE = {"format": "benchmark-evidence-import", "version": 2}


def document(title: str, **sections) -> dict:
    return {**BASE, "title": title, **sections}


def models_document() -> dict:
    return document(
        "HyenaDNA's models",
        works=[
            {
                "stable_id": "hyenadna",
                "title": "HyenaDNA: Long-Range Genomic Sequence Modeling at Single Nucleotide Resolution",
            }
        ],
        sources=[
            {
                "stable_id": "hyenadna-v2",
                "title": "HyenaDNA: Long-Range Genomic Sequence Modeling at Single Nucleotide Resolution",
                "arxiv_id": "2306.15794",
                "arxiv_version": "v2",
                "work": "hyenadna",
            }
        ],
        models=[
            {
                "stable_id": "hyenadna-1-6m",
                "name": "HyenaDNA 1.6M",
                "family": "HyenaDNA",
                "parameter_count": 1600000,
                "introduced_in": "hyenadna",
                "aliases": [
                    {
                        "stable_id": "alias-hyenadna-1-6m",
                        "alias": "HyenaDNA (1.6M)",
                        "source": "hyenadna-v2",
                        "locator": "Table 4.2",
                    }
                ],
            }
        ],
    )


def configurations_document(*configurations: dict) -> dict:
    return document("Another paper's table", configurations=list(configurations))


def test_a_dry_run_says_which_model_each_configuration_is_matched_to_by_its_printed_name(token_client):
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", models_document(), format="json").status_code == 201
    other = configurations_document(
        {"stable_id": "other-hyenadna", "name": "HyenaDNA, fine-tuned by another group", "short_name": "hyenadna 1.6m"},
        {"stable_id": "other-unknown", "name": "A model nobody catalogued", "short_name": "Mystery-7B"},
    )
    dry = curator.post("/api/v1/imports/?dry_run=1", other, format="json")
    assert dry.status_code == 200, dry.json()
    assert dry.json()["matched"] == {"other-hyenadna": {"model": "hyenadna-1-6m", "alias": "hyenadna 1.6m"}}
    assert not Configuration.objects.filter(stable_id="other-hyenadna").exists()
    assert curator.post("/api/v1/imports/", other, format="json").status_code == 201
    assert Configuration.objects.get(stable_id="other-hyenadna").model.stable_id == "hyenadna-1-6m"
    assert Configuration.objects.get(stable_id="other-unknown").model is None
    again = curator.post("/api/v1/imports/?dry_run=1", other, format="json").json()
    assert not again["created"] and not again["updated"], again  # the match is the document's reference: idempotent


def test_a_configuration_that_names_its_model_keeps_it_and_an_alias_names_one_model(token_client):
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", models_document(), format="json").status_code == 201
    own = copy.deepcopy(models_document())
    own["models"].append({"stable_id": "hyenadna-tiny", "name": "HyenaDNA tiny", "aliases": []})
    own["configurations"] = [
        {"stable_id": "named", "name": "HyenaDNA (1.6M) run", "short_name": "HyenaDNA (1.6M)", "model": "hyenadna-tiny"}
    ]
    report = curator.post("/api/v1/imports/", own, format="json").json()
    assert report["matched"] == {} and Configuration.objects.get(stable_id="named").model.stable_id == "hyenadna-tiny"
    clash = copy.deepcopy(own)
    clash["models"][1]["aliases"] = [{"stable_id": "alias-clash", "alias": "HyenaDNA  (1.6m)"}]
    refused = curator.post("/api/v1/imports/", clash, format="json")
    assert refused.status_code == 400
    assert any("alias" in e["message"].lower() for e in refused.json()["errors"]), refused.json()


def test_two_arxiv_versions_of_one_paper_are_two_sources_of_one_work(token_client):
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", models_document(), format="json").status_code == 201
    v1 = {
        "stable_id": "hyenadna-v1",
        "title": "HyenaDNA: Long-Range Genomic Sequence Modeling at Single Nucleotide Resolution",
        "arxiv_id": "arXiv:2306.15794",
        "arxiv_version": "v1",
        "work": "hyenadna",
    }
    assert curator.post("/api/v1/imports/", document("v1", sources=[v1]), format="json").status_code == 201
    work = Work.objects.get(stable_id="hyenadna")
    assert sorted(work.versions.values_list("arxiv_version", flat=True)) == ["v1", "v2"]
    elsewhere = {**v1, "stable_id": "hyenadna-v3", "arxiv_version": "v3", "work": None}
    refused = curator.post("/api/v1/imports/", document("v3", sources=[elsewhere]), format="json")
    assert refused.status_code == 400
    assert any(
        e["path"].endswith("arxiv_id") and "'hyenadna-v" in e["message"] and "work 'hyenadna'" in e["message"]
        for e in refused.json()["errors"]
    ), refused.json()


def test_listing_the_seed_paper_again_with_its_doi_or_its_title_is_refused_naming_it(token_client):
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", seed_document(), format="json").status_code == 201
    by_doi = {"stable_id": "nt-again", "title": "NT paper", "doi": "https://doi.org/10.1038/S41592-024-02523-Z"}
    answer = curator.post("/api/v1/imports/", document("doi", sources=[by_doi]), format="json")
    assert answer.status_code == 400 and PAPER_ID in str(answer.json()["errors"]), answer.json()
    by_title = {
        "stable_id": "nt-again",
        "title": "Nucleotide transformer: Building and evaluating robust foundation models for human genomics.",
    }
    answer = curator.post("/api/v1/imports/", document("title", sources=[by_title]), format="json")
    assert answer.status_code == 400, answer.json()
    assert any(e["path"].endswith("title") and PAPER_ID in e["message"] for e in answer.json()["errors"])
    as_version = {**by_title, "kind": "preprint", "work": PAPER_ID}
    assert (
        curator.post("/api/v1/imports/", document("preprint", sources=[as_version]), format="json").status_code == 201
    )
    assert Source.objects.get(stable_id="nt-again").work.stable_id == PAPER_ID
    assert Source.objects.filter(work__stable_id=PAPER_ID).count() == 2


def test_a_copy_names_its_original_once_as_a_source_or_as_a_citation(token_client):
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", seed_document(), format="json").status_code == 201
    seed = seed_document()
    evaluation = copy.deepcopy(seed["evaluations"][0])
    evaluation.update(
        stable_id="copied-runtime",
        source="nt-dataset-card-copy",
        original_source=PAPER_ID,
        original_citation="Dalla-Torre et al. 2025",
        original_locator="Methods, Hardware",
    )
    evaluation["results"] = [{**evaluation["results"][0], "stable_id": "copied-runtime-r"}]
    card = {
        "stable_id": "nt-dataset-card-copy",
        "title": "A blog that copies the runtime",
        "url": "https://example.org/nt",
    }
    both = document("copy", sources=[card], evaluations=[evaluation])
    refused = curator.post("/api/v1/imports/", both, format="json")
    assert refused.status_code == 400
    assert any(e["path"].endswith("original_citation") for e in refused.json()["errors"]), refused.json()
    evaluation.pop("original_citation")
    assert curator.post("/api/v1/imports/", both, format="json").status_code == 201
    copied = Evaluation.objects.get(stable_id="copied-runtime")
    assert copied.is_copy and copied.original_source.stable_id == PAPER_ID


def test_a_task_is_the_same_data_as_another_only_with_a_source_and_never_as_itself(token_client):
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/", models_document(), format="json").status_code == 201
    tasks = [
        {"stable_id": "gb-mouse", "name": "dummy_mouse_enhancers_ensembl"},
        {"stable_id": "hyena-mouse", "name": "Mouse Enhancers"},
    ]
    same = {
        "stable_id": "mouse-enhancers-same-data",
        "task": "hyena-mouse",
        "same_as": "gb-mouse",
        "source": "hyenadna-v2",
        "locator": "Section 4.2",
        "quote": "we evaluate on the Genomic Benchmarks datasets",
    }
    itself = {**same, "stable_id": "itself", "same_as": "hyena-mouse"}
    refused = curator.post(
        "/api/v1/imports/", document("tasks", datasets=tasks, task_equivalences=[itself]), format="json"
    )
    assert refused.status_code == 400 and "not as itself" in str(refused.json()["errors"])
    unsourced = {k: v for k, v in same.items() if k != "source"}
    refused = curator.post(
        "/api/v1/imports/", document("tasks", datasets=tasks, task_equivalences=[unsourced]), format="json"
    )
    assert refused.status_code == 400 and any(e["path"].endswith(".source") for e in refused.json()["errors"])
    assert (
        curator.post(
            "/api/v1/imports/", document("tasks", datasets=tasks, task_equivalences=[same]), format="json"
        ).status_code
        == 201
    )
    assert TaskEquivalence.objects.get().same_as.stable_id == "gb-mouse"


@pytest.mark.parametrize(
    ("section", "path", "value", "letter"),
    [
        ("alias", "aliases[0].alias", "HyenaDNA (1.6М)", "CYRILLIC CAPITAL LETTER EM"),
        ("name", "name", "Ηyena DNA 1.6M", "GREEK CAPITAL LETTER ETA"),
    ],
)
def test_a_name_with_a_lookalike_letter_of_another_script_is_refused_naming_it(
    token_client, section, path, value, letter
):
    doc = models_document()
    model = doc["models"][0]
    if section == "alias":
        model["aliases"][0]["alias"] = value
    else:
        model["name"] = value
    refused = token_client("curator").post("/api/v1/imports/", doc, format="json")
    assert refused.status_code == 400, refused.json()
    [error] = [e for e in refused.json()["errors"] if "one script" in e["message"]]
    assert error["path"].endswith(path) and letter in error["message"], error


def test_a_full_width_name_is_stored_in_its_plain_letters_and_matches_them(token_client):
    doc = models_document()
    doc["models"][0]["aliases"][0]["alias"] = "ＨｙｅｎａＤＮＡ (1.6M)"
    assert token_client("curator").post("/api/v1/imports/", doc, format="json").status_code == 201
    from records.models import ModelAlias

    stored = ModelAlias.objects.get(stable_id="alias-hyenadna-1-6m")
    assert (stored.alias, stored.key) == ("HyenaDNA (1.6M)", "hyenadna1.6m")


def test_an_excluded_alias_matches_no_configuration(token_client):
    model = GenomicModelFactory(stable_id="hyenadna-1-6m")
    name = ModelAlias.objects.create(
        stable_id="alias-1kb",
        model=model,
        alias="HyenaDNA-1KB",
        key="hyenadna1kb",
        source=SourceFactory(),
        locator="Fig. 2",
    )
    document = {
        "format": "benchmark-evidence-import",
        "version": 2,
        "title": "Another paper's table",
        "configurations": [{"stable_id": "their-hyenadna", "name": "HyenaDNA-1KB"}],
    }
    curator = token_client("curator")
    assert curator.post("/api/v1/imports/?dry_run=1", document, format="json").json()["matched"] == {
        "their-hyenadna": {"model": "hyenadna-1-6m", "alias": "HyenaDNA-1KB"}
    }
    apply_transitions(name, "check_source")
    apply_transitions(name, "exclude", reason="The figure's bar is another checkpoint.")
    assert curator.post("/api/v1/imports/?dry_run=1", document, format="json").json()["matched"] == {}
