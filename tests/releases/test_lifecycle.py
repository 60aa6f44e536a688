"""Releases move by `common.lifecycle`, as benchmark jobs do: their own table of statuses, a claim
judged by the row count of its conditional UPDATE, refusals that are release errors, a sweeper that
sweeps the other builds when one raises, and durations read the shared way."""

from __future__ import annotations

import datetime
from unittest import mock

import pytest
from django.db import transaction
from django.utils import timezone

from benchmarks.jobs import JOBS
from common.lifecycle import NEW, Lifecycle
from releases import build, conf, lifecycle
from releases.lifecycle import RELEASES, ReleaseConflict, ReleaseError
from releases.models import UNFINISHED, ReleaseBuild, ReleaseEvent, ReleaseStatus
from releases.services import release_builds_sweep, release_cut
from tests.factories import release_with_build

pytestmark = pytest.mark.django_db

REQUESTED, BUILDING, PUBLISHED, FAILED = (
    ReleaseStatus.REQUESTED,
    ReleaseStatus.BUILDING,
    ReleaseStatus.PUBLISHED,
    ReleaseStatus.FAILED,
)


def long_ago() -> datetime.datetime:
    return timezone.now() - datetime.timedelta(hours=1)


def test_it_binds_releases_and_benchmark_jobs_to_the_one_shared_lifecycle():
    assert isinstance(RELEASES, Lifecycle) and isinstance(JOBS, Lifecycle)
    assert RELEASES.table.unfinished == UNFINISHED
    assert RELEASES.table.terminal == {PUBLISHED, FAILED} and RELEASES.table.working == {BUILDING}
    assert (
        RELEASES.table.move_name(NEW, REQUESTED) == "cut" and RELEASES.table.move_name(REQUESTED, BUILDING) == "claim"
    )
    assert RELEASES.table.move_name(REQUESTED, FAILED) == RELEASES.table.move_name(BUILDING, FAILED) == "fail"
    assert RELEASES.table.allows(BUILDING, BUILDING) and RELEASES.table.allows(
        REQUESTED, REQUESTED
    )  # re-send, take-over
    assert not RELEASES.table.allows(REQUESTED, PUBLISHED) and not RELEASES.table.allows(FAILED, REQUESTED)


def test_it_refuses_a_move_the_table_does_not_list_with_a_release_error():
    failed = release_with_build(release_date=timezone.localdate(), status=FAILED, error="cancelled")
    with pytest.raises(ReleaseConflict) as refused, transaction.atomic():
        RELEASES.change(row=RELEASES.locked(failed.pk), to=BUILDING, reason="revived")
    assert isinstance(refused.value, ReleaseError) and refused.value.release is None
    assert (refused.value.status, refused.value.code, refused.value.field) == (409, "conflict", "status")
    assert refused.value.message == f"release {failed.pk} is failed: it cannot become building"
    assert not ReleaseEvent.objects.exists()


def test_a_take_over_loses_when_the_lost_worker_beats_again_before_the_claim(release_manager, releases_dir):
    """The claim is judged by the row count of its conditional UPDATE (still building, this attempt,
    still stale), not only by what was read."""
    release = release_cut(actor=release_manager)
    first = build.release_build_claim(release_pk=release.pk)
    ReleaseBuild.objects.filter(pk=release.pk).update(heartbeat=long_ago())
    read = RELEASES.locked

    def read_then_the_worker_beats(pk):
        row = read(pk)
        assert RELEASES.heartbeat(pk=pk, claim=first.token)  # the worker was only slow: its claim still holds
        return row

    with mock.patch.object(RELEASES, "locked", side_effect=read_then_the_worker_beats):
        assert build.release_build_claim(release_pk=release.pk) is None
    release.refresh_from_db()
    assert (release.status, release.build.attempts, release.build.build_token) == (BUILDING, 1, first.token)
    assert list(release.events.values_list("from_status", "to_status", "attempt")) == [
        (NEW, REQUESTED, 0),
        (REQUESTED, BUILDING, 1),
    ]


def test_a_claim_writes_its_event_and_the_heartbeat_stops_a_superseded_worker(release_manager, releases_dir):
    release = release_cut(actor=release_manager)
    claimed = build.release_build_claim(release_pk=release.pk)
    assert claimed.release.build.build_token == claimed.token and claimed.release.build.stage == "starting"
    event = release.events.last()
    assert (event.from_status, event.to_status, event.attempt, event.actor) == (REQUESTED, BUILDING, 1, None)
    assert event.reason.startswith("attempt 1 claimed by ") and event.reason in claimed.release.build.build_log
    build.Progress(release.pk, claimed.token, {"t": 10}).report("sort t", 40, force=True)
    release.refresh_from_db()
    assert (release.build.progress, release.build.stage) == (40, "sort t")
    with pytest.raises(build.BuildSuperseded):
        build.Progress(release.pk, "another-token", {"t": 10}).report("sort t", 50, force=True)


def test_one_build_whose_sweep_raises_does_not_stop_the_sweep_of_the_others(
    release_manager, settings, django_capture_on_commit_callbacks, caplog
):
    settings.RELEASE_STALE_AFTER_SECONDS = 60
    today = timezone.localdate()
    broken = release_with_build(release_date=today, status=REQUESTED, sent_at=long_ago())
    lost = release_with_build(release_date=today, status=REQUESTED, sent_at=long_ago())
    sent = []

    def send(release):
        if release.pk == broken.pk:
            raise RuntimeError("broker went away")
        lifecycle.message_stamp(release)
        sent.append(release.pk)

    with django_capture_on_commit_callbacks(execute=True):
        report = lifecycle.builds_sweep(send=send)
    assert (report.resent, report.failed, sent) == ([lost.pk], [], [lost.pk])
    assert f"release {broken.pk} could not be swept" in caplog.text
    assert not broken.events.exists() and lost.events.get().reason == "still requested; build sent again"
    with mock.patch("releases.tasks.release_build.apply_async"), django_capture_on_commit_callbacks(execute=True):
        assert release_builds_sweep().resent == [broken.pk]  # the next sweep tries it again


def test_it_reads_its_durations_the_shared_way(settings):
    del settings.RELEASE_STALE_AFTER_SECONDS, settings.RELEASE_GIVE_UP_AFTER_SECONDS  # the defaults
    assert (conf.stale_after(), conf.give_up_after()) == (
        datetime.timedelta(seconds=300),
        datetime.timedelta(seconds=3600),
    )
    settings.RELEASE_STALE_AFTER_SECONDS = 45
    settings.RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS = 600
    settings.RELEASE_BUILD_TIME_LIMIT_SECONDS = 500  # never under the soft limit
    settings.RELEASE_BUILD_CHUNK_DELAY = 0.25
    assert conf.stale_after() == datetime.timedelta(seconds=45)
    assert conf.build_time_limits() == (600, 601)
    assert conf.chunk_delay() == 0.25
