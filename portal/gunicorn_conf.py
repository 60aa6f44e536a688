"""Gunicorn's settings: `bin/serve` names them (`--config python:portal.gunicorn_conf`); the image's
command and docker-compose's start gunicorn in the project folder without `--config`, where gunicorn
reads `gunicorn.conf.py`, which holds these.

Each worker sets web requests' database time limits (`post_worker_init`, portal/db_limits.py).

No credential reaches a log line: the access log and the error log go through `RedactingLogger`,
which replaces the value of every query parameter named like a credential (`?token=`, `?api_key=`,
portal/redact.py) in the request line, the query string and the referrer, and every Authorization,
Proxy-Authorization and Cookie header an access-log format names, with `[redacted]`.

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
import re
import sys

from gunicorn.glogging import Logger

from portal.redact import REDACTED, redact

__all__ = ["control_socket_disable", "logger_class", "post_worker_init", "worker_int"]

# No control socket: its default path ($HOME/.gunicorn/gunicorn.ctl) is one per user, and two portals
# on one machine (a second checkout, the fresh-start bench) would take it from each other.
control_socket_disable = True

#: Header and environ atoms (`%({authorization}i)s`, `%({http_cookie}e)s`) whose whole value is a credential.
SECRET_ATOMS = frozenset(
    f"{{{name}}}{kind}"
    for kind, names in (
        ("i", ("authorization", "proxy-authorization", "cookie", "x-api-key")),
        ("e", ("http_authorization", "http_proxy_authorization", "http_cookie", "http_x_api_key")),
    )
    for name in names
)


#: The fixed atoms that hold text a client wrote: the request line, path, query, referrer, user agent, user.
TEXT_ATOMS = frozenset({"r", "U", "q", "f", "a", "u"})


class RedactFilter(logging.Filter):
    """Rewrites a record's message with its credentials redacted (gunicorn's error log names request URIs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it as it would have
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_REDACT_FILTER = RedactFilter()


class RedactingLogger(Logger):
    """Gunicorn's logger, with the credentials in its access and error lines redacted."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        # The atoms the access-log format names that a client wrote: only those are redacted, per request.
        named = re.findall(r"%\((.*?)\)s", cfg.access_log_format or "")
        named = [name.lower() if name.startswith("{") else name for name in named]
        self._named_atoms = frozenset(name for name in named if name in TEXT_ATOMS or name.startswith("{"))
        self.error_log.addFilter(_REDACT_FILTER)  # added once: a filter already there is not added again

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for name in self._named_atoms:
            value = atoms.get(name)
            if name in SECRET_ATOMS and value:
                atoms[name] = REDACTED
            elif isinstance(value, str):
                atoms[name] = redact(value)
        return atoms


logger_class = RedactingLogger


def post_worker_init(worker) -> None:
    """The worker has loaded the portal: its connections get web requests' database time limits
    (portal/db_limits.py), which Celery workers and management commands never have."""
    from portal.db_limits import web_limits_enable

    web_limits_enable()


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
