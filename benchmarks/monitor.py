"""Running the IA3 runner inside a worker, watched: progress, heartbeat, cancellation and the log tail.

No ORM here: the caller (`benchmarks.execution.benchmark_job_execute`) passes the callbacks that
write to the job's row, each answering whether the row still belongs to this attempt. When one
answers no (the job was cancelled, or the sweeper gave it to another worker) the run stops at its
next progress point by raising `JobStopped`.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, connection

from benchmarks import conf

logger = logging.getLogger("benchmarks.run")

LOG_TAIL_LINES = 200
LOG_TAIL_CHARS = 20_000
#: Progress is written at most this often (and always at the last step).
PROGRESS_MIN_INTERVAL_S = 0.5


class JobStopped(Exception):
    """The job's row no longer belongs to this attempt (cancelled, or handed to another worker)."""


class LogTail(logging.Handler):
    """Keeps the last lines logged anywhere in the process while it is attached to the root logger."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.lines: collections.deque[str] = collections.deque(maxlen=LOG_TAIL_LINES)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception:  # a log line must never break a run
            self.handleError(record)

    def add(self, text: str) -> None:
        self.lines.extend(text.rstrip("\n").splitlines())

    def text(self) -> str:
        return "\n".join(self.lines)[-LOG_TAIL_CHARS:]

    def __enter__(self) -> LogTail:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeHandler(self)


class Heartbeat(threading.Thread):
    """Writes the job's heartbeat every `interval` while the runner is busy between progress points
    (building a 2.5B model, the first CUDA kernels). Uses, and closes, its own database connection."""

    def __init__(self, *, beat: Callable[[], bool], interval: timedelta) -> None:
        super().__init__(name="benchmark-heartbeat", daemon=True)
        self.beat = beat
        self.interval = interval.total_seconds()
        self.done = threading.Event()
        self.lost = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval):
                try:
                    if not self.beat():
                        self.lost.set()
                        return
                except DatabaseError as error:  # a database hiccup: the next beat tries again
                    logger.warning("heartbeat not written: %s", error)
        finally:
            connection.close()

    def stop(self) -> None:
        self.done.set()
        self.join(timeout=self.interval + 5)


class ProgressWriter:
    """The runner's progress callback: throttled writes, and the stop check."""

    def __init__(self, *, write: Callable[[int, int], bool], heartbeat: Heartbeat) -> None:
        self.write = write
        self.heartbeat = heartbeat
        self.last_write = 0.0

    def __call__(self, step: int, total: int) -> None:
        if self.heartbeat.lost.is_set():
            raise JobStopped("the job was cancelled or handed to another worker")
        now = time.monotonic()
        if step < total and now - self.last_write < PROGRESS_MIN_INTERVAL_S:
            return
        self.last_write = now
        try:
            still_ours = self.write(step, total)
        except DatabaseError as error:
            if step == total:
                raise
            logger.warning("progress not written: %s", error)
            return
        if not still_ours:
            raise JobStopped("the job was cancelled or handed to another worker")
        logger.info("step %d of %d", step, total)


def progress_interval(steps: int) -> int:
    """Report progress about fifty times a run, and at least every 100 steps."""
    return max(1, min(100, steps // 50))


def run_measurement(
    *,
    parameters: dict[str, Any],
    write_progress: Callable[[int, int], bool],
    beat: Callable[[], bool],
    heartbeat_interval: timedelta,
    log: LogTail,
) -> dict[str, Any]:
    """One run of `benchmarks.ia3` with these parameters; returns its JSON report.

    Raises JobStopped when the row stops belonging to this attempt, and whatever the runner raises.
    """
    # Before PyTorch loads, so Inductor (and Triton beneath it) cache where the settings say.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(conf.inductor_cache_dir())
    from benchmarks.ia3 import RunConfig, format_summary, run  # PyTorch: only on the worker that runs jobs

    config = RunConfig(**parameters, progress_interval=progress_interval(parameters["steps"]))
    heartbeat = Heartbeat(beat=beat, interval=heartbeat_interval)
    heartbeat.start()
    try:
        logger.info("running benchmarks.ia3 with %s", parameters)
        report = run(config, progress=ProgressWriter(write=write_progress, heartbeat=heartbeat))
    finally:
        heartbeat.stop()
    log.add(format_summary(report))
    return report
