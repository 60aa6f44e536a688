"""A protocol's metric scale, read from its unit's words for every existing protocol (and each of
its history rows) by the one parser the import and the forms use (records.rules.units)."""

from django.db import migrations, models
from django.db.models import Q

from common.schema import columns_add, columns_drop
from records.rules.units import Scale, scale_read

FIELD = dict(
    blank=True,
    choices=Scale.choices,
    db_default="",
    default="",
    max_length=10,
    help_text=(
        "How the values are printed, so that one metric on different scales compares: blank reads it from "
        "the unit's words (\"MCC x 100\": x 100; \"accuracy (%)\": percent; \"MCC\": the plain scale; \"minute\": raw units)."
    ),
)
TABLES = ("protocol", "historicalprotocol")
CONSTRAINT = models.CheckConstraint(
    condition=Q(metric_scale__in=Scale.values),
    name="protocol_scale_valid",
    violation_error_code="metric_scale",
    violation_error_message="Use fraction, percent, x100, per_mille or raw.",
)


def add_columns(apps, schema_editor):
    """One ALTER TABLE each (common.schema: the tables' triggers stay), then every protocol's scale
    read from its unit; the CHECK constraint is PostgreSQL's only until SQLite next rebuilds the
    table, and Protocol.save() fills the scale on both."""
    columns_add(apps, schema_editor, app="records", models=TABLES, fields=("metric_scale",))
    for name in TABLES:
        model = apps.get_model("records", name)
        rows = model.objects.values_list("pk", "metric_unit", "metric_name", "metric_short_name")
        by_scale: dict[str, list[int]] = {}
        for pk, unit, name_, short_name in rows.iterator():
            by_scale.setdefault(scale_read(unit=unit, metric_names=(name_, short_name)).scale, []).append(pk)
        for scale, pks in by_scale.items():
            for start in range(0, len(pks), 500):
                model.objects.filter(pk__in=pks[start : start + 500]).update(metric_scale=scale)
    if schema_editor.connection.vendor != "sqlite":
        schema_editor.add_constraint(apps.get_model("records", "protocol"), CONSTRAINT)


def drop_columns(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        schema_editor.remove_constraint(apps.get_model("records", "protocol"), CONSTRAINT)
    columns_drop(apps, schema_editor, app="records", models=TABLES, fields=("metric_scale",))


class Migration(migrations.Migration):
    dependencies = [("records", "0018_result_quote_mismatch_reason")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                *(
                    migrations.AddField(model_name=name, name="metric_scale", field=models.CharField(**FIELD))
                    for name in TABLES
                ),
                migrations.AddConstraint(model_name="protocol", constraint=CONSTRAINT),
            ],
        ),
        migrations.RunPython(add_columns, drop_columns),
    ]
