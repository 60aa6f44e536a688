"""A release built from the real database: a valid bag of a valid data package, byte-reproducible.

The writer's own tests (test_bundle.py) check it on synthetic rows; these build the seeded
catalogue through releases.catalogue_rows and the service, on whichever backend the suite runs on (CI runs
it on PostgreSQL and on SQLite).
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import os
import stat
import subprocess
import sys
import tarfile
from decimal import Decimal
from pathlib import Path
from unittest import mock

import bagit
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records.models import (
    BaselineRole,
    BaselineStatus,
    Configuration,
    Dataset,
    Evaluation,
    Protocol,
    Result,
    Source,
    Work,
)
from records.seed import CONCERN, PROTOCOL_ID, QUOTE, SUITE_ID
from releases import catalogue_rows, store
from releases.build import release_build
from releases.bundle import read_csv_rows
from releases.fixity import release_verify
from releases.models import FileKind, ReleaseRecord, ReleaseStatus
from releases.selectors import latest_published, releases_containing
from releases.services import release_cut
from tests.conftest import database_url_for
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    ProtocolFactory,
    ResultFactory,
    SourceFactory,
)

ROOT = Path(__file__).resolve().parents[2]
FRICTIONLESS = Path(sys.executable).parent / "frictionless"
DATE = datetime.date(2026, 11, 1)

# The sha256 of manifest-sha256.txt of the seeded catalogue's bundle, on every backend. It changes
# only when the seed, the catalogue's rows or the writer change: then update it, after checking
# that the SQLite and the PostgreSQL runs print the same new value.
SEED_PAYLOAD_DIGEST_PREFIX = "f12b3c602b1c"

pytestmark = pytest.mark.django_db


def table(bag: Path, name: str) -> list[dict[str, str]]:
    with gzip.open(bag / "data" / f"{name}.csv.gz", "rt", encoding="utf-8", newline="") as handle:
        rows = list(read_csv_rows(handle))
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def bag_of(release) -> Path:
    from releases.store import release_directory

    return release_directory(release.release_id) / release.release_id


def all_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_built_release_and_its_unpacked_archive_validate_with_bagit(published_release, tmp_path):
    bag = bag_of(published_release)
    bagit.Bag(str(bag)).validate()
    with tarfile.open(bag.parent / f"{published_release.release_id}.tar.gz") as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    bagit.Bag(str(tmp_path / "unpacked" / published_release.release_id)).validate()
    info = (bag / "bag-info.txt").read_text()
    assert f"Bagging-Date: {published_release.release_date.isoformat()}\n" in info
    assert f"External-Identifier: {published_release.release_id}\n" in info
    assert "Payload-Oxum: " in info


def test_a_build_validates_installs_and_makes_read_only_once(seeded, releases_dir, release_manager):
    """One build path: the writer only writes; the build validates the bag, installs it and protects it, each once."""
    validate, install, make_read_only = bagit.Bag.validate, store.install, store.make_read_only
    with (
        mock.patch.object(bagit.Bag, "validate", autospec=True, side_effect=validate) as validated,
        mock.patch.object(store, "install", side_effect=install) as installed,
        mock.patch.object(store, "make_read_only", side_effect=make_read_only) as protected,
    ):
        release = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert release.status == ReleaseStatus.PUBLISHED, release.build.error
    assert (validated.call_count, installed.call_count, protected.call_count) == (1, 1, 1)
    bag = bag_of(release)
    assert {stat.S_IMODE(p.stat().st_mode) for p in bag.parent.rglob("*") if p.is_file()} == {0o444}
    assert {stat.S_IMODE(p.stat().st_mode) for p in [bag.parent, *bag.parent.rglob("*")] if p.is_dir()} == {0o555}
    assert release.payload_sha256 == hashlib.sha256((bag / "manifest-sha256.txt").read_bytes()).hexdigest()
    assert release.release_id.endswith(release.payload_sha256[:12])


def test_frictionless_validates_the_built_data_package(published_release):
    completed = subprocess.run(
        [str(FRICTIONLESS), "validate", "--json", "datapackage.json"],
        cwd=bag_of(published_release) / "data",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert json.loads(completed.stdout)["valid"] is True


def test_sha256sum_checks_the_built_manifests(published_release):
    bag = bag_of(published_release)
    for manifest in ("manifest-sha256.txt", "tagmanifest-sha256.txt"):
        completed = subprocess.run(["sha256sum", "--strict", "-c", manifest], cwd=bag, capture_output=True, text=True)
        assert completed.returncode == 0, completed.stdout + completed.stderr


def test_a_flipped_byte_in_the_matrix_fails_bagit_sha256sum_and_frictionless(published_release, tmp_path):
    copy = tmp_path / "copy"
    with tarfile.open(bag_of(published_release).parent / f"{published_release.release_id}.tar.gz") as archive:
        archive.extractall(copy, filter="data")
    bag = copy / published_release.release_id
    target = bag / "data" / "model_evaluation_matrix.csv.gz"
    target.chmod(0o644)
    content = bytearray(target.read_bytes())
    content[len(content) // 2] ^= 0x01
    target.write_bytes(bytes(content))
    with pytest.raises(bagit.BagValidationError):
        bagit.Bag(str(bag)).validate()
    assert subprocess.run(["sha256sum", "-c", "manifest-sha256.txt"], cwd=bag, capture_output=True).returncode != 0
    completed = subprocess.run(
        [str(FRICTIONLESS), "validate", "datapackage.json"],
        cwd=bag / "data",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode != 0


def test_verify_release_finds_a_flipped_byte_in_any_file(published_release):
    assert release_verify(release=published_release).intact
    names = list(published_release.files.values_list("name", flat=True))
    from releases.store import release_file_path

    for name in names:
        path = release_file_path(published_release, name)
        path.parent.chmod(0o755)
        path.chmod(0o644)
        original = path.read_bytes()
        flipped = bytearray(original)
        flipped[len(flipped) // 2] ^= 0x20
        path.write_bytes(bytes(flipped))
        path.chmod(0o444)
        problems = release_verify(release=published_release).problems
        assert any(problem.startswith(f"{name}: sha256") for problem in problems), (name, problems)
        path.chmod(0o644)
        path.write_bytes(original)
        path.chmod(0o444)
        path.parent.chmod(0o555)
    assert release_verify(release=published_release).intact


def test_two_builds_of_the_same_catalogue_give_identical_bytes_and_id(seeded, tmp_path):
    first = catalogue_rows.bundle_write(output_dir=tmp_path / "one", release_date=DATE, chunk_size=1)
    second = catalogue_rows.bundle_write(output_dir=tmp_path / "two", release_date=DATE, chunk_size=10_000)
    assert first.release_id == second.release_id
    assert all_files(tmp_path / "one") == all_files(tmp_path / "two")


def test_the_seed_catalogue_has_the_same_payload_on_every_backend(seeded, settings, tmp_path):
    settings.PORTAL_SITE_NAME = "Rewire"
    result = catalogue_rows.bundle_write(output_dir=tmp_path, release_date=DATE, chunk_size=3)
    assert result.release_id == f"{DATE.isoformat()}-{SEED_PAYLOAD_DIGEST_PREFIX}", (
        f"the seed catalogue's payload changed on {connection.vendor}: {result.release_id}"
    )


@pytest.mark.django_db(transaction=True)
def test_a_build_in_tokyo_gives_the_same_bytes_and_id_as_one_in_utc(seeded, tmp_path):
    here = catalogue_rows.bundle_write(output_dir=tmp_path / "utc", release_date=DATE, chunk_size=2)
    env = {
        **os.environ,
        "TZ": "Asia/Tokyo",
        "DJANGO_SETTINGS_MODULE": "tests.releases.tokyo_settings",
        "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor),
    }
    completed = subprocess.run(
        [sys.executable, "-m", "tests.releases.build_in_subprocess", str(tmp_path / "tokyo"), DATE.isoformat()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    there = json.loads(completed.stdout)
    assert there["time_zone"] == "Asia/Tokyo" and there["local_offset_seconds"] == 9 * 3600
    assert there["release_id"] == here.release_id
    assert all_files(tmp_path / "tokyo") == all_files(tmp_path / "utc")


def test_the_tables_hold_every_record_with_its_review_state_comparability_and_concern(published_release):
    bag = bag_of(published_release)
    matrix = table(bag, "model_evaluation_matrix")
    assert sorted(row["value"] for row in matrix) == ["20", "50"]
    for row in matrix:
        assert row["review_state"] == "excluded" and row["comparable"] == "false"
        assert row["concern"] == CONCERN and row["quote"] == QUOTE
        assert row["unit"] == "minute" and row["measured_by"] == "authors" and row["protocol_id"] == PROTOCOL_ID
    [coverage] = table(bag, "protocol_coverage")
    assert coverage["protocol_id"] == PROTOCOL_ID and coverage["review_state"] == "source_checked"
    assert coverage["comparable"] == "true"
    assert (coverage["evaluations"], coverage["evaluations_excluded"], coverage["evaluations_source_checked"]) == (
        "2",
        "2",
        "0",
    )
    assert (
        coverage["evaluations_measured_by_authors"],
        coverage["evaluations_measured_by_portal"],
        coverage["results"],
    ) == ("2", "0", "2")
    assert coverage["null_control_status"] == "proposed" and coverage["null_control_measured"] == "false"
    assert coverage["conventional_reference_role_id"] == f"{PROTOCOL_ID}-conventional-reference"
    assert coverage["has_reviewed_recipe"] == "false"
    assert {row["source_id"] for row in table(bag, "source_table")} == set(
        Source.objects.values_list("stable_id", flat=True)
    )
    assert table(bag, "evidence") == []
    [protocol] = table(bag, "protocol_table")
    assert (protocol["metric_unit"], protocol["metric_direction"], protocol["metric_description"]) == (
        "minute",
        "lower",
        "Mean wall time per IA3 fine-tuning run",
    )
    assert (
        json.loads(protocol["limitations"])[0].startswith("Developer-reported average")
        and protocol["dataset_ids"] == SUITE_ID
    )
    tasks = [row for row in table(bag, "dataset_table") if row["suite_id"] == SUITE_ID]
    assert len(tasks) == 18 and all(row["train_size"] and row["metric"] == "MCC" for row in tasks)
    assert {row["configuration_id"] for row in table(bag, "configuration_table")} == set(
        Configuration.objects.values_list("stable_id", flat=True)
    )
    assert published_release.counts["rows"] == {
        "protocol_coverage": 1,
        "model_evaluation_matrix": 2,
        "protocol_table": 1,
        "dataset_table": 19,
        "configuration_table": Configuration.objects.count(),
        "source_table": 2,
        "evidence": 0,
        "work_table": 2,
        "model_table": 0,
        "model_alias_table": 0,
        "task_equivalence_table": 0,
        "agreements": len({row["configuration_id"] for row in matrix}),
        "agreement_measurements": 2,
    }


def test_decimals_are_written_as_stored_and_rows_sorted_in_python(seeded, tmp_path):
    evaluation = EvaluationFactory(protocol=Protocol.objects.get(stable_id=PROTOCOL_ID))
    for stable_id, value in [("b-result", "0.000100"), ("B-result", "123456789.123456"), ("a-result", "-2.5")]:
        ResultFactory(
            evaluation=evaluation, stable_id=stable_id, value=Decimal(value), printed_value=f'{value}, "as printed"\n'
        )
    result = catalogue_rows.bundle_write(output_dir=tmp_path, release_date=DATE, chunk_size=2)
    rows = table(result.bag_dir, "model_evaluation_matrix")
    ids = [row["result_id"] for row in rows]
    assert ids == sorted(ids) and ids.index("B-result") < ids.index("a-result")  # code point order, not a collation
    values = {row["result_id"]: (row["value"], row["printed_value"]) for row in rows}
    assert values["b-result"] == ("0.000100", '0.000100, "as printed"\n')  # the printed precision, trailing zeros kept
    assert values["B-result"][0] == "123456789.123456" and values["a-result"][0] == "-2.5"


def test_has_reviewed_recipe_comes_from_the_benchmarks_reviewed_recipes(seeded, tmp_path):
    from benchmarks.seed import seed_recipes
    from tests.helpers import apply_transitions

    [(recipe, _created)] = seed_recipes()
    apply_transitions(recipe, "check_source")
    result = catalogue_rows.bundle_write(output_dir=tmp_path, release_date=DATE, chunk_size=5)
    assert [row["has_reviewed_recipe"] for row in table(result.bag_dir, "protocol_coverage")] == ["true"]


def test_a_published_release_lists_every_exported_record_and_record_pages_name_it(published_release):
    memberships = set(ReleaseRecord.objects.filter(release=published_release).values_list("record_type", "stable_id"))
    expected = {("protocol", PROTOCOL_ID)}
    expected |= {("evaluation", s) for s in Evaluation.objects.values_list("stable_id", flat=True)}
    expected |= {("result", s) for s in Result.objects.values_list("stable_id", flat=True)}
    expected |= {("source", s) for s in Source.objects.values_list("stable_id", flat=True)}
    expected |= {("configuration", s) for s in Configuration.objects.values_list("stable_id", flat=True)}
    expected |= {("baselinerole", s) for s in BaselineRole.objects.values_list("stable_id", flat=True)}
    expected |= {("dataset", s) for s in Dataset.objects.values_list("stable_id", flat=True)}  # every task, used or not
    expected |= {("work", s) for s in Work.objects.values_list("stable_id", flat=True)}
    assert memberships == expected
    assert all(
        len(h) == 64
        for h in ReleaseRecord.objects.filter(release=published_release).values_list("content_sha256", flat=True)
    )
    evaluation_id = Evaluation.objects.values_list("stable_id", flat=True).first()
    containing = releases_containing(record_type="evaluation", stable_id=evaluation_id)
    assert containing[0] == published_release and containing[1].is_external  # the seed's external release too
    assert latest_published() == published_release


def test_a_release_has_its_payload_tag_and_archive_files_with_their_checksums(published_release):
    files = {f.name: f for f in published_release.files.all()}
    assert {name for name, f in files.items() if f.kind == FileKind.PAYLOAD} == {
        "data/protocol_coverage.csv.gz",
        "data/model_evaluation_matrix.csv.gz",
        "data/protocol_table.csv.gz",
        "data/dataset_table.csv.gz",
        "data/configuration_table.csv.gz",
        "data/source_table.csv.gz",
        "data/evidence.csv.gz",
        "data/work_table.csv.gz",
        "data/model_table.csv.gz",
        "data/model_alias_table.csv.gz",
        "data/task_equivalence_table.csv.gz",
        "data/agreements.csv.gz",
        "data/agreement_measurements.csv.gz",
        "data/datapackage.json",
        "data/release.json",
    }
    assert {name for name, f in files.items() if f.kind == FileKind.TAG} == {
        "bagit.txt",
        "bag-info.txt",
        "manifest-sha256.txt",
        "manifest-sha512.txt",
        "metadata/changes.csv",
        "metadata/datacite.json",
        "metadata/datapackage.json",
        "tagmanifest-sha256.txt",
        "tagmanifest-sha512.txt",
    }
    assert files[f"{published_release.release_id}.tar.gz"].kind == FileKind.ARCHIVE
    manifest = (bag_of(published_release) / "manifest-sha256.txt").read_text()
    for name, f in files.items():
        if f.kind == FileKind.PAYLOAD:
            assert f"{f.sha256}  {name}\n" in manifest
    datapackage = json.loads((bag_of(published_release) / "data" / "datapackage.json").read_text())
    resources = {r["name"]: r for r in datapackage["resources"]}
    coverage = resources["protocol_coverage"]["schema"]
    assert coverage["primaryKey"] == ["protocol_id"]
    assert {"fields": ["source_id"], "reference": {"resource": "source_table", "fields": ["source_id"]}} in coverage[
        "foreignKeys"
    ]
    states = next(f for f in resources["model_evaluation_matrix"]["schema"]["fields"] if f["name"] == "review_state")
    assert states["constraints"] == {
        "required": True,
        "enum": ["proposed", "source_checked", "excluded", "excluded_recheck"],
    }
    matrix_keys = resources["model_evaluation_matrix"]["schema"]["foreignKeys"]
    assert {
        "fields": ["dataset_id"],
        "reference": {"resource": "dataset_table", "fields": ["dataset_id"]},
    } in matrix_keys
    assert {
        "fields": ["reference_configuration_id"],
        "reference": {"resource": "configuration_table", "fields": ["configuration_id"]},
    } in matrix_keys
    # A task's suite is a row of the same table: Table Schema names its own resource "".
    assert {"fields": ["suite_id"], "reference": {"resource": "", "fields": ["dataset_id"]}} in resources[
        "dataset_table"
    ]["schema"]["foreignKeys"]
    assert (
        resources["model_evaluation_matrix"]["hash"] == f"sha256:{files['data/model_evaluation_matrix.csv.gz'].sha256}"
    )


def test_the_files_are_read_only_and_nothing_is_left_in_staging(published_release, releases_dir):
    directory = releases_dir / published_release.release_id
    assert [p.name for p in releases_dir.iterdir()] == [published_release.release_id]
    for path in [directory, *directory.rglob("*")]:
        assert path.stat().st_mode & 0o222 == 0, path


def test_the_catalogue_rows_are_read_in_chunks_never_a_table_at_once(db):
    protocol = ProtocolFactory()
    configuration, dataset = ConfigurationFactory(), DatasetFactory()
    for _ in range(7):
        ResultFactory(evaluation=EvaluationFactory(protocol=protocol, configuration=configuration, dataset=dataset))
    for _ in range(4):
        ProtocolFactory()
    rows = catalogue_rows.matrix_rows(chunk_size=3)
    with CaptureQueriesContext(connection) as queries:
        first = next(rows)
    # a generator, read lazily: one query for the first chunk of results, one for their evaluations
    assert first["result_id"].startswith("result-") and len(queries) == 2
    assert len(list(rows)) == 6
    with CaptureQueriesContext(connection) as queries:
        coverage = list(catalogue_rows.coverage_rows(chunk_size=2))
    assert len(coverage) == 5
    # Three chunks of protocols, five queries each (protocols, counts, results, roles, recipes), and the empty last page.
    assert len(queries) == 3 * 5 + 1


def test_the_release_and_the_coverage_page_say_the_same_of_a_protocols_coverage(db):
    """One rule (records.coverage): a retired baseline role is not measured, even when its configuration is."""
    from pages import coverage_matrix
    from records import coverage
    from tests.helpers import apply_transitions

    protocol = ProtocolFactory()
    control, reference = ConfigurationFactory(), ConfigurationFactory()
    for configuration in (control, reference):
        apply_transitions(EvaluationFactory(protocol=protocol, configuration=configuration), "check_source")
    EvaluationFactory(protocol=protocol, configuration=control)  # proposed
    BaselineRole.objects.create(
        stable_id="null", protocol=protocol, kind="null_control", selection_rule="r", configuration=control
    )
    BaselineRole.objects.create(
        stable_id="ref",
        protocol=protocol,
        kind="conventional_reference",
        selection_rule="r",
        configuration=reference,
        status=BaselineStatus.RETIRED,
    )
    [row] = catalogue_rows.coverage_rows(chunk_size=10)
    assert (row["null_control_measured"], row["conventional_reference_measured"]) == (True, False)
    assert (row["conventional_reference_status"], row["conventional_reference_configuration_id"]) == (
        "retired",
        reference.stable_id,
    )
    assert (row["evaluations"], row["evaluations_source_checked"], row["evaluations_proposed"]) == (3, 2, 1)
    [line] = coverage_matrix.coverage_matrix(filters=coverage.Filters()).lines
    assert (line.null_control_measured, line.conventional_reference_measured) == (True, False)
    assert line.summary.by_state == {"source_checked": 2, "proposed": 1}
    digests = {
        stable_id: digest
        for kind, stable_id, digest in catalogue_rows.derived_memberships(chunk_size=10)
        if kind == "baselinerole"
    }
    assert digests["ref"] == catalogue_rows.content_digest(
        ["ref", protocol.stable_id, "conventional_reference", "retired", reference.stable_id, False]
    )


def test_a_release_in_a_new_format_compares_which_records_it_holds_not_their_content(
    seeded, releases_dir, release_manager, client, monkeypatch
):
    """Every digest covers a record's exported columns: a new format changes them all, so content is
    compared only between releases of one format, and nothing reads as changed merely by the format."""
    monkeypatch.setattr(catalogue_rows, "FORMAT_VERSION", 1)
    first = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert first.status == ReleaseStatus.PUBLISHED and first.counts["format_version"] == 1
    monkeypatch.undo()
    SourceFactory(stable_id="a-source-new-in-format-2")
    second = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert second.status == ReleaseStatus.PUBLISHED, second.build.error
    assert (second.counts["added"], second.counts["removed"], second.counts["changed"]) == ({"source": 1}, {}, {})
    assert "written in an earlier format" in client.get(f"/releases/{second.release_id}/").content.decode()


RESULT_500M = "nt-500m-ia3-finetune-runtime-dalla-torre-2025-runtime"


def test_a_release_build_refuses_rows_whose_value_contradicts_their_quote_and_names_them(
    seeded, releases_dir, release_manager, build_now
):
    from records.models import Result
    from releases.services import release_cut

    Result.objects.filter(stable_id=RESULT_500M).update(value="15", printed_value="15 min")
    release = build_now(release_cut(actor=release_manager))
    assert release.status == "failed"
    assert release.build.error.startswith(
        f"1 result(s) contradict their evaluation's quote with no reason recorded ({RESULT_500M}: its quote does not print 15"
    )
    Result.objects.filter(stable_id=RESULT_500M).update(quote_mismatch_reason="The Discussion's figure.")
    assert build_now(release_cut(actor=release_manager)).status == "published"
