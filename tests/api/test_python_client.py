"""The API as a Python client calls it: `requests` against a running server. `requests` writes a
boolean as `True`/`False`; a misspelt filter or id comes back as a 400 saying which, never as a list
that looks like an answer."""

from __future__ import annotations

import pytest
import requests

from records.seed import PROTOCOL_ID

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_python_client_gets_what_it_asks_for_or_a_400_saying_why(live_server, seeded):
    url = f"{live_server.url}/api/v1/evaluations/"

    excluded = requests.get(url, params={"comparable": False}, timeout=30)  # sent as comparable=False
    assert excluded.request.url.endswith("?comparable=False")
    assert excluded.status_code == 200 and len(excluded.json()["results"]) == 2  # the seed's two are excluded
    assert requests.get(url, params={"comparable": True}, timeout=30).json()["results"] == []

    misspelt = requests.get(url, params={"protocol": PROTOCOL_ID}, timeout=30)
    assert misspelt.status_code == 400 and list(misspelt.json()) == ["protocol"]
    assert "unknown query parameter" in misspelt.json()["protocol"] and "protocol_id" in misspelt.json()["protocol"]

    typo = requests.get(url, params={"protocol_id": PROTOCOL_ID + "-typo"}, timeout=30)
    assert typo.status_code == 400 and list(typo.json()) == ["protocol_id"]
    assert typo.json()["protocol_id"] == [f"no protocol has the stable id {PROTOCOL_ID}-typo"]

    found = requests.get(url, params={"protocol_id": PROTOCOL_ID, "comparable": 0}, timeout=30)
    assert found.status_code == 200 and len(found.json()["results"]) == 2

    refused = requests.get(url, params={"comparable": "yes"}, timeout=30)
    assert refused.status_code == 400 and list(refused.json()) == ["comparable"]


def test_a_python_client_pages_with_the_links_it_is_given(live_server, seeded):
    """The next link repeats the filters as sent, and the server takes them again (no unknown parameter)."""
    url = f"{live_server.url}/api/v1/review-events/"
    first = requests.get(url, params={"page_size": 1, "record_type": "evaluation"}, timeout=30)
    assert first.status_code == 200, first.text
    second = requests.get(first.json()["next"], timeout=30)
    assert second.status_code == 200 and second.json()["results"] != first.json()["results"]
