"""The API's read throttles count requests in the shared cache, O(1) a request: the last minute is
the current window plus the share of the one before that still lies within it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser
from rest_framework.throttling import AnonRateThrottle

from common.ratelimit import AnonCountingThrottle


@pytest.fixture
def clock(monkeypatch):
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "5/minute"})
    now = {"t": 6_000_000.0}  # a window's start

    def allowed(address: str = "10.0.0.1") -> bool:
        throttle = AnonCountingThrottle()
        throttle.timer = lambda: now["t"]
        request = SimpleNamespace(user=AnonymousUser(), META={"REMOTE_ADDR": address}, headers={})
        ok = throttle.allow_request(request, None)
        if not ok:
            assert throttle.wait() >= 1
        return ok

    return now, allowed


def test_it_allows_the_rate_then_refuses_and_does_not_count_refusals(clock):
    now, allowed = clock
    assert [allowed() for _ in range(7)] == [True] * 5 + [False] * 2
    assert allowed("10.0.0.2"), "each address has its own count"
    now["t"] += 90  # half of the full window still counts: 2.5 of 5
    assert [allowed() for _ in range(3)] == [True, True, False]
    now["t"] += 30  # the next window: the one before (2 requests) counts whole at its start
    assert [allowed() for _ in range(4)] == [True, True, True, False]
    now["t"] += 120  # nothing in the last two windows
    assert [allowed() for _ in range(6)] == [True] * 5 + [False]
