from django.db import migrations

from records import db_triggers


class Migration(migrations.Migration):
    dependencies = [("records", "0001_initial")]

    operations = [migrations.RunPython(db_triggers.create, db_triggers.drop)]
