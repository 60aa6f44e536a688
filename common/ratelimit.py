"""Fixed-window counters in the shared cache (Redis in production): atomic, shared by every process.

`cache.add` creates the window's key only if absent and `cache.incr` increments atomically (INCR
on Redis; under a lock in the embedded default's in-process cache). `slot` bounds how many blocks of
one kind of work run at once, across processes, with keys created the same way.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import ipaddress
import time
import uuid
from collections.abc import Iterator
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


def _window_key(limit: Limit, key: str, now: float) -> tuple[int, str]:
    window = int(now // limit.window_seconds)
    return window, f"ratelimit:{limit.name}:{key}:{window}"


def hit(*, limit: Limit, key: str) -> None:
    """Count one event for `key`; raise RateLimited once the window's count is exceeded."""
    now = time.time()
    window, cache_key = _window_key(limit, key, now)
    cache.add(cache_key, 0, timeout=limit.window_seconds + 5)
    try:
        count = cache.incr(cache_key)
    except ValueError:  # the key expired between add and incr: this is the window's first event
        cache.add(cache_key, 1, timeout=limit.window_seconds + 5)
        count = 1
    if count > limit.count:
        retry_after = int((window + 1) * limit.window_seconds - now) + 1
        raise RateLimited(limit, retry_after)


def forgive(*, limit: Limit, key: str) -> None:
    """Take back one event `hit` counted for `key` in this window (one that turned out to be no
    failure): counting before and taking back after keeps concurrent attempts counted meanwhile."""
    _window, cache_key = _window_key(limit, key, time.time())
    try:
        if cache.decr(cache_key) < 0:
            cache.set(cache_key, 0, timeout=limit.window_seconds + 5)
    except ValueError:  # the window turned meanwhile: nothing of this one to take back
        pass


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@functools.lru_cache(maxsize=8)
def _networks(spec: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in spec)


def _address(text: str) -> Address | None:
    """An address as a proxy or a socket writes it (IPv6 possibly in brackets); None for anything else."""
    try:
        address = ipaddress.ip_address(text.strip().removeprefix("[").removesuffix("]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def is_trusted_proxy(text: str) -> bool:
    """Whether `text` is an address inside settings.TRUSTED_PROXIES (addresses or networks)."""
    address = _address(text)
    return address is not None and any(address in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_ip(request: HttpRequest) -> str:
    """The client's address: the connection's own, unless it comes from a trusted proxy.

    Each proxy appends the address it saw to X-Forwarded-For. Starting from the connection's
    address, while that address is one of settings.TRUSTED_PROXIES, the rightmost entry not yet
    read is the next hop back, for at most settings.NUM_PROXIES hops. A client that reaches the
    portal directly is not a trusted proxy, so whatever header it writes is never read; entries
    further left than the trusted hops were written by the client and are never read either.
    """
    client = request.META.get("REMOTE_ADDR", "")
    hops = settings.NUM_PROXIES
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    while hops > 0 and forwarded and is_trusted_proxy(client):
        entry = forwarded.pop()
        if _address(entry) is None:  # not an address: the proxy's own address is the best known
            break
        client, hops = entry, hops - 1
    return client


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

    def get_ident(self, request: Any) -> str:
        """The client's address as the other limits find it: X-Forwarded-For only from trusted proxies."""
        return client_ip(request)

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


class Busy(DomainError):
    status = 503
    code = "busy"

    def __init__(self, name: str, retry_after: int):
        super().__init__(f"every {name} slot is taken: try again in {retry_after} s")
        self.retry_after = retry_after


BUSY_RETRY_SECONDS = 5


@contextlib.contextmanager
def slot(*, name: str, count: int, hold_seconds: int) -> Iterator[None]:
    """One of `count` slots named `name` held for the block: at most `count` such blocks run at once
    across every process that shares the cache; raises Busy at once when all are taken, so a burst
    never holds a thread waiting. A slot whose holder died frees itself after `hold_seconds`."""
    token = uuid.uuid4().hex
    for index in range(count):
        key = f"slot:{name}:{index}"
        if cache.add(key, token, timeout=hold_seconds):
            break
    else:
        raise Busy(name, BUSY_RETRY_SECONDS)
    try:
        yield
    finally:
        if cache.get(key) == token:  # not a slot taken afresh after this hold outlived hold_seconds
            cache.delete(key)
