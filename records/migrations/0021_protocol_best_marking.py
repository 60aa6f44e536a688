"""Whether a protocol's source marks a best value, so that the pages say whose a best mark is."""

from django.db import migrations, models

from common.schema import columns_add, columns_drop

FIELD = dict(
    blank=True,
    choices=[
        ("best", "the source marks its best values"),
        ("none", "the source marks no best"),
        ("other", "the source's marks mean something else than best"),
        ("unseen", "the stored copy does not show the source's marks"),
    ],
    db_default="",
    default="",
    help_text=(
        "Whether the source marks a best value (bold, a star); blank when not recorded. The pages say so beside "
        "the portal's own best marks."
    ),
    max_length=10,
)
TABLES = ("protocol", "historicalprotocol")


def add(apps, schema_editor):
    columns_add(apps, schema_editor, app="records", models=TABLES, fields=("best_marking",))


def drop(apps, schema_editor):
    columns_drop(apps, schema_editor, app="records", models=TABLES, fields=("best_marking",))


class Migration(migrations.Migration):
    dependencies = [("records", "0020_summary_on_source_changes")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(model_name=name, name="best_marking", field=models.CharField(**FIELD))
                for name in TABLES
            ],
        ),
        migrations.RunPython(add, drop),
    ]
