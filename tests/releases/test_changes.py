"""The change list a bundle carries against an earlier release (metadata/changes.csv), read as a data
user reads it: with csv, bagit, sha256sum and the frictionless CLI."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import bagit
import pytest

from releases.bundle import BundleError, BundleResult, EarlierRelease
from tests.releases.bundle_data import (
    MODELS,
    RESULTS,
    SOURCES,
    build,
    model_rows,
    result_rows,
    source_rows,
    writable_copy,
)

pytestmark = pytest.mark.backend_independent

FRICTIONLESS = Path(sys.executable).parent / "frictionless"


def changes_of(bundle: BundleResult) -> list[dict[str, str]]:
    text = (bundle.bag_dir / "metadata" / "changes.csv").read_bytes().decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def earlier(bundle: BundleResult) -> EarlierRelease:
    return EarlierRelease(release_id=bundle.release_id, bag=bundle.bag_dir)


def edited_tables() -> list:
    """The bundle_data tables with one source removed, one added, one retitled and one result's value
    and state changed."""
    sources = [row for row in source_rows() if row["source_id"] != "src-3"]
    sources.append({"source_id": "src-99", "title": "New", "kind": "paper", "year": 2026})
    next(row for row in sources if row["source_id"] == "src-5")["title"] = "Retitled"
    results = result_rows()
    changed = next(row for row in results if row["replicate"] == 10)
    changed["value"], changed["state"] = Decimal("0.9000"), "disputed"
    return [(SOURCES, sources), (MODELS, model_rows()), (RESULTS, results)]


@pytest.fixture
def first(tmp_path: Path) -> BundleResult:
    return build(tmp_path / "first", changes_against=EarlierRelease())


def test_it_lists_each_row_added_removed_and_changed_with_the_columns_that_changed(
    first: BundleResult, tmp_path: Path
) -> None:
    second = build(tmp_path / "second", edited_tables(), changes_against=earlier(first))
    result_key = json.dumps(["src-10", "model-2", "splice site", "10"])
    assert changes_of(second) == [
        {"table": "results", "key": result_key, "change": "changed", "fields": "value state"},
        {"table": "sources", "key": "src-3", "change": "removed", "fields": ""},
        {"table": "sources", "key": "src-5", "change": "changed", "fields": "title"},
        {"table": "sources", "key": "src-99", "change": "added", "fields": ""},
    ]
    package = json.loads((second.bag_dir / "metadata" / "datapackage.json").read_text())
    assert package["description"] == f"Changes against release {first.release_id}."


def test_without_an_earlier_release_every_row_is_added_and_the_same_rows_list_nothing(
    first: BundleResult, tmp_path: Path
) -> None:
    listed = changes_of(first)
    assert len(listed) == len(source_rows()) + len(model_rows()) + len(result_rows())
    assert {row["change"] for row in listed} == {"added"}
    # in the table's key order: an integer column (replicate 2 before 10) compared as a number
    keys = [json.loads(row["key"]) for row in listed if row["table"] == "results"]
    typed = [(source, model, task, int(replicate)) for source, model, task, replicate in keys]
    assert typed == sorted(typed) and sorted(keys) != keys
    again = build(tmp_path / "again", changes_against=earlier(first))
    assert changes_of(again) == []


def test_the_change_list_is_not_payload_the_release_id_depends_on(first: BundleResult, tmp_path: Path) -> None:
    without = build(tmp_path / "without")
    assert (without.release_id, without.manifest_sha256) == (first.release_id, first.manifest_sha256)
    assert not (without.bag_dir / "metadata" / "changes.csv").exists()
    assert "metadata/changes.csv" not in (first.bag_dir / "manifest-sha256.txt").read_text()


def test_bagit_sha256sum_and_frictionless_validate_the_change_list(first: BundleResult, tmp_path: Path) -> None:
    second = build(tmp_path / "second", edited_tables(), changes_against=earlier(first))
    bagit.Bag(str(second.bag_dir)).validate()
    tagmanifest = (second.bag_dir / "tagmanifest-sha256.txt").read_text()
    assert "  metadata/changes.csv\n" in tagmanifest and "  metadata/datapackage.json\n" in tagmanifest
    checked = subprocess.run(
        ["sha256sum", "--check", "--strict", "tagmanifest-sha256.txt"], cwd=second.bag_dir, capture_output=True
    )
    assert checked.returncode == 0, checked.stdout
    completed = subprocess.run(
        [str(FRICTIONLESS), "validate", "--json", "metadata/datapackage.json"],
        cwd=second.bag_dir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert json.loads(completed.stdout)["valid"] is True


def test_a_damaged_earlier_file_fails_the_bundle_and_leaves_nothing(first: BundleResult, tmp_path: Path) -> None:
    damaged = writable_copy(first.bag_dir, tmp_path / "damaged" / first.release_id)
    path = damaged / "data" / "sources.csv.gz"
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0x01
    path.write_bytes(bytes(content))
    output = tmp_path / "second"
    with pytest.raises(BundleError, match=r"data/sources.csv.gz does not match its manifest"):
        build(output, edited_tables(), changes_against=EarlierRelease(release_id=first.release_id, bag=damaged))
    assert list(output.iterdir()) == []
