"""Notification tasks: thin, idempotent where it matters, retried with backoff on mail failures."""

from __future__ import annotations

import smtplib

from celery import shared_task
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from common.links import absolute_url
from corrections.models import Correction, CorrectionStatus
from reviews.roles import CURATORS

MAIL_ERRORS = (smtplib.SMTPException, OSError)
DIGEST_KEY = "corrections:digest-pending"


def correction_digest_schedule() -> None:
    """Queue one digest per interval: whoever arrives first in an interval schedules it."""
    interval = settings.CORRECTIONS_DIGEST_INTERVAL_SECONDS
    if interval <= 0:
        correction_digest_send.delay()
    elif cache.add(DIGEST_KEY, 1, timeout=interval):
        correction_digest_send.apply_async(countdown=interval)


@shared_task(autoretry_for=MAIL_ERRORS, retry_backoff=True, retry_backoff_max=600, max_retries=6)
def correction_digest_send() -> int:
    """Mail each curator one list of the suggestions that arrived since the last digest."""
    with transaction.atomic():
        pending = list(
            Correction.objects.select_for_update(skip_locked=True)
            .filter(status=CorrectionStatus.NEW, notified_at__isnull=True)
            .order_by("created_at", "id")
        )
        if not pending:
            return 0
        curators = get_user_model().objects.filter(groups__name=CURATORS.group, is_active=True).exclude(email="")
        lines = [
            f"- #{c.pk} on {c.target_stable_id} ({c.field_label or 'whole record'}): {c.explanation[:200]}"
            for c in pending
        ]
        body = (
            f"{len(pending)} new correction suggestion(s) wait in the moderation queue:\n\n"
            + "\n".join(lines)
            + f"\n\n{absolute_url(reverse('admin:corrections_correction_changelist'))}?status__exact=new\n"
        )
        messages = [
            EmailMessage(
                subject=f"[{settings.PORTAL_SITE_NAME}] {len(pending)} new correction suggestion(s)",
                body=body,
                to=[user.email],
            )
            for user in curators
        ]
        if messages:
            get_connection().send_messages(messages)  # raises on failure: the transaction rolls back, the task retries
        Correction.objects.filter(pk__in=[c.pk for c in pending]).update(notified_at=timezone.now())
    return len(pending)


@shared_task(autoretry_for=MAIL_ERRORS, retry_backoff=True, retry_backoff_max=600, max_retries=6)
def correction_notify_submitters(correction_pk: int) -> int:
    """Mail the decision to the submitter and to those whose identical suggestions were folded into it.

    Each gets their own private status link.
    """
    correction = Correction.objects.filter(pk=correction_pk).first()
    if correction is None or correction.status == CorrectionStatus.NEW:
        return 0
    decided = correction.get_status_display().lower()
    messages = [
        EmailMessage(
            subject=f"[{settings.PORTAL_SITE_NAME}] Your suggestion on {correction.target_stable_id}: {decided}",
            body=(
                f"Your suggestion on {correction.target_label} was {decided}.\n\n"
                f"Response: {correction.response}\n\n{absolute_url(reverse('corrections:correction-status', args=[suggestion.token]))}\n"
            ),
            to=[suggestion.contact_email],
        )
        for suggestion in [correction, *correction.duplicates.order_by("pk")]
        if suggestion.contact_email
    ]
    if messages:
        get_connection().send_messages(messages)
    return len(messages)
