"""The Atom feeds: /releases/feed/ (published releases) and /feed/ (records as they are source-checked
or excluded), each newest first and bounded, valid Atom, and named by every public page."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET

import pytest

from pages import feeds
from releases.models import ReleaseStatus
from releases.services import release_record_external
from tests.factories import EvaluationFactory, ProtocolFactory, release_with_build
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"


def atom(client, path: str) -> ET.Element:
    """The feed at `path`, parsed, after checking what Atom requires of a feed and of each entry."""
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    feed = ET.fromstring(response.content)
    assert feed.tag == f"{ATOM}feed"
    for name in ("id", "title", "updated"):
        assert (feed.findtext(f"{ATOM}{name}") or "").strip(), f"the feed has no {name}"
    assert feed.find(f"{ATOM}author/{ATOM}name") is not None
    assert feed.find(f"{ATOM}link[@rel='self']").get("href") == f"http://testserver{path}"
    for entry in feed.iter(f"{ATOM}entry"):
        for name in ("id", "title", "updated"):
            assert (entry.findtext(f"{ATOM}{name}") or "").strip(), f"an entry has no {name}"
        datetime.datetime.fromisoformat(entry.findtext(f"{ATOM}updated"))
        assert entry.find(f"{ATOM}link[@rel='alternate']").get("href").startswith("http://testserver/")
    return feed


def entries(feed: ET.Element) -> list[dict[str, str]]:
    return [
        {
            "id": entry.findtext(f"{ATOM}id"),
            "title": entry.findtext(f"{ATOM}title"),
            "link": entry.find(f"{ATOM}link").get("href"),
            "summary": entry.findtext(f"{ATOM}summary") or "",
        }
        for entry in feed.iter(f"{ATOM}entry")
    ]


def test_the_releases_feed_lists_published_releases_newest_first(client):
    for day, release_id in ((1, "2026-01-01-older"), (2, "2026-01-02-newer")):
        release_record_external(
            release_id=release_id, release_date=datetime.date(2026, 1, day), note=f"note {day}", records=[]
        )
    release_with_build(release_date=datetime.date(2026, 1, 3), status=ReleaseStatus.REQUESTED)
    listed = entries(atom(client, "/releases/feed/"))
    assert [entry["title"] for entry in listed] == ["Release 2026-01-02-newer", "Release 2026-01-01-older"]
    assert listed[0]["link"] == "http://testserver/releases/2026-01-02-newer/"
    assert "note 2" in listed[0]["summary"]
    assert client.get("/releases/2026-01-02-newer/").status_code == 200


def test_the_releases_feed_is_valid_with_no_release(client):
    assert entries(atom(client, "/releases/feed/")) == []


def test_the_records_feed_tells_checks_and_exclusions_newest_first_each_linking_to_its_page(client):
    protocol = ProtocolFactory(title="Splice sites")
    evaluation = EvaluationFactory(protocol=protocol)
    apply_transitions(protocol, "check_source")
    apply_transitions(evaluation, "check_source")
    apply_transitions(evaluation, "exclude", reason="the table's row is a different split")
    listed = entries(atom(client, "/feed/"))
    assert [entry["title"] for entry in listed] == [
        f"Evaluation “{evaluation}” excluded",
        f"Evaluation “{evaluation}” source-checked",
        "Protocol “Splice sites” source-checked",
    ]
    assert listed[0]["link"] == listed[1]["link"] == f"http://testserver/evaluations/{evaluation.stable_id}/"
    assert "the table's row is a different split" in listed[0]["summary"]
    assert listed[2]["link"] == f"http://testserver/protocols/{protocol.stable_id}/"
    assert len({entry["id"] for entry in listed}) == 3
    assert all(entry["id"].startswith("http://testserver/") for entry in listed)


def test_a_record_without_a_page_of_its_own_links_to_its_protocols_page(client):
    from records.models import BaselineRole

    protocol = ProtocolFactory()
    role = BaselineRole.objects.create(
        stable_id="null-control", protocol=protocol, kind="null_control", selection_rule="the shuffled sequences"
    )
    apply_transitions(role, "check_source")
    [entry] = entries(atom(client, "/feed/"))
    assert entry["link"] == f"http://testserver/protocols/{protocol.stable_id}/"
    assert entry["title"].startswith("Baseline role “") and entry["title"].endswith("” source-checked")


def test_the_records_feed_leaves_out_other_reviews_and_is_bounded(client, monkeypatch):
    monkeypatch.setattr(feeds, "FEED_ENTRIES", 3)
    protocols = [ProtocolFactory() for _ in range(5)]
    for protocol in protocols:
        apply_transitions(protocol, "check_source")
    apply_transitions(protocols[0], "reopen")  # a reopening is not news of the feed
    listed = entries(atom(client, "/feed/"))
    assert len(listed) == 3
    assert [entry["link"] for entry in listed] == [
        f"http://testserver/protocols/{protocol.stable_id}/" for protocol in reversed(protocols[2:])
    ]


def test_every_public_page_names_both_feeds(client, seeded):
    for path in ("/", "/coverage/", "/releases/"):
        page = client.get(path).content.decode()
        assert '<link rel="alternate" type="application/atom+xml"' in page
        assert 'href="/feed/"' in page and 'href="/releases/feed/"' in page
