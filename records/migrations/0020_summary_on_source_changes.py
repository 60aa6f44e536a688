"""A protocol's summary is no longer current once a source its evaluations cite changes (its work
or version decides which printings are one measurement): every summary trigger again, with the
source's."""

from django.db import migrations

from records import summary_triggers


def recreate(apps, schema_editor):
    summary_triggers.drop(apps, schema_editor)
    summary_triggers.create(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("records", "0019_protocol_metric_scale")]

    operations = [migrations.RunPython(recreate, recreate)]
