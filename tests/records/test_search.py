"""Search over the real papers' tables (data/examples/): true counts per type past any cap, paging to
the last hit, a model's name in any spelling, relevance (the NT benchmark's promoter rows first for
"NT benchmark promoter"), numbers, near spellings, bad input, and a constant number of queries."""

from __future__ import annotations

import html
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from records.models import Dataset, Evaluation, GenomicModel
from records.search import PER_PAGE, search
from records.services import record_save
from tests.helpers import load_for_module

pytestmark = pytest.mark.django_db

NT_SUITES = {"nt-benchmark-revised-18-tasks", "ntv1-nt-benchmark-original-18-tasks"}
# What an evaluation is found by (records.search_documents.evaluation_entries), read here with the
# database's own substring match: a word the search finds is in one of these.
EVALUATION_FIELDS = (
    "title",
    "protocol__title",
    "dataset__name",
    "dataset__task_key",
    "dataset__suite__name",
    "configuration__name",
    "configuration__short_name",
    "configuration__model__name",
    "configuration__model__aliases__alias",
    "setup",
    "measured_by_name",
    "different_measurement",
    "source__authors_short",
)


@pytest.fixture(scope="module")
def demo(demo_snapshot, module_transaction):
    """The seed and every example document with the search entries their import wrote (copied from
    the session's snapshot of that import: tests/records/test_search_index.py tests the writes)."""
    return load_for_module(module_transaction, demo=demo_snapshot)


def evaluations_mentioning(word: str) -> set[str]:
    condition = Q()
    for field in EVALUATION_FIELDS:
        condition |= Q(**{f"{field}__icontains": word})
    return set(Evaluation.objects.filter(condition).values_list("stable_id", flat=True))


def all_hits(query: str, record_type: str = "") -> list:
    first = search(query=query, record_type=record_type)
    hits = []
    for number in first.page.paginator.page_range:
        hits += search(query=query, record_type=record_type, page=number).hits
    return hits


def page_text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_it_counts_every_hit_of_each_type_past_a_hundred_and_totals_them(demo, client):
    results = search(query="HyenaDNA")
    counts = dict((name, count) for name, _label, count in results.facets)
    expected = evaluations_mentioning("hyenadna")
    assert counts["evaluation"] == len(expected) > 100
    assert results.total == sum(counts.values())
    text = page_text(client.get("/search/", {"q": "HyenaDNA"}))
    assert f"{results.total} results for “HyenaDNA”" in text
    assert f"All types ({results.total})" in text and f"Evaluations ({len(expected)})" in text
    only = page_text(client.get("/search/", {"q": "HyenaDNA", "type": "evaluation"}))
    assert f"{len(expected)} results for “HyenaDNA”" in only
    assert f"page 1 of {-(-len(expected) // PER_PAGE)}" in only


def test_paging_reaches_the_last_hit_once_each(demo):
    hits = all_hits("HyenaDNA", "evaluation")
    assert [hit.stable_id for hit in hits if hit.type != "evaluation"] == []
    assert len(hits) == len({hit.stable_id for hit in hits})  # no hit twice across pages
    assert {hit.stable_id for hit in hits} == evaluations_mentioning("hyenadna")
    everything = all_hits("HyenaDNA")
    assert len(everything) == search(query="HyenaDNA").total


@pytest.mark.parametrize("spelling", ["DNABERT2", "DNABERT-2", "dnabert 2", "dnabert2"])
def test_a_models_name_in_any_spelling_finds_the_same_records_the_model_first(demo, spelling):
    found = {(hit.type, hit.stable_id) for hit in all_hits(spelling)}
    assert found == {(hit.type, hit.stable_id) for hit in all_hits("DNABERT-2")}
    first = search(query=spelling).hits[0]
    assert (first.type, first.stable_id) == ("model", "dnabert-2-117m")
    model = GenomicModel.objects.get(stable_id="dnabert-2-117m")
    assert {("configuration", c) for c in model.configurations.values_list("stable_id", flat=True)} <= found
    measured = Evaluation.objects.filter(configuration__model=model).values_list("stable_id", flat=True)
    assert len(measured) > 50 and {("evaluation", e) for e in measured} <= found


def is_nt_benchmark_promoter_row(hit) -> bool:
    if hit.type == "dataset":
        task = Dataset.objects.select_related("suite").get(stable_id=hit.stable_id)
    elif hit.type == "evaluation":
        task = Evaluation.objects.select_related("dataset__suite").get(stable_id=hit.stable_id).dataset
    else:
        return False
    return task.suite is not None and task.suite.stable_id in NT_SUITES and "promoter" in task.name.lower()


def test_nt_benchmark_promoter_ranks_the_nt_benchmarks_promoter_rows_first(demo):
    hits = all_hits("NT benchmark promoter")
    ranked = [is_nt_benchmark_promoter_row(hit) for hit in hits]
    elsewhere = [hit.title for hit, nt in zip(hits[: 2 * PER_PAGE], ranked, strict=False) if not nt]
    # Lindsey et al.'s Genomic Benchmarks row of the NT model prints every word of the query in its
    # title ("NT", "Benchmark", "Promoters"): the one hit of the first two pages that is not the NT
    # benchmark's promoter rows.
    assert elsewhere == [
        "NT (blocked k-mer) on Non-Tata Promoters (latex_table_gb_accuracy.tex, 'Accuracy Scores on the Genomic Benchmark')"
    ]
    # Another paper's promoter rows (the DNA foundation model benchmark's AUC tables) come after.
    other = [i for i, hit in enumerate(hits) if hit.type == "evaluation" and "Feng et al. 2025" in hit.title]
    assert other and min(other) >= 2 * PER_PAGE


def test_each_hit_shows_its_type_protocol_task_and_model(demo, client):
    body = client.get("/search/", {"q": "NT benchmark promoter", "type": "evaluation"}).content.decode()
    first = body.split('class="search-results"')[1].split("</li>")[0]
    assert '<span class="record-type">Evaluation</span>' in first
    assert re.search(r'protocol <a href="/protocols/[^"]+/">[^<]+</a>', first), first
    assert re.search(r'task <a href="/datasets/[^"]+/">[^<]*Promoter', first), first
    assert re.search(r'\(model: <a href="/models/[^"]+/">', first), first


def test_a_query_naming_a_task_or_model_leads_with_it(demo):
    assert search(query="promoter_all").hits[0].type_label == "Task"
    assert (search(query="NT-v2 500M").hits[0].type, search(query="nt v2 500m").hits[0].stable_id) == (
        "model",
        "nt-v2-500m-multi-species",
    )


def test_a_number_finds_its_results_with_the_printed_digits_first(demo):
    exact = search(query="0.410", record_type="result").hits
    loose = search(query="0.41", record_type="result").hits
    assert {hit.stable_id for hit in exact} == {hit.stable_id for hit in loose}  # 0.41 finds 0.410 and 0.41
    assert any("(printed 0.410" in hit.detail for hit in loose) and any("(printed 0.41)" in hit.detail for hit in loose)
    assert "(printed 0.410" in exact[0].detail


def test_nothing_matching_offers_near_spellings(demo, client):
    results = search(query="hyenadan")
    assert results.total == 0 and results.hits == []
    assert any("HyenaDNA" in hit.title for hit in results.near)
    text = page_text(client.get("/search/", {"q": "hyenadan"}))
    assert "0 results for “hyenadan”" in text and "Near spellings" in text


@pytest.mark.parametrize(
    ("page", "shown", "notice"),
    [
        ("9999", "last", "There is no page 9999"),
        ("0", 1, "Pages are numbered from 1"),
        ("-3", 1, "Pages are numbered from 1"),
        ("two", 1, "is not a page number"),
        ("2.5", 1, "is not a page number"),
        ("", 1, ""),
    ],
)
def test_a_page_number_out_of_range_or_not_a_number_shows_a_page_and_says_so(demo, client, page, shown, notice):
    response = client.get("/search/", {"q": "HyenaDNA", "type": "evaluation", "page": page})
    assert response.status_code == 200
    last = search(query="HyenaDNA", record_type="evaluation").page.paginator.num_pages
    number = last if shown == "last" else shown
    assert f"page {number} of {last}," in page_text(response)
    if notice:
        assert notice in page_text(response)


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "NEAR(a b",
        "a AND OR NOT",
        "name_text : x",
        "*",
        "dnabert*",
        "^hyena",
        "{a b}: c",
        "'; DROP TABLE x",
        "a\x00b",
        "a\x07b\u200bc",
        "ﬁ ½ ²",
        "-",
        "x" * 1000,
        "1e999",
    ],
)
def test_any_query_text_is_searched_or_refused_plainly_never_an_error(demo, client, query):
    response = client.get("/search/", {"q": query})
    if "\x00" in query:  # refused before any view (portal.middleware): a plain 400
        assert response.status_code == 400
        return
    assert response.status_code == 200
    assert "results for" in page_text(response) or "Search records" in page_text(response)


def test_an_unknown_type_searches_every_type(demo, client):
    text = page_text(client.get("/search/", {"q": "HyenaDNA", "type": "nonsense"}))
    assert f"{search(query='HyenaDNA').total} results for" in text


def queries(client, params: dict) -> int:
    cache.clear()  # searched afresh, not read from the page cache
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/search/", params).status_code == 200
    return len(captured)


def test_a_search_runs_the_same_queries_whatever_the_number_of_hits(demo, client):
    one = queries(client, {"q": "facts-proto-training-speedup-vs-reference"})
    assert search(query="facts-proto-training-speedup-vs-reference").total == 1
    many = [queries(client, {"q": q}) for q in ("HyenaDNA", "promoter", "0.41", "DNABERT-2")]
    paged = queries(client, {"q": "HyenaDNA", "type": "evaluation", "page": "9"})
    # The catalogue's version (the page cache's key), then the counts and one page from one reading.
    assert many == [one] * 4 and paged == one == 2
    assert queries(client, {"q": "hyenadan"}) == 3  # nothing matched: the near spellings too
    assert queries(client, {"q": "HyenaDNA", "page": "9999"}) == 3  # past the last page: the last one read again


def test_a_search_asked_again_is_read_from_the_page_cache_until_the_catalogue_changes(demo, client):
    first = client.get("/search/", {"q": "HyenaDNA"}).content
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/search/", {"q": "HyenaDNA"}).content == first
    assert len(captured) == 1  # the catalogue's version only
    model = GenomicModel.objects.get(stable_id="hyenadna-tiny-1k")
    model.name = "HyenaDNA tiny 1k, renamed"
    record_save(record=model, actor=None, changed_fields=["name"])
    assert "HyenaDNA tiny 1k, renamed" in client.get("/search/", {"q": "HyenaDNA"}).content.decode()


def test_a_reader_past_the_search_limit_is_told_when_to_come_back_and_staff_are_not_counted(
    demo, client, admin_client, settings
):
    settings.SEARCHES_PER_IP = 3
    for _ in range(3):
        assert client.get("/search/", {"q": "promoter"}).status_code == 200
    refused = client.get("/search/", {"q": "promoter"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "Too many searches from your address" in refused.content.decode()
    assert client.get("/search/").status_code == 200  # the empty form searches nothing and is not counted
    assert admin_client.get("/search/", {"q": "promoter"}).status_code == 200
