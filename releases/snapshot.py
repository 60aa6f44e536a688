"""The export's one consistent view of the catalogue, while curators keep writing.

`catalogue_snapshot()` opens a read transaction on the building thread's connection that sees the
catalogue as it was when the transaction began, whatever commits meanwhile: on PostgreSQL
`REPEATABLE READ, READ ONLY` (one snapshot for every statement of the transaction), on SQLite a
deferred `BEGIN` (in WAL mode a read transaction keeps the snapshot of its first read, and never
takes the write lock, so curators' writes go on). The export reads every table inside it, so the
bundle is one moment of the catalogue and nothing is exported twice to get there.

The build's own writes (its heartbeat and progress, its memberships, its log) must be seen by others
while it reads (a sweeper reads the heartbeat; the memberships are stored batch by batch) and must not
join the read transaction: they go through the `Writes` it yields, which runs each one on a thread of
its own, with a connection of its own, and waits for it. A call is one short transaction there, as
it was on the building thread.

A caller already inside a transaction (a test's, which holds the rows it made uncommitted) cannot
start another: its transaction is then the view, the writes run inline in it, and `consistent` is
False, so the export still compares the catalogue's watermark before and after.

A connection lost during the read (its rollback fails too) comes out as an `InterfaceError`, whatever
the driver raised: the build's lost-connection retry (`releases.lifecycle.connection_lost`) takes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db import DatabaseError, InterfaceError, connection, connections, transaction

from releases.lifecycle import connection_answers

T = TypeVar("T")


@dataclass
class Writes:
    """Runs the build's writes beside its read transaction (`call`), or inline when there is none."""

    consistent: bool
    _pool: ThreadPoolExecutor | None = field(default=None, repr=False)

    def call(self, write: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        if self._pool is None:
            return write(*args, **kwargs)
        return self._pool.submit(write, *args, **kwargs).result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.submit(connections.close_all).result()  # the writer thread's connection
            self._pool.shutdown(wait=True)
            self._pool = None


@contextmanager
def catalogue_snapshot() -> Iterator[Writes]:
    """A read transaction on one snapshot of the catalogue, and where the build's writes go meanwhile."""
    if connection.in_atomic_block:
        yield Writes(consistent=False)
        return
    writes = Writes(consistent=True, _pool=ThreadPoolExecutor(max_workers=1, thread_name_prefix="release-writes"))
    connection.ensure_connection()
    raw = connection.connection
    try:
        with _read_transaction():
            yield writes
    except (DatabaseError, connection.Database.Error) as error:  # type: ignore[attr-defined]  # Django's, or the driver's own
        # The rollback failed too: Django dropped the connection (and may have opened another).
        if connection.connection is not raw or not connection_answers():
            raise InterfaceError(f"the database connection was lost: {error}") from error
        raise
    finally:
        writes.close()


@contextmanager
def _read_transaction() -> Iterator[None]:
    if connection.vendor == "postgresql":
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield
        return
    if connection.vendor == "sqlite":
        mode = connection.transaction_mode  # type: ignore[attr-defined]
        connection.transaction_mode = "DEFERRED"  # type: ignore[attr-defined]  # a reader: no write lock
        try:
            with transaction.atomic():
                connection.transaction_mode = mode  # type: ignore[attr-defined]
                yield
        finally:
            connection.transaction_mode = mode  # type: ignore[attr-defined]
        return
    raise NotImplementedError(f"no consistent read for the {connection.vendor} backend")
