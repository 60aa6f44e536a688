"""Locks that need no UPDATE privilege: a transaction-scoped advisory lock on a name.

The application's database role may only SELECT and INSERT on the audit tables (`manage.py
db_grants`), and PostgreSQL's row locks (`SELECT ... FOR UPDATE`, and even `FOR KEY SHARE`) need UPDATE
on the table they lock. A service that must serialise work on an audit row (undoing a model
change) or on a row that does not exist yet (folding a suggestion into an identical one) takes an
advisory lock on a name instead: `pg_advisory_xact_lock`, released when the transaction ends, needs
no privilege on any table. On SQLite every write transaction holds the whole database's write lock
from its start (`transaction_mode` IMMEDIATE, portal.env), which already serialises it.
"""

from __future__ import annotations

from django.db import connection


def advisory_lock(*, name: str) -> None:
    """Hold a lock on `name` until the current transaction ends; another transaction asking for
    the same name waits. Must be called inside `transaction.atomic()`."""
    if not connection.in_atomic_block:
        raise RuntimeError("advisory_lock needs a transaction: call it inside transaction.atomic()")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            # hashtextextended: a 64-bit key from the name, PostgreSQL's own hash (11 and later).
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])
