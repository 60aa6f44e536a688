"""Fixtures of the releases tests: a private RELEASES_DIR, a release manager, a built release."""

from __future__ import annotations

import pytest


@pytest.fixture
def releases_dir(settings, tmp_path):
    """Every test that builds writes its release files under its own temporary folder."""
    settings.RELEASES_DIR = tmp_path / "releases"
    return settings.RELEASES_DIR


@pytest.fixture
def release_manager(make_user):
    return make_user("release_manager", "release-manager-one")


@pytest.fixture
def build_now():
    """build_now(release) -> the release, built and published by the service in this process."""

    def build(release):
        from releases.build import release_build

        return release_build(release_pk=release.pk)

    return build


@pytest.fixture
def published_release(seeded, releases_dir, release_manager, build_now):
    """The seeded catalogue cut and built into a published release."""
    from releases.services import release_cut

    release = build_now(release_cut(actor=release_manager))
    assert release.status == "published", release.build.error
    return release


def is_transactional(request) -> bool:
    marker = request.node.get_closest_marker("django_db")
    if marker is not None and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])):
        return True
    return any(name in request.fixturenames for name in ("transactional_db", "live_server"))


@pytest.fixture(autouse=True)
def published_releases_removed_before_flush(request):
    """After a transactional test, remove the releases it published before the database is flushed.

    The immutability triggers refuse DELETE of a release this portal published (and PostgreSQL's
    TRUNCATE while one exists), which is what a flush does; so the triggers are dropped, the rows
    deleted and the triggers created again. Autouse fixtures are torn down after the test's own
    (the workers are stopped by then) and before pytest-django's flush. Import it into
    tests/conftest.py to give every app's transactional tests the same.
    """
    yield
    if not is_transactional(request):
        return
    from django.db import connection, transaction

    from common import append_only
    from releases import db_triggers

    with transaction.atomic(), append_only.guards_lifted(connection), connection.cursor() as cursor:
        for statement in db_triggers.statements(connection.vendor, create=False):
            cursor.execute(statement, None)
        try:
            for table in (
                "releases_releasefixitycheck",
                "releases_releaserecord",
                "releases_releasefile",
                "releases_releaseevent",
                "releases_releasebuild",
            ):
                cursor.execute(f"DELETE FROM {table}", None)
            cursor.execute("UPDATE releases_release SET previous_id = NULL", None)
            cursor.execute("DELETE FROM releases_release", None)
        finally:
            for statement in db_triggers.statements(connection.vendor, create=True):
                cursor.execute(statement, None)


@pytest.fixture(autouse=True)
def quiet_bagit():
    """bagit logs a line per file it hashes; the tests' failure reports need none of them."""
    import logging

    logger = logging.getLogger("bagit")
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """make_user hashes a password per user; PBKDF2's deliberate slowness buys these tests nothing."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """A bundle of tests/releases/bundle_data.py's synthetic tables, written once per test module."""
    from tests.releases.bundle_data import build

    return build(tmp_path_factory.mktemp("bundle"))
