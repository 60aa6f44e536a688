"""A web request that waits on another change's lock, or runs too long, answers a clear 503/504 within
the configured limit, with nothing stored; processes that serve no web requests have no such limits."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from portal.db_limits import web_limits_disable, web_limits_enable
from portal.tokens import api_token_create
from records.models import Evaluation
from tests.conftest import database_url_for
from tests.portal.gunicorn_process import Gunicorn, dockerfile_command, serve_command

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
EVALUATION = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"
CHANGED_TITLE = "A title the request could not save"
#: What the test's other connection's lock would make a request wait without a limit.
HOLD_SECONDS = 10
#: A request must answer well within this, whatever the load: the limits below are 0.3 s.
ANSWER_WITHIN_SECONDS = 4


@pytest.fixture
def web_process():
    """This test process serves web requests, as a gunicorn worker does (portal/gunicorn_conf.py);
    afterwards it does not, and the next test opens a connection of its own."""
    web_limits_enable()
    yield
    web_limits_disable()
    connection.close()


def needs(vendor: str) -> None:
    if connection.vendor != vendor:
        pytest.skip(f"{vendor} only")


def curator_api(make_user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('curator'))}")
    return api


class Holder:
    """Another connection that holds a lock until released, or HOLD_SECONDS at most."""

    def __init__(self, take):
        self.release = threading.Event()
        self.taken = threading.Event()
        self.thread = threading.Thread(target=self._hold, args=(take,), daemon=True)
        self.thread.start()
        assert self.taken.wait(10), "the other connection could not take its lock"

    def _hold(self, take) -> None:
        undo = take()
        self.taken.set()
        self.release.wait(HOLD_SECONDS)
        undo()

    def done(self) -> None:
        self.release.set()
        self.thread.join(HOLD_SECONDS + 5)


def postgresql_holder(sql: str) -> Holder:
    import psycopg

    settings_dict = connection.settings_dict

    def take():
        other = psycopg.connect(
            dbname=settings_dict["NAME"],
            user=settings_dict["USER"] or None,
            password=settings_dict["PASSWORD"] or None,
            host=settings_dict["HOST"] or None,
            port=settings_dict["PORT"] or None,
        )
        other.execute(sql, [EVALUATION] if "%s" in sql else None)  # psycopg opens a transaction
        return lambda: (other.rollback(), other.close())

    return Holder(take)


def sqlite_holder() -> Holder:
    def take():
        other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # the write lock, as a worker's transaction takes it
        return lambda: (other.execute("ROLLBACK"), other.close())

    return Holder(take)


def patched(api: APIClient) -> tuple[object, float]:
    started = time.monotonic()
    response = api.patch(f"/api/v1/evaluations/{EVALUATION}/", {"title": CHANGED_TITLE}, format="json")
    return response, time.monotonic() - started


def assert_nothing_stored(before_history: int) -> None:
    evaluation = Evaluation.objects.get(stable_id=EVALUATION)
    assert evaluation.title != CHANGED_TITLE
    assert evaluation.history.count() == before_history


def test_a_write_waiting_on_a_locked_row_answers_503_within_the_lock_limit(seeded, make_user, settings, web_process):
    needs("postgresql")
    settings.DB_LOCK_TIMEOUT_MS = 300
    api = curator_api(make_user)
    history = Evaluation.objects.get(stable_id=EVALUATION).history.count()
    holder = postgresql_holder("SELECT 1 FROM records_evaluation WHERE stable_id = %s FOR UPDATE")
    try:
        response, seconds = patched(api)
    finally:
        holder.done()
    assert (response.status_code, response.json()["code"]) == (503, "lock_timeout"), response.content
    detail = response.json()["detail"]
    assert "waited too long for another change" in detail and "may not help" in detail, detail
    assert "Nothing it was changing has been saved" in detail and "Retry-After" not in response
    assert seconds < ANSWER_WITHIN_SECONDS
    assert_nothing_stored(history)
    assert patched(api)[0].status_code == 200  # the lock gone, the same request goes through


def test_a_statement_past_the_statement_limit_answers_504(seeded, make_user, settings, web_process):
    needs("postgresql")
    settings.DB_LOCK_TIMEOUT_MS = 0  # no lock limit: the statement limit cancels the wait instead
    settings.DB_STATEMENT_TIMEOUT_MS = 300
    api = curator_api(make_user)
    history = Evaluation.objects.get(stable_id=EVALUATION).history.count()
    holder = postgresql_holder("SELECT 1 FROM records_evaluation WHERE stable_id = %s FOR UPDATE")
    try:
        response, seconds = patched(api)
    finally:
        holder.done()
    assert (response.status_code, response.json()["code"]) == (504, "statement_timeout"), response.content
    detail = response.json()["detail"]
    assert (
        detail.startswith("The request took too long: the database stopped it after 0.3 s.")
        and "may not help" in detail
    )
    assert seconds < ANSWER_WITHIN_SECONDS
    assert_nothing_stored(history)


def test_a_page_waiting_on_a_locked_table_answers_a_503_page(seeded, client, settings, web_process):
    needs("postgresql")
    settings.DB_LOCK_TIMEOUT_MS = 300
    holder = postgresql_holder("LOCK TABLE records_evaluation IN ACCESS EXCLUSIVE MODE")
    try:
        started = time.monotonic()
        response = client.get(f"/evaluations/{EVALUATION}/")
        seconds = time.monotonic() - started
    finally:
        holder.done()
    assert response.status_code == 503 and response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "<h1>The request waited too long</h1>" in page and "may not help" in page
    assert "unavailable for a moment" not in page and seconds < ANSWER_WITHIN_SECONDS
    assert client.get(f"/evaluations/{EVALUATION}/").status_code == 200


def test_a_write_waiting_on_sqlites_write_lock_answers_503_within_the_lock_limit(
    seeded, make_user, settings, web_process
):
    needs("sqlite")
    settings.DB_LOCK_TIMEOUT_MS = 300
    api = curator_api(make_user)
    history = Evaluation.objects.get(stable_id=EVALUATION).history.count()
    holder = sqlite_holder()
    try:
        response, seconds = patched(api)
    finally:
        holder.done()
    assert (response.status_code, response.json()["code"]) == (503, "lock_timeout"), response.content
    assert "waited too long for another change to the same data to finish (over 0.3 s)" in response.json()["detail"]
    assert seconds < ANSWER_WITHIN_SECONDS
    assert_nothing_stored(history)


@pytest.mark.parametrize("command", [serve_command(), dockerfile_command()], ids=["bin-serve", "image"])
def test_a_gunicorn_worker_answers_a_write_waiting_on_a_lock_with_503_within_the_limit(
    seeded, make_user, command, tmp_path
):
    token = api_token_create(user=make_user("curator"))
    history = Evaluation.objects.get(stable_id=EVALUATION).history.count()
    server = Gunicorn(command, tmp_path / "gunicorn.log", env={"PORTAL_DB_LOCK_TIMEOUT_MS": "300"})
    holder = (
        postgresql_holder("SELECT 1 FROM records_evaluation WHERE stable_id = %s FOR UPDATE")
        if connection.vendor == "postgresql"
        else sqlite_holder()
    )
    try:
        started = time.monotonic()
        status, body = server.send(
            "PATCH",
            f"/api/v1/evaluations/{EVALUATION}/",
            {"Authorization": f"Token {token}", "Content-Type": "application/json"},
            json.dumps({"title": CHANGED_TITLE}).encode(),
        )
        seconds = time.monotonic() - started
    finally:
        holder.done()
        server.stop()
    print(f"a write waiting on a lock answered {status} in {seconds:.2f} s (limit 0.3 s)")
    assert status == 503, (body, server.log()[-4000:])
    assert json.loads(body)["code"] == "lock_timeout" and seconds < ANSWER_WITHIN_SECONDS
    assert_nothing_stored(history)


def test_a_management_command_has_no_web_limits():
    needs("postgresql")
    env = {**os.environ, "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor)}
    shown = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", "from django.db import connection as c; "
         "cur = c.cursor(); cur.execute(\"SELECT current_setting('statement_timeout') || ' ' || "
         "current_setting('lock_timeout')\"); print(cur.fetchone()[0])"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.split()[-2:] == ["0", "0"]  # the server's defaults: a release build runs as long as it needs


@pytest.mark.backend_independent
@pytest.mark.parametrize("name", ["PORTAL_DB_STATEMENT_TIMEOUT_MS", "PORTAL_DB_LOCK_TIMEOUT_MS"])
@pytest.mark.parametrize(("value", "says"), [("soon", "is not an integer"), ("-1", "must be at least 0")])
def test_a_malformed_limit_stops_start_up_with_one_line(name, value, says):
    ran = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT, env={**os.environ, name: value}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode != 0
    assert ran.stderr.strip() == f"configuration error: {name}={value!r} {says}"
