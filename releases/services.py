"""Services of the releases app: cut, build, publish, sweep and verify releases.

The row is the truth, the Celery message only a nudge (DESIGN.md, "Benchmark jobs" and "Releases"):
- `release_cut` creates a requested release (locked, so two cuts at once create one) and sends
  its id to the `releases` queue after commit; with nothing changed since the last published
  release it says so and creates nothing.
- `release_build` claims the row (requested -> building, attempts + 1, a new build token), writes
  the bundle into a staging folder under RELEASES_DIR, validates it, renames it into place
  (read-only) and publishes the release with its files and memberships in one transaction. A
  second message for the same release does nothing; a build whose worker was lost is claimed
  again when its heartbeat is stale, up to RELEASE_MAX_ATTEMPTS claims, then marked failed.
- `release_builds_sweep` (beat, every minute) re-sends lost builds and fails stale ones, and those
  no worker took for RELEASE_GIVE_UP_AFTER_SECONDS; `release_cancel` lets a release manager stop one.
- `release_verify` / `release_fixity_audit` re-hash every file of published releases.
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import os
import re
import shutil
import socket
import stat
import time
import traceback
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Value
from django.db.models.functions import Concat
from django.utils import timezone

from common.errors import DomainError
from releases import conf, exporter
from releases.bundle import CHECKSUM_ALGORITHMS, BundleResult, FileInfo, verify_bundle
from releases.models import (
    UNFINISHED,
    FileKind,
    Release,
    ReleaseEvent,
    ReleaseFile,
    ReleaseFixityCheck,
    ReleaseRecord,
    ReleaseStatus,
)

logger = logging.getLogger(__name__)

CUT_PERMISSION = "releases.cut_release"
STAGING_PREFIX = ".build-"
TAG_FILES = (
    "bagit.txt",
    "bag-info.txt",
    *(f"manifest-{a}.txt" for a in CHECKSUM_ALGORITHMS),
    *(f"tagmanifest-{a}.txt" for a in CHECKSUM_ALGORITHMS),
)
MEMBERSHIP_BATCH = 5_000
EXPORT_PASSES = 3  # the catalogue changed during each of this many exports: give up
HEARTBEAT_EVERY_SECONDS = 1.0
RELEASE_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}-[0-9a-f]{12}")  # RELEASES_DIR/<release id>


# ------------------------------------------------------------------ errors


class ReleaseError(DomainError):
    """A refused release operation; `release` is the one it was about, where there is one."""

    def __init__(self, message: str, *, release: Release | None = None):
        super().__init__(message)
        self.release = release


class ReleaseForbidden(ReleaseError):
    status = 403
    code = "permission_denied"


class NothingChanged(ReleaseError):
    status = 409
    code = "nothing_changed"


class BuildInProgress(ReleaseError):
    status = 409
    code = "build_in_progress"


class _BuildSuperseded(Exception):
    """This worker's claim on the build is gone (another worker reclaimed it): stop quietly."""


class _BuildFailed(Exception):
    """The build cannot succeed; the message is the release's error."""


# --------------------------------------------------------------------- cut


def may_cut_release(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.has_perm(CUT_PERMISSION))


def _lock_cuts() -> None:
    """Serialise cuts. SQLite's IMMEDIATE transactions already hold the write lock from BEGIN."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('releases.release_cut'))")


def latest_built() -> Release | None:
    """The newest published release this portal built (external ones have no content fingerprint)."""
    return Release.objects.published().filter(is_external=False).newest_first().first()


def release_cut(*, actor, note: str = "") -> Release:
    """Cut a release: create the requested row and send its build to the `releases` queue after commit.

    Raises ReleaseForbidden (not a release manager), BuildInProgress (another release is still
    requested or building: it is `exc.release`) or NothingChanged (the catalogue is as it was when
    the last published release was built: `exc.release`).
    """
    if not may_cut_release(actor):
        raise ReleaseForbidden("only release managers may cut a release (permission releases.cut_release)")
    with transaction.atomic():
        _lock_cuts()
        unfinished = Release.objects.filter(status__in=UNFINISHED).order_by("id").first()
        if unfinished is not None:
            raise BuildInProgress(
                f"release #{unfinished.pk} is {unfinished.get_status_display().lower()}: wait until it is published or fails",
                release=unfinished,
            )
        last = latest_built()
        if last is not None and last.catalogue_watermark and last.catalogue_watermark == exporter.catalogue_watermark():
            raise NothingChanged(
                f"nothing changed since release {last.release_id}: no release was created", release=last
            )
        now = timezone.now()
        release = Release.objects.create(
            release_date=timezone.localdate(now),
            status=ReleaseStatus.REQUESTED,
            note=note.strip(),
            cut_by=actor,
            build_log=_log_line(f"cut by {actor.get_username()}", now),
        )
        _audit(release, from_status="", actor=actor, reason=f"cut{': ' + release.note if release.note else ''}")
        _send_build(release)
    return release


def release_cancel(*, actor, release_pk: int) -> Release:
    """Cancel a requested or building release (marked failed, its folders removed) so that a new one can be cut.

    A worker still building it stops at its next progress report: its claim is gone. Raises
    ReleaseForbidden (not a release manager) or ReleaseError (no such release, or already finished).
    """
    if not may_cut_release(actor):
        raise ReleaseForbidden("only release managers may cancel a release (permission releases.cut_release)")
    with transaction.atomic():
        release = Release.objects.select_for_update().filter(pk=release_pk).first()
        if release is None:
            raise ReleaseError(f"no release #{release_pk}")
        if release.status not in UNFINISHED:
            raise ReleaseError(
                f"{release} is {release.get_status_display().lower()}: only a requested or building release can be cancelled",
                release=release,
            )
        _mark_failed_locked(release, f"cancelled by {actor.get_username()}", actor=actor)
    return release


def _log_line(text: str, at=None) -> str:
    return f"{(at or timezone.now()).strftime('%Y-%m-%dT%H:%M:%SZ')} {text}\n"


def _audit(release: Release, *, from_status: str, reason: str, actor=None) -> ReleaseEvent:
    """The audit row of a status change just made to `release` (locked or new) in this transaction."""
    return ReleaseEvent.objects.create(
        release=release, from_status=from_status, to_status=release.status, attempt=release.attempts, actor=actor, reason=reason,
    )


def _append_log(release_pk: int, text: str, **fields) -> int:
    """Append one line to the build log (and set `fields`) in one UPDATE; returns the rows updated."""
    return Release.objects.filter(pk=release_pk, status__in=UNFINISHED).update(
        build_log=Concat(F("build_log"), Value(_log_line(text))), **fields
    )


def _send_build(release: Release) -> None:
    """Record the message's id on the (locked or new) row; send it once the transaction commits."""
    task_id = uuid.uuid4().hex
    Release.objects.filter(pk=release.pk).update(celery_task_id=task_id, sent_at=timezone.now())
    pk = release.pk
    soft, hard = conf.build_time_limits()

    def send() -> None:
        from releases.tasks import release_build as release_build_task

        release_build_task.apply_async(args=[pk], task_id=task_id, soft_time_limit=soft, time_limit=hard)

    # Robust: the row is committed either way, and a message lost to a broker outage is sent again
    # by the sweeper; the cut must not answer 500 for it.
    transaction.on_commit(send, robust=True)


# ------------------------------------------------------------------- build


@dataclass
class _Claim:
    release: Release
    token: str


def _is_stale(release: Release, now) -> bool:
    beat = release.heartbeat or release.started_at
    return beat is None or (now - beat).total_seconds() > conf.stale_after_seconds()


def _claim(release_pk: int) -> _Claim | None:
    """Take the build, or say why not (None): already finished, or alive in another worker."""
    with transaction.atomic():
        release = Release.objects.select_for_update().filter(pk=release_pk).first()
        if release is None:
            logger.warning("release build %s: no such release", release_pk)
            return None
        if release.status not in UNFINISHED:
            logger.info("release build %s: already %s, nothing to do", release_pk, release.status)
            return None
        now = timezone.now()
        if release.status == ReleaseStatus.BUILDING and not _is_stale(release, now):
            logger.info("release build %s: being built by another worker (attempt %s)", release_pk, release.attempts)
            return None
        if release.attempts >= conf.max_attempts():
            _mark_failed_locked(
                release, f"gave up after {release.attempts} attempt(s): the worker building it was lost each time"
            )
            return None
        token = uuid.uuid4().hex
        lost = release.status == ReleaseStatus.BUILDING
        from_status = release.status
        release.status = ReleaseStatus.BUILDING
        release.attempts += 1
        release.build_token = token
        release.started_at = now
        release.heartbeat = now
        release.progress = 0
        release.stage = "starting"
        release.error = ""
        claimed = f"{'previous worker lost; ' if lost else ''}attempt {release.attempts} claimed by {socket.gethostname()} pid {os.getpid()}"
        release.build_log += _log_line(claimed, now)
        release.save(
            update_fields=["status", "attempts", "build_token", "started_at", "heartbeat", "progress", "stage", "error", "build_log"]
        )
        _audit(release, from_status=from_status, reason=claimed)
    return _Claim(release=release, token=token)


def _mark_failed_locked(release: Release, error: str, actor=None) -> None:
    now = timezone.now()
    from_status = release.status
    release.status = ReleaseStatus.FAILED
    release.error = error
    release.finished_at = now
    release.build_token = ""
    release.build_log += _log_line(f"failed: {error}", now)
    release.save(update_fields=["status", "error", "finished_at", "build_token", "build_log"])
    _audit(release, from_status=from_status, actor=actor, reason=error)
    _remove_staging(release.pk)
    _remove_unpublished_folders(release)


def _remove_unpublished_folders(release: Release) -> None:
    """Remove the `<id>` folders a claim of this failed (locked) release renamed into place but never published.

    Its ids all start with its release date, and cuts are serialised (one release is built at a
    time), so a folder of that date that no published release names is one of its own.
    """
    root = conf.releases_dir()
    prefix = f"{release.release_date.isoformat()}-"
    others = Release.objects.filter(status__in=UNFINISHED, release_date=release.release_date).exclude(pk=release.pk)
    if not root.is_dir() or others.exists():
        return  # not the only build of its date: its folders cannot be told apart
    published = set(Release.objects.published().filter(release_id__startswith=prefix).values_list("release_id", flat=True))
    for path in root.glob(f"{prefix}*"):
        if path.name not in published and RELEASE_FOLDER.fullmatch(path.name):
            logger.warning("release %s failed: removing its unpublished folder %s", release.pk, path)
            _remove_tree(path)


def _fail(release_pk: int, token: str, error: str, detail: str = "") -> None:
    with transaction.atomic():
        release = Release.objects.select_for_update().filter(pk=release_pk).first()
        if release is None or release.status != ReleaseStatus.BUILDING or release.build_token != token:
            return
        if detail:
            release.build_log += detail if detail.endswith("\n") else detail + "\n"
        _mark_failed_locked(release, error)


class _Progress:
    """The writer's progress callback: percent done, stage, heartbeat; refuses to go on without the claim."""

    def __init__(self, release_pk: int, token: str, totals: dict[str, int]):
        self.release_pk = release_pk
        self.token = token
        # Work units: every row is read (sorted) once and written once; the derived memberships,
        # validation, installation and publication take the last tenth.
        self.total = max(1, 2 * sum(totals.values()))
        self.offsets: dict[str, int] = {}
        offset = 0
        for name, rows in totals.items():
            self.offsets[f"sort {name}"] = offset
            self.offsets[f"write {name}"] = offset + rows
            offset += 2 * rows
        self.last_write = 0.0
        self.delay = conf.chunk_delay()

    def __call__(self, stage: str, rows: int) -> None:
        done = self.offsets.get(stage, self.total) + rows
        self.report(stage, 5 + int(85 * min(done, self.total) / self.total))
        if self.delay:
            time.sleep(self.delay)

    def report(self, stage: str, percent: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_write < HEARTBEAT_EVERY_SECONDS and not self.delay:
            return
        self.last_write = now
        updated = Release.objects.filter(pk=self.release_pk, status=ReleaseStatus.BUILDING, build_token=self.token).update(
            progress=min(100, max(0, percent)), stage=stage[:200], heartbeat=timezone.now()
        )
        if not updated:
            raise _BuildSuperseded()


class _MembershipFile:
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


def _staging_dirs(release_pk: int, token: str = "*") -> list[Path]:
    root = conf.releases_dir()
    return sorted(root.glob(f"{STAGING_PREFIX}{release_pk}-{token}")) if root.is_dir() else []


def _remove_tree(path: Path) -> None:
    """Remove a (possibly read-only) tree."""

    def make_writable_and_retry(function, failed_path, _exc_info):
        parent = os.path.dirname(failed_path)
        for target in (parent, failed_path):
            try:
                os.chmod(target, stat.S_IRWXU)
            except OSError:
                pass
        function(failed_path)

    if path.is_dir():
        shutil.rmtree(path, onerror=make_writable_and_retry)
    elif path.exists():
        path.unlink()


def _remove_staging(release_pk: int, token: str = "*") -> None:
    """Remove the build's staging folders: one claim's (`token`) or, by default, every claim's."""
    for path in _staging_dirs(release_pk, token):
        _remove_tree(path)


def release_directory(release_id: str) -> Path:
    """Where a release's files lie: the bag `<id>/<id>/` and the archive `<id>/<id>.tar.gz`."""
    return conf.releases_dir() / release_id


def release_file_path(release: Release, name: str) -> Path:
    """The path of one of `release`'s files (by its name in the file table)."""
    base = release_directory(release.release_id)
    if name == f"{release.release_id}.tar.gz":
        return base / name
    return base / release.release_id / name


def _file_info(path: Path, name: str) -> FileInfo:
    digests = [hashlib.new(a) for a in CHECKSUM_ALGORITHMS]
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            size += len(chunk)
            for digest in digests:
                digest.update(chunk)
    sha256, sha512 = (d.hexdigest() for d in digests)
    return FileInfo(name=name, bytes=size, sha256=sha256, sha512=sha512)


def _release_files(result: BundleResult) -> list[tuple[str, FileInfo]]:
    """Every file of a built release with its kind: payload, tag files, archive."""
    files = [(FileKind.PAYLOAD, info) for info in result.payload_files]
    files += [(FileKind.TAG, _file_info(result.bag_dir / name, name)) for name in TAG_FILES]
    files.append((FileKind.ARCHIVE, result.tarball_info))
    return files


def release_build(*, release_pk: int) -> Release | None:
    """Build and publish one release. Idempotent: does nothing for a finished release or a live build."""
    claim = _claim(release_pk)
    if claim is None:
        return Release.objects.filter(pk=release_pk).first()
    pk, token = claim.release.pk, claim.token
    try:
        _build(claim)
    except _BuildSuperseded:
        logger.warning("release build %s: the claim was taken over by another worker; stopping", pk)
    except _BuildFailed as exc:
        _fail(pk, token, str(exc))
    except SoftTimeLimitExceeded:
        soft, _hard = conf.build_time_limits()
        _fail(pk, token, f"the build ran past its time limit of {datetime.timedelta(seconds=soft)} (RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS)")
    except Exception as exc:  # the error is recorded on the release; the worker stays up
        logger.exception("release build %s failed", pk)
        _fail(pk, token, f"{type(exc).__name__}: {exc}", traceback.format_exc())
    finally:
        _remove_staging(pk, token)  # this claim's staging folder, whatever happened
    return Release.objects.filter(pk=pk).first()


def _build(claim: _Claim) -> None:
    release, token = claim.release, claim.token
    _remove_staging(release.pk)  # what a lost worker left behind
    root = conf.releases_dir()
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f"{STAGING_PREFIX}{release.pk}-{token}"
    staging.mkdir()
    progress = _Progress(release.pk, token, exporter.table_row_counts())
    result, watermark, memberships = _export(release, staging, progress)

    progress.report("validating the bag", 92, force=True)
    problems = verify_bundle(result.bag_dir)
    if problems:
        raise _BuildFailed("the built bag does not verify: " + "; ".join(problems[:5]))
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
            _remove_tree(final)


def _export(release: Release, staging: Path, progress: _Progress) -> tuple[BundleResult, str, _MembershipFile]:
    """Write the bundle from a consistent view of the catalogue: the watermark must not move meanwhile."""
    chunk = conf.chunk_rows()
    for attempt in range(1, EXPORT_PASSES + 1):
        output = staging / "release"
        if output.exists():
            _remove_tree(output)
        before = exporter.catalogue_watermark()
        memberships = _MembershipFile(staging / "memberships.tsv")
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
            _append_log(release.pk, f"exported {sum(result.row_counts.values())} rows and {memberships.count} records as {result.release_id}")
            return result, before, memberships
        _append_log(release.pk, f"the catalogue changed during export pass {attempt}; exporting again")
    raise _BuildFailed(f"the catalogue kept changing during {EXPORT_PASSES} exports; cut again when curation pauses")


def _refuse_unchanged(release_id: str, payload_sha256: str) -> None:
    """A build whose content equals the last published release's (or any release with its id) publishes nothing."""
    last = latest_built()
    if last is not None and last.payload_sha256 == payload_sha256:
        raise _BuildFailed(
            f"nothing changed since release {last.release_id}: the exported content is identical; nothing was published"
        )
    if Release.objects.filter(release_id=release_id).exists():
        raise _BuildFailed(f"release {release_id} already holds exactly this content; nothing was published")


def _install(staged: Path, result: BundleResult) -> tuple[Path, bool]:
    """Rename the staged release folder to RELEASES_DIR/<id> in one step and make it read-only.

    A folder already there (a lost worker renamed it, then died before publishing) is kept when
    it holds the same files, verified; anything else there is an error. Returns the folder and
    whether this call renamed it into place.
    """
    final = release_directory(result.release_id)
    renamed = True
    try:
        os.rename(staged, final)
    except OSError:
        renamed = False
        if not final.is_dir():
            raise
        existing = final / result.release_id
        expected = {info.name: info.sha256 for _, info in _release_files(result)}
        found = {}
        for name in expected:
            path = existing.parent / name if name.endswith(".tar.gz") else existing / name
            if path.is_file():
                found[name] = _file_info(path, name).sha256
        if found != expected or verify_bundle(existing):
            raise _BuildFailed(f"{final} already exists with other content") from None
        _remove_tree(staged)
    os.chmod(final, 0o555)
    return final, renamed


def _publish(
    release_pk: int, token: str, result: BundleResult, payload_sha256: str, watermark: str, memberships: _MembershipFile
) -> None:
    """Publish in one transaction: files, memberships, change counts and the status, with the row locked."""
    files = _release_files(_final_result(result))
    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release_pk)
        if release.status != ReleaseStatus.BUILDING or release.build_token != token:
            raise _BuildSuperseded()
        _refuse_unchanged(result.release_id, payload_sha256)
        ReleaseFile.objects.bulk_create(
            ReleaseFile(release=release, name=info.name, kind=kind, bytes=info.bytes, sha256=info.sha256, sha512=info.sha512)
            for kind, info in files
        )
        for batch in memberships.batches(release.pk):
            ReleaseRecord.objects.bulk_create(batch)
        previous = Release.objects.published().newest_first().first()
        now = timezone.now()
        release.counts = {
            "format_version": exporter.FORMAT_VERSION,
            "rows": dict(result.row_counts),
            "records": _count_by_type(ReleaseRecord.objects.filter(release=release)),
            **membership_changes(release=release, previous=previous, format_version=exporter.FORMAT_VERSION),
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
        release.build_log += _log_line(f"published as {result.release_id}", now)
        try:
            release.save()
        except IntegrityError as exc:
            raise _BuildFailed(f"could not publish {result.release_id}: {exc}") from exc
        _audit(release, from_status=ReleaseStatus.BUILDING, reason=f"published as {result.release_id}")


def _final_result(result: BundleResult) -> BundleResult:
    final = release_directory(result.release_id)
    return BundleResult(
        release_id=result.release_id,
        bag_dir=final / result.release_id,
        tarball=final / f"{result.release_id}.tar.gz",
        payload_files=result.payload_files,
        tarball_info=result.tarball_info,
        row_counts=result.row_counts,
    )


def _count_by_type(queryset) -> dict[str, int]:
    return dict(sorted(queryset.order_by().values("record_type").annotate(n=Count("id")).values_list("record_type", "n")))


def content_comparable(*, release: Release, previous: Release, format_version: int | None = None) -> bool:
    """Whether the two releases' content digests can be compared: both built here in one format
    (a digest covers a record's exported columns, which a new format changes for every record)."""
    mine = format_version or release.counts.get("format_version", 1)
    return not previous.is_external and previous.counts.get("format_version", 1) == mine


def _change_querysets(*, release: Release, previous: Release | None, format_version: int | None = None):
    """(added, removed, changed) memberships of `release` against `previous`, over the tracked record types."""
    mine = ReleaseRecord.objects.filter(release=release)
    if previous is None:
        return mine, ReleaseRecord.objects.none(), ReleaseRecord.objects.none()
    theirs = ReleaseRecord.objects.filter(release=previous, record_type__in=exporter.RECORD_TYPES)
    in_previous = theirs.filter(record_type=OuterRef("record_type"), stable_id=OuterRef("stable_id"))
    in_mine = mine.filter(record_type=OuterRef("record_type"), stable_id=OuterRef("stable_id"))
    added = mine.exclude(Exists(in_previous))
    removed = theirs.exclude(Exists(in_mine))
    if content_comparable(release=release, previous=previous, format_version=format_version):
        changed = mine.filter(Exists(in_previous.exclude(content_sha256=OuterRef("content_sha256"))))
    else:  # an external release (no content hashes) or another format: presence is compared, content is not
        changed = ReleaseRecord.objects.none()
    return added, removed, changed


def membership_changes(*, release: Release, previous: Release | None, format_version: int | None = None) -> dict[str, dict[str, int]]:
    added, removed, changed = _change_querysets(release=release, previous=previous, format_version=format_version)
    return {"added": _count_by_type(added), "removed": _count_by_type(removed), "changed": _count_by_type(changed)}


@dataclass
class ChangeList:
    added: list[ReleaseRecord]
    removed: list[ReleaseRecord]
    changed: list[ReleaseRecord]
    limit: int


def release_change_list(*, release: Release, limit: int = 100) -> ChangeList:
    """Up to `limit` records added, removed and changed against the previous release (three queries)."""
    added, removed, changed = _change_querysets(release=release, previous=release.previous)
    order = ("record_type", "stable_id")
    return ChangeList(
        added=list(added.order_by(*order)[:limit]),
        removed=list(removed.order_by(*order)[:limit]),
        changed=list(changed.order_by(*order)[:limit]),
        limit=limit,
    )


# ------------------------------------------------------------------- sweep


@dataclass
class SweepReport:
    resent: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def release_builds_sweep() -> SweepReport:
    """Re-send builds whose message was lost or whose worker died; fail those out of attempts or time.

    A build is stale when its heartbeat (or, for a requested one, its last message) is older than
    RELEASE_STALE_AFTER_SECONDS. Re-sending is safe: the build claims its row under a lock. Only a
    claim counts an attempt, so a build no worker takes (workers down or hung) would be re-sent
    forever and block every later cut: it is failed once no worker has shown life for
    RELEASE_GIVE_UP_AFTER_SECONDS (since its cut, or its last heartbeat).
    """
    report = SweepReport()
    now = timezone.now()
    cutoff = now - datetime.timedelta(seconds=conf.stale_after_seconds())
    give_up = datetime.timedelta(seconds=int(conf.give_up_after_seconds()))
    candidates = list(Release.objects.filter(status__in=UNFINISHED).values_list("pk", flat=True))
    for pk in candidates:
        with transaction.atomic():
            release = Release.objects.select_for_update().filter(pk=pk, status__in=UNFINISHED).first()
            if release is None:
                continue
            sent_recently = release.sent_at is not None and release.sent_at > cutoff
            if release.status == ReleaseStatus.BUILDING:
                if not _is_stale(release, now):
                    continue
                if release.attempts >= conf.max_attempts():
                    _mark_failed_locked(
                        release, f"gave up after {release.attempts} attempt(s): the worker building it was lost each time"
                    )
                    report.failed.append(pk)
                    continue
            last_life = release.heartbeat or release.started_at or release.created_at
            if now - last_life > give_up:
                if release.status == ReleaseStatus.BUILDING:
                    error = f"no heartbeat for over {give_up} after attempt {release.attempts}, and no worker took the build again: gave up"
                else:
                    error = f"no worker took the build within {give_up} of its cut (are the releases workers running?): gave up"
                _mark_failed_locked(release, error)
                report.failed.append(pk)
                continue
            if sent_recently:
                continue
            if release.status == ReleaseStatus.BUILDING:
                beat = release.heartbeat or release.started_at
                why = f"no heartbeat since {beat:%H:%M:%S}; build sent again" if beat else "build sent again"
            else:
                why = "still requested; build sent again"
            release.build_log += _log_line(why)
            release.save(update_fields=["build_log"])
            _audit(release, from_status=release.status, reason=why)  # not a new status, but a new message: audited all the same
            _send_build(release)
            report.resent.append(pk)
    return report


# ------------------------------------------------------------------ verify


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
        return VerifyReport(release, [], 0, note=f"release {release.release_id} is external: this portal holds none of its files")
    problems: list[str] = []
    checked = 0
    for record in release.files.order_by("kind", "name"):
        path = release_file_path(release, record.name)
        if not path.is_file():
            problems.append(f"{record.name}: missing ({path})")
            continue
        found = _file_info(path, record.name)
        checked += 1
        for attribute in ("bytes", "sha256", "sha512"):
            if getattr(found, attribute) != getattr(record, attribute):
                problems.append(f"{record.name}: {attribute} is {getattr(found, attribute)}, the release recorded {getattr(record, attribute)}")
        if path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            problems.append(f"{record.name}: is writable; published files are read-only")
    bag = release_directory(release.release_id) / release.release_id
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


# ---------------------------------------------------------------- external


@transaction.atomic
def release_record_external(
    *, release_id: str, release_date, note: str, records: list[tuple[str, str]]
) -> tuple[Release, bool]:
    """Record a release published elsewhere (the seed page's), whose files this portal does not hold.

    Idempotent by release id; returns the release and whether it was created. The row is written
    as requested, given its memberships, then published: nothing is added to a published release.
    """
    existing = Release.objects.filter(release_id=release_id).first()
    if existing is not None:
        return existing, False
    release = Release.objects.create(
        release_id=release_id,
        release_date=release_date,
        status=ReleaseStatus.REQUESTED,
        is_external=True,
        note=note,
        stage="recorded from a published page",
    )
    ReleaseRecord.objects.bulk_create(
        ReleaseRecord(release=release, record_type=record_type, stable_id=stable_id) for record_type, stable_id in records
    )
    now = timezone.now()
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.PUBLISHED,
        published_at=now,
        finished_at=now,
        progress=100,
        counts={"records": _count_by_type(ReleaseRecord.objects.filter(release=release))},
    )
    release.refresh_from_db()
    _audit(release, from_status="", reason="recorded from a published page")
    return release, True
