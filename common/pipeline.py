"""Work handed to one other thread, in order, while the caller goes on: the release build's gzip
stream (`releases.bundle.bag`) uses it, for work that runs without the GIL (zlib, hashlib).

`OneThread.submit` queues a job and returns at once, unless `waiting` jobs are already queued: then
it waits for the oldest, so memory holds a bounded number of them. A job's error is raised by the
`submit` or `finish` that waits for it, and the jobs after it do not run. `finish` waits for every job; `abandon` drops the jobs not
started. `last`, if given, runs on the thread after every job, whichever way it ends (a thread's own
database connection closed, say).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class OneThread:
    def __init__(self, *, waiting: int, name: str, last: Callable[[], None] | None = None) -> None:
        self.waiting = waiting
        self.last = last
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.queued: deque[Future[Any]] = deque()
        self.ended = False
        self.failed = False

    def submit(self, job: Callable[..., Any], *args: Any) -> None:
        self.queued.append(self.pool.submit(self._run, job, *args))
        while len(self.queued) > self.waiting:
            self.queued.popleft().result()

    def _run(self, job: Callable[..., Any], *args: Any) -> Any:
        if self.failed:
            return None  # a job before it failed: its error is the one raised
        try:
            return job(*args)
        except BaseException:
            self.failed = True
            raise

    def finish(self) -> None:
        """Wait for every job; the first error among them raised."""
        try:
            while self.queued:
                self.queued.popleft().result()
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Drop the jobs not started, wait for the one running, run `last`, and end the thread."""
        if self.ended:
            return
        self.ended = True
        for future in self.queued:
            future.cancel()
        self.queued.clear()
        if self.last is not None:
            self.pool.submit(self.last)
        self.pool.shutdown(wait=True)
