"""The task page's "best over time" charts (pages.timeline) on the shipped real tables
(data/examples/) and on made-up ones: which measurements are new bests, in which order partial
publication dates put them, where no chart is drawn, and that record text reaches the SVG escaped."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.http import QueryDict

from pages import identity_pages, timeline
from records.models import Direction
from tests.factories import ConfigurationFactory, DatasetFactory, ProtocolFactory, SourceFactory
from tests.helpers import load_for_module
from tests.pages.test_identity_pages import GenomicModelFactory, get, measure, page_text

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def loaded(demo_snapshot, module_transaction):
    return load_for_module(module_transaction, demo=demo_snapshot)


def timelines(stable_id: str) -> dict[str, timeline.Timeline | None]:
    """The task page's timelines by metric (None for a metric drawn without one)."""
    page = identity_pages.task_page(stable_id=stable_id, params=QueryDict())
    found: dict[str, timeline.Timeline | None] = {}
    for view in page.tables:
        found[view.table.metric] = view.timeline or found.get(view.table.metric)
    return found


def steps_of(drawn: timeline.Timeline) -> list[tuple[str, str, str, str]]:
    return [(step.dating.text, step.label, step.value_text, step.source_label) for step in drawn.steps]


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("2023", datetime.date(2023, 12, 31)),
        ("2024-02", datetime.date(2024, 2, 29)),
        ("2023-10-09", datetime.date(2023, 10, 9)),
        ("", None),
        ("2023-13", None),
        ("around 2023", None),
    ],
)
def test_it_reads_a_partial_date_as_the_last_day_it_may_stand_for(text, end):
    assert timeline.date_end(text) == end


def test_the_promoter_tasks_f1_timeline_steps_from_the_hyenadna_paper_to_the_caduceus_paper(loaded):
    """The promoter task's F1 is printed by HyenaDNA (2023, x 100, copying the NT preprint) and by
    Caduceus (2024, fractions, copying the NT leaderboard): two tables, one timeline on one scale."""
    found = timelines("ntv1-promoter-all")
    drawn = found["f1"]
    assert drawn is not None
    assert steps_of(drawn) == [
        ("2023", "Nucleotide Transformer v1 2.5B multi-species", "97.4 F1 x 100", "Nguyen et al. 2023"),
        ("2024", "Nucleotide Transformer v2 500M multi-species", "0.976 ± 0.006 range F1", "Schiff et al. 2024"),
    ]
    first, second = drawn.steps
    assert first.x < second.x and second.y < first.y  # later, and higher on the page: a better F1
    assert second.interval is not None and second.high_y < second.y < second.low_y  # its ± drawn
    # 11 of HyenaDNA's and Caduceus' papers, 10 of MergeDNA's Table 2 (2026) and JanusDNA's own 3
    # (its copies of Caduceus count once with them)
    assert drawn.dated == 24 and drawn.undated == 0
    # the MCC of the NT authors' figure has one date: no chart
    assert found["mcc"] is None


def test_a_date_known_only_to_the_year_comes_after_a_day_of_that_year(loaded):
    """Enhancers, MCC: the NT figure (2023-10-09) prints 0.55; HyenaDNA's paper, dated 2023 only,
    prints 59.3 (x 100): counted at 2023-12-31, it is the later, and a new best."""
    drawn = timelines("ntv1-enhancers")["mcc"]
    assert drawn is not None
    assert [(step.dating.text, step.value_text) for step in drawn.steps] == [
        ("2023-10-09", "0.55 MCC"),
        ("2023", "59.3 MCC x 100"),
        ("2026", "79.90 MCC (%)"),  # MxDNA, as MergeDNA's Table 2 (2026) prints it
    ]
    assert [label for _, label, _ in drawn.x_ticks] == ["2023", "2024", "2025", "2026"]
    assert drawn.x_ticks[0][0] == drawn.steps[1].x  # "2023" drawn at its tick, the year's last day


def test_each_step_beats_every_measurement_dated_before_it(loaded):
    page = identity_pages.task_page(stable_id="ntv1-h3k4me3", params=QueryDict())
    tables = [view.table for view in page.tables if view.table.metric == "mcc"]
    drawn = next(view.timeline for view in page.tables if view.timeline is not None)
    dated = [
        (dating.end, row.measurement.value)
        for table in tables
        for row in table.rows
        if (dating := timeline.dating_of(row.measurement)) is not None
    ]
    best = None
    expected = []
    for end in sorted({end for end, _ in dated}):
        top = max(value for day, value in dated if day == end)
        if best is None or top > best:
            expected.append((end, top))
            best = top
    assert [(step.dating.end, step.measurement.value) for step in drawn.steps] == expected
    assert drawn.sentence.startswith(f"The best MCC over time: the running best of the {len(dated)} ")


def test_the_task_page_says_how_it_orders_partial_dates_only_where_it_draws_a_timeline(client, loaded):
    text = page_text(get(client, "/datasets/ntv1-promoter-all/"))
    assert "The best F1 over time: the running best of the 24 source-checked measurements above" in text
    assert timeline.DATE_RULE in text
    assert "The best MCC over time" not in text
    body = get(client, "/datasets/ntv1-promoter-all/").content.decode()
    assert body.count('class="chart timeline"') == 1


def test_lower_is_better_steps_down_and_a_tie_is_no_new_best():
    def dated(day: int, value: str):
        return (SimpleNamespace(end=datetime.date(2024, 1, day)), SimpleNamespace(value=Decimal(value)))

    rows = [dated(1, "5"), dated(2, "6"), dated(3, "5"), dated(4, "4"), dated(4, "3"), dated(5, "3")]
    found = timeline.new_bests(rows, lower_is_better=True)
    assert [(item[0].end.day, item[1].value) for item in found] == [(1, Decimal("5")), (4, Decimal("3"))]
    assert [item[1].value for item in timeline.new_bests(rows, lower_is_better=False)] == [Decimal("5"), Decimal("6")]


@pytest.fixture
def dated_task():
    task = DatasetFactory(stable_id="dated-task", name="A dated task")
    protocol = ProtocolFactory(
        metric_name="AUROC", metric_short_name="auroc", metric_unit="AUROC", metric_direction=Direction.HIGHER
    )
    return task, protocol


def test_no_timeline_and_no_sentence_with_fewer_than_two_dates(client, dated_task):
    task, protocol = dated_task
    for value, date in (("0.8", "2021"), ("0.9", ""), ("0.7", "2021")):
        measure(
            configuration=ConfigurationFactory(model=GenomicModelFactory()),
            dataset=task,
            protocol=protocol,
            source=SourceFactory(published_date=date),
            value=value,
        )
    text = page_text(get(client, "/datasets/dated-task/"))
    assert "over time" not in text and "Publication date" not in text


def test_record_text_reaches_the_timeline_escaped_and_undated_rows_are_counted(client, dated_task):
    task, protocol = dated_task
    evil = GenomicModelFactory(name='<script>alert("x")</script> & Co')
    for value, date, model in (("0.8", "2021-03", evil), ("0.9", "2022", GenomicModelFactory()), ("0.95", "", evil)):
        measure(
            configuration=ConfigurationFactory(model=model),
            dataset=task,
            protocol=protocol,
            source=SourceFactory(published_date=date, authors_short="Smith <i>et al.</i>"),
            value=value,
        )
    body = get(client, "/datasets/dated-task/").content.decode()
    svg = re.search(r'<svg[^>]*class="chart timeline".*?</svg>', body, flags=re.DOTALL).group(0)
    assert "<script>" not in svg and "<i>" not in svg
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co" in svg
    assert "Smith &lt;i&gt;et al.&lt;/i&gt;" in svg
    text = page_text(get(client, "/datasets/dated-task/"))
    assert "the running best of the 2 source-checked measurements above that have a publication date" in text
    assert "(1 without one is not drawn): 2 new bests" in text
