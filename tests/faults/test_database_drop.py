"""The database connection drops in the middle of a request: a clean 503, and the next request works."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request

import psycopg
import pytest
from django.db import connection

from records.seed import PROTOCOL_ID

pytestmark = [pytest.mark.django_db(transaction=True)]


def fetch(url: str) -> tuple[int, dict, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def test_a_connection_dropped_mid_request_answers_503_then_the_portal_recovers(live_server, seeded):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's connections are the ones dropped: this runs in the PostgreSQL pass")
    params = connection.get_connection_params()
    dsn = {k: params[k] for k in ("dbname", "user", "host", "port", "password") if params.get(k)}
    url = f"{live_server.url}/protocols/{PROTOCOL_ID}/"
    with psycopg.connect(**dsn) as blocker:
        blocker.execute("LOCK TABLE records_protocol IN ACCESS EXCLUSIVE MODE")  # the request will wait on it
        answer: dict = {}
        request = threading.Thread(
            target=lambda: answer.update(zip(("status", "headers", "body"), fetch(url), strict=True))
        )
        request.start()
        with psycopg.connect(**dsn, autocommit=True) as admin:
            victim = None
            deadline = time.monotonic() + 30
            while victim is None and time.monotonic() < deadline:
                victim = admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
                    "AND pid <> pg_backend_pid()"
                ).fetchone()
                time.sleep(0.05)
            assert victim is not None, "the request never waited on the lock"
            admin.execute("SELECT pg_terminate_backend(%s)", victim)  # the request's connection drops
        request.join(timeout=60)
        blocker.rollback()
    assert answer["status"] == 503 and answer["headers"].get("Retry-After") == "5"
    assert "database is unavailable" in answer["body"] and "Traceback" not in answer["body"]
    status, _headers, body = fetch(url)
    assert status == 200 and "IA3 fine-tuning run time" in body
