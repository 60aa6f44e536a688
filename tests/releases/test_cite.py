"""A release page says how to cite the release (plain text and BibTeX), links its DataCite metadata
(valid against DataCite's kernel-4.5 schema) and carries a schema.org Dataset as JSON-LD."""

from __future__ import annotations

import json
import re

import pytest
from datacite import schema45

from records.seed import SEED_RELEASE_ID

pytestmark = pytest.mark.django_db


def json_ld_blocks(html: str) -> list[dict]:
    return [
        json.loads(block) for block in re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    ]


def test_the_release_page_shows_how_to_cite_it(published_release, client, settings):
    settings.PORTAL_SITE_NAME = "Rewire"
    html = client.get(f"/releases/{published_release.release_id}/").content.decode()
    release_id = published_release.release_id
    assert "Cite this release" in html
    year = published_release.release_date.year
    assert f"Rewire curators ({year}). Rewire benchmark evidence, release {release_id} [Data set]." in html
    assert f"http://testserver/releases/{release_id}/" in html
    assert re.search(r"@misc\{Rewire_[0-9_a-f]+,\s+author = \{\{Rewire curators\}\}", html)


def test_the_release_page_carries_a_schema_org_dataset(published_release, client):
    html = client.get(f"/releases/{published_release.release_id}/").content.decode()
    (dataset,) = json_ld_blocks(html)
    assert dataset["@type"] == "Dataset" and dataset["version"] == published_release.release_id
    assert dataset["name"] and len(dataset["description"]) >= 50
    assert dataset["license"] == "https://creativecommons.org/licenses/by/4.0/"
    (download,) = dataset["distribution"]
    assert download["contentUrl"].endswith(".tar.gz")
    assert client.get(download["contentUrl"].removeprefix("http://testserver")).status_code == 200


def test_the_datacite_metadata_is_valid_and_names_the_release_and_licence(published_release, client, settings):
    settings.PORTAL_DATA_LICENSE = "CC0-1.0"
    response = client.get(f"/releases/{published_release.release_id}/datacite.json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    metadata = response.json()
    assert schema45.validate(metadata), list(schema45.validator.iter_errors(metadata))
    assert metadata["version"] == published_release.release_id
    assert metadata["rightsList"][0]["rightsIdentifier"] == "CC0-1.0"
    assert metadata["url"] == f"http://testserver/releases/{published_release.release_id}/"


def test_an_external_release_is_cited_without_a_download(seeded, client):
    html = client.get(f"/releases/{SEED_RELEASE_ID}/").content.decode()
    (dataset,) = json_ld_blocks(html)
    assert "distribution" not in dataset
    assert schema45.validate(client.get(f"/releases/{SEED_RELEASE_ID}/datacite.json").json())


def test_text_in_the_data_cannot_close_the_json_ld_block(published_release, client, settings):
    settings.PORTAL_SITE_NAME = "</script><script>alert(1)</script>"
    html = client.get(f"/releases/{published_release.release_id}/").content.decode()
    assert "<script>alert(1)" not in html
    (dataset,) = json_ld_blocks(html)
    assert dataset["publisher"]["name"] == "</script><script>alert(1)</script>"


def test_the_bundle_names_its_licence_and_carries_its_datacite_metadata(published_release, settings):
    import bagit

    from releases.store import release_directory, release_file_path

    names = set(published_release.files.values_list("name", flat=True))
    assert {"metadata/datacite.json", "data/datapackage.json", "bag-info.txt"} <= names
    package = json.loads(release_file_path(published_release, "data/datapackage.json").read_text())
    assert package["licenses"] == [
        {
            "name": "CC-BY-4.0",
            "path": "https://creativecommons.org/licenses/by/4.0/",
            "title": "Creative Commons Attribution 4.0 International",
        }
    ]
    assert package["contributors"] == [{"title": f"{settings.PORTAL_SITE_NAME} curators", "role": "author"}]
    values = [
        field["description"]
        for resource in package["resources"]
        for field in resource.get("schema", {}).get("fields", [])
        if field["name"] == "value"
    ]
    assert values and all('dtype={"value": str}' in description for description in values)
    bag_info = release_file_path(published_release, "bag-info.txt").read_text()
    assert "License: CC-BY-4.0 https://creativecommons.org/licenses/by/4.0/\n" in bag_info
    metadata = json.loads(release_file_path(published_release, "metadata/datacite.json").read_text())
    assert schema45.validate(metadata), list(schema45.validator.iter_errors(metadata))
    assert metadata["version"] == published_release.release_id
    assert metadata["url"].endswith(f"/releases/{published_release.release_id}/")
    bag = bagit.Bag(str(release_directory(published_release.release_id) / published_release.release_id))
    assert "metadata/datacite.json" in bag.tagfile_entries()
    bag.validate()
