"""Services of the releases app, the request side: cut, cancel, sweep now, record an external release.

The row is the truth, the Celery message only a nudge (docs/architecture/design-map.md, "Benchmark jobs" and "Releases"):
- `release_cut` creates a requested release (locked, so two cuts at once create one) and sends
  its id to the `releases` queue after commit; with nothing changed since the last published
  release it says so and creates nothing.
- `release_cancel` lets a release manager stop a requested or building release.
- `release_builds_sweep` re-sends lost builds and fails stale ones (what beat runs every minute).
- `release_record_external` records a release published elsewhere (the seed page's).
- `release_file_serve_check` says whether a download may send a file: a damaged one is recorded as
  a failed fixity check, which marks its release damaged, and reported to the release managers.

Elsewhere in the app: the worker's build path in `releases.build` (claim, stage, write, validate,
install, publish), the release's status table, refusals and sweeper in `releases.lifecycle` (bound to
`common.lifecycle`, as benchmark jobs are), fixity checks in `releases.fixity`, read queries (latest
release, change lists) in `releases.selectors`. Imports point down:
services -> tasks -> build -> lifecycle, store, selectors, catalogue_rows, bundle. The refusals
(`ReleaseError` and its kinds) are defined with the status table in `releases.lifecycle`; callers
import them from here, with the services that raise them.
"""

from __future__ import annotations

import datetime
from typing import BinaryIO

from django.db import connection, transaction
from django.utils import timezone

from common.lifecycle import NEW
from common.types import Actor, acting_user
from common.versions import version_bump
from releases import catalogue_rows, fixity, lifecycle, selectors, tasks
from releases.lifecycle import RELEASES, REQUESTED, BuildInProgress, NothingChanged, ReleaseError, ReleaseForbidden
from releases.models import (
    UNFINISHED,
    Release,
    ReleaseBuild,
    ReleaseFile,
    ReleaseFixityCheck,
    ReleaseRecord,
    ReleaseStatus,
)

CUT_PERMISSION = "releases.cut_release"


# --------------------------------------------------------------------- cut


def may_cut_release(user: Actor) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.has_perm(CUT_PERMISSION))


def _lock_cuts() -> None:
    """Serialise cuts. SQLite's IMMEDIATE transactions already hold the write lock from BEGIN."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('releases.release_cut'))")


def release_cut(*, actor: Actor, note: str = "") -> Release:
    """Cut a release: create the requested row and send its build to the `releases` queue after commit.

    Raises ReleaseForbidden (not a release manager), BuildInProgress (another release is still
    requested or building: it is `exc.release`) or NothingChanged (the catalogue is as it was when
    the last published release was built: `exc.release`).
    """
    if actor is None or not may_cut_release(actor):
        raise ReleaseForbidden("only release managers may cut a release (permission releases.cut_release)")
    with transaction.atomic():
        _lock_cuts()
        unfinished = ReleaseBuild.objects.filter(status__in=UNFINISHED).select_related("release").order_by("pk").first()
        if unfinished is not None:
            raise BuildInProgress(
                f"release #{unfinished.pk} is {unfinished.get_status_display().lower()}: wait until it is published or fails",
                release=unfinished.release,
            )
        last = selectors.latest_built()
        if (
            last is not None
            and last.catalogue_watermark
            and last.catalogue_watermark == catalogue_rows.catalogue_watermark()
        ):
            raise NothingChanged(
                f"nothing changed since release {last.release_id}: no release was created", release=last
            )
        now = timezone.now()
        note = note.strip()
        release = Release.objects.create(release_date=timezone.localdate(now), note=note)
        build = ReleaseBuild(
            release=release,
            cut_by=acting_user(actor),
            build_log=lifecycle.log_line(f"cut by {actor.get_username()}", now),
        )
        RELEASES.change(row=build, to=REQUESTED, actor=actor, reason=f"cut{': ' + note if note else ''}")
        tasks.release_build_enqueue(build)
    return release


def release_cancel(*, actor: Actor, release_pk: int) -> Release:
    """Cancel a requested or building release (marked failed, its folders removed) so that a new one can be cut.

    A worker still building it stops at its next progress report: its claim is gone. Raises
    ReleaseForbidden (not a release manager) or ReleaseError (no such release, or already finished).
    """
    if actor is None or not may_cut_release(actor):
        raise ReleaseForbidden("only release managers may cancel a release (permission releases.cut_release)")
    with transaction.atomic():
        build = RELEASES.locked(release_pk)
        if build is None:
            raise ReleaseError(f"no release #{release_pk}")
        release = build.release
        if build.status not in UNFINISHED:
            raise ReleaseError(
                f"{release} is {release.get_status_display().lower()}: only a requested or building release can be cancelled",
                release=release,
            )
        lifecycle.release_fail_locked(build, error=f"cancelled by {actor.get_username()}", actor=actor)
    return release


def release_builds_sweep() -> lifecycle.SweepReport:
    """Re-send builds whose message was lost or whose worker died; fail those out of attempts or time.

    The same sweep as beat's `releases.tasks.release_builds_sweep` (see `releases.lifecycle.builds_sweep`).
    """
    return lifecycle.builds_sweep(send=tasks.release_build_enqueue)


# ---------------------------------------------------------------- external


@transaction.atomic
def release_record_external(
    *, release_id: str, release_date: datetime.date, note: str, records: list[tuple[str, str]]
) -> tuple[Release, bool]:
    """Record a release published elsewhere (the seed page's), whose files this portal does not hold.

    Idempotent by release id; returns the release and whether it was created. The row is written
    unpublished, given its memberships, then published: nothing is added to a published release. Its
    build is the record of its recording, published as it is created.
    """
    existing = Release.objects.filter(release_id=release_id).first()
    if existing is not None:
        return existing, False
    release = Release.objects.create(release_id=release_id, release_date=release_date, is_external=True, note=note)
    ReleaseRecord.objects.bulk_create(
        ReleaseRecord(release=release, record_type=record_type, stable_id=stable_id)
        for record_type, stable_id in records
    )
    now = timezone.now()
    Release.objects.filter(pk=release.pk).update(
        published_at=now,
        counts={"records": selectors.records_by_type(ReleaseRecord.objects.filter(release=release))},
    )
    build = ReleaseBuild.objects.create(
        release=release,
        status=ReleaseStatus.PUBLISHED,
        stage="recorded from a published page",
        progress=100,
        finished_at=now,
    )
    release.refresh_from_db()
    # Not a move of the table (the build was never requested in earnest): its one event, as if created published.
    RELEASES.record_event(row=build, from_status=NEW, reason="recorded from a published page")
    version_bump()
    return release, True


# ------------------------------------------------------------ damaged files


def release_file_serve_check(*, release: Release, record: ReleaseFile, handle: BinaryIO) -> bool:
    """Whether the open file may be sent: True when its bytes are those the file table records.

    A damaged file is hashed once per identity (`fixity.file_verdict`, cached); the first request
    that finds it writes one failed fixity check naming it (unless the release's latest check
    already does), which marks the release damaged on its page and in the API, and mails the
    release managers after commit. Repair: restore the file from a copy of the bag (its identity
    changes, so it is hashed again and served once it matches), then `manage.py verify_release`
    records an intact check, which lifts the mark.
    """
    verdict = fixity.file_verdict(record=record, handle=handle)
    if verdict.intact:
        return True
    if verdict.fresh:
        release_damage_record(release=release, problems=[verdict.problem], files_checked=1)
    return False


def release_damage_record(*, release: Release, problems: list[str], files_checked: int) -> ReleaseFixityCheck | None:
    """Record damage found outside the audit as a failed fixity check, once: nothing is written when
    the release's latest check already names every problem's file. Tells the release managers."""
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        latest = locked.fixity_checks.order_by("-checked_at", "-id").first()
        known = selectors.damaged_file_names(latest)
        if known and all(problem.split(":", 1)[0] in known for problem in problems):
            return None
        check = ReleaseFixityCheck.objects.create(
            release=locked, intact=False, problems="\n".join(problems), files_checked=files_checked
        )
        tasks.release_damage_notify_after_commit(check)
    fixity.logger.error("release %s: a download found damage: %s", release.release_id, "; ".join(problems))
    return check
