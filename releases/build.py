"""The one release build path, on the worker: claim, stage, write, validate, install, publish.

`release_build` (the `releases.tasks.release_build` task's body), in order:
1. claims the row (`releases.lifecycle.claim`: a locked conditional update, a new build token);
2. stages: a folder of this claim under RELEASES_DIR (`releases.store.staging_directory`);
3. writes the bundle there from a consistent view of the catalogue (`releases.exporter` gives the
   rows, `releases.bundle.write_bundle` the files: rows in, files out, nothing more);
4. validates the bag once (`releases.bundle.verify_bundle`: bagit's full check, the release id
   recomputed, datapackage.json's sizes and hashes);
5. installs it once: one rename to RELEASES_DIR/<id>, then read-only once (`releases.store.install`);
6. publishes the release with its files and memberships in one locked transaction.
A second message for the same release does nothing; a failure of any step fails the release with
its reason and leaves no files behind.

Imports point down only: never `releases.services` nor `releases.tasks`.
"""

from __future__ import annotations

import datetime
import logging
import traceback
from collections.abc import Iterator
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, transaction
from django.utils import timezone

from releases import conf, exporter, selectors, store
from releases.bundle import BundleResult, verify_bundle
from releases.lifecycle import BuildSuperseded, Claim, Progress, append_log, audit, claim, fail, log_line
from releases.models import Release, ReleaseFile, ReleaseRecord, ReleaseStatus

logger = logging.getLogger(__name__)

MEMBERSHIP_BATCH = 5_000
EXPORT_PASSES = 3  # the catalogue changed during each of this many exports: give up


class BuildFailed(Exception):
    """The build cannot succeed; the message is the release's error."""


class MembershipFile:
    """Memberships spilled to a file while the tables stream past (never a table's worth in memory)."""

    def __init__(self, path: Path):
        self.path = path
        self.handle = path.open("w", encoding="utf-8", newline="\n")
        self.count = 0

    def add(self, record_type: str, stable_id: str, content_sha256: str) -> None:
        self.handle.write(f"{record_type}\t{stable_id}\t{content_sha256}\n")
        self.count += 1

    def close(self) -> None:
        self.handle.close()

    def batches(self, release_pk: int) -> Iterator[list[ReleaseRecord]]:
        batch: list[ReleaseRecord] = []
        with self.path.open(encoding="utf-8", newline="\n") as handle:
            for line in handle:
                record_type, stable_id, digest = line.rstrip("\n").split("\t")
                batch.append(ReleaseRecord(release_id=release_pk, record_type=record_type, stable_id=stable_id, content_sha256=digest))
                if len(batch) == MEMBERSHIP_BATCH:
                    yield batch
                    batch = []
        if batch:
            yield batch


def release_build(*, release_pk: int) -> Release | None:
    """Build and publish one release. Idempotent: does nothing for a finished release or a live build."""
    claimed = claim(release_pk)
    if claimed is None:
        return Release.objects.filter(pk=release_pk).first()
    pk, token = claimed.release.pk, claimed.token
    try:
        _build(claimed)
    except BuildSuperseded:
        logger.warning("release build %s: the claim was taken over by another worker; stopping", pk)
    except BuildFailed as exc:
        fail(pk, token, str(exc))
    except SoftTimeLimitExceeded:
        soft, _hard = conf.build_time_limits()
        fail(pk, token, f"the build ran past its time limit of {datetime.timedelta(seconds=soft)} (RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS)")
    except Exception as exc:  # the error is recorded on the release; the worker stays up
        logger.exception("release build %s failed", pk)
        fail(pk, token, f"{type(exc).__name__}: {exc}", traceback.format_exc())
    finally:
        store.remove_staging(pk, token)  # this claim's staging folder, whatever happened
    return Release.objects.filter(pk=pk).first()


def _build(claimed: Claim) -> None:
    release, token = claimed.release, claimed.token
    store.remove_staging(release.pk)  # what a lost worker left behind
    conf.releases_dir().mkdir(parents=True, exist_ok=True)
    staging = store.staging_directory(release.pk, token)
    staging.mkdir()
    progress = Progress(release.pk, token, exporter.table_row_counts())
    result, watermark, memberships = _export(release, staging, progress)

    progress.report("validating the bag", 92, force=True)
    problems = verify_bundle(result.bag_dir)
    if problems:
        raise BuildFailed("the built bag does not verify: " + "; ".join(problems[:5]))
    payload_sha256 = result.manifest_sha256
    _refuse_unchanged(result.release_id, payload_sha256)

    progress.report("installing the files", 95, force=True)
    final, renamed = _install(staging / "release", result)
    try:
        progress.report("publishing", 97, force=True)
        _publish(release.pk, token, result, payload_sha256, watermark, memberships)
    except BaseException:
        if renamed:
            _remove_installed(release.pk, token, final)
        raise


def _remove_installed(release_pk: int, token: str, final: Path) -> None:
    """Remove the folder this claim renamed into place, unless the claim is gone.

    Decided under the row lock: a claim that took over may have found this folder, verified it and
    be publishing it (a folder this claim only verified is never its to remove; failing the
    release removes what is left).
    """
    with transaction.atomic():
        release = Release.objects.select_for_update().filter(pk=release_pk).first()
        if release is not None and release.status == ReleaseStatus.BUILDING and release.build_token == token:
            store.remove_tree(final)


def _export(release: Release, staging: Path, progress: Progress) -> tuple[BundleResult, str, MembershipFile]:
    """Write the bundle from a consistent view of the catalogue: the watermark must not move meanwhile."""
    chunk = conf.chunk_rows()
    for attempt in range(1, EXPORT_PASSES + 1):
        output = staging / "release"
        if output.exists():
            store.remove_tree(output)
        before = exporter.catalogue_watermark()
        memberships = MembershipFile(staging / "memberships.tsv")
        try:
            result = exporter.bundle_write(
                output_dir=output, release_date=release.release_date, chunk_size=chunk, memberships=memberships, progress=progress
            )
            progress.report("listing derived records", 90, force=True)
            for record_type, stable_id, digest in exporter.derived_memberships(chunk_size=chunk):
                memberships.add(record_type, stable_id, digest)
        finally:
            memberships.close()
        if exporter.catalogue_watermark() == before:
            append_log(release.pk, f"exported {sum(result.row_counts.values())} rows and {memberships.count} records as {result.release_id}")
            return result, before, memberships
        append_log(release.pk, f"the catalogue changed during export pass {attempt}; exporting again")
    raise BuildFailed(f"the catalogue kept changing during {EXPORT_PASSES} exports; cut again when curation pauses")


def _refuse_unchanged(release_id: str, payload_sha256: str) -> None:
    """A build whose content equals the last published release's (or any release with its id) publishes nothing."""
    last = selectors.latest_built()
    if last is not None and last.payload_sha256 == payload_sha256:
        raise BuildFailed(
            f"nothing changed since release {last.release_id}: the exported content is identical; nothing was published"
        )
    if Release.objects.filter(release_id=release_id).exists():
        raise BuildFailed(f"release {release_id} already holds exactly this content; nothing was published")


def _install(staged: Path, result: BundleResult) -> tuple[Path, bool]:
    try:
        return store.install(staged, result)
    except store.InstallConflict as exc:
        raise BuildFailed(str(exc)) from None


def _publish(
    release_pk: int, token: str, result: BundleResult, payload_sha256: str, watermark: str, memberships: MembershipFile
) -> None:
    """Publish in one transaction: files, memberships, change counts and the status, with the row locked."""
    files = store.release_files(store.installed_result(result))
    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release_pk)
        if release.status != ReleaseStatus.BUILDING or release.build_token != token:
            raise BuildSuperseded()
        _refuse_unchanged(result.release_id, payload_sha256)
        ReleaseFile.objects.bulk_create(
            ReleaseFile(release=release, name=info.name, kind=kind, bytes=info.bytes, sha256=info.sha256, sha512=info.sha512)
            for kind, info in files
        )
        for batch in memberships.batches(release.pk):
            ReleaseRecord.objects.bulk_create(batch)
        previous = selectors.latest_published()
        now = timezone.now()
        release.counts = {
            "format_version": exporter.FORMAT_VERSION,
            "rows": dict(result.row_counts),
            "records": selectors.records_by_type(ReleaseRecord.objects.filter(release=release)),
            **selectors.membership_changes(release=release, previous=previous, format_version=exporter.FORMAT_VERSION),
        }
        release.release_id = result.release_id
        release.payload_sha256 = payload_sha256
        release.catalogue_watermark = watermark
        release.previous = previous
        release.status = ReleaseStatus.PUBLISHED
        release.progress = 100
        release.stage = "published"
        release.published_at = now
        release.finished_at = now
        release.heartbeat = now
        release.build_token = ""
        release.build_log += log_line(f"published as {result.release_id}", now)
        try:
            release.save()
        except IntegrityError as exc:
            raise BuildFailed(f"could not publish {result.release_id}: {exc}") from exc
        audit(release, from_status=ReleaseStatus.BUILDING, reason=f"published as {result.release_id}")
