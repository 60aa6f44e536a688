"""A published release never changes: triggers on both backends refuse it, whatever the way in.

Guarded, for a release whose stored status is 'published':
- `releases_release`: any UPDATE, and DELETE (the transition building -> published is an update of a
  row that is not published yet, so it passes);
- `releases_releasefile` and `releases_releaserecord`: INSERT into, UPDATE of and DELETE from its
  files and its memberships;
- on PostgreSQL also TRUNCATE of the three tables while such a release exists (row triggers do not
  see a TRUNCATE).
Both backends report a refusal as an integrity error whose message contains IMMUTABLE_MESSAGE.

One exception: an *external* release (recorded from a page published elsewhere, no files here, the
seed's) cannot be changed or added to either, but its row and memberships may be deleted, e.g. when
it was recorded by mistake (the admin and the API still refuse). This keeps `flush` working for
every transactional test that imports the seed. Tests that commit releases this portal published
must remove them before the test database is flushed: `tests/releases/conftest.py`
(`published_releases_removed_before_flush`) drops the triggers, deletes the rows and creates the
triggers again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

IMMUTABLE_MESSAGE = "a published release is immutable"
PART_TABLES = ("releases_releasefile", "releases_releaserecord")
ALL_TABLES = ("releases_release", *PART_TABLES)

_PG_RELEASE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION releases_release_guard() RETURNS trigger AS $$
BEGIN
    IF OLD.status = 'published' AND (TG_OP = 'UPDATE' OR NOT OLD.is_external) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: release % cannot be changed or deleted', COALESCE(OLD.release_id, OLD.id::text)
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql
"""

_PG_PART_FUNCTION = f"""
CREATE OR REPLACE FUNCTION releases_part_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND EXISTS (
        SELECT 1 FROM releases_release r
         WHERE r.id = OLD.release_id AND r.status = 'published' AND (TG_OP = 'UPDATE' OR NOT r.is_external)
    ) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: the files and records of release % cannot change', OLD.release_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND EXISTS (
        SELECT 1 FROM releases_release r WHERE r.id = NEW.release_id AND r.status = 'published'
    ) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: nothing can be added to release %', NEW.release_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql
"""

_PG_TRUNCATE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION releases_truncate_guard() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM releases_release WHERE status = 'published' AND NOT is_external) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: % cannot be truncated while a release is published', TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql
"""

POSTGRESQL_CREATE = [
    _PG_RELEASE_FUNCTION,
    _PG_PART_FUNCTION,
    _PG_TRUNCATE_FUNCTION,
    """CREATE TRIGGER releases_release_immutable BEFORE UPDATE OR DELETE ON releases_release
        FOR EACH ROW EXECUTE FUNCTION releases_release_guard()""",
    *(
        f"""CREATE TRIGGER {table}_immutable BEFORE INSERT OR UPDATE OR DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION releases_part_guard()"""
        for table in PART_TABLES
    ),
    *(
        f"""CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION releases_truncate_guard()"""
        for table in ALL_TABLES
    ),
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS releases_release_immutable ON releases_release",
    *(f"DROP TRIGGER IF EXISTS {table}_immutable ON {table}" for table in PART_TABLES),
    *(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}" for table in ALL_TABLES),
    "DROP FUNCTION IF EXISTS releases_release_guard()",
    "DROP FUNCTION IF EXISTS releases_part_guard()",
    "DROP FUNCTION IF EXISTS releases_truncate_guard()",
]

_SQLITE_RAISE = f"SELECT RAISE(ABORT, '{IMMUTABLE_MESSAGE}');"


def _sqlite_published(row: str, *, built_here: bool = False) -> str:
    here = " AND r.is_external = 0" if built_here else ""
    return f"EXISTS (SELECT 1 FROM releases_release r WHERE r.id = {row}.release_id AND r.status = 'published'{here})"


SQLITE_CREATE = [
    f"""CREATE TRIGGER releases_release_no_update BEFORE UPDATE ON releases_release
        WHEN OLD.status = 'published' BEGIN {_SQLITE_RAISE} END""",
    f"""CREATE TRIGGER releases_release_no_delete BEFORE DELETE ON releases_release
        WHEN OLD.status = 'published' AND OLD.is_external = 0 BEGIN {_SQLITE_RAISE} END""",
]
for _table in PART_TABLES:
    SQLITE_CREATE += [
        f"""CREATE TRIGGER {_table}_no_insert BEFORE INSERT ON {_table}
            WHEN {_sqlite_published("NEW")} BEGIN {_SQLITE_RAISE} END""",
        f"""CREATE TRIGGER {_table}_no_update BEFORE UPDATE ON {_table}
            WHEN {_sqlite_published("OLD")} OR {_sqlite_published("NEW")} BEGIN {_SQLITE_RAISE} END""",
        f"""CREATE TRIGGER {_table}_no_delete BEFORE DELETE ON {_table}
            WHEN {_sqlite_published("OLD", built_here=True)} BEGIN {_SQLITE_RAISE} END""",
    ]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS releases_release_no_update",
    "DROP TRIGGER IF EXISTS releases_release_no_delete",
    *(f"DROP TRIGGER IF EXISTS {table}_no_{op}" for table in PART_TABLES for op in ("insert", "update", "delete")),
]


@contextmanager
def inserts_unguarded_in_this_transaction(connection: BaseDatabaseWrapper, table: str) -> Iterator[None]:
    """On SQLite, lift the INSERT guard of `table` (one of PART_TABLES) for the caller's transaction.

    SQLite runs a row trigger as a sub-program per row, and that alone costs more than the row:
    publishing 170,000 memberships spent two thirds of its 4 s in `{table}_no_insert`. The trigger
    is dropped and created again inside the caller's transaction, which must already hold SQLite's
    one write lock (it has written) and must have checked, under that lock, that the release it
    inserts into is not published: no other connection can write meanwhile, none ever reads the
    schema without the trigger (DDL is transactional in SQLite), and a rollback restores it.
    Elsewhere (PostgreSQL) nothing changes: its triggers stay on.
    """
    if connection.vendor != "sqlite":
        yield
        return
    if not connection.in_atomic_block:
        raise RuntimeError("the insert guard is lifted only inside the transaction that inserts")
    trigger = f"{table}_no_insert"
    [create] = [statement for statement in SQLITE_CREATE if f"CREATE TRIGGER {trigger} " in statement]
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER {trigger}", None)
        try:
            yield
        finally:
            cursor.execute(create, None)


def statements(vendor: str, *, create: bool) -> list[str]:
    if vendor == "postgresql":
        return POSTGRESQL_CREATE if create else POSTGRESQL_DROP
    if vendor == "sqlite":
        return SQLITE_CREATE if create else SQLITE_DROP
    raise NotImplementedError(f"no release immutability triggers for the {vendor} backend")


def _run(schema_editor: BaseDatabaseSchemaEditor, *, create: bool) -> None:
    vendor = schema_editor.connection.vendor
    for statement in statements(vendor, create=create):
        # No parameters: the PL/pgSQL bodies contain '%' placeholders of their own.
        schema_editor.execute(statement, params=None)


def create(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, create=True)


def drop(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, create=False)
