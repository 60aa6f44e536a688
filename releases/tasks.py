"""Release tasks: thin, take ids, idempotent. Routed to the `releases` queue (CELERY_TASK_ROUTES).

The beat schedule (portal/settings.py) runs the sweeper every minute on the default queue and
the fixity audit weekly. A build is sent with soft and hard time limits (`releases.conf.build_time_limits`):
past the soft one it fails with the reason, past the hard one its process is killed and the sweeper
re-sends or fails it.

Imports point one way: `releases.services` imports this module (to send a build after a cut); this
module imports the worker side (`build`, `lifecycle`, `fixity`), never the services.
"""

from __future__ import annotations

import smtplib

from celery import shared_task
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.urls import reverse

from common.links import absolute_url
from releases import build, conf, fixity, lifecycle
from releases.models import ReleaseBuild, ReleaseFixityCheck
from reviews.roles import RELEASE_MANAGERS

MAIL_ERRORS = (smtplib.SMTPException, OSError)


@shared_task(name="releases.tasks.release_build", acks_late=True, reject_on_worker_lost=True)
def release_build(release_pk: int) -> dict:
    """Build and publish one release; a second message for it does nothing."""
    release = build.release_build(release_pk=release_pk)
    if release is None:
        return {"release": release_pk, "status": "missing"}
    return {"release": release_pk, "status": release.status, "release_id": release.release_id}


def release_build_enqueue(build: ReleaseBuild) -> None:
    """Record the message's id on the (locked or new) build; send it once the transaction commits."""
    task_id = lifecycle.message_stamp(build.pk)
    pk = build.pk
    soft, hard = conf.build_time_limits()

    def send() -> None:
        release_build.apply_async(args=[pk], task_id=task_id, soft_time_limit=soft, time_limit=hard)

    # Robust: the row is committed either way, and a message lost to a broker outage is sent again
    # by the sweeper; the cut must not answer 500 for it.
    transaction.on_commit(send, robust=True)


@shared_task(name="releases.tasks.release_builds_sweep")
def release_builds_sweep() -> dict:
    """Re-send lost builds, fail those out of attempts."""
    report = lifecycle.builds_sweep(send=release_build_enqueue)
    return {"resent": report.resent, "failed": report.failed}


@shared_task(name="releases.tasks.release_fixity_audit")
def release_fixity_audit() -> dict:
    """Re-hash every file of every published release this portal holds; record and log differences."""
    checks = fixity.release_fixity_audit()
    for check in checks:
        if not check.intact:
            release_damage_notify.delay(check.pk)
    return {"checked": len(checks), "problems": [c.release.release_id for c in checks if not c.intact]}


def release_damage_notify_after_commit(check: ReleaseFixityCheck) -> None:
    """Mail the release managers about a failed check once the transaction that wrote it commits."""
    pk = check.pk
    transaction.on_commit(lambda: release_damage_notify.delay(pk), robust=True)


@shared_task(autoretry_for=MAIL_ERRORS, retry_backoff=True, retry_backoff_max=600, max_retries=6)
def release_damage_notify(check_pk: int) -> int:
    """Mail every active release manager with an address: which release, which files, what to do."""
    check = ReleaseFixityCheck.objects.select_related("release").filter(pk=check_pk, intact=False).first()
    if check is None:
        return 0
    release = check.release
    managers = get_user_model().objects.filter(groups__name=RELEASE_MANAGERS.group, is_active=True).exclude(email="")
    page = absolute_url(reverse("releases:detail", args=[release.release_id]))
    body = (
        f"Release {release.release_id} failed a fixity check at {check.checked_at:%Y-%m-%d %H:%M} UTC:\n\n"
        + "\n".join(f"- {line}" for line in check.problems.splitlines())
        + f"\n\nThe damaged files are not served; the release page shows the release as damaged:\n{page}\n\n"
        f"Rebuild them from the database with `manage.py rebuild_release {release.release_id}` (it reinstates"
        " them only when every byte is as recorded: the catalogue must not have changed since), or restore"
        " them from a copy of the bag (their checksums are in the release's file table and manifests)"
        f" and run `manage.py verify_release {release.release_id}`: an intact check lifts the mark.\n"
    )
    messages = [
        EmailMessage(
            subject=f"[{settings.PORTAL_SITE_NAME}] release {release.release_id} is damaged", body=body, to=[user.email]
        )
        for user in managers
    ]
    if messages:
        get_connection().send_messages(messages)
    return len(messages)
