"""A release of real papers' tables holds everything needed to judge a conflict, with every printed
digit, and validates with the official tools (bagit, frictionless, sha256sum -c)."""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict

import bagit
import frictionless
import pytest

from records.examples import example_document, example_paths
from records.values import exact_text, parse_exact
from tests.helpers import load_for_module
from tests.releases.test_build import FRICTIONLESS, bag_of, table

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def papers(demo_snapshot, module_transaction):
    """The seed and every document, loaded once for the module: each test cuts its own release."""
    load_for_module(module_transaction, demo=demo_snapshot)


@pytest.fixture
def examples_release(papers, releases_dir, release_manager, build_now):
    from releases.services import release_cut

    release = build_now(release_cut(actor=release_manager))
    assert release.status == "published", release.build.error
    return release


def test_it_validates_and_holds_every_printed_digit_and_what_a_reader_needs_to_judge_a_conflict(examples_release):
    """One build of the documents (it takes seconds), checked four ways."""
    validates_with_bagit_frictionless_and_sha256sum(examples_release)
    every_value_is_released_with_its_printed_digits_and_read_back_exactly(examples_release)
    the_matrix_carries_what_a_reader_needs_to_judge_a_conflict(examples_release)
    the_agreements_are_those_of_records_agreement_over_every_evaluation_at_once(examples_release)


def validates_with_bagit_frictionless_and_sha256sum(examples_release):
    bag = bag_of(examples_release)
    bagit.Bag(str(bag)).validate()
    completed = subprocess.run(
        [str(FRICTIONLESS), "validate", "--json", "datapackage.json"],
        cwd=bag / "data",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert json.loads(completed.stdout)["valid"] is True
    for manifest in ("manifest-sha256.txt", "tagmanifest-sha256.txt"):
        assert subprocess.run(["sha256sum", "--strict", "-c", manifest], cwd=bag, capture_output=True).returncode == 0


def every_value_is_released_with_its_printed_digits_and_read_back_exactly(examples_release):
    printed = {
        result["stable_id"]: exact_text(parse_exact(result["value"]))
        for path in example_paths()
        for evaluation in example_document(path)["evaluations"]
        for result in evaluation["results"]
    }
    rows = {row["result_id"]: row for row in table(bag_of(examples_release), "model_evaluation_matrix")}
    assert {k: rows[k]["value"] for k in printed} == printed
    package = frictionless.Package(str(bag_of(examples_release) / "data" / "datapackage.json"))
    read_back = {
        row["result_id"]: str(row["value"]) for row in package.get_resource("model_evaluation_matrix").read_rows()
    }
    assert (
        read_back["dnafm-t3-human-5mc-dnabert-2-r1"] == "0.685"
        and read_back["gue-cfg-nt-2500m-multi-on-gue-epigenetic-marks-h3k79me3-r1"] == "64.70"
    )


def the_matrix_carries_what_a_reader_needs_to_judge_a_conflict(examples_release):
    bag = bag_of(examples_release)
    rows = {row["result_id"]: row for row in table(bag, "model_evaluation_matrix")}
    self_reported = rows["hyena-t42-hyenadna-1-6m-ft-ntv1-enhancers-r"]
    assert (self_reported["task_key"], self_reported["suite_id"]) == (
        "enhancers",
        "ntv1-nt-benchmark-original-18-tasks",
    )
    assert (self_reported["measured_by"], self_reported["reading_method"], self_reported["comparable"]) == (
        "authors",
        "table",
        "false",
    )
    assert self_reported["concern"].startswith("Self-reported by the HyenaDNA authors")
    leaderboard = next(row for row in rows.values() if row["evaluation_id"] == "cad-t2-hyenadna-1-6m-ft-ntv1-enhancers")
    assert (
        leaderboard["measured_by"],
        leaderboard["uncertainty_kind"],
        leaderboard["uncertainty_value"],
        leaderboard["num_runs"],
    ) == ("third_party", "range", "0.117", "10")
    assert leaderboard["measured_by_name"].startswith("InstaDeep") and leaderboard["printed_value"] == "0.517±0.117"
    speedup = next(row for row in rows.values() if row["evaluation_id"].startswith("facts-ev-speedup-hyenadna"))
    assert (speedup["relation"], speedup["value"]) == ("ratio", "160") and speedup["reference_configuration_id"]
    tokens = [row for row in rows.values() if row["protocol_id"] == "facts-proto-pretraining-tokens-seen"]
    assert {row["metric_direction"] for row in tokens} == {"none"} and "1E+12" in {row["value"] for row in tokens}
    datasets = {row["dataset_id"]: row for row in table(bag, "dataset_table")}
    assert len([row for row in datasets.values() if row["suite_id"] == "gue-benchmark"]) == 28
    configurations = {row["configuration_id"] for row in table(bag, "configuration_table")}
    assert {row["configuration_id"] for row in rows.values()} <= configurations
    protocols = {row["protocol_id"]: row for row in table(bag, "protocol_table")}
    assert protocols["gue-mcc-x100-zhou-2024"]["metric_unit"] == "MCC x 100" and json.loads(
        protocols["gue-mcc-x100-zhou-2024"]["limitations"]
    )
    sources = {row["source_id"]: row for row in table(bag, "source_table")}
    assert (sources["nguyen-2023-hyenadna"]["arxiv_id"], sources["nguyen-2023-hyenadna"]["arxiv_version"]) == (
        "2306.15794",
        "v2",
    )
    assert sources["magics-lab-dnabert-2-repository-performance-table"]["commit"].startswith("2c67d589")
    assert {row["kind"] for row in sources.values()} >= {
        "paper",
        "preprint",
        "repository",
        "model_card",
        "dataset_card",
    }


def test_the_next_release_compares_like_with_like(examples_release, release_manager, build_now, curator):
    from records.models import Result
    from records.services import record_save
    from releases.services import release_cut

    result = Result.objects.get(stable_id="dnafm-t3-human-5mc-dnabert-2-r1")
    result.value, result.printed_value = parse_exact("0.6850"), "0.6850"
    result.quote_mismatch_reason = "The supplementary table prints four places."
    record_save(record=result, actor=curator, changed_fields=["value", "printed_value", "quote_mismatch_reason"])
    second = build_now(release_cut(actor=release_manager))
    assert second.status == "published", second.build.error
    assert second.counts["removed"] == {} and second.counts["added"] == {}
    assert second.counts["changed"] == {
        "evaluation": 1,
        "result": 1,
    }  # a trailing zero is a change; the evaluation reopened


def the_agreements_are_those_of_records_agreement_over_every_evaluation_at_once(examples_release):
    """The release computes them a task family and a batch of subjects at a time; one call over the
    whole catalogue (as the API's agreements list makes) gives the same verdicts and measurements."""
    from records import agreement
    from records.models import Dataset

    roots = agreement.task_families()
    stable_ids = dict(Dataset.objects.values_list("pk", "stable_id"))
    members: dict[int, set[int]] = defaultdict(set)
    for task, root in roots.items():
        members[root].add(task)
    expected = {}
    for found in agreement.agreements(list(agreement.evidence_queryset()), roots):
        root = roots.get(found.task.pk, found.task.pk)
        first_task = min(stable_ids[task] for task in members.get(root) or {root})
        kind = "model" if found.subject_is_model else "configuration"
        printings = sorted(
            (printing.result.stable_id, "compared" if printing is measurement.shown else "copy")
            for measurement in found.measurements
            for printing in measurement.printings
        )
        expected[f"{kind}:{found.subject.stable_id}|{first_task}|{found.metric}"] = (
            found.verdict,
            len(found.measurements),
            printings,
        )
    bag = bag_of(examples_release)
    counted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for row in table(bag, "agreement_measurements"):
        counted[row["agreement_id"]].append((row["result_id"], row["counted_as"]))
    released = {
        row["agreement_id"]: (row["verdict"], int(row["measurements"]), sorted(counted[row["agreement_id"]]))
        for row in table(bag, "agreements")
    }
    assert released == expected and len(released) > 100
    verdicts = {verdict for verdict, _, _ in released.values()}
    assert {agreement.Verdict.SINGLE, agreement.Verdict.CONSISTENT} <= verdicts
