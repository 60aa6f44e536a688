"""Bounded pages: the task, model, work, source and configuration pages write one page of
each long list, say how many there are in all, reach every row through their pager links (which the
page cache keeps apart), count verdicts truly with the conflicting first, and run the same number
of queries at two sizes."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from pages import identity_pages, model_page
from records import agreement, evidence_rows
from records.models import Configuration, Dataset, Evaluation, MeasuredBy
from tests.factories import ConfigurationFactory, EvaluationFactory, ResultFactory, SourceFactory
from tests.pages.test_identity_pages import (  # noqa: F401 (the fixture: papers, models, a task)
    GenomicModelFactory,
    WorkFactory,
    evidence,
    get,
    measure,
    more_evaluations,
    page_text,
)

pytestmark = pytest.mark.django_db

TASK = "/datasets/nt-promoter-all/"


def pager_links(body: str, anchor: str) -> list[str]:
    """The addresses a pager's links lead to (query string only), in order."""
    return [html.unescape(query) for query in re.findall(rf'<a href="\?([^"#]*)#{re.escape(anchor)}">', body)]


def table_rows(body: str, key: str) -> list[str]:
    """The rows of the task table with this key: each row's link to its value."""
    table = body.split(f'<div class="table-wrap" id="{key}">')[1].split("</table>")[0]
    return re.findall(r'<a class="value" href="([^"]+)"', table)


def walk(client, url: str, anchor: str, rows) -> list[str]:
    """Every row of a list, page after page, following the pager's own links (each read afresh)."""
    path = url.split("?")[0]
    body = get(client, url).content.decode()
    seen = list(rows(body))
    visited: set[str] = set()
    queue = pager_links(body, anchor)
    while queue:
        query = queue.pop(0)
        if query in visited:
            continue
        visited.add(query)
        body = get(client, f"{path}?{query}").content.decode()
        if "page=1" not in query.split("&"):  # the first page is the one read without a number
            seen += rows(body)
        queue += [link for link in pager_links(body, anchor) if link not in visited]
    return seen


@pytest.fixture
def crowded(evidence):  # noqa: F811 (the fixture imported above)
    more_evaluations(evidence, 50)  # a table of some 40 rows
    return evidence


def task_tables(dataset: Dataset) -> list[agreement.TaskTable]:
    family = agreement.family_of(dataset.pk)
    rows = evidence_rows.evaluation_rows(lookups={"dataset_id__in": sorted(family)})
    return agreement.task_tables(rows, {task: dataset.pk for task in family})


def test_it_pages_a_long_task_table_and_reaches_every_row_once(client, crowded):
    tables = task_tables(crowded["task"])
    longest = max(tables, key=lambda table: len(table.rows))
    assert len(longest.rows) > identity_pages.TABLE_ROWS  # long enough to be paged
    key = next(
        view.key
        for view in identity_pages.task_page(stable_id="nt-promoter-all", params=_none()).tables
        if (view.table.metric, view.table.unit) == (longest.metric, longest.unit)
    )
    first = get(client, TASK).content.decode()
    assert len(table_rows(first, key)) == identity_pages.TABLE_ROWS
    assert f"source-checked measurements, each counted once: 1–25 of {len(longest.rows)}" in html.unescape(first)
    seen = walk(client, TASK, key, lambda body: table_rows(body, key))
    expected = [
        f"{row.measurement.shown.evaluation.get_absolute_url()}#result-{row.measurement.shown.result.stable_id}"
        for row in longest.rows
    ]
    assert seen == expected  # every row, once, in rank order


def test_a_page_past_the_end_shows_the_last_page_and_a_bad_number_the_first(client, crowded):
    view = next(
        view
        for view in identity_pages.task_page(stable_id="nt-promoter-all", params=_none()).tables
        if view.rows.is_paged
    )
    last = get(client, f"{TASK}?table={view.key}&page=999").content.decode()
    assert f"{view.rows.total}</strong>" not in last  # the page links, with the last one current
    assert re.search(rf"of {view.rows.total}, 25 a page", html.unescape(last))
    assert len(table_rows(last, view.key)) == view.rows.total - 25 * ((view.rows.total - 1) // 25)
    assert table_rows(get(client, f"{TASK}?table={view.key}&page=x").content.decode(), view.key) == table_rows(
        get(client, TASK).content.decode(), view.key
    )


def test_the_page_cache_keeps_each_page_of_a_table_apart(client, crowded):
    view = next(
        view
        for view in identity_pages.task_page(stable_id="nt-promoter-all", params=_none()).tables
        if view.rows.is_paged
    )

    def rankings(url: str) -> tuple[str, int]:
        """The page's ranked tables, and the queries it took (the correction form is made per request)."""
        with CaptureQueriesContext(connection) as captured:
            body = client.get(url).content.decode()
        return body.split('<section aria-labelledby="rankings">')[1].split('<section aria-labelledby="agreement"')[
            0
        ], len(captured)

    cache.clear()
    (first, afresh), (second, _) = rankings(TASK), rankings(f"{TASK}?table={view.key}&page=2")
    assert first != second
    again, cached = rankings(TASK)
    assert again == first and cached < afresh  # from the cache
    assert rankings(f"{TASK}?table={view.key}&page=2")[0] == second


def test_the_task_page_counts_verdicts_truly_and_lists_the_conflicting_first(client, crowded):
    family = agreement.family_of(crowded["task"].pk)
    rows = evidence_rows.evaluation_rows(lookups={"dataset_id__in": sorted(family)})
    found = agreement.agreements(rows, {task: crowded["task"].pk for task in family})
    counts = {
        label: sum(1 for item in found if agreement.Verdict.LABELS[item.verdict] == label)
        for label in agreement.Verdict.LABELS.values()
    }
    text = page_text(get(client, TASK))
    summary = text.split("Do independent measurements agree?")[1].split("The rule:")[0]
    assert f"{len(found)} verdicts, one for each model (or configuration that names none) and metric" in summary
    for label, count in counts.items():
        if count:
            assert f"{label} {count}" in summary
        else:
            assert label not in summary  # a verdict none has is not counted
    assert summary.index("conflicting") < summary.index("single measurement")
    verdicts = re.findall(r'<section class="agreement verdict-([a-z_]+)"', get(client, TASK).content.decode())
    conflicts = agreement.Verdict.CONFLICTS
    assert verdicts[0] in conflicts
    assert verdicts == sorted(verdicts, key=lambda v: conflicts.index(v) if v in conflicts else len(conflicts))
    seen = walk(
        client, TASK, "agreements", lambda body: re.findall(r'<section class="agreement verdict-[a-z_]+"', body)
    )
    assert len(seen) == len(found)


def test_an_agreement_shows_its_first_measurements_and_links_to_all_of_them(client, evidence):  # noqa: F811
    hyena = evidence["hyena"]
    for index in range(6):  # six more papers measure HyenaDNA on the task: eight measurements in all
        measure(
            configuration=ConfigurationFactory(model=hyena),
            dataset=evidence["task"],
            protocol=evidence["protocol"],
            source=SourceFactory(work=WorkFactory()),
            value=f"0.5{index}",
            measured_by=MeasuredBy.THIRD_PARTY,
            measured_by_name="A lab",
        )
    body = get(client, TASK).content.decode()
    section = body.split('<a href="/models/hyenadna-tiny-1k/">HyenaDNA tiny 1k</a> · mcc:')[1].split("</section>")[0]
    assert section.count("<tr") == 1 + model_page.MEASUREMENTS_SHOWN  # the header and five
    assert "8 measurements of HyenaDNA tiny 1k (mcc)" in html.unescape(section)
    link = re.search(r'<a href="(/models/hyenadna-tiny-1k/\?[^"]+)">All 8 measurements', section).group(1)
    every = get(client, html.unescape(link))
    text = page_text(every)
    assert "Showing every measurement on nt-promoter-all · mcc" in text
    assert every.content.decode().count('class="agreement verdict-') == 1
    rows = every.content.decode().split('<table class="agreement-measurements reflow">')[1].split("</table>")[0]
    assert rows.count("<tr") == 1 + 8


def test_the_model_page_shows_a_few_measurements_a_task_and_pages_one_tasks_every_measurement(client, evidence):  # noqa: F811
    hyena = evidence["hyena"]
    for index in range(30):
        measure(
            configuration=ConfigurationFactory(model=hyena),
            dataset=evidence["task"],
            protocol=evidence["protocol"],
            source=SourceFactory(work=WorkFactory()),
            value=f"0.{10 + index}",
            measured_by=MeasuredBy.THIRD_PARTY,
            measured_by_name="A lab",
        )
    page = get(client, "/models/hyenadna-tiny-1k/").content.decode()
    assert "HyenaDNA tiny 1k on Promoter (all) (mcc): 32 measurements" in html.unescape(page)
    assert "All 32 measurements on Promoter (all) (mcc)" in html.unescape(page)
    url = "/models/hyenadna-tiny-1k/"
    seen = walk(
        client,
        f"{url}?task=nt-promoter-all&metric=mcc",
        "tasks-list",
        lambda body: re.findall(r'<th scope="row"><a href="(/evaluations/[^"]+)"', body),
    )
    assert len(seen) == 32 and len(set(seen)) == 32
    configurations = walk(
        client, url, "configurations-list", lambda body: re.findall(r'<li><a href="(/configurations/[^"]+)"', body)
    )
    assert len(configurations) == Configuration.objects.filter(model=hyena).count() == 32
    assert "32 are recorded." in page_text(get(client, url))


def test_the_work_source_and_configuration_pages_page_their_lists(client, evidence):  # noqa: F811
    work = evidence["hyena_work"]
    for index in range(30):
        SourceFactory(work=work, title=f"HyenaDNA at commit {index:02d}")
    versions = walk(
        client,
        f"/works/{work.stable_id}/",
        "versions-list",
        lambda body: re.findall(r'<th scope="row"><a href="(/sources/[^"]+)"', body),
    )
    assert len(versions) == len(set(versions)) == 32
    assert "Evaluations reported 1, across 32 versions" in page_text(get(client, f"/works/{work.stable_id}/"))

    source = evidence["source_a"]
    configuration = ConfigurationFactory(stable_id="many-tasks")
    protocol = evidence["protocol"]
    for index in range(30):
        evaluation = EvaluationFactory(
            protocol=protocol, configuration=configuration, source=source, title=f"Row {index:02d}"
        )
        ResultFactory(evaluation=evaluation, value=Decimal("0.5"))
    cited = walk(
        client,
        f"/sources/{source.stable_id}/",
        "citing-list",
        lambda body: re.findall(r'<li>evaluation: <a href="(/evaluations/[^"]+)"', body),
    )
    assert len(cited) == len(set(cited)) == Evaluation.objects.filter(source=source).count()
    assert f"{len(cited)} evaluations" in page_text(get(client, f"/sources/{source.stable_id}/"))
    evaluations = walk(
        client,
        "/configurations/many-tasks/",
        "evaluations-list",
        lambda body: re.findall(r'<th scope="row"><a href="(/evaluations/[^"]+)"', body),
    )
    assert len(evaluations) == len(set(evaluations)) == 30
    assert "Evaluations of this configuration: 1–25 of 30" in page_text(get(client, "/configurations/many-tasks/"))


def queries(client, url: str) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.parametrize(
    "url",
    [
        TASK,
        f"{TASK}?table=mcc-mcc&page=2",
        f"{TASK}?table=agreements&page=2",
        "/models/hyenadna-tiny-1k/",
        "/models/hyenadna-tiny-1k/?task=nt-promoter-all&metric=mcc&table=measurements&page=2",
        "/works/hyenadna-work/",
        "/sources/paper-a/",
        "/configurations/hyena-b/",
    ],
)
def test_the_bounded_pages_run_the_same_number_of_queries_at_two_sizes(client, evidence, url):  # noqa: F811
    more_evaluations(evidence, 12)  # some 20 evaluations
    small = queries(client, url)
    more_evaluations(evidence, 120)  # some 140
    assert queries(client, url) == small
    assert small <= 16, small


def _none():
    from django.http import QueryDict

    return QueryDict()
