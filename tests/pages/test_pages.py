"""The public pages: every fact of the seed page, ordering, constant queries, 404s."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records.models import Dataset, Direction, Evaluation
from records.seed import PROTOCOL_ID
from tests.factories import ConfigurationFactory, EvaluationFactory, ProtocolFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

PROTOCOL_URL = f"/protocols/{PROTOCOL_ID}/"


def page_text(response) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    text = re.sub(r"<[^>]+>", " ", response.content.decode())
    return re.sub(r"\s+", " ", html.unescape(text))


SEED_FACTS = [
    "Nucleotide Transformer IA3 fine-tuning run time (Dalla-Torre et al. 2025 Methods 'Hardware')",
    "Average wall time of one parameter-efficient (IA3) fine-tuning run on the downstream tasks.",
    "An explanatory profile has not yet been reviewed for this record.",
    "View coverage and remaining gaps across all benchmarks",
    "2 evaluations · 2 results, each with its coverage, uncertainty, source, locator and quote.",
    "Dataset: NT benchmark, all 18 tasks",
    "2 results on NT benchmark, all 18 tasks, Runtime (Mean wall time per IA3 fine-tuning run) (minute), lower is better.",
    "Nucleotide Transformer 500M-parameter models, IA3 fine-tuning (Dalla-Torre et al. 2025)",
    "Nucleotide Transformer 2.5B-parameter models, IA3 fine-tuning (Dalla-Torre et al. 2025)",
    "50 minute (printed: 50 min)",
    "20 minute (printed: 20 min)",
    "Uncertainty: Not reported by the source",
    "Coverage: Not reported scored / Not reported eligible",
    "Author-reported evaluation · Source checked",
    "Evidence concern: excluded from comparisons Fine-tuning time conflicts within the article. Methods 'Hardware' say all "
    "fine-tuning runs used one node of eight A100 GPUs and averaged 20 min (500M-parameter models) and 50 min "
    "(2.5B-parameter models); the Discussion says the IA3 technique allows even the largest models to be fine-tuned in "
    "under 15 min on a single GPU. Both are recorded; neither is preferred.",
    "Nucleotide Transformer: building and evaluating robust foundation models for human genomics (Nature Methods) · "
    "Methods, 'Data preparation > Hardware', paragraph 1; Discussion, paragraph 3",
    "NT 2.5B-parameter models IA3 fine-tuning run time (Dalla-Torre et al. 2025)",
    "NT 500M-parameter models IA3 fine-tuning run time (Dalla-Torre et al. 2025)",
    "Aggregation: Not reported",
    "(Nature Methods) · Methods, 'Data preparation > Hardware', paragraph 1: 'On average, a fine-tuning run lasted 20 min "
    "for the 500M-parameter models and 50 min for the 2.5B-parameter models.'",
    "Source checking is not independent reproduction. Release 2026-10-22-1b7cf027e4f6.",
    "0 of 2 active baseline roles have a source-checked measurement here.",
    "No reviewed execution recipe; 1 execution recipe linked to this protocol.",
    "Author-reported evaluations: 2",
    "Proposed control: requires review",
    "Select a task-valid null control after reviewing inputs and metric",
    "Select an upstream conventional reference after reviewing the full protocol",
    "Protocol-specific applicability, permitted inputs, access, split, evaluator and execution requirements need review before implementation or execution.",
    "This is a suggested selection rule, not a validated method or a measured score.",
    "Coverage is derived from release 2026-10-22-1b7cf027e4f6.",
    "No runnable recipe has been reviewed for this protocol.",
    "Developer-reported average; the number of runs and the tasks averaged over are not stated.",
    "The Discussion's 'under 15 min on a single GPU' conflicts with these values (see the source concern).",
    "No evidence rows recorded for this record yet.",
    "Release 2026-10-22-1b7cf027e4f6 · Record review: source checked",
    "1 source record and release history",
    "Nucleotide Transformer: building and evaluating robust foundation models for human genomics (Nature Methods) · "
    "Original source · Nature Methods 22, 287-297 (published online 2024-11-28); PMC11810778 full-text XML",
    "Stable ID gfm-guide-20261014-protocol-nt-ia3-finetune-runtime",
    "areas dna-genomes",
    "contexts research",
    "protocol IA3 fine-tuning on one node of eight A100 GPUs, weights replicated, batch size eight (one sample per GPU); "
    "average duration of a fine-tuning run.",
    "version Nature Methods 2025 Methods",
    "metric runtime",
    # one limitation per line (the seed page's ".; " join is not kept)
    "limitations Developer-reported average; the number of runs and the tasks averaged over are not stated. The "
    "Discussion's 'under 15 min on a single GPU' conflicts with these values (see the source concern).",
    "source locator Methods, 'Data preparation > Hardware', paragraph 1",
    "uses data: NT benchmark, all 18 tasks",
    "assessment: NT 2.5B-parameter models IA3 fine-tuning run time (Dalla-Torre et al. 2025)",
    "assessment: NT 500M-parameter models IA3 fine-tuning run time (Dalla-Torre et al. 2025)",
    "assessed by: Select an execution workflow for large-scale diagnostic genomics",
    "Suggest a correction",
]


def test_it_shows_every_fact_of_the_seed_page(client, seeded):
    response = client.get(PROTOCOL_URL)
    assert response.status_code == 200
    text = page_text(response)
    assert [fact for fact in SEED_FACTS if fact not in text] == []


def result_values_in_order(response) -> list[str]:
    table = response.content.decode().split('<table class="results">')[1].split("</table>")[0]
    return re.findall(r'<a class="value" href="[^"]*"(?: title="[^"]*")?>([^<]+)</a>', table)


def test_it_orders_the_results_lower_is_better(client, seeded):
    assert result_values_in_order(client.get(PROTOCOL_URL)) == ["20", "50"]


def test_it_orders_the_results_higher_is_better(client):
    protocol = ProtocolFactory(metric_direction=Direction.HIGHER, metric_unit="MCC")
    for value in ("0.5", "0.9", "0.7"):
        ResultFactory(evaluation__protocol=protocol, value=Decimal(value))
    assert result_values_in_order(client.get(f"/protocols/{protocol.stable_id}/")) == ["0.9", "0.7", "0.5"]


def test_it_shows_no_best_value_when_every_row_is_excluded(client, seeded):
    assert "best in column" not in page_text(client.get(PROTOCOL_URL))


def test_it_marks_the_best_only_among_source_checked_rows(client):
    protocol = ProtocolFactory()
    checked = ResultFactory(evaluation__protocol=protocol, value=Decimal("30"))
    other = ResultFactory(evaluation__protocol=protocol, value=Decimal("40"))
    proposed = ResultFactory(evaluation__protocol=protocol, value=Decimal("10"))
    apply_transitions(checked.evaluation, "check_source")
    apply_transitions(other.evaluation, "check_source")
    response = client.get(f"/protocols/{protocol.stable_id}/")
    table = response.content.decode().split('<table class="results">')[1].split("</table>")[0]
    best_rows = [row for row in table.split("<tr") if "(best in column" in row]
    assert len(best_rows) == 1 and checked.evaluation.configuration.name in best_rows[0]
    assert proposed.evaluation.configuration.name not in best_rows[0]


def protocol_page_queries(client, protocol, *, cached: bool = False) -> int:
    if not cached:
        cache.clear()  # the factories write around the services, so no version bump: render afresh
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/protocols/{protocol.stable_id}/").status_code == 200
    return len(queries)


def test_it_renders_the_protocol_page_in_constant_queries(client):
    protocol = ProtocolFactory()
    configuration = ConfigurationFactory()
    for _ in range(2):
        ResultFactory(evaluation__protocol=protocol, evaluation__configuration=configuration)
    with_two = protocol_page_queries(client, protocol)
    for _ in range(498):
        ResultFactory(
            evaluation__protocol=protocol,
            evaluation__configuration=configuration,
            evaluation__dataset=Dataset.objects.first(),
        )
    assert Evaluation.objects.filter(protocol=protocol).count() == 500
    # One fewer: the correction form lists no value of a protocol with more than a page lists.
    assert protocol_page_queries(client, protocol) == with_two - 1
    # From the page cache: the catalogue version and the record (its correction form is cached too).
    assert protocol_page_queries(client, protocol, cached=True) == 2


@pytest.mark.parametrize("kind", ["protocols", "evaluations", "configurations", "datasets", "sources", "decisions"])
def test_it_answers_404_for_an_unknown_id(client, seeded, kind):
    response = client.get(f"/{kind}/no-such-record/")
    assert response.status_code == 404
    assert "There is no record at this address" in response.content.decode()


@pytest.mark.parametrize(
    "url, text",
    [
        ("/", "Nucleotide Transformer IA3 fine-tuning run time"),
        ("/?q=IA3", "gfm-guide-20261014-protocol-nt-ia3-finetune-runtime"),
        ("/evaluations/nt-500m-ia3-finetune-runtime-dalla-torre-2025/", "20 min"),
        ("/configurations/nt-2-5b-ia3-dalla-torre-2025/", "NT 2.5B-parameter models IA3 fine-tuning run time"),
        ("/datasets/nt-benchmark-revised-18-tasks/", "H4K20me1"),
        ("/datasets/nt-benchmark-revised-splice-sites-all/", "600 bp"),
        ("/sources/dalla-torre-2025-nature-methods-nucleotide-transformer/", "PMC11810778"),
        ("/decisions/select-execution-workflow-large-scale-diagnostic-genomics/", "assessment:"),
        ("/coverage/", "Coverage and remaining gaps across all benchmarks"),
    ],
)
def test_it_serves_every_public_page(client, seeded, url, text):
    response = client.get(url)
    assert response.status_code == 200
    assert text in page_text(response)


def test_it_escapes_record_text(client):
    protocol = ProtocolFactory(title="<script>alert(1)</script>")
    body = client.get(f"/protocols/{protocol.stable_id}/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def best_row(response) -> str | None:
    table = response.content.decode().split('<table class="results">')[1].split("</table>")[0]
    rows = [row for row in table.split("<tr") if "(best in column" in row]
    assert len(rows) <= 1
    return rows[0] if rows else None


def test_it_includes_excluded_rows_in_the_comparison_only_on_request(client):
    protocol = ProtocolFactory()
    checked = ResultFactory(evaluation__protocol=protocol, value=Decimal("30"))
    second = ResultFactory(evaluation__protocol=protocol, value=Decimal("50"))
    excluded = ResultFactory(evaluation__protocol=protocol, value=Decimal("10"))
    proposed = ResultFactory(evaluation__protocol=protocol, value=Decimal("5"))
    apply_transitions(checked.evaluation, "check_source")
    apply_transitions(second.evaluation, "check_source")
    apply_transitions(excluded.evaluation, "check_source", "exclude", reason="Measured on the test split.")
    url = f"/protocols/{protocol.stable_id}/"
    default = client.get(url)
    assert checked.evaluation.configuration.name in best_row(default)
    assert "Excluded from comparison: Measured on the test split." in page_text(default)
    assert "Proposed: source not yet checked; not compared" in page_text(default)
    included = client.get(url, {"include": "excluded"})
    assert excluded.evaluation.configuration.name in best_row(included)
    assert "(best in column, excluded rows included)" in page_text(included)
    assert proposed.evaluation.configuration.name not in best_row(included)


def test_it_shows_the_seed_pages_best_value_when_excluded_rows_are_included(client, seeded):
    row = best_row(client.get(PROTOCOL_URL, {"include": "excluded"}))
    assert "500M-parameter models" in row


def test_it_names_the_reviewers_role_not_their_name(client, curator, settings):
    evaluation = EvaluationFactory()
    from reviews.services import review_transition_apply

    review_transition_apply(record=evaluation, transition="check_source", actor=curator)
    url = f"/evaluations/{evaluation.stable_id}/"
    text = page_text(client.get(url))
    assert "Source checked" in text and "by a curator)" in text and curator.username not in text
    settings.PUBLIC_REVIEWER_NAMES = True  # a setting pages read: part of the page cache's key
    assert f"by {curator.username}, curator)" in page_text(client.get(url))


def test_it_pages_the_evaluations_table_and_the_results_table(client):
    protocol = ProtocolFactory()
    for _ in range(130):
        ResultFactory(evaluation__protocol=protocol)
    url = f"/protocols/{protocol.stable_id}/"
    first = client.get(url).content.decode()
    assert first.count('<tr id="evaluation-') == 20
    assert "results: evaluations 1–20 of 130</caption>" in first
    assert '<a href="?table=evaluations&amp;page=2#all-rows">2</a>' in first
    assert first.count('class="evaluation-link"') == 50  # the results table's first page
    assert "rows 1–50 of 130" in first and '<a href="?table=rows&amp;page=3#results">3</a>' in first
    assert client.get(f"{url}?table=rows&page=3").content.decode().count('class="evaluation-link"') == 30
    last = client.get(f"{url}?table=evaluations&page=7&measured_by=authors").content.decode()
    assert last.count('<tr id="evaluation-') == 10 and "evaluations 121–130 of 130" in last
    assert "Evaluations 121–130 of 130, 20 a page." in last
    assert (
        'href="?measured_by=authors&amp;page=' not in last and 'href="?#all-rows"' in last
    )  # a new selection starts at page 1
    assert (
        client.get(f"{url}?table=evaluations&page=99").content.decode().count('<tr id="evaluation-') == 10
    )  # past the end: the last page


def test_a_result_landing_between_the_pages_two_reads_is_left_for_the_next_rendering(client):
    """The chaos run met it: a job's evaluation and result committed after the page read the
    evaluations and before it read their results (a KeyError, a 500). The page shows the first read."""
    protocol = ProtocolFactory()
    ResultFactory(evaluation=EvaluationFactory(protocol=protocol, title="Measured before"), value=Decimal("2"))
    landed = []

    def land_between_the_reads(execute, sql, params, many, context):
        if not landed and 'FROM "records_result"' in sql:
            landed.append(True)  # once, and before the recursive inserts below reach this wrapper
            ResultFactory(evaluation=EvaluationFactory(protocol=protocol, title="Landed meanwhile"))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(land_between_the_reads):
        response = client.get(f"/protocols/{protocol.stable_id}/")
    assert landed and response.status_code == 200
    body = response.content.decode()
    assert "Measured before" in body and "Landed meanwhile" not in body
    cache.clear()
    assert "Landed meanwhile" in client.get(f"/protocols/{protocol.stable_id}/").content.decode()
