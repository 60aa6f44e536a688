"""Audit rows are append-only in the database (common.append_only): raw SQL that
updates or deletes a review event, a release event, a job event, a fixity check, a decided
correction or a history row of any app is refused on both backends."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction

from common.append_only import APPEND_ONLY_MESSAGE, guarded_triggers
from tests.factories import SourceFactory

EVENT_MODELS = (
    "reviews.ReviewEvent",
    "releases.ReleaseEvent",
    "releases.ReleaseFixityCheck",
    "benchmarks.JobEvent",
    "records.ModelChange",
)


def audit_models():
    """Every event and fixity model, and every history model simple-history made (with the
    many-to-many ones): found in the app registry, so a new history table is checked too."""
    found = [apps.get_model(label) for label in EVENT_MODELS]
    found += [
        model
        for model in apps.get_models()
        if model.__name__.startswith("Historical") and hasattr(model, "instance_type")
    ]
    return found


def audit_tables() -> list[str]:
    return sorted({model._meta.db_table for model in audit_models()})


@pytest.fixture
def every_audit_table_written(seeded, make_user, settings, tmp_path, monkeypatch):
    """At least one row in every audit table, each written by the portal's own services."""
    from benchmarks.seed import seed_recipes
    from benchmarks.services import benchmark_job_enqueue
    from benchmarks.tasks import benchmark_job_run
    from corrections.services import correction_decide, correction_submit
    from records.identity import model_merge
    from records.models import (
        Dataset,
        Decision,
        EvidenceRow,
        GenomicModel,
        ModelAlias,
        Protocol,
        Result,
        TaskEquivalence,
    )
    from records.services import record_save
    from releases.build import release_build
    from releases.fixity import release_fixity_check
    from releases.services import release_cut

    settings.RELEASES_DIR = tmp_path / "releases"
    curator, operator, manager = (
        make_user("curator", "curator-one"),
        make_user("benchmark_operator", "operator-one"),
        make_user("release_manager", "manager-one"),
    )
    monkeypatch.setattr(benchmark_job_run, "apply_async", lambda *args, **kwargs: None)
    [(recipe, _created)] = seed_recipes()
    benchmark_job_enqueue(recipe=recipe, requested_by=operator)
    protocol = Protocol.objects.first()
    evidence = EvidenceRow(
        stable_id="append-only-test-evidence",
        protocol=protocol,
        property_name="metric",
        statement="The protocol's metric is its run time.",
        source=protocol.source,
        locator=protocol.source_locator or "the paper",
    )
    record_save(record=evidence, actor=curator)
    decision = Decision(stable_id="append-only-test-decision", title="A decision to audit")
    record_save(record=decision, actor=curator)
    decision.protocols.set(Protocol.objects.all()[:1])
    record_save(record=decision, actor=curator, changed_fields=["protocols"])
    first, second = (
        GenomicModel(stable_id=f"append-only-test-model-{n}", name=f"A model to audit {n}") for n in (1, 2)
    )
    for model in (first, second):
        record_save(record=model, actor=curator)
    record_save(
        record=ModelAlias(stable_id="append-only-test-alias", model=first, alias="Model one", source=SourceFactory()),
        actor=curator,
    )
    model_merge(model=first, into=second, reason="One checkpoint printed under two names.", actor=curator)
    tasks = Dataset.objects.filter(suite__isnull=False)[:2]
    equivalence = TaskEquivalence(
        stable_id="append-only-test-same-data",
        task=tasks[0],
        same_as=tasks[1],
        source=protocol.source,
        locator="the paper",
        quote="the same data",
    )
    record_save(record=equivalence, actor=curator)
    correction = correction_submit(
        target=Result.objects.first(),
        field_name="",
        proposed_value="",
        explanation="The table prints another figure.",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    correction_decide(correction=correction, actor=curator, decision="reject", response="The figure is right.")
    release = release_build(release_pk=release_cut(actor=manager).pk)
    assert release.status == "published", release.build.error
    release_fixity_check(release=release)
    empty = [model._meta.db_table for model in audit_models() if not model._default_manager.exists()]
    assert empty == [], "each audit table needs a row for the refusals below to mean anything"
    return correction


def test_it_guards_every_audit_table_against_update_and_delete(db):
    guarded = {}
    for _name, table, sql in guarded_triggers(connection):
        for operation in ("UPDATE", "DELETE"):
            if operation in sql.upper().split(" ON ")[0]:
                guarded.setdefault(table, set()).add(operation)
    assert {table: guarded.get(table, set()) for table in audit_tables()} == {
        table: {"UPDATE", "DELETE"} for table in audit_tables()
    }
    assert len(audit_tables()) >= 20  # 17 history tables of the catalogue, recipes, corrections, 4 logs


@pytest.mark.parametrize("operation", ["update", "delete"])
def test_it_refuses_raw_sql_that_rewrites_or_removes_an_audit_row(every_audit_table_written, operation):
    refused = []
    for model in audit_models():
        table, pk = model._meta.db_table, model._meta.pk.column
        sql = (
            f"UPDATE {table} SET {pk} = {pk} WHERE {pk} = (SELECT MIN({pk}) FROM {table})"
            if operation == "update"
            else f"DELETE FROM {table}"
        )
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql)
        except IntegrityError as error:
            assert APPEND_ONLY_MESSAGE in str(error), (table, error)
            refused.append(table)
    assert sorted(refused) == audit_tables()


def test_it_refuses_to_change_or_delete_a_decided_correction_but_lets_the_digest_mark_it(every_audit_table_written):
    correction = every_audit_table_written
    for sql in (
        "UPDATE reviews_correction SET status = 'accepted' WHERE id = %s",
        "UPDATE reviews_correction SET response = 'something else' WHERE id = %s",
        "DELETE FROM reviews_correction WHERE id = %s",
    ):
        with pytest.raises(IntegrityError, match=APPEND_ONLY_MESSAGE), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(sql, [correction.pk])
    with connection.cursor() as cursor:
        cursor.execute("UPDATE reviews_correction SET notified_at = created_at WHERE id = %s", [correction.pk])
        assert cursor.rowcount == 1


def test_it_lets_a_new_correction_be_decided(seeded, curator):
    from corrections.services import correction_decide, correction_submit
    from records.models import Result

    correction = correction_submit(
        target=Result.objects.first(),
        field_name="",
        proposed_value="",
        explanation="x",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    decided = correction_decide(correction=correction, actor=curator, decision="reject", response="no")
    assert decided.status == "rejected"


def test_it_keeps_the_events_of_a_failed_release_that_is_deleted(seeded, make_user):
    from releases.lifecycle import RELEASES
    from releases.models import Release, ReleaseEvent
    from releases.services import release_cut

    release = release_cut(actor=make_user("release_manager", "manager-one"))
    RELEASES.change(row=release.build, to="failed", reason="broken on purpose")
    events = list(ReleaseEvent.objects.filter(release_id=release.pk).values_list("to_status", flat=True))
    assert events == ["requested", "failed"]
    Release.objects.filter(pk=release.pk).delete()
    assert list(ReleaseEvent.objects.filter(release_id=release.pk).values_list("to_status", flat=True)) == events


def test_it_keeps_a_user_whose_edits_are_in_the_history_and_the_admin_says_why(seeded, make_user, client):
    from django.contrib.auth import get_user_model
    from django.db.models import ProtectedError

    from records.models import Source
    from records.services import record_save

    editor = make_user("curator", "editor-one")
    source = Source.objects.first()
    source.venue = f"{source.venue} (v2)"  # an edit: the history names the editor
    record_save(record=source, actor=editor, changed_fields=["venue"])
    assert source.history.filter(history_user=editor).exists()
    with pytest.raises(ProtectedError), transaction.atomic():
        editor.delete()

    admin = get_user_model().objects.create_superuser("admin-one", "admin@example.org", "a-long-password-1")
    client.force_login(admin)
    page = client.post(f"/admin/auth/user/{editor.pk}/delete/", {"post": "yes"})
    assert page.status_code == 200 and "protected" in page.content.decode()
    assert get_user_model().objects.filter(pk=editor.pk).exists()
    assert source.history.filter(history_user=editor).exists()
