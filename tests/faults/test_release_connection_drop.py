"""The database drops a releases worker's connections mid-build: the build is
claimed again at once on fresh connections and published, within seconds, with no sweeper run; the
release never sits in "building" until it goes stale, and cuts are accepted again right after.

PostgreSQL only: its connections are server processes another connection can terminate
(`pg_terminate_backend`), as a failover or an administrator does; the worker is a real Celery process.
"""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from releases.models import Release, ReleaseStatus

pytestmark = [
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.urls("tests.releases.urls_for_tests"),
]

BOUND_SECONDS = 60  # the sweeper would need RELEASE_STALE_AFTER_SECONDS (300) and its minute


def wait_for(predicate, *, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"{what} within {seconds} s")


def test_a_build_whose_connections_drop_is_claimed_again_at_once_and_published(
    seeded, make_user, start_worker, monkeypatch, settings, tmp_path
):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's connections are the ones dropped: this runs in the PostgreSQL pass")
    from portal.celery import app
    from records.models import Protocol
    from records.seed import PROTOCOL_ID
    from tests.factories import EvaluationFactory, ResultFactory

    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    for _ in range(12):  # a slow build: 4 rows a chunk, a pause after each
        ResultFactory(evaluation=EvaluationFactory(protocol=protocol))
    settings.RELEASES_DIR = tmp_path / "releases"
    monkeypatch.setenv("PORTAL_RELEASES_DIR", str(settings.RELEASES_DIR))
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "tests.faults.release_worker_settings")
    with app.connection_for_write() as broker:
        broker.default_channel.queue_purge("releases")  # messages an earlier run may have left
    worker = start_worker("releases")
    api = APIClient()
    api.force_authenticate(make_user("release_manager", "a-release-manager"))
    assert api.post("/api/v1/releases/", {}, format="json").status_code == 202
    release = Release.objects.get(is_external=False)

    def building_far_enough():
        release.refresh_from_db()
        assert release.status in (ReleaseStatus.REQUESTED, ReleaseStatus.BUILDING), release.build.error
        return release.status == ReleaseStatus.BUILDING and release.build.progress >= 20

    wait_for(building_far_enough, seconds=120, what="the build never got to 20 %")
    params = connection.get_connection_params()
    dsn = {k: params[k] for k in ("dbname", "user", "host", "port", "password") if params.get(k)}
    ours = connection.connection.info.backend_pid
    with psycopg.connect(**dsn, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid NOT IN (pg_backend_pid(), %s)",
            [ours],
        ).fetchall()
    assert killed, "the worker had no connection to drop"
    dropped = time.monotonic()

    def finished():
        release.refresh_from_db()
        return release.status in (ReleaseStatus.PUBLISHED, ReleaseStatus.FAILED)

    wait_for(finished, seconds=BOUND_SECONDS, what=f"the release was still {release.status} {release.build.progress} %")
    took = time.monotonic() - dropped
    assert release.status == ReleaseStatus.PUBLISHED, f"{release.build.error}\n{release.build.build_log}"
    assert release.build.attempts == 2 and "lost its database connection" in release.build.build_log, (
        release.build.build_log
    )
    print(f"published {took:.1f} s after {len(killed)} connections were dropped")

    # Cuts are accepted again: the API's answer is what this asks, not a second slow build (the
    # worker is stopped first and the cut's message purged, or stopping would wait for that build).
    worker.stop()
    ResultFactory(evaluation=EvaluationFactory(protocol=protocol))  # something to release
    cut = api.post("/api/v1/releases/", {}, format="json")
    assert cut.status_code == 202, cut.content
    with app.connection_for_write() as broker:
        broker.default_channel.queue_purge("releases")
