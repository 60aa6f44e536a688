"""The public release pages, the latest-release redirect, downloads with ETag and ranges, and the read API."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from records.seed import SEED_RELEASE_ID
from releases.models import Release, ReleaseBuild, ReleaseStatus
from releases.services import release_cut
from releases.store import release_file_path
from tests.factories import release_with_build

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.releases.urls_for_tests")]

MATRIX = "data/model_evaluation_matrix.csv.gz"


def download_url(release, name: str = MATRIX) -> str:
    return f"/releases/{release.release_id}/files/{name}"


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_list_shows_published_releases_and_builds_in_progress(published_release, client, release_manager, curator):
    from records.models import Result
    from records.services import record_save

    result = Result.objects.first()
    result.printed_value = f"{result.value} minutes"
    record_save(record=result, actor=curator, changed_fields=["printed_value"])
    building = release_cut(actor=release_manager)
    ReleaseBuild.objects.filter(pk=building.pk).update(
        status=ReleaseStatus.BUILDING, progress=42, stage="write model_evaluation_matrix"
    )
    page = client.get("/releases/")
    content = page.content.decode()
    assert page.status_code == 200
    assert f'href="/releases/{published_release.release_id}/"' in content
    assert SEED_RELEASE_ID in content and "not held by this portal" in content
    assert "<caption>Published releases, newest first</caption>" in content
    assert f'href="/releases/{building.pk}/"' in content and 'value="42"' in content


def test_the_list_says_how_many_tables_a_release_holds_as_a_built_one_holds_them(published_release, client):
    from django.contrib.humanize.templatetags.humanize import apnumber

    tables = sorted(f.name for f in published_release.files.all() if re.fullmatch(r"data/\w+\.csv\.gz", f.name))
    text = " ".join(client.get("/releases/").content.decode().split())
    assert f"a Frictionless data package: {apnumber(len(tables))} gzip-compressed CSV tables (" in text
    assert "protocol coverage, model evaluation matrix, " in text  # each named, in the bundle's order


def test_latest_redirects_to_the_newest_published_release(published_release, client):
    response = client.get("/releases/latest/")
    assert response.status_code == 302 and response["Location"] == f"/releases/{published_release.release_id}/"


def test_latest_is_the_external_release_until_the_portal_publishes_one(seeded, client):
    assert client.get("/releases/latest/")["Location"] == f"/releases/{SEED_RELEASE_ID}/"
    page = client.get(f"/releases/{SEED_RELEASE_ID}/")
    assert page.status_code == 200 and b"does not hold its files" in page.content


def test_latest_is_not_found_before_any_release(db, client):
    assert client.get("/releases/latest/").status_code == 404


def test_the_release_page_shows_counts_files_checksums_and_changes(published_release, client):
    page = client.get(f"/releases/{published_release.release_id}/")
    content = page.content.decode().replace("\xa0", " ")
    assert page.status_code == 200
    for file in published_release.files.all():
        assert f'href="{download_url(published_release, file.name)}"' in content
        assert file.sha256 in content and file.sha512 in content
        assert f"{file.bytes:,} bytes" in content or f"{file.bytes} bytes" in content
    assert 'id="model_evaluation_matrix"' in content  # the anchor the protocol page links to
    assert "<caption>Rows per table</caption>" in content
    assert f'Against release <a href="/releases/{SEED_RELEASE_ID}/">{SEED_RELEASE_ID}</a>' in content
    # Like with like: the seed release listed the suite's 18 tasks, and so does a portal release (its dataset table).
    assert " 0 removed," in content
    assert "sha256sum -c manifest-sha256.txt" in content


def test_a_release_being_built_has_a_page_that_refreshes_itself_until_published(release_manager, client, releases_dir):
    from releases.build import release_build

    release = release_cut(actor=release_manager)
    ReleaseBuild.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.BUILDING, progress=30, stage="sort model_evaluation_matrix"
    )
    page = client.get(f"/releases/{release.pk}/")
    assert page.status_code == 200 and page["Refresh"] == "3"
    assert b'value="30"' in page.content and b"sort model_evaluation_matrix" in page.content
    ReleaseBuild.objects.filter(pk=release.pk).update(status=ReleaseStatus.REQUESTED)
    published = release_build(release_pk=release.pk)
    response = client.get(f"/releases/{release.pk}/")
    assert response.status_code == 302 and response["Location"] == f"/releases/{published.release_id}/"


def test_a_download_sends_the_file_with_its_sha256_as_etag(published_release, client):
    file = published_release.files.get(name=MATRIX)
    response = client.get(download_url(published_release))
    assert response.status_code == 200
    assert body(response) == release_file_path(published_release, MATRIX).read_bytes()
    assert response["ETag"] == f'"{file.sha256}"'
    assert response["Content-Length"] == str(file.bytes)
    assert response["Accept-Ranges"] == "bytes"
    assert response["Content-Type"] == "application/gzip"
    assert "Content-Encoding" not in response
    assert 'filename="model_evaluation_matrix.csv.gz"' in response["Content-Disposition"]


def test_the_archive_and_tag_files_download_too(published_release, client):
    for name in (f"{published_release.release_id}.tar.gz", "manifest-sha256.txt", "data/datapackage.json"):
        response = client.get(download_url(published_release, name))
        assert response.status_code == 200, name
        assert body(response) == release_file_path(published_release, name).read_bytes()


def test_if_none_match_with_the_etag_answers_not_modified(published_release, client):
    file = published_release.files.get(name=MATRIX)
    response = client.get(download_url(published_release), HTTP_IF_NONE_MATCH=f'"{file.sha256}"')
    assert response.status_code == 304 and response["ETag"] == f'"{file.sha256}"' and response.content == b""
    assert client.get(download_url(published_release), HTTP_IF_NONE_MATCH='"something-else"').status_code == 200


RANGES = [("bytes=0-9", 0, 9), ("bytes=10-", 10, None), ("bytes=-16", -16, None), ("bytes=5-100000000", 5, None)]


def test_a_single_range_is_answered_with_partial_content(published_release, client):
    content = release_file_path(published_release, MATRIX).read_bytes()
    size = len(content)
    for header, start, end in RANGES:
        expected = content[start:] if end is None else content[start : end + 1]
        first = start % size
        response = client.get(download_url(published_release), HTTP_RANGE=header)
        assert response.status_code == 206, header
        assert body(response) == expected, header
        assert response["Content-Range"] == f"bytes {first}-{first + len(expected) - 1}/{size}"
        assert response["Content-Length"] == str(len(expected))
        assert response["ETag"] == f'"{published_release.files.get(name=MATRIX).sha256}"'


def test_an_unsatisfiable_range_is_refused_with_416(published_release, client):
    size = published_release.files.get(name=MATRIX).bytes
    response = client.get(download_url(published_release), HTTP_RANGE=f"bytes={size}-")
    assert response.status_code == 416 and response["Content-Range"] == f"bytes */{size}"


def test_several_ranges_a_malformed_range_or_a_stale_if_range_get_the_whole_file(published_release, client):
    whole = release_file_path(published_release, MATRIX).read_bytes()
    for headers in (
        {"HTTP_RANGE": "bytes=0-1,4-5"},
        {"HTTP_RANGE": "lines=1-2"},
        {"HTTP_RANGE": "bytes=0-9", "HTTP_IF_RANGE": '"another-version"'},
    ):
        response = client.get(download_url(published_release), **headers)
        assert response.status_code == 200 and body(response) == whole


NOT_IN_THE_FILE_TABLE = [
    "data/nothing.csv.gz",
    "../secret",
    "data/../../releases",
    "..%2F..%2Fportal.sqlite3",
    "%2Fetc%2Fpasswd",
    "/etc/passwd",
    "data",
    "data/",
    "memberships.tsv",
    "DATA/release.json",
]


def test_only_files_of_the_release_file_table_are_served(published_release, client):
    for name in NOT_IN_THE_FILE_TABLE:
        assert client.get(f"/releases/{published_release.release_id}/files/{name}").status_code == 404, name


def test_an_external_release_has_no_files_to_download(seeded, client):
    assert client.get(f"/releases/{SEED_RELEASE_ID}/files/manifest-sha256.txt").status_code == 404


def test_head_requests_get_the_headers(published_release, client):
    response = client.head(download_url(published_release))
    assert response.status_code == 200 and response["ETag"] and response["Accept-Ranges"] == "bytes"


def test_the_api_lists_releases_with_files_checksums_and_links(published_release, django_assert_num_queries):
    api = APIClient()
    # published releases (with previous), their files, the builds in progress; X-Portal-Release's newest release
    with django_assert_num_queries(4):
        response = api.get("/api/v1/releases/")
    assert response.status_code == 200
    [mine, external] = response.json()["results"]
    assert mine["release_id"] == published_release.release_id and external["release_id"] == SEED_RELEASE_ID
    assert mine["status"] == "published" and mine["progress"] == 100 and mine["previous"] == SEED_RELEASE_ID
    assert mine["counts"]["rows"]["model_evaluation_matrix"] == 2
    matrix = next(f for f in mine["files"] if f["name"] == MATRIX)
    record = published_release.files.get(name=MATRIX)
    assert (matrix["bytes"], matrix["sha256"], matrix["sha512"]) == (record.bytes, record.sha256, record.sha512)
    assert matrix["url"] == f"http://testserver{download_url(published_release)}"
    assert external["files"] == [] and response.json()["building"] == []


def test_the_api_shows_one_release_by_id_and_a_build_by_number(published_release, release_manager, curator):
    api = APIClient()
    response = api.get(f"/api/v1/releases/{published_release.release_id}/")
    assert response.status_code == 200 and len(response.json()["files"]) == published_release.files.count()
    assert response.json()["url"] == f"http://testserver/api/v1/releases/{published_release.release_id}/"
    assert api.get(f"/api/v1/releases/{published_release.pk}/").json()["release_id"] == published_release.release_id
    assert api.get("/api/v1/releases/2020-01-01-000000000000/").status_code == 404


# "²" and "12³" are digits to str.isdigit() but not to int(); an Arabic-Indic "٣" is one to both, yet
# row numbers are ASCII.
@pytest.mark.parametrize("key", ["%C2%B2", "12%C2%B3", "%D9%A3"])
def test_the_api_and_the_admin_answer_a_non_ascii_digit_key_with_not_found(
    published_release, release_manager, client, key
):
    # A release numbered as int() reads the key ("²" is no number to it, "٣" is 3) must not be found by it.
    for number in (3, 123):
        if not Release.objects.filter(pk=number).exists():
            release_with_build(pk=number, release_date=published_release.release_date, status=ReleaseStatus.FAILED)
    response = APIClient().get(f"/api/v1/releases/{key}/")
    assert response.status_code == 404 and "No release" in response.json()["detail"]
    client.force_login(release_manager)
    response = client.get(f"/admin/releases/release/{key}/change/")
    assert response.status_code == 302 and response["Location"] == "/admin/"  # the admin's "does not exist" redirect


def test_record_pages_say_which_release_they_were_derived_from(published_release, client):
    page = client.get("/coverage/")
    assert f"Coverage is derived from release {published_release.release_id}." in page.content.decode()


def test_record_pages_can_list_the_releases_that_contain_a_record(published_release):
    from pages.parts import membership_part
    from records.models import Source

    source = Source.objects.first()
    html = membership_part(source)["release_membership"]
    assert f'<a href="/releases/{published_release.release_id}/">{published_release.release_id}</a>' in html
    assert SEED_RELEASE_ID in html
    assert (
        "No published release contains this record yet."
        in membership_part(Source(stable_id="not-released"))["release_membership"]
    )


def test_the_admin_shows_a_builds_progress_and_refreshes_while_it_runs(release_manager, client):
    release = release_cut(actor=release_manager)
    ReleaseBuild.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.BUILDING, progress=55, stage="write source_table"
    )
    client.force_login(release_manager)
    for url in ("/admin/releases/release/", f"/admin/releases/release/{release.pk}/change/"):
        content = client.get(url).content.decode()
        assert '<meta http-equiv="refresh" content="3">' in content, url
        assert '<progress max="100" value="55">' in content, url
    assert "write source_table" in content and "cut by release-manager-one" in content


def test_the_admin_says_a_build_no_worker_has_claimed_is_waiting_for_a_worker(release_manager, client):
    from releases import build

    client.force_login(release_manager)
    answer = client.post("/admin/releases/release/cut/", follow=True)
    release = Release.objects.get()
    assert release.status == ReleaseStatus.REQUESTED  # no worker runs in this test
    message = answer.content.decode()
    assert "queued for a releases worker to build" in message and "a worker is building it" not in message
    for url in ("/admin/releases/release/", f"/admin/releases/release/{release.pk}/change/"):
        content = client.get(url).content.decode()
        assert "waiting for a worker since" in content and "no worker has taken the build yet" in content, url
        assert "a worker is building it" not in content, url
    assert build.release_build_claim(release_pk=release.pk) is not None  # a worker takes it
    content = client.get(f"/admin/releases/release/{release.pk}/change/").content.decode()
    assert "a worker is building it (attempt 1, last heard from" in content
    assert "waiting for a worker" not in content


def test_the_admin_cancels_a_build_in_progress_for_release_managers_only(release_manager, curator, client):
    release = release_cut(actor=release_manager)
    url = f"/admin/releases/release/{release.pk}/cancel/"
    client.force_login(curator)
    assert b"Cancel this build" not in client.get(f"/admin/releases/release/{release.pk}/change/").content
    assert client.post(url).status_code == 403
    client.force_login(release_manager)
    assert b"Cancel this build" in client.get(f"/admin/releases/release/{release.pk}/change/").content
    assert client.get(url).status_code == 405
    response = client.post(url)
    assert response.status_code == 302 and response["Location"] == f"/admin/releases/release/{release.pk}/change/"
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED and release.build.error == "cancelled by release-manager-one"
    assert b"Cancel this build" not in client.get(response["Location"]).content
