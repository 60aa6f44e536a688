"""The catalogue the identity API tests read: two works (one in two versions), models with aliases, a
task equivalence, measurements that agree, conflict, are copied or rounded (`world`)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import transaction

from common.versions import version_bump
from records.models import (
    Configuration,
    Dataset,
    Evaluation,
    GenomicModel,
    MeasuredBy,
    ModelAlias,
    Protocol,
    Source,
    SourceKind,
    TaskEquivalence,
    UncertaintyKind,
    Work,
)
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


def work(stable_id: str, title: str = "", **fields) -> Work:
    return Work.objects.create(stable_id=stable_id, title=title or f"The work {stable_id}", **fields)


def model(stable_id: str, **fields) -> GenomicModel:
    fields.setdefault("name", f"Model {stable_id}")
    return GenomicModel.objects.create(stable_id=stable_id, **fields)


def measured(
    subject: GenomicModel | None,
    value: str,
    *,
    source: Source,
    dataset: Dataset,
    protocol: Protocol,
    by: str = MeasuredBy.AUTHORS,
    spread: str | None = None,
    unit: str = "MCC",
    configuration: Configuration | None = None,
    **fields,
) -> Evaluation:
    """One evaluation of `subject` (a new configuration of it) with one absolute result."""
    if by == MeasuredBy.THIRD_PARTY:
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
        uncertainty_kind=UncertaintyKind.SD if spread is not None else "",
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
        stable_id="nt-preprint", work=nt, kind=SourceKind.PREPRINT, arxiv_id="2306.15006", arxiv_version="v2"
    )
    journal = SourceFactory(stable_id="nt-journal", work=nt, doi="10.1038/s41592-024-02523-z")
    repository_work = work("bench-work", "A benchmark repository")
    repository = SourceFactory(
        stable_id="bench-repo",
        work=repository_work,
        kind=SourceKind.REPOSITORY,
        url="https://github.com/example/bench",
        commit="abcdef1",
    )
    third = SourceFactory(stable_id="third-paper")
    suite_a = DatasetFactory(stable_id="suite-a", name="Suite A")
    suite_b = DatasetFactory(stable_id="suite-b", name="Suite B")
    task_a = DatasetFactory(stable_id="promoter-a", name="Promoter (A)", suite=suite_a, task_key="promoter")
    task_b = DatasetFactory(stable_id="promoter-b", name="Promoter (B)", suite=suite_b, task_key="promoter")
    lone = DatasetFactory(stable_id="enhancer-a", name="Enhancer (A)", suite=suite_a, task_key="enhancer")
    equivalence = TaskEquivalence.objects.create(
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
    ModelAlias.objects.create(
        stable_id="alias-nt-500m", model=nt_500m, alias="NT-500M", key="nt500m", source=journal, locator="Table 1"
    )
    ModelAlias.objects.create(
        stable_id="alias-nt-500m-b",
        model=nt_500m,
        alias="NT (500M)",
        key="nt500m2",
        basis="inferred",
        reason="A curator reads it as the same checkpoint.",
    )
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
            nt_500m, "0.81", source=repository, dataset=task_b, protocol=protocol, by=MeasuredBy.THIRD_PARTY
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
            by=MeasuredBy.THIRD_PARTY,
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
