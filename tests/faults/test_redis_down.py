"""The Redis server behind the cache is gone: requests answer a clean 503 with Retry-After, not a 500."""

from __future__ import annotations

import contextlib
import socket

import pytest
from django.core.cache import caches
from django.test import override_settings

from records.seed import PROTOCOL_ID

pytestmark = [pytest.mark.django_db]


def closed_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("path", ["/api/v1/protocols/", f"/api/v1/protocols/{PROTOCOL_ID}/", "/coverage/"])
def test_it_answers_503_with_retry_after_while_the_cache_server_is_down(client, seeded, path):
    store = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{closed_port()}/1",
    }
    with override_settings(CACHES={"default": store, "responses": {**store, "KEY_PREFIX": "responses"}}):
        for alias in ("default", "responses"):
            caches[alias].close()
            del caches[alias]
        try:
            response = client.get(path)
        finally:
            for alias in ("default", "responses"):
                with contextlib.suppress(AttributeError):  # only those the request opened
                    del caches[alias]
    assert response.status_code == 503, response.content[:300]
    assert int(response["Retry-After"]) > 0 and b"try again" in response.content


def test_it_answers_503_when_a_middleware_meets_the_cache_server_down(seeded):
    # The admin login lock counts attempts in the cache inside a middleware: Django turns what a
    # middleware raises into a 500 before the view-level 503 sees it (the chaos run's 11 500s).
    from django.test import Client

    store = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{closed_port()}/1",
    }
    client = Client(raise_request_exception=False)
    with override_settings(CACHES={"default": store, "responses": {**store, "KEY_PREFIX": "responses"}}):
        for alias in ("default", "responses"):
            caches[alias].close()
            del caches[alias]
        try:
            response = client.post("/admin/login/", {"username": "someone", "password": "wrong"})
        finally:
            for alias in ("default", "responses"):
                with contextlib.suppress(AttributeError):
                    del caches[alias]
    assert response.status_code == 503, response.content[:300]
    assert int(response["Retry-After"]) > 0 and b"try again" in response.content
