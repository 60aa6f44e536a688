"""A damaged release file is never served: every download checks the file against
its recorded sha256 (once per file identity), a damaged one answers 503, is recorded as a failed
fixity check that marks the release damaged on its page and in the API, and the release managers
are mailed."""

from __future__ import annotations

import os
import stat

import pytest
from django.core import mail
from rest_framework.test import APIClient

from releases import fixity
from releases.models import ReleaseFixityCheck
from releases.store import release_file_path

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.releases.urls_for_tests")]

MATRIX = "data/model_evaluation_matrix.csv.gz"
SOURCES = "data/source_table.csv.gz"


@pytest.fixture
def eager_tasks():
    from portal.celery import app as celery_app

    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def manager_with_mail(release_manager):
    release_manager.email = "release-manager@example.org"
    release_manager.save()
    return release_manager


def url(release, name: str = MATRIX) -> str:
    return f"/releases/{release.release_id}/files/{name}"


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def flip_a_byte(path, *, at: int = 100, keep_mtime: bool = False) -> bytes:
    """Flip one byte of a published (read-only) file in place, as a disk error or a careless operator
    would; with `keep_mtime`, put its modification time back as a cover-up would. Returns the original."""
    original = path.read_bytes()
    before = path.stat()
    os.chmod(path, before.st_mode | stat.S_IWUSR)
    with path.open("r+b") as handle:
        handle.seek(at)
        handle.write(bytes([original[at] ^ 0x01]))
    os.chmod(path, before.st_mode)
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    return original


def restore(path, original: bytes) -> None:
    mode = path.stat().st_mode
    os.chmod(path, mode | stat.S_IWUSR)
    path.write_bytes(original)
    os.chmod(path, mode)


def test_it_serves_an_intact_file_and_withholds_it_once_a_byte_is_flipped(
    published_release, client, admin_client, manager_with_mail, eager_tasks, django_capture_on_commit_callbacks
):
    release = published_release
    path = release_file_path(release, MATRIX)
    good = client.get(url(release))
    assert good.status_code == 200 and body(good) == path.read_bytes()

    original = flip_a_byte(path, keep_mtime=True)
    with django_capture_on_commit_callbacks(execute=True):
        damaged = client.get(url(release))
    assert damaged.status_code == 503
    assert damaged["Retry-After"] == "3600" and damaged["Cache-Control"] == "no-store"
    assert b"is damaged" in damaged.content and original not in damaged.content
    # Nor a part of it, nor for an API client.
    assert client.get(url(release), HTTP_RANGE="bytes=0-99").status_code == 503
    api_answer = client.get(url(release), HTTP_ACCEPT="application/json")
    assert api_answer.status_code == 503
    assert api_answer.json()["code"] == "file_damaged" and api_answer.json()["file"] == MATRIX

    [check] = ReleaseFixityCheck.objects.filter(release=release)
    assert not check.intact and check.files_checked == 1
    assert (
        check.problems.startswith(f"{MATRIX}: sha256 is ") and release.files.get(name=MATRIX).sha256 in check.problems
    )
    assert [message.to for message in mail.outbox] == [["release-manager@example.org"]]
    assert f"release {release.release_id} is damaged" in mail.outbox[0].subject
    assert MATRIX in mail.outbox[0].body and "verify_release" in mail.outbox[0].body

    page = client.get(f"/releases/{release.release_id}/").content.decode()
    assert "This release is damaged" in page and "damaged: withheld until repaired" in page
    detail = APIClient().get(f"/api/v1/releases/{release.release_id}/").json()
    assert (detail["damaged"], detail["damaged_files"]) == (True, [MATRIX])
    listed = APIClient().get("/api/v1/releases/").json()["results"]
    assert [(r["release_id"], r["damaged"]) for r in listed if r["release_id"] == release.release_id] == [
        (release.release_id, True)
    ]
    admin_list = admin_client.get("/admin/releases/release/").content.decode()
    assert f"DAMAGED: {MATRIX}" in admin_list
    # The other files still match their checksums and are served.
    assert client.get(url(release, SOURCES)).status_code == 200

    # The repair: the original bytes back (a new identity: hashed again), then an intact check.
    restore(path, original)
    repaired = client.get(url(release))
    assert repaired.status_code == 200 and body(repaired) == original
    os.chmod(path, path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    assert fixity.release_fixity_check(release=release).intact
    assert "This release is damaged" not in client.get(f"/releases/{release.release_id}/").content.decode()
    assert APIClient().get(f"/api/v1/releases/{release.release_id}/").json()["damaged"] is False


def test_it_records_and_reports_a_damaged_file_once(
    published_release, client, manager_with_mail, eager_tasks, django_capture_on_commit_callbacks
):
    flip_a_byte(release_file_path(published_release, MATRIX))
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):
            assert client.get(url(published_release)).status_code == 503
        from django.core.cache import cache

        cache.clear()  # a lost cache (a restarted Redis) hashes the file again, but records nothing twice
        assert client.get(url(published_release)).status_code == 503
    assert ReleaseFixityCheck.objects.filter(release=published_release).count() == 1
    assert len(mail.outbox) == 1


def test_it_hashes_a_file_once_per_identity(published_release, client, monkeypatch):
    hashed = []
    real = fixity.file_sha256

    def counting(handle):
        hashed.append(handle.name)
        return real(handle)

    monkeypatch.setattr(fixity, "file_sha256", counting)
    path = release_file_path(published_release, MATRIX)
    for _ in range(3):
        assert client.get(url(published_release)).status_code == 200
    assert client.get(url(published_release), HTTP_RANGE="bytes=10-20").status_code == 206
    assert len(hashed) == 1
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))  # same times, a new ctime
    assert client.get(url(published_release)).status_code == 200
    assert len(hashed) == 2


def test_the_weekly_audit_tells_the_release_managers(published_release, manager_with_mail, eager_tasks):
    from releases.tasks import release_fixity_audit

    flip_a_byte(release_file_path(published_release, SOURCES))
    outcome = release_fixity_audit()
    assert outcome["problems"] == [published_release.release_id]
    assert [message.to for message in mail.outbox] == [["release-manager@example.org"]]
    assert SOURCES in mail.outbox[0].body
