"""API tokens stored hashed. A database that held Django REST framework's plain tokens
(`authtoken_token`) keeps each of them working, as its digest, and loses the plain keys: the table
is dropped."""

import hashlib

from django.db import migrations, models
from django.utils import timezone


def hash_plain_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if "authtoken_token" not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("portal", "ApiToken")
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, user_id, created FROM authtoken_token")
        rows = cursor.fetchall()
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=user_id,
            digest=hashlib.sha256(key.encode()).hexdigest(),
            prefix=key[:8],
            created=created or timezone.now(),
        )
        for key, user_id, created in rows
    )
    schema_editor.execute("DROP TABLE authtoken_token")


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("portal", "0001_worker_heartbeat"),
    ]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=models.deletion.CASCADE, related_name="api_token", to="auth.user"
                    ),
                ),
                ("digest", models.CharField(max_length=64, unique=True)),
                ("prefix", models.CharField(max_length=8)),
                ("created", models.DateTimeField()),
            ],
        ),
        migrations.RunPython(hash_plain_tokens, migrations.RunPython.noop),
    ]
