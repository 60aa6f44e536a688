"""The task page (a dataset's page), the model page and the work page, read through the test client:
one row per measurement however often it is printed, who measured it, the verdict with its rule,
ties within reported spread, search leading to them, and a constant number of queries."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import factory
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records.agreement import AGREEMENT_RULE
from records.models import (
    Direction,
    Evaluation,
    GenomicModel,
    MeasuredBy,
    ModelAlias,
    ReadingMethod,
    Result,
    TaskEquivalence,
    Work,
    alias_key,
)
from records.search_index import search_index_rebuild
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    ProtocolFactory,
    ResultFactory,
    SourceFactory,
)
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


class WorkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Work

    stable_id = factory.Sequence(lambda n: f"work-{n}")
    title = factory.Sequence(lambda n: f"A work about genomic models, part {n}")


class GenomicModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GenomicModel

    stable_id = factory.Sequence(lambda n: f"model-{n}")
    name = factory.Sequence(lambda n: f"Genomic model {n}")


class ModelAliasFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ModelAlias

    stable_id = factory.Sequence(lambda n: f"alias-{n}")
    model = factory.SubFactory(GenomicModelFactory)
    alias = factory.Sequence(lambda n: f"Alias {n}")
    key = factory.LazyAttribute(lambda o: alias_key(o.alias))
    source = factory.SubFactory(SourceFactory)  # a stated alias names the source that prints it


def page_text(response) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    text = re.sub(r"<[^>]+>", " ", response.content.decode())
    return re.sub(r"\s+([,;:).])", r"\1", re.sub(r"\s+", " ", html.unescape(text)))


def get(client, url: str):
    cache.clear()  # the factories write around the services (no catalogue version bump): render afresh
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response


def checked(evaluation: Evaluation) -> Evaluation:
    apply_transitions(evaluation, "check_source")
    return evaluation


def measure(*, configuration, dataset, protocol, source, value: str, spread: str | None = None, **fields):
    evaluation = EvaluationFactory(
        protocol=protocol, configuration=configuration, dataset=dataset, source=source, **fields
    )
    result = ResultFactory(
        evaluation=evaluation,
        value=Decimal(value),
        printed_value=f"{value} ± {spread}" if spread else value,
        uncertainty_kind="sd" if spread else "",
        uncertainty_value=Decimal(spread) if spread else None,
    )
    checked(evaluation)
    return evaluation, result


@pytest.fixture
def evidence():
    """Two papers (works) measure HyenaDNA on a promoter task: both print one number of an
    uncatalogued leaderboard, one rounded (0.55), one exactly (0.549 ± 0.056); the second also
    measures it itself on a task of another suite that a source says is the same data. Caduceus is
    best, its spread reaching both HyenaDNA values. DNABERT-2's authors and a third party disagree."""
    hyena_work = WorkFactory(stable_id="hyenadna-work", title="HyenaDNA: long-range genomic sequence modeling")
    hyena_source = SourceFactory(
        stable_id="hyenadna-neurips", title="HyenaDNA (NeurIPS)", work=hyena_work, doi="10.5555/hyena"
    )
    SourceFactory(stable_id="hyenadna-arxiv", title="HyenaDNA (arXiv)", work=hyena_work, arxiv_id="2306.15794")
    work_a, work_b = WorkFactory(title="Paper A"), WorkFactory(title="Paper B")
    source_a = SourceFactory(stable_id="paper-a", title="Paper A, the journal version", work=work_a)
    source_b = SourceFactory(stable_id="paper-b", title="Paper B, the preprint", work=work_b)
    hyena = GenomicModelFactory(
        stable_id="hyenadna-tiny-1k",
        name="HyenaDNA tiny 1k",
        family="HyenaDNA",
        parameter_count=1_600_000,
        public_id="LongSafari/hyenadna-tiny-1k-seqlen",
        introduced_in=hyena_work,
    )
    ModelAliasFactory(model=hyena, alias="HyenaDNA-1KB", source=source_a, locator="Table 2")
    caduceus = GenomicModelFactory(stable_id="caduceus-ph", name="Caduceus-Ph")
    dnabert = GenomicModelFactory(stable_id="dnabert-2", name="DNABERT-2")
    suite = DatasetFactory(stable_id="nt-suite", name="NT benchmark")
    other_suite = DatasetFactory(stable_id="gue-suite", name="GUE")
    task = DatasetFactory(stable_id="nt-promoter-all", name="Promoter (all)", suite=suite, task_key="promoter_all")
    same = DatasetFactory(stable_id="gue-prom-300-all", name="prom_300_all", suite=other_suite, task_key="prom_300_all")
    TaskEquivalence.objects.create(
        stable_id="promoter-same-data",
        task=same,
        same_as=task,
        source=source_b,
        locator="Appendix B",
        quote="The promoter task is the NT benchmark's promoter_all.",
    )
    protocol = ProtocolFactory(
        stable_id="nt-mcc",
        title="NT benchmark, MCC",
        metric_name="MCC",
        metric_short_name="mcc",
        metric_unit="MCC",
        metric_direction=Direction.HIGHER,
        source=source_a,
    )
    protocol.datasets.set([suite])
    leaderboard = {
        "measured_by": MeasuredBy.THIRD_PARTY,
        "measured_by_name": "InstaDeep",
        "original_citation": "InstaDeep Nucleotide Transformer leaderboard",
    }
    hyena_a = ConfigurationFactory(stable_id="hyena-a", name="HyenaDNA-1KB (Paper A)", model=hyena)
    hyena_b = ConfigurationFactory(stable_id="hyena-b", name="HyenaDNA tiny, fine-tuned (Paper B)", model=hyena)
    rounded, _ = measure(
        configuration=hyena_a,
        dataset=task,
        protocol=protocol,
        source=source_a,
        value="0.55",
        reading_method=ReadingMethod.FIGURE_LABEL,
        **leaderboard,
    )
    exact, _ = measure(
        configuration=hyena_b,
        dataset=task,
        protocol=protocol,
        source=source_b,
        value="0.549",
        spread="0.056",
        **leaderboard,
    )
    own, _ = measure(
        configuration=hyena_b,
        dataset=same,
        protocol=protocol,
        source=source_b,
        value="0.53",
        spread="0.02",
        measured_by=MeasuredBy.THIRD_PARTY,
        measured_by_name="Paper B's authors",
    )
    best, _ = measure(
        configuration=ConfigurationFactory(stable_id="caduceus-a", name="Caduceus-Ph (Paper A)", model=caduceus),
        dataset=task,
        protocol=protocol,
        source=source_a,
        value="0.60",
        spread="0.08",
        measured_by=MeasuredBy.AUTHORS,
    )
    dnabert_configuration = ConfigurationFactory(
        stable_id="dnabert-2-a", name="DNABERT-2 (as published)", model=dnabert
    )
    measure(
        configuration=dnabert_configuration,
        dataset=task,
        protocol=protocol,
        source=hyena_source,
        value="0.90",
        measured_by=MeasuredBy.AUTHORS,
    )
    measure(
        configuration=dnabert_configuration,
        dataset=task,
        protocol=protocol,
        source=source_b,
        value="0.70",
        measured_by=MeasuredBy.THIRD_PARTY,
        measured_by_name="Paper B's authors",
    )
    search_index_rebuild()  # the factories write around the services, which keep the search index
    return {
        "task": task,
        "same": same,
        "hyena": hyena,
        "caduceus": caduceus,
        "dnabert": dnabert,
        "protocol": protocol,
        "rounded": rounded,
        "exact": exact,
        "own": own,
        "best": best,
        "hyena_work": hyena_work,
        "source_a": source_a,
    }


def task_rows(response) -> list[str]:
    """The task table's rows, as text."""
    table = response.content.decode().split('<table class="results task-results reflow">')[1].split("</table>")[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], flags=re.DOTALL)
    return [
        re.sub(r"\s+([,;:).])", r"\1", re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", row)))).strip()
        for row in rows
    ]


def test_the_task_page_shows_a_copy_printed_twice_as_one_row_comparing_the_exact_printing(client, evidence):
    response = get(client, "/datasets/nt-promoter-all/")
    rows = task_rows(response)
    hyena_rows = [row for row in rows if "HyenaDNA tiny 1k" in row]
    # the leaderboard's number (printed 0.55 by Paper A, 0.549 ± 0.056 by Paper B) and Paper B's own
    assert len(hyena_rows) == 2, rows
    copy_row = next(row for row in hyena_rows if "0.549" in row)
    assert "0.549 ±0.056 MCC" in copy_row
    assert "also printed as 0.55 by Paper A, the journal version (Test Venue)" in copy_row
    assert "a copy of InstaDeep Nucleotide Transformer leaderboard" in copy_row
    assert "A third party (InstaDeep)" in copy_row
    assert not any(row.count("0.55 ") and "0.549" not in row for row in rows), "the rounded printing is not a row"
    text = page_text(response)
    assert "Do independent measurements agree?" in text
    assert AGREEMENT_RULE in text
    assert "HyenaDNA tiny 1k · mcc: consistent" in text
    assert "DNABERT-2 · mcc: conflicting" in text
    # the same data in another suite: its measurement is read here, with the source's words
    assert "on prom_300_all" in copy_row or any("0.53 ±0.02" in row and "on prom_300_all" in row for row in rows)
    assert "The promoter task is the NT benchmark's promoter_all." in text
    assert "Paper B, the preprint (Test Venue) · Appendix B" in text
    assert "Scored by NT benchmark, MCC." in text
    assert response.content.decode().count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') == 1


def test_a_best_with_no_stated_spread_is_a_bare_best(client, evidence):
    """DNABERT-2's authors' 0.90 is best and states no spread: nothing is tied with it."""
    rows = task_rows(get(client, "/datasets/nt-promoter-all/"))
    assert rows[0].startswith("1 (best) DNABERT-2"), rows
    assert [row.split(" ")[0] for row in rows] == ["1", "2", "3", "4", "5"]
    assert not any("tied" in row for row in rows)


def test_a_best_whose_interval_overlaps_a_runner_ups_is_tied_with_it(client, evidence):
    """Without DNABERT-2's numbers Caduceus is best, and its 0.60 ± 0.08 overlaps HyenaDNA's 0.549 ± 0.056."""
    Result.objects.filter(evaluation__configuration__model=evidence["dnabert"]).delete()
    Evaluation.objects.filter(configuration__model=evidence["dnabert"]).delete()
    rows = task_rows(get(client, "/datasets/nt-promoter-all/"))
    assert rows[0].startswith("1 (best, tied with a runner-up)") and "Caduceus-Ph" in rows[0], rows
    assert "(tied with the best)" in rows[1] and "0.549" in rows[1]


def test_the_task_pages_rows_link_to_the_model_and_its_configuration(client, evidence):
    body = get(client, "/datasets/nt-promoter-all/").content.decode()
    assert '<a href="/models/hyenadna-tiny-1k/">HyenaDNA tiny 1k</a>' in body
    assert '<a href="/configurations/hyena-b/">' in body
    assert '<a href="/sources/paper-a/">' in body


def test_the_model_page_says_conflicting_where_the_authors_and_a_third_party_disagree(client, evidence):
    text = page_text(get(client, "/models/dnabert-2/"))
    assert "Promoter (all) · mcc: conflicting" in text
    assert "The model's authors" in text and "A third party (Paper B's authors)" in text
    assert AGREEMENT_RULE in text


def test_the_model_page_lists_every_task_across_papers_with_its_rank_in_the_protocol(client, evidence):
    response = get(client, "/models/hyenadna-tiny-1k/")
    text = page_text(response)
    for fact in (
        "HyenaDNA tiny 1k",
        "Family HyenaDNA",
        "Parameters (nominal) 1600000",
        "LongSafari/hyenadna-tiny-1k-seqlen",
        "Introduced in HyenaDNA: long-range genomic sequence modeling",
        "HyenaDNA-1KB: stated by Paper A, the journal version (Test Venue) · Table 2 (proposed)",
        "HyenaDNA-1KB (Paper A)",
        "Promoter (all) = prom_300_all · mcc: consistent",
        "0.549 ±0.056 MCC",
        "also printed as 0.55 by Paper A, the journal version (Test Venue) ·",
        "(counted once)",
        "A third party (InstaDeep)",
        "Source checked",
    ):
        assert fact in text, fact
    # ranks within the protocol's own comparison (one task at a time): 0.90, 0.70, 0.60, 0.549 on the NT task,
    # the leaderboard's 0.55 and 0.549 ± 0.056 one measurement there as on the task page
    assert "Rank 4 of 4 in NT benchmark, MCC (Promoter (all))" in text
    assert "of 5" not in text
    assert (
        "Not ranked here: the same value as another printing of the measurement, counted once in NT benchmark, MCC"
        in text
    )
    assert "Not ranked: no other source-checked row to compare with in NT benchmark, MCC (prom_300_all)" in text
    body = response.content.decode()
    assert '<a href="/works/hyenadna-work/">' in body and '<a href="/datasets/gue-prom-300-all/">' in body


def test_a_merged_models_page_points_at_the_model_it_was_merged_into(client, evidence):
    old = GenomicModelFactory(stable_id="hyenadna-1kb-old", name="HyenaDNA 1KB", merged_into=evidence["hyena"])
    response = get(client, f"/models/{old.stable_id}/")
    assert "Merged: this model is recorded as the same model as HyenaDNA tiny 1k" in page_text(response)
    assert '<a href="/models/hyenadna-tiny-1k/">HyenaDNA tiny 1k</a>' in response.content.decode()
    assert "Merged into this model HyenaDNA 1KB" in page_text(get(client, "/models/hyenadna-tiny-1k/"))


def test_the_work_page_lists_its_versions_their_evaluations_and_the_models_it_introduced(client, evidence):
    response = get(client, "/works/hyenadna-work/")
    text = page_text(response)
    assert "HyenaDNA: long-range genomic sequence modeling" in text
    assert "HyenaDNA (NeurIPS)" in text and "DOI 10.5555/hyena" in text
    assert "HyenaDNA (arXiv)" in text and "arXiv 2306.15794" in text
    assert "Evaluations reported 1, across 2 versions" in text
    assert '<a href="/models/hyenadna-tiny-1k/">HyenaDNA tiny 1k</a>' in response.content.decode()
    source_page = get(client, "/sources/hyenadna-neurips/").content.decode()
    assert '<a href="/works/hyenadna-work/">HyenaDNA: long-range genomic sequence modeling</a>' in source_page


@pytest.mark.parametrize("url", ["/models/no-such-model/", "/works/no-such-work/", "/datasets/no-such-task/"])
def test_it_answers_404_for_an_unknown_id(client, evidence, url):
    response = client.get(url)
    assert response.status_code == 404
    assert "There is no record at this address" in response.content.decode()


def search_links(client, query: str) -> list[str]:
    body = client.get("/search/", {"q": query}).content.decode()
    return re.findall(r'href="(/[a-z]+/[^/"]+/)"', body.split('class="search-results"')[1])


@pytest.mark.parametrize("query", ["HyenaDNA-1KB", "hyenadna 1kb", "HyenaDNA tiny", "hyenadna-tiny-1k"])
def test_search_finds_a_model_by_its_name_or_any_alias(client, evidence, query):
    links = search_links(client, query)
    assert links and links[0] == "/models/hyenadna-tiny-1k/", links


def test_search_finds_tasks_by_name_and_key_and_links_a_configurations_model(client, evidence):
    links = search_links(client, "promoter")
    assert links[0] == "/datasets/nt-promoter-all/", links  # before the results measured on it
    assert "/datasets/gue-prom-300-all/" in search_links(client, "prom_300_all")
    body = client.get("/search/", {"q": "promoter_all"}).content.decode()
    assert "task promoter_all of NT benchmark" in body
    assert (
        '(model: <a href="/models/hyenadna-tiny-1k/">HyenaDNA tiny 1k</a>)'
        in client.get("/search/", {"q": "Paper A", "type": "configuration"}).content.decode()
    )


def test_rows_on_the_protocol_evaluation_and_configuration_pages_link_the_model(client, evidence):
    link = '<span class="model-link">(model: <a href="/models/hyenadna-tiny-1k/">HyenaDNA tiny 1k</a>)</span>'
    short = '<a class="model-link" href="/models/hyenadna-tiny-1k/" title="HyenaDNA tiny 1k"'
    protocol_page = get(client, "/protocols/nt-mcc/").content.decode()
    # the matrix's rows of its two configurations (a short link), the evaluations table's of its three evaluations
    assert protocol_page.count(short) == 2 and protocol_page.count(link) == 3
    assert link in get(client, f"/evaluations/{evidence['exact'].stable_id}/").content.decode()
    configuration_page = get(client, "/configurations/hyena-b/").content.decode()
    assert '<dd><a href="/models/hyenadna-tiny-1k/">HyenaDNA tiny 1k</a>' in configuration_page
    assert '<a href="/datasets/gue-prom-300-all/">prom_300_all</a>' in configuration_page


def queries(client, url: str) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def more_evaluations(evidence, count: int) -> None:
    """`count` more source-checked evaluations of HyenaDNA on the task and on its same data, by many models and sources."""
    for index in range(count):
        model = GenomicModelFactory() if index % 3 else evidence["hyena"]
        measure(
            configuration=ConfigurationFactory(model=model if index % 4 else None),
            dataset=evidence["task"] if index % 2 else evidence["same"],
            protocol=evidence["protocol"]
            if index % 5
            else ProtocolFactory(metric_short_name="mcc", metric_unit="MCC x 100", metric_direction=Direction.HIGHER),
            source=SourceFactory(work=WorkFactory() if index % 2 else None),
            value=f"{index % 90 + 1}.{index % 7}",
            spread="0.5" if index % 3 == 0 else None,
            measured_by=MeasuredBy.THIRD_PARTY if index % 2 else MeasuredBy.AUTHORS,
            measured_by_name="A lab" if index % 2 else "",
            original_citation="A leaderboard" if index % 6 == 0 else "",
        )


@pytest.mark.parametrize(
    "url", ["/datasets/nt-promoter-all/", "/models/hyenadna-tiny-1k/", "/works/hyenadna-work/", "/search/?q=HyenaDNA"]
)
def test_the_identity_pages_run_a_constant_number_of_queries(client, evidence, url):
    more_evaluations(evidence, 12)  # some 20 evaluations
    with_twenty = queries(client, url)
    more_evaluations(evidence, 180)  # some 200
    assert Evaluation.objects.count() > 190
    assert queries(client, url) == with_twenty
    assert with_twenty <= 16, with_twenty


def test_the_task_and_model_pages_stay_within_their_query_budget(client, evidence, django_assert_max_num_queries):
    more_evaluations(evidence, 200)
    for url in ("/datasets/nt-promoter-all/", "/models/hyenadna-tiny-1k/"):
        cache.clear()
        with django_assert_max_num_queries(16):
            assert client.get(url).status_code == 200


def test_the_dataset_page_of_a_dataset_no_protocol_scores_keeps_its_facts(client, evidence):
    text = page_text(get(client, "/datasets/nt-suite/"))
    assert "Dataset" in text and "Do independent measurements agree?" not in text
    assert "Promoter (all)" in text  # its tasks


def test_an_excluded_measurement_counts_in_the_verdict_marked_but_leaves_the_ranked_table(client, evidence):
    apply_transitions(evidence["own"], "exclude", reason="Measured on the test split.")
    response = get(client, "/datasets/nt-promoter-all/")
    assert not any("0.53 ±0.02" in row for row in task_rows(response))
    text = page_text(response)
    agreement = text.split("HyenaDNA tiny 1k · mcc:")[1].split("Caduceus-Ph · mcc:")[0]
    assert agreement.startswith(" consistent")
    assert "0.53 ±0.02 MCC" in agreement and "A third party (Paper B's authors)" in agreement
    assert "Excluded from comparison (excluded from comparison; counted here, marked as such)" in agreement
    model_page = page_text(get(client, "/models/hyenadna-tiny-1k/"))
    assert "Not ranked: excluded from comparison in NT benchmark, MCC" in model_page
