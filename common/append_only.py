"""Audit tables are append-only in the database itself: triggers on both backends refuse UPDATE and
DELETE of their rows (and, on PostgreSQL, TRUNCATE), whatever the way in: the ORM, the admin, a
shell, raw SQL. Each app's migration names its own tables (`create_for` / `drop_for`), so an old
migration keeps meaning what it meant when a model changes later.

Both backends report a refusal as an integrity error whose message contains APPEND_ONLY_MESSAGE.

Nothing in the portal updates or deletes an audit row. What would (and now is refused):
- deleting a row an audit row points at: the audit tables' own foreign keys are PROTECT, or carry
  no database constraint (history rows, release events, review events' generic link), so no
  deletion cascades into them;
- deleting a user who edited the catalogue (simple-history sets `history_user` to NULL): users are
  deactivated, never deleted;
- simple-history's pruning commands (`clean_old_history`, `clean_duplicate_history`);
- a test database flush (DELETE on SQLite, TRUNCATE on PostgreSQL): tests/conftest.py lifts the
  guards for the flush only, with `guards_lifted`, inside the flush's own transaction.
A migration that must rewrite an audit table does the same, and says so.

SQLite drops a table's triggers with the table, and Django remakes a table for many ALTERs there:
tests/common/test_append_only.py checks that every audit table of the migrated schema is guarded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

MigrationStep = Callable[[Any, BaseDatabaseSchemaEditor], None]

APPEND_ONLY_MESSAGE = "audit rows are append-only"
TRIGGER_MARK = "_append_only"

_PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION portal_append_only_guard() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{APPEND_ONLY_MESSAGE}: % on % is refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql
"""


def trigger_names(table: str) -> list[str]:
    return [f"{table}{TRIGGER_MARK}_update", f"{table}{TRIGGER_MARK}_delete"]


def statements(vendor: str, tables: Iterable[str], *, create: bool) -> list[str]:
    """The DDL that guards (or unguards) `tables` on `vendor`."""
    tables = list(tables)
    if vendor == "postgresql":
        if not create:
            return [
                f"DROP TRIGGER IF EXISTS {name} ON {table}"
                for table in tables
                for name in (f"{table}{TRIGGER_MARK}", f"{table}{TRIGGER_MARK}_truncate")
            ]
        out = [_PG_FUNCTION]
        for table in tables:
            out += [
                f"""CREATE TRIGGER {table}{TRIGGER_MARK} BEFORE UPDATE OR DELETE ON {table}
                    FOR EACH ROW EXECUTE FUNCTION portal_append_only_guard()""",
                f"""CREATE TRIGGER {table}{TRIGGER_MARK}_truncate BEFORE TRUNCATE ON {table}
                    FOR EACH STATEMENT EXECUTE FUNCTION portal_append_only_guard()""",
            ]
        return out
    if vendor == "sqlite":
        if not create:
            return [f"DROP TRIGGER IF EXISTS {name}" for table in tables for name in trigger_names(table)]
        return [
            f"""CREATE TRIGGER {table}{TRIGGER_MARK}_{op} BEFORE {op.upper()} ON {table}
                BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}: {op.upper()} on {table} is refused'); END"""
            for table in tables
            for op in ("update", "delete")
        ]
    raise NotImplementedError(f"no append-only triggers for the {vendor} backend")


def _run(schema_editor: BaseDatabaseSchemaEditor, tables: Iterable[str], *, create: bool) -> None:
    for statement in statements(schema_editor.connection.vendor, tables, create=create):
        # No parameters: the PL/pgSQL body holds '%' placeholders of its own.
        schema_editor.execute(statement, params=None)


def create_for(*tables: str) -> MigrationStep:
    """A RunPython forward function that guards `tables`."""

    def create(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
        _run(schema_editor, tables, create=True)

    return create


def drop_for(*tables: str) -> MigrationStep:
    """A RunPython reverse function that removes the guards of `tables` (the shared PL/pgSQL
    function stays: other apps' guards use it)."""

    def drop(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
        _run(schema_editor, tables, create=False)

    return drop


def guarded_triggers(connection: BaseDatabaseWrapper) -> list[tuple[str, str, str]]:
    """(trigger name, table, CREATE statement) of every trigger of this module, and of any other
    guard named `<table>_append_only...`, in the database now."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE %s ORDER BY name",
                [f"%{TRIGGER_MARK}%"],
            )
        elif connection.vendor == "postgresql":
            cursor.execute(
                "SELECT t.tgname, c.relname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
                " JOIN pg_class c ON c.oid = t.tgrelid"
                " WHERE NOT t.tgisinternal AND t.tgname LIKE %s ORDER BY t.tgname",
                [f"%{TRIGGER_MARK}%"],
            )
        else:
            return []
        return [(name, table, sql) for name, table, sql in cursor.fetchall()]


def wholly_append_only_tables(connection: BaseDatabaseWrapper) -> list[str]:
    """The tables this module guards whole (every UPDATE and DELETE refused), as opposed to a table
    whose own guard refuses only some changes (a decided correction, corrections.db_triggers): the
    application's role gets no UPDATE on these (`manage.py db_grants`)."""
    whole = {
        table
        for name, table, _sql in guarded_triggers(connection)
        if name in (f"{table}{TRIGGER_MARK}", *trigger_names(table))
    }
    return sorted(whole)


@contextmanager
def guards_lifted(connection: BaseDatabaseWrapper) -> Iterator[None]:
    """Drop every append-only guard for the duration of the block and create it again after.

    For a test database's flush and a migration that must rewrite audit rows, nothing else. Used
    inside one transaction, no other connection ever sees the tables unguarded (DDL is
    transactional on both backends), and a rollback restores the guards.
    """
    triggers = guarded_triggers(connection)
    with connection.cursor() as cursor:
        for name, table, _sql in triggers:
            if connection.vendor == "postgresql":
                cursor.execute(f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"', None)
            else:
                cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"', None)
        try:
            yield
        finally:
            for _name, _table, sql in triggers:
                cursor.execute(sql, None)
