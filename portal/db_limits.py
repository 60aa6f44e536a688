"""Time limits on the database work of web requests, and the answer a request gets when it hits one.

A process that serves web requests sets them on each of its connections: on PostgreSQL
`statement_timeout` (settings.DB_STATEMENT_TIMEOUT_MS) and `lock_timeout`
(settings.DB_LOCK_TIMEOUT_MS), on SQLite the busy timeout (DB_LOCK_TIMEOUT_MS, in place of the 20 s
the connection opens with). 0 turns a limit off (SQLite then keeps its 20 s). Such a process says
so with `web_limits_enable()`: each gunicorn worker once it has loaded the portal
(portal/gunicorn_conf.py), and `manage.py runserver` (`DatabaseLimitsMiddleware`). Celery workers
and every other management command never do, so a release build or a migration runs as long as it
needs and waits for locks as long as it must; nor does a test process, unless a test asks.

They are set when a connection opens (Django's `connection_created`) and, for a connection opened
before, or since the settings changed, at the start of the next request that finds it open: once
per connection, so a request pays only the check (4.5 us on the 2-core machine). Inside a transaction that outlives requests (a
test's) they are set again on each request: the transaction's rollback undoes a `SET`. They go
straight to the driver, so they count as no query of the request.
"""

from __future__ import annotations

from django.conf import settings
from django.core.signals import setting_changed
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created
from django.dispatch import receiver

#: The attribute of a connection wrapper holding the limits its open connection has.
APPLIED = "_portal_web_limits"
STATEMENT = "statement"
LOCK = "lock"
SQLITE_BUSY, SQLITE_LOCKED = 5, 6

_serving_web = False


def web_limits_enable() -> None:
    """This process serves web requests: every connection it opens from now on gets the limits."""
    global _serving_web
    _serving_web = True
    connection_created.connect(_on_connection_created, dispatch_uid="portal-web-database-limits")


def web_limits_disable() -> None:
    """Connections opened from now on get none (a test's clean-up: those already open keep theirs)."""
    global _serving_web
    _serving_web = False
    connection_created.disconnect(dispatch_uid="portal-web-database-limits")


def _on_connection_created(sender: object, connection: BaseDatabaseWrapper, **kwargs: object) -> None:
    if _serving_web:
        _apply(connection)


_wanted: dict[str, tuple[int, ...] | None] = {}


@receiver(setting_changed)
def _forget_wanted(setting: str, **kwargs: object) -> None:  # a test's override_settings
    if setting in ("DB_STATEMENT_TIMEOUT_MS", "DB_LOCK_TIMEOUT_MS", "DATABASES"):
        _wanted.clear()


def wanted(connection: BaseDatabaseWrapper) -> tuple[int, ...] | None:
    """The limits for a web request's connection: (statement ms, lock ms) on PostgreSQL, (busy ms,)
    on SQLite; None on another database. Worked out once per database (each request asks)."""
    try:
        return _wanted[connection.alias]
    except KeyError:
        pass
    limits: tuple[int, ...] | None = None
    if connection.vendor == "postgresql":
        limits = (settings.DB_STATEMENT_TIMEOUT_MS, settings.DB_LOCK_TIMEOUT_MS)
    elif connection.vendor == "sqlite":
        opened_with = int(float(connection.settings_dict.get("OPTIONS", {}).get("timeout", 5)) * 1000)
        limits = (settings.DB_LOCK_TIMEOUT_MS or opened_with,)
    _wanted[connection.alias] = limits
    return limits


def _apply(connection: BaseDatabaseWrapper) -> None:
    limits = wanted(connection)
    if limits is None or connection.connection is None:
        return
    if connection.vendor == "postgresql":
        statement_ms, lock_ms = limits
        connection.connection.execute(f"SET statement_timeout = {int(statement_ms)}; SET lock_timeout = {int(lock_ms)}")
    else:
        connection.connection.execute(f"PRAGMA busy_timeout = {int(limits[0])}")
    # A SET inside a transaction is undone by its rollback: only one outside it stays.
    setattr(connection, APPLIED, None if connection.in_atomic_block else limits)


def web_limits_ensure() -> None:
    """This thread's connection to the portal's database has the current limits (see the module's
    docstring)."""
    if not _serving_web:
        return
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.connection is not None and getattr(connection, APPLIED, None) != wanted(connection):
        _apply(connection)


def limit_exceeded(exception: BaseException | None) -> str | None:
    """STATEMENT when the database cancelled a statement that ran too long (PostgreSQL's SQLSTATE
    57014, query_canceled), LOCK when a statement waited too long for a lock another transaction
    holds (55P03, lock_not_available; SQLite's "database is locked"); None for anything else."""
    if not isinstance(exception, OperationalError):
        return None
    cause = exception.__cause__ or exception
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate == "57014":
        return STATEMENT
    if sqlstate == "55P03":
        return LOCK
    code = getattr(cause, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED):
        return LOCK
    if "database is locked" in str(cause) or "database table is locked" in str(cause):
        return LOCK
    return None


def _seconds(milliseconds: int) -> str:
    return f"{milliseconds / 1000:g} s"


def limit_message(kind: str, *, method: str) -> str:
    """What a person or a client reads when its request hit a limit: which one, and what to do."""
    undone = "" if method in ("GET", "HEAD", "OPTIONS") else " Nothing it was changing has been saved."
    if kind == STATEMENT:
        return (
            f"The request took too long: the database stopped it after {_seconds(settings.DB_STATEMENT_TIMEOUT_MS)}."
            f"{undone} Retrying the same request may not help: ask for less at once (a smaller page, more filters)."
        )
    limit = wanted(connections["default"])
    waited = f" (over {_seconds(limit[-1])})" if limit and limit[-1] else ""
    return (
        f"The request waited too long for another change to the same data to finish{waited}."
        f"{undone} Retrying the same request at once may not help: try again once the other change is done."
    )
