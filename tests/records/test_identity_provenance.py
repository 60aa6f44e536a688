"""Identity claims say who makes them: an alias, a task equivalence or a copy-of link is stated by a
source (with its locator and words) or inferred by a curator (with a reason), is reviewed like any
record, and the pages, the API and the release say which."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from records import agreement
from records.models import IdentityBasis, ModelAlias, TaskEquivalence
from records.services import record_save
from releases import identity_rows
from tests.factories import DatasetFactory, GenomicModelFactory, SourceFactory
from tests.helpers import apply_transitions
from tests.records.test_evidence_rules import mcc_protocol, measure

pytestmark = pytest.mark.django_db


def alias(model, text: str, **fields) -> ModelAlias:
    record = ModelAlias(stable_id=f"alias-{ModelAlias.objects.count()}", model=model, alias=text, **fields)
    record_save(record=record, actor=None, reason="curated")
    return record


def test_two_papers_spellings_that_normalise_alike_are_both_recorded_with_their_sources():
    model = GenomicModelFactory(name="HyenaDNA 1.6M")
    first, second = SourceFactory(title="HyenaDNA"), SourceFactory(title="Caduceus")
    one = alias(model, "HyenaDNA 1.6M", source=first, locator="Table 4.2", quote="HyenaDNA 1.6M")
    other = alias(model, "HyenaDNA (1.6M)", source=second, locator="Table 1", quote="HyenaDNA (1.6M)")
    assert one.key == other.key and set(model.aliases.values_list("source__title", flat=True)) == {
        "HyenaDNA",
        "Caduceus",
    }
    with pytest.raises(ValidationError) as refused:
        alias(GenomicModelFactory(name="Another model"), "hyenadna 1.6m", source=SourceFactory(), locator="p. 2")
    assert "Another model has this alias: HyenaDNA 1.6M" in str(refused.value)
    with pytest.raises(ValidationError):
        alias(model, "HyenaDNA-1.6M", source=first, locator="Table 4.2")  # that source's spelling is recorded


def test_a_claim_names_its_source_or_a_curators_reason_down_to_the_database():
    model, task, same = GenomicModelFactory(), DatasetFactory(), DatasetFactory()
    with pytest.raises(ValidationError) as refused:
        alias(model, "No source", locator="Figure 2")
    assert "names that source" in str(refused.value)
    with pytest.raises(ValidationError) as refused:
        alias(model, "Bar label", basis=IdentityBasis.INFERRED)
    assert "give the reason" in str(refused.value)
    for bad in (
        {"basis": IdentityBasis.STATED, "source": None, "locator": "p. 1", "quote": "Same data."},
        {"basis": IdentityBasis.STATED, "source": SourceFactory(), "locator": "", "quote": ""},
        {"basis": IdentityBasis.INFERRED, "reason": ""},
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            TaskEquivalence.objects.create(stable_id="bad", task=task, same_as=same, **bad)


def test_an_inferred_alias_and_equivalence_are_marked_on_the_pages_in_the_api_and_in_the_release(client):
    model = GenomicModelFactory(name="HyenaDNA 1.6M")
    reason = "The figure labels its bars with this name only, naming no checkpoint: a curator took it for this model."
    alias(model, "HyenaDNA-1KB", basis=IdentityBasis.INFERRED, reason=reason, source=SourceFactory(title="A figure"))
    task, same = DatasetFactory(name="Promoters (NT)"), DatasetFactory(name="prom_300_all (GUE)")
    link = TaskEquivalence(
        stable_id="promoters-same",
        task=same,
        same_as=task,
        basis=IdentityBasis.INFERRED,
        reason="Both are built from the EPDnew human promoters, 300 bp around the TSS.",
    )
    record_save(record=link, actor=None, reason="curated")
    cache.clear()
    model_page = client.get(f"/models/{model.stable_id}/").content.decode()
    assert f'HyenaDNA-1KB</strong>: <span class="inferred-mark">inferred by a curator</span>: {reason}' in model_page
    protocol = mcc_protocol()
    measure(protocol, task, model, "0.61")
    cache.clear()
    task_page = client.get(f"/datasets/{task.stable_id}/").content.decode()
    assert "inferred by a curator</span>: Both are built from the EPDnew human promoters" in task_page
    [api_alias] = client.get(f"/api/v1/models/{model.stable_id}/").json()["aliases"]
    assert (api_alias["basis"], api_alias["reason"], api_alias["review_state"]) == ("inferred", reason, "proposed")
    [released] = list(identity_rows.model_alias_rows(chunk_size=10, key="stable_id"))
    assert (released["basis"], released["reason"]) == ("inferred", reason)
    [equivalence] = list(identity_rows.task_equivalence_rows(chunk_size=10, key="stable_id"))
    assert (equivalence["basis"], equivalence["source_id"]) == ("inferred", None)


def test_an_excluded_equivalence_joins_no_family():
    task, same = DatasetFactory(), DatasetFactory()
    link = TaskEquivalence.objects.create(
        stable_id="same-data", task=task, same_as=same, source=SourceFactory(), locator="p. 3", quote="The same data."
    )
    assert agreement.family_of(task.pk) == {task.pk, same.pk}
    apply_transitions(link, "check_source")
    apply_transitions(link, "exclude", reason="The source compares two splits of different sizes.")
    assert agreement.family_of(task.pk) == {task.pk}


def test_a_copy_of_an_uncatalogued_preprint_cites_it_and_an_inferred_copy_says_why(client):
    task, model, protocol = DatasetFactory(), GenomicModelFactory(), mcc_protocol()
    copy = measure(
        protocol,
        task,
        model,
        "0.41",
        original_citation="Nguyen et al. 2023, arXiv 2306.15794 v1, Table 3",
        original_locator="Table 3",
    )
    assert copy.original_basis == IdentityBasis.STATED  # the copying source names its original
    inferred = measure(
        protocol,
        task,
        model,
        "0.410",
        original_citation="Nguyen et al. 2023, arXiv 2306.15794 v1, Table 3",
        original_basis=IdentityBasis.INFERRED,
        original_reason="The repository prints the preprint's numbers without citing them.",
    )
    cache.clear()
    page = client.get(f"/models/{model.stable_id}/").content.decode()
    assert "a copy of Nguyen et al. 2023, arXiv 2306.15794 v1, Table 3" in page
    [row] = client.get("/api/v1/agreements/", {"model_id": model.stable_id}).json()["results"]
    assert row["verdict"] == "single_measurement" and len(row["measurements"]) == 1  # one original, printed twice
    evaluation = client.get(f"/api/v1/evaluations/{inferred.stable_id}/").json()
    assert (evaluation["original_basis"], evaluation["original_reason"]) == (
        "inferred",
        "The repository prints the preprint's numbers without citing them.",
    )
