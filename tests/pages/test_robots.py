"""/robots.txt: public pages may be crawled; the admin, the correction forms, the API's write endpoints
and the metrics may not; it names the sitemap."""

from __future__ import annotations

from urllib.robotparser import RobotFileParser

import pytest
from django.urls import Resolver404, resolve

from pages.views import ROBOTS_DISALLOWED

pytestmark = pytest.mark.django_db


def robots(client) -> RobotFileParser:
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    parser = RobotFileParser()
    parser.parse(response.content.decode().splitlines())
    return parser


def test_it_lets_crawlers_read_the_public_pages_and_the_apis_reads(client):
    parser = robots(client)
    for path in (
        "/",
        "/search/?q=dnabert",
        "/coverage/",
        "/protocols/nt-ia3-runtime/",
        "/evaluations/x/",
        "/releases/",
        "/api/v1/protocols/",
        "/sitemap.xml",
    ):
        assert parser.can_fetch("*", f"http://testserver{path}"), path


def test_it_keeps_crawlers_out_of_the_admin_the_forms_and_the_apis_writes(client):
    parser = robots(client)
    for path in (
        "/admin/",
        "/admin/records/protocol/",
        "/corrections/new/?record=protocol:x",
        "/api/v1/corrections/",
        "/api/v1/imports/",
        "/api/v1/benchmark-jobs/3/cancel/",
        "/metrics",
    ):
        assert not parser.can_fetch("*", f"http://testserver{path}"), path


def test_it_names_the_sitemap_at_the_requests_host(client):
    assert robots(client).site_maps() == ["http://testserver/sitemap.xml"]
    assert client.get("/sitemap.xml").status_code == 200


# A page the portal serves under each disallowed path.
SERVED_UNDER = {
    "/admin/": "/admin/login/",
    "/corrections/": "/corrections/new/",
    "/api/v1/corrections/": "/api/v1/corrections/",
    "/api/v1/imports/": "/api/v1/imports/",
    "/api/v1/benchmark-jobs/": "/api/v1/benchmark-jobs/1/rerun/",
    "/metrics": "/metrics",
}


def test_every_path_it_disallows_is_one_the_portal_serves():
    """A renamed path would leave its line guarding nothing: each must still lead to a view."""
    assert set(SERVED_UNDER) == set(ROBOTS_DISALLOWED)
    unserved = []
    for path, page in SERVED_UNDER.items():
        try:
            resolve(page)
        except Resolver404:
            unserved.append(path)
        assert page.startswith(path)
    assert unserved == []


def test_it_answers_only_reads(client):
    assert client.post("/robots.txt").status_code == 405
    assert client.head("/robots.txt").status_code == 200
