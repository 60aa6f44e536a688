"""A real gunicorn serving the test database, started as bin/serve or the image starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench.fresh_start import free_port, kill_session
from tests.conftest import database_url_for

ROOT = Path(__file__).resolve().parents[2]


def dockerfile_command() -> list[str]:
    """The image's command line (the Dockerfile's CMD), as docker-compose's web service also runs it."""
    cmd = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    return json.loads(cmd.removeprefix("CMD "))


def serve_command(*extra: str) -> list[str]:
    """The web server's command line in bin/_serve_processes (bin/serve), with EXTRA options."""
    text = (ROOT / "bin" / "_serve_processes").read_text()
    assert "-m gunicorn portal.wsgi --config python:portal.gunicorn_conf" in text
    return ["gunicorn", "portal.wsgi", "--config", "python:portal.gunicorn_conf", "--access-logfile", "-", *extra]


class Gunicorn:
    """COMMAND with this interpreter's gunicorn, one worker on a free loopback port, on the test database."""

    def __init__(self, command: list[str], log_path: Path, env: dict[str, str] | None = None):
        from django.db import connection

        self.port = free_port()
        self.log_path = log_path
        args = list(command[1:])
        for option, value in (("--bind", f"127.0.0.1:{self.port}"), ("--workers", "1")):
            while option in args:  # the image binds two addresses: none of them here
                index = args.index(option)
                del args[index : index + 2]
            args += [option, value]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", *args],
            cwd=ROOT,
            env={
                **os.environ,
                "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor),
                "PORTAL_LOG_FORMAT": "json",
                "PORTAL_LOG_LEVEL": "INFO",
                "PYTHONUNBUFFERED": "1",
                **(env or {}),
            },
            stdout=log_path.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while self.send("GET", "/healthz")[0] != 200:
            assert self.process.poll() is None and time.monotonic() < deadline, self.log()[-4000:]
            time.sleep(0.2)

    def log(self) -> str:
        return self.log_path.read_text()

    def send(
        self, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None
    ) -> tuple[int | None, bytes]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method, headers=headers or {}, data=body
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
        except OSError:
            return None, b""

    def stop(self) -> None:
        self.process.terminate()  # gunicorn's graceful stop: its last lines written
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_session(self.process.pid)
            self.process.wait()
