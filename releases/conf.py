"""The releases app's settings, each with its default (portal/settings.py sets them from the environment).

| setting | default | meaning |
|---|---|---|
| RELEASES_DIR | var/releases | where published releases lie (`<release id>/`), and builds are staged |
| RELEASE_MAX_ATTEMPTS | 3 | claims of one build (worker lost each time) before it is marked failed |
| RELEASE_STALE_AFTER_SECONDS | 300 | a build without heartbeat for this long is presumed lost |
| RELEASE_BUILD_CHUNK_ROWS | 10000 | rows per database fetch and per in-memory sort run of the writer |
| RELEASE_BUILD_CHUNK_DELAY | 0 | seconds to pause after each chunk; only tests set it (to kill a worker mid-build) |
| RECIPE_LOOKUP | (none: no recipe is reviewed) | dotted path of a callable: protocol stable ids -> the set of those with a reviewed recipe (the benchmarks app's) |
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


def chunk_rows() -> int:
    return int(getattr(settings, "RELEASE_BUILD_CHUNK_ROWS", 10_000))


def chunk_delay() -> float:
    return float(getattr(settings, "RELEASE_BUILD_CHUNK_DELAY", 0))


def recipe_lookup_path() -> str:
    return getattr(settings, "RECIPE_LOOKUP", "")


def site_name() -> str:
    return getattr(settings, "PORTAL_SITE_NAME", "Rewire")
