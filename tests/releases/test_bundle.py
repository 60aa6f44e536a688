"""Behaviour of the release bundle writer: a reproducible BagIt bag of a Frictionless package.

The checks use the tools a downloader would use (bagit, the frictionless CLI,
``sha256sum -c``) rather than this module's own reader wherever possible. The tables'
schemas, values and refused rows are checked in test_bundle_tables.py; the synthetic
tables are tests/releases/bundle_data.py's.
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import random
import socket
import stat
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import bagit
import frictionless
import pytest

from releases.bundle import (
    BAG_SOFTWARE_AGENT,
    BundleError,
    BundleResult,
    compute_release_id,
    file_info,
    read_csv_rows,
    verify_bundle,
    write_csv_rows,
)
from tests.releases.bundle_data import (
    DATA_FILES,
    RELEASE_DATE,
    RESULTS,
    all_files,
    build,
    rows_in_order,
    source_rows,
    writable_copy,
)

pytestmark = pytest.mark.backend_independent

FRICTIONLESS = Path(sys.executable).parent / "frictionless"


def flip_byte(path: Path) -> None:
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0x01
    path.write_bytes(bytes(content))


def frictionless_validate(bag_dir: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI; on a damaged gzip member it may print an error instead of a JSON report."""
    return subprocess.run(
        [str(FRICTIONLESS), "validate", "--json", str(bag_dir / "data" / "datapackage.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def error_types(report: Mapping[str, object]) -> set[str]:
    return {error["type"] for task in report["tasks"] for error in task["errors"]}  # type: ignore[index,union-attr]


def sha256sum_check(bag_dir: Path, manifest: str) -> int:
    command = ["sha256sum", "--check", "--strict", "--quiet", manifest]
    return subprocess.run(command, cwd=bag_dir, capture_output=True, check=False).returncode


def bagit_validates(bag_dir: Path) -> bool:
    try:
        return bagit.Bag(str(bag_dir)).validate()
    except bagit.BagValidationError:
        return False


# ------------------------------------------------------------------ bag checks


def test_the_bag_and_its_unpacked_tarball_validate_with_bagit(bundle: BundleResult, tmp_path: Path) -> None:
    bag = bagit.Bag(str(bundle.bag_dir))
    assert bag.validate()
    assert sorted(bag.algorithms) == ["sha256", "sha512"]
    assert sorted(bag.payload_files()) == sorted(f.name for f in bundle.payload_files)
    with tarfile.open(bundle.tarball) as tar:
        tar.extractall(tmp_path, filter="data")
    unpacked = tmp_path / bundle.release_id
    assert bagit.Bag(str(unpacked)).validate()
    assert all_files(unpacked) == all_files(bundle.bag_dir)
    assert verify_bundle(unpacked) == []


def test_frictionless_validates_the_data_package(bundle: BundleResult) -> None:
    completed = frictionless_validate(bundle.bag_dir)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = json.loads(completed.stdout)
    rows = {task["name"]: task["stats"].get("rows") for task in report["tasks"]}  # type: ignore[index,union-attr]
    assert rows == {"sources": 12, "models": 4, "results": 50, "release": None}


def test_frictionless_reads_back_exactly_the_values_written(bundle: BundleResult) -> None:
    package = frictionless.Package(str(bundle.bag_dir / "data" / "datapackage.json"))
    rows = package.get_resource("sources").read_rows()
    assert {row["source_id"]: (row["title"], row["year"]) for row in rows} == {
        row["source_id"]: (row["title"], row["year"]) for row in source_rows()
    }
    results = {row["replicate"]: row for row in package.get_resource("results").read_rows()}
    # the digits as recorded, trailing zero and exponent included
    assert str(results[0]["value"]) == "0.7340" and str(results[1]["value"]) == "1E+3"
    assert results[1]["reported_on"] == datetime.date(2024, 2, 2) and results[0]["checked"] is True


@pytest.mark.parametrize(
    ("field", "bad_value", "expected_error"),
    [
        ("metric", "f1", "constraint-error"),
        ("replicate", "three", "type-error"),
        ("source_id", "src-unknown", "foreign-key"),
    ],
)
def test_frictionless_reads_inside_the_gzip_tables(
    bundle: BundleResult, tmp_path: Path, field: str, bad_value: str, expected_error: str
) -> None:
    """A bad row written past the writer's checks, with honest bytes and hash, still fails."""
    bag_dir = writable_copy(bundle.bag_dir, tmp_path / "bag")
    table = bag_dir / "data" / "results.csv.gz"
    with gzip.open(table, "rt", encoding="utf-8", newline="") as stream:
        header, first, *rest = list(read_csv_rows(stream))
    first[header.index(field)] = bad_value
    with gzip.open(table, "wt", encoding="utf-8", newline="") as stream:
        write_csv_rows(stream, [header, first, *rest])
    descriptor_path = bag_dir / "data" / "datapackage.json"
    descriptor = json.loads(descriptor_path.read_text(encoding="utf-8"))
    for resource in descriptor["resources"]:
        if resource["path"] == table.name:
            resource["bytes"] = table.stat().st_size
            resource["hash"] = "sha256:" + hashlib.sha256(table.read_bytes()).hexdigest()
    descriptor_path.write_text(json.dumps(descriptor), encoding="utf-8")

    completed = frictionless_validate(bag_dir)

    assert completed.returncode != 0
    assert error_types(json.loads(completed.stdout)) == {expected_error}


def test_sha256sum_checks_the_manifest_and_tag_manifest(bundle: BundleResult) -> None:
    assert sha256sum_check(bundle.bag_dir, "manifest-sha256.txt") == 0
    assert sha256sum_check(bundle.bag_dir, "tagmanifest-sha256.txt") == 0


@pytest.mark.parametrize("name", ["datapackage.json", *DATA_FILES])
def test_a_flipped_byte_in_any_payload_file_is_caught(bundle: BundleResult, tmp_path: Path, name: str) -> None:
    bag_dir = writable_copy(bundle.bag_dir, tmp_path / "bag")
    flip_byte(bag_dir / "data" / name)

    assert not bagit_validates(bag_dir)
    assert sha256sum_check(bag_dir, "manifest-sha256.txt") != 0
    assert any(f"data/{name}" in problem for problem in verify_bundle(bag_dir))
    if name in DATA_FILES:
        assert frictionless_validate(bag_dir).returncode != 0


def test_verify_bundle_reports_a_changed_tag_file_and_a_wrong_release_id(bundle: BundleResult, tmp_path: Path) -> None:
    assert verify_bundle(bundle.bag_dir) == []
    bag_dir = writable_copy(bundle.bag_dir, tmp_path / "bag")
    bag_info = bag_dir / "bag-info.txt"
    text = bag_info.read_text(encoding="utf-8")
    bag_info.write_text(text.replace(bundle.release_id, "2025-03-14-000000000000"), encoding="utf-8")

    problems = verify_bundle(bag_dir)

    assert any("bag-info.txt" in problem for problem in problems)
    assert any("External-Identifier" in problem and bundle.release_id in problem for problem in problems)


# -------------------------------------------------------------- reproducibility


@pytest.fixture
def time_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    def use(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()


def test_it_gives_identical_bytes_for_the_same_rows_in_any_order_and_time_zone(
    tmp_path: Path, time_zone: Callable[[str], None]
) -> None:
    time_zone("UTC")
    utc_offset = time.localtime().tm_gmtoff
    first = build(tmp_path / "utc", rows_in_order(list))
    time_zone("Asia/Tokyo")
    assert time.localtime().tm_gmtoff != utc_offset
    second = build(tmp_path / "tokyo", rows_in_order(lambda rows: random.Random(7).sample(rows, len(rows))))
    third = build(tmp_path / "reversed", rows_in_order(lambda rows: rows[::-1]))

    assert first.release_id == second.release_id == third.release_id
    assert first.payload_files == second.payload_files == third.payload_files
    assert first.tarball_info == second.tarball_info == third.tarball_info
    assert all_files(first.bag_dir) == all_files(second.bag_dir) == all_files(third.bag_dir)
    assert first.tarball.read_bytes() == second.tarball.read_bytes() == third.tarball.read_bytes()


def test_external_sort_with_tiny_chunks_gives_the_same_bundle_as_one_chunk(tmp_path: Path) -> None:
    stages: list[tuple[str, int]] = []
    spilled = build(tmp_path / "tiny", chunk_rows=3, progress=lambda stage, rows: stages.append((stage, rows)))
    in_memory = build(tmp_path / "large", chunk_rows=100_000)

    assert len([s for s in stages if s[0] == "sort results"]) >= 50 // 3
    assert spilled.release_id == in_memory.release_id
    assert all_files(spilled.bag_dir) == all_files(in_memory.bag_dir)
    assert spilled.tarball.read_bytes() == in_memory.tarball.read_bytes()
    assert spilled.row_counts == {"sources": 12, "models": 4, "results": 50}


def test_rows_are_sorted_on_the_primary_key_as_python_strings_and_ints(bundle: BundleResult) -> None:
    with gzip.open(bundle.bag_dir / "data" / "results.csv.gz", "rt", encoding="utf-8", newline="") as stream:
        header, *rows = list(read_csv_rows(stream))
    keys = [(r[0], r[1], r[2], int(r[3])) for r in rows]
    assert keys == sorted(keys)
    assert header == [f.name for f in RESULTS.fields]
    with gzip.open(bundle.bag_dir / "data" / "sources.csv.gz", "rt", encoding="utf-8", newline="") as stream:
        source_ids = [r[0] for r in list(read_csv_rows(stream))[1:]]
    assert source_ids[:4] == ["src-0", "src-1", "src-10", "src-11"]


def test_progress_is_reported_per_chunk_not_per_row(tmp_path: Path) -> None:
    stages: list[tuple[str, int]] = []
    build(tmp_path, chunk_rows=20, progress=lambda stage, rows: stages.append((stage, rows)))

    assert ("write results", 50) in stages
    assert len([s for s in stages if s[0] == "write results"]) == 3  # at 20, 40 and the end


# ------------------------------------------------------------------ identifiers


def test_the_release_id_is_the_date_and_the_digest_of_the_payload_manifest(bundle: BundleResult) -> None:
    manifest = (bundle.bag_dir / "manifest-sha256.txt").read_bytes()
    lines = [f"{f.sha256}  {f.name}\n" for f in sorted(bundle.payload_files, key=lambda f: f.name)]
    assert manifest == "".join(lines).encode("utf-8")
    assert bundle.release_id == f"2025-03-14-{hashlib.sha256(manifest).hexdigest()[:12]}"
    assert bundle.manifest_sha256 == hashlib.sha256(manifest).hexdigest()  # what a release row stores as payload_sha256
    assert bundle.release_id == compute_release_id(
        release_date=RELEASE_DATE, payload_sha256={f.name: f.sha256 for f in bundle.payload_files}
    )
    recipe = compute_release_id.__doc__.split("::")[1].strip()  # type: ignore[union-attr]
    shell = subprocess.run(["bash", "-c", recipe], cwd=bundle.bag_dir, capture_output=True, text=True, check=True)
    assert shell.stdout.strip() == bundle.release_id


def test_bag_info_holds_only_pinned_values(bundle: BundleResult) -> None:
    payload_bytes = sum(f.bytes for f in bundle.payload_files)
    assert (bundle.bag_dir / "bag-info.txt").read_text(encoding="utf-8") == (
        f"Bag-Software-Agent: {BAG_SOFTWARE_AGENT}\n"
        "Bagging-Date: 2025-03-14\n"
        f"External-Identifier: {bundle.release_id}\n"
        f"Payload-Oxum: {payload_bytes}.5\n"
        "Source-Organization: Test lab\n"
    )
    tag_text = b"".join(p.read_bytes() for p in bundle.bag_dir.glob("*.txt"))
    assert socket.gethostname().encode() not in tag_text


def test_the_payload_depends_on_neither_the_release_id_nor_the_date(bundle: BundleResult) -> None:
    for name in ("datapackage.json", "release.json"):
        text = (bundle.bag_dir / "data" / name).read_text(encoding="utf-8")
        assert bundle.release_id not in text and RELEASE_DATE.isoformat() not in text


def test_gzip_members_and_the_tarball_carry_no_names_times_or_owners(bundle: BundleResult) -> None:
    for path in [*bundle.bag_dir.glob("data/*.gz"), bundle.tarball]:
        header = path.read_bytes()[:10]
        assert header[3] == 0, f"{path.name} has gzip flags (a file name?)"
        assert header[4:8] == b"\0\0\0\0", f"{path.name} has a gzip mtime"
    with tarfile.open(bundle.tarball) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names) and names[0] == bundle.release_id
    assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {(0, 0, "", "", 0)}
    directories = {m.name: m.mode for m in members if m.isdir()}
    assert directories == {bundle.release_id: 0o755, f"{bundle.release_id}/data": 0o755}
    assert {m.mode for m in members if m.isfile()} == {0o644}
    assert bundle.tarball.name == bundle.tarball_info.name == f"{bundle.release_id}.tar.gz"
    assert hashlib.sha512(bundle.tarball.read_bytes()).hexdigest() == bundle.tarball_info.sha512


# ------------------------------------------------------------------- output


def test_the_writer_only_writes_the_bag_and_its_archive_into_its_output_folder(tmp_path: Path) -> None:
    """Rows in, files out: validating, installing and making read-only are the build's (test_store.py)."""
    result = build(tmp_path)

    assert sorted(p.name for p in tmp_path.iterdir()) == [result.release_id, result.tarball.name]
    assert (result.bag_dir, result.tarball) == (tmp_path / result.release_id, tmp_path / f"{result.release_id}.tar.gz")
    assert all(path.stat().st_mode & stat.S_IWUSR for path in [result.tarball, *result.bag_dir.rglob("*")])
    tag_names = [
        "bagit.txt",
        "bag-info.txt",
        "manifest-sha256.txt",
        "manifest-sha512.txt",
        "tagmanifest-sha256.txt",
        "tagmanifest-sha512.txt",
    ]
    assert [info.name for info in result.tag_files] == tag_names
    assert list(result.tag_files) == [file_info(result.bag_dir / name, name) for name in tag_names]


@pytest.mark.parametrize("conflict", ["bag", "tarball"])
def test_an_existing_bag_or_tarball_of_the_same_id_is_never_overwritten(tmp_path: Path, conflict: str) -> None:
    release_id = build(tmp_path / "probe").release_id
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    if conflict == "bag":
        (output_dir / release_id).mkdir()
        (output_dir / release_id / "bagit.txt").write_text("something else\n", encoding="utf-8")
    else:
        (output_dir / f"{release_id}.tar.gz").write_bytes(b"something else")
    before = all_files(output_dir)

    with pytest.raises(BundleError, match="already exists"):
        build(output_dir)
    assert all_files(output_dir) == before, "nothing overwritten, nothing left behind"
    assert len(list(output_dir.iterdir())) == 1
