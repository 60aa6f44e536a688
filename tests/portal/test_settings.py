"""Configuration comes from the environment and a malformed value stops start-up with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Each test runs manage.py in a process of its own with the environment it sets (the test's database
# is not theirs): the answers are the same in both passes, so CI runs them once.
pytestmark = pytest.mark.backend_independent

ROOT = Path(__file__).resolve().parents[2]
CONFIG_VARIABLES = ("DATABASE_URL", "REDIS_URL", "CACHE_URL", "PORTAL_PRODUCTION", "PORTAL_DEBUG", "SECRET_KEY")


def run_manage(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES}
    environment.update({"PORTAL_VAR_DIR": str(tmp_path / "var"), **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "variable, value, named",
    [
        ("DATABASE_URL", "mysql://root@localhost/db", "DATABASE_URL"),
        ("DATABASE_URL", "postgres://user@localhost:notaport/db", "DATABASE_URL"),
        ("DATABASE_URL", "postgres://user@localhost:5432", "DATABASE_URL"),
        ("REDIS_URL", "http://localhost:6379", "REDIS_URL"),
        ("REDIS_URL", "redis://localhost:port/0", "REDIS_URL"),
        ("REDIS_URL", "redis://localhost:6379/zero", "REDIS_URL"),
        ("PORTAL_PRODUCTION", "maybe", "PORTAL_PRODUCTION"),
        ("CELERY_VISIBILITY_TIMEOUT", "soon", "CELERY_VISIBILITY_TIMEOUT"),
    ],
)
def test_it_stops_start_up_with_one_line_on_a_malformed_value(tmp_path, variable, value, named):
    extra = {"REDIS_URL": "redis://127.0.0.1:6379/0"} if variable == "CELERY_VISIBILITY_TIMEOUT" else {}
    completed = run_manage(tmp_path, "check", **{variable: value, **extra})
    assert completed.returncode != 0
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith("configuration error:") and named in lines[0]


def test_it_requires_a_secret_key_and_hosts_in_production(tmp_path):
    completed = run_manage(tmp_path, "check", PORTAL_PRODUCTION="1")
    assert completed.returncode != 0
    assert (
        completed.stderr.strip()
        == "configuration error: SECRET_KEY (or SECRET_KEY_FILE) must be set when PORTAL_PRODUCTION is on"
    )


def test_it_reads_the_secret_key_from_a_file(tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text("k" * 60)
    code = "from django.conf import settings; print(settings.SECRET_KEY == 'k' * 60)"
    completed = run_manage(tmp_path, "shell", "--no-imports", "-c", code, SECRET_KEY_FILE=str(key_file))
    assert completed.stdout.strip() == "True", completed.stderr


def test_it_defaults_to_sqlite_in_wal_mode_with_immediate_transactions_and_a_filesystem_queue(tmp_path):
    code = (
        "from django.conf import settings; from django.db import connection;"
        "c = connection.cursor(); c.execute('PRAGMA journal_mode'); print(c.fetchone()[0]);"
        "print(settings.DATABASES['default']['OPTIONS']['transaction_mode']);"
        "print(settings.DATABASES['default']['NAME']); print(settings.CELERY_BROKER_URL)"
    )
    completed = run_manage(tmp_path, "shell", "--no-imports", "-c", code)
    assert completed.returncode == 0, completed.stderr
    journal, mode, name, broker = completed.stdout.split()
    assert (journal, mode, broker) == ("wal", "IMMEDIATE", "filesystem://")
    assert name == str(tmp_path / "var" / "portal.sqlite3")


def test_it_switches_to_postgresql_and_redis_from_the_environment(tmp_path):
    code = (
        "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL)"
    )
    completed = run_manage(
        tmp_path,
        "shell",
        "--no-imports",
        "-c",
        code,
        DATABASE_URL="postgres://u:p@db.example:5433/portal",
        REDIS_URL="redis://cache:6379/0",
    )
    assert completed.stdout.split() == ["django.db.backends.postgresql", "redis://cache:6379/0"], completed.stderr
