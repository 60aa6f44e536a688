"""Slow clients (50 sockets, each sending a partial request header every 5 s) take gunicorn down when it
faces them directly; through Caddy on deploy/Caddyfile, as in production, /healthz keeps answering
within a second, and Caddy cuts each slow connection off (its read_header timeout)."""

from __future__ import annotations

import shutil

import pytest

from bench.fresh_start import free_port
from bench.slow_clients import attack, start_caddy, start_gunicorn, stop, wait_for_200

pytestmark = [pytest.mark.backend_independent, pytest.mark.embedded_pass]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """gunicorn as bin/serve runs it, and Caddy in front of it: (gunicorn's port, Caddy's port)."""
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.skip("caddy is not installed (bin/test installs it: apt-get install caddy)")
    folder = tmp_path_factory.mktemp("slow-clients")
    gunicorn_port, caddy_port = free_port(), free_port()
    gunicorn = start_gunicorn(gunicorn_port, folder / "var", folder / "gunicorn.log")
    proxy = None
    try:
        wait_for_200(f"http://127.0.0.1:{gunicorn_port}/healthz", timeout=90, process=gunicorn)
        proxy = start_caddy(caddy_port, gunicorn_port, folder, folder / "caddy.log", caddy)
        wait_for_200(f"http://127.0.0.1:{caddy_port}/healthz", timeout=30, process=proxy)
        yield gunicorn_port, caddy_port
    finally:
        if proxy is not None:
            stop(proxy)
        stop(gunicorn)


def test_healthz_answers_within_a_second_through_caddy_under_50_slow_clients(served):
    _gunicorn_port, caddy_port = served
    report = attack("127.0.0.1", caddy_port, seconds=20, sockets=50, interval=5, limit=1.0)
    assert report.probes >= 40 and report.answered == report.probes, report.line("through Caddy")
    # The slow sockets were there all along, and Caddy closed each after its read_header timeout (10 s).
    assert report.open_at_end >= 45 and report.reconnects >= 45, report.line("through Caddy")


def test_the_same_slow_clients_straight_at_gunicorn_leave_healthz_unanswered(served):
    """The attack is real: gunicorn alone (its 8 threads) stops answering."""
    gunicorn_port, _caddy_port = served
    report = attack("127.0.0.1", gunicorn_port, seconds=6, sockets=50, interval=5, limit=1.0)
    assert report.probes >= 3 and report.answered == 0, report.line("gunicorn alone")
