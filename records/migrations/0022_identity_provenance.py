"""Identity claims say who makes them: every alias, task equivalence and copy-of link is stated by
a source (its locator and words) or inferred by a curator (a reason), and aliases and equivalences
are reviewed like any record. One model may hold several spellings of one name, each with its
source. What is catalogued so far: a copy is taken as stated by the source that reports it (it
names its original), an alias with no source as a curator's inference (the reason says so);
aliases and equivalences start proposed (nobody checked them as such).

SQLite rebuilds the evaluation, alias and equivalence tables and their history tables for the new
columns and constraints: the unit and summary triggers step aside while it does, and the history
tables' append-only guards are made again after."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from common import append_only
from records import db_triggers, summary_triggers

REBUILT = ("records_historicalmodelalias", "records_historicaltaskequivalence", "records_historicalevaluation")
NO_SOURCE = "Recorded without the source that prints it, before aliases said who states them."


def triggers_off(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        db_triggers.drop(apps, schema_editor)
        summary_triggers.drop(apps, schema_editor)


def triggers_on(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        db_triggers.create(apps, schema_editor)
        summary_triggers.create(apps, schema_editor)
        append_only.drop_for(*REBUILT)(apps, schema_editor)
        append_only.create_for(*REBUILT)(apps, schema_editor)


def provenance_of_what_is_catalogued(apps, schema_editor):
    Evaluation = apps.get_model("records", "Evaluation")
    ModelAlias = apps.get_model("records", "ModelAlias")
    copies = models.Q(repeats__isnull=False) | models.Q(original_source__isnull=False) | ~models.Q(original_citation="")
    Evaluation.objects.filter(copies).update(original_basis="stated")
    ModelAlias.objects.filter(source__isnull=True).update(basis="inferred", reason=NO_SOURCE)


class Migration(migrations.Migration):
    dependencies = [
        ("records", "0021_protocol_best_marking"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(triggers_off, triggers_on),
        migrations.RemoveConstraint(
            model_name="modelalias",
            name="modelalias_key_unique",
        ),
        migrations.RemoveConstraint(
            model_name="taskequivalence",
            name="taskequivalence_locator_not_empty",
        ),
        migrations.RemoveConstraint(
            model_name="taskequivalence",
            name="taskequivalence_quote_not_empty",
        ),
        migrations.AddField(
            model_name="evaluation",
            name="original_basis",
            field=models.CharField(
                blank=True,
                choices=[("stated", "stated by a source"), ("inferred", "inferred by a curator")],
                db_default="",
                default="",
                help_text="For a copy (a repeat, an original source or citation): stated, the source says whose number it reports (its locator and quote); inferred, a curator concludes it (give the reason). Blank for an original.",
                max_length=10,
                verbose_name="who says it is a copy",
            ),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="original_reason",
            field=models.TextField(
                blank=True,
                db_default="",
                default="",
                help_text="For an inferred copy: why a curator concludes the number is another's.",
                verbose_name="why a curator takes it for a copy",
            ),
        ),
        migrations.AddField(
            model_name="historicalevaluation",
            name="original_basis",
            field=models.CharField(
                blank=True,
                choices=[("stated", "stated by a source"), ("inferred", "inferred by a curator")],
                db_default="",
                default="",
                help_text="For a copy (a repeat, an original source or citation): stated, the source says whose number it reports (its locator and quote); inferred, a curator concludes it (give the reason). Blank for an original.",
                max_length=10,
                verbose_name="who says it is a copy",
            ),
        ),
        migrations.AddField(
            model_name="historicalevaluation",
            name="original_reason",
            field=models.TextField(
                blank=True,
                db_default="",
                default="",
                help_text="For an inferred copy: why a curator concludes the number is another's.",
                verbose_name="why a curator takes it for a copy",
            ),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="basis",
            field=models.CharField(
                choices=[("stated", "stated by a source"), ("inferred", "inferred by a curator")],
                default="stated",
                help_text="Stated: the source prints this name for the model. Inferred: a curator takes it for the model.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="concern",
            field=models.TextField(
                blank=True,
                editable=False,
                help_text="Why the record is excluded from comparison; set by the exclude transition and shown publicly.",
            ),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="last_edited_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="quote",
            field=models.TextField(blank=True, help_text="The source's words that print the name, verbatim."),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="reason",
            field=models.TextField(
                blank=True, help_text="For an inferred alias: why a curator takes it for this model."
            ),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="review_state",
            field=models.CharField(
                choices=[
                    ("proposed", "Proposed"),
                    ("source_checked", "Source checked"),
                    ("excluded", "Excluded from comparison"),
                    ("excluded_recheck", "Excluded from comparison, edited since: re-check pending"),
                ],
                db_index=True,
                default="proposed",
                editable=False,
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="review_state_changed_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="review_state_changed_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="historicalmodelalias",
            name="review_state_changed_by_role",
            field=models.CharField(blank=True, editable=False, max_length=60),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="basis",
            field=models.CharField(
                choices=[("stated", "stated by a source"), ("inferred", "inferred by a curator")],
                default="stated",
                help_text="Stated: a source says they are the same data. Inferred: a curator concludes it.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="concern",
            field=models.TextField(
                blank=True,
                editable=False,
                help_text="Why the record is excluded from comparison; set by the exclude transition and shown publicly.",
            ),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="last_edited_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="reason",
            field=models.TextField(blank=True, help_text="For an inferred equivalence: why a curator concludes it."),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="review_state",
            field=models.CharField(
                choices=[
                    ("proposed", "Proposed"),
                    ("source_checked", "Source checked"),
                    ("excluded", "Excluded from comparison"),
                    ("excluded_recheck", "Excluded from comparison, edited since: re-check pending"),
                ],
                db_index=True,
                default="proposed",
                editable=False,
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="review_state_changed_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="review_state_changed_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="historicaltaskequivalence",
            name="review_state_changed_by_role",
            field=models.CharField(blank=True, editable=False, max_length=60),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="basis",
            field=models.CharField(
                choices=[("stated", "stated by a source"), ("inferred", "inferred by a curator")],
                default="stated",
                help_text="Stated: the source prints this name for the model. Inferred: a curator takes it for the model.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="concern",
            field=models.TextField(
                blank=True,
                editable=False,
                help_text="Why the record is excluded from comparison; set by the exclude transition and shown publicly.",
            ),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="last_edited_by",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="quote",
            field=models.TextField(blank=True, help_text="The source's words that print the name, verbatim."),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="reason",
            field=models.TextField(
                blank=True, help_text="For an inferred alias: why a curator takes it for this model."
            ),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="review_state",
            field=models.CharField(
                choices=[
                    ("proposed", "Proposed"),
                    ("source_checked", "Source checked"),
                    ("excluded", "Excluded from comparison"),
                    ("excluded_recheck", "Excluded from comparison, edited since: re-check pending"),
                ],
                db_index=True,
                default="proposed",
                editable=False,
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="review_state_changed_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="review_state_changed_by",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="modelalias",
            name="review_state_changed_by_role",
            field=models.CharField(blank=True, editable=False, max_length=60),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="basis",
            field=models.CharField(
                choices=[("stated", "stated by a source"), ("inferred", "inferred by a curator")],
                default="stated",
                help_text="Stated: a source says they are the same data. Inferred: a curator concludes it.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="concern",
            field=models.TextField(
                blank=True,
                editable=False,
                help_text="Why the record is excluded from comparison; set by the exclude transition and shown publicly.",
            ),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="last_edited_by",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="reason",
            field=models.TextField(blank=True, help_text="For an inferred equivalence: why a curator concludes it."),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="review_state",
            field=models.CharField(
                choices=[
                    ("proposed", "Proposed"),
                    ("source_checked", "Source checked"),
                    ("excluded", "Excluded from comparison"),
                    ("excluded_recheck", "Excluded from comparison, edited since: re-check pending"),
                ],
                db_index=True,
                default="proposed",
                editable=False,
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="review_state_changed_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="review_state_changed_by",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="taskequivalence",
            name="review_state_changed_by_role",
            field=models.CharField(blank=True, editable=False, max_length=60),
        ),
        migrations.AlterField(
            model_name="historicaltaskequivalence",
            name="locator",
            field=models.CharField(blank=True, max_length=500),
        ),
        migrations.AlterField(
            model_name="historicaltaskequivalence",
            name="quote",
            field=models.TextField(blank=True, help_text="The source's words saying they are the same data, verbatim."),
        ),
        migrations.AlterField(
            model_name="taskequivalence",
            name="locator",
            field=models.CharField(blank=True, max_length=500),
        ),
        migrations.AlterField(
            model_name="taskequivalence",
            name="quote",
            field=models.TextField(blank=True, help_text="The source's words saying they are the same data, verbatim."),
        ),
        migrations.AlterField(
            model_name="taskequivalence",
            name="source",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="task_equivalences",
                to="records.source",
            ),
        ),
        migrations.RunPython(provenance_of_what_is_catalogued, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="modelalias",
            index=models.Index(fields=["key"], name="modelalias_key_idx"),
        ),
        migrations.AddConstraint(
            model_name="evaluation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("original_citation", ""),
                        ("original_source__isnull", True),
                        ("repeats__isnull", True),
                        ("original_basis", ""),
                    ),
                    models.Q(
                        models.Q(
                            ("repeats__isnull", False),
                            ("original_source__isnull", False),
                            models.Q(("original_citation", ""), _negated=True),
                            _connector="OR",
                        ),
                        ("original_basis__in", ["stated", "inferred"]),
                    ),
                    _connector="OR",
                ),
                name="evaluation_copy_has_basis",
                violation_error_code="original_basis",
                violation_error_message="A copy says who states it is one (stated by its source, or inferred by a curator); an original says nothing.",
            ),
        ),
        migrations.AddConstraint(
            model_name="evaluation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("original_basis", "inferred"), _negated=True),
                    models.Q(("original_reason", ""), _negated=True),
                    _connector="OR",
                ),
                name="evaluation_inferred_copy_has_reason",
                violation_error_code="original_reason",
                violation_error_message="A curator's inference that this is a copy says why: give the reason.",
            ),
        ),
        migrations.AddConstraint(
            model_name="modelalias",
            constraint=models.UniqueConstraint(
                fields=("key", "source"),
                name="modelalias_key_source_unique",
                violation_error_message="This source's spelling of the name is already recorded.",
            ),
        ),
        migrations.AddConstraint(
            model_name="modelalias",
            constraint=models.CheckConstraint(
                condition=models.Q(("basis__in", ["stated", "inferred"])),
                name="modelalias_basis_valid",
                violation_error_code="basis",
                violation_error_message="Say who states it: stated (by a source) or inferred (by a curator).",
            ),
        ),
        migrations.AddConstraint(
            model_name="modelalias",
            constraint=models.CheckConstraint(
                condition=models.Q(("basis", "inferred"), ("source__isnull", False), _connector="OR"),
                name="modelalias_stated_has_source",
                violation_error_code="source",
                violation_error_message="A claim a source states names that source; a curator's inference is basis inferred, with a reason.",
            ),
        ),
        migrations.AddConstraint(
            model_name="modelalias",
            constraint=models.CheckConstraint(
                condition=models.Q(("basis", "stated"), models.Q(("reason", ""), _negated=True), _connector="OR"),
                name="modelalias_inferred_has_reason",
                violation_error_code="reason",
                violation_error_message="A curator's inference says why: give the reason.",
            ),
        ),
        migrations.AddConstraint(
            model_name="taskequivalence",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("basis", "inferred"),
                    models.Q(models.Q(("locator", ""), _negated=True), models.Q(("quote", ""), _negated=True)),
                    _connector="OR",
                ),
                name="taskequivalence_stated_has_words",
                violation_error_code="quote",
                violation_error_message="A source's statement gives its locator and its words, verbatim.",
            ),
        ),
        migrations.AddConstraint(
            model_name="taskequivalence",
            constraint=models.CheckConstraint(
                condition=models.Q(("basis__in", ["stated", "inferred"])),
                name="taskequivalence_basis_valid",
                violation_error_code="basis",
                violation_error_message="Say who states it: stated (by a source) or inferred (by a curator).",
            ),
        ),
        migrations.AddConstraint(
            model_name="taskequivalence",
            constraint=models.CheckConstraint(
                condition=models.Q(("basis", "inferred"), ("source__isnull", False), _connector="OR"),
                name="taskequivalence_stated_has_source",
                violation_error_code="source",
                violation_error_message="A claim a source states names that source; a curator's inference is basis inferred, with a reason.",
            ),
        ),
        migrations.AddConstraint(
            model_name="taskequivalence",
            constraint=models.CheckConstraint(
                condition=models.Q(("basis", "stated"), models.Q(("reason", ""), _negated=True), _connector="OR"),
                name="taskequivalence_inferred_has_reason",
                violation_error_code="reason",
                violation_error_message="A curator's inference says why: give the reason.",
            ),
        ),
        migrations.RunPython(triggers_on, triggers_off),
    ]
