"""bin/serve says plainly, in one line, when gunicorn is bound to an address other machines reach:
there it must sit behind a proxy (it does not protect itself from slow clients)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from bench.fresh_start import default_sigint, free_port, kill_session

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.backend_independent
WARNING = "must sit behind a proxy (Caddy, as in docker-compose.yml)"


def warning_for(bind: str) -> str:
    completed = subprocess.run(
        ["bash", "-c", 'source bin/_serve_bind.sh && serve_bind_warning "$1"', "_", bind],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 0 and completed.stdout == ""
    return completed.stderr


@pytest.mark.parametrize("bind", ["0.0.0.0:8000", "[::]:8000", "192.168.1.20:8000", "portal.example.org:80", ":8000"])
def test_it_warns_in_one_line_when_gunicorn_is_bound_to_an_address_others_reach(bind):
    lines = warning_for(bind).splitlines()
    assert len(lines) == 1 and lines[0].startswith("bin/serve: warning:") and WARNING in lines[0]
    assert f"({bind})" in lines[0]


@pytest.mark.parametrize(
    "bind", ["127.0.0.1:8000", "127.0.0.2:9000", "localhost:8000", "[::1]:8000", "unix:/tmp/p.sock"]
)
def test_it_says_nothing_on_a_loopback_address(bind):
    assert warning_for(bind) == ""


def test_bin_serve_processes_print_the_warning_at_start_on_every_address(tmp_path):
    """The script itself, as bin/serve runs it: the line comes before gunicorn's own output."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CACHE_URL"}}
    env |= {"PORTAL_BIND": f"0.0.0.0:{free_port()}", "PORTAL_VAR_DIR": str(tmp_path), "PORTAL_RUNNER_INSTALL": "off"}
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            ["bin/_serve_processes"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=default_sigint,
        )
    try:
        deadline = time.monotonic() + 60
        while WARNING not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        text = log.read_text()
        assert [line for line in text.splitlines() if WARNING in line] == [
            f"bin/serve: warning: gunicorn is bound to 0.0.0.0 ({env['PORTAL_BIND']}), not a loopback address; it does"
            f" not protect itself from slow clients, so it {WARNING}"
        ], text
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill_session(process.pid)
            process.wait()


def site_url_for(bind: str) -> tuple[str, str]:
    completed = subprocess.run(
        ["bash", "-c", 'source bin/_serve_bind.sh && serve_site_url "$1"', "_", bind],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 0
    return completed.stdout.strip(), completed.stderr


@pytest.mark.parametrize(
    ("bind", "url"),
    [
        ("127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("localhost:9000", "http://localhost:9000"),
        ("[::1]:8001", "http://[::1]:8001"),
        ("192.168.1.20:80", "http://192.168.1.20:80"),
        ("localhost", "http://localhost:8000"),  # gunicorn's port when the bind names none
        ("unix:/tmp/portal.sock", ""),  # behind a proxy: its address is PORTAL_SITE_URL's to say
    ],
)
def test_it_derives_the_site_url_from_the_bind_address(bind, url):
    assert site_url_for(bind) == (url, "")


@pytest.mark.parametrize("bind", ["0.0.0.0:8080", "[::]:8080", ":8080"])
def test_it_links_a_wildcard_bind_to_127_0_0_1_and_says_so(bind):
    url, said = site_url_for(bind)
    assert url == "http://127.0.0.1:8080"
    assert said.startswith("bin/serve: links in mail point at http://127.0.0.1:8080") and "PORTAL_SITE_URL" in said


def served_environments(tmp_path, **env: str) -> list[dict[str, str]]:
    """The environment bin/_serve_processes gives gunicorn and the two workers: an interpreter
    (PORTAL_PYTHON) that writes its environment down and waits, as the real ones would serve."""
    fake = tmp_path / "python"
    fake.write_text('#!/usr/bin/env bash\nenv -0 > "$ENV_DIR/$$.env"\nexec sleep 60\n')
    fake.chmod(0o755)
    (tmp_path / "envs").mkdir()
    base = {k: v for k, v in os.environ.items() if k not in {"PORTAL_SITE_URL", "PORTAL_BIND"}}
    base |= {"PORTAL_PYTHON": str(fake), "ENV_DIR": str(tmp_path / "envs"), "PORTAL_RUNNER_INSTALL": "off"}
    base |= {"PORTAL_VAR_DIR": str(tmp_path / "var")}
    process = subprocess.Popen(
        ["bin/_serve_processes"],
        cwd=ROOT,
        env=base | env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 30
        while len(list((tmp_path / "envs").glob("*.env"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        files = sorted((tmp_path / "envs").glob("*.env"))
        return [dict(item.split("=", 1) for item in f.read_text().split("\0") if "=" in item) for f in files]
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill_session(process.pid)
            process.wait()


def test_bin_serve_sets_the_site_url_of_gunicorn_and_both_workers_from_portal_bind(tmp_path):
    environments = served_environments(tmp_path, PORTAL_BIND="127.0.0.1:8080")
    assert [env.get("PORTAL_SITE_URL") for env in environments] == ["http://127.0.0.1:8080"] * 3


def test_bin_serve_keeps_a_site_url_the_user_set(tmp_path):
    environments = served_environments(
        tmp_path, PORTAL_BIND="0.0.0.0:8080", PORTAL_SITE_URL="https://portal.example.org"
    )
    assert [env.get("PORTAL_SITE_URL") for env in environments] == ["https://portal.example.org"] * 3
