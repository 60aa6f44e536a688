"""The warm (pages.search_page): the search pages readers asked most are rendered into the page
cache after a catalogue change, byte for byte as a reader's request renders them, so the next
reader's search reads only the catalogue version."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from common.versions import version_bump, version_key
from pages import search_page
from pages.tasks import search_pages_warm as search_pages_warm_task

COMMON = "/search/?q=Nucleotide+Transformer"
OTHER = "/search/?q=IA3&type=evaluation"


def a_catalogue_change() -> None:
    """What every write of the catalogue does in its transaction."""
    with transaction.atomic():
        version_bump()


def asked_then_changed(client, *urls: str) -> None:
    """Readers ask `urls` (in order), then the catalogue changes."""
    for url in urls:
        client.get(url)
    a_catalogue_change()


def queries_to_answer(client, url: str) -> tuple[int, bytes]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured), response.content


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5)
def test_it_renders_the_searches_asked_before_a_change_into_the_page_cache(client, seeded):
    asked_then_changed(client, COMMON, COMMON, OTHER)

    warm = search_page.search_pages_warm()

    assert (warm.asked, warm.rendered, warm.cached, warm.done) == (2, 2, 0, True)
    count, warmed = queries_to_answer(client, COMMON)
    assert count == 1  # the catalogue version, nothing searched
    assert b"Nucleotide" in warmed and b'class="match-count">0 result' not in warmed
    cache.clear()
    count, searched = queries_to_answer(client, COMMON)
    assert count > 1
    assert warmed == searched


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=1)
def test_it_warms_the_most_asked_first_and_once_a_version(client, seeded):
    asked_then_changed(client, OTHER, COMMON, COMMON)

    assert search_page.search_pages_warm().rendered == 1
    assert search_page.search_pages_warm().skipped == "unchanged"

    assert queries_to_answer(client, COMMON)[0] == 1
    assert queries_to_answer(client, OTHER)[0] > 1


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5)
def test_it_leaves_a_page_a_reader_asked_for_since_the_change(client, seeded):
    asked_then_changed(client, COMMON)
    client.get(COMMON)

    warm = search_page.search_pages_warm()

    assert (warm.rendered, warm.cached, warm.done) == (0, 1, True)


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5)
def test_a_warm_cut_short_by_its_budget_is_taken_up_by_the_next_run(client, seeded):
    asked_then_changed(client, COMMON)
    time.sleep(0.01)

    cut = search_page.search_pages_warm(budget_seconds=-1)
    taken_up = search_page.search_pages_warm()

    assert (cut.rendered, cut.done) == (0, False)
    assert (taken_up.rendered, taken_up.done) == (1, True)
    assert queries_to_answer(client, COMMON)[0] == 1


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5)
def test_a_new_change_after_a_warm_is_warmed_again(client, seeded):
    asked_then_changed(client, COMMON)
    search_page.search_pages_warm()
    a_catalogue_change()

    assert search_page.search_pages_warm().rendered == 1
    assert queries_to_answer(client, COMMON)[0] == 1


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5, ALLOWED_HOSTS=["testserver", "old.example.org"])
def test_it_passes_over_an_address_whose_host_is_no_longer_allowed(client, seeded):
    client.get(COMMON, HTTP_HOST="old.example.org")
    asked_then_changed(client, COMMON)

    with override_settings(ALLOWED_HOSTS=["testserver"]):
        warm = search_page.search_pages_warm()

    assert (warm.asked, warm.rendered, warm.done) == (2, 1, True)


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5)
def test_a_full_roster_keeps_its_most_asked_half_and_takes_new_searches_again(client, seeded, monkeypatch):
    monkeypatch.setattr(search_page, "ROSTER_MAX", 4)
    for word, times in (("IA3", 3), ("runtime", 2), ("Nucleotide", 1), ("Transformer", 1)):
        for _ in range(times):
            client.get(f"/search/?q={word}")
    client.get("/search/?q=review")  # the roster is full: not listed
    assert len(cache.get(search_page.ROSTER_KEY)) == 4

    search_page.search_pages_warm()
    client.get("/search/?q=benchmark")

    listed = {address[3] for address in cache.get(search_page.ROSTER_KEY).values()}
    assert listed == {"q=IA3", "q=runtime", "q=benchmark"}


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5)
def test_a_search_with_an_overlong_query_string_is_not_counted(client, seeded):
    client.get("/search/?q=IA3+" + "a" * search_page.ADDRESS_MAX)

    assert cache.get(search_page.ROSTER_KEY) is None


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=0)
def test_it_counts_and_warms_nothing_when_it_is_off(client, seeded):
    asked_then_changed(client, COMMON)

    assert search_page.search_pages_warm().skipped == "off"
    assert cache.get(search_page.ROSTER_KEY) is None


@pytest.mark.django_db
@override_settings(SEARCH_WARM_TOP=5, SEARCHES_PER_IP=1)
def test_a_refused_search_is_not_counted(client, seeded):
    client.get(COMMON)
    assert client.get(OTHER).status_code == 429

    assert len(cache.get(search_page.ROSTER_KEY)) == 1


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_warms_the_page_the_web_serves(start_worker, settings):
    if not settings.CACHE_URL:
        pytest.skip("the warm needs the cache the web and the worker share (Redis); the embedded default has none")
    start_worker("default")
    client = Client(HTTP_HOST="localhost")  # a host the worker allows too (the test client's is the tests' own)
    asked_then_changed(client, COMMON)

    search_pages_warm_task.delay()
    deadline = time.monotonic() + 90
    while cache.get(search_page.WARMED_KEY) != version_key():
        assert time.monotonic() < deadline, "the worker did not warm the page in 90 s"
        time.sleep(0.2)

    count, warmed = queries_to_answer(client, COMMON)
    assert count == 1
    assert b'class="match-count">' in warmed
