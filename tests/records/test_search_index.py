"""The search index follows every write that changes what a hit shows, in the writer's transaction:
a record saved through the API, an edit, a delete, an import, a merge and its undo, a split; a review
transition shows on the hit without one; the entries kept by the writes are those a rebuild makes."""

from __future__ import annotations

import importlib
import threading
import time
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from rest_framework.test import APIClient

from portal.tokens import api_token_create
from records.identity import model_change_undo, model_merge, model_split
from records.imports import records_import
from records.models import Dataset, Evaluation, GenomicModel, ModelAlias, Protocol, SearchEntry, Work
from records.search import search
from records.search_index import search_index_rebuild
from records.seed import seed_document
from records.services import record_delete, record_save
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    GenomicModelFactory,
    ModelAliasFactory,
    ProtocolFactory,
    ResultFactory,
    SourceFactory,
)
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def found(query: str, record_type: str = "") -> set[tuple[str, str]]:
    first = search(query=query, record_type=record_type)
    hits = []
    for number in first.page.paginator.page_range if first.page is not None else ():
        hits += search(query=query, record_type=record_type, page=number).hits
    return {(hit.type, hit.stable_id) for hit in hits}


def entries() -> dict[tuple[str, int], dict]:
    fields = [f.name for f in SearchEntry._meta.concrete_fields if f.name not in ("id", "vector")]
    return {(row["kind"], row["record_id"]): row for row in SearchEntry.objects.values(*fields)}


@pytest.fixture
def catalogue():
    """A model printed two ways, tested by two configurations on a task of a suite, with results;
    written by the factories (around the services), then indexed afresh."""
    model = GenomicModelFactory(stable_id="zebra-2", name="ZebraBERT-2 (90M)", family="ZebraBERT")
    ModelAliasFactory(stable_id="alias-zebra-2", model=model, alias="ZebraBERT2")
    suite = DatasetFactory(stable_id="fish-suite", name="Fish benchmark")
    task = DatasetFactory(stable_id="fish-promoter", name="Promoter (fish)", suite=suite, task_key="promoter_fish")
    protocol = ProtocolFactory(stable_id="fish-mcc", title="Fish benchmark, MCC", metric_unit="MCC")
    configurations = [
        ConfigurationFactory(stable_id=f"zebra-cfg-{n}", name=f"ZebraBERT-2, setting {n}", model=model)
        for n in range(2)
    ]
    evaluations = [
        EvaluationFactory(
            stable_id=f"zebra-eval-{n}",
            title=f"Zebra run {n} on fish promoters",
            protocol=protocol,
            configuration=configurations[n % 2],
            dataset=task,
        )
        for n in range(4)
    ]
    results = [
        ResultFactory(stable_id=f"zebra-result-{n}", evaluation=evaluation, value=Decimal(f"0.{n + 1}10"), unit="MCC")
        for n, evaluation in enumerate(evaluations)
    ]
    other = GenomicModelFactory(stable_id="carp-1", name="CarpNet 1")
    search_index_rebuild()
    return {
        "model": model,
        "other": other,
        "configurations": configurations,
        "evaluations": evaluations,
        "results": results,
    }


def test_a_configuration_written_through_the_api_is_found_at_once(catalogue, make_user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('curator'))}")
    body = {"configuration_id": "tuna-cfg", "name": "TunaFormer-3 (fine-tuned)", "family": "Tuna", "model_id": "carp-1"}
    assert client.post("/api/v1/configurations/", body, format="json").status_code == 201
    assert ("configuration", "tuna-cfg") in found("tunaformer3")
    hit = search(query="TunaFormer 3").hits[0]
    assert (hit.stable_id, hit.model_name, hit.model_url) == ("tuna-cfg", "CarpNet 1", "/models/carp-1/")


def test_renaming_a_model_changes_the_hits_of_its_configurations_evaluations_and_results(catalogue):
    model = catalogue["model"]
    model.name = "StingrayBERT (90M)"
    record_save(record=model, actor=None, changed_fields=["name"])
    expected = {("model", "zebra-2")} | {("configuration", c.stable_id) for c in catalogue["configurations"]}
    expected |= {("evaluation", e.stable_id) for e in catalogue["evaluations"]}
    assert found("stingraybert") == expected
    assert ("model", "zebra-2") not in found("ZebraBERT-2 (90M)")  # the old name is gone; the alias stays
    assert found("zebrabert2", "model") == {("model", "zebra-2")}
    result_hit = search(query="0.110").hits[0]
    assert (result_hit.stable_id, result_hit.model_name) == ("zebra-result-0", "StingrayBERT (90M)")


def test_an_edit_of_a_task_or_protocol_shows_on_the_evaluations_found(catalogue):
    protocol = Protocol.objects.get(stable_id="fish-mcc")
    protocol.title = "Shark suite, MCC"
    record_save(record=protocol, actor=None, changed_fields=["title"])
    suite = Dataset.objects.get(stable_id="fish-suite")
    suite.name = "Reef benchmark"
    record_save(record=suite, actor=None, changed_fields=["name"])
    evaluations = {("evaluation", e.stable_id) for e in catalogue["evaluations"]}
    assert found("shark", "evaluation") == evaluations == found("reef promoter", "evaluation")
    assert found("fish benchmark", "protocol") == set()  # the protocol's old title
    assert ("dataset", "fish-promoter") in found("reef benchmark promoter")
    hit = search(query="shark", record_type="evaluation").hits[0]
    assert (hit.protocol_title, hit.task_name) == ("Shark suite, MCC", "Promoter (fish)")


def test_a_deleted_result_leaves_the_index_and_its_evaluations_values(catalogue):
    result = catalogue["results"][3]
    assert ("result", "zebra-result-3") in found("0.410")
    assert "0.410 MCC" in search(query="zebra-eval-3").hits[0].detail
    record_delete(record=result, actor=None)
    assert found("0.410") == set()
    assert "0.410" not in search(query="zebra-eval-3").hits[0].detail


def test_a_result_moved_to_another_evaluation_leaves_the_old_ones_values(catalogue):
    result = catalogue["results"][0]
    result.evaluation = catalogue["evaluations"][1]
    record_save(record=result, actor=None, changed_fields=["evaluation"])
    assert "0.110" not in search(query="zebra-eval-0").hits[0].detail
    assert "0.110 MCC" in search(query="zebra-eval-1").hits[0].detail


def test_a_merge_moves_the_aliases_found_and_its_undo_moves_them_back(catalogue):
    model, other = catalogue["model"], catalogue["other"]
    change = model_merge(model=model, into=other, reason="the same checkpoint", actor=None)
    assert found("zebrabert2", "model") == {("model", "carp-1")}  # the alias moved; the merged model is no hit
    assert ("model", "zebra-2") not in found("ZebraBERT")
    hit = search(query="zebra-cfg-0").hits[0]
    assert hit.model_name == "CarpNet 1"
    model_change_undo(change=change, reason="not the same after all", actor=None)
    assert found("zebrabert2", "model") == {("model", "zebra-2")}
    assert search(query="zebra-cfg-0").hits[0].model_name == "ZebraBERT-2 (90M)"


def test_a_split_moves_its_configurations_and_aliases_to_the_new_model(catalogue):
    model = catalogue["model"]
    model_split(
        model=model,
        configurations=[catalogue["configurations"][1]],
        aliases=list(model.aliases.all()),
        stable_id="zebra-2-large",
        name="ZebraBERT-2 large",
        reason="a larger checkpoint",
        actor=None,
    )
    assert found("zebrabert2", "model") == {("model", "zebra-2"), ("model", "zebra-2-large")}
    assert search(query="ZebraBERT2").hits[0].stable_id == "zebra-2-large"  # its alias names it
    assert search(query="zebra-cfg-1").hits[0].model_name == "ZebraBERT-2 large"


def test_an_import_indexes_what_it_writes_and_a_second_import_what_it_changes(db):
    document = seed_document()
    records_import(document=document, actor=None)
    configuration = document["configurations"][0]
    assert ("configuration", configuration["stable_id"]) in found(configuration["name"])
    configuration["name"] = "Nucleotide Transformer 500M, renamed by a second import"
    records_import(document=document, actor=None)
    evaluations = {
        ("evaluation", e["stable_id"])
        for e in document["evaluations"]
        if e["configuration"] == configuration["stable_id"]
    }
    assert found("renamed second import") == {("configuration", configuration["stable_id"]), *evaluations}
    assert {kind for kind, _ in found("IA3")} >= {"protocol", "configuration", "evaluation"}


def test_a_review_transition_shows_on_the_hit_without_touching_the_index(catalogue):
    before = entries()
    assert search(query="zebra-eval-0").hits[0].detail.endswith("proposed")
    apply_transitions(catalogue["evaluations"][0], "check_source")
    assert search(query="zebra-eval-0").hits[0].detail.endswith("source checked")
    assert entries() == before


def test_the_entries_kept_by_the_writes_are_those_a_rebuild_makes(catalogue):
    model = catalogue["model"]
    record_save(
        record=ModelAlias(stable_id="alias-zebra-x", model=model, alias="Zebra X", source=model.aliases.first().source),
        actor=None,
    )
    configuration = catalogue["configurations"][0]
    configuration.short_name = "Zebra short"
    record_save(record=configuration, actor=None, changed_fields=["short_name"])
    record_delete(record=catalogue["results"][2], actor=None)
    model_merge(model=catalogue["other"], into=model, reason="same", actor=None)
    kept = entries()
    call_command("search_index_rebuild", stdout=open("/dev/null", "w"))
    assert entries() == kept and len(kept) > 10


def test_each_entrys_names_vector_is_the_part_of_its_vector_weighted_a(catalogue):
    """PostgreSQL: `name_vector` (what "every word in its own name" matches) is written with each
    entry, and filled by migration 0016 for the entries already there: both equal ts_filter(vector, '{a}')."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's FTS5 reads the names' column itself")
    record_save(
        record=ModelAlias(
            stable_id="alias-zebra-y", model=catalogue["model"], alias="Zebra Y-3", source=SourceFactory()
        ),
        actor=None,
    )
    same = "SELECT count(*), count(*) FILTER (WHERE name_vector = ts_filter(vector, '{a}')) FROM records_searchentry"
    with connection.cursor() as cursor:
        cursor.execute(same)
        assert cursor.fetchone() == (SearchEntry.objects.count(),) * 2
        cursor.execute("UPDATE records_searchentry SET name_vector = NULL")
        fill = importlib.import_module("records.migrations.0016_search_name_vector").fill
        with connection.schema_editor() as editor:
            fill(None, editor)
        cursor.execute(same)
        assert cursor.fetchone() == (SearchEntry.objects.count(),) * 2
    assert found("zebra y-3") == {
        ("model", "zebra-2"),
        ("configuration", "zebra-cfg-0"),
        ("configuration", "zebra-cfg-1"),
    } | {("evaluation", f"zebra-eval-{n}") for n in range(4)}
    assert search(query="zebra y-3").hits[0].stable_id == "zebra-2"  # named: the model first


def test_nothing_is_indexed_when_the_write_is_rolled_back(catalogue):
    with pytest.raises(RuntimeError), transaction.atomic():
        record_save(record=Work(stable_id="lost-work", title="A work rolled back"), actor=None)
        assert found("rolled back") == {("work", "lost-work")}  # in the writer's transaction
        raise RuntimeError
    assert found("rolled back") == set()


@pytest.mark.django_db(transaction=True)
def test_two_writes_refreshing_one_entry_at_once_both_commit(catalogue):
    """A model renamed and one of its evaluations edited, in two transactions at once: both refresh
    the evaluation's entry; the second waits for the first (on the catalogue version's row, which
    every write bumps) and writes over its entry (PostgreSQL; SQLite takes its writers in turn)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite takes one writer at a time")
    renamed, errors = threading.Event(), []

    def rename_model() -> None:
        try:
            with transaction.atomic():
                model = GenomicModel.objects.get(stable_id="zebra-2")
                model.name = "Marlin model"
                record_save(record=model, actor=None, changed_fields=["name"])
                renamed.set()
                time.sleep(0.5)  # holding its new entries while the other write refreshes one of them
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)
        finally:
            renamed.set()
            connection.close()

    worker = threading.Thread(target=rename_model)
    worker.start()
    renamed.wait(10)
    evaluation = Evaluation.objects.get(stable_id="zebra-eval-0")
    evaluation.title = "Zebra run 0, retitled"
    record_save(record=evaluation, actor=None, changed_fields=["title"])
    worker.join(10)
    assert errors == []
    assert found("retitled") == {("evaluation", "zebra-eval-0")}
    assert ("model", "zebra-2") in found("marlin")
