"""Shared fixtures. Django is imported lazily so plain-Python test packages run without it."""

from __future__ import annotations

import pytest


def pytest_configure(config):
    """A fast password hasher: the suite creates hundreds of users, and PBKDF2 is slow by design."""
    try:
        from django.conf import settings

        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    except Exception:  # Django is not configured (the runner's own tests run without it)
        pass


def _flush_with_audit_guards_lifted() -> None:
    """A test database's flush (after every transactional test) deletes audit rows, which the
    append-only triggers refuse (common.append_only): the flush, and it alone, runs with them lifted,
    inside its own transaction."""
    from django.db import transaction
    from django.db.backends.base.operations import BaseDatabaseOperations

    from common import append_only

    original = BaseDatabaseOperations.execute_sql_flush
    if getattr(original, "lifts_audit_guards", False):
        return

    def execute_sql_flush(self, sql_list):
        with transaction.atomic(using=self.connection.alias), append_only.guards_lifted(self.connection):
            original(self, sql_list)

    execute_sql_flush.lifts_audit_guards = True  # type: ignore[attr-defined]
    BaseDatabaseOperations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]


@pytest.fixture(autouse=True, scope="session")
def audit_guards_lifted_for_flush():
    try:
        _flush_with_audit_guards_lifted()
    except Exception:  # not a Django test (the runner's own tests run without settings)
        pass
    yield


@pytest.fixture(autouse=True)
def empty_cache():
    """Rate-limit counters live in the shared cache (Redis in CI): every test starts from zero."""
    try:
        from django.core.cache import cache

        cache.clear()
    except Exception:  # not a Django test (the runner's own tests run without settings)
        pass
    yield


@pytest.fixture(scope="session")
def seed_rows():
    """The rows `manage.py import_seed` writes into an empty catalogue, read the first time a test
    asks for the seed there (tests.helpers.WrittenRows): the `seeded` tests then copy them in."""
    return {}


@pytest.fixture
def seeded(db, seed_rows):
    """The seed record page, as `manage.py import_seed` imports it: its rows copied in from the
    session's reading of them (tests.helpers.WrittenRows), or imported where the catalogue is not
    as it was when they were read."""
    from tests.helpers import WrittenRows, seed_import

    if "rows" not in seed_rows:
        rows = WrittenRows.capture(seed_import)
        if rows is None:  # read where the catalogue is empty, next time
            seed_import()
            return
        seed_rows["rows"] = rows
    if not seed_rows["rows"].put():
        seed_import()


@pytest.fixture(scope="session")
def demo_snapshot(django_db_setup, django_db_blocker):
    """The seed and every example paper, loaded once for the session and kept as a snapshot of the
    tables (tests.helpers.DemoSnapshot): `demo_content` and `tests.helpers.load_for_module(...,
    demo=demo_snapshot)` copy it back in a small part of the load's time. Built outside any
    transaction (a module fixture that asks for it with `module_transaction` gets it first: a
    session fixture is set up before), it leaves the database as it found it; its tables are
    dropped at the end of the session."""
    from tests.helpers import DemoSnapshot

    with django_db_blocker.unblock():
        demo = DemoSnapshot.build()
    yield demo
    with django_db_blocker.unblock():
        demo.drop()


@pytest.fixture
def demo_content(transactional_db, demo_snapshot):
    """The seed and every example paper, as `manage.py import_seed` and `manage.py load_examples`
    write them, committed for a transactional test (one a browser or a server reads): copied back
    from the session's snapshot. The flush after each test empties the tables as before, so no test
    sees another's writes."""
    return demo_snapshot.restore()


@pytest.fixture(scope="module")
def module_transaction(django_db_setup, django_db_blocker):
    """One transaction open around a whole test module, rolled back after its last test.

    What a module-scoped fixture writes in it, with the blocker it yields unblocked
    (tests.helpers.load_for_module: real papers' tables take seconds to import), is then there for
    each of the module's tests, and each test still runs in its own savepoint (pytest-django's
    non-transactional test case), so none sees another's writes and the module leaves nothing behind. Only for modules whose tests are all non-transactional: a
    transactional test's flush, and any other process (a worker, a server), would not see the
    uncommitted rows."""
    from django.db import transaction

    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic._from_testcase = True  # a durable block inside runs as under a TestCase
        atomic.__enter__()
    try:
        yield django_db_blocker
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
        from django.contrib.contenttypes.models import ContentType

        ContentType.objects.clear_cache()  # a restored snapshot's content types are gone with the rollback


class WorkerProcess:
    """A real `celery worker` process, started on the test database and the configured broker."""

    def __init__(self, queues: str, log_path, extra_env: dict[str, str] | None = None):
        import os
        import subprocess
        import sys

        from django.db import connection

        self.log_path = log_path
        env = os.environ.copy()
        env["DATABASE_URL"] = database_url_for(connection.settings_dict, connection.vendor)
        env["PYTHONUNBUFFERED"] = "1"
        env.update(extra_env or {})
        self.log_file = open(log_path, "w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "portal",
                "worker",
                "-Q",
                queues,
                "-c",
                "1",
                "--prefetch-multiplier",
                "1",
                "--without-gossip",
                "--without-mingle",
                "-l",
                "info",
                "-n",
                f"test-{os.getpid()}-{id(self)}@%h",
            ],
            env=env,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        if not self.log_file.closed:
            self.log_file.flush()
        return self.log_path.read_text()

    def kill(self, sig) -> None:
        import os

        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        import signal
        import subprocess

        self.process.terminate()  # a warm shutdown of the main process; its pool follows
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill(signal.SIGKILL)
            self.process.wait(timeout=15)
        self.log_file.close()


def database_url_for(settings_dict: dict, vendor: str) -> str:
    """A DATABASE_URL naming the database the tests run on (the test database, not the real one)."""
    from urllib.parse import quote

    if vendor == "sqlite":
        return f"sqlite:///{settings_dict['NAME']}"
    credentials = quote(settings_dict["USER"] or "")
    if settings_dict.get("PASSWORD"):
        credentials += ":" + quote(settings_dict["PASSWORD"])
    return f"postgres://{credentials}@{settings_dict['HOST'] or 'localhost'}:{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"


@pytest.fixture
def start_worker(tmp_path):
    """Start real worker processes; every one is stopped (and its log shown on failure) afterwards."""
    workers: list[WorkerProcess] = []

    def start(queues: str = "default,releases,gpu", env: dict[str, str] | None = None) -> WorkerProcess:
        worker = WorkerProcess(queues, tmp_path / f"worker-{len(workers)}.log", extra_env=env)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()
        print(f"--- worker log {worker.log_path} ---\n{worker.log()[-4000:]}")


ROLE_GROUPS = {
    "curator": "Curators",
    "release_manager": "Release managers",
    "benchmark_operator": "Benchmark operators",
}


@pytest.fixture
def make_user(db):
    """make_user("curator") -> a staff user in that role's group (roles created as in production)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from reviews.services import roles_ensure

    roles_ensure()
    counter = iter(range(1000))

    def make(role: str, username: str | None = None):
        User = get_user_model()
        name = username or f"{role}-{next(counter)}"
        if role == "superuser":
            return User.objects.create_superuser(name, f"{name}@example.org", "a-long-test-password")
        user = User.objects.create_user(
            name, f"{name}@example.org", "a-long-test-password", is_staff=role != "anonymous"
        )
        if role in ROLE_GROUPS:
            user.groups.add(Group.objects.get(name=ROLE_GROUPS[role]))
        return user

    return make


@pytest.fixture
def curator(make_user):
    return make_user("curator", "curator-one")


@pytest.fixture
def other_curator(make_user):
    return make_user("curator", "curator-two")


@pytest.fixture(scope="session")
def app_role_name(django_db_setup, django_db_blocker):
    """The documented application role (deploy/postgres-roles.sh) on the test database: no superuser,
    no TEMPORARY, and what `manage.py db_grants` gives it (SELECT and INSERT only on the audit
    tables). PostgreSQL only; the role is cluster-wide, so its name is this session's own."""
    import io
    import os

    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("database roles are PostgreSQL's (the embedded default has none)")
    name = f"portal_test_app_{os.getpid()}"
    quoted = connection.ops.quote_name(name)
    with django_db_blocker.unblock():
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE ROLE {quoted} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOINHERIT")
            cursor.execute(
                f"REVOKE TEMPORARY ON DATABASE {connection.ops.quote_name(connection.settings_dict['NAME'])} FROM PUBLIC"
            )
        call_command("db_grants", name, stdout=io.StringIO())
    yield name
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f"DROP OWNED BY {quoted}")
        cursor.execute(f"DROP ROLE {quoted}")


@pytest.fixture
def as_app_role(app_role_name):
    """Every statement of the test, and of every connection it opens (a live server's, a thread's),
    runs as the application's role, as web and the workers do in production. Ask for it after `db`
    or `transactional_db`."""
    from django.db import connection
    from django.db.backends.signals import connection_created

    statement = f"SET ROLE {connection.ops.quote_name(app_role_name)}"

    def set_role(sender, connection, **kwargs):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(statement)

    connection_created.connect(set_role, weak=False, dispatch_uid="as_app_role")
    with connection.cursor() as cursor:
        cursor.execute(statement)
        cursor.execute("SELECT current_user")
        assert cursor.fetchone()[0] == app_role_name
    yield app_role_name
    connection_created.disconnect(dispatch_uid="as_app_role")
    from django.db import connections

    for each in connections.all(initialized_only=True):
        if each.vendor == "postgresql" and each.connection is not None:
            try:
                with each.cursor() as cursor:
                    cursor.execute("RESET ROLE")
            except Exception:  # a transaction the test broke: its rollback resets the role
                pass


# Transactional tests that publish a release need its immutability triggers lifted before the flush.
from tests.releases.conftest import published_releases_removed_before_flush  # noqa: E402,F401
