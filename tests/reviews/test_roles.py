"""Least privilege: who may transition, edit and delete, role by role."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from records.models import Configuration, Evaluation
from reviews.models import ReviewEvent, ReviewState
from reviews.services import TransitionForbidden, review_transition_apply
from tests.factories import EvaluationFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "curator", "release_manager", "benchmark_operator", "superuser"]
MAY_REVIEW_AND_EDIT = {"curator", "superuser"}
MAY_DELETE = {"superuser"}
PATHS = {
    "check_source": (),
    "exclude": ("check_source",),
    "reinstate": ("check_source", "exclude"),
    "reopen": ("check_source",),
    "reopen_excluded": ("check_source", "exclude"),
    "recheck": ("check_source", "exclude", "reopen_excluded"),
}


def client_for(make_user, role: str) -> tuple[Client, object]:
    client = Client()
    if role == "anonymous":
        return client, None
    user = make_user(role)
    client.force_login(user)
    return client, user


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("transition", list(PATHS))
def test_it_lets_only_curators_and_superusers_transition(make_user, role, transition):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, *PATHS[transition])
    client, user = client_for(make_user, role)
    state = Evaluation.objects.get(pk=evaluation.pk).review_state
    url = reverse("admin:records_evaluation_transition", args=[evaluation.pk])
    response = client.post(url, {"transition": transition, "reason": "a reason", "expected_state": state})
    evaluation.refresh_from_db()
    if role in MAY_REVIEW_AND_EDIT:
        assert response.status_code == 302
        assert evaluation.review_state != state
    else:
        assert evaluation.review_state == state
        assert response.status_code in (302, 403)
        if user is not None:
            with pytest.raises(TransitionForbidden):
                review_transition_apply(record=evaluation, transition=transition, actor=user, reason="a reason")


@pytest.mark.parametrize("role", ROLES)
def test_it_lets_only_curators_and_superusers_edit(make_user, role):
    configuration = Configuration.objects.create(stable_id="config-a", name="Model A")
    client, _ = client_for(make_user, role)
    response = client.post(reverse("admin:records_configuration_change", args=[configuration.pk]), {"name": "Model B"})
    configuration.refresh_from_db()
    if role in MAY_REVIEW_AND_EDIT:
        assert response.status_code == 302 and configuration.name == "Model B"
    else:
        assert configuration.name == "Model A"
        assert response.status_code == (302 if role == "anonymous" else 403)


@pytest.mark.parametrize("role", ROLES)
def test_it_lets_only_superusers_delete_catalogue_records(make_user, role):
    configuration = Configuration.objects.create(stable_id="config-a", name="Model A")
    client, _ = client_for(make_user, role)
    response = client.post(reverse("admin:records_configuration_delete", args=[configuration.pk]), {"post": "yes"})
    assert Configuration.objects.filter(pk=configuration.pk).exists() == (role not in MAY_DELETE)
    if role not in MAY_DELETE:
        assert response.status_code == (302 if role == "anonymous" else 403)


@pytest.mark.parametrize("role", ROLES)
def test_it_never_offers_deleting_review_events_or_history(make_user, role):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    event = ReviewEvent.objects.get()
    client, _ = client_for(make_user, role)
    response = client.post(reverse("admin:reviews_reviewevent_delete", args=[event.pk]), {"post": "yes"})
    assert response.status_code in (302, 403)
    assert ReviewEvent.objects.filter(pk=event.pk).exists()
    history_id = evaluation.history.first().history_id
    response = client.post(
        reverse("admin:records_evaluation_simple_history", args=[evaluation.pk, history_id]), {"title": "x"}
    )
    assert response.status_code in (302, 403)
    assert evaluation.history.filter(history_id=history_id).exists()
    assert Evaluation.objects.get(pk=evaluation.pk).review_state == ReviewState.SOURCE_CHECKED


def _granted() -> dict[str, set[str]]:
    from django.contrib.auth.models import Group

    return {
        group.name: {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}
        for group in Group.objects.prefetch_related("permissions__content_type")
    }


def test_ensure_roles_gives_each_group_exactly_its_permissions_in_a_few_statements(
    django_assert_max_num_queries,
):
    from django.contrib.auth.models import Group, Permission
    from django.core.management import call_command

    from reviews.roles import ROLES as GROUPS

    call_command("ensure_roles", stdout=open("/dev/null", "w"))
    wanted = {role.group: set(role.permissions) for role in GROUPS}
    assert _granted() == wanted
    curators = Group.objects.get(name="Curators")
    curators.permissions.add(Permission.objects.get(content_type__app_label="records", codename="delete_evaluation"))
    curators.permissions.remove(Permission.objects.get(content_type__app_label="reviews", codename="check_source"))
    with django_assert_max_num_queries(20):  # one read of every permission named, a few a group
        call_command("ensure_roles", stdout=open("/dev/null", "w"))
    assert _granted() == wanted


def test_ensure_roles_refuses_a_role_naming_an_unknown_permission_and_changes_nothing(monkeypatch):
    from django.core.management import CommandError, call_command

    from reviews import services
    from reviews.roles import CURATORS, Role

    call_command("ensure_roles", stdout=open("/dev/null", "w"))
    before = _granted()
    flying = Role(group="Flyers", label="flyer", permissions=("records.view_source", "records.fly_source"))
    monkeypatch.setattr(services, "ROLES", (CURATORS, flying))
    with pytest.raises(CommandError, match="fly_source"):
        call_command("ensure_roles", stdout=open("/dev/null", "w"))
    assert _granted() == before
