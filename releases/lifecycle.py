"""The release build's lifecycle: its status table, its refusals, and `RELEASES`, the `common.lifecycle`
binding through which every status change, claim, heartbeat and sweep of a `ReleaseBuild` goes (the
`Release` itself changes once, when `releases.build` publishes it).

The mechanics are benchmark jobs' (`benchmarks.jobs.JOBS`): row first, claim by conditional update,
heartbeat, sweeper, one `ReleaseEvent` per status change, all in `common.lifecycle`. What is the
release's own lives here:
- its statuses: requested -> building -> published, or failed (a cancel is a fail, with its reason
  and actor); a build sent again, or taken over from a lost worker, keeps its status but is a listed
  move, audited like any other;
- `release_fail_locked`: a failed build's staging and unpublished folders and stored memberships go with it;
- `log_line`, `append_log`: the build log;
- `message_stamp`: the id of the build message about to be sent (`releases.tasks.release_build_enqueue`
  sends it after commit);
- `builds_sweep` and its per-build decision: which builds are sent again and which are failed.
- `connection_lost`: whether a build's error was its database connection's (`releases.build` then
  claims it again at once).

Both sides use it: the request side (`releases.services`: cut, cancel) and the worker side
(`releases.build`: claim, progress, fail, publish). It imports neither of them, nor the tasks: the
sweeper is handed the function that sends.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable

from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from common.errors import DomainError
from common.lifecycle import NEW, Lifecycle, SweepReport, TransitionTable
from common.types import Actor
from releases import conf, store
from releases.models import UNFINISHED, Release, ReleaseBuild, ReleaseEvent, ReleaseRecord, ReleaseStatus

REQUESTED, BUILDING, PUBLISHED, FAILED = (
    ReleaseStatus.REQUESTED,
    ReleaseStatus.BUILDING,
    ReleaseStatus.PUBLISHED,
    ReleaseStatus.FAILED,
)


# ------------------------------------------------------------------ errors


class ReleaseError(DomainError):
    """A refused release operation; `release` is the one it was about, where there is one."""

    def __init__(
        self, message: str, *, release: Release | None = None, field: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message, field=field, code=code)
        self.release = release


class BuildFailed(Exception):
    """The build cannot succeed; the message is the release's error."""


class BuildSuperseded(Exception):
    """This worker's claim on the build is gone (cancelled, or another worker took it over): stop quietly."""


class ReleaseForbidden(ReleaseError):
    status = 403
    code = "permission_denied"


class NothingChanged(ReleaseError):
    status = 409
    code = "nothing_changed"


class BuildInProgress(ReleaseError):
    status = 409
    code = "build_in_progress"


class ReleaseConflict(ReleaseError):
    """A status change the release's table does not list (say, a published release failed)."""

    status = 409
    code = "conflict"
    default_field = "status"


# ------------------------------------------------------------------- table


#: The legal status changes, as data: (from, to) -> what it is. NEW ("") is a release being cut.
STATUS_CHANGES = TransitionTable(
    states=tuple(ReleaseStatus.values),
    moves={
        (NEW, REQUESTED): "cut",
        (REQUESTED, REQUESTED): "re-send",  # not a change of status, but the message sent again: audited all the same
        (REQUESTED, BUILDING): "claim",
        # The sweeper sends a stale build again; a worker takes a stale build over from a lost one.
        (BUILDING, BUILDING): "re-send or take over",
        (BUILDING, PUBLISHED): "publish",
        (REQUESTED, FAILED): "fail",  # by the sweeper, or a cancel by a release manager
        (BUILDING, FAILED): "fail",
    },
    terminal=frozenset({PUBLISHED, FAILED}),
    working=frozenset({BUILDING}),
)

#: A build's claim is its token: a heartbeat (or a publish, or a fail) of the worker holding token T
#: counts only while the row is building under T.
RELEASES: Lifecycle[ReleaseBuild] = Lifecycle(
    model=ReleaseBuild,
    table=STATUS_CHANGES,
    event_model=ReleaseEvent,
    event_row_field="release",
    label="release",
    claim_field="build_token",
    heartbeat_field="heartbeat",
    started_field="started_at",
    refused=ReleaseConflict,
)


# -------------------------------------------------------------- log and fail


def log_line(text: str, at: datetime.datetime | None = None) -> str:
    return f"{(at or timezone.now()).strftime('%Y-%m-%dT%H:%M:%SZ')} {text}\n"


def append_log(release_pk: int, text: str, **fields: object) -> int:
    """Append one line to the build log (and set `fields`) in one UPDATE; returns the rows updated."""
    return ReleaseBuild.objects.filter(pk=release_pk, status__in=UNFINISHED).update(
        build_log=Concat(F("build_log"), Value(log_line(text))), **fields
    )


def message_stamp(release_pk: int) -> str:
    """Record the id of the build message about to be sent for the (locked or new) build; returns it."""
    task_id = uuid.uuid4().hex
    ReleaseBuild.objects.filter(pk=release_pk).update(celery_task_id=task_id, sent_at=timezone.now())
    return task_id


def release_fail_locked(build: ReleaseBuild, *, error: str, actor: Actor = None) -> None:
    """Fail a (locked) requested or building build, inside the caller's transaction, with one event;
    its staging and unpublished folders and stored memberships go with it. `actor` is the release
    manager who cancelled it."""
    now = timezone.now()
    RELEASES.change(
        row=build,
        to=FAILED,
        actor=actor,
        reason=error,
        error=error,
        finished_at=now,
        build_token="",
        build_log=build.build_log + log_line(f"failed: {error}", now),
    )
    store.remove_staging(build.pk)
    store.remove_unpublished_folders(build.release)
    ReleaseRecord.objects.filter(release_id=build.pk).delete()  # stored while it was built (releases.memberships)


def out_of_attempts(build: ReleaseBuild) -> bool:
    """Whether every claim this build may have has been used (RELEASE_MAX_ATTEMPTS)."""
    return build.attempts >= conf.max_attempts()


def give_up_out_of_attempts(build: ReleaseBuild) -> None:
    """Fail a (locked) build whose worker was lost on each of its attempts."""
    release_fail_locked(
        build, error=f"gave up after {build.attempts} attempt(s): the worker building it was lost each time"
    )


# ------------------------------------------------------- a lost connection


def driver_errors() -> tuple[type[Exception], ...]:
    """Django's database errors and the driver's own (one can come unwrapped: a cursor closed after a failure)."""
    return (DatabaseError, connection.Database.Error)  # type: ignore[attr-defined]


def connection_answers() -> bool:
    """Whether this thread's database connection still runs a query."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:
        return False
    return True


def connection_lost(exc: BaseException) -> bool:
    """Whether a build failed because its database connection was lost: a driver's error (Django's
    wrapper or the driver's own, anywhere in the chain) after which the connection is unusable, or
    a connection-level one (OperationalError, InterfaceError) whatever the connection says now."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if not any(isinstance(error, driver_errors()) for error in chain):
        return False
    if any(isinstance(error, (OperationalError, InterfaceError)) for error in chain):
        return True
    return connection.in_atomic_block is False and not connection_answers()


# ------------------------------------------------------------------- state


def build_state(build: ReleaseBuild) -> str:
    """What an unfinished build is doing, in words, from its row: a requested build no worker has
    claimed is waiting for one (the queue may be behind, or no releases worker runs), not building."""
    if build.status == REQUESTED:
        sent = f" since {build.sent_at:%H:%M:%S} UTC" if build.sent_at else ""
        return f"waiting for a worker{sent}: no worker has taken the build yet"
    if build.status == BUILDING:
        beat = build.heartbeat or build.started_at
        heard = f", last heard from {beat:%H:%M:%S} UTC" if beat else ""
        return f"a worker is building it (attempt {build.attempts}{heard})"
    return str(ReleaseStatus(build.status).label).lower()


# ------------------------------------------------------------------- sweep


def _sweep_one(
    build: ReleaseBuild,
    *,
    send: Callable[[ReleaseBuild], None],
    now: datetime.datetime,
    stale_after: datetime.timedelta,
    give_up: datetime.timedelta,
) -> str | None:
    """One unfinished build (locked): failed ("failed"), sent again ("resent"), or left alone (None)."""
    if build.status == BUILDING:
        if not RELEASES.is_stale(build, now=now, stale_after=stale_after):
            return None
        if out_of_attempts(build):
            give_up_out_of_attempts(build)
            return "failed"
    last_life = build.heartbeat or build.started_at or build.created_at
    if now - last_life > give_up:
        if build.status == BUILDING:
            error = f"no heartbeat for over {give_up} after attempt {build.attempts}, and no worker took the build again: gave up"
        else:
            error = f"no worker took the build within {give_up} of its cut (are the releases workers running?): gave up"
        release_fail_locked(build, error=error)
        return "failed"
    if build.sent_at is not None and build.sent_at > now - stale_after:
        return None  # sent recently: the message may still be on its way
    if build.status == BUILDING:
        beat = build.heartbeat or build.started_at
        why = f"no heartbeat since {beat:%H:%M:%S}; build sent again" if beat else "build sent again"
    else:
        why = "still requested; build sent again"
    RELEASES.change(row=build, to=build.status, reason=why, build_log=build.build_log + log_line(why))
    send(build)
    return "resent"


def builds_sweep(*, send: Callable[[ReleaseBuild], None]) -> SweepReport:
    """Re-send builds whose message was lost or whose worker died; fail those out of attempts or time.

    A build is stale when its heartbeat (or, for a requested one, its last message) is older than
    RELEASE_STALE_AFTER_SECONDS. Re-sending is safe: the build claims its row by a conditional update.
    Only a claim counts an attempt, so a build no worker takes (workers down or hung) would be re-sent
    forever and block every later cut: it is failed once no worker has shown life for
    RELEASE_GIVE_UP_AFTER_SECONDS (since its cut, or its last heartbeat). `send(build)` sends the
    build message for the locked row after commit (`releases.tasks.release_build_enqueue`).

    Each build is swept in its own transaction (`common.lifecycle.Lifecycle.sweep`); one that raises
    is logged and skipped, and the others are still swept.
    """
    now = timezone.now()
    stale_after, give_up = conf.stale_after(), conf.give_up_after()
    outcomes = RELEASES.sweep(
        statuses=UNFINISHED,
        visit=lambda build: _sweep_one(build, send=send, now=now, stale_after=stale_after, give_up=give_up),
    )
    return SweepReport(resent=outcomes.get("resent", []), failed=outcomes.get("failed", []))
