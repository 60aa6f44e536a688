"""Fixed-window counters in the shared cache (Redis in production): atomic, shared by every process.

`cache.add` creates the window's key only if absent and `cache.incr` increments atomically (INCR
on Redis; under a lock in the embedded default's in-process cache).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from common.errors import DomainError

if TYPE_CHECKING:  # what the mixin is mixed into, for the type checker
    from rest_framework.throttling import SimpleRateThrottle as _ThrottleBase
else:
    _ThrottleBase = object


@dataclass(frozen=True)
class Limit:
    name: str
    count: int
    window_seconds: int


class RateLimited(DomainError):
    status = 429
    code = "throttled"

    def __init__(self, limit: Limit, retry_after: int):
        super().__init__(f"too many suggestions ({limit.name}): try again in {retry_after} s")
        self.limit = limit
        self.retry_after = retry_after


def hit(*, limit: Limit, key: str) -> None:
    """Count one event for `key`; raise RateLimited once the window's count is exceeded."""
    now = time.time()
    window = int(now // limit.window_seconds)
    cache_key = f"ratelimit:{limit.name}:{key}:{window}"
    cache.add(cache_key, 0, timeout=limit.window_seconds + 5)
    try:
        count = cache.incr(cache_key)
    except ValueError:  # the key expired between add and incr: this is the window's first event
        cache.add(cache_key, 1, timeout=limit.window_seconds + 5)
        count = 1
    if count > limit.count:
        retry_after = int((window + 1) * limit.window_seconds - now) + 1
        raise RateLimited(limit, retry_after)


def client_ip(request: HttpRequest) -> str:
    """The client's address, trusting exactly settings.NUM_PROXIES proxies in front of the portal.

    Each trusted proxy appends the address it saw to X-Forwarded-For, so the client is the entry
    NUM_PROXIES from the right; anything further left was written by the client and is ignored.
    """
    proxies = settings.NUM_PROXIES
    remote = request.META.get("REMOTE_ADDR", "")
    if proxies <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) < proxies:
        return remote
    return forwarded[-proxies]


def ip_hash(ip: str) -> str:
    """A salted hash of an address; the salt rotates daily, so hashes cannot be linked across days."""
    day = time.strftime("%Y-%m-%d", time.gmtime())
    return hashlib.sha256(f"{day}|{settings.SECRET_KEY}|{ip}".encode()).hexdigest()


class CountingThrottleMixin(_ThrottleBase):
    """DRF's rate for a client, counted as common.ratelimit counts: integers in the shared cache,
    added and incremented atomically (INCR on Redis), O(1) a request.

    DRF's own throttle reads and writes the whole list of a client's request times on every
    request (up to 3,000 floats for a token user), and two processes can overwrite each other's
    list. Here the last `duration` seconds are two fixed windows, the current one counted whole
    and the one before weighted by how much of it still lies within them; a refused request is
    not counted, as DRF does not count it."""

    duration: int
    num_requests: int
    wait_seconds: float = 0.0

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        window, elapsed = divmod(self.timer(), self.duration)
        current, earlier = f"{self.key}:{int(window)}", f"{self.key}:{int(window) - 1}"
        if self.cache.add(current, 1, 2 * self.duration):
            count = 1
        else:
            try:
                count = self.cache.incr(current)
            except ValueError:  # expired between add and incr: the window's first request
                self.cache.add(current, 1, 2 * self.duration)
                count = 1
        earlier_count = self.cache.get(earlier, 0)
        if earlier_count * (1 - elapsed / self.duration) + count <= self.num_requests:
            return True
        self.cache.decr(current)
        # A hint: the window's end when it is full itself, else when enough of the one before has slid out.
        self.wait_seconds = (
            self.duration - elapsed
            if count > self.num_requests
            else max(1.0, self.duration * (1 - (self.num_requests - count) / earlier_count) - elapsed)
        )
        return False

    def wait(self) -> float:
        return self.wait_seconds


class AnonCountingThrottle(CountingThrottleMixin, AnonRateThrottle):
    """DRF's `anon` rate, counted (CountingThrottleMixin)."""


class UserCountingThrottle(CountingThrottleMixin, UserRateThrottle):
    """DRF's `user` rate (per user, or per address when anonymous), counted (CountingThrottleMixin)."""
