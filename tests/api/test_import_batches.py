"""A large import writes its plan in batches, each its own short transaction: other curators'
writes get through between batches, the result is what one transaction would have written, and
an import stopped after some batches says what it wrote and finishes when sent again."""

from __future__ import annotations

import json
import threading
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection, connections, transaction

from records.imports import SECTIONS, ImportConflict, records_import
from records.models import Configuration, ImportSnapshot, Result
from records.seed import seed_document
from reviews.models import ReviewEvent
from tests.records.import_job_documents import as_json, document_with_results

CONFIGURATION = "nt-500m-ia3-dalla-torre-2025"
BATCH = 10


def fingerprint(report) -> dict:
    """What an import wrote, without the primary keys and times that differ between two runs."""
    history = {
        section.key: sorted(
            section.model.history.values_list("stable_id", "history_type", "history_user_id", "history_change_reason"),
            key=repr,
        )
        for section in SECTIONS
    }
    states = {
        section.key: sorted(section.model.objects.values_list("stable_id", "review_state"))
        for section in SECTIONS
        if hasattr(section.model, "review_state")
    }
    snapshots = sorted(
        (s.document, s.section, s.stable_id, repr(s.values), s.imported_by_id) for s in ImportSnapshot.objects.all()
    )
    events = sorted(ReviewEvent.objects.values_list("record_stable_id", "transition", "reason", "actor_id"), key=repr)
    return {"report": report.as_dict(), "history": history, "states": states, "snapshots": snapshots, "events": events}


@pytest.mark.parametrize("seeded_first", [False, True], ids=["into-an-empty-catalogue", "onto-the-seed-record"])
def test_a_document_of_several_batches_writes_what_one_transaction_writes(request, settings, make_user, seeded_first):
    if seeded_first:
        request.getfixturevalue("seeded")  # the extra results then reopen the seed's reviewed evaluation
    curator = make_user("curator")
    document = document_with_results(45)
    with transaction.atomic():
        one = fingerprint(records_import(document=document, actor=curator))
        transaction.set_rollback(True)
    settings.IMPORT_WRITE_BATCH_RECORDS = BATCH
    batched = fingerprint(records_import(document=document, actor=curator))
    assert len(document["evaluations"][0]["results"]) > 4 * BATCH
    assert batched == one


def share_progress(act, when=lambda: True):
    """A progress callback calling `act()` once, between two batches (no transaction open), once `when()`."""
    state = {"acted": 0}

    def progress(done: int, total: int) -> None:
        if not connection.in_atomic_block and total // 2 < done < total and not state["acted"] and when():
            state["acted"] += 1
            act()

    return progress


def in_another_thread(call) -> dict:
    answered: dict[str, object] = {}

    def run() -> None:
        started = time.perf_counter()
        try:
            answered["response"] = call()
        finally:
            answered["seconds"] = time.perf_counter() - started
            connections.close_all()

    other = threading.Thread(target=run)
    other.start()
    other.join(timeout=10)  # the import waits: a lock it held between batches would deadlock here
    assert not other.is_alive(), "the other curator's write waited for the import"
    return answered


@pytest.mark.django_db(transaction=True)
def test_another_curators_edit_between_batches_answers_at_once_and_the_import_completes(
    settings, token_client, make_user
):
    editor = token_client("curator")
    curator = make_user("curator")
    records_import(document=seed_document(), actor=curator)
    settings.IMPORT_WRITE_BATCH_RECORDS = BATCH
    answered: dict[str, object] = {}

    def edit() -> None:
        answered.update(
            in_another_thread(
                lambda: editor.patch(
                    f"/api/v1/configurations/{CONFIGURATION}/", {"description": "edited mid-import"}, format="json"
                )
            )
        )

    document = document_with_results(45)
    report = records_import(document=document, actor=curator, progress=share_progress(edit))
    assert answered["response"].status_code == 200 and answered["seconds"] < 2, answered
    assert len(report.created["results"]) == 45
    assert Result.objects.count() == sum(len(e["results"]) for e in document["evaluations"])
    assert Configuration.objects.get(stable_id=CONFIGURATION).description == "edited mid-import"


def a_later_result(document: dict, index: int) -> dict:
    return document["evaluations"][0]["results"][index]


@pytest.mark.django_db(transaction=True)
def test_a_batch_refused_midway_keeps_the_earlier_batches_says_so_and_the_same_document_finishes_it(
    settings, token_client, make_user
):
    editor = token_client("curator")
    curator = make_user("curator")
    settings.IMPORT_WRITE_BATCH_RECORDS = BATCH
    document = document_with_results(45)
    extras = [result["stable_id"] for result in document["evaluations"][0]["results"][-45:]]
    taken = extras[-1]  # created by the last of the batches

    def create_it_elsewhere() -> None:
        def post():
            existing = editor.get(f"/api/v1/results/{extras[0]}/").json()
            return editor.post("/api/v1/results/", {**existing, "result_id": taken}, format="json")

        answered = in_another_thread(post)
        assert answered["response"].status_code == 201, answered["response"].content

    progress = share_progress(create_it_elsewhere, when=lambda: Result.objects.filter(stable_id=extras[0]).exists())
    with pytest.raises(ImportConflict) as refused:
        records_import(document=document, actor=curator, progress=progress)
    message = refused.value.errors[0]["message"]
    assert message.startswith("written ") and "send the same document again to finish" in message, message
    words = message.replace(",", "").split()
    written, total, batches = int(words[1]), int(words[3]), int(words[6])
    assert written == batches * BATCH and written < total, message  # whole batches only
    there = set(Result.objects.filter(stable_id__in=extras).values_list("stable_id", flat=True)) - {taken}
    assert 0 < len(there) < len(extras) - 1  # the earlier batches' results, none of the refused batch
    assert ImportSnapshot.objects.filter(stable_id__in=there).count() == len(there)
    assert Result.objects.get(stable_id=taken).value == Result.objects.get(stable_id=extras[0]).value

    report = records_import(document=document, actor=curator, overwrite=[f"results/{taken}"])
    assert taken in report.overwritten["results"]
    assert set(extras) - there - {taken} <= set(report.created["results"]) and not there & set(
        report.created["results"]
    )
    assert set(Result.objects.filter(stable_id__in=extras).values_list("stable_id", flat=True)) == set(extras)
    assert str(Result.objects.get(stable_id=taken).value) == document["evaluations"][0]["results"][-1]["value"]


def test_the_command_says_what_it_wrote_when_the_database_stops_it_midway(settings, make_user, tmp_path):
    make_user("curator", "importer")
    settings.IMPORT_WRITE_BATCH_RECORDS = BATCH
    document = document_with_results(45)
    extras = [result["stable_id"] for result in document["evaluations"][0]["results"][-45:]]
    path = tmp_path / "large.json"
    path.write_text(as_json(document))
    inserts: list[str] = []

    def fail_the_second_insert_of_results(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "records_result"'):
            inserts.append(sql)
            if len(inserts) == 2:
                raise OperationalError("disk I/O error")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(fail_the_second_insert_of_results), pytest.raises(CommandError) as refused:
        call_command("import_records", str(path), "--user", "importer")
    line = str(refused.value)
    assert "written " in line and "send the same document again to finish: the import is idempotent" in line, line
    words = line.split("written ", 1)[1].replace(",", "").split()
    written, batches = int(words[0]), int(words[5])
    assert written == batches * BATCH, line
    kept = set(Result.objects.filter(stable_id__in=extras).values_list("stable_id", flat=True))
    assert 0 < len(kept) < len(extras)  # the results of the batches before, none of the stopped one's
    assert Result.history.filter(stable_id__in=extras).count() == len(kept)

    out = StringIO()
    call_command("import_records", str(path), "--user", "importer", stdout=out)
    created = set(json.loads(out.getvalue())["created"]["results"])
    assert set(extras) - kept <= created and not kept & created
    assert Result.objects.filter(stable_id__in=extras).count() == len(extras)
