"""The data licence: one setting (an SPDX id, CC-BY-4.0 unless set), shown in every page's footer, the
API's schema and a `Link` header on every API answer; a setting the portal cannot use stops start-up
with one line."""

from __future__ import annotations

import pytest
from django.test import override_settings

from common.licences import DataLicence, LicenceInvalid, data_licence, licence_resolve
from tests.portal.test_settings import run_manage

pytestmark = pytest.mark.django_db

CC_BY = DataLicence(
    "CC-BY-4.0", "Creative Commons Attribution 4.0 International", "https://creativecommons.org/licenses/by/4.0/"
)


def test_it_licenses_the_data_cc_by_4_unless_told_otherwise():
    assert data_licence() == CC_BY


@pytest.mark.parametrize(
    ("spdx_id", "url"),
    [
        ("CC0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
        ("CC-BY-SA-4.0", "https://creativecommons.org/licenses/by-sa/4.0/"),
        ("ODbL-1.0", "https://opendatacommons.org/licenses/odbl/1-0/"),
    ],
)
def test_it_knows_the_name_and_url_of_the_usual_data_licences(spdx_id, url):
    licence = licence_resolve(spdx_id=spdx_id)
    assert licence.spdx_id == spdx_id and licence.url == url and licence.name


def test_it_takes_another_licence_only_with_its_name_and_url():
    with pytest.raises(LicenceInvalid, match="PORTAL_DATA_LICENSE_NAME and PORTAL_DATA_LICENSE_URL"):
        licence_resolve(spdx_id="LicenseRef-Consortium-1")
    with pytest.raises(LicenceInvalid, match="set PORTAL_DATA_LICENSE_URL too"):
        licence_resolve(spdx_id="LicenseRef-Consortium-1", name="The consortium's terms")
    with pytest.raises(LicenceInvalid, match="not an http"):
        licence_resolve(spdx_id="LicenseRef-Consortium-1", name="Terms", url="terms.html")
    given = licence_resolve(spdx_id="LicenseRef-Consortium-1", name="Terms", url="https://example.org/terms")
    assert given == DataLicence("LicenseRef-Consortium-1", "Terms", "https://example.org/terms")
    with pytest.raises(LicenceInvalid, match="is not an SPDX id"):
        licence_resolve(spdx_id="CC BY 4.0")


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"PORTAL_DATA_LICENSE": "CC BY"}, "PORTAL_DATA_LICENSE='CC BY' is not an SPDX id"),
        ({"PORTAL_DATA_LICENSE": "LicenseRef-Ours"}, "set PORTAL_DATA_LICENSE_NAME and PORTAL_DATA_LICENSE_URL too"),
        ({"PORTAL_DATA_LICENSE_URL": "ftp://example.org/terms"}, "PORTAL_DATA_LICENSE_URL"),
        ({"PORTAL_CONTACT_EMAIL": "data at example.org"}, "PORTAL_CONTACT_EMAIL"),
    ],
)
def test_a_licence_or_contact_it_cannot_use_stops_start_up_with_one_line(tmp_path, variables, named):
    completed = run_manage(tmp_path, "check", **variables)
    assert completed.returncode != 0
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith("configuration error:") and named in lines[0]


def test_every_page_names_the_licence_in_its_footer(client, seeded):
    footer = client.get("/").content.decode().split('<footer class="site-footer">')[1]
    assert '<a rel="license" href="https://creativecommons.org/licenses/by/4.0/">' in footer
    assert "Creative Commons Attribution 4.0 International</a> (CC-BY-4.0)" in footer
    assert "quotes are short excerpts from their sources, which keep their own terms" in footer
    with override_settings(PORTAL_DATA_LICENSE="ODbL-1.0"):
        assert "Open Data Commons Open Database License v1.0</a> (ODbL-1.0)" in client.get("/").content.decode()


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/", 200),
        ("/api/v1/evaluations/", 200),
        ("/api/v1/evaluations/?protocol=misspelt", 400),
        ("/api/v1/protocols/no-such-protocol/", 404),
        ("/api/v1/releases/", 200),
        ("/api/v1/schema/?format=json", 200),
    ],
)
def test_every_api_answer_links_the_licence(api, seeded, path, status):
    answer = api.get(path)
    assert answer.status_code == status
    assert answer["Link"] == '<https://creativecommons.org/licenses/by/4.0/>; rel="license"'


def test_a_conditional_answer_links_the_licence_too(api, seeded):
    first = api.get("/api/v1/evaluations/")
    again = api.get("/api/v1/evaluations/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again["Link"] == first["Link"]


def test_the_schema_names_the_licence_contact_and_address(api):
    info = api.get("/api/v1/schema/?format=json").json()["info"]
    assert info["license"] == {
        "name": "Creative Commons Attribution 4.0 International (CC-BY-4.0)",
        "url": "https://creativecommons.org/licenses/by/4.0/",
    }
    with override_settings(
        PORTAL_DATA_LICENSE="CC0-1.0",
        PORTAL_CONTACT_EMAIL="data@portal.example.org",
        PORTAL_SITE_URL="https://portal.example.org",
        PORTAL_SITE_URL_SET=True,
    ):
        schema = api.get("/api/v1/schema/?format=json").json()
    assert schema["info"]["license"]["url"] == "https://creativecommons.org/publicdomain/zero/1.0/"
    assert schema["info"]["contact"]["email"] == "data@portal.example.org"
    assert schema["info"]["contact"]["url"] == "https://portal.example.org"
    assert schema["servers"][0]["url"] == "https://portal.example.org"
