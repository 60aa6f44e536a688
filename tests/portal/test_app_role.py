"""Every write path of the portal as the documented application role (deploy/postgres-roles.sh and
`manage.py db_grants`: SELECT and INSERT only on the audit tables, no TEMPORARY, no superuser), on
PostgreSQL, through the interface its user uses: the public correction form, the admin's moderation,
the model curation services, the import API and a release cut built by the worker's service."""

from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from corrections.models import Correction, CorrectionStatus
from portal.tokens import api_token_create
from records.identity import model_change_undo, model_merge, model_split
from records.models import Evaluation, GenomicModel, ModelChange, Result
from records.seed import seed_document
from releases.build import release_build
from releases.models import ReleaseStatus
from releases.services import release_cut
from reviews.models import ReviewState
from reviews.services import review_transition_apply
from tests.corrections.test_corrections import RESULT_500M, form_data
from tests.factories import ConfigurationFactory, GenomicModelFactory, ModelAliasFactory

pytestmark = pytest.mark.django_db


def current_user() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        return cursor.fetchone()[0]


def test_the_tests_run_as_a_role_that_cannot_rewrite_an_audit_row(seeded, as_app_role):
    assert current_user() == as_app_role
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT has_table_privilege(%s, 'records_historicalresult', 'UPDATE'),"
            " has_table_privilege(%s, 'records_historicalresult', 'INSERT')",
            [as_app_role, as_app_role],
        )
        assert cursor.fetchone() == (False, True)


def test_a_reader_suggests_a_correction_and_a_curator_applies_it_as_the_app_role(client, seeded, curator, as_app_role):
    response = client.post("/corrections/new/", form_data(proposed_value="20", explanation="Confirmed: 20 min."))
    assert response.status_code == 302, response.content.decode()[:2000]
    # The same text again within a day is folded into the first.
    client.post("/corrections/new/", form_data(proposed_value="20", explanation="Confirmed: 20 min."))
    first, folded = Correction.objects.order_by("pk")
    assert (first.status, folded.status, folded.duplicate_of_id) == (
        CorrectionStatus.NEW,
        CorrectionStatus.DUPLICATE,
        first.pk,
    )
    client.force_login(curator)
    response = client.post(
        reverse("admin:corrections_correction_decide", args=[first.pk]),
        {
            "decision": "accept",
            "response": "Checked against the Methods.",
            "apply_value": "1",
            "printed_value": "20 min",
        },
    )
    assert response.status_code == 302
    messages = [str(m) for m in response.wsgi_request._messages]
    assert any("accepted" in m for m in messages), messages
    first.refresh_from_db()
    assert (first.status, first.value_applied) == (CorrectionStatus.ACCEPTED, True)
    assert Result.objects.get(stable_id=RESULT_500M).history.first().history_change_reason.find(f"#{first.pk}") >= 0


def test_a_curator_checks_and_excludes_records_as_the_app_role(seeded, curator, other_curator, as_app_role):
    evaluation = Evaluation.objects.order_by("pk").first()
    review_transition_apply(record=evaluation, transition="reinstate", actor=curator, reason="Read again: it holds.")
    evaluation.refresh_from_db()
    assert evaluation.review_state == ReviewState.SOURCE_CHECKED


def test_a_curator_merges_splits_and_undoes_as_the_app_role(curator, as_app_role):
    kept, duplicate = GenomicModelFactory(stable_id="kept"), GenomicModelFactory(stable_id="duplicate")
    ConfigurationFactory(stable_id="duplicate-config", model=duplicate)
    ModelAliasFactory(stable_id="duplicate-alias", model=duplicate, alias="Duplicate v1")
    merge = model_merge(model=duplicate, into=kept, reason="Same checkpoint.", actor=curator)
    model_change_undo(change=merge, reason="Two checkpoints after all.", actor=curator)
    configuration = ConfigurationFactory(stable_id="kept-config-2", model=kept)
    model_split(
        model=kept,
        configurations=[configuration],
        stable_id="split-off",
        name="Split off",
        reason="Another size.",
        actor=curator,
    )
    assert ModelChange.objects.count() == 3
    assert GenomicModel.objects.get(stable_id="split-off").configurations.get() == configuration


def test_a_curator_imports_a_document_through_the_api_as_the_app_role(make_user, as_app_role):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('curator'))}")
    response = client.post("/api/v1/imports/", seed_document(), format="json")
    assert response.status_code == 201, response.content
    assert Evaluation.objects.count() == 2


def test_a_release_manager_cuts_and_the_worker_builds_a_release_as_the_app_role(seeded, make_user, as_app_role):
    release_manager = make_user("release_manager")
    release = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert release.status == ReleaseStatus.PUBLISHED, release.build.error
