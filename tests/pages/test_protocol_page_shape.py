"""A protocol page opens with what the paper shows (the results, as a matrix for a suite, before the
overview's notes), writes each list a page at a time, and costs the same number of SQL statements
whatever the number of its rows."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from pages import protocol_page
from records.models import Configuration, Evaluation, Protocol, Result
from records.selectors import FACET_OPTIONS_SHOWN
from tests.factories import ConfigurationFactory, DatasetFactory, ProtocolFactory, SourceFactory
from tests.helpers import load_for_module

pytestmark = pytest.mark.django_db

GUE = "/protocols/gue-mcc-x100-zhou-2024/"


@pytest.fixture(scope="module")
def demo(demo_snapshot, module_transaction):
    """The seed and every example document, copied from the session's snapshot once for the module (tests.helpers.load_for_module)."""
    load_for_module(module_transaction, demo=demo_snapshot)


def suite(*, configurations: int, tasks: int) -> Protocol:
    """A suite protocol of configurations x tasks, one result each (written in bulk: the shape is what counts)."""
    source = SourceFactory()
    parent = DatasetFactory(name="A suite")
    task_rows = [DatasetFactory(name=f"Task {n:02d}", suite=parent, position=n) for n in range(tasks)]
    protocol = ProtocolFactory(source=source, metric_unit="MCC", metric_direction="higher")
    protocol.datasets.set([parent])
    rows = [ConfigurationFactory(name=f"Model {n:03d}") for n in range(configurations)]
    evaluations = Evaluation.objects.bulk_create(
        Evaluation(
            stable_id=f"ev-{protocol.pk}-{c.pk}-{t.pk}",
            title=f"{c.name} on {t.name}",
            protocol=protocol,
            configuration=c,
            dataset=t,
            measured_by="authors",
            reading_method="table",
            source=source,
            source_locator="Table 1",
            quote="A row.",
        )
        for c in rows
        for t in task_rows
    )
    Result.objects.bulk_create(
        Result(
            stable_id=f"{e.stable_id}-r",
            evaluation=e,
            value=Decimal(n % 90) / 100,
            unit="MCC",
            printed_value=str(Decimal(n % 90) / 100),
        )
        for n, e in enumerate(evaluations)
    )
    return protocol


def test_it_opens_a_suite_page_with_the_matrix_and_says_what_it_compares(client, demo):
    body = client.get(GUE).content.decode()
    assert (
        body.index('<table class="results matrix">')
        < body.index('<h2 id="all-rows">')
        < body.index('<h2 id="overview">')
    )
    scope = re.search(r'<p class="scope">(.*?)\n', body).group(1)
    assert scope.startswith("10 tested configurations × 27 tasks, MCC")
    assert "the best in each column is marked" in scope
    assert "no reviewed comparison panel" not in body  # the matrix marks the best per task


def test_the_gue_page_is_under_200_kb_and_shows_every_value_with_its_correction_link(client, demo):
    response = client.get(GUE)
    body = response.content.decode()
    assert len(response.content) < 200_000
    matrix = body[body.index('<table class="results matrix">') : body.index("</table>")]
    values = re.findall(r'<a class="correct-link" href="/corrections/new/\?value=([^"]+)"', matrix)
    assert len(values) == len(set(values)) == 270


def test_it_lists_the_evaluations_a_page_at_a_time_and_names_the_rest(client, demo):
    body = client.get(GUE).content.decode()
    assert len(re.findall(r'<tr id="evaluation-', body)) == protocol_page.EVALUATIONS_PER_PAGE
    assert "Evaluations 1–20 of 270, 20 a page." in body
    related = body[body.index('<h3 id="related">') :]
    assert len(re.findall(r"<li>assessment: ", related)) == 20
    assert "and 250 more evaluations" in related
    last = client.get(f"{GUE}?table=evaluations&page=14").content.decode()
    assert len(re.findall(r'<tr id="evaluation-', last)) == 10
    assert "Evaluations 261–270 of 270" in last


def test_it_pages_a_matrix_of_many_configurations(client, seeded):
    protocol = suite(configurations=45, tasks=3)
    url = protocol.get_absolute_url()
    first = client.get(url).content.decode()
    assert len(re.findall(r'<tr><th scope="row">', first)) == protocol_page.MATRIX_ROWS_PER_PAGE
    assert "configurations 1–30 of 45" in first
    second = client.get(f"{url}?table=rows&page=2").content.decode()
    assert len(re.findall(r'<tr><th scope="row">', second)) == 15
    assert "Model 044" in second and "Model 044" not in first
    # a bad page number is the first page, never an error
    assert client.get(f"{url}?table=rows&page=x").status_code == 200


def test_it_lists_a_filters_most_frequent_options_and_says_how_many_it_leaves_out(client, seeded):
    protocol = suite(configurations=FACET_OPTIONS_SHOWN + 8, tasks=2)
    body = client.get(protocol.get_absolute_url()).content.decode()
    facet = body.split('<h4 class="facet-label">Tested model or method</h4>', 1)[1].split("</div>", 1)[0]
    assert len(re.findall(r"<li>", facet)) == FACET_OPTIONS_SHOWN
    assert "8 less frequent options not listed" in facet
    chosen = Configuration.objects.filter(name="Model 019").get()
    picked = client.get(f"{protocol.get_absolute_url()}?configuration={chosen.stable_id}").content.decode()
    assert 'aria-current="true" class="selected" title="Model 019">Model 019 (2)' in picked
    assert len(re.findall(r'<tr id="evaluation-', picked)) == 2


def test_it_reads_a_protocol_in_the_same_number_of_statements_whatever_its_size(client, seeded):
    counts = []
    for configurations in (6, 60):  # more values than a record page's correction form offers, both
        protocol = suite(configurations=configurations, tasks=4)
        cache.clear()
        with CaptureQueriesContext(connection) as queries:
            assert client.get(protocol.get_absolute_url()).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_home_page_counts_the_catalogue_and_lists_its_protocols_a_page_at_a_time(client, demo):
    first = client.get("/").content.decode()
    protocols = Protocol.objects.count()
    assert protocols > 25
    assert f"The catalogue holds {protocols} protocols, {Evaluation.objects.count()} evaluations" in first
    assert len(re.findall(r'<tr><th scope="row"><a href="/protocols/', first)) == 25
    last = client.get("/?table=protocols&page=2").content.decode()
    assert len(re.findall(r'<tr><th scope="row"><a href="/protocols/', last)) == protocols - 25
    assert f"Protocols 26–{protocols} of {protocols}" in last
