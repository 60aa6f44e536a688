"""A cursor is the portal's own: one it did not issue is a 400 naming `cursor` on every list, never a 500."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import ResultFactory

pytestmark = pytest.mark.django_db

#: What an attacker put in DRF's unsigned cursor: a position no column can hold, SQL, a NUL byte.
CRAFTED_POSITIONS = ["2026-13-45", "' OR 1=1 --", "%00", "\x00", "abc"]


def crafted(position: str, **tokens: str) -> str:
    return base64.b64encode(urlencode({**tokens, "p": position}).encode()).decode()


@pytest.fixture
def lists(api, seeded) -> list[str]:
    """Every GET operation of the schema that takes a cursor, with its path filled in."""
    schema = api.get("/api/v1/schema/?format=json").json()
    paths = []
    for path, operations in schema["paths"].items():
        parameters = {p["name"] for p in operations.get("get", {}).get("parameters", [])}
        if "cursor" not in parameters:
            continue
        if "{" in path:  # a record's review log: the first record of its list, by its id field
            listed, rest = path.split("{", 1)
            name = rest.split("}", 1)[0]
            records = api.get(listed).json()["results"]
            if not records:
                continue
            path = path.replace("{" + name + "}", records[0][name])
        paths.append(path)
    assert len(paths) >= 9  # the nine lists the crafted cursor broke, and every list since
    assert all("{" not in path for path in paths), paths
    return paths


def assert_refused_naming_cursor(answer) -> None:
    assert answer.status_code == 400, (answer.status_code, answer.content[:300])
    assert "cursor" in answer.json()


@pytest.mark.parametrize("position", CRAFTED_POSITIONS)
def test_it_refuses_a_crafted_cursor_on_every_list_with_a_400_naming_cursor(api, token_client, lists, position):
    curator = token_client("curator")
    for path in lists:
        for client in (api, curator):
            answer = client.get(path, {"cursor": crafted(position)})
            if answer.status_code in (401, 403):  # a list this client may not read says so first
                continue
            assert_refused_naming_cursor(answer)


def test_it_refuses_a_position_of_another_type_on_the_results_ordered_by_value(api):
    for _ in range(3):
        ResultFactory()
    for position in ["2026-11-30 10:00:00+00:00", "not-a-number", "1e999999"]:
        assert_refused_naming_cursor(api.get("/api/v1/results/", {"ordering": "value", "cursor": crafted(position)}))


def test_it_refuses_a_cursor_it_issued_for_another_ordering(api):
    for _ in range(3):
        ResultFactory()
    by_date = api.get("/api/v1/results/", {"page_size": 1}).json()
    cursor = parse_qs(urlsplit(by_date["next"]).query)["cursor"][0]
    assert api.get("/api/v1/results/", {"page_size": 1, "cursor": cursor}).status_code == 200
    assert_refused_naming_cursor(api.get("/api/v1/results/", {"page_size": 1, "ordering": "value", "cursor": cursor}))


def test_it_refuses_a_cursor_whose_signed_text_was_altered(api):
    for _ in range(3):
        ResultFactory()
    cursor = parse_qs(urlsplit(api.get("/api/v1/results/", {"page_size": 1}).json()["next"]).query)["cursor"][0]
    altered = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    assert_refused_naming_cursor(api.get("/api/v1/results/", {"page_size": 1, "cursor": altered}))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=80), as_base64=st.booleans(), list_index=st.integers(min_value=0))
def test_no_cursor_bytes_make_any_list_answer_a_server_error(api, lists, raw, as_base64, list_index):
    cursor = base64.b64encode(raw).decode() if as_base64 else raw.decode("latin-1")
    path = lists[list_index % len(lists)]
    answer = api.get(path, {"cursor": cursor})
    assert answer.status_code < 500, (path, cursor, answer.content[:300])
    if "\x00" in cursor:  # the site refuses a NUL anywhere in the address before any view runs
        assert answer.status_code == 400 and "null characters" in answer.json()["detail"]
    elif answer.status_code not in (401, 403):
        assert_refused_naming_cursor(answer)
