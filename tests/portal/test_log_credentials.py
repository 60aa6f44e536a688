"""No credential sent with a request reaches a log line: the portal's JSON lines, gunicorn's access and error logs."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench.fresh_start import free_port, kill_session
from tests.conftest import database_url_for

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t0123456789abcdef"
#: Requests a client might send with a credential where it does not belong, or where it does.
CREDENTIAL_REQUESTS = [
    ("GET", f"/api/v1/evaluations/?token={SECRET}&page_size=2", {}),
    ("POST", f"/api/v1/evaluations/?api_key={SECRET}", {}),
    ("GET", f"/nowhere/?access_token={SECRET}", {}),
    ("GET", f"/coverage/?password={SECRET}&X-Amz-Signature={SECRET}", {}),
    ("POST", "/api/v1/evaluations/", {"Authorization": f"Token {SECRET}"}),
    ("GET", "/api/v1/evaluations/", {"Authorization": f"Bearer {SECRET}", "Referer": f"http://x/?token={SECRET}"}),
]


def console_formatter() -> logging.Formatter:
    """The formatter of the handler every portal log line goes through (settings.LOGGING)."""
    handler = next(h for h in logging.getLogger().handlers if h.get_name() == "console")
    assert handler.formatter is not None
    return handler.formatter


@pytest.mark.django_db
def test_it_writes_no_credential_from_a_request_into_the_json_log_lines(client, caplog):
    with caplog.at_level(logging.INFO):
        for method, path, headers in CREDENTIAL_REQUESTS:
            client.generic(method, path, headers=headers)
    lines = [console_formatter().format(record) for record in caplog.records]
    assert any(json.loads(line)["logger"] == "django.request" for line in lines)  # the 401s and 404 are logged
    leaked = [line for line in lines if SECRET in line]
    assert not leaked, "\n".join(leaked)
    requests = [json.loads(line) for line in lines if json.loads(line)["logger"] == "portal.request"]
    assert [entry["path"] for entry in requests] == [path.split("?")[0] for _, path, _ in CREDENTIAL_REQUESTS]
    assert any("token=[redacted]" in line or "api_key=[redacted]" in line for line in lines)


def dockerfile_command() -> list[str]:
    """The image's command line (the Dockerfile's CMD), as docker-compose's web service also runs it."""
    cmd = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    return json.loads(cmd.removeprefix("CMD "))


def serve_command(*extra: str) -> list[str]:
    """The web server's command line in bin/_serve_processes (bin/serve), with EXTRA options."""
    text = (ROOT / "bin" / "_serve_processes").read_text()
    assert "-m gunicorn portal.wsgi --config python:portal.gunicorn_conf" in text
    return ["gunicorn", "portal.wsgi", "--config", "python:portal.gunicorn_conf", "--access-logfile", "-", *extra]


#: An access-log format that names the query string, the referrer and the Authorization header.
WIDE_FORMAT = '%(h)s "%(r)s" %(s)s %(b)s q=%(q)s "%(f)s" "%({Authorization}i)s" "%({http_authorization}e)s"'


def started_gunicorn(command: list[str], port: int, log_path: Path, env: dict[str, str]) -> subprocess.Popen:
    """COMMAND with this interpreter's gunicorn, bound to PORT on loopback with one worker."""
    args = list(command[1:])
    for option, value in (("--bind", f"127.0.0.1:{port}"), ("--workers", "1")):
        while option in args:  # the image binds two addresses: none of them here
            index = args.index(option)
            del args[index : index + 2]
        args += [option, value]
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *args],
        cwd=ROOT,
        env=env,
        stdout=log_path.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def send(port: int, method: str, path: str, headers: dict[str, str]) -> int | None:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


@pytest.mark.backend_independent
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "command",
    [serve_command(), dockerfile_command(), serve_command("--access-logformat", WIDE_FORMAT)],
    ids=["bin-serve", "image", "wide-format"],
)
def test_a_real_gunicorn_writes_no_credential_into_its_access_log_or_the_portal_lines(command, tmp_path):
    from django.db import connection

    port = free_port()
    log_path = tmp_path / "gunicorn.log"
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor),
        "PORTAL_LOG_FORMAT": "json",
        "PORTAL_LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }
    process = started_gunicorn(command, port, log_path, env)
    try:
        deadline = time.monotonic() + 90
        while send(port, "GET", "/healthz", {}) != 200:
            assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()[-4000:]
            time.sleep(0.2)
        statuses = [send(port, method, path, headers) for method, path, headers in CREDENTIAL_REQUESTS]
        assert statuses == [200, 401, 404, 200, 401, 200], log_path.read_text()[-4000:]
        time.sleep(0.5)  # the access lines of the last answers
    finally:
        process.terminate()  # gunicorn's graceful stop: its last lines written
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_session(process.pid)
            process.wait()
    log = log_path.read_text()
    access_lines = [line for line in log.splitlines() if any(f'" {code} ' in line for code in (200, 401, 404))]
    assert len(access_lines) >= len(CREDENTIAL_REQUESTS), log[-4000:]  # gunicorn's access log is there
    assert "?token=[redacted]&page_size=2" in log and "api_key=[redacted]" in log, log[-4000:]
    assert SECRET not in log, "\n".join(line for line in log.splitlines() if SECRET in line)
