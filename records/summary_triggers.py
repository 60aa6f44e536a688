"""Triggers that count the writes changing a protocol's comparisons (records.models.summary), on both backends.

A protocol's summary (records.protocol_summary) is read off its evaluations and results, the
review state of the evaluations they repeat (an original may be another protocol's), the names
and order of the configurations and datasets they name, and the work and version each source is
(which printings are one measurement). Every write to one of those rows
raises `records_protocolchanges.number` of each protocol concerned, in the writer's transaction:
a summary computed at another number is not current. PostgreSQL raises it once a statement
(transition tables: a bulk insert of ten thousand results is one upsert a protocol); SQLite once
a row. A write that changes nothing a summary reads (an evaluation's quote) raises it too: the
next reader computes the summary again, at the cost of one read of the protocol's rows.

SQLite drops a table's triggers when a migration rebuilds the table (most ALTERs do): such a
migration of one of these five tables runs `drop` before and `create` after, as it does for
records.db_triggers (tests/records/test_protocol_summary.py checks they are all there).
"""

from __future__ import annotations

from typing import Any

TABLE = "records_protocolchanges"

# (table, event, the SELECT of the protocols concerned: PostgreSQL's, from the transition tables
# `new_rows` / `old_rows`; SQLite's, from NEW / OLD)
_REPEATS_OF = "SELECT e.protocol_id FROM records_evaluation e WHERE e.repeats_id IN (SELECT id FROM {rows})"
_OF_RESULTS = "SELECT e.protocol_id FROM records_evaluation e WHERE e.id IN (SELECT evaluation_id FROM {rows})"
POSTGRESQL_SOURCES: list[tuple[str, str, str]] = [
    ("records_evaluation", "INSERT", "SELECT protocol_id FROM new_rows"),
    (
        "records_evaluation",
        "UPDATE",
        "SELECT protocol_id FROM old_rows UNION SELECT protocol_id FROM new_rows UNION "
        + _REPEATS_OF.format(rows="new_rows"),
    ),
    ("records_evaluation", "DELETE", "SELECT protocol_id FROM old_rows UNION " + _REPEATS_OF.format(rows="old_rows")),
    ("records_result", "INSERT", _OF_RESULTS.format(rows="new_rows")),
    (
        "records_result",
        "UPDATE",
        _OF_RESULTS.format(rows="old_rows") + " UNION " + _OF_RESULTS.format(rows="new_rows"),
    ),
    ("records_result", "DELETE", _OF_RESULTS.format(rows="old_rows")),
    (
        "records_configuration",
        "UPDATE",
        "SELECT e.protocol_id FROM records_evaluation e WHERE e.configuration_id IN (SELECT id FROM new_rows)",
    ),
    (
        "records_dataset",
        "UPDATE",
        "SELECT e.protocol_id FROM records_evaluation e WHERE e.dataset_id IN (SELECT id FROM new_rows)",
    ),
    (
        "records_source",
        "UPDATE",
        "SELECT e.protocol_id FROM records_evaluation e WHERE e.source_id IN (SELECT id FROM new_rows) "
        "OR e.original_source_id IN (SELECT id FROM new_rows)",
    ),
]
SQLITE_SOURCES: list[tuple[str, str, str]] = [
    ("records_evaluation", "INSERT", "SELECT NEW.protocol_id AS p"),
    (
        "records_evaluation",
        "UPDATE",
        "SELECT OLD.protocol_id AS p UNION SELECT NEW.protocol_id UNION "
        "SELECT protocol_id FROM records_evaluation WHERE repeats_id = NEW.id",
    ),
    (
        "records_evaluation",
        "DELETE",
        "SELECT OLD.protocol_id AS p UNION SELECT protocol_id FROM records_evaluation WHERE repeats_id = OLD.id",
    ),
    ("records_result", "INSERT", "SELECT protocol_id AS p FROM records_evaluation WHERE id = NEW.evaluation_id"),
    (
        "records_result",
        "UPDATE",
        "SELECT protocol_id AS p FROM records_evaluation WHERE id IN (OLD.evaluation_id, NEW.evaluation_id)",
    ),
    ("records_result", "DELETE", "SELECT protocol_id AS p FROM records_evaluation WHERE id = OLD.evaluation_id"),
    (
        "records_configuration",
        "UPDATE",
        "SELECT protocol_id AS p FROM records_evaluation WHERE configuration_id = NEW.id",
    ),
    ("records_dataset", "UPDATE", "SELECT protocol_id AS p FROM records_evaluation WHERE dataset_id = NEW.id"),
    (
        "records_source",
        "UPDATE",
        "SELECT protocol_id AS p FROM records_evaluation WHERE source_id = NEW.id OR original_source_id = NEW.id",
    ),
]


def _name(table: str, event: str) -> str:
    return f"{table}_summary_{event.lower()}"


def _upsert(protocols: str, *, named: str) -> str:
    # Each protocol once, in one order (two writers raising the same protocols cannot deadlock);
    # SQLite's parser needs the WHERE before ON CONFLICT.
    return (
        f"INSERT INTO {TABLE} (protocol_id, number) SELECT p, 1 FROM ({protocols}) AS {named} "
        f"WHERE p IS NOT NULL GROUP BY p ORDER BY p "
        f"ON CONFLICT (protocol_id) DO UPDATE SET number = {TABLE}.number + 1"
    )


def _postgresql(table: str, event: str, protocols: str) -> str:
    name = _name(table, event)
    transition = {
        "INSERT": "NEW TABLE AS new_rows",
        "UPDATE": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        "DELETE": "OLD TABLE AS old_rows",
    }[event]
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$ BEGIN {_upsert(protocols, named='concerned(p)')}; RETURN NULL; END $$ "
        f"LANGUAGE plpgsql;\n"
        f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {transition} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {name}();"
    )


def _sqlite(table: str, event: str, protocols: str) -> str:
    # SQLite cannot name a subquery's columns: its first SELECT names `p`.
    return f"CREATE TRIGGER {_name(table, event)} AFTER {event} ON {table} BEGIN {_upsert(protocols, named='concerned')}; END"


def statement_sources(vendor: str) -> list[tuple[str, str, str]]:
    """The backend's (table, event, protocols concerned) of each trigger."""
    if vendor == "postgresql":
        return POSTGRESQL_SOURCES
    if vendor == "sqlite":
        return SQLITE_SOURCES
    raise NotImplementedError(f"no summary triggers for the {vendor} backend")


def statements(vendor: str, *, create: bool) -> list[str]:
    sources = statement_sources(vendor)
    if vendor == "postgresql":
        if create:
            return [_postgresql(*source) for source in sources]
        return [
            f"DROP TRIGGER IF EXISTS {_name(table, event)} ON {table}; DROP FUNCTION IF EXISTS {_name(table, event)}();"
            for table, event, _ in sources
        ]
    if create:
        return [_sqlite(*source) for source in sources]
    return [f"DROP TRIGGER IF EXISTS {_name(table, event)}" for table, event, _ in sources]


def create(apps: Any, schema_editor: Any) -> None:
    for statement in statements(schema_editor.connection.vendor, create=True):
        schema_editor.execute(statement, params=None)


def drop(apps: Any, schema_editor: Any) -> None:
    for statement in statements(schema_editor.connection.vendor, create=False):
        schema_editor.execute(statement, params=None)
