"""A build whose database connection is lost mid-build is retried at once on a fresh connection, or
failed at once with the reason: it never sits in "building" until the sweeper
finds it stale, and a new cut is not refused meanwhile.

The connection is lost for real: on PostgreSQL its server process is terminated from another
connection (`pg_terminate_backend`), on SQLite the database handle is closed underneath Django;
either happens as the export reads its second chunk of results, from a hook on the build's
connection (`connection.execute_wrapper`). The build runs as the worker runs it, through the task.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from unittest import mock

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from releases import tasks
from releases.fixity import release_verify
from releases.models import Release, ReleaseEvent, ReleaseStatus
from releases.services import release_cut
from tests.factories import EvaluationFactory, ResultFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.releases.urls_for_tests")]

SECONDS = 30  # "at once": well under the sweeper's RELEASE_STALE_AFTER_SECONDS (300)


def _kill(raw) -> None:
    """Lose `raw` (the DB-API connection under Django's) the way a dropped connection does."""
    if connection.vendor == "postgresql":
        params = connection.get_connection_params()
        dsn = {k: params[k] for k in ("dbname", "user", "host", "port", "password") if params.get(k)}
        pid = raw.info.backend_pid
        with psycopg.connect(**dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            deadline = time.monotonic() + 10
            while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                assert time.monotonic() < deadline, "the build's backend was not terminated"
                time.sleep(0.05)
    else:
        raw.close()


@contextmanager
def connection_lost_mid_export(times: int = 1):
    """Kill the build's connection as it reads the second chunk of results (the export is under way:
    the first chunk written, memberships being stored), `times` times, each in a later attempt.
    Yields the kill times."""
    killed: list[float] = []
    reads = [0]

    def hook(execute, sql, params, many, context):
        if len(killed) < times and 'FROM "records_result"' in sql and "COUNT(" not in sql:
            reads[0] += 1
            if reads[0] == 2:
                reads[0] = 0
                killed.append(time.monotonic())
                _kill(context["connection"].connection)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(hook):
        yield killed


@pytest.fixture
def results():
    """Enough results that the export reads them in several chunks."""
    for _ in range(6):
        ResultFactory(evaluation=EvaluationFactory())


@pytest.fixture
def messages_kept():
    """The build messages a cut sends after commit, kept instead of sent (the test runs the task)."""
    with mock.patch("releases.tasks.release_build.apply_async") as send:
        yield send


def test_it_retries_a_build_whose_connection_was_lost_at_once_and_publishes_it(
    seeded, results, releases_dir, release_manager, settings, messages_kept
):
    settings.RELEASE_BUILD_CHUNK_ROWS = 2
    settings.RELEASE_MAX_ATTEMPTS = 3
    release = release_cut(actor=release_manager)
    started = time.monotonic()
    with connection_lost_mid_export() as killed:
        answer = tasks.release_build(release.pk)
    took = time.monotonic() - started
    assert killed, "the hook never fired: the test lost no connection"
    release.refresh_from_db()
    assert answer["status"] == release.status == ReleaseStatus.PUBLISHED, (
        f"{release.build.error}\n{release.build.build_log}"
    )
    assert took < SECONDS
    assert release.build.attempts == 2
    assert "lost its database connection" in release.build.build_log
    reasons = list(ReleaseEvent.objects.filter(release=release).values_list("reason", flat=True))
    assert any("lost its database connection" in reason and "attempt 2" in reason for reason in reasons), reasons
    assert release_verify(release=release).intact


def test_it_fails_a_build_out_of_attempts_at_once_with_the_reason_and_a_new_cut_is_accepted(
    seeded, results, releases_dir, release_manager, settings, messages_kept
):
    settings.RELEASE_BUILD_CHUNK_ROWS = 2
    settings.RELEASE_MAX_ATTEMPTS = 2
    release = release_cut(actor=release_manager)
    started = time.monotonic()
    with connection_lost_mid_export(times=2) as killed:
        answer = tasks.release_build(release.pk)
    took = time.monotonic() - started
    assert len(killed) == 2
    release.refresh_from_db()
    assert answer["status"] == release.status == ReleaseStatus.FAILED
    assert took < SECONDS
    assert release.build.attempts == 2
    assert release.build.error.startswith("the database connection was lost on attempt 2 of 2: "), release.build.error
    assert not release.files.exists() and not release.records.exists()
    assert list(releases_dir.iterdir()) == []

    api = APIClient()
    api.force_authenticate(release_manager)
    response = api.post("/api/v1/releases/", {}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == ReleaseStatus.REQUESTED
    assert Release.objects.filter(build__status=ReleaseStatus.REQUESTED).exclude(pk=release.pk).count() == 1
