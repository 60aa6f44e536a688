"""A protocol's summary (records.protocol_summary): counted stale by every write that changes what it
holds, and the page read from it is the page computed from every row."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext

from pages import protocol_page
from records import compared_rows, selectors, summary_triggers
from records.models import Configuration, Dataset, Direction, Evaluation, ProtocolChanges, ProtocolSummary, Result
from tests.factories import ConfigurationFactory, DatasetFactory, EvaluationFactory, ProtocolFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def changes(protocol) -> int:
    return ProtocolChanges.objects.filter(protocol=protocol).values_list("number", flat=True).first() or 0


@pytest.fixture
def two_protocols():
    first, other = ProtocolFactory(), ProtocolFactory()
    result = ResultFactory(evaluation__protocol=first, value=Decimal("3"))
    ResultFactory(evaluation__protocol=other)
    return first, other, result


WRITES = {
    "an evaluation added": lambda p, r: EvaluationFactory(protocol=p),
    "an evaluation edited": lambda p, r: Evaluation.objects.filter(pk=r.evaluation_id).update(setup="zero-shot"),
    "an evaluation deleted": lambda p, r: (Result.objects.filter(pk=r.pk).delete(), r.evaluation.delete()),
    "a result added": lambda p, r: ResultFactory(evaluation=r.evaluation, stable_id="another"),
    "a result edited": lambda p, r: Result.objects.filter(pk=r.pk).update(value=Decimal("4")),
    "a result deleted": lambda p, r: Result.objects.filter(pk=r.pk).delete(),
    "its configuration renamed": lambda p, r: Configuration.objects.filter(pk=r.evaluation.configuration_id).update(
        name="Renamed"
    ),
    "its dataset renamed": lambda p, r: Dataset.objects.filter(pk=r.evaluation.dataset_id).update(name="Renamed"),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_a_write_to_what_a_summary_reads_counts_a_change_of_that_protocol_only(two_protocols, write):
    first, other, result = two_protocols
    before = changes(first), changes(other)
    WRITES[write](first, result)
    assert changes(first) > before[0]
    if write != "its dataset renamed":  # the two protocols share the factories' default dataset
        assert changes(other) == before[1]


def test_a_review_of_an_original_counts_a_change_of_the_protocol_that_repeats_it():
    original = ResultFactory().evaluation
    repeat = EvaluationFactory(repeats=original)
    before = changes(repeat.protocol)
    apply_transitions(original, "check_source")
    assert changes(repeat.protocol) > before


def test_a_bulk_insert_counts_one_change_a_statement_on_postgresql():
    protocol = ProtocolFactory()
    evaluation = EvaluationFactory(protocol=protocol)
    before = changes(protocol)
    Result.objects.bulk_create(
        Result(stable_id=f"bulk-{n}", evaluation=evaluation, value=n, printed_value=str(n), unit=protocol.metric_unit)
        for n in range(50)
    )
    assert changes(protocol) - before == (1 if connection.vendor == "postgresql" else 50)


def matrix_protocol(*, configurations: int = 35, tasks: int = 2):
    """A suite protocol of `configurations` x `tasks`, every row source checked; the best of each
    column is the last configuration's (on the matrix's second page)."""
    protocol = ProtocolFactory(metric_direction=Direction.HIGHER)
    suite = DatasetFactory()
    columns = [DatasetFactory(suite=suite, position=n) for n in range(tasks)]
    for c in range(configurations):
        configuration = ConfigurationFactory(name=f"Model {c:03d}")
        for task in columns:
            result = ResultFactory(
                evaluation__protocol=protocol,
                evaluation__configuration=configuration,
                evaluation__dataset=task,
                value=Decimal(c),
            )
            apply_transitions(result.evaluation, "check_source")
    return protocol


def cells(html: str) -> dict[str, list[str]]:
    """Each matrix row's configuration and its cells' marks ("best", "tied", "" for none)."""
    table = html.split('<table class="results matrix">')[1].split("</table>")[0]
    found = {}
    for row in table.split("<tr>")[2:]:
        name = re.search(r'title="([^"]+)"', row).group(1)
        found[name] = [
            "best" if "(best in column" in cell else "tied" if "tied-mark" in cell else ""
            for cell in row.split("<td>")[1:]
        ]
    return found


def render(client, protocol, query: str = "") -> str:
    cache.clear()
    response = client.get(f"/protocols/{protocol.stable_id}/{query}")
    assert response.status_code == 200
    return re.sub(r'name="(csrfmiddlewaretoken|started)" value="[^"]*"', "", response.content.decode())


def test_the_page_read_from_the_stored_summary_is_the_page_computed_from_every_row(client):
    protocol = matrix_protocol()
    for query in ("", "?table=rows&page=2", "?include=excluded&table=rows&page=2"):
        ProtocolSummary.objects.all().delete()
        computed = render(client, protocol, query)
        assert ProtocolSummary.objects.filter(protocol=protocol).exists()
        with CaptureQueriesContext(connection) as queries:
            stored = render(client, protocol, query)
        assert not [q for q in queries if "records_protocolsummary" in q["sql"] and "INSERT" in q["sql"]]
        assert stored == computed


def test_a_page_of_the_matrix_marks_the_best_of_the_whole_column(client):
    protocol = matrix_protocol()
    first, second = cells(render(client, protocol)), cells(render(client, protocol, "?table=rows&page=2"))
    assert len(first) == 30 and len(second) == 5
    assert all(marks == ["", ""] for marks in first.values())
    assert second["Model 034"] == ["best", "best"]
    full = protocol_page.protocol_groups(protocol=protocol, include_excluded=False)
    best = {row.evaluation.configuration.name for group in full for row in group.rows if row.is_best}
    assert best == {"Model 034"}
    assert "the best in each column is marked" in render(client, protocol)


def test_a_summary_stored_before_a_write_is_not_read_after_it(client):
    protocol = matrix_protocol()
    assert cells(render(client, protocol, "?table=rows&page=2"))["Model 034"] == ["best", "best"]
    best = Evaluation.objects.filter(protocol=protocol, configuration__name="Model 034")
    for evaluation in best:
        apply_transitions(evaluation, "exclude", reason="A concern.")
    marks = cells(render(client, protocol, "?table=rows&page=2"))
    assert marks["Model 034"] == ["", ""] and marks["Model 033"] == ["best", "best"]


def test_a_protocol_whose_direction_changed_is_summarised_again(client):
    protocol = matrix_protocol()
    render(client, protocol)
    type(protocol).objects.filter(pk=protocol.pk).update(metric_direction=Direction.LOWER)
    assert cells(render(client, protocol))["Model 000"] == ["best", "best"]


def test_the_evaluations_table_and_filters_count_every_evaluation(client):
    protocol = matrix_protocol(configurations=12, tasks=2)
    page = protocol_page.protocol_page(stable_id=protocol.stable_id, params=QueryDict())
    assert page.evaluation_count == 24 and len(page.evaluations_table.items) == protocol_page.EVALUATIONS_PER_PAGE
    task = Evaluation.objects.filter(protocol=protocol).first().dataset
    dataset_facet = next(facet for facet in page.filtered.facets if facet.param == "dataset")
    assert {option.label: option.count for option in dataset_facet.options} == {
        name: 12 for name in Dataset.objects.filter(evaluations__protocol=protocol).values_list("name", flat=True)
    }
    filtered = protocol_page.protocol_page(stable_id=protocol.stable_id, params=QueryDict(f"dataset={task.stable_id}"))
    assert len(filtered.filtered.items) == 12
    assert {evaluation.dataset.stable_id for evaluation in filtered.evaluations_table.items} == {task.stable_id}


def test_every_summary_trigger_exists_once_migrated():
    # A migration that rebuilds one of the tables on SQLite drops its triggers: it must create them again.
    names = {
        f"{table}_summary_{event.lower()}" for table, event, _ in summary_triggers.statement_sources(connection.vendor)
    }
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        present = {row[0] for row in cursor.fetchall()}
    assert len(names) == 9 and names <= present


@pytest.mark.parametrize(
    "query", ["measured_by=authors", "setup=(not stated)", "review_state=excluded&dataset={task}", "dataset={task}"]
)
def test_the_filters_counted_by_the_database_are_those_counted_over_the_rows(query):
    protocol = matrix_protocol(configurations=6, tasks=2)
    first = Evaluation.objects.filter(protocol=protocol).order_by("pk")
    apply_transitions(first[0], "exclude", reason="A concern.")
    Evaluation.objects.filter(pk=first[1].pk).update(
        setup="zero-shot", measured_by="third_party", measured_by_name="A lab"
    )
    task = first[0].dataset.stable_id
    params = QueryDict(query.format(task=task))
    in_sql, matching = selectors.facet_counts_in_sql(
        Evaluation.objects.filter(protocol=protocol), selectors.EVALUATION_FACETS, params
    )
    rows = compared_rows.compared_evaluations(protocol)
    assert in_sql == selectors.facet_counts(rows, selectors.EVALUATION_FACETS, params)
    # A facet where no other one is selected is counted as with nothing selected (the summary's counts).
    unselected = selectors.facet_counts(rows, selectors.EVALUATION_FACETS, QueryDict())
    with_summary, _matching = selectors.facet_counts_in_sql(
        Evaluation.objects.filter(protocol=protocol), selectors.EVALUATION_FACETS, params, unselected=unselected
    )
    assert with_summary == in_sql
    assert set(matching.values_list("pk", flat=True)) == {
        e.pk for e in selectors.faceted(rows, selectors.EVALUATION_FACETS, params).items
    }
    if query == "measured_by=authors":  # its own facet counts every evaluation
        assert in_sql["measured_by"]["third_party"] == ["A third party", 1]  # the choice's label
