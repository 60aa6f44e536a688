"""The coverage page at any size: protocols by tested models, paged both ways and folded where
nothing is recorded, filtered by area, context and suite, in a constant number of queries; and its
CSV, one row per protocol and configuration with evaluations (pages.coverage_matrix, pages.coverage_csv)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from pages import coverage_csv, coverage_matrix
from records.models import Area, BaselineRole, Context, Protocol, Source
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    GenomicModelFactory,
    ProtocolFactory,
    SourceFactory,
)
from tests.helpers import apply_transitions
from tests.pages.test_pages import page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_pages(monkeypatch):
    """Pages of 2 protocols and 2 columns: paging shows on a catalogue a test can build in a moment."""
    monkeypatch.setattr(coverage_matrix, "ROWS_PER_PAGE", 2)
    monkeypatch.setattr(coverage_matrix, "COLUMNS_PER_PAGE", 2)


def grow(protocols: int, models: int, *, source: Source | None = None, prefix: str = "p") -> list[Protocol]:
    """`protocols` protocols, each with an evaluation of each of `models` models (one configuration each)."""
    source = source or SourceFactory()
    task = DatasetFactory()
    configurations = [ConfigurationFactory(model=GenomicModelFactory()) for _ in range(models)]
    made = []
    for n in range(protocols):
        protocol = ProtocolFactory(stable_id=f"{prefix}-{n:03d}", title=f"Protocol {prefix} {n:03d}", source=source)
        for configuration in configurations:
            EvaluationFactory(protocol=protocol, configuration=configuration, dataset=task)
        made.append(protocol)
    return made


def rows(response) -> dict[str, str]:
    """The matrix's rows by protocol title, as HTML."""
    html = response.content.decode()
    return {page_text_of(row.split("</th>")[0]): row for row in html.split('<tr><th scope="row">')[1:]}


def page_text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def headers(response) -> list[str]:
    head = response.content.decode().split("<thead>", 1)[1].split("</thead>", 1)[0]
    return [page_text_of(cell) for cell in re.findall(r"<th scope=\"col\">(.*?)</th>", head)][5:]


def csv_of(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.getvalue().decode())))


def test_it_folds_protocols_and_models_with_nothing_recorded_and_says_how_many(client):
    used, unused = GenomicModelFactory(name="Used model"), GenomicModelFactory(name="Unused model")
    recorded = ProtocolFactory(title="Recorded")
    EvaluationFactory(protocol=recorded, configuration=ConfigurationFactory(model=used))
    ConfigurationFactory(model=unused)  # tested nowhere yet
    ConfigurationFactory(name="Standalone, untested")
    ProtocolFactory(title="Nothing recorded")

    page = client.get("/coverage/")
    assert list(rows(page)) == ["Recorded"]
    assert headers(page) == ["Used model 1 protocol"]
    text = page_text(page)
    assert "Protocols 1–1 of 1 with results; 1 with nothing recorded folded" in text
    assert "Models and configurations 1–1 of the 1 these protocols have results of; 2 others with nothing" in text

    shown = client.get("/coverage/", {"empty": "show"})
    assert list(rows(shown)) == ["Nothing recorded", "Recorded"]
    assert "Protocols 1–2 of 2 ( fold those with nothing recorded )" in page_text(shown)
    assert headers(shown) == ["Used model 1 protocol"]  # an empty row adds no column


def test_its_columns_are_models_most_covered_first_and_configurations_without_one_stand_alone(client):
    popular, rare = GenomicModelFactory(name="Popular"), GenomicModelFactory(name="A rare one")
    alone = ConfigurationFactory(name="A method on its own", short_name="On its own")
    for n in range(3):
        protocol = ProtocolFactory(title=f"Protocol {n}")
        EvaluationFactory(protocol=protocol, configuration=ConfigurationFactory(model=popular))
        if n == 0:
            EvaluationFactory(protocol=protocol, configuration=ConfigurationFactory(model=rare))
            EvaluationFactory(protocol=protocol, configuration=alone)
    page = client.get("/coverage/")
    assert headers(page) == ["Popular 3 protocols", "A rare one 1 protocol", "On its own 1 protocol"]
    html = page.content.decode()
    assert f'<a href="/models/{popular.stable_id}/">Popular</a>' in html
    assert f'<a href="/configurations/{alone.stable_id}/">On its own</a>' in html


def test_a_cell_says_what_it_holds_and_links_to_its_evaluations(client):
    protocol = ProtocolFactory(title="Mixed")
    configuration = ConfigurationFactory(name="Mixed model", model=GenomicModelFactory(name="The model"))
    for transitions in [("check_source",), ("check_source",), ("check_source", "exclude"), ()]:
        evaluation = EvaluationFactory(protocol=protocol, configuration=configuration, dataset=DatasetFactory())
        apply_transitions(evaluation, *transitions)
    EvaluationFactory(
        protocol=protocol,
        configuration=configuration,
        dataset=DatasetFactory(),
        measured_by="portal",
        reading_method="job_report",
        source=None,
    )
    [row] = rows(client.get("/coverage/")).values()
    link = f"/protocols/{protocol.stable_id}/?configuration={configuration.stable_id}#all-rows"
    assert (
        f'<td class="cell cell-source_checked"><a href="{link}">✓ 2 checked, 1 excluded, 2 proposed (here)</a></td>'
        in row
    )


def test_a_model_tested_in_several_ways_links_each_configuration(client):
    protocol = ProtocolFactory(title="Two ways")
    model = GenomicModelFactory(name="One model")
    lora = ConfigurationFactory(name="One model, LoRA", method="LoRA", model=model)
    full = ConfigurationFactory(name="One model, full fine-tuning", method="full fine-tuning", model=model)
    apply_transitions(EvaluationFactory(protocol=protocol, configuration=lora), "check_source", "exclude")
    EvaluationFactory(protocol=protocol, configuration=full)
    page = client.get("/coverage/")
    assert headers(page) == ["One model 1 protocol"]
    [row] = rows(page).values()
    cell = row.split('<td class="cell cell-excluded">', 1)[1].split("</td>", 1)[0]
    assert page_text_of(cell) == "✕ 1 excluded, 1 proposed full fine-tuning · LoRA"  # the best state's mark
    base = f"/protocols/{protocol.stable_id}/?configuration="
    assert f'<a href="{base}{full.stable_id}#all-rows" title="One model, full fine-tuning">full fine-tuning</a>' in cell
    assert f'<a href="{base}{lora.stable_id}#all-rows" title="One model, LoRA">LoRA</a>' in cell


def test_it_filters_by_area_context_and_suite(client):
    genomes = Area.objects.create(stable_id="dna-genomes", label="DNA and genomes")
    research = Context.objects.create(stable_id="research", label="Research")
    suite = DatasetFactory(stable_id="gue", name="GUE")
    task = DatasetFactory(stable_id="gue-h3", name="H3", suite=suite)
    other_suite = DatasetFactory(stable_id="nt-benchmark", name="NT benchmark")
    DatasetFactory(stable_id="nt-enhancers", name="Enhancers", suite=other_suite)
    on_a_task, on_the_suite, elsewhere = (
        ProtocolFactory(title="GUE task"),
        ProtocolFactory(title="GUE suite itself"),
        ProtocolFactory(title="Elsewhere"),
    )
    on_a_task.datasets.add(task)
    on_the_suite.datasets.add(suite)
    on_a_task.areas.add(genomes)
    elsewhere.areas.add(genomes)
    elsewhere.contexts.add(research)
    for protocol in (on_a_task, on_the_suite, elsewhere):
        EvaluationFactory(protocol=protocol)

    assert list(rows(client.get("/coverage/", {"suite": "gue"}))) == ["GUE suite itself", "GUE task"]
    assert list(rows(client.get("/coverage/", {"area": "dna-genomes"}))) == ["Elsewhere", "GUE task"]
    assert list(rows(client.get("/coverage/", {"area": "dna-genomes", "suite": "gue"}))) == ["GUE task"]
    assert list(rows(client.get("/coverage/", {"context": "research"}))) == ["Elsewhere"]
    assert rows(client.get("/coverage/", {"suite": "nt-benchmark"})) == {}
    page = client.get("/coverage/", {"suite": "gue"}).content.decode()
    assert '<option value="gue" selected>GUE</option>' in page and '<option value="gue-h3"' not in page  # suites only
    assert 'href="/coverage.csv?suite=gue"' in page


def test_its_page_links_keep_the_filters(client, small_pages):
    area = Area.objects.create(stable_id="dna-genomes", label="DNA and genomes")
    for protocol in grow(5, 5):
        protocol.areas.add(area)
    grow(3, 1, prefix="other")  # outside the area
    page = client.get("/coverage/", {"area": "dna-genomes", "page": "2", "columns": "2"})
    html = page.content.decode()
    assert list(rows(page)) == ["Protocol p 002", "Protocol p 003"]
    assert "Protocols 3–4 of 5 with results" in page_text(page)
    assert "Models and configurations 3–4 of the 5" in page_text(page)
    protocol_pages = html.split('aria-label="Pages of protocols"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="\?([^"]*)"', protocol_pages) == [
        "area=dna-genomes",
        "area=dna-genomes&amp;page=3",
    ]  # another page of protocols starts at its first page of models
    model_pages = html.split('aria-label="Pages of models"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="\?([^"]*)"', model_pages) == [
        "area=dna-genomes&amp;page=2",
        "area=dna-genomes&amp;page=2&amp;columns=3",
    ]
    last = client.get("/coverage/", {"area": "dna-genomes", "page": "3", "columns": "3"})
    assert list(rows(last)) == ["Protocol p 004"] and len(headers(last)) == 1


def test_bad_parameters_never_give_a_server_error(client, small_pages):
    grow(3, 3)
    for params in ({"page": "x"}, {"page": "-1"}, {"columns": "1e9"}, {"page": "0", "columns": ""}):
        assert client.get("/coverage/", params).status_code == 200, params
    assert list(rows(client.get("/coverage/", {"page": "x"}))) == ["Protocol p 000", "Protocol p 001"]
    assert list(rows(client.get("/coverage/", {"page": "99"}))) == ["Protocol p 002"]  # the last page
    for name in ("area", "context", "suite"):
        refused = client.get("/coverage/", {name: "nowhere<b>"})
        assert refused.status_code == 400
        assert f"No {name} has the id “nowhere&lt;b&gt;”: choose one of the list, or all." in refused.content.decode()
        assert '<form class="coverage-filters"' in refused.content.decode()
        answer = client.get("/coverage.csv", {name: "nowhere"})
        assert answer.status_code == 400 and answer.content.decode().startswith(f"No {name} has the id")


def test_it_runs_the_same_number_of_queries_at_two_sizes(client, small_pages):
    def queries(path: str) -> int:
        cache.clear()  # factories bump no catalogue version: measure the page as rendered afresh
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path).status_code == 200
        return len(captured)

    source = SourceFactory()
    grow(2, 2, source=source)
    BaselineRole.objects.create(
        stable_id="role", protocol=Protocol.objects.first(), kind="null_control", selection_rule="r"
    )
    small = [queries("/coverage/"), queries("/coverage/?empty=show")]
    grow(6, 7, source=source, prefix="more")
    ProtocolFactory(title="Nothing recorded", source=source)
    large = [queries("/coverage/"), queries("/coverage/?empty=show&page=2&columns=3")]
    assert small == large == [small[0]] * 2


def test_the_csv_has_a_row_per_protocol_and_configuration_with_evaluations_and_one_per_protocol_with_none(client):
    model = GenomicModelFactory(stable_id="the-model", name="The model")
    protocol = ProtocolFactory(stable_id="recorded", title="Recorded")
    lora = ConfigurationFactory(stable_id="lora", name="LoRA run", model=model)
    alone = ConfigurationFactory(stable_id="alone", name="A method")
    for _ in range(2):
        apply_transitions(
            EvaluationFactory(protocol=protocol, configuration=lora, dataset=DatasetFactory()), "check_source"
        )
    EvaluationFactory(protocol=protocol, configuration=alone)
    ConfigurationFactory.create_batch(5)  # never evaluated: no row
    ProtocolFactory(stable_id="empty", title="Nothing yet")

    response = client.get("/coverage.csv")
    assert response.streaming and response["Content-Disposition"] == 'attachment; filename="coverage.csv"'
    table = csv_of(response)
    assert [(row["protocol_id"], row["configuration_id"]) for row in table] == [
        ("empty", ""),
        ("recorded", "alone"),
        ("recorded", "lora"),
    ]
    empty, alone_row, lora_row = table
    assert (empty["result_state"], empty["result_states"], empty["missing"].split("; ")[0]) == (
        "none",
        "",
        "no source-checked result",
    )
    assert (lora_row["model_id"], lora_row["model_name"], lora_row["result_states"]) == (
        "the-model",
        "The model",
        "2 checked",
    )
    assert (alone_row["model_id"], alone_row["result_state"], alone_row["source_checked"]) == ("", "proposed", "2")
    assert list(table[0]) == list(coverage_csv.CSV_COLUMNS)


def test_the_csv_keeps_the_filters(client):
    genomes = Area.objects.create(stable_id="dna-genomes", label="DNA and genomes")
    inside = ProtocolFactory(stable_id="inside")
    inside.areas.add(genomes)
    EvaluationFactory(protocol=inside)
    EvaluationFactory(protocol=ProtocolFactory(stable_id="outside"))
    assert {row["protocol_id"] for row in csv_of(client.get("/coverage.csv", {"area": "dna-genomes"}))} == {"inside"}


def test_a_protocols_summary_counts_the_same_from_a_few_groups_as_from_one_per_configuration(db):
    """The release's coverage table counts by review state and party alone (records.coverage.state_groups):
    a protocol testing many configurations is a few groups, summed as the page's groups are."""
    from records import coverage

    protocol = ProtocolFactory()
    for _ in range(6):
        EvaluationFactory(protocol=protocol, configuration=ConfigurationFactory())
    apply_transitions(EvaluationFactory(protocol=protocol, configuration=ConfigurationFactory()), "check_source")
    protocols = {protocol.pk: protocol.stable_id}
    by_configuration = coverage.evaluation_groups([protocol.pk])
    few = coverage.state_groups([protocol.pk])
    assert len(by_configuration) == 7 and len(few) == 2
    assert coverage.protocol_summaries(protocols, few, with_recipe=()) == coverage.protocol_summaries(
        protocols, by_configuration, with_recipe=()
    )
