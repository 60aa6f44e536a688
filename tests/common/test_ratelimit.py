"""Per-address limits find the client behind trusted proxies only: a client that reaches gunicorn
directly cannot dodge them by writing its own X-Forwarded-For."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import RequestFactory

from common.ratelimit import client_ip

ROOT = Path(__file__).resolve().parents[2]
PROXY = "10.0.0.2"
DIRECT = "198.51.100.7"  # a client that reaches gunicorn without the proxy


@pytest.fixture
def behind_one_proxy(settings):
    settings.NUM_PROXIES = 1
    settings.TRUSTED_PROXIES = [PROXY]
    # As production had it: DRF's own client address (its throttles') counted the same proxies.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}


def address(remote: str, forwarded: str | None = None) -> str:
    extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_ip(RequestFactory().get("/", REMOTE_ADDR=remote, **extra))


def test_it_reads_the_forwarded_address_only_from_a_trusted_proxy(behind_one_proxy):
    assert address(PROXY, "203.0.113.9") == "203.0.113.9"
    assert address(PROXY, "1.1.1.1, 203.0.113.9") == "203.0.113.9", "entries left of the proxy's are the client's own"
    assert address(DIRECT, "203.0.113.9") == DIRECT
    assert address(DIRECT, "1.1.1.1, 203.0.113.9") == DIRECT
    assert address(PROXY) == PROXY
    assert address(PROXY, "not-an-address") == PROXY
    assert address(f"::ffff:{PROXY}", "203.0.113.9") == "203.0.113.9", "an IPv4-mapped socket address"


def test_it_trusts_networks_and_walks_back_one_trusted_hop_at_a_time(settings):
    settings.NUM_PROXIES = 2
    settings.TRUSTED_PROXIES = ["10.0.0.0/24", "fd00::/8"]
    assert address("10.0.0.9", "203.0.113.9, 10.0.0.3") == "203.0.113.9"
    assert address("fd00::1", "203.0.113.9, 10.0.0.3") == "203.0.113.9"
    # The second hop is not a proxy: it is the client, and what it wrote further left is not read.
    assert address("10.0.0.9", "1.1.1.1, 203.0.113.9") == "203.0.113.9"
    assert address("10.0.1.9", "203.0.113.9, 10.0.0.3") == "10.0.1.9"


def test_it_ignores_the_header_without_trusted_proxies(settings):
    settings.NUM_PROXIES = 1
    settings.TRUSTED_PROXIES = []
    assert address(PROXY, "203.0.113.9") == PROXY


def test_a_direct_client_rotating_forwarded_for_is_locked_out_of_the_admin_login(
    client, db, settings, behind_one_proxy
):
    settings.ADMIN_LOGIN_ATTEMPTS = 3
    statuses = [
        client.post(
            "/admin/login/",
            {"username": "nobody", "password": "wrong"},
            REMOTE_ADDR=DIRECT,
            HTTP_X_FORWARDED_FOR=f"203.0.113.{i}",
        ).status_code
        for i in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    # Clients behind the proxy are told apart by the address the proxy saw.
    through_proxy = client.post(
        "/admin/login/",
        {"username": "nobody", "password": "wrong"},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR="192.0.2.1",
    )
    assert through_proxy.status_code == 200


def test_a_direct_client_rotating_forwarded_for_meets_the_correction_limit(client, seeded, settings, behind_one_proxy):
    from corrections.models import Correction
    from tests.corrections.test_corrections import api_data

    settings.CORRECTIONS_PER_IP = 3
    statuses = [
        client.post(
            "/api/v1/corrections/",
            json.dumps(api_data(explanation=f"Suggestion number {i} with its own reasons.")),
            content_type="application/json",
            REMOTE_ADDR=DIRECT,
            HTTP_X_FORWARDED_FOR=f"203.0.113.{i}",
        ).status_code
        for i in range(4)
    ]
    assert statuses == [201, 201, 201, 429]
    assert Correction.objects.count() == 3


def test_a_direct_client_rotating_forwarded_for_meets_the_api_throttle(client, db, behind_one_proxy, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute", "user": "3/minute"})
    statuses = [
        client.get("/api/v1/protocols/", REMOTE_ADDR=DIRECT, HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code
        for i in range(4)
    ]
    assert statuses == [200, 200, 200, 429]


def manage_check(**env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PORTAL_") or k == "PORTAL_VAR_DIR"}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "env, message",
    [
        ({"PORTAL_NUM_PROXIES": "1"}, "PORTAL_TRUSTED_PROXIES must name the proxies' addresses or networks"),
        ({"PORTAL_NUM_PROXIES": "1", "PORTAL_TRUSTED_PROXIES": "caddy"}, "'caddy' is not an IP address or network"),
    ],
)
def test_it_refuses_to_start_behind_proxies_it_cannot_recognise(env, message):
    completed = manage_check(**env)
    assert completed.returncode != 0 and message in completed.stderr, completed.stderr


def test_it_starts_behind_proxies_named_by_address_and_network():
    completed = manage_check(PORTAL_NUM_PROXIES="1", PORTAL_TRUSTED_PROXIES="172.31.250.2, fd00::/8")
    assert completed.returncode == 0, completed.stderr
