"""A published release never changes: not through the model, the admin, the API, SQL or its files."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from rest_framework.test import APIClient

from releases.db_triggers import IMMUTABLE_MESSAGE
from releases.models import FileKind, Release, ReleaseBuild, ReleaseFile, ReleaseRecord, ReleaseStatus
from releases.store import release_directory

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.releases.urls_for_tests")]


def refused(action) -> str:
    with pytest.raises(IntegrityError) as error, transaction.atomic():
        action()
    assert IMMUTABLE_MESSAGE in str(error.value)
    return str(error.value)


def snapshot(release: Release) -> tuple:
    release = Release.objects.get(pk=release.pk)
    files = sorted(ReleaseFile.objects.filter(release=release).values_list("name", "bytes", "sha256", "sha512"))
    records = sorted(
        ReleaseRecord.objects.filter(release=release).values_list("record_type", "stable_id", "content_sha256")
    )
    return (release.release_id, release.status, release.note, release.counts, release.build.progress, files, records)


def test_the_model_cannot_change_or_delete_a_published_release(published_release):
    before = snapshot(published_release)
    published_release.note = "changed afterwards"
    refused(published_release.save)
    refused(lambda: ReleaseBuild.objects.filter(pk=published_release.pk).update(progress=50))
    refused(lambda: ReleaseBuild.objects.filter(pk=published_release.pk).update(status=ReleaseStatus.FAILED))
    refused(Release.objects.get(pk=published_release.pk).delete)
    refused(lambda: Release.objects.filter(pk=published_release.pk).delete())
    assert snapshot(published_release) == before


def test_the_model_cannot_change_delete_or_add_files_or_memberships(published_release):
    before = snapshot(published_release)
    file = published_release.files.first()
    refused(lambda: ReleaseFile.objects.filter(pk=file.pk).update(sha256="0" * 64))
    refused(file.delete)
    refused(
        lambda: ReleaseFile.objects.create(
            release=published_release, name="extra.txt", kind=FileKind.TAG, bytes=1, sha256="0" * 64, sha512="0" * 128
        )
    )
    record = published_release.records.first()
    refused(lambda: ReleaseRecord.objects.filter(pk=record.pk).update(content_sha256="0" * 64))
    refused(lambda: ReleaseRecord.objects.filter(release=published_release).delete())
    refused(
        lambda: ReleaseRecord.objects.create(release=published_release, record_type="protocol", stable_id="smuggled")
    )
    assert snapshot(published_release) == before


def test_the_external_seed_release_cannot_change_but_may_be_deleted_as_a_mistaken_record(seeded, client, make_user):
    external = Release.objects.get(is_external=True)
    assert external.records.exists()
    client.force_login(make_user("superuser"))
    assert client.post(f"/admin/releases/release/{external.pk}/delete/", {"post": "yes"}).status_code == 403
    refused(lambda: Release.objects.filter(pk=external.pk).update(note="x"))
    refused(lambda: external.records.update(content_sha256="0" * 64))
    refused(lambda: ReleaseRecord.objects.create(release=external, record_type="protocol", stable_id="smuggled"))
    external.delete()  # a record of someone else's release, no files here (a flush of the seeded test database does this)
    assert not Release.objects.exists() and not ReleaseRecord.objects.exists()


SQL_WRITES = [
    "UPDATE releases_release SET note = 'x' WHERE id = {release}",
    "UPDATE releases_release SET published_at = NULL WHERE id = {release}",
    "UPDATE releases_releasebuild SET status = 'building' WHERE release_id = {release}",
    "DELETE FROM releases_releasebuild WHERE release_id = {release}",
    "DELETE FROM releases_release WHERE id = {release}",
    "UPDATE releases_releasefile SET sha256 = 'x' WHERE release_id = {release}",
    "DELETE FROM releases_releasefile WHERE release_id = {release}",
    "INSERT INTO releases_releasefile (release_id, name, kind, bytes, sha256, sha512) VALUES ({release}, 'x', 'tag', 1, 'a', 'b')",
    "UPDATE releases_releaserecord SET release_id = {release} WHERE release_id = {release}",
    "DELETE FROM releases_releaserecord WHERE release_id = {release}",
    "INSERT INTO releases_releaserecord (release_id, record_type, stable_id, content_sha256) VALUES ({release}, 'protocol', 'x', '')",
]


def test_sql_cannot_change_or_delete_a_published_release(published_release):
    before = snapshot(published_release)
    for statement in SQL_WRITES:

        def run(statement: str = statement) -> None:
            with connection.cursor() as cursor:
                cursor.execute(statement.format(release=published_release.pk))

        refused(run)
    assert snapshot(published_release) == before


def test_postgresql_cannot_truncate_while_a_release_is_published(published_release):
    if connection.vendor != "postgresql":
        pytest.skip("TRUNCATE is PostgreSQL's (SQLite has only DELETE, which the row triggers guard)")
    for table in ("releases_release", "releases_releasefile", "releases_releaserecord"):

        def run(table: str = table) -> None:
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending foreign key checks: TRUNCATE refuses those
                cursor.execute(f"TRUNCATE {table} CASCADE")

        refused(run)
    assert Release.objects.filter(pk=published_release.pk).exists()


def test_the_trigger_lets_an_unpublished_release_change_and_a_failed_one_go(release_manager):
    from releases.services import release_cut

    release = release_cut(actor=release_manager)
    ReleaseBuild.objects.filter(pk=release.pk).update(progress=40, stage="writing")
    ReleaseBuild.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED, error="test")
    Release.objects.get(pk=release.pk).delete()
    assert not Release.objects.exists()


def test_the_admin_shows_a_published_release_read_only_and_cannot_delete_it(published_release, client, make_user):
    client.force_login(make_user("superuser"))
    before = snapshot(published_release)
    url = f"/admin/releases/release/{published_release.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    content = page.content.decode()
    assert published_release.release_id in content and "data/model_evaluation_matrix.csv.gz" in content
    assert 'name="_save"' not in content and "/delete/" not in content
    assert "published as" in content  # the build log
    assert client.post(url, {"note": "changed"}).status_code == 403
    assert client.post(f"/admin/releases/release/{published_release.pk}/delete/", {"post": "yes"}).status_code == 403
    changelist = client.get("/admin/releases/release/")
    assert b"delete_selected" not in changelist.content
    assert client.post(
        "/admin/releases/release/", {"action": "delete_selected", "_selected_action": [published_release.pk]}
    ).status_code in (200, 302)
    assert snapshot(published_release) == before


def test_the_admin_may_delete_a_failed_release(client, make_user, release_manager):
    from releases.services import release_cut

    release = release_cut(actor=release_manager)
    ReleaseBuild.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED, error="test")
    client.force_login(make_user("superuser"))
    response = client.post(f"/admin/releases/release/{release.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not Release.objects.filter(pk=release.pk).exists()


def test_the_api_refuses_to_change_or_delete_a_release(published_release, make_user):
    before = snapshot(published_release)
    api = APIClient()
    api.force_authenticate(make_user("superuser"))
    for method in ("put", "patch", "delete"):
        for url in (f"/api/v1/releases/{published_release.release_id}/", "/api/v1/releases/"):
            response = getattr(api, method)(url, {"note": "changed"}, format="json")
            assert response.status_code == 405, (method, url)
            assert "never changes" in response.json()["detail"]
    assert api.post(f"/api/v1/releases/{published_release.release_id}/", {}, format="json").status_code == 405
    assert snapshot(published_release) == before


def test_published_files_are_read_only_on_disk(published_release):
    directory = release_directory(published_release.release_id)
    for path in [directory, *directory.rglob("*")]:
        assert path.stat().st_mode & 0o222 == 0, path
