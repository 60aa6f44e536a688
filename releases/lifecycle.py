"""The lifecycle of a release build, in one place: row first, claim, heartbeat, sweeper, event row.

The row is the truth, the Celery message only a nudge (DESIGN.md, "Benchmark jobs" and "Releases"):
- `message_stamp` records the id of the message about to be sent on the (locked or new) row;
  `releases.tasks.release_build_enqueue` sends it after commit.
- `claim` takes the build by a locked conditional update (requested -> building, attempts + 1, a
  new build token); a second message for a live build does nothing, and a build whose worker was
  lost (stale heartbeat) is claimed again, up to RELEASE_MAX_ATTEMPTS claims, then marked failed.
- `Progress` is the writer's progress callback and the heartbeat; it stops a worker whose claim
  is gone (`BuildSuperseded`).
- `builds_sweep` (beat, every minute) re-sends lost builds and fails stale ones, and those no
  worker took for RELEASE_GIVE_UP_AFTER_SECONDS.
- every status change writes one `ReleaseEvent` (`audit`) in the same locked transaction.

The mechanics mirror benchmark jobs'; both are to share common/lifecycle.py. This module imports
neither `releases.services` nor `releases.tasks`: the sweeper is handed the function that sends.
"""

from __future__ import annotations

import datetime
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from common.types import Actor
from releases import conf, store
from releases.models import UNFINISHED, Release, ReleaseEvent, ReleaseStatus

logger = logging.getLogger(__name__)

HEARTBEAT_EVERY_SECONDS = 1.0


class BuildSuperseded(Exception):
    """This worker's claim on the build is gone (another worker reclaimed it): stop quietly."""


# -------------------------------------------------------------- log and events


def log_line(text: str, at: datetime.datetime | None = None) -> str:
    return f"{(at or timezone.now()).strftime('%Y-%m-%dT%H:%M:%SZ')} {text}\n"


def audit(release: Release, *, from_status: str, reason: str, actor: Actor = None) -> ReleaseEvent:
    """The audit row of a status change just made to `release` (locked or new) in this transaction."""
    return ReleaseEvent.objects.create(
        release=release, from_status=from_status, to_status=release.status, attempt=release.attempts, actor=actor, reason=reason,
    )


def append_log(release_pk: int, text: str, **fields: object) -> int:
    """Append one line to the build log (and set `fields`) in one UPDATE; returns the rows updated."""
    return Release.objects.filter(pk=release_pk, status__in=UNFINISHED).update(
        build_log=Concat(F("build_log"), Value(log_line(text))), **fields
    )


def message_stamp(release: Release) -> str:
    """Record the id of the build message about to be sent for the (locked or new) row; returns it."""
    task_id = uuid.uuid4().hex
    Release.objects.filter(pk=release.pk).update(celery_task_id=task_id, sent_at=timezone.now())
    return task_id


# ------------------------------------------------------------------- claim


@dataclass
class Claim:
    release: Release
    token: str


def is_stale(release: Release, now: datetime.datetime) -> bool:
    beat = release.heartbeat or release.started_at
    return beat is None or now - beat > conf.stale_after()


def claim(release_pk: int) -> Claim | None:
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
        if release.status == ReleaseStatus.BUILDING and not is_stale(release, now):
            logger.info("release build %s: being built by another worker (attempt %s)", release_pk, release.attempts)
            return None
        if release.attempts >= conf.max_attempts():
            mark_failed_locked(
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
        release.build_log += log_line(claimed, now)
        release.save(
            update_fields=["status", "attempts", "build_token", "started_at", "heartbeat", "progress", "stage", "error", "build_log"]
        )
        audit(release, from_status=from_status, reason=claimed)
    return Claim(release=release, token=token)


# -------------------------------------------------------------------- fail


def mark_failed_locked(release: Release, error: str, actor: Actor = None) -> None:
    """Fail a (locked) requested or building release; its staging and unpublished folders go with it."""
    now = timezone.now()
    from_status = release.status
    release.status = ReleaseStatus.FAILED
    release.error = error
    release.finished_at = now
    release.build_token = ""
    release.build_log += log_line(f"failed: {error}", now)
    release.save(update_fields=["status", "error", "finished_at", "build_token", "build_log"])
    audit(release, from_status=from_status, actor=actor, reason=error)
    store.remove_staging(release.pk)
    store.remove_unpublished_folders(release)


def fail(release_pk: int, token: str, error: str, detail: str = "") -> None:
    """Fail the build, if the claim `token` still holds it."""
    with transaction.atomic():
        release = Release.objects.select_for_update().filter(pk=release_pk).first()
        if release is None or release.status != ReleaseStatus.BUILDING or release.build_token != token:
            return
        if detail:
            release.build_log += detail if detail.endswith("\n") else detail + "\n"
        mark_failed_locked(release, error)


# --------------------------------------------------------------- heartbeat


class Progress:
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
            raise BuildSuperseded()


# ------------------------------------------------------------------- sweep


@dataclass
class SweepReport:
    resent: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def builds_sweep(*, send: Callable[[Release], None]) -> SweepReport:
    """Re-send builds whose message was lost or whose worker died; fail those out of attempts or time.

    A build is stale when its heartbeat (or, for a requested one, its last message) is older than
    RELEASE_STALE_AFTER_SECONDS. Re-sending is safe: the build claims its row under a lock. Only a
    claim counts an attempt, so a build no worker takes (workers down or hung) would be re-sent
    forever and block every later cut: it is failed once no worker has shown life for
    RELEASE_GIVE_UP_AFTER_SECONDS (since its cut, or its last heartbeat). `send(release)` sends the
    build message for the locked row after commit (`releases.tasks.release_build_enqueue`).
    """
    report = SweepReport()
    now = timezone.now()
    cutoff = now - conf.stale_after()
    give_up = conf.give_up_after()
    candidates = list(Release.objects.filter(status__in=UNFINISHED).values_list("pk", flat=True))
    for pk in candidates:
        with transaction.atomic():
            release = Release.objects.select_for_update().filter(pk=pk, status__in=UNFINISHED).first()
            if release is None:
                continue
            sent_recently = release.sent_at is not None and release.sent_at > cutoff
            if release.status == ReleaseStatus.BUILDING:
                if not is_stale(release, now):
                    continue
                if release.attempts >= conf.max_attempts():
                    mark_failed_locked(
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
                mark_failed_locked(release, error)
                report.failed.append(pk)
                continue
            if sent_recently:
                continue
            if release.status == ReleaseStatus.BUILDING:
                beat = release.heartbeat or release.started_at
                why = f"no heartbeat since {beat:%H:%M:%S}; build sent again" if beat else "build sent again"
            else:
                why = "still requested; build sent again"
            release.build_log += log_line(why)
            release.save(update_fields=["build_log"])
            audit(release, from_status=release.status, reason=why)  # not a new status, but a new message: audited all the same
            send(release)
            report.resent.append(pk)
    return report
