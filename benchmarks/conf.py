"""The benchmark jobs' settings, with their defaults (each may be set in portal/settings.py)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.conf import settings

from common.lifecycle import duration_setting


def heartbeat_interval() -> timedelta:
    """How often a running job's worker writes its heartbeat while the runner is busy."""
    return duration_setting("BENCHMARK_HEARTBEAT_SECONDS", 30)


def stale_after() -> timedelta:
    """A running job whose heartbeat is older than this has lost its worker (ten missed beats)."""
    return duration_setting("BENCHMARK_STALE_AFTER_SECONDS", 300)


def resend_after() -> timedelta:
    """A queued job not started this long after its message was sent gets its message again, same id (doubling each time, up to four times this)."""
    return duration_setting("BENCHMARK_RESEND_AFTER_SECONDS", 600)


def max_attempts() -> int:
    """How many workers may claim one job before a lost worker fails it."""
    return int(getattr(settings, "BENCHMARK_MAX_ATTEMPTS", 3))


def inductor_cache_dir() -> Path:
    """Where PyTorch Inductor keeps compiled kernels between runs (the worker's volume in production)."""
    return Path(getattr(settings, "BENCHMARK_INDUCTOR_CACHE_DIR", Path(settings.VAR_DIR) / "torchinductor"))
