"""A release carries who is who across papers: works and their versions, models and their aliases,
tasks that are the same data, and the agreements `records.agreement` computes over its evaluations
with every measurement they count; each table with its keys, read back from the bundle's files."""

from __future__ import annotations

import datetime
import json
import subprocess
from decimal import Decimal
from pathlib import Path

import factory
import pytest

from records import agreement
from records.models import Configuration, Dataset, Evaluation, Result, Source
from records.models.base import Direction, MeasuredBy, ReadingMethod, SourceKind
from records.models.identity import GenomicModel, TaskEquivalence, Work
from releases import catalogue_rows
from releases.bundle import BundleResult
from releases.models import ReleaseRecord, ReleaseStatus
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    ModelAliasFactory,
    ProtocolFactory,
    SourceFactory,
)
from tests.factories import ResultFactory as _ResultFactory
from tests.releases.test_build import FRICTIONLESS, all_files, bag_of, table

pytestmark = pytest.mark.django_db

DATE = datetime.date(2026, 12, 3)


class WorkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Work

    stable_id = factory.Sequence(lambda n: f"work-{n}")
    title = factory.Sequence(lambda n: f"A work about genomic models, part {n}")
    authors_short = "Nguyen et al."


class GenomicModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GenomicModel

    stable_id = factory.Sequence(lambda n: f"model-{n}")
    name = factory.Sequence(lambda n: f"Model {n}")
    family = "HyenaDNA"


class ResultFactory(_ResultFactory):
    unit = "MCC"


class Catalogue:
    """Two versions of one work, a model with two aliases, two suites' tasks a source says are the
    same data, a copy of an uncatalogued original printed twice, and a configuration naming no model."""

    def __init__(self) -> None:
        self.work = WorkFactory(stable_id="nguyen-2023-hyenadna", title="HyenaDNA", authors_short="Nguyen et al.")
        self.preprint = SourceFactory(
            stable_id="hyenadna-preprint-v1", kind=SourceKind.PREPRINT, work=self.work, title="HyenaDNA (v1)"
        )
        self.paper = SourceFactory(stable_id="hyenadna-neurips", work=self.work, title="HyenaDNA (NeurIPS)")
        self.review = SourceFactory(stable_id="a-review-citing-the-leaderboard", title="A review")
        self.benchmark = SourceFactory(stable_id="a-benchmark-paper", title="A benchmark paper")
        self.model = GenomicModelFactory(
            stable_id="hyenadna-tiny-1k",
            name="HyenaDNA tiny 1k",
            parameter_count=1_600_000,
            public_id="LongSafari/hyenadna-tiny-1k-seqlen",
            introduced_in=self.work,
        )
        self.old_model = GenomicModelFactory(stable_id="hyenadna-1-6m-duplicate", name="HyenaDNA (1.6M)")
        self.old_model.merged_into = self.model
        self.old_model.save()
        self.aliases = [
            ModelAliasFactory(
                stable_id="alias-hyenadna-1kb",
                model=self.model,
                alias="HyenaDNA-1KB",
                source=self.preprint,
                locator="Table 3",
            ),
            ModelAliasFactory(
                stable_id="alias-hyenadna-1-6m",
                model=self.model,
                alias="HyenaDNA (1.6M)",
                source=self.paper,
                locator="Table A.4",
            ),
        ]
        suite_a = DatasetFactory(stable_id="suite-a", name="Suite A")
        suite_b = DatasetFactory(stable_id="suite-b", name="Suite B")
        self.task = DatasetFactory(stable_id="suite-a-enhancers", name="Enhancers (A)", suite=suite_a, task_key="enh")
        self.same_task = DatasetFactory(
            stable_id="suite-b-enhancers", name="Enhancers (B)", suite=suite_b, task_key="enhancers"
        )
        self.equivalence = TaskEquivalence.objects.create(
            stable_id="suite-a-enhancers-is-suite-b-enhancers",
            task=self.same_task,
            same_as=self.task,
            source=self.benchmark,
            locator="Section 4.1",
            quote="We use the enhancer task of suite A, as released.",
        )
        protocol = ProtocolFactory(
            stable_id="mcc-protocol",
            metric_name="Matthews correlation coefficient",
            metric_short_name="MCC",
            metric_unit="MCC",
            metric_direction=Direction.HIGHER,
            source=self.paper,
        )
        self.configuration = ConfigurationFactory(stable_id="hyenadna-tiny-ft", name="HyenaDNA tiny, fine-tuned")
        self.configuration.model = self.model
        self.configuration.save()
        self.bare = ConfigurationFactory(stable_id="cnn-baseline", name="CNN baseline")

        def evaluation(stable_id: str, source: Source, dataset: Dataset, value: str, **fields: object):
            made = EvaluationFactory(
                stable_id=stable_id,
                protocol=protocol,
                configuration=fields.pop("configuration", self.configuration),
                dataset=dataset,
                source=source,
                **fields,
            )
            ResultFactory(stable_id=f"{stable_id}-r", evaluation=made, value=Decimal(value), printed_value=value)
            return made

        # One measurement, printed by both versions of the work: counted once, the more precise compared.
        self.in_preprint = evaluation("in-preprint", self.preprint, self.task, "0.41")
        self.in_paper = evaluation("in-paper", self.paper, self.task, "0.410")
        # A leaderboard's number, catalogued nowhere, printed by two sources: one measurement.
        leaderboard = {
            "measured_by": MeasuredBy.THIRD_PARTY,
            "measured_by_name": "A leaderboard",
            "original_citation": "InstaDeep Nucleotide Transformer leaderboard",
            "original_locator": "enhancers row",
        }
        self.copy_in_review = evaluation("copy-in-review", self.review, self.same_task, "0.52", **leaderboard)
        self.copy_in_benchmark = evaluation(
            "copy-in-benchmark", self.benchmark, self.same_task, "0.5210", **leaderboard
        )
        self.baseline = evaluation("cnn-on-enhancers", self.paper, self.task, "0.30", configuration=self.bare)


@pytest.fixture
def catalogue(db) -> Catalogue:
    return Catalogue()


def build(path: Path, chunk_size: int = 10_000) -> BundleResult:
    return catalogue_rows.bundle_write(output_dir=path, release_date=DATE, chunk_size=chunk_size)


def by_key(rows: list[dict[str, str]], *key: str) -> dict:
    return {row[key[0]] if len(key) == 1 else tuple(row[k] for k in key): row for row in rows}


def test_the_identity_tables_hold_works_versions_models_aliases_and_equivalences(catalogue, tmp_path):
    bag = build(tmp_path).bag_dir
    works = by_key(table(bag, "work_table"), "work_id")
    assert works == {
        "nguyen-2023-hyenadna": {
            "work_id": "nguyen-2023-hyenadna",
            "title": "HyenaDNA",
            "authors_short": "Nguyen et al.",
        }
    }
    sources = by_key(table(bag, "source_table"), "source_id")
    assert {s: row["work_id"] for s, row in sources.items() if row["work_id"]} == {
        "hyenadna-preprint-v1": "nguyen-2023-hyenadna",
        "hyenadna-neurips": "nguyen-2023-hyenadna",
    }
    models = by_key(table(bag, "model_table"), "model_id")
    assert models["hyenadna-tiny-1k"] == {
        "model_id": "hyenadna-tiny-1k",
        "name": "HyenaDNA tiny 1k",
        "family": "HyenaDNA",
        "parameter_count": "1600000",
        "public_id": "LongSafari/hyenadna-tiny-1k-seqlen",
        "revision": "",
        "introduced_in_work_id": "nguyen-2023-hyenadna",
        "merged_into_model_id": "",
    }
    assert models["hyenadna-1-6m-duplicate"]["merged_into_model_id"] == "hyenadna-tiny-1k"
    aliases = table(bag, "model_alias_table")
    assert [
        (a["alias_id"], a["model_id"], a["alias"], a["alias_key"], a["source_id"], a["locator"]) for a in aliases
    ] == [
        ("alias-hyenadna-1-6m", "hyenadna-tiny-1k", "HyenaDNA (1.6M)", "hyenadna1.6m", "hyenadna-neurips", "Table A.4"),
        ("alias-hyenadna-1kb", "hyenadna-tiny-1k", "HyenaDNA-1KB", "hyenadna1kb", "hyenadna-preprint-v1", "Table 3"),
    ]
    configurations = by_key(table(bag, "configuration_table"), "configuration_id")
    assert configurations["hyenadna-tiny-ft"]["model_id"] == "hyenadna-tiny-1k"
    assert configurations["cnn-baseline"]["model_id"] == ""
    [equivalence] = table(bag, "task_equivalence_table")
    assert equivalence == {
        "task_equivalence_id": "suite-a-enhancers-is-suite-b-enhancers",
        "task_id": "suite-b-enhancers",
        "same_as_id": "suite-a-enhancers",
        "source_id": "a-benchmark-paper",
        "locator": "Section 4.1",
        "quote": "We use the enhancer task of suite A, as released.",
        "basis": "stated",
        "reason": "",
        "review_state": "proposed",
    }


def test_the_matrix_names_the_model_and_task_of_each_result_and_the_original_of_a_copy(catalogue, tmp_path):
    bag = build(tmp_path).bag_dir
    matrix = by_key(table(bag, "model_evaluation_matrix"), "result_id")
    paper = matrix["in-paper-r"]
    assert (paper["configuration_id"], paper["model_id"], paper["model_name"]) == (
        "hyenadna-tiny-ft",
        "hyenadna-tiny-1k",
        "HyenaDNA tiny 1k",
    )
    assert (paper["dataset_id"], paper["dataset_name"], paper["suite_id"]) == (
        "suite-a-enhancers",
        "Enhancers (A)",
        "suite-a",
    )
    assert (matrix["cnn-on-enhancers-r"]["model_id"], matrix["cnn-on-enhancers-r"]["model_name"]) == ("", "")
    copy = matrix["copy-in-review-r"]
    assert (copy["original_source_id"], copy["original_citation"], copy["original_locator"]) == (
        "",
        "InstaDeep Nucleotide Transformer leaderboard",
        "enhancers row",
    )
    assert paper["original_citation"] == "" and paper["value"] == "0.410"


def test_agreements_give_the_verdicts_of_records_agreement_with_every_measurement_counted(catalogue, tmp_path):
    bag = build(tmp_path, chunk_size=1).bag_dir
    rows = by_key(table(bag, "agreements"), "agreement_id")
    model_key = "model:hyenadna-tiny-1k|suite-a-enhancers|MCC"
    assert set(rows) == {model_key, "configuration:cnn-baseline|suite-a-enhancers|MCC"}
    evaluations, family = agreement.evaluations_for_task(catalogue.task)
    [expected] = [a for a in agreement.agreements(evaluations, agreement.task_families(family)) if a.subject_is_model]
    row = rows[model_key]
    assert row == {
        "agreement_id": model_key,
        "subject_kind": "model",
        "model_id": "hyenadna-tiny-1k",
        "configuration_id": "",
        "subject_name": "HyenaDNA tiny 1k",
        "task_id": "suite-a-enhancers",
        "task_name": "Enhancers (A)",
        "family_task_ids": "suite-a-enhancers suite-b-enhancers",
        "metric": "MCC",
        "verdict": expected.verdict,
        "verdict_label": "conflicting",
        "measurements": "2",
        "printings": "4",
    }
    assert expected.verdict == agreement.Verdict.CONFLICTING  # 0.410 against 0.5210: beyond 5 %
    baseline = rows["configuration:cnn-baseline|suite-a-enhancers|MCC"]
    assert (baseline["subject_kind"], baseline["configuration_id"], baseline["model_id"], baseline["verdict"]) == (
        "configuration",
        "cnn-baseline",
        "",
        agreement.Verdict.SINGLE,
    )
    measured = by_key(table(bag, "agreement_measurements"), "agreement_id", "result_id")
    mine = {result: row for (key, result), row in measured.items() if key == model_key}
    assert {
        result: (row["counted_as"], row["counted_with_result_id"], row["value"]) for result, row in mine.items()
    } == {
        "in-paper-r": ("compared", "in-paper-r", "0.410"),
        "in-preprint-r": ("copy", "in-paper-r", "0.41"),
        "copy-in-benchmark-r": ("compared", "copy-in-benchmark-r", "0.5210"),
        "copy-in-review-r": ("copy", "copy-in-benchmark-r", "0.52"),
    }
    assert {row["evaluation_id"] for row in mine.values()} == {
        "in-paper",
        "in-preprint",
        "copy-in-benchmark",
        "copy-in-review",
    }
    assert mine["copy-in-review-r"]["measured_by"] == "third_party" and mine["in-paper-r"]["unit"] == "MCC"


def test_every_key_is_unique_and_every_foreign_key_resolves(catalogue, tmp_path):
    bag = build(tmp_path, chunk_size=2).bag_dir
    package = json.loads((bag / "data" / "datapackage.json").read_text(encoding="utf-8"))
    tables = {r["name"]: table(bag, r["name"]) for r in package["resources"] if r["name"] != "release"}
    assert {
        "work_table",
        "model_table",
        "model_alias_table",
        "task_equivalence_table",
        "agreements",
        "agreement_measurements",
    } <= set(tables)
    checked = 0
    for resource in package["resources"]:
        if resource["name"] == "release":
            continue
        schema, rows = resource["schema"], tables[resource["name"]]
        keys = [tuple(row[f] for f in schema["primaryKey"]) for row in rows]
        assert len(keys) == len(set(keys)) and keys == sorted(keys), resource["name"]
        for fk in schema.get("foreignKeys", []):
            target = fk["reference"]["resource"] or resource["name"]
            present = {tuple(row[f] for f in fk["reference"]["fields"]) for row in tables[target]}
            for row in rows:
                value = tuple(row[f] for f in fk["fields"])
                if any(value):
                    assert value in present, (resource["name"], fk, value)
                    checked += 1
    assert checked > 30
    named = {r["name"]: r["schema"].get("foreignKeys", []) for r in package["resources"] if r["name"] != "release"}
    assert {"fields": ["model_id"], "reference": {"resource": "model_table", "fields": ["model_id"]}} in named[
        "model_evaluation_matrix"
    ]
    assert {"fields": ["work_id"], "reference": {"resource": "work_table", "fields": ["work_id"]}} in named[
        "source_table"
    ]
    measurements_schema = next(r for r in package["resources"] if r["name"] == "agreement_measurements")["schema"]
    assert measurements_schema["primaryKey"] == ["agreement_id", "result_id"]


def test_frictionless_validates_the_package_with_its_new_tables(catalogue, tmp_path):
    bag = build(tmp_path).bag_dir
    completed = subprocess.run(
        [str(FRICTIONLESS), "validate", "--json", "datapackage.json"],
        cwd=bag / "data",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert json.loads(completed.stdout)["valid"] is True


def test_frictionless_finds_an_agreement_measurement_whose_result_is_not_in_the_matrix(catalogue, tmp_path):
    """The foreign keys are declared, not decoration: a measurement naming no result of the matrix fails."""
    from releases import identity_rows
    from releases.bundle import write_bundle

    rows = list(identity_rows.agreement_measurement_rows(chunk_size=100))
    rows[0] = {**rows[0], "result_id": "a-result-nobody-exported"}
    tables = [
        (spec, rows if spec.name == "agreement_measurements" else given)
        for spec, given in catalogue_rows.bundle_tables(chunk_size=100)
    ]
    bag = write_bundle(
        tables=tables,
        release_date=DATE,
        release_metadata=catalogue_rows.release_metadata(),
        package_name=catalogue_rows.PACKAGE_NAME,
        package_title=catalogue_rows.PACKAGE_TITLE,
        output_dir=tmp_path,
        bag_info_extra=catalogue_rows.bag_info_extra(),
        chunk_rows=100,
    ).bag_dir
    completed = subprocess.run(
        [str(FRICTIONLESS), "validate", "--json", "datapackage.json"],
        cwd=bag / "data",
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(completed.stdout)
    assert report["valid"] is False
    errors = [error for task in report["tasks"] for error in task["errors"]]
    assert {error["type"] for error in errors} == {"foreign-key"}
    assert any("a-result-nobody-exported" in json.dumps(error) for error in errors)


def test_two_builds_of_the_same_catalogue_are_byte_identical_whatever_the_chunk(catalogue, tmp_path):
    first = build(tmp_path / "one", chunk_size=1)
    second = build(tmp_path / "two", chunk_size=10_000)
    assert first.release_id == second.release_id
    assert all_files(tmp_path / "one") == all_files(tmp_path / "two")
    assert first.row_counts["agreements"] == 2 and first.row_counts["agreement_measurements"] == 5


def test_a_published_release_holds_the_identity_records_and_a_new_alias_is_a_change(
    catalogue, releases_dir, release_manager, build_now
):
    from releases.services import release_cut

    release = build_now(release_cut(actor=release_manager))
    assert release.status == ReleaseStatus.PUBLISHED, release.build.error
    held = set(ReleaseRecord.objects.filter(release=release).values_list("record_type", "stable_id"))
    assert {
        ("work", "nguyen-2023-hyenadna"),
        ("genomicmodel", "hyenadna-tiny-1k"),
        ("modelalias", "alias-hyenadna-1kb"),
        ("modelalias", "alias-hyenadna-1-6m"),
        ("taskequivalence", "suite-a-enhancers-is-suite-b-enhancers"),
    } <= held
    assert (
        release.counts["rows"]["agreements"] == 2 and release.counts["format_version"] == catalogue_rows.FORMAT_VERSION
    )
    assert json.loads((bag_of(release) / "data" / "release.json").read_text())["agreement_rule"] == (
        agreement.AGREEMENT_RULE
    )
    ModelAliasFactory(
        stable_id="alias-hyenadna-tiny", model=catalogue.model, alias="HyenaDNA tiny", source=catalogue.paper
    )
    second = build_now(release_cut(actor=release_manager))
    assert second.status == ReleaseStatus.PUBLISHED, second.build.error
    assert second.counts["added"] == {"modelalias": 1} and second.counts["changed"] == {}


def test_the_agreements_are_read_a_batch_of_subjects_at_a_time(catalogue, django_assert_max_num_queries):
    """Chunked per task family and per batch of subjects: the same rows whatever the chunk, and the
    number of queries grows with the batches, not with the evaluations: here one family and one
    batch, whose models' and configurations' evaluations are each read in seven queries."""
    from releases import identity_rows

    whole = sorted(identity_rows.agreement_measurement_rows(chunk_size=10_000), key=lambda r: r["result_id"])
    one_by_one = sorted(identity_rows.agreement_measurement_rows(chunk_size=1), key=lambda r: r["result_id"])
    assert whole == one_by_one and len(whole) == 5
    with django_assert_max_num_queries(18):
        assert len(list(identity_rows.agreement_rows(chunk_size=10_000))) == 2


def test_both_agreement_tables_come_from_one_computation_with_the_rows_each_gives_alone(catalogue, monkeypatch):
    """The build's two agreement tables compute the agreements once (the second reads back what the
    first spilled), and hold what each table's own function gives."""
    from releases import identity_rows

    alone = {
        "agreements": list(identity_rows.agreement_rows(chunk_size=1)),
        "agreement_measurements": list(identity_rows.agreement_measurement_rows(chunk_size=1)),
    }
    computed = []
    real = identity_rows.family_agreements

    def counted(*, chunk_size):
        computed.append(chunk_size)
        return real(chunk_size=chunk_size)

    monkeypatch.setattr(identity_rows, "family_agreements", counted)
    (agreements, rows), (measurements, more) = identity_rows.agreement_tables(chunk_size=1)
    with pytest.raises(RuntimeError, match="written before"):
        next(more)
    (_, rows), (_, more) = identity_rows.agreement_tables(chunk_size=1)
    computed.clear()
    together = {agreements.name: list(rows), measurements.name: list(more)}
    assert computed == [1]
    assert together == alone and len(together["agreement_measurements"]) == 5


def test_the_agreements_hold_a_batch_of_evaluations_in_memory_not_the_catalogue(db):
    """Many subjects on one task: read in batches of the chunk, the peak is a fraction of reading them at once."""
    import tracemalloc

    from releases import identity_rows

    protocol = ProtocolFactory(metric_short_name="MCC", metric_unit="MCC")
    task = DatasetFactory(stable_id="one-task")
    configurations = Configuration.objects.bulk_create(
        Configuration(stable_id=f"c-{i:04d}", name=f"Configuration {i}") for i in range(800)
    )
    evaluations = Evaluation.objects.bulk_create(
        Evaluation(
            stable_id=f"e-{i:04d}",
            title=f"Evaluation {i}",
            protocol=protocol,
            configuration=configuration,
            dataset=task,
            source=protocol.source,
            measured_by=MeasuredBy.AUTHORS,
            reading_method=ReadingMethod.TABLE,
            quote="q" * 500,
        )
        for i, configuration in enumerate(configurations)
    )
    Result.objects.bulk_create(
        Result(evaluation=e, stable_id=f"r-{i:04d}", value=Decimal("0.5"), unit="MCC", printed_value="0.5")
        for i, e in enumerate(evaluations)
    )

    def peak(chunk: int) -> tuple[int, int]:
        tracemalloc.start()
        try:
            rows = sum(1 for _ in identity_rows.agreement_measurement_rows(chunk_size=chunk))
            return rows, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(40)  # once first, so that neither measure counts what the first query compiles and caches
    (rows_in_batches, in_batches), (rows_at_once, at_once) = peak(40), peak(10_000)
    assert rows_at_once == rows_in_batches == 800
    assert in_batches * 4 < at_once, (in_batches, at_once)
