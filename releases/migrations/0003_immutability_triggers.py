from django.db import migrations

from releases import db_triggers


class Migration(migrations.Migration):
    dependencies = [("releases", "0002_release_builds")]

    operations = [migrations.RunPython(db_triggers.create, db_triggers.drop)]
