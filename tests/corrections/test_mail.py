"""Mail about correction suggestions: to curators after commit, batched into one digest per
interval, retried on failure without ever losing the suggestion."""

from __future__ import annotations

from unittest import mock

import pytest
from django.core import mail

from corrections.models import Correction
from corrections.services import correction_decide, correction_submit
from portal.celery import app as celery_app
from records.models import Protocol

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager_tasks():
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


def test_it_mails_curators_only_after_commit(
    seeded, curator, settings, eager_tasks, django_capture_on_commit_callbacks
):
    settings.CORRECTIONS_DIGEST_INTERVAL_SECONDS = 0
    curator.email = "curator@example.org"
    curator.save()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        correction_submit(
            target=Protocol.objects.get(),
            field_name="",
            proposed_value="",
            explanation="Please check the title.",
            supporting_source="",
            supporting_locator="",
            contact_email="",
            ip="192.0.2.1",
        )
        assert mail.outbox == []
    assert len(callbacks) == 1 and mail.outbox == []
    callbacks[0]()
    assert [message.to for message in mail.outbox] == [["curator@example.org"]]
    assert "1 new correction suggestion" in mail.outbox[0].subject


def test_it_batches_curator_mail_to_one_digest_per_interval(
    seeded, curator, settings, eager_tasks, django_capture_on_commit_callbacks
):
    from corrections.tasks import correction_digest_send

    settings.CORRECTIONS_DIGEST_INTERVAL_SECONDS = 900
    curator.email = "curator@example.org"
    curator.save()
    with mock.patch.object(correction_digest_send, "apply_async") as scheduled:
        for i in range(3):
            with django_capture_on_commit_callbacks(execute=True):
                correction_submit(
                    target=Protocol.objects.get(),
                    field_name="",
                    proposed_value="",
                    explanation=f"Issue {i}.",
                    supporting_source="",
                    supporting_locator="",
                    contact_email="",
                    ip="192.0.2.1",
                )
    assert scheduled.call_count == 1 and scheduled.call_args.kwargs == {"countdown": 900}
    assert correction_digest_send() == 3
    assert len(mail.outbox) == 1 and "3 new correction suggestion(s)" in mail.outbox[0].subject
    assert correction_digest_send() == 0


def test_it_retries_a_failed_mail_and_never_loses_the_suggestion(
    seeded, curator, settings, eager_tasks, django_capture_on_commit_callbacks
):
    from tests.reviews.flaky_mail import FailingOnceBackend

    settings.EMAIL_BACKEND = "tests.reviews.flaky_mail.FailingOnceBackend"
    FailingOnceBackend.failures_left = 1
    correction = correction_submit(
        target=Protocol.objects.get(),
        field_name="",
        proposed_value="",
        explanation="x",
        supporting_source="",
        supporting_locator="",
        contact_email="reader@example.org",
        ip="192.0.2.1",
    )
    with django_capture_on_commit_callbacks(execute=True):
        correction_decide(correction=correction, actor=curator, decision="reject", response="No change needed.")
    assert FailingOnceBackend.failures_left == 0
    assert [message.to for message in mail.outbox] == [["reader@example.org"]]
    assert "No change needed." in mail.outbox[0].body

    settings.EMAIL_BACKEND = "tests.reviews.flaky_mail.AlwaysFailingBackend"
    second = correction_submit(
        target=Protocol.objects.get(),
        field_name="",
        proposed_value="",
        explanation="y",
        supporting_source="",
        supporting_locator="",
        contact_email="other@example.org",
        ip="192.0.2.2",
    )
    with django_capture_on_commit_callbacks(execute=True):
        correction_decide(correction=second, actor=curator, decision="reject", response="Still no.")
    second.refresh_from_db()
    assert second.status == "rejected" and Correction.objects.count() == 2
