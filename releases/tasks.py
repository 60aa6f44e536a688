"""Release tasks: thin, take ids, idempotent. Routed to the `releases` queue (CELERY_TASK_ROUTES).

The beat schedule (portal/settings.py) runs the sweeper every minute on the default queue and
the fixity audit weekly. A build is sent with soft and hard time limits (`releases.conf.build_time_limits`):
past the soft one it fails with the reason, past the hard one its process is killed and the sweeper
re-sends or fails it.
"""

from __future__ import annotations

from celery import shared_task

from releases import services


@shared_task(name="releases.tasks.release_build", acks_late=True, reject_on_worker_lost=True)
def release_build(release_pk: int) -> dict:
    """Build and publish one release; a second message for it does nothing."""
    release = services.release_build(release_pk=release_pk)
    if release is None:
        return {"release": release_pk, "status": "missing"}
    return {"release": release_pk, "status": release.status, "release_id": release.release_id}


@shared_task(name="releases.tasks.release_builds_sweep")
def release_builds_sweep() -> dict:
    """Re-send lost builds, fail those out of attempts."""
    report = services.release_builds_sweep()
    return {"resent": report.resent, "failed": report.failed}


@shared_task(name="releases.tasks.release_fixity_audit")
def release_fixity_audit() -> dict:
    """Re-hash every file of every published release this portal holds; record and log differences."""
    checks = services.release_fixity_audit()
    return {"checked": len(checks), "problems": [c.release.release_id for c in checks if not c.intact]}
