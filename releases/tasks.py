"""Release tasks: thin, take ids, idempotent. Routed to the `releases` queue (CELERY_TASK_ROUTES).

The beat schedule (portal/settings.py) runs the sweeper every minute on the default queue and
the fixity audit weekly. A build is sent with soft and hard time limits (`releases.conf.build_time_limits`):
past the soft one it fails with the reason, past the hard one its process is killed and the sweeper
re-sends or fails it.

Imports point one way: `releases.services` imports this module (to send a build after a cut); this
module imports the worker side (`build`, `lifecycle`, `fixity`), never the services.
"""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from releases import build, conf, fixity, lifecycle
from releases.models import Release


@shared_task(name="releases.tasks.release_build", acks_late=True, reject_on_worker_lost=True)
def release_build(release_pk: int) -> dict:
    """Build and publish one release; a second message for it does nothing."""
    release = build.release_build(release_pk=release_pk)
    if release is None:
        return {"release": release_pk, "status": "missing"}
    return {"release": release_pk, "status": release.status, "release_id": release.release_id}


def release_build_enqueue(release: Release) -> None:
    """Record the message's id on the (locked or new) row; send the build once the transaction commits."""
    task_id = lifecycle.message_stamp(release)
    pk = release.pk
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
    return {"checked": len(checks), "problems": [c.release.release_id for c in checks if not c.intact]}
