"""The seed record page as data: everything on it is loaded, and importing twice changes nothing."""

from __future__ import annotations

import csv
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from records.models import (
    BaselineRole,
    Configuration,
    Dataset,
    Decision,
    Evaluation,
    Limitation,
    MeasuredBy,
    Protocol,
    ReadingMethod,
    Result,
    Source,
    SourceKind,
)
from records.seed import PROTOCOL_ID, SUITE_ID, TASKS_CSV
from releases.models import Release
from reviews.models import ReviewEvent, ReviewState

pytestmark = pytest.mark.django_db

HISTORY_MODELS = [
    Source,
    Dataset,
    Configuration,
    Protocol,
    Limitation,
    Evaluation,
    Result,
    BaselineRole,
    Decision,
]


def counts() -> dict[str, int]:
    totals = {model.__name__: model.objects.count() for model in HISTORY_MODELS}
    totals.update({f"history:{model.__name__}": model.history.count() for model in HISTORY_MODELS})
    totals["events"] = ReviewEvent.objects.count()
    totals["releases"] = Release.objects.count()
    return totals


def test_it_imports_the_seed_record_idempotently(seeded):
    before = counts()
    out = StringIO()
    call_command("import_seed", stdout=out)
    assert counts() == before
    assert "0 created, 0 updated" in out.getvalue()
    assert "0 review transitions" in out.getvalue()


def test_it_loads_the_protocol_with_its_metric_and_metadata(seeded):
    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    assert (
        protocol.title == "Nucleotide Transformer IA3 fine-tuning run time (Dalla-Torre et al. 2025 Methods 'Hardware')"
    )
    assert protocol.metric_label == "Runtime (Mean wall time per IA3 fine-tuning run)"
    assert (protocol.metric_unit, protocol.metric_direction, protocol.metric_short_name) == (
        "minute",
        "lower",
        "runtime",
    )
    assert protocol.version_label == "Nature Methods 2025 Methods"
    assert [a.stable_id for a in protocol.areas.all()] == ["dna-genomes"]
    assert [c.stable_id for c in protocol.contexts.all()] == ["research"]
    assert protocol.limitations.count() == 2
    assert protocol.source_locator == "Methods, 'Data preparation > Hardware', paragraph 1"
    assert protocol.review_state == ReviewState.SOURCE_CHECKED
    assert not protocol.explanatory_profile_reviewed


def test_it_loads_the_18_tasks_from_the_shared_task_table(seeded):
    suite = Dataset.objects.get(stable_id=SUITE_ID)
    assert suite.name == "NT benchmark, all 18 tasks"
    with TASKS_CSV.open(newline="") as handle:
        expected = {row["task"]: row for row in csv.DictReader(handle)}
    tasks = {task.task_key: task for task in suite.tasks.all()}
    assert set(tasks) == set(expected) and len(tasks) == 18
    for key, row in expected.items():
        task = tasks[key]
        assert (task.train_size, task.test_size, task.num_classes, task.sequence_length_bp, task.metric) == (
            int(row["train_size"]),
            int(row["test_size"]),
            int(row["num_classes"]),
            int(row["sequence_length_bp"]),
            "MCC",
        )
    assert tasks["splice_sites_all"].sequence_length_bp == 600 and tasks["splice_sites_all"].num_classes == 3
    assert suite.source.kind == SourceKind.DATASET_CARD


def test_it_loads_both_evaluations_excluded_with_the_concern(seeded):
    evaluations = Evaluation.objects.filter(protocol__stable_id=PROTOCOL_ID).order_by("configuration__name")
    assert [e.results.get().value for e in evaluations] == [Decimal("50"), Decimal("20")]
    assert [e.results.get().printed_value for e in evaluations] == ["50 min", "20 min"]
    for evaluation in evaluations:
        assert evaluation.review_state == ReviewState.EXCLUDED
        assert evaluation.concern.startswith("Fine-tuning time conflicts within the article.")
        assert (
            evaluation.concern_locator == "Methods, 'Data preparation > Hardware', paragraph 1; Discussion, paragraph 3"
        )
        assert (evaluation.measured_by, evaluation.reading_method) == (MeasuredBy.AUTHORS, ReadingMethod.TEXT)
        assert [
            e.transition
            for e in ReviewEvent.objects.filter(object_id=evaluation.pk, record_stable_id=evaluation.stable_id)
        ] == ["check_source", "exclude"]


def test_it_loads_the_source_citation_baselines_decision_and_release(seeded):
    source = Protocol.objects.get(stable_id=PROTOCOL_ID).source
    assert source.full_citation == "Nature Methods 22, 287-297 (published online 2024-11-28); PMC11810778 full-text XML"
    roles = BaselineRole.objects.filter(protocol__stable_id=PROTOCOL_ID)
    assert sorted(r.kind for r in roles) == ["conventional_reference", "null_control"]
    assert all(r.review_state == ReviewState.PROPOSED and r.status == "proposed" for r in roles)
    assert Decision.objects.get().title == "Select an execution workflow for large-scale diagnostic genomics"
    release = Release.objects.get()
    assert release.release_id == "2026-10-22-1b7cf027e4f6" and release.is_external
    assert release.records.filter(record_type="protocol", stable_id=PROTOCOL_ID).exists()
