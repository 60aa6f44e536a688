"""Rebuilding a published release's lost or damaged files from the database (`manage.py rebuild_release`).

A release is content-addressed and its bundle is a function of the rows alone (`releases.bundle`), so
the same catalogue written again for the release's date gives the same bytes. `release_rebuild`
writes the bundle from the catalogue as it is now, in a folder of its own under RELEASES_DIR, in
this process (`catalogue_rows.bundle_write`: no memberships stored, nothing published), and compares
every file with the release's file table (bytes, sha256, sha512), the payload's digest with the
recorded one and the id with the release's. Only when every byte matches, and the staged bag
verifies, does it install them: one rename into RELEASES_DIR/<id> (a damaged folder there is first
renamed aside to RELEASES_DIR/.damaged-<id>-<time>, never overwritten), read-only, re-verified,
with an intact fixity check (which lifts the damaged mark) and a `ReleaseEvent` saying so.

It reads the current catalogue, not the catalogue as of the release: the bundle's tables are
derived from many models at once (coverage, the matrix, reviewed recipes from benchmarks), which
the history rows cannot give back as one consistent past state. So a release whose records changed
since cannot be rebuilt; the report then names each table whose file differs, with its row counts
and how many of the release's records (`ReleaseRecord`: type, stable id, digest of the exported
values) were added, removed or changed since, and nothing is installed.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from common.types import Actor, acting_user
from releases import catalogue_rows, conf, fixity, store
from releases.bundle import BundleResult, EarlierRelease, FileInfo, verify_bundle
from releases.lifecycle import RELEASES, ReleaseError
from releases.models import Release, ReleaseRecord, ReleaseStatus

logger = logging.getLogger(__name__)

REBUILD_PREFIX = ".rebuild-"  # RELEASES_DIR/.rebuild-<release pk>-<token>/: one rebuild's staging folder
DAMAGED_PREFIX = ".damaged-"  # RELEASES_DIR/.damaged-<release id>-<time>/: a damaged folder set aside

# The record types whose exported values each table holds (`catalogue_rows.bundle_tables`, `derived_memberships`).
TABLE_RECORD_TYPES: dict[str, tuple[str, ...]] = {
    "protocol_coverage": ("protocol", "evaluation", "baselinerole"),
    "model_evaluation_matrix": ("result", "evaluation"),
    "protocol_table": ("protocol",),
    "dataset_table": ("dataset",),
    "configuration_table": ("configuration",),
    "source_table": ("source",),
    "evidence": ("evidencerow",),
    "work_table": ("work",),
    "model_table": ("genomicmodel",),
    "model_alias_table": ("modelalias",),
    "task_equivalence_table": ("taskequivalence",),
    "agreements": ("evaluation", "result", "configuration", "genomicmodel", "taskequivalence", "source", "protocol"),
    "agreement_measurements": ("evaluation", "result", "configuration", "genomicmodel", "taskequivalence", "source"),
}

REINSTATED, INTACT, DIFFERS = "reinstated", "intact", "differs"


class RebuildRefused(ReleaseError):
    """A release whose files cannot be rebuilt here: not published, external, or in another format."""

    status = 409
    code = "rebuild_refused"


@dataclass
class RebuildReport:
    release: Release
    outcome: str  # REINSTATED, INTACT (nothing to do) or DIFFERS (nothing installed)
    lines: list[str] = field(default_factory=list)  # one per differing file (DIFFERS), else one summary


class _Digests:
    """The export's membership sink, kept in memory: record type -> stable id -> digest."""

    def __init__(self) -> None:
        self.by_type: dict[str, dict[str, str]] = {}

    def add(self, record_type: str, stable_id: str, content_sha256: str) -> None:
        self.by_type.setdefault(record_type, {})[stable_id] = content_sha256

    def add_many(self, record_type: str, stable_ids: Sequence[str], digests: Sequence[str]) -> None:
        self.by_type.setdefault(record_type, {}).update(zip(stable_ids, digests, strict=True))


def release_rebuild(*, release: Release, actor: Actor = None) -> RebuildReport:
    """Rebuild `release`'s files from the database and reinstate them if every byte is as recorded.

    Raises RebuildRefused for a release that is not published, is external, or was written in
    another bundle format. Returns INTACT without writing anything when its files verify; DIFFERS
    (with a line per differing file) when the catalogue no longer gives the recorded bytes;
    REINSTATED once the files are installed, verified and the event written.
    """
    _refuse_unless_rebuildable(release)
    if fixity.release_verify(release=release).intact:
        return RebuildReport(release, INTACT, [f"{release.release_id}: intact; nothing to rebuild"])
    conf.releases_dir().mkdir(parents=True, exist_ok=True)
    staging = conf.releases_dir() / f"{REBUILD_PREFIX}{release.pk}-{uuid.uuid4().hex}"
    staging.mkdir()
    try:
        result, digests = _write(release, staging)
        differences = _differences(release, result, digests)
        if differences:
            return RebuildReport(release, DIFFERS, differences)
        problems = verify_bundle(result.bag_dir)
        if problems:
            return RebuildReport(release, DIFFERS, [f"the rebuilt bag does not verify: {p}" for p in problems[:5]])
        return _reinstate(release, staging / "release", actor)
    finally:
        store.remove_tree(staging)


def _refuse_unless_rebuildable(release: Release) -> None:
    if release.status != ReleaseStatus.PUBLISHED:
        raise RebuildRefused(
            f"release {release} is {release.status}, not published: nothing to rebuild", release=release
        )
    if release.is_external:
        raise RebuildRefused(
            f"release {release.release_id} is external: this portal never held its files", release=release
        )
    written_in = (release.counts or {}).get("format_version")
    if written_in != catalogue_rows.FORMAT_VERSION:
        raise RebuildRefused(
            f"release {release.release_id} was written in bundle format {written_in}; this portal writes format "
            f"{catalogue_rows.FORMAT_VERSION}: its files cannot be rebuilt here",
            release=release,
        )


def _write(release: Release, staging: Path) -> tuple[BundleResult, _Digests]:
    """The bundle of the catalogue as it is now, for the release's date, with every record's digest;
    written again while the catalogue changed meanwhile (a curator's edit), up to the build's bound."""
    chunk = conf.chunk_rows()
    for _ in range(3):
        output = staging / "release"
        if output.exists():
            store.remove_tree(output)
        digests = _Digests()
        before = catalogue_rows.catalogue_watermark()
        result = catalogue_rows.bundle_write(
            output_dir=output,
            release_date=release.release_date,
            chunk_size=chunk,
            memberships=digests,
            changes_against=_changes_against(release),
        )
        for record_type, stable_id, digest in catalogue_rows.derived_memberships(chunk_size=chunk):
            digests.add(record_type, stable_id, digest)
        if catalogue_rows.catalogue_watermark() == before:
            return result, digests
    raise RebuildRefused("the catalogue kept changing during 3 rebuilds; run it again when curation pauses")


def _changes_against(release: Release) -> EarlierRelease | None:
    """The earlier release `release`'s change list compared with, as recorded when it was published
    (None: it has no change list)."""
    counts = release.counts or {}
    if "changes_against" not in counts:
        return None
    earlier = (
        Release.objects.filter(release_id=counts["changes_against"]).first() if counts["changes_against"] else None
    )
    return store.earlier_release(earlier)


def _differences(release: Release, result: BundleResult, digests: _Digests) -> list[str]:
    """One line per file whose rebuilt bytes differ from the release's file table (none: identical)."""
    recorded = {f.name: f for f in release.files.all()}
    rebuilt: dict[str, FileInfo] = {info.name: info for _, info in store.release_files(result)}
    if result.release_id != release.release_id:  # the tag files and the archive carry the id
        rebuilt[f"{release.release_id}.tar.gz"] = rebuilt.pop(result.tarball_info.name)
    lines: list[str] = []
    changes = _record_changes(release, digests)
    rows_then = (release.counts or {}).get("rows", {})
    for name in sorted(set(recorded) | set(rebuilt)):
        before, now = recorded.get(name), rebuilt.get(name)
        if before is None or now is None:
            lines.append(f"{name}: {'not in the release' if before is None else 'not rebuilt'}")
            continue
        if (before.bytes, before.sha256, before.sha512) == (now.bytes, now.sha256, now.sha512):
            continue
        table = Path(name).name.split(".", 1)[0] if name.startswith("data/") else ""
        if table in TABLE_RECORD_TYPES:
            count_then, count_now = rows_then.get(table, "?"), result.row_counts.get(table, "?")
            changed = "; ".join(changes[t] for t in TABLE_RECORD_TYPES[table] if t in changes) or "no record changed"
            lines.append(
                f"table {table} differs ({name}): {count_then} rows in the release, {count_now} now; "
                f"since the release: {changed}"
            )
        else:
            lines.append(f"{name} differs: sha256 {now.sha256}, the release recorded {before.sha256}")
    if not lines and (result.manifest_sha256, result.release_id) != (release.payload_sha256, release.release_id):
        lines.append(f"payload digest {result.manifest_sha256}, the release recorded {release.payload_sha256}")
    if lines:
        lines.append(
            f"the catalogue no longer gives release {release.release_id}'s bytes (rebuilt as {result.release_id}): "
            "nothing was installed; restore its files from a copy of the bag"
        )
    return lines


def _record_changes(release: Release, digests: _Digests) -> dict[str, str]:
    """Per record type: how many of the release's records were added, removed or changed since, in words."""
    then: dict[str, dict[str, str]] = {}
    for record_type, stable_id, digest in ReleaseRecord.objects.filter(release=release).values_list(
        "record_type", "stable_id", "content_sha256"
    ):
        then.setdefault(record_type, {})[stable_id] = digest
    changes: dict[str, str] = {}
    for record_type in sorted(set(then) | set(digests.by_type)):
        old, new = then.get(record_type, {}), digests.by_type.get(record_type, {})
        added = len(new.keys() - old.keys())
        removed = len(old.keys() - new.keys())
        changed = sum(1 for key in old.keys() & new.keys() if old[key] != new[key])
        if added or removed or changed:
            changes[record_type] = f"{record_type} {changed} changed, {added} added, {removed} removed"
    return changes


def _reinstate(release: Release, staged: Path, actor: Actor) -> RebuildReport:
    """Install the rebuilt folder (verified identical) under the release's lock, once."""
    with transaction.atomic():
        RELEASES.locked(release.pk)  # one rebuild at a time (a no-op lock on SQLite, whose writes are serial)
        before = fixity.release_verify(release=release)
        if before.intact:  # another rebuild or a restore got there first
            return RebuildReport(release, INTACT, [f"{release.release_id}: intact; nothing to rebuild"])
        final = store.release_directory(release.release_id)
        aside, moved = "", final
        if final.exists():
            stamp = timezone.now().strftime("%Y%m%dT%H%M%S%fZ")
            moved = conf.releases_dir() / f"{DAMAGED_PREFIX}{release.release_id}-{stamp}"
            os.rename(final, moved)
            aside = f"; the damaged folder was moved to {moved}"
        try:
            os.rename(staged, final)
        except OSError:
            if aside:
                os.rename(moved, final)  # put back what was there: nothing changed
            raise
        store.make_read_only(final)
        check = fixity.release_fixity_check(release=release)
        if not check.intact:  # cannot happen for identical bytes; never reported as reinstated
            raise RebuildRefused(f"the reinstated files do not verify: {check.problems.splitlines()[0]}")
        reason = (
            f"files rebuilt from the database and reinstated ({check.files_checked} files, every checksum as "
            f"recorded; {len(before.problems)} problem(s) before){aside}"
        )
        RELEASES.record_event(row=release.build, from_status=release.status, actor=acting_user(actor), reason=reason)
    logger.warning("release %s: %s", release.release_id, reason)
    return RebuildReport(
        release, REINSTATED, [f"{release.release_id}: reinstated, {check.files_checked} files rebuilt byte for byte"]
    )
