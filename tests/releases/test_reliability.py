"""The build is idempotent, survives lost workers within a bounded number of attempts, and never
publishes a half-written release."""

from __future__ import annotations

import datetime
import signal
import threading
import time
from unittest import mock

import pytest
from django.utils import timezone

from records.models import Result
from releases import build, conf, fixity, services, store
from releases.build import release_build
from releases.fixity import release_verify
from releases.models import Release, ReleaseBuild, ReleaseFile, ReleaseStatus
from releases.services import release_builds_sweep, release_cut
from tests.factories import release_with_build

pytestmark = pytest.mark.django_db


def long_ago() -> datetime.datetime:
    return timezone.now() - datetime.timedelta(hours=1)


def visible_entries(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_running_the_build_twice_builds_once(seeded, releases_dir, release_manager):
    release = release_cut(actor=release_manager)
    first = release_build(release_pk=release.pk)
    files = sorted(ReleaseFile.objects.values_list("name", "sha256"))
    second = release_build(release_pk=release.pk)
    assert first.status == second.status == ReleaseStatus.PUBLISHED
    assert second.build.attempts == 1 and second.build.build_log.count("published as") == 1
    assert sorted(ReleaseFile.objects.values_list("name", "sha256")) == files
    assert visible_entries(releases_dir) == [first.release_id]


def test_a_second_message_while_the_build_is_alive_does_nothing(seeded, releases_dir, release_manager):
    release = release_cut(actor=release_manager)
    claim = build.release_build_claim(release_pk=release.pk)  # a worker is building it right now
    assert release_build(release_pk=release.pk).status == ReleaseStatus.BUILDING
    release.refresh_from_db()
    assert release.build.attempts == 1 and release.build.build_token == claim.token


def test_a_build_whose_worker_was_lost_is_claimed_again_and_published(seeded, releases_dir, release_manager):
    release = release_cut(actor=release_manager)
    lost = build.release_build_claim(release_pk=release.pk)
    leftover = releases_dir / f"{store.STAGING_PREFIX}{release.pk}-{lost.token}"
    (leftover / "release").mkdir(parents=True)
    (leftover / "release" / "half-written.csv.gz").write_bytes(b"\x1f\x8b")
    ReleaseBuild.objects.filter(pk=release.pk).update(heartbeat=long_ago())

    published = release_build(release_pk=release.pk)
    assert published.status == ReleaseStatus.PUBLISHED and published.build.attempts == 2
    assert "previous worker lost; attempt 2" in published.build.build_log
    assert visible_entries(releases_dir) == [published.release_id]
    assert release_verify(release=published).intact


def test_a_worker_that_lost_its_claim_stops_and_publishes_nothing(seeded, releases_dir, release_manager):
    release = release_cut(actor=release_manager)
    lost = build.release_build_claim(release_pk=release.pk)
    ReleaseBuild.objects.filter(pk=release.pk).update(heartbeat=long_ago())
    current = build.release_build_claim(release_pk=release.pk)  # another worker takes the stale build over
    with pytest.raises(build.BuildSuperseded):
        build.Progress(release.pk, lost.token, {"t": 1}).report("sort t", 10, force=True)
    build._build(current)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PUBLISHED and release.build.attempts == 2


def test_a_build_out_of_attempts_is_marked_failed(seeded, releases_dir, release_manager, settings):
    settings.RELEASE_MAX_ATTEMPTS = 2
    release = release_cut(actor=release_manager)
    ReleaseBuild.objects.filter(pk=release.pk).update(status=ReleaseStatus.BUILDING, attempts=2, heartbeat=long_ago())
    failed = release_build(release_pk=release.pk)
    assert failed.status == ReleaseStatus.FAILED
    assert failed.build.error == "gave up after 2 attempt(s): the worker building it was lost each time"
    assert not failed.files.exists() and visible_entries(releases_dir) == []


def test_the_sweeper_resends_lost_builds_and_fails_exhausted_ones(
    seeded, releases_dir, release_manager, settings, django_capture_on_commit_callbacks
):
    settings.RELEASE_MAX_ATTEMPTS = 3
    settings.RELEASE_STALE_AFTER_SECONDS = 60
    settings.RELEASE_GIVE_UP_AFTER_SECONDS = 1800
    settings.RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS = 600
    settings.RELEASE_BUILD_TIME_LIMIT_SECONDS = 660
    today = timezone.localdate()
    minutes_ago = timezone.now() - datetime.timedelta(minutes=10)
    lost_message = release_with_build(release_date=today, status=ReleaseStatus.REQUESTED, sent_at=long_ago())
    fresh_message = release_with_build(release_date=today, status=ReleaseStatus.REQUESTED, sent_at=timezone.now())
    stale = release_with_build(
        release_date=today, status=ReleaseStatus.BUILDING, attempts=1, heartbeat=minutes_ago, sent_at=long_ago()
    )
    alive = release_with_build(
        release_date=today, status=ReleaseStatus.BUILDING, attempts=1, heartbeat=timezone.now(), sent_at=long_ago()
    )
    exhausted = release_with_build(
        release_date=today, status=ReleaseStatus.BUILDING, attempts=3, heartbeat=long_ago(), sent_at=long_ago()
    )
    abandoned = release_with_build(
        release_date=today, status=ReleaseStatus.BUILDING, attempts=1, heartbeat=long_ago(), sent_at=long_ago()
    )

    with mock.patch("releases.tasks.release_build.apply_async") as send:
        with django_capture_on_commit_callbacks(execute=True):
            report = release_builds_sweep()
    assert sorted(report.resent) == sorted([lost_message.pk, stale.pk])
    assert sorted(report.failed) == sorted([exhausted.pk, abandoned.pk])
    assert sorted(call.kwargs["args"][0] for call in send.call_args_list) == sorted([lost_message.pk, stale.pk])
    assert all(
        call.kwargs["soft_time_limit"] == 600 and call.kwargs["time_limit"] == 660 for call in send.call_args_list
    )
    statuses = dict(ReleaseBuild.objects.values_list("pk", "status"))
    assert statuses[exhausted.pk] == statuses[abandoned.pk] == ReleaseStatus.FAILED
    abandoned.refresh_from_db()
    assert (
        abandoned.build.error
        == "no heartbeat for over 0:30:00 after attempt 1, and no worker took the build again: gave up"
    )
    assert statuses[fresh_message.pk] == statuses[lost_message.pk] == ReleaseStatus.REQUESTED
    assert statuses[alive.pk] == statuses[stale.pk] == ReleaseStatus.BUILDING
    with mock.patch("releases.tasks.release_build.apply_async") as send:
        with django_capture_on_commit_callbacks(execute=True):
            assert release_builds_sweep().resent == []  # just re-sent: not again until stale once more
    assert not send.called


def test_the_sweeper_fails_a_build_no_worker_takes_after_a_bounded_number_of_resends(
    releases_dir, release_manager, settings, django_capture_on_commit_callbacks
):
    settings.RELEASE_STALE_AFTER_SECONDS = 60
    settings.RELEASE_GIVE_UP_AFTER_SECONDS = 300
    clock = [timezone.now()]
    with mock.patch("django.utils.timezone.now", side_effect=lambda: clock[0]):
        stuck = release_cut(actor=release_manager)  # the workers are down: nobody ever claims it
        with mock.patch("releases.tasks.release_build.apply_async") as send:
            for _ in range(20):
                clock[0] += datetime.timedelta(seconds=61)  # beat runs the sweeper every minute
                with django_capture_on_commit_callbacks(execute=True):
                    report = release_builds_sweep()
                if report.failed:
                    break
    assert report.failed == [stuck.pk] and send.call_count == 4  # re-sent at 1, 2, 3 and 4 minutes; failed at 5
    stuck.refresh_from_db()
    assert stuck.status == ReleaseStatus.FAILED and stuck.build.attempts == 0
    reason = "no worker took the build within 0:05:00 of its cut (are the releases workers running?): gave up"
    assert stuck.build.error == reason and stuck.build.build_log.endswith(f"failed: {reason}\n")
    assert stuck.build.build_log.count("still requested; build sent again") == 4
    assert list(stuck.events.values_list("from_status", "to_status", "reason")) == [
        ("", "requested", "cut"),
        *[("requested", "requested", "still requested; build sent again")] * 4,
        ("requested", "failed", reason),
    ]
    assert release_cut(actor=release_manager).status == ReleaseStatus.REQUESTED  # no longer blocks the next cut


def test_a_release_manager_may_cancel_a_stuck_build_and_cut_again(releases_dir, release_manager, curator):
    stuck = release_cut(actor=release_manager)
    with pytest.raises(services.ReleaseForbidden):
        services.release_cancel(actor=curator, release_pk=stuck.pk)
    cancelled = services.release_cancel(actor=release_manager, release_pk=stuck.pk)
    assert cancelled.status == ReleaseStatus.FAILED and cancelled.build.error == "cancelled by release-manager-one"
    event = cancelled.events.last()
    assert (event.from_status, event.to_status, event.actor, event.reason) == (
        "requested",
        "failed",
        release_manager,
        "cancelled by release-manager-one",
    )
    with pytest.raises(services.ReleaseError, match="only a requested or building release can be cancelled"):
        services.release_cancel(actor=release_manager, release_pk=stuck.pk)
    assert release_cut(actor=release_manager).status == ReleaseStatus.REQUESTED


def test_a_build_past_its_soft_time_limit_fails_with_the_reason(seeded, releases_dir, release_manager, settings):
    from celery.exceptions import SoftTimeLimitExceeded

    settings.RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS = 5400
    release = release_cut(actor=release_manager)
    with mock.patch("releases.catalogue_rows.bundle_write", side_effect=SoftTimeLimitExceeded()):
        failed = release_build(release_pk=release.pk)
    assert failed.status == ReleaseStatus.FAILED
    assert failed.build.error == "the build ran past its time limit of 1:30:00 (RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS)"
    assert visible_entries(releases_dir) == []


def release_folders(directory) -> list[str]:
    return [name for name in visible_entries(directory) if not name.startswith(store.STAGING_PREFIX)]


def test_a_claim_removes_only_a_folder_it_installed_and_only_while_the_build_is_its_own(
    seeded, releases_dir, release_manager
):
    release = release_cut(actor=release_manager)
    claims = [build.release_build_claim(release_pk=release.pk)]

    def taken_over_while_publishing(*args, **kwargs):
        ReleaseBuild.objects.filter(pk=release.pk).update(heartbeat=long_ago())
        claims.append(build.release_build_claim(release_pk=release.pk))  # another worker takes the build over meanwhile
        raise build.BuildSuperseded()

    with mock.patch.object(build, "_publish", side_effect=taken_over_while_publishing):
        with pytest.raises(build.BuildSuperseded):
            build._build(claims[0])  # installs the folder (renames it into place), then loses the build
        [folder] = release_folders(releases_dir)  # kept: the claim that took over may be publishing it
        with pytest.raises(build.BuildSuperseded):
            build._build(claims[1])  # finds that folder, verifies it, then loses the build too
        assert release_folders(releases_dir) == [folder]  # not its own to remove

    build._build(claims[2])
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PUBLISHED and release.build.attempts == 3 and release.release_id == folder
    assert release_verify(release=release).intact


def test_a_failed_release_leaves_no_unpublished_folder_and_keeps_published_ones(
    published_release, release_manager, curator
):
    from records.models import Result
    from records.services import record_save

    result = Result.objects.first()
    result.printed_value = "20 minutes"
    record_save(record=result, actor=curator, changed_fields=["printed_value"])
    release = release_cut(actor=release_manager)
    releases_dir = conf.releases_dir()
    leftover = releases_dir / f"{release.release_date.isoformat()}-0123456789ab"  # a lost claim renamed it into place
    (leftover / "data").mkdir(parents=True)
    leftover.chmod(0o555)
    services.release_cancel(actor=release_manager, release_pk=release.pk)
    assert release_folders(releases_dir) == [published_release.release_id]
    assert release_verify(release=published_release).intact


def test_an_error_during_the_build_fails_the_release_with_its_reason_and_leaves_no_files(
    seeded, releases_dir, release_manager
):
    release = release_cut(actor=release_manager)
    with mock.patch("releases.catalogue_rows.bundle_write", side_effect=OSError("disk full")):
        failed = release_build(release_pk=release.pk)
    assert failed.status == ReleaseStatus.FAILED and failed.build.error == "OSError: disk full"
    assert "Traceback" in failed.build.build_log
    assert visible_entries(releases_dir) == []


def test_a_bag_that_does_not_verify_is_never_published(seeded, releases_dir, release_manager):
    release = release_cut(actor=release_manager)
    with mock.patch("releases.build.verify_bundle", return_value=["data/x.csv.gz checksum mismatch"]):
        failed = release_build(release_pk=release.pk)
    assert failed.status == ReleaseStatus.FAILED
    assert failed.build.error == "the built bag does not verify: data/x.csv.gz checksum mismatch"
    assert visible_entries(releases_dir) == [] and not failed.files.exists()


def test_a_failure_while_publishing_removes_the_installed_files(seeded, releases_dir, release_manager):
    release = release_cut(actor=release_manager)
    # The memberships were stored during the export: the failure removes them with the files.
    with mock.patch("releases.build.MembershipWriter.changes", side_effect=RuntimeError("database went away")):
        failed = release_build(release_pk=release.pk)
    assert failed.status == ReleaseStatus.FAILED and failed.release_id is None
    assert visible_entries(releases_dir) == [] and not failed.files.exists() and not failed.records.exists()


def test_a_catalogue_changing_during_the_export_is_exported_again(seeded, releases_dir, release_manager):
    release = release_cut(actor=release_manager)
    marks = iter(["before", "moved", "moved", "moved"])
    with mock.patch("releases.catalogue_rows.catalogue_watermark", side_effect=lambda: next(marks)):
        published = release_build(release_pk=release.pk)
    assert published.status == ReleaseStatus.PUBLISHED
    assert "the catalogue changed during export pass 1; exporting again" in published.build.build_log
    assert published.catalogue_watermark == "moved"


def _commit_from_another_connection() -> None:
    """What a curator's edit looks like to the build: a write another connection commits."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    def write() -> None:
        try:
            get_user_model().objects.create(username=f"someone-else-{time.monotonic_ns()}")
        finally:
            connection.close()

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()


@pytest.mark.django_db(transaction=True)
def test_writes_by_other_connections_while_the_build_reads_do_not_fail_it(
    seeded, releases_dir, release_manager, settings
):
    """On SQLite a cursor left open across the build's own writes held a read snapshot; once another
    connection had committed, the next progress write failed at once with "database is locked"."""
    from tests.factories import EvaluationFactory, ResultFactory

    for _ in range(6):
        ResultFactory(evaluation=EvaluationFactory())
    settings.RELEASE_BUILD_CHUNK_ROWS = 2
    release = release_cut(actor=release_manager)
    report = build.Progress.report

    def report_after_a_commit_elsewhere(self, stage, percent, *, force=False):
        _commit_from_another_connection()
        return report(self, stage, percent, force=True)

    with mock.patch.object(build.Progress, "report", report_after_a_commit_elsewhere):
        published = release_build(release_pk=release.pk)
    assert published.status == ReleaseStatus.PUBLISHED, published.build.error


@pytest.mark.django_db(transaction=True)
def test_a_build_reads_one_snapshot_while_curators_keep_writing_and_publishes_on_its_first_pass(
    seeded, releases_dir, release_manager, settings
):
    """Every progress report of the build sees a new result committed by another connection: the
    bundle holds the catalogue as it was when the export began, in one pass."""
    from django.db import connection

    from releases.models import ReleaseRecord
    from tests.factories import EvaluationFactory, ResultFactory

    for _ in range(6):
        ResultFactory(evaluation=EvaluationFactory())
    at_start = Result.objects.count()
    settings.RELEASE_BUILD_CHUNK_ROWS = 2
    release = release_cut(actor=release_manager)
    report = build.Progress.report
    written = []

    def add_a_result_elsewhere() -> None:
        try:
            written.append(ResultFactory(evaluation=EvaluationFactory()).pk)
        finally:
            connection.close()

    def report_after_a_write_elsewhere(self, stage, percent, *, force=False):
        thread = threading.Thread(target=add_a_result_elsewhere)
        thread.start()
        thread.join()
        return report(self, stage, percent, force=True)

    with mock.patch.object(build.Progress, "report", report_after_a_write_elsewhere):
        published = release_build(release_pk=release.pk)
    assert published.status == ReleaseStatus.PUBLISHED, published.build.error
    assert len(written) > 5 and "exporting again" not in published.build.build_log
    assert ReleaseRecord.objects.filter(release=published, record_type="result").count() == at_start


@pytest.mark.django_db(transaction=True)
def test_the_fixity_audit_records_every_release_while_other_connections_write(
    seeded, releases_dir, release_manager, build_now, monkeypatch
):
    from tests.factories import ResultFactory

    build_now(release_cut(actor=release_manager))
    ResultFactory()
    build_now(release_cut(actor=release_manager))
    check = fixity.release_fixity_check

    def check_after_a_commit_elsewhere(*, release):
        _commit_from_another_connection()
        return check(release=release)

    monkeypatch.setattr(fixity, "release_fixity_check", check_after_a_commit_elsewhere)
    checks = fixity.release_fixity_audit()
    assert [c.intact for c in checks] == [True, True]


def test_the_fixity_audit_records_a_check_per_release(published_release):
    from releases.tasks import release_fixity_audit

    assert release_fixity_audit() == {"checked": 1, "problems": []}
    check = published_release.fixity_checks.get()
    assert check.intact and check.files_checked == published_release.files.count()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_build_ends_with_one_published_release_never_a_partial_one(
    seeded, release_manager, start_worker, monkeypatch, settings, tmp_path
):
    from portal.celery import app
    from records.models import Protocol
    from records.seed import PROTOCOL_ID
    from tests.factories import EvaluationFactory, ResultFactory

    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    for _ in range(12):  # enough rows for a slow build: 4 rows a chunk, a pause after each
        ResultFactory(evaluation=EvaluationFactory(protocol=protocol))
    releases_dir = tmp_path / "worker-releases"
    settings.RELEASES_DIR = releases_dir
    settings.RELEASE_STALE_AFTER_SECONDS = 3
    monkeypatch.setenv("PORTAL_RELEASES_DIR", str(releases_dir))
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "tests.releases.worker_settings")
    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("releases")  # messages an earlier run may have left

    worker = start_worker("releases")
    release = release_cut(actor=release_manager)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        release.refresh_from_db()
        if release.status == ReleaseStatus.BUILDING and release.build.progress >= 20:
            break
        assert release.status in (ReleaseStatus.REQUESTED, ReleaseStatus.BUILDING), release.build.error
        time.sleep(0.1)
    else:
        pytest.fail(f"the build never got going: {release.status} {release.build.progress}%\n{worker.log()[-3000:]}")
    worker.kill(signal.SIGKILL)
    worker.process.wait(timeout=15)

    release.refresh_from_db()
    assert release.status == ReleaseStatus.BUILDING and release.build.attempts == 1
    assert not ReleaseFile.objects.exists()
    assert all(name.startswith(store.STAGING_PREFIX) for name in visible_entries(releases_dir))  # nothing published

    start_worker("releases")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        release_builds_sweep()  # what beat runs every minute: re-sends the build once its heartbeat is stale
        release.refresh_from_db()
        if release.status in (ReleaseStatus.PUBLISHED, ReleaseStatus.FAILED):
            break
        time.sleep(0.5)
    assert release.status == ReleaseStatus.PUBLISHED, (
        f"{release.status}: {release.build.error}\n{release.build.build_log}"
    )
    assert release.build.attempts == 2
    assert Release.objects.filter(is_external=False).count() == 1
    # The worker removes its staging folder just after the publishing commit the loop above saw.
    deadline = time.monotonic() + 15
    while len(visible_entries(releases_dir)) > 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert visible_entries(releases_dir) == [release.release_id]
    assert release_verify(release=release).intact
