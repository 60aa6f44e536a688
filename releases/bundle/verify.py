"""Whether a bundle is intact: bagit's full check, both manifests present, the release id
recomputed, datapackage.json's sizes and hashes true to the files."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from pathlib import Path

import bagit

from releases.bundle.bag import CHECKSUM_ALGORITHMS, RELEASE_ID_TAG, compute_release_id
from releases.bundle.package import DATAPACKAGE_JSON


def verify_bundle(bag_dir: Path) -> list[str]:
    """Return the problems found in a bundle (an empty list when it is intact).

    bagit re-hashes every payload and tag file against every manifest and tag
    manifest and checks Payload-Oxum and completeness; on top of that the release
    id in bag-info.txt is recomputed from manifest-sha256.txt, both algorithms
    must be present, and datapackage.json's ``bytes``/``hash`` must match the files.
    """
    try:
        bag = bagit.Bag(str(bag_dir))
    except bagit.BagError as exc:
        return [f"not a readable bag: {exc}"]
    problems: list[str] = []
    try:
        bag.validate(processes=1)
    except bagit.BagValidationError as exc:
        problems += [str(detail) for detail in exc.details] or [str(exc)]
    problems += _missing_manifests(bag_dir)
    sha256 = {path: hashes["sha256"] for path, hashes in bag.payload_entries().items() if "sha256" in hashes}
    problems += _release_id_problems(bag.info, sha256)
    problems += _datapackage_problems(bag_dir, sha256)
    return problems


def _missing_manifests(bag_dir: Path) -> list[str]:
    return [
        f"{kind}-{algorithm}.txt is missing"
        for kind in ("manifest", "tagmanifest")
        for algorithm in CHECKSUM_ALGORITHMS
        if not (bag_dir / f"{kind}-{algorithm}.txt").is_file()
    ]


def _release_id_problems(info: Mapping[str, object], payload_sha256: Mapping[str, str]) -> list[str]:
    recorded = info.get(RELEASE_ID_TAG)
    try:
        release_date = datetime.date.fromisoformat(str(info.get("Bagging-Date")))
    except ValueError:
        return [f"Bagging-Date {info.get('Bagging-Date')!r} is not a YYYY-MM-DD date"]
    expected = compute_release_id(release_date=release_date, payload_sha256=payload_sha256)
    if recorded != expected:
        return [f"{RELEASE_ID_TAG} is {recorded!r} but the payload manifest gives {expected!r}"]
    return []


def _datapackage_problems(bag_dir: Path, payload_sha256: Mapping[str, str]) -> list[str]:
    try:
        package = json.loads((bag_dir / "data" / DATAPACKAGE_JSON).read_bytes())
        resources = [(str(r["path"]), r.get("bytes"), r.get("hash")) for r in package["resources"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{DATAPACKAGE_JSON} is unreadable: {exc}"]
    return [
        f"{DATAPACKAGE_JSON}: bytes or hash of data/{path} does not match the file"
        for path, size, digest in resources
        if not _described_truly(bag_dir / "data" / path, size, digest, payload_sha256.get(f"data/{path}"))
    ]


def _described_truly(path: Path, size: object, digest: object, manifest_sha256: str | None) -> bool:
    """Whether datapackage.json's ``bytes`` and ``hash`` agree with the file and the manifest."""
    return path.is_file() and path.stat().st_size == size and digest == f"sha256:{manifest_sha256}"
