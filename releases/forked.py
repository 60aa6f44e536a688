"""A function run in a forked child process while the caller goes on: the release build's second core.

`ForkedCall(work)` forks; the child runs `work(send)` and sends its JSON-able messages (`send`), then
its result (or its error) back through a pipe, a line each, then leaves with `os._exit` (no clean-up
of the parent's state runs in the child); `receive()` waits for the next message, `result()` for the
result, either raising the child's error; `cancel()` kills the child.
The child dies with its parent (Linux `PR_SET_PDEATHSIG`): a worker killed mid-build leaves none
behind.

Database connections: the child never uses, closes or finalises a connection it inherited (a
connection carried across a fork and used or closed in the child corrupts the other side's state:
SQLite's locks, PostgreSQL's session); Django opens new ones in the child. Fork only where the
caller holds no transaction and no other thread runs (`may_fork`; RELEASE_BUILD_FORK): SQLite's
per-process lock bookkeeping is copied as it stands, which is only right while the parent holds no
lock, and a lock another thread holds at the fork stays held in the child.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from django.db import InterfaceError, OperationalError, connections

from releases import conf
from releases.bundle import BundleError
from releases.lifecycle import BuildFailed, BuildSuperseded, connection_lost

logger = logging.getLogger(__name__)

_KEPT_IN_CHILD: list[object] = []  # inherited connections: never closed or finalised in the child
_ERRORS: dict[str, type[Exception]] = {
    "BundleError": BundleError,
    "BuildFailed": BuildFailed,
    "BuildSuperseded": BuildSuperseded,
    # The child's database connection was lost: the build claims again at once (`releases.build`).
    "OperationalError": OperationalError,
    "InterfaceError": InterfaceError,
}
_PR_SET_PDEATHSIG = 1


def may_fork() -> bool:
    """Whether a child may be forked here: POSIX, no connection of this thread in a transaction, and
    this thread the process's only one (RELEASE_BUILD_FORK "auto"; "always": whatever other threads
    run; "never": no)."""
    setting = conf.build_fork()
    return (
        setting != "never"
        and hasattr(os, "fork")
        and not any(connection.in_atomic_block for connection in connections.all(initialized_only=True))
        and (setting == "always" or threading.active_count() == 1)
    )


def _in_child() -> None:
    """What a child does first: die with its parent, default signal handlers, fresh connections."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):  # not Linux: the parent kills it on its way out
        pass
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):
        signal.signal(signum, signal.SIG_DFL)
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None:
            _KEPT_IN_CHILD.append(connection.connection)
            connection.connection = None  # the next query opens the child's own


Send = Callable[[Any], None]


class ForkedCall:
    """`work(send)` in a forked child process: its messages (`send(x)`, JSON) by `receive()`, its
    result (JSON) by `result()`."""

    def __init__(self, work: Callable[[Send], Any]) -> None:
        if not may_fork():
            raise RuntimeError("a child is forked only by a thread alone, outside any transaction")
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_end)
            pipe = os.fdopen(write_end, "w", encoding="utf-8")

            def send(message: Any) -> None:
                pipe.write(json.dumps({"sent": message}) + "\n")
                pipe.flush()

            status = 1
            try:
                _in_child()
                outcome: dict[str, Any] = {"result": work(send)}
                status = 0
            except BaseException as exc:
                if not isinstance(exc, (BundleError, BuildFailed, BuildSuperseded)):
                    logger.exception("the forked part of the build failed")
                # A lost connection, whatever the driver called it, is the parent's OperationalError.
                name = "OperationalError" if connection_lost(exc) else type(exc).__name__
                outcome = {
                    "error": name,
                    "message": f"{type(exc).__name__}: {exc}" if name != type(exc).__name__ else str(exc),
                }
            try:
                pipe.write(json.dumps(outcome) + "\n")
                pipe.flush()
            finally:
                os._exit(status)
        os.close(write_end)
        self.pid: int | None = pid
        self.pipe = os.fdopen(read_end, "r", encoding="utf-8")
        self.outcome: dict[str, Any] | None = None

    def _next(self) -> dict[str, Any]:
        line = self.pipe.readline()
        if not line:
            return {"error": "ChildLost", "message": "the child process died"}
        outcome: dict[str, Any] = json.loads(line)
        return outcome

    def receive(self) -> Any:
        """The child's next message (waits for it); the child's error raised here if it ended first."""
        if self.outcome is None:
            outcome = self._next()
            if "sent" in outcome:
                return outcome["sent"]
            self.outcome = outcome
        self._raise_error()
        raise BuildFailed("the child finished without sending what was waited for")

    def result(self) -> Any:
        """Wait for the child; its result, or its error raised here (`BundleError`, `BuildFailed`,
        `BuildSuperseded` and a database's `OperationalError` or `InterfaceError` as themselves,
        anything else as a BuildFailed naming it)."""
        try:
            while self.outcome is None:
                outcome = self._next()
                if "sent" not in outcome:
                    self.outcome = outcome
        finally:
            self.pipe.close()
            self._reap()
        self._raise_error()
        return self.outcome["result"]

    def _raise_error(self) -> None:
        outcome = self.outcome or {}
        if "error" not in outcome:
            return
        error = _ERRORS.get(outcome["error"])
        if error is not None:
            raise error(outcome["message"])
        raise BuildFailed(f"{outcome['error']}: {outcome['message']}")

    def cancel(self) -> None:
        """Kill the child (if it still runs) and reap it."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.pipe.close()
        self._reap()

    def _reap(self) -> None:
        if self.pid is not None:
            os.waitpid(self.pid, 0)
            self.pid = None
