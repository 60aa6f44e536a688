"""The releases app's settings, each with its default (portal/settings.py sets them from the environment).

| setting | default | meaning |
|---|---|---|
| RELEASES_DIR | var/releases | where published releases lie (`<release id>/`), and builds are staged |
| RELEASE_MAX_ATTEMPTS | 3 | claims of one build (worker lost each time) before it is marked failed |
| RELEASE_STALE_AFTER_SECONDS | 300 | a build without heartbeat for this long is presumed lost |
| RELEASE_GIVE_UP_AFTER_SECONDS | 3600 | a build no worker has shown life for this long (requested and never claimed since its cut, or no heartbeat) is marked failed by the sweeper instead of sent again: bounds the re-sends to about this / RELEASE_STALE_AFTER_SECONDS |
| RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS | 7200 | one build attempt past this fails with the reason (Celery soft time limit) |
| RELEASE_BUILD_TIME_LIMIT_SECONDS | 7500 | one build attempt past this is killed (Celery hard time limit); the sweeper then re-sends or fails it |
| RELEASE_BUILD_CHUNK_ROWS | 10000 | rows per database fetch and per in-memory sort run of the writer |
| RELEASE_BUILD_CHUNK_DELAY | 0 | seconds to pause after each chunk; only tests set it (to kill a worker mid-build) |
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

def releases_dir() -> Path:
    return Path(settings.RELEASES_DIR)


def max_attempts() -> int:
    return int(getattr(settings, "RELEASE_MAX_ATTEMPTS", 3))


def stale_after_seconds() -> float:
    return float(getattr(settings, "RELEASE_STALE_AFTER_SECONDS", 300))


def give_up_after_seconds() -> float:
    return float(getattr(settings, "RELEASE_GIVE_UP_AFTER_SECONDS", 3600))


def build_time_limits() -> tuple[int, int]:
    """(soft, hard) seconds one build attempt may run."""
    soft = int(getattr(settings, "RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS", 7200))
    hard = int(getattr(settings, "RELEASE_BUILD_TIME_LIMIT_SECONDS", 7500))
    return soft, max(hard, soft + 1)


def chunk_rows() -> int:
    return int(getattr(settings, "RELEASE_BUILD_CHUNK_ROWS", 10_000))


def chunk_delay() -> float:
    return float(getattr(settings, "RELEASE_BUILD_CHUNK_DELAY", 0))


def site_name() -> str:
    return getattr(settings, "PORTAL_SITE_NAME", "Rewire")
