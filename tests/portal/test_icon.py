"""The portal's icon: named by the public pages, and /favicon.ico (what the admin's pages make a browser ask for) leads to it."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders

from records.seed import PROTOCOL_ID

pytestmark = pytest.mark.django_db


def test_the_pages_name_the_icon_and_favicon_ico_leads_to_it(client, seeded):
    page = client.get(f"/protocols/{PROTOCOL_ID}/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (301, "/static/favicon.svg")
    assert finders.find("favicon.svg")
