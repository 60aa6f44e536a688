"""HEAD is answered wherever GET is (uptime monitors and link checkers use it), over real HTTP.

The test walks every URL pattern the portal serves outside the admin and the API (DRF's views
answer HEAD by themselves), and fails on a pattern it has no address for: a new public page must be
added to ADDRESSES, and so is checked for HEAD from its first day.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.benchmarks.conftest import broker, fake_report, operator, seed_tiny_recipe  # noqa: F401
from tests.releases.conftest import build_now, published_release, release_manager, releases_dir  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

#: Patterns under these prefixes are not public pages (the admin) or answer HEAD through DRF (the API).
NOT_PAGES = ("admin/", "api/v1/")


def routes(patterns=None, prefix: str = "") -> Iterator[str]:
    """Every served route, as the patterns spell it joined ('protocols/<slug:stable_id>/')."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from routes(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route


def public_routes() -> set[str]:
    return {route for route in routes() if not route.startswith(NOT_PAGES)}


# What each address needs: `data` holds the records the fixtures made (see `data` below).
ADDRESSES: dict[str, Callable[[dict], str]] = {
    "favicon.ico": lambda d: "/favicon.ico",
    "robots.txt": lambda d: "/robots.txt",
    "feed/": lambda d: "/feed/",
    "releases/feed/": lambda d: "/releases/feed/",
    "sitemap.xml": lambda d: "/sitemap.xml",
    "metrics": lambda d: "/metrics",
    "": lambda d: "/",
    "search/": lambda d: "/search/?q=IA3",
    "coverage/": lambda d: "/coverage/",
    "coverage.csv": lambda d: "/coverage.csv",
    "protocols/<slug:stable_id>/": lambda d: f"/protocols/{d['protocol']}/",
    r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/comparison\.(?P<extension>svg|png)$": (
        lambda d: f"/protocols/{d['protocol']}/comparison.svg"
    ),
    r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/results\.(?P<extension>csv|json)$": (
        lambda d: f"/protocols/{d['protocol']}/results.csv"
    ),
    "evaluations/<slug:stable_id>/": lambda d: f"/evaluations/{d['evaluation']}/",
    "configurations/<slug:stable_id>/": lambda d: f"/configurations/{d['configuration']}/",
    "datasets/<slug:stable_id>/": lambda d: f"/datasets/{d['dataset']}/",
    "sources/<slug:stable_id>/": lambda d: f"/sources/{d['source']}/",
    "decisions/<slug:stable_id>/": lambda d: f"/decisions/{d['decision']}/",
    "models/<slug:stable_id>/": lambda d: f"/models/{d['model']}/",
    "works/<slug:stable_id>/": lambda d: f"/works/{d['work']}/",
    "benchmarks/jobs/<int:job_id>/": lambda d: f"/benchmarks/jobs/{d['job']}/",
    "benchmarks/jobs/<int:job_id>/status.json": lambda d: f"/benchmarks/jobs/{d['job']}/status.json",
    "benchmarks/jobs/<int:job_id>/report.json": lambda d: f"/benchmarks/jobs/{d['job']}/report.json",
    "corrections/new/": lambda d: f"/corrections/new/?record=protocol:{d['protocol']}",
    "corrections/<str:token>/": lambda d: f"/corrections/{d['correction']}/",
    "releases/": lambda d: "/releases/",
    "releases/latest/": lambda d: "/releases/latest/",
    "releases/latest/files/<path:name>": lambda d: f"/releases/latest/files/{d['release_file']}",
    "releases/<int:pk>/": lambda d: f"/releases/{d['release_pk']}/",
    "releases/<str:release_id>/": lambda d: f"/releases/{d['release']}/",
    "releases/<str:release_id>/datacite.json": lambda d: f"/releases/{d['release']}/datacite.json",
    "releases/<str:release_id>/files/<path:name>": lambda d: f"/releases/{d['release']}/files/{d['release_file']}",
}


def test_it_has_an_address_for_every_public_route():
    assert public_routes() - ADDRESSES.keys() == set(), "a new page: add its address to ADDRESSES"
    assert ADDRESSES.keys() - public_routes() == set(), "a page is gone: remove its address"


@pytest.fixture
def data(seeded, published_release, seed_tiny_recipe, operator, broker) -> dict:  # noqa: F811
    from benchmarks.execution import benchmark_job_claim, benchmark_job_succeed
    from benchmarks.services import benchmark_job_enqueue
    from corrections.services import correction_submit
    from records.models import Configuration, Dataset, Decision, Evaluation, Protocol, Source, Work
    from tests.factories import GenomicModelFactory

    job = benchmark_job_enqueue(recipe=seed_tiny_recipe, requested_by=operator)
    benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu@worker-host-1")
    benchmark_job_succeed(job_id=job.pk, attempt=1, report=fake_report(seconds=75))
    protocol = Protocol.objects.get(stable_id=seed_tiny_recipe.protocol.stable_id)
    correction = correction_submit(
        target=protocol,
        field_name="",
        proposed_value="",
        explanation="The hardware paragraph names another GPU.",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    return {
        "protocol": protocol.stable_id,
        "evaluation": Evaluation.objects.order_by("pk").first().stable_id,
        "configuration": Configuration.objects.order_by("pk").first().stable_id,
        "dataset": Dataset.objects.order_by("pk").first().stable_id,
        "source": Source.objects.order_by("pk").first().stable_id,
        "decision": Decision.objects.order_by("pk").first().stable_id,
        "model": GenomicModelFactory(introduced_in=Work.objects.order_by("pk").first()).stable_id,
        "work": Work.objects.order_by("pk").first().stable_id,
        "job": job.pk,
        "correction": correction.token,
        "release_pk": published_release.pk,
        "release": published_release.release_id,
        "release_file": published_release.files.order_by("name").first().name,
    }


def request(base: str, method: str, address: str) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request(method, address)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


#: Addresses that answer with a redirect (GET and HEAD alike); every other one answers 200.
REDIRECTS = {
    "favicon.ico": 301,
    "releases/latest/": 302,
    "releases/latest/files/<path:name>": 302,
    "releases/<int:pk>/": 302,
}  # a published build: its release page


def test_it_answers_head_on_every_public_page_as_get_without_a_body(live_server, data):
    wrong = {}
    for route, address_of in ADDRESSES.items():
        address = address_of(data)
        expected = REDIRECTS.get(route, 200)
        get_status, get_headers, _ = request(live_server.url, "GET", address)
        head_status, head_headers, head_body = request(live_server.url, "HEAD", address)
        if (get_status, head_status, head_body) != (expected, expected, b""):
            wrong[route] = (address, get_status, head_status, head_body[:60])
        elif head_headers.get("content-type") != get_headers.get("content-type"):
            wrong[route] = (address, get_headers.get("content-type"), head_headers.get("content-type"))
    assert wrong == {}
