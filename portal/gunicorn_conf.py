"""Gunicorn's settings for the embedded default (`bin/serve`: `--config python:portal.gunicorn_conf`).

Ctrl-C makes gunicorn's quick shutdown: the master sends SIGQUIT to its worker, whose handler stops
the thread pool without waiting and calls `sys.exit`. The interpreter then joins the pool's threads,
and a thread blocked reading a connection that sent nothing yet (a browser's preconnect, an idle
keep-alive client) holds the worker until the master's graceful timeout runs out and it sends
SIGKILL ("Worker was sent SIGKILL! Perhaps out of memory?"): a 20 s stop. A quick shutdown drops
in-flight requests by design, so the worker ends at once instead, its log lines flushed first.
"""

from __future__ import annotations

import logging
import os
import sys

# No control socket: its default path ($HOME/.gunicorn/gunicorn.ctl) is one per user, and two portals
# on one machine (a second checkout, the fresh-start bench) would take it from each other.
control_socket_disable = True


def worker_int(worker) -> None:
    """SIGINT or SIGQUIT in the worker: end it now (see the module's docstring)."""
    worker.log.info("worker %s: quick shutdown", worker.pid)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing left to flush
            pass
    os._exit(0)
