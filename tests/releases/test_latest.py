"""Stable addresses of the newest data: /releases/latest/..., /releases/latest/files/<name> and
/api/v1/releases/latest/ redirect (302, not cached) to the newest published release's own
addresses, which never change and are cached as immutable."""

from __future__ import annotations

import gzip
import io

import pandas as pd
import pytest

from records.seed import SEED_RELEASE_ID

pytestmark = pytest.mark.django_db

MATRIX = "data/model_evaluation_matrix.csv.gz"


def test_the_latest_file_redirects_to_the_newest_release_file_and_reads_with_pandas(published_release, client):
    response = client.get(f"/releases/latest/files/{MATRIX}")
    assert response.status_code == 302
    assert response["Location"] == f"/releases/{published_release.release_id}/files/{MATRIX}"
    assert response["Cache-Control"] == "no-cache"
    target = client.get(response["Location"])
    assert target.status_code == 200 and "immutable" in target["Cache-Control"]
    table = pd.read_csv(io.BytesIO(gzip.decompress(b"".join(target.streaming_content))), dtype=str)
    assert len(table) > 0 and "value" in table.columns


def test_the_latest_file_is_not_found_when_the_newest_release_has_no_such_file(published_release, client):
    response = client.get("/releases/latest/files/data/no_such_table.csv.gz")
    assert response.status_code == 404


def test_the_latest_file_is_not_found_before_the_portal_publishes_files(seeded, client):
    # The seed's release is external: the page exists, its files are not held here.
    assert client.get("/releases/latest/")["Location"] == f"/releases/{SEED_RELEASE_ID}/"
    assert client.get(f"/releases/latest/files/{MATRIX}").status_code == 404


def test_the_latest_page_redirect_is_not_cached(published_release, client):
    response = client.get("/releases/latest/")
    assert response.status_code == 302 and response["Cache-Control"] == "no-cache"


def test_the_api_latest_redirects_to_the_newest_release_in_the_api(published_release, client):
    response = client.get("/api/v1/releases/latest/", HTTP_ACCEPT="application/json")
    assert response.status_code == 302 and response["Cache-Control"] == "no-cache"
    assert response["Location"].endswith(f"/api/v1/releases/{published_release.release_id}/")
    assert client.get(response["Location"]).json()["release_id"] == published_release.release_id


def test_the_api_latest_is_a_json_404_before_any_release(db, client):
    response = client.get("/api/v1/releases/latest/")
    assert response.status_code == 404 and "published" in response.json()["detail"]


def test_the_api_latest_refuses_an_unknown_parameter(published_release, client):
    response = client.get("/api/v1/releases/latest/?at=2026")
    assert response.status_code == 400 and "at" in response.content.decode()
