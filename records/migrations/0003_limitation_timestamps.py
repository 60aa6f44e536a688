import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("records", "0002_unit_triggers")]

    operations = [
        migrations.AddField(
            model_name="limitation",
            name="created_at",
            field=models.DateTimeField(auto_now_add=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="limitation",
            name="updated_at",
            field=models.DateTimeField(auto_now=True),
        ),
        migrations.AddField(
            model_name="historicallimitation",
            name="created_at",
            field=models.DateTimeField(blank=True, default=django.utils.timezone.now, editable=False),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="historicallimitation",
            name="updated_at",
            field=models.DateTimeField(blank=True, editable=False, default=django.utils.timezone.now),
            preserve_default=False,
        ),
    ]
