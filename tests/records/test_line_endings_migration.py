"""records 0012 rewrites text stored with CRLF or lone CR line endings (or whitespace around it) in
its canonical form, with a history row giving its own reason, and reopens no review."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

from common.models import Version
from records.models import Evaluation, ImportSnapshot, Limitation, Protocol
from reviews.models import ReviewEvent, ReviewState
from tests.factories import DatasetFactory, EvaluationFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

migration = importlib.import_module("records.migrations.0012_text_line_endings")


def run_migration() -> None:
    """The migration's function with the models as they were at the migration (the loader's state)."""
    apps = MigrationLoader(connection).project_state(("records", "0012_text_line_endings")).apps
    migration.canonical_text(apps, SimpleNamespace(connection=connection))


def store_raw(table: str, pk: int, **columns: str) -> None:
    """Write text as an older portal stored it: past record_save, straight into the row."""
    assignments = ", ".join(f"{name} = %s" for name in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {assignments} WHERE id = %s", [*columns.values(), pk])


def test_it_rewrites_crlf_text_with_lf_and_a_history_row_of_its_own_without_reopening(curator):
    evaluation = ResultFactory(evaluation=EvaluationFactory(quote="one")).evaluation
    apply_transitions(evaluation, "check_source")
    store_raw(
        "records_evaluation", evaluation.pk, quote="First line.\r\nSecond line.\rThird line.\r\n", setup=" one GPU "
    )
    untouched = EvaluationFactory(quote="Already\nin its form.")
    rows, untouched_rows, events = evaluation.history.count(), untouched.history.count(), ReviewEvent.objects.count()
    version = Version.objects.get(name="catalogue").number

    run_migration()

    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert saved.quote.encode() == b"First line.\nSecond line.\nThird line."
    assert saved.setup == "one GPU"
    assert saved.review_state == ReviewState.SOURCE_CHECKED and ReviewEvent.objects.count() == events
    assert saved.history.count() == rows + 1
    latest, before = saved.history.all()[:2]
    assert (latest.history_type, latest.history_user, latest.history_change_reason) == ("~", None, migration.REASON)
    assert sorted(change.field for change in latest.diff_against(before).changes) == ["quote", "setup"]
    assert untouched.history.count() == untouched_rows
    assert Version.objects.get(name="catalogue").number == version + 1


def test_a_protocol_s_history_row_keeps_its_datasets_and_a_second_run_writes_nothing():
    evaluation = EvaluationFactory()
    protocol = evaluation.protocol
    protocol.datasets.set([DatasetFactory(), DatasetFactory()])
    protocol.save()  # a history row with the datasets, as an edit through record_save writes
    store_raw("records_protocol", protocol.pk, summary="What it measures,\r\nand how.")
    store_raw("records_limitation", Limitation.objects.create(protocol=protocol, position=1, text="x").pk, text="a\rb")

    run_migration()

    protocol.refresh_from_db()
    assert protocol.summary == "What it measures,\nand how."
    assert Limitation.objects.get(protocol=protocol).text == "a\nb"
    latest, before = protocol.history.all()[:2]
    assert latest.history_change_reason == migration.REASON
    assert sorted(latest.datasets.values_list("dataset_id", flat=True)) == sorted(
        protocol.datasets.values_list("pk", flat=True)
    )
    # metric_scale postdates the migration: the row its frozen model writes takes the column's default
    changed = [change.field for change in latest.diff_against(before).changes if change.field != "metric_scale"]
    assert changed == ["summary"]
    counts = (Protocol.history.count(), Limitation.history.count(), Version.objects.get(name="catalogue").number)

    run_migration()

    assert (Protocol.history.count(), Limitation.history.count()) == counts[:2]
    assert Version.objects.get(name="catalogue").number == counts[2]


def test_it_rewrites_import_snapshots_so_a_reimport_compares_like_with_like():
    snapshot = ImportSnapshot.objects.create(
        document="a paper",
        section="evaluations",
        stable_id="e-1",
        values={"quote": "a\r\nb", "limitations": ["c\rd"], "value": "0.410", "repeats": None},
        imported_at=timezone.now(),
    )
    run_migration()
    snapshot.refresh_from_db()
    assert snapshot.values == {"quote": "a\nb", "limitations": ["c\nd"], "value": "0.410", "repeats": None}
