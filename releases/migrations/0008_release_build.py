"""A release's build becomes its own row (`ReleaseBuild`, the release's primary key): the release keeps
what is published, the build its status, claims, heartbeats, progress, log, error and who cut it.

Every existing release gets its build, copied field by field; events and memberships keep naming the
release by its key, so none is rewritten. The immutability triggers are dropped around the change (a
published release may not be updated, and SQLite rebuilds the table to drop columns) and created
again in their new form, which tells a published release by its published_at and guards its build.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from releases import db_triggers

BUILD_FIELDS = (
    "status",
    "created_at",
    "cut_by_id",
    "progress",
    "stage",
    "attempts",
    "celery_task_id",
    "sent_at",
    "build_token",
    "started_at",
    "heartbeat",
    "finished_at",
    "build_log",
    "error",
)
MOVED = ["cut_by" if name == "cut_by_id" else name for name in BUILD_FIELDS if name != "created_at"]


def builds_from_releases(apps, schema_editor):
    Release = apps.get_model("releases", "Release")
    ReleaseBuild = apps.get_model("releases", "ReleaseBuild")
    rows = Release.objects.order_by("pk").values("pk", *BUILD_FIELDS).iterator(chunk_size=500)
    ReleaseBuild.objects.bulk_create(
        (ReleaseBuild(release_id=row.pop("pk"), **row) for row in rows), batch_size=500
    )


def releases_from_builds(apps, schema_editor):
    Release = apps.get_model("releases", "Release")
    ReleaseBuild = apps.get_model("releases", "ReleaseBuild")
    for row in ReleaseBuild.objects.values("release_id", *BUILD_FIELDS).iterator(chunk_size=500):
        pk = row.pop("release_id")
        row.pop("created_at")
        Release.objects.filter(pk=pk).update(**row)


class Migration(migrations.Migration):
    dependencies = [
        ("releases", "0007_releaserecord_no_record_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(db_triggers.drop_status_guards, db_triggers.create_status_guards),
        migrations.CreateModel(
            name="ReleaseBuild",
            fields=[
                (
                    "release",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="build",
                        serialize=False,
                        to="releases.release",
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("requested", "Requested"),
                            ("building", "Building"),
                            ("published", "Published"),
                            ("failed", "Failed"),
                        ],
                        db_index=True,
                        default="requested",
                        max_length=20,
                    ),
                ),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now, help_text="When it was cut.")),
                ("progress", models.PositiveSmallIntegerField(default=0, help_text="Percent of the build done.")),
                ("stage", models.CharField(blank=True, help_text="What the build is doing now.", max_length=200)),
                (
                    "attempts",
                    models.PositiveSmallIntegerField(default=0, help_text="How many times a worker claimed the build."),
                ),
                (
                    "celery_task_id",
                    models.CharField(blank=True, help_text="The id of the last message sent for the build.", max_length=64),
                ),
                (
                    "sent_at",
                    models.DateTimeField(blank=True, help_text="When the last build message was sent.", null=True),
                ),
                (
                    "build_token",
                    models.CharField(blank=True, help_text="Identifies the claim of the build now running.", max_length=32),
                ),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("heartbeat", models.DateTimeField(blank=True, help_text="Last sign of life of the build.", null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("build_log", models.TextField(blank=True)),
                ("error", models.TextField(blank=True)),
                (
                    "cut_by",
                    models.ForeignKey(
                        blank=True,
                        help_text="The release manager who cut it (none for an external release).",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-release_id"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["requested", "building", "published", "failed"])),
                        name="releasebuild_status_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("progress__lte", 100)), name="releasebuild_progress_at_most_100"
                    ),
                ],
            },
        ),
        migrations.RunPython(builds_from_releases, releases_from_builds),
        migrations.RemoveConstraint(model_name="release", name="release_status_valid"),
        migrations.RemoveConstraint(model_name="release", name="release_progress_at_most_100"),
        migrations.RemoveConstraint(model_name="release", name="release_published_has_id"),
        *(migrations.RemoveField(model_name="release", name=name) for name in MOVED),
        migrations.AlterField(
            model_name="release",
            name="published_at",
            field=models.DateTimeField(blank=True, db_index=True, null=True),
        ),
        migrations.AddConstraint(
            model_name="release",
            constraint=models.CheckConstraint(
                condition=models.Q(("published_at__isnull", True), ("release_id__isnull", False), _connector="OR"),
                name="release_published_has_id",
            ),
        ),
        migrations.RunPython(db_triggers.create, db_triggers.drop),
    ]
