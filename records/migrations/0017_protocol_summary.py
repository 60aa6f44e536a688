from django.db import migrations, models

from records import summary_triggers


class Migration(migrations.Migration):

    dependencies = [
        ('records', '0016_search_name_vector'),
    ]

    operations = [
        migrations.CreateModel(
            name='ProtocolChanges',
            fields=[
                ('protocol', models.OneToOneField(db_constraint=False, on_delete=models.deletion.DO_NOTHING, primary_key=True, related_name='+', serialize=False, to='records.protocol')),
                ('number', models.BigIntegerField(default=0)),
            ],
            options={'verbose_name_plural': 'protocol changes'},
        ),
        migrations.CreateModel(
            name='ProtocolSummary',
            fields=[
                ('protocol', models.OneToOneField(db_constraint=False, on_delete=models.deletion.DO_NOTHING, primary_key=True, related_name='+', serialize=False, to='records.protocol')),
                ('number', models.BigIntegerField(help_text="The protocol's ProtocolChanges.number the summary was computed at.")),
                ('data', models.TextField(help_text='The summary as JSON (records.protocol_summary).')),
            ],
            options={'verbose_name_plural': 'protocol summaries'},
        ),
        migrations.RunPython(summary_triggers.create, summary_triggers.drop),
    ]
