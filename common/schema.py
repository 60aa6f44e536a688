"""Schema changes that keep a table's triggers on SQLite.

Django adds a column on SQLite by rebuilding the table, which drops the triggers on it (the unit
and summary triggers, the history's append-only guard). `columns_add` adds each with one
`ALTER TABLE ... ADD COLUMN` there instead (a column with a default or null), and as Django does on
PostgreSQL. A migration runs it from `RunPython`, with the fields in its state operations.
"""

from __future__ import annotations

from typing import Any


def columns_add(apps: Any, schema_editor: Any, *, app: str, models: tuple[str, ...], fields: tuple[str, ...]) -> None:
    for name in models:
        model = apps.get_model(app, name)
        for field_name in fields:
            field = model._meta.get_field(field_name)
            if schema_editor.connection.vendor != "sqlite":
                schema_editor.add_field(model, field)
                continue
            definition, params = schema_editor.column_sql(model, field, include_default=True)
            schema_editor.execute(
                f"ALTER TABLE {schema_editor.quote_name(model._meta.db_table)} "
                f"ADD COLUMN {schema_editor.quote_name(field.column)} {definition}",
                params,
            )


def columns_drop(apps: Any, schema_editor: Any, *, app: str, models: tuple[str, ...], fields: tuple[str, ...]) -> None:
    for name in models:
        model = apps.get_model(app, name)
        for field_name in fields:
            column = model._meta.get_field(field_name).column
            schema_editor.execute(
                f"ALTER TABLE {schema_editor.quote_name(model._meta.db_table)} DROP COLUMN {schema_editor.quote_name(column)}"
            )
