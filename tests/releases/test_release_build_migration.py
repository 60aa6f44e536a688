"""Releases 0008 splits each release's build into its own row and keeps every release, event,
membership and checksum; the immutability guards hold again after it, on both backends."""

from __future__ import annotations

import datetime

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from releases.db_triggers import IMMUTABLE_MESSAGE

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("releases", "0007_releaserecord_no_record_index")]
AFTER = [("releases", "0008_release_build")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.fixture
def migrated_back_to_the_newest():
    yield
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_it_moves_each_releases_build_to_its_own_row_and_keeps_events_memberships_and_checksums(
    migrated_back_to_the_newest,
):
    old = migrate(BEFORE)
    Release, Event = old.get_model("releases", "Release"), old.get_model("releases", "ReleaseEvent")
    File, Record = old.get_model("releases", "ReleaseFile"), old.get_model("releases", "ReleaseRecord")
    User = old.get_model("auth", "User")
    manager = User.objects.create(username="manager-of-0007")
    now = timezone.now()
    failed = Release.objects.create(
        release_date=datetime.date(2026, 11, 1),
        status="failed",
        attempts=2,
        error="disk full",
        build_log="cut\nfailed: disk full\n",
        cut_by=manager,
    )
    published = Release.objects.create(
        release_date=datetime.date(2026, 11, 2),
        release_id="2026-11-02-0123456789ab",
        status="requested",
        attempts=1,
        progress=100,
        stage="published",
        payload_sha256="a" * 64,
        counts={"records": {"protocol": 1}},
        build_log="published as 2026-11-02-0123456789ab\n",
        cut_by=manager,
    )
    File.objects.create(release=published, name="data/x.csv.gz", kind="payload", bytes=3, sha256="b" * 64, sha512="c")
    Record.objects.create(release=published, record_type="protocol", stable_id="p-1", content_sha256="d" * 64)
    Event.objects.create(release=published, from_status="", to_status="requested", attempt=0, reason="cut")
    Event.objects.create(release=published, from_status="building", to_status="published", attempt=1, reason="done")
    Release.objects.filter(pk=published.pk).update(status="published", published_at=now)

    new = migrate(AFTER)
    Release, Build = new.get_model("releases", "Release"), new.get_model("releases", "ReleaseBuild")
    Event, File = new.get_model("releases", "ReleaseEvent"), new.get_model("releases", "ReleaseFile")
    builds = {b.pk: b for b in Build.objects.all()}
    assert set(builds) == {failed.pk, published.pk}
    assert (builds[failed.pk].status, builds[failed.pk].attempts, builds[failed.pk].error) == ("failed", 2, "disk full")
    assert builds[failed.pk].cut_by_id == manager.pk and builds[failed.pk].build_log == "cut\nfailed: disk full\n"
    assert (builds[published.pk].status, builds[published.pk].progress) == ("published", 100)
    kept = Release.objects.get(pk=published.pk)
    assert (kept.release_id, kept.payload_sha256, kept.counts) == (
        "2026-11-02-0123456789ab",
        "a" * 64,
        {"records": {"protocol": 1}},
    )
    assert Release.objects.get(pk=failed.pk).published_at is None
    assert list(Event.objects.filter(release_id=published.pk).values_list("to_status", flat=True)) == [
        "requested",
        "published",
    ]
    assert File.objects.get(release_id=published.pk).sha256 == "b" * 64

    for statement in (
        f"UPDATE releases_release SET note = 'x' WHERE id = {published.pk}",
        f"UPDATE releases_releasebuild SET status = 'failed' WHERE release_id = {published.pk}",
        f"DELETE FROM releases_releasefile WHERE release_id = {published.pk}",
    ):
        with pytest.raises(IntegrityError, match=IMMUTABLE_MESSAGE), transaction.atomic(), connection.cursor() as c:
            c.execute(statement)
    with connection.cursor() as cursor:  # the failed release's build is still the worker's to change
        cursor.execute(f"UPDATE releases_releasebuild SET stage = 'x' WHERE release_id = {failed.pk}")
    _remove(published.pk, failed.pk)


def _remove(*pks: int) -> None:
    """The published release goes with its guards lifted, so the test database can be flushed."""
    from common import append_only
    from releases import db_triggers

    with transaction.atomic(), append_only.guards_lifted(connection), connection.cursor() as cursor:
        for statement in db_triggers.statements(connection.vendor, create=False):
            cursor.execute(statement)
        ids = ", ".join(map(str, pks))
        for table in ("releases_releaserecord", "releases_releasefile", "releases_releaseevent"):
            cursor.execute(f"DELETE FROM {table} WHERE release_id IN ({ids})")
        cursor.execute(f"DELETE FROM releases_releasebuild WHERE release_id IN ({ids})")
        cursor.execute(f"DELETE FROM releases_release WHERE id IN ({ids})")
        cursor.execute("DELETE FROM auth_user WHERE username = 'manager-of-0007'")
        for statement in db_triggers.statements(connection.vendor, create=True):
            cursor.execute(statement)
