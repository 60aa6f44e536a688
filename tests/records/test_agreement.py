"""Agreement across papers on the shipped real tables (data/examples/): the verdicts the sources
support, one measurement however often it is printed, and a task's protocols gathered on one page."""

from __future__ import annotations

from decimal import Decimal

import pytest

from records import agreement
from records.models import Dataset, GenomicModel, MeasuredBy
from tests.helpers import load_for_module

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def loaded(demo_snapshot, module_transaction):
    return load_for_module(module_transaction, demo=demo_snapshot)


def agreement_of(model: str, task: str, metric: str) -> agreement.Agreement:
    evaluations, family = agreement.evaluations_for_task(Dataset.objects.get(stable_id=task))
    families = {task_id: min(family) for task_id in family}
    found = [
        a
        for a in agreement.agreements(evaluations, families)
        if a.subject_is_model and a.subject.stable_id == model and a.metric == metric
    ]
    assert len(found) == 1, found
    return found[0]


def printed(measurement: agreement.Measurement) -> list[str]:
    return sorted(p.result.printed_value for p in measurement.printings)


def test_hyenadnas_self_reported_score_conflicts_with_the_leaderboards_printed_twice(loaded):
    found = agreement_of("hyenadna-1-6m", "ntv1-h3k4me3", "mcc")
    assert found.verdict == agreement.Verdict.CONFLICTING
    by_party = {x.measured_by: x for x in found.measurements}
    assert set(by_party) == {MeasuredBy.AUTHORS, MeasuredBy.THIRD_PARTY} and len(found.measurements) == 2
    leaderboard = by_party[MeasuredBy.THIRD_PARTY]
    # Caduceus Table 2's cell, JanusDNA's copy of it and the NT figure's label of one leaderboard
    # measurement: one measurement, compared at the cell's precision.
    assert printed(leaderboard) == ["0.549 ± 0.056", "0.549±0.056", "0.55"]
    assert leaderboard.shown.result.printed_value == "0.549±0.056" and leaderboard.value == Decimal("0.549")
    assert by_party[MeasuredBy.AUTHORS].value == Decimal("0.612")  # 61.2, MCC x 100, on the common scale


def test_a_leaderboard_value_within_its_spread_of_the_self_reported_one_is_consistent(loaded):
    found = agreement_of("hyenadna-1-6m", "ntv1-h3k14ac", "mcc")
    assert found.verdict == agreement.Verdict.CONSISTENT  # 0.612±0.065 and 66.3
    assert len(found.measurements) == 2


def test_hyenadnas_model_gathers_rows_from_at_least_three_papers(loaded):
    model = GenomicModel.objects.get(stable_id="hyenadna-1-6m")
    evaluations = agreement.evaluations_for_model(model)
    works = {e.source.work.stable_id for e in evaluations}
    assert {
        "nguyen-2023-hyenadna",
        "schiff-2024-caduceus",
        "dalla-torre-2025-nature-methods-nucleotide-transformer",
    } <= works
    aliases = set(model.aliases.values_list("alias", flat=True))
    assert {"HyenaDNA 1.6M", "HyenaDNA-1KB"} <= aliases
    configurations = set(model.configurations.values_list("stable_id", flat=True))
    assert {"hyena-hyenadna-1-6m-ft", "ntp-cfg-hyenadna-1kb"} <= configurations  # matched by printed label on import


def test_the_nt_authors_figures_and_their_preprints_copies_are_self_reported_and_consistent(loaded):
    found = agreement_of("nt-v1-2500m-multi-species", "ntv1-h3", "mcc")
    assert found.verdict == agreement.Verdict.SELF_CONSISTENT and len(found.measurements) == 2


def test_hyenadnas_copy_of_the_baseline_cnn_counts_with_the_genomic_benchmarks_original(loaded):
    regulatory = agreement_of("genomic-benchmarks-cnn", "hyena-gb-human-regulatory", "accuracy")
    assert regulatory.verdict == agreement.Verdict.CONFLICTING  # 93.3 (the authors) vs 0.872±0.005 (Caduceus' re-run)
    authors = next(x for x in regulatory.measurements if x.measured_by == MeasuredBy.AUTHORS)
    assert printed(authors) == ["93.3", "93.3"]  # the Genomic Benchmarks README and HyenaDNA Table 4.1: one measurement
    mouse = agreement_of("genomic-benchmarks-cnn", "hyena-gb-mouse-enhancers", "accuracy")
    # 69 vs 0.715±0.087 (Caduceus' re-run) and 0.715 (Lindsey et al.'s, the demo's table left proposed)
    assert mouse.verdict == agreement.Verdict.CONSISTENT and len(mouse.measurements) == 3


def test_the_promoter_task_gathers_every_protocol_that_scores_it(loaded):
    task = Dataset.objects.get(stable_id="ntv1-promoter-all")
    evaluations, family = agreement.evaluations_for_task(task)
    tables = agreement.task_tables(evaluations, {task_id: min(family) for task_id in family})
    # F1 printed x 100 (HyenaDNA) and as a fraction (Caduceus) is one table on one scale; GENEB's
    # linear probes are a metric of their own
    assert {(t.metric, t.unit) for t in tables} == {
        ("f1", "F1"), ("mcc", "MCC"), ("mcc_linear_probe", "MCC (linear probe on frozen embeddings)")
    }  # fmt: skip
    works = {e.source.work.stable_id for e in evaluations}
    assert {
        "nguyen-2023-hyenadna",
        "schiff-2024-caduceus",
        "dalla-torre-2025-nature-methods-nucleotide-transformer",
    } <= works
    mcc = next(t for t in tables if t.metric == "mcc")
    assert [r.measurement.shown.evaluation.configuration.short_name for r in mcc.rows if r.is_best] == [
        "NT-Multispecies (2.5B)"
    ]
