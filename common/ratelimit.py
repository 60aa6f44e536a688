"""Fixed-window counters in the shared cache (Redis in production): atomic, shared by every process.

`cache.add` creates the window's key only if absent and `cache.incr` increments atomically (INCR
on Redis; under a lock in the embedded default's in-process cache).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from common.errors import DomainError


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
