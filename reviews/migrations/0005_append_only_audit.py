"""Review events are append-only (database triggers on both backends; common.append_only)."""

from django.db import migrations

from common import append_only

TABLES = ("reviews_reviewevent",)


class Migration(migrations.Migration):
    dependencies = [("reviews", "0004_corrections_moved")]

    operations = [migrations.RunPython(append_only.create_for(*TABLES), append_only.drop_for(*TABLES))]
