"""A published release never changes: triggers on both backends refuse it, whatever the way in.

Guarded, for a release that is published (its published_at is set):
- `releases_release`: any UPDATE, and DELETE (publishing is an update of a row that is not published
  yet, so it passes);
- `releases_releasebuild`: any UPDATE and DELETE of a published build (its release's);
- `releases_releasefile` and `releases_releaserecord`: INSERT into, UPDATE of and DELETE from its
  files and its memberships;
- on PostgreSQL also TRUNCATE of the four tables while such a release exists (row triggers do not
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
from dataclasses import dataclass
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

IMMUTABLE_MESSAGE = "a published release is immutable"
PART_TABLES = ("releases_releasefile", "releases_releaserecord")
BUILD_TABLE = "releases_releasebuild"
ALL_TABLES = ("releases_release", BUILD_TABLE, *PART_TABLES)


@dataclass(frozen=True)
class _Guards:
    """One version of the guards: how a published release row is told (`published`, a condition on
    the row alias `{r}`) and whether its build row is guarded too."""

    published: str
    builds: bool

    def of(self, alias: str) -> str:
        return self.published.format(r=alias)


#: Until releases 0008 a release row held its build's status; since, a release is published once
#: its published_at is set, and its build (releases_releasebuild) is guarded too.
STATUS_GUARDS = _Guards(published="{r}.status = 'published'", builds=False)
GUARDS = _Guards(published="{r}.published_at IS NOT NULL", builds=True)


def _postgresql_create(guards: _Guards) -> list[str]:
    release_function = f"""
CREATE OR REPLACE FUNCTION releases_release_guard() RETURNS trigger AS $$
BEGIN
    IF {guards.of("OLD")} AND (TG_OP = 'UPDATE' OR NOT OLD.is_external) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: release % cannot be changed or deleted', COALESCE(OLD.release_id, OLD.id::text)
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql
"""
    part_function = f"""
CREATE OR REPLACE FUNCTION releases_part_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND EXISTS (
        SELECT 1 FROM releases_release r
         WHERE r.id = OLD.release_id AND {guards.of("r")} AND (TG_OP = 'UPDATE' OR NOT r.is_external)
    ) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: the files and records of release % cannot change', OLD.release_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND EXISTS (
        SELECT 1 FROM releases_release r WHERE r.id = NEW.release_id AND {guards.of("r")}
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
    build_function = f"""
CREATE OR REPLACE FUNCTION releases_build_guard() RETURNS trigger AS $$
BEGIN
    IF OLD.status = 'published' AND (TG_OP = 'UPDATE' OR EXISTS (
        SELECT 1 FROM releases_release r WHERE r.id = OLD.release_id AND NOT r.is_external
    )) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: the build of release % cannot change', OLD.release_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql
"""
    truncate_function = f"""
CREATE OR REPLACE FUNCTION releases_truncate_guard() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM releases_release r WHERE {guards.of("r")} AND NOT r.is_external) THEN
        RAISE EXCEPTION '{IMMUTABLE_MESSAGE}: % cannot be truncated while a release is published', TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql
"""
    tables = ALL_TABLES if guards.builds else tuple(t for t in ALL_TABLES if t != BUILD_TABLE)
    statements = [release_function, part_function, truncate_function]
    statements.append(
        """CREATE TRIGGER releases_release_immutable BEFORE UPDATE OR DELETE ON releases_release
        FOR EACH ROW EXECUTE FUNCTION releases_release_guard()"""
    )
    if guards.builds:
        statements += [
            build_function,
            f"""CREATE TRIGGER {BUILD_TABLE}_immutable BEFORE UPDATE OR DELETE ON {BUILD_TABLE}
        FOR EACH ROW EXECUTE FUNCTION releases_build_guard()""",
        ]
    statements += [
        f"""CREATE TRIGGER {table}_immutable BEFORE INSERT OR UPDATE OR DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION releases_part_guard()"""
        for table in PART_TABLES
    ]
    statements += [
        f"""CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION releases_truncate_guard()"""
        for table in tables
    ]
    return statements


def _postgresql_drop(guards: _Guards) -> list[str]:
    tables = ALL_TABLES if guards.builds else tuple(t for t in ALL_TABLES if t != BUILD_TABLE)
    return [
        "DROP TRIGGER IF EXISTS releases_release_immutable ON releases_release",
        *([f"DROP TRIGGER IF EXISTS {BUILD_TABLE}_immutable ON {BUILD_TABLE}"] if guards.builds else []),
        *(f"DROP TRIGGER IF EXISTS {table}_immutable ON {table}" for table in PART_TABLES),
        *(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}" for table in tables),
        "DROP FUNCTION IF EXISTS releases_release_guard()",
        "DROP FUNCTION IF EXISTS releases_build_guard()",
        "DROP FUNCTION IF EXISTS releases_part_guard()",
        "DROP FUNCTION IF EXISTS releases_truncate_guard()",
    ]


_SQLITE_RAISE = f"SELECT RAISE(ABORT, '{IMMUTABLE_MESSAGE}');"


def _sqlite_create(guards: _Guards) -> list[str]:
    def published(row: str, *, built_here: bool = False) -> str:
        here = " AND r.is_external = 0" if built_here else ""
        return f"EXISTS (SELECT 1 FROM releases_release r WHERE r.id = {row}.release_id AND {guards.of('r')}{here})"

    statements = [
        f"""CREATE TRIGGER releases_release_no_update BEFORE UPDATE ON releases_release
        WHEN {guards.of("OLD")} BEGIN {_SQLITE_RAISE} END""",
        f"""CREATE TRIGGER releases_release_no_delete BEFORE DELETE ON releases_release
        WHEN {guards.of("OLD")} AND OLD.is_external = 0 BEGIN {_SQLITE_RAISE} END""",
    ]
    if guards.builds:
        # a build whose release is gone was an external one's (a release built here is never deleted)
        built_here = "EXISTS (SELECT 1 FROM releases_release r WHERE r.id = OLD.release_id AND r.is_external = 0)"
        statements += [
            f"""CREATE TRIGGER {BUILD_TABLE}_no_update BEFORE UPDATE ON {BUILD_TABLE}
            WHEN OLD.status = 'published' BEGIN {_SQLITE_RAISE} END""",
            f"""CREATE TRIGGER {BUILD_TABLE}_no_delete BEFORE DELETE ON {BUILD_TABLE}
            WHEN OLD.status = 'published' AND {built_here} BEGIN {_SQLITE_RAISE} END""",
        ]
    for table in PART_TABLES:
        statements += [
            f"""CREATE TRIGGER {table}_no_insert BEFORE INSERT ON {table}
            WHEN {published("NEW")} BEGIN {_SQLITE_RAISE} END""",
            f"""CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
            WHEN {published("OLD")} OR {published("NEW")} BEGIN {_SQLITE_RAISE} END""",
            f"""CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
            WHEN {published("OLD", built_here=True)} BEGIN {_SQLITE_RAISE} END""",
        ]
    return statements


def _sqlite_drop(guards: _Guards) -> list[str]:
    return [
        "DROP TRIGGER IF EXISTS releases_release_no_update",
        "DROP TRIGGER IF EXISTS releases_release_no_delete",
        *(
            [f"DROP TRIGGER IF EXISTS {BUILD_TABLE}_no_update", f"DROP TRIGGER IF EXISTS {BUILD_TABLE}_no_delete"]
            if guards.builds
            else []
        ),
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
    [create] = [statement for statement in _sqlite_create(GUARDS) if f"CREATE TRIGGER {trigger} " in statement]
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER {trigger}", None)
        try:
            yield
        finally:
            cursor.execute(create, None)


def statements(vendor: str, *, create: bool, guards: _Guards = GUARDS) -> list[str]:
    if vendor == "postgresql":
        return _postgresql_create(guards) if create else _postgresql_drop(guards)
    if vendor == "sqlite":
        return _sqlite_create(guards) if create else _sqlite_drop(guards)
    raise NotImplementedError(f"no release immutability triggers for the {vendor} backend")


def _run(schema_editor: BaseDatabaseSchemaEditor, *, create: bool, guards: _Guards = GUARDS) -> None:
    vendor = schema_editor.connection.vendor
    for statement in statements(vendor, create=create, guards=guards):
        # No parameters: the PL/pgSQL bodies contain '%' placeholders of their own.
        schema_editor.execute(statement, params=None)


def create(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, create=True)


def drop(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, create=False)


def create_status_guards(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """The guards as migrations 0001 to 0007 left them (releases 0001)."""
    _run(schema_editor, create=True, guards=STATUS_GUARDS)


def drop_status_guards(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, create=False, guards=STATUS_GUARDS)
