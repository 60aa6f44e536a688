"""Rules a CHECK constraint cannot state because they span tables, as triggers on both backends.

A result's unit must equal its protocol's metric unit, whichever of the three rows changes.
Both backends report a violation as an integrity error.
"""

UNIT_MESSAGE = "result unit must match the metric unit of its protocol"

POSTGRESQL_CREATE = f"""
CREATE OR REPLACE FUNCTION records_result_unit_check() RETURNS trigger AS $$
DECLARE expected varchar;
BEGIN
    SELECT p.metric_unit INTO expected
      FROM records_evaluation e JOIN records_protocol p ON p.id = e.protocol_id
     WHERE e.id = NEW.evaluation_id;
    IF NEW.unit IS DISTINCT FROM expected THEN
        RAISE EXCEPTION '{UNIT_MESSAGE} (% <> %)', NEW.unit, expected USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER records_result_unit_matches BEFORE INSERT OR UPDATE OF unit, evaluation_id ON records_result
    FOR EACH ROW EXECUTE FUNCTION records_result_unit_check();

CREATE OR REPLACE FUNCTION records_protocol_unit_check() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM records_result r JOIN records_evaluation e ON e.id = r.evaluation_id
                WHERE e.protocol_id = NEW.id AND r.unit <> NEW.metric_unit) THEN
        RAISE EXCEPTION '{UNIT_MESSAGE} (protocol has results in another unit)' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER records_protocol_unit_matches BEFORE UPDATE OF metric_unit ON records_protocol
    FOR EACH ROW EXECUTE FUNCTION records_protocol_unit_check();

CREATE OR REPLACE FUNCTION records_evaluation_unit_check() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM records_result r, records_protocol p
                WHERE r.evaluation_id = NEW.id AND p.id = NEW.protocol_id AND r.unit <> p.metric_unit) THEN
        RAISE EXCEPTION '{UNIT_MESSAGE} (evaluation moved to a protocol with another unit)' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER records_evaluation_unit_matches BEFORE UPDATE OF protocol_id ON records_evaluation
    FOR EACH ROW EXECUTE FUNCTION records_evaluation_unit_check();
"""

POSTGRESQL_DROP = """
DROP TRIGGER IF EXISTS records_result_unit_matches ON records_result;
DROP TRIGGER IF EXISTS records_protocol_unit_matches ON records_protocol;
DROP TRIGGER IF EXISTS records_evaluation_unit_matches ON records_evaluation;
DROP FUNCTION IF EXISTS records_result_unit_check();
DROP FUNCTION IF EXISTS records_protocol_unit_check();
DROP FUNCTION IF EXISTS records_evaluation_unit_check();
"""

_SQLITE_RESULT_MISMATCH = """NEW.unit IS NOT (SELECT p.metric_unit FROM records_evaluation e
    JOIN records_protocol p ON p.id = e.protocol_id WHERE e.id = NEW.evaluation_id)"""
_SQLITE_RAISE = f"SELECT RAISE(ABORT, 'CHECK constraint failed: {UNIT_MESSAGE}');"

SQLITE_CREATE = [
    f"""CREATE TRIGGER records_result_unit_insert BEFORE INSERT ON records_result
        WHEN {_SQLITE_RESULT_MISMATCH} BEGIN {_SQLITE_RAISE} END""",
    f"""CREATE TRIGGER records_result_unit_update BEFORE UPDATE OF unit, evaluation_id ON records_result
        WHEN {_SQLITE_RESULT_MISMATCH} BEGIN {_SQLITE_RAISE} END""",
    f"""CREATE TRIGGER records_protocol_unit_update BEFORE UPDATE OF metric_unit ON records_protocol
        WHEN EXISTS (SELECT 1 FROM records_result r JOIN records_evaluation e ON e.id = r.evaluation_id
                      WHERE e.protocol_id = NEW.id AND r.unit <> NEW.metric_unit)
        BEGIN {_SQLITE_RAISE} END""",
    f"""CREATE TRIGGER records_evaluation_unit_update BEFORE UPDATE OF protocol_id ON records_evaluation
        WHEN EXISTS (SELECT 1 FROM records_result r, records_protocol p
                      WHERE r.evaluation_id = NEW.id AND p.id = NEW.protocol_id AND r.unit <> p.metric_unit)
        BEGIN {_SQLITE_RAISE} END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS records_result_unit_insert",
    "DROP TRIGGER IF EXISTS records_result_unit_update",
    "DROP TRIGGER IF EXISTS records_protocol_unit_update",
    "DROP TRIGGER IF EXISTS records_evaluation_unit_update",
]


def _run(schema_editor, *, postgresql: str, sqlite: list[str]) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(postgresql, params=None)
    elif vendor == "sqlite":
        for statement in sqlite:
            schema_editor.execute(statement)
    else:
        raise NotImplementedError(f"no unit triggers for the {vendor} backend")


def create(apps, schema_editor) -> None:
    _run(schema_editor, postgresql=POSTGRESQL_CREATE, sqlite=SQLITE_CREATE)


def drop(apps, schema_editor) -> None:
    _run(schema_editor, postgresql=POSTGRESQL_DROP, sqlite=SQLITE_DROP)


def sqlite_off(apps, schema_editor) -> None:
    """For a migration that rebuilds these tables on SQLite: the unit triggers name the other tables,
    so they would stop the rebuild's renames, and the rebuild would drop them anyway. `sqlite_on`
    creates them again once the tables are rebuilt (PostgreSQL alters tables in place and keeps them)."""
    if schema_editor.connection.vendor == "sqlite":
        drop(apps, schema_editor)


def sqlite_on(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "sqlite":
        create(apps, schema_editor)
