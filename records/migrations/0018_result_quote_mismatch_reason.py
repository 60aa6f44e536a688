from django.db import migrations, models

FIELD = dict(
    blank=True,
    db_default="",
    default="",
    help_text=(
        "Only when the evaluation's quote does not print this value: why the value is right all the same "
        '(e.g. "the quote is the caption; the value is in the table body it introduces"). Blank otherwise.'
    ),
    verbose_name="why the quote does not print it",
)
TABLES = ("result", "historicalresult")


def add_columns(apps, schema_editor):
    """On SQLite one ALTER TABLE ... ADD COLUMN each: Django would rebuild the tables, dropping the
    triggers on them (the unit and summary triggers, the history's append-only guard)."""
    for name in TABLES:
        model = apps.get_model("records", name)
        field = model._meta.get_field("quote_mismatch_reason")
        if schema_editor.connection.vendor == "sqlite":
            schema_editor.execute(
                f"ALTER TABLE {schema_editor.quote_name(model._meta.db_table)} "
                "ADD COLUMN quote_mismatch_reason text NOT NULL DEFAULT ''"
            )
        else:
            schema_editor.add_field(model, field)


def drop_columns(apps, schema_editor):
    for name in TABLES:
        model = apps.get_model("records", name)
        table = schema_editor.quote_name(model._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN quote_mismatch_reason")


class Migration(migrations.Migration):
    dependencies = [("records", "0017_protocol_summary")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(model_name=name, name="quote_mismatch_reason", field=models.TextField(**FIELD))
                for name in TABLES
            ],
        ),
        migrations.RunPython(add_columns, drop_columns),
    ]
