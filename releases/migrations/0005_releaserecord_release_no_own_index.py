"""ReleaseRecord.release loses its own index: the unique constraint's index (release, record_type,
stable_id) starts with it and serves every lookup by release, so a build's memberships grow one
index less.

By hand rather than as makemigrations wrote it: on SQLite an AlterField remakes the table, which
would drop the immutability triggers of migration 0003 with it. Only the index is dropped here (and
created again on the way back); the model state changes as the AlterField says.
"""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "releases_releaserecord_release_id_48fc871f"  # Django's name for the foreign key's index (0001)


class Migration(migrations.Migration):
    dependencies = [
        ("releases", "0004_release_events"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    sql=f'DROP INDEX IF EXISTS "{INDEX}"',
                    reverse_sql=f'CREATE INDEX "{INDEX}" ON "releases_releaserecord" ("release_id")',
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="releaserecord",
                    name="release",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="records",
                        to="releases.release",
                    ),
                ),
            ],
        ),
    ]
