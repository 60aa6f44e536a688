"""The releases' first tables in one step: the models' tables as makemigrations writes them from
scratch (constraints in each CreateModel), then the triggers: published releases immutable, events
and fixity checks append-only."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from common import append_only
from releases import db_triggers

# The append-only audit tables.
AUDIT_TABLES = ("releases_releaseevent", "releases_releasefixitycheck")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('auth', '__first__'),
    ]

    operations = [
        migrations.CreateModel(
            name='Release',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('release_id', models.CharField(blank=True, max_length=40, null=True, unique=True)),
                ('release_date', models.DateField(help_text="The date the release was cut (UTC); the bag's Bagging-Date.")),
                ('status', models.CharField(choices=[('requested', 'Requested'), ('building', 'Building'), ('published', 'Published'), ('failed', 'Failed')], db_index=True, default='requested', max_length=20)),
                ('is_external', models.BooleanField(default=False, help_text='Recorded from a published record page; this portal does not hold its files.')),
                ('note', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('published_at', models.DateTimeField(blank=True, null=True)),
                ('progress', models.PositiveSmallIntegerField(default=0, help_text='Percent of the build done.')),
                ('stage', models.CharField(blank=True, help_text='What the build is doing now.', max_length=200)),
                ('counts', models.JSONField(blank=True, default=dict, help_text='rows per table, records per type, and records added, removed and changed per type.')),
                ('payload_sha256', models.CharField(blank=True, help_text='sha256 of manifest-sha256.txt; the release id holds its first 12 digits.', max_length=64)),
                ('catalogue_watermark', models.CharField(blank=True, help_text='Fingerprint of the catalogue the release was built from (no-change cuts).', max_length=64)),
                ('attempts', models.PositiveSmallIntegerField(default=0, help_text='How many times a worker claimed the build.')),
                ('celery_task_id', models.CharField(blank=True, help_text='The id of the last message sent for the build.', max_length=64)),
                ('sent_at', models.DateTimeField(blank=True, help_text='When the last build message was sent.', null=True)),
                ('build_token', models.CharField(blank=True, help_text='Identifies the claim of the build now running.', max_length=32)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('heartbeat', models.DateTimeField(blank=True, help_text='Last sign of life of the build.', null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('build_log', models.TextField(blank=True)),
                ('error', models.TextField(blank=True)),
                ('cut_by', models.ForeignKey(blank=True, help_text='The release manager who cut it (none for an external release).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('previous', models.ForeignKey(blank=True, help_text='The newest published release when this one was published: the base of its change summary.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='releases.release')),
            ],
            options={
                'ordering': ['-release_date', '-id'],
                'permissions': [('cut_release', 'Can cut a new release')],
                'get_latest_by': ['release_date', 'id'],
                'constraints': [models.CheckConstraint(condition=models.Q(('status__in', ['requested', 'building', 'published', 'failed'])), name='release_status_valid'), models.CheckConstraint(condition=models.Q(('progress__lte', 100)), name='release_progress_at_most_100'), models.CheckConstraint(condition=models.Q(models.Q(('status', 'published'), _negated=True), models.Q(('published_at__isnull', False), ('release_id__isnull', False)), _connector='OR'), name='release_published_has_id')],
            },
        ),
        migrations.CreateModel(
            name='ReleaseEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('from_status', models.CharField(blank=True, help_text='Blank for the cut that created the release.', max_length=20)),
                ('to_status', models.CharField(choices=[('requested', 'Requested'), ('building', 'Building'), ('published', 'Published'), ('failed', 'Failed')], max_length=20)),
                ('attempt', models.PositiveSmallIntegerField(default=0, help_text='The build attempt the change belongs to.')),
                ('reason', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('release', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='events', to='releases.release')),
            ],
            options={
                'ordering': ['created_at', 'id'],
            },
        ),
        migrations.CreateModel(
            name='ReleaseFile',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(help_text="Path inside the bag (data/...), or the archive's file name.", max_length=300)),
                ('kind', models.CharField(choices=[('payload', 'Payload (data/)'), ('tag', 'Bag tag file'), ('archive', 'Archive of the whole bag')], max_length=10)),
                ('bytes', models.BigIntegerField()),
                ('sha256', models.CharField(max_length=64)),
                ('sha512', models.CharField(max_length=128)),
                ('release', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='files', to='releases.release')),
            ],
            options={
                'ordering': ['release_id', 'kind', 'name'],
                'constraints': [models.UniqueConstraint(fields=('release', 'name'), name='releasefile_unique_name'), models.CheckConstraint(condition=models.Q(('kind__in', ['payload', 'tag', 'archive'])), name='releasefile_kind_valid'), models.CheckConstraint(condition=models.Q(('bytes__gte', 0)), name='releasefile_bytes_not_negative')],
            },
        ),
        migrations.CreateModel(
            name='ReleaseFixityCheck',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('checked_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('intact', models.BooleanField()),
                ('problems', models.TextField(blank=True, help_text='One line per difference found.')),
                ('files_checked', models.PositiveIntegerField(default=0)),
                ('release', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='fixity_checks', to='releases.release')),
            ],
            options={
                'ordering': ['-checked_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='ReleaseRecord',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('record_type', models.CharField(max_length=40)),
                ('stable_id', models.CharField(max_length=150)),
                ('content_sha256', models.CharField(blank=True, max_length=64)),
                ('release', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='records', to='releases.release')),
            ],
            options={
                'ordering': ['record_type', 'stable_id'],
                'indexes': [models.Index(fields=['record_type', 'stable_id'], name='releases_re_record__4b6e11_idx')],
                'constraints': [models.UniqueConstraint(fields=('release', 'record_type', 'stable_id'), name='releaserecord_unique')],
            },
        ),
        migrations.RunPython(db_triggers.create_status_guards, db_triggers.drop_status_guards),
        migrations.RunPython(append_only.create_for(*AUDIT_TABLES), append_only.drop_for(*AUDIT_TABLES)),
    ]
