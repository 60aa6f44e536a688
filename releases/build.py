"""The one release build path, on the worker: claim, stage, write, validate, install, publish.

`release_build` (the `releases.tasks.release_build` task's body), in order:
1. claims the row (`release_build_claim`: `common.lifecycle`'s conditional update, a new build token);
2. stages: a folder of this claim under RELEASES_DIR (`releases.store.staging_directory`);
3. writes the bundle there from one consistent view of the catalogue (`releases.snapshot`: a read
   transaction on one snapshot while curators keep writing; `releases.catalogue_rows` gives the
   rows, `releases.bundle.write_bundle` the files: rows in, files out, nothing more), in this
   process, one table after another, storing its memberships a batch at a time as the tables stream
   past (`releases.memberships`, beside the read transaction);
4. validates the bag once (`releases.bundle.verify_bundle`: bagit's full check, the release id
   recomputed, datapackage.json's sizes and hashes);
5. installs it once: one rename to RELEASES_DIR/<id>, then read-only once (`releases.store.install`);
6. publishes the release in one locked transaction: its files, the check that every exported
   membership is stored, the change counts, the status.
A second message for the same release does nothing; a failure of any step fails the release with
its reason and leaves no files and no memberships behind, at once: an attempt that lost its database
connection is claimed again at once on a fresh one (`release_build_retry`, RELEASE_MAX_ATTEMPTS claims
in all), never left building for the sweeper. Progress is the heartbeat (`Progress`, through
`releases.lifecycle.RELEASES.heartbeat`): a worker whose claim is gone stops (`BuildSuperseded`).

Imports point down only: never `releases.services` nor `releases.tasks`.
"""

from __future__ import annotations

import datetime
import logging
import os
import socket
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from common.versions import version_bump
from records.selectors import results_contradicting_quotes
from releases import catalogue_rows, conf, selectors, store
from releases.bundle import BundleResult, verify_bundle
from releases.lifecycle import (
    BUILDING,
    PUBLISHED,
    RELEASES,
    BuildFailed,
    BuildSuperseded,
    append_log,
    connection_answers,
    connection_lost,
    driver_errors,
    give_up_out_of_attempts,
    log_line,
    out_of_attempts,
    release_fail_locked,
)
from releases.memberships import MembershipWriter, memberships_discard
from releases.models import UNFINISHED, Release, ReleaseBuild, ReleaseFile, ReleaseRecord
from releases.snapshot import Writes, catalogue_snapshot

logger = logging.getLogger(__name__)

EXPORT_PASSES = 3  # the catalogue changed during each of this many exports: give up
HEARTBEAT_EVERY_SECONDS = 1.0
T = TypeVar("T")


# ------------------------------------------------------------------- claim


@dataclass
class Claim:
    build: ReleaseBuild
    token: str

    @property
    def release(self) -> Release:
        return self.build.release


def release_build_claim(*, release_pk: int) -> Claim | None:
    """Take the build, or say why not (None): already finished, alive in another worker, or out of
    attempts (then it is failed).

    The row is read locked (failing it needs the lock); the claim itself is `RELEASES.claim`'s
    conditional UPDATE, judged by its row count: only while the row is still as read (requested, or
    building and still stale; this attempt count) does it become building, one more attempt, a new
    build token, its start and heartbeat now, with one event.
    """
    with transaction.atomic():
        build = RELEASES.locked(release_pk)
        if build is None:
            logger.warning("release build %s: no such release", release_pk)
            return None
        if build.status not in UNFINISHED:
            logger.info("release build %s: already %s, nothing to do", release_pk, build.status)
            return None
        now = timezone.now()
        stale_after = conf.stale_after()
        lost = build.status == BUILDING
        if lost and not RELEASES.is_stale(build, now=now, stale_after=stale_after):
            logger.info("release build %s: being built by another worker (attempt %s)", release_pk, build.attempts)
            return None
        if out_of_attempts(build):
            give_up_out_of_attempts(build)
            return None
        token = uuid.uuid4().hex
        claimed = f"{'previous worker lost; ' if lost else ''}attempt {build.attempts + 1} claimed by {socket.gethostname()} pid {os.getpid()}"
        won = RELEASES.claim(
            row=build,
            to=BUILDING,
            reason=claimed,
            now=now,
            match=RELEASES.stale_before(now - stale_after) if lost else None,  # a take-over only while still stale
            build_token=token,
            progress=0,
            stage="starting",
            error="",
            build_log=build.build_log + log_line(claimed, now),
        )
        if not won:
            logger.info("release build %s: changed meanwhile, nothing to do", release_pk)
            return None
    return Claim(build=build, token=token)


def release_build_fail(*, release_pk: int, token: str, error: str, detail: str = "") -> None:
    """Fail the build, if the claim `token` still holds it; `detail` (a traceback) goes to its log."""
    with transaction.atomic():
        build = RELEASES.locked(release_pk)
        if build is None or build.status != BUILDING or build.build_token != token:
            return
        if detail:
            build.build_log += detail if detail.endswith("\n") else detail + "\n"
        release_fail_locked(build, error=error)


# --------------------------------------------------------------- heartbeat


class Progress:
    """The writer's progress callback: percent done, stage, heartbeat; refuses to go on without the claim."""

    def __init__(self, release_pk: int, token: str, totals: dict[str, int], *, sorted_here: bool = True) -> None:
        self.release_pk = release_pk
        self.token = token
        # Work units: every row is read (sorted, unless the database reads it in key order) once and
        # written once; the derived memberships, validation, installation and publication take the
        # last tenth.
        passes = 2 if sorted_here else 1
        self.total = max(1, passes * sum(totals.values()))
        self.offsets: dict[str, int] = {}
        offset = 0
        for name, rows in totals.items():
            self.offsets[f"sort {name}"] = offset
            self.offsets[f"write {name}"] = offset + (passes - 1) * rows
            offset += passes * rows
        self.last_write = 0.0
        self.delay = conf.chunk_delay()
        self.writes: Writes | None = None  # during the export: beside its read transaction

    def __call__(self, stage: str, rows: int) -> None:
        done = self.offsets.get(stage, self.total) + rows
        self.report(stage, 5 + int(85 * min(done, self.total) / self.total))
        if self.delay:
            time.sleep(self.delay)

    def report(self, stage: str, percent: int, *, force: bool = False) -> None:
        """Write progress and heartbeat (at most once a second unless `force`); BuildSuperseded once the claim is gone."""
        now = time.monotonic()
        if not force and now - self.last_write < HEARTBEAT_EVERY_SECONDS and not self.delay:
            return
        self.last_write = now
        beat: dict[str, Any] = dict(
            pk=self.release_pk, claim=self.token, progress=min(100, max(0, percent)), stage=stage[:200]
        )
        if not (RELEASES.heartbeat(**beat) if self.writes is None else self.writes.call(RELEASES.heartbeat, **beat)):
            raise BuildSuperseded()


# ------------------------------------------------------------------- build


def release_build(*, release_pk: int) -> Release | None:
    """Build and publish one release. Idempotent: does nothing for a finished release or a live build.

    An attempt that loses its database connection is claimed again at once on a fresh connection
    (`release_build_retry`), up to RELEASE_MAX_ATTEMPTS claims in all; the last one fails the
    release with the reason. Any other error fails it at once.
    """
    claimed = release_build_claim(release_pk=release_pk)
    if claimed is None:
        return Release.objects.filter(pk=release_pk).first()
    pk = claimed.build.pk
    while claimed is not None:
        token, error, detail, lost = claimed.token, "", "", False
        try:
            _build(claimed)
        except BuildSuperseded:
            logger.warning("release build %s: the claim was taken over by another worker; stopping", pk)
        except BuildFailed as exc:
            error = str(exc)
        except SoftTimeLimitExceeded:
            soft, _hard = conf.build_time_limits()
            limit = datetime.timedelta(seconds=soft)
            error = f"the build ran past its time limit of {limit} (RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS)"
        except Exception as exc:  # the error is recorded on the release; the worker stays up
            lost = connection_lost(exc)
            if lost:
                error = _first_line(exc)
                logger.warning("release build %s: the database connection was lost (%s)", pk, error)
            else:
                logger.exception("release build %s failed", pk)
                error, detail = f"{type(exc).__name__}: {exc}", traceback.format_exc()
        finally:
            store.remove_staging(pk, token)  # this claim's staging folder, whatever happened
        claimed = None
        if lost:
            claimed = _after_reconnecting(release_build_retry, release_pk=pk, token=token, error=error)
        elif error:
            _after_reconnecting(release_build_fail, release_pk=pk, token=token, error=error, detail=detail)
    return Release.objects.filter(pk=pk).first()


# ------------------------------------------------------- a lost connection


RECONNECT_TRIES = 5  # writes of a failed attempt's outcome, a second apart, before the sweeper is left to it


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _after_reconnecting(write: Callable[..., T], **arguments: object) -> T:
    """Run `write(**arguments)` (an outcome of the attempt) on a connection that answers: one that does not is
    closed first (Django opens a fresh one); tried RECONNECT_TRIES times, a second apart, while the
    database itself is unreachable, then the error is raised (the sweeper re-sends the build)."""
    for attempt in range(1, RECONNECT_TRIES + 1):
        if not connection_answers():
            _close_quietly()
        try:
            return write(**arguments)
        except driver_errors():
            if attempt == RECONNECT_TRIES:
                raise
            logger.warning("the database did not answer (try %s of %s); trying again", attempt, RECONNECT_TRIES)
            _close_quietly()
            time.sleep(1.0)
    raise AssertionError("unreachable")


def _close_quietly() -> None:
    try:
        connection.close()
    except Exception:  # closing a connection that is already gone: it is gone either way
        connection.connection = None


def release_build_retry(*, release_pk: int, token: str, error: str) -> Claim | None:
    """Claim again, at once, a build whose attempt under `token` lost its database connection, or fail
    it with the reason once it is out of attempts (RELEASE_MAX_ATTEMPTS); None when it is failed or
    no longer this claim's. The new claim is `RELEASES.claim`'s, with its event."""
    with transaction.atomic():
        build = RELEASES.locked(release_pk)
        if build is None or build.status != BUILDING or build.build_token != token:
            return None
        if out_of_attempts(build):
            release_fail_locked(
                build,
                error=f"the database connection was lost on attempt {build.attempts} of {conf.max_attempts()}: {error}",
            )
            return None
        now = timezone.now()
        new_token = uuid.uuid4().hex
        reason = (
            f"attempt {build.attempts} lost its database connection ({error}); attempt {build.attempts + 1} "
            f"claimed at once by {socket.gethostname()} pid {os.getpid()}"
        )
        won = RELEASES.claim(
            row=build,
            to=BUILDING,
            reason=reason,
            now=now,
            match={"build_token": token},
            build_token=new_token,
            progress=0,
            stage="starting",
            error="",
            build_log=build.build_log + log_line(reason, now),
        )
    return Claim(build=build, token=new_token) if won else None


def _build(claimed: Claim) -> None:
    release, token = claimed.release, claimed.token
    store.remove_staging(release.pk)  # what a lost worker left behind
    conf.releases_dir().mkdir(parents=True, exist_ok=True)
    staging = store.staging_directory(release.pk, token)
    staging.mkdir()
    progress = Progress(
        release.pk, token, catalogue_rows.table_row_counts(), sorted_here=not catalogue_rows.reads_in_key_order()
    )
    against = selectors.latest_published()  # the previous release, wherever it was built: counts and change list
    result, watermark, memberships = _export(release, token, staging, progress, against)

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
        _publish(release.pk, token, result, payload_sha256, watermark, memberships, against)
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
        build = RELEASES.locked(release_pk)
        if build is not None and build.status == BUILDING and build.build_token == token:
            store.remove_tree(final)


def _export(
    release: Release, token: str, staging: Path, progress: Progress, against: Release | None
) -> tuple[BundleResult, str, MembershipWriter]:
    """Write the bundle from one consistent view of the catalogue (`releases.snapshot`: curators'
    writes go on meanwhile and are not in it), its memberships stored as the tables stream past, then
    the derived ones; its change list against `against`. Inside a caller's transaction (a test's) the
    view is that transaction's, and a pass during which the watermark moved is exported again."""
    chunk = conf.chunk_rows()
    previous = against
    output = staging / "release"
    with catalogue_snapshot() as writes:
        progress.writes = writes
        contradicted, named = results_contradicting_quotes()
        if contradicted:
            raise BuildFailed(
                f"{contradicted} result(s) contradict their evaluation's quote with no reason recorded "
                f"({'; '.join(named)}{'; ...' if contradicted > len(named) else ''}): correct the value or the quote, "
                "or record why the quote does not print it, then cut again"
            )
        try:
            for attempt in range(1, EXPORT_PASSES + 1):
                if output.exists():
                    store.remove_tree(output)
                # a lost worker's, or the pass before's
                writes.call(memberships_discard, release_pk=release.pk, token=token)
                before = catalogue_rows.catalogue_watermark()
                memberships = MembershipWriter(release_pk=release.pk, token=token, previous=previous, writes=writes)
                result = catalogue_rows.bundle_write(
                    output_dir=output,
                    release_date=release.release_date,
                    chunk_size=chunk,
                    memberships=memberships,
                    progress=progress,
                    changes_against=store.earlier_release(against),
                )
                for record_type, stable_id, digest in catalogue_rows.derived_memberships(chunk_size=chunk):
                    memberships.add(record_type, stable_id, digest)
                memberships.close()
                if writes.consistent or catalogue_rows.catalogue_watermark() == before:
                    exported = sum(result.row_counts.values())
                    writes.call(
                        append_log,
                        release.pk,
                        f"exported {exported} rows and {memberships.count} records as {result.release_id}",
                    )
                    return result, before, memberships
                writes.call(
                    append_log, release.pk, f"the catalogue changed during export pass {attempt}; exporting again"
                )
        finally:
            progress.writes = None
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
    release_pk: int,
    token: str,
    result: BundleResult,
    payload_sha256: str,
    watermark: str,
    memberships: MembershipWriter,
    against: Release | None,
) -> None:
    """Publish in one transaction, with the build and the release locked: the files, the check that
    every exported membership is stored (they were stored during the export), the release's id,
    digests and change counts, and the build's status."""
    files = store.release_files(store.installed_result(result))
    with transaction.atomic():
        build = RELEASES.locked(release_pk)
        if build is None or build.status != BUILDING or build.build_token != token:
            raise BuildSuperseded()
        release = Release.objects.select_for_update().get(pk=release_pk)
        _refuse_unchanged(result.release_id, payload_sha256)
        newest = selectors.latest_published()
        if newest != against:
            raise BuildFailed(
                f"release {newest.release_id if newest else None} was published while this one was built: "
                "its change list is out of date; cut again"
            )
        ReleaseFile.objects.bulk_create(
            ReleaseFile(
                release=release, name=info.name, kind=kind, bytes=info.bytes, sha256=info.sha256, sha512=info.sha512
            )
            for kind, info in files
        )
        stored = ReleaseRecord.objects.filter(release=release).count()
        if stored != memberships.count:
            raise BuildFailed(f"{stored} memberships are stored for the {memberships.count} records exported")
        previous = newest
        format_version = catalogue_rows.FORMAT_VERSION
        changes = memberships.changes(
            release=release, previous=previous, format_version=format_version
        ) or selectors.membership_changes(release=release, previous=previous, format_version=format_version)
        now = timezone.now()
        counts = {
            "format_version": format_version,
            "rows": dict(result.row_counts),
            "records": memberships.by_type(),
            "changes_against": against.release_id if against else None,  # metadata/changes.csv's earlier release
            **changes,
        }
        try:
            with transaction.atomic():  # a release id taken meanwhile fails this build, not the transaction
                Release.objects.filter(pk=release.pk).update(
                    counts=counts,
                    release_id=result.release_id,
                    payload_sha256=payload_sha256,
                    catalogue_watermark=watermark,
                    previous=previous,
                    published_at=now,
                )
        except IntegrityError as exc:
            raise BuildFailed(f"could not publish {result.release_id}: {exc}") from exc
        RELEASES.change(
            row=build,
            to=PUBLISHED,
            reason=f"published as {result.release_id}",
            progress=100,
            stage="published",
            finished_at=now,
            heartbeat=now,
            build_token="",
            build_log=build.build_log + log_line(f"published as {result.release_id}", now),
        )
        version_bump()  # record pages name the newest release: a new one is a change of what they show
