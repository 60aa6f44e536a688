"""System checks: the broker must not hand a running job to a second worker."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

from benchmarks.presets import LONGEST_HARD_LIMIT


@register()
def visibility_timeout_outlasts_jobs(app_configs=None, **kwargs) -> list[Error]:
    """With Redis, an unacknowledged message comes back after the visibility timeout: it must be
    longer than the longest job may run, or a second worker would start a job still running."""
    broker = str(getattr(settings, "CELERY_BROKER_URL", ""))
    if not broker.startswith(("redis://", "rediss://")):
        return []
    timeout = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}).get("visibility_timeout", 3600)
    if timeout > LONGEST_HARD_LIMIT:
        return []
    return [
        Error(
            f"the Redis visibility timeout ({timeout} s) must be longer than the longest benchmark job's hard "
            f"time limit ({LONGEST_HARD_LIMIT} s)",
            hint="raise CELERY_VISIBILITY_TIMEOUT or lower the limits in benchmarks/presets.py",
            id="benchmarks.E001",
        )
    ]


@register()
def heartbeat_outlasts_beats(app_configs=None, **kwargs) -> list[Error]:
    """A job is declared lost when its heartbeat is older than the stale limit: that must span several beats."""
    from benchmarks import conf

    if conf.stale_after() >= 3 * conf.heartbeat_interval():
        return []
    return [
        Error(
            f"BENCHMARK_STALE_AFTER_SECONDS ({conf.stale_after().total_seconds():g}) must be at least three "
            f"heartbeats (BENCHMARK_HEARTBEAT_SECONDS={conf.heartbeat_interval().total_seconds():g})",
            hint="a worker that is alive would otherwise lose its job to the sweeper",
            id="benchmarks.E002",
        )
    ]
