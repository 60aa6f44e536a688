"""Cutting a release: release managers only, through the service, the API, the admin and the command;
the build goes to the releases queue after commit; a cut with nothing changed creates nothing."""

from __future__ import annotations

import threading
from io import StringIO
from unittest import mock

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import CommandError, call_command
from django.db import connections
from rest_framework.test import APIClient

from records.models import Protocol, Result
from records.seed import PROTOCOL_ID
from records.services import record_save
from releases.build import release_build
from releases.models import Release, ReleaseStatus
from releases.services import (
    BuildInProgress,
    NothingChanged,
    ReleaseForbidden,
    release_cut,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.releases.urls_for_tests")]

ROLES = ["anonymous", "curator", "release_manager", "benchmark_operator", "staff", "superuser"]
MAY_CUT = {"release_manager", "superuser"}


def user_for(make_user, role):
    if role == "anonymous":
        return None
    return make_user(role)


@pytest.mark.parametrize("role", ROLES)
def test_it_lets_only_release_managers_and_superusers_cut_through_the_service(make_user, role):
    user = user_for(make_user, role)
    if role in MAY_CUT:
        release = release_cut(actor=user)
        assert release.status == ReleaseStatus.REQUESTED and release.build.cut_by == user
    else:
        for actor in (user, AnonymousUser()):
            with pytest.raises(ReleaseForbidden):
                release_cut(actor=actor)
        assert not Release.objects.exists()


@pytest.mark.parametrize("role", ROLES)
def test_it_lets_only_release_managers_and_superusers_cut_through_the_api(make_user, role):
    client = APIClient()
    user = user_for(make_user, role)
    if user is not None:
        client.force_authenticate(user)
    response = client.post("/api/v1/releases/", {"note": "weekly"}, format="json")
    if role in MAY_CUT:
        assert response.status_code == 202, response.content
        release = Release.objects.get()
        assert response.json()["status"] == "requested" and response.json()["note"] == "weekly"
        assert response["Location"] == response.json()["url"] == f"http://testserver/api/v1/releases/{release.pk}/"
        assert response.json()["page"] == f"http://testserver/releases/{release.pk}/"
    else:
        assert response.status_code in (401, 403)
        detail = response.json()["detail"]
        assert "release managers" in detail if user is not None else "credentials" in detail
        assert not Release.objects.exists()


@pytest.mark.parametrize("role", ROLES)
def test_it_lets_only_release_managers_and_superusers_cut_in_the_admin(client, make_user, role):
    user = user_for(make_user, role)
    if user is not None:
        client.force_login(user)
    response = client.post("/admin/releases/release/cut/")
    if role in MAY_CUT:
        release = Release.objects.get()
        assert response.status_code == 302 and response["Location"] == f"/admin/releases/release/{release.pk}/change/"
        page = client.get("/admin/releases/release/")
        assert b"Cut a new release" in page.content
    else:
        assert not Release.objects.exists()
        assert response.status_code == (302 if role == "anonymous" else 403)  # anonymous: to the login page


@pytest.mark.parametrize("role", ROLES)
def test_it_lets_only_release_managers_and_superusers_cut_with_the_command(make_user, role):
    user = user_for(make_user, role)
    if user is None:
        with pytest.raises(CommandError, match="no user"):
            call_command("cut_release", "--user", "nobody")
        return
    out = StringIO()
    if role in MAY_CUT:
        call_command("cut_release", "--user", user.username, stdout=out)
        release = Release.objects.get()
        assert out.getvalue().startswith(f"release #{release.pk} cut by {user.username}")
    else:
        with pytest.raises(CommandError, match="only release managers"):
            call_command("cut_release", "--user", user.username, stdout=out)
        assert not Release.objects.exists()


def test_the_admin_offers_no_cut_button_to_those_who_may_not_cut(client, make_user):
    client.force_login(make_user("superuser"))
    assert b"Cut a new release" in client.get("/admin/releases/release/").content
    viewer = make_user("staff")
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_release"))
    client.force_login(viewer)
    page = client.get("/admin/releases/release/")
    assert page.status_code == 200 and b"Cut a new release" not in page.content


def test_it_sends_the_build_to_the_releases_queue_only_after_commit(
    release_manager, django_capture_on_commit_callbacks
):
    from portal.celery import app

    with mock.patch("releases.tasks.release_build.apply_async") as send:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            release = release_cut(actor=release_manager)
        assert not send.called
        for callback in callbacks:
            callback()
    release.refresh_from_db()
    send.assert_called_once_with(
        args=[release.pk], task_id=release.build.celery_task_id, soft_time_limit=7200, time_limit=7500
    )
    assert app.amqp.router.route({}, "releases.tasks.release_build")["queue"].name == "releases"
    assert release.build.cut_by == release_manager and release.build.sent_at is not None
    assert "cut by release-manager-one" in release.build.build_log


def test_a_cut_succeeds_when_the_broker_is_down_and_the_sweeper_sends_the_build_later(
    release_manager, django_capture_on_commit_callbacks, caplog
):
    from kombu.exceptions import OperationalError

    api = APIClient()
    api.force_authenticate(release_manager)
    with mock.patch(
        "releases.tasks.release_build.apply_async", side_effect=OperationalError("connection refused")
    ) as send:
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post("/api/v1/releases/", {}, format="json")
    assert send.called and "connection refused" in caplog.text
    assert response.status_code == 202, response.content
    release = Release.objects.get()
    assert (
        response.json()["status"] == "requested"
        and release.status == ReleaseStatus.REQUESTED
        and release.build.sent_at is not None
    )


def test_every_status_change_of_a_release_writes_one_audit_row(published_release, release_manager, client):
    events = list(published_release.events.values_list("from_status", "to_status", "attempt", "actor__username"))
    assert events == [
        ("", "requested", 0, "release-manager-one"),
        ("requested", "building", 1, None),
        ("building", "published", 1, None),
    ]
    assert published_release.events.last().reason == f"published as {published_release.release_id}"
    client.force_login(release_manager)
    page = client.get(f"/admin/releases/release/{published_release.pk}/change/").content.decode()
    assert "status changes (the audit log)" in page.lower() and f"published as {published_release.release_id}" in page


def test_cutting_again_with_nothing_changed_says_so_and_creates_nothing(published_release, release_manager, client):
    with pytest.raises(NothingChanged) as refused:
        release_cut(actor=release_manager)
    assert refused.value.release == published_release
    assert str(refused.value) == f"nothing changed since release {published_release.release_id}: no release was created"

    api = APIClient()
    api.force_authenticate(release_manager)
    response = api.post("/api/v1/releases/", {}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "nothing_changed"
    assert response.json()["release"]["release_id"] == published_release.release_id

    out = StringIO()
    call_command("cut_release", "--user", release_manager.username, stdout=out)
    assert out.getvalue() == f"nothing changed since release {published_release.release_id}: no release was created.\n"

    client.force_login(release_manager)
    page = client.post("/admin/releases/release/cut/", follow=True)
    assert b"Nothing was cut: nothing changed since release" in page.content
    assert Release.objects.filter(is_external=False).count() == 1


def test_an_edit_after_the_last_release_allows_a_new_cut(published_release, release_manager, curator):
    result = Result.objects.first()
    result.printed_value = "20 minutes"
    record_save(record=result, actor=curator, changed_fields=["printed_value"])
    release = release_cut(actor=release_manager)
    assert release.status == ReleaseStatus.REQUESTED


def test_a_cut_while_another_release_is_being_built_is_refused(release_manager):
    first = release_cut(actor=release_manager)
    with pytest.raises(BuildInProgress) as refused:
        release_cut(actor=release_manager)
    assert refused.value.release == first
    api = APIClient()
    api.force_authenticate(release_manager)
    response = api.post("/api/v1/releases/", {}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "build_in_progress"
    assert Release.objects.count() == 1


def test_a_build_that_finds_the_content_unchanged_publishes_nothing(published_release, release_manager, curator):
    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    protocol.explanatory_profile = "Edited, but the explanatory profile is not part of a release."
    record_save(record=protocol, actor=curator, changed_fields=["explanatory_profile"])
    release = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert release.status == ReleaseStatus.FAILED
    assert release.build.error == (
        f"nothing changed since release {published_release.release_id}: the exported content is identical; nothing was published"
    )
    assert not release.files.exists() and not release.records.exists()


@pytest.mark.django_db(transaction=True)
def test_two_cuts_at_the_same_moment_create_one_release(make_user, monkeypatch):
    monkeypatch.setattr("releases.tasks.release_build.apply_async", lambda *args, **kwargs: None)
    managers = [make_user("release_manager"), make_user("release_manager")]
    barrier = threading.Barrier(len(managers))
    outcomes: list[str] = []

    def cut(actor):
        try:
            barrier.wait()
            release_cut(actor=actor)
            outcomes.append("cut")
        except BuildInProgress:
            outcomes.append("in progress")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=cut, args=(manager,)) for manager in managers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["cut", "in progress"]
    assert Release.objects.count() == 1


def test_it_refuses_a_note_that_is_not_a_string_and_cuts_nothing(make_user):
    client = APIClient()
    client.force_authenticate(make_user("release_manager", "note-checker"))
    response = client.post("/api/v1/releases/", {"note": 2026}, format="json")
    assert response.status_code == 400 and "note" in response.json(), response.content
    assert not Release.objects.exists()
