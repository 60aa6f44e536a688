"""The releases app's settings, each with its default (portal/settings.py sets them from the environment).

| setting | default | meaning |
|---|---|---|
| RELEASES_DIR | var/releases | where published releases lie (`<release id>/`), and builds are staged |
| RELEASE_MAX_ATTEMPTS | 3 | claims of one build (its worker, or its database connection, lost each time) before it is marked failed |
| RELEASE_STALE_AFTER_SECONDS | 300 | a build without heartbeat for this long is presumed lost |
| RELEASE_GIVE_UP_AFTER_SECONDS | 3600 | a build no worker has shown life for this long (requested and never claimed since its cut, or no heartbeat) is marked failed by the sweeper instead of sent again: bounds the re-sends to about this / RELEASE_STALE_AFTER_SECONDS |
| RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS | 7200 | one build attempt past this fails with the reason (Celery soft time limit) |
| RELEASE_BUILD_TIME_LIMIT_SECONDS | 7500 | one build attempt past this is killed (Celery hard time limit); the sweeper then re-sends or fails it |
| RELEASE_BUILD_CHUNK_ROWS | 10000 | rows per database fetch and per in-memory sort run of the writer |
| RELEASE_BUILD_CHUNK_DELAY | 0 | seconds to pause after each chunk; only tests set it (to kill a worker mid-build) |

Durations are read the way every kind of long work reads them (`common.lifecycle.duration_setting`,
as benchmarks/conf.py does): seconds in the setting, a `timedelta` here.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.conf import settings

from common.lifecycle import duration_setting


def releases_dir() -> Path:
    return Path(settings.RELEASES_DIR)


def max_attempts() -> int:
    return int(getattr(settings, "RELEASE_MAX_ATTEMPTS", 3))


def stale_after() -> timedelta:
    """A build whose heartbeat (else start) is older than this has lost its worker."""
    return duration_setting("RELEASE_STALE_AFTER_SECONDS", 300)


def give_up_after() -> timedelta:
    """A build no worker has shown life for this long is failed by the sweeper instead of sent again."""
    return duration_setting("RELEASE_GIVE_UP_AFTER_SECONDS", 3600)


def build_time_limits() -> tuple[int, int]:
    """(soft, hard) whole seconds one build attempt may run (what Celery's time limits take)."""
    soft = int(duration_setting("RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS", 7200).total_seconds())
    hard = int(duration_setting("RELEASE_BUILD_TIME_LIMIT_SECONDS", 7500).total_seconds())
    return soft, max(hard, soft + 1)


def chunk_rows() -> int:
    return int(getattr(settings, "RELEASE_BUILD_CHUNK_ROWS", 10_000))


def chunk_delay() -> float:
    """Seconds to pause after each chunk (`time.sleep` takes seconds)."""
    return duration_setting("RELEASE_BUILD_CHUNK_DELAY", 0).total_seconds()


def site_name() -> str:
    return getattr(settings, "PORTAL_SITE_NAME", "Rewire")
