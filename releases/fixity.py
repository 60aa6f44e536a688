"""Fixity of published releases: re-hash every file against its file table, its bag manifests and its id.

`release_verify` answers for one release (manage.py verify_release), `release_fixity_check` records
the answer, `release_fixity_audit` (beat, weekly) checks every release whose files this portal holds.

Downloads check the one file they send (`file_verdict`): its sha256 and size against the file table,
once per file identity (device, inode, size, mtime and ctime in nanoseconds: any write, replacement
or `touch` changes one of them), the verdict kept in the shared cache; a damaged file is never sent
(`releases.services.release_file_serve_check` records and reports it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

from django.core.cache import cache

from releases import store
from releases.bundle import file_info, verify_bundle
from releases.models import Release, ReleaseFile, ReleaseFixityCheck, ReleaseStatus

logger = logging.getLogger(__name__)


@dataclass
class VerifyReport:
    release: Release
    problems: list[str]
    files_checked: int
    note: str = ""

    @property
    def intact(self) -> bool:
        return not self.problems


def release_verify(*, release: Release) -> VerifyReport:
    """Re-hash every file of a published release against its file table, its manifests and its id."""
    if release.status != ReleaseStatus.PUBLISHED:
        return VerifyReport(release, [f"release {release} is {release.status}, not published: nothing to verify"], 0)
    if release.is_external:
        return VerifyReport(
            release, [], 0, note=f"release {release.release_id} is external: this portal holds none of its files"
        )
    problems: list[str] = []
    checked = 0
    for record in release.files.order_by("kind", "name"):
        path = store.release_file_path(release, record.name)
        if not path.is_file():
            problems.append(f"{record.name}: missing ({path})")
            continue
        found = file_info(path, record.name)
        checked += 1
        for attribute in ("bytes", "sha256", "sha512"):
            if getattr(found, attribute) != getattr(record, attribute):
                problems.append(
                    f"{record.name}: {attribute} is {getattr(found, attribute)}, the release recorded {getattr(record, attribute)}"
                )
        if path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            problems.append(f"{record.name}: is writable; published files are read-only")
    bag = store.release_directory(release.release_id) / release.release_id
    if bag.is_dir():
        problems += [f"bag: {problem}" for problem in verify_bundle(bag)]
        info = (bag / "bag-info.txt").read_text(encoding="utf-8") if (bag / "bag-info.txt").is_file() else ""
        if f"External-Identifier: {release.release_id}\n" not in info:
            problems.append(f"bag: bag-info.txt does not name release {release.release_id}")
    else:
        problems.append(f"bag: the folder {bag} is missing")
    return VerifyReport(release, problems, checked)


def release_fixity_check(*, release: Release) -> ReleaseFixityCheck:
    """Verify one release and record the outcome."""
    report = release_verify(release=release)
    check = ReleaseFixityCheck.objects.create(
        release=release, intact=report.intact, problems="\n".join(report.problems), files_checked=report.files_checked
    )
    if not report.intact:
        logger.error("release %s failed its fixity check: %s", release.release_id, "; ".join(report.problems))
    return check


def release_fixity_audit() -> list[ReleaseFixityCheck]:
    """The weekly audit: every published release whose files this portal holds, re-hashed."""
    releases = Release.objects.published().filter(is_external=False).order_by("release_date", "id")
    # Read first: each check writes a row, and on SQLite a write beside an open cursor fails once
    # another connection has committed (see records.exports.chunks_by_pk). Releases are few.
    return [release_fixity_check(release=release) for release in list(releases)]


# ------------------------------------------------------------ one file, before it is sent

VERDICT_SECONDS = 30 * 24 * 3600
HASH_BLOCK = 1 << 20


@dataclass(frozen=True)
class FileVerdict:
    intact: bool
    problem: str = ""
    fresh: bool = False  # this call hashed the file (the verdict was not cached)


def file_identity_key(record: ReleaseFile, found: os.stat_result) -> str:
    """The cache key of a verdict: what the file table says, and which bytes on which disk were read."""
    return (
        f"releases:file-verdict:{record.sha256}:{record.bytes}:"
        f"{found.st_dev}:{found.st_ino}:{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}"
    )


def file_sha256(handle: BinaryIO) -> tuple[int, str]:
    """(bytes, sha256) of an open file from its start; the handle is left at its start."""
    handle.seek(0)
    digest, size = hashlib.sha256(), 0
    while block := handle.read(HASH_BLOCK):
        digest.update(block)
        size += len(block)
    handle.seek(0)
    return size, digest.hexdigest()


def file_verdict(*, record: ReleaseFile, handle: BinaryIO) -> FileVerdict:
    """Whether the open file holds exactly the bytes the file table records, hashing it only when
    no verdict is cached for its identity (read from the open handle: the file checked is the file
    sent, whatever happens to the path meanwhile)."""
    key = file_identity_key(record, os.fstat(handle.fileno()))
    cached = cache.get(key)
    if isinstance(cached, FileVerdict):
        return cached
    size, sha256 = file_sha256(handle)
    problems = []
    if size != record.bytes:
        problems.append(f"bytes is {size}, the release recorded {record.bytes}")
    if sha256 != record.sha256:
        problems.append(f"sha256 is {sha256}, the release recorded {record.sha256}")
    verdict = FileVerdict(intact=not problems, problem=f"{record.name}: {'; '.join(problems)}" if problems else "")
    cache.set(key, verdict, timeout=VERDICT_SECONDS)
    return FileVerdict(intact=verdict.intact, problem=verdict.problem, fresh=True)
