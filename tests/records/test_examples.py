"""Real papers' tables (data/examples/) imported as a curator would: per-task best marks match the
papers' own marks among source-checked rows, values come back with every printed digit, the
documents re-import without a change, and every number shows where it was read."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from records import comparisons
from records.examples import EXAMPLES_DIR, example_document, example_paths, examples_load
from records.models import Evaluation, Protocol, Result, Source
from records.values import display, exact_text, parse_exact
from tests.helpers import load_for_module

pytestmark = pytest.mark.django_db

GUE = "01-dnabert2-gue"
NT_V1 = "02-nt-benchmark-hyenadna-caduceus"
DNA_FM = "03-dna-foundation-models-benchmark-nat-commun"
FACTS = "04-pretraining-facts-and-speedups"


@pytest.fixture(scope="module")
def first_load(module_transaction):
    """The seed, then one load of every document (it takes seconds), shared by the module's tests:
    each reads what it needs, in its own savepoint."""
    return load_for_module(module_transaction)


def expected(name: str) -> dict:
    return json.loads((EXAMPLES_DIR / f"{name}.expected.json").read_text())


def best_by_task(protocol_id: str) -> dict[str, list[str]]:
    """Task (dataset stable id) -> the configurations marked best there, as the pages compute it."""
    protocol = Protocol.objects.get(stable_id=protocol_id)
    evaluations = list(
        protocol.evaluations.select_related("dataset", "configuration", "repeats").prefetch_related("results")
    )
    groups = comparisons.compare(protocol=protocol, evaluations=evaluations, include_excluded=False)
    return {
        g.dataset.stable_id: sorted(r.evaluation.configuration.stable_id for r in g.rows if r.is_best) for g in groups
    }


def test_every_shipped_number_shows_where_it_was_read():
    for path in example_paths():
        document = example_document(path)
        assert document["version"] == 2 and document["notes"], path.name
        for evaluation in document["evaluations"]:
            assert evaluation["quote"].strip() and evaluation["source_locator"].strip(), evaluation["stable_id"]
            for result in evaluation["results"]:
                value = parse_exact(result["value"])
                assert exact_text(value) == exact_text(parse_exact(str(result["value"])))


def test_the_gue_tasks_best_marks_are_the_papers_bold_cells(first_load, client):
    bold = expected(GUE)["protocols"]
    assert sum(len(tasks) for tasks in bold.values()) == 28
    for protocol_id, tasks in bold.items():
        assert best_by_task(protocol_id) == {task: sorted(configs) for task, configs in tasks.items()}
    # And the page's matrix marks the same cell in each task's column.
    body = client.get("/protocols/gue-mcc-x100-zhou-2024/").content.decode()
    table = body.split('<table class="results matrix">')[1].split("</table>")[0]
    columns = re.findall(r'<th scope="col" id="column-([^"]+)">', table)
    marked = {key: [] for key in columns}
    for row in table.split("<tbody>")[1].split("</tr>")[:-1]:
        configuration = re.search(r'href="/configurations/([^/]+)/"', row).group(1)
        for key, cell in zip(columns, row.split("<td>")[1:], strict=True):
            if "(best in column" in cell:
                marked[key].append(configuration)
    assert marked == {task: sorted(configs) for task, configs in bold["gue-mcc-x100-zhou-2024"].items()}
    assert "(MCC x 100)" in table  # the unit heads every task column


def test_the_benchmarks_best_marks_are_each_rows_highest_auc(first_load):
    """Its bold means 'higher than at least two other AUCs', not best: the portal marks the highest."""
    highest = expected(DNA_FM)["column_max"]
    for protocol_id, tasks in highest.items():
        assert best_by_task(protocol_id) == {task: sorted(configs) for task, configs in tasks.items()}


def test_the_hyenadna_self_reports_stay_out_and_the_copied_nt_numbers_compare(first_load):
    document = example_document(EXAMPLES_DIR / f"{NT_V1}.json")
    excluded = {item["record"].split("/")[1] for item in document["reviews"]}
    assert Evaluation.objects.filter(stable_id__in=excluded, review_state="excluded").count() == len(excluded) == 26
    for evaluation in Evaluation.objects.filter(stable_id__in=excluded):
        assert evaluation.concern and not evaluation.is_comparable
    assert best_by_task("ntv1-mcc-x100")["ntv1-enhancers"] == [
        "hyena-gpt-1-6m-ft",
        "hyena-nt-2-5b-3202-genomes",
    ]  # 59.3 each


def test_all_four_documents_keep_every_printed_digit_re_import_unchanged_and_never_rank_descriptive_facts(
    first_load, client
):
    """The first load of every document, then what a reader and a re-import see."""
    first = first_load
    assert sum(len(ids) for report in first.documents.values() for ids in report.created.values()) > 1500
    # Every value comes back with its printed digits from the database, the API and the page.
    printed: dict[str, Decimal] = {}
    for path in example_paths():
        for evaluation in example_document(path)["evaluations"]:
            for result in evaluation["results"]:
                printed[result["stable_id"]] = parse_exact(result["value"])
    stored = dict(Result.objects.filter(stable_id__in=printed).values_list("stable_id", "value"))
    assert {k: exact_text(v) for k, v in stored.items()} == {k: exact_text(v) for k, v in printed.items()}
    api, through_api, url = APIClient(), {}, "/api/v1/results/?page_size=200"
    while url:
        page = api.get(url).json()
        through_api.update({row["result_id"]: row["value"] for row in page["results"]})
        url = page["next"]
    assert {k: through_api[k] for k in printed} == {k: exact_text(v) for k, v in printed.items()}
    assert through_api["dnafm-t3-human-5mc-dnabert-2-r1"] == "0.685"  # printed beside 0.7377, never padded
    tokens = client.get("/protocols/facts-proto-pretraining-tokens-seen/").content.decode()
    assert "300 × 10⁹" in tokens and "1 × 10¹²" in tokens and "472.5 × 10⁹" in tokens  # 300B, 1T, 472.5B
    # Descriptive facts are listed, never ranked; a ratio names its reference.
    assert Protocol.objects.get(stable_id="facts-proto-pretraining-tokens-seen").metric_direction == "none"
    assert "best in column" not in tokens and "never ranked" in tokens
    speedup = Result.objects.get(evaluation__stable_id__startswith="facts-ev-speedup-hyenadna", relation="ratio")
    assert (exact_text(speedup.value), speedup.printed_value.replace("×", "x")[:4]) == ("160", "160x")
    page = client.get("/protocols/facts-proto-training-speedup-vs-reference/").content.decode()
    assert (
        f"ratio to {speedup.reference_configuration.short_name or speedup.reference_configuration.name}"
        in page.replace("&#x27;", "'")
    )
    # A second load changes nothing: no write, no history row, no review transition.
    counts = {model: model.history.count() for model in (Evaluation, Result, Source)}
    second = examples_load()
    assert all(
        not report.changed_anything and not report.kept and not report.conflicts for report in second.documents.values()
    )
    assert second.transitions == 0
    assert {model: model.history.count() for model in counts} == counts


def test_a_number_searched_finds_its_results_with_value_unit_task_and_state(first_load, client):
    body = client.get("/search/", {"q": "0.7377"}).content.decode()
    assert "dnafm-t3-human-5mc-nt-v2-r1" in body
    assert "0.7377 AUC (printed 0.7377) · Human 5mC · source checked" in body
    assert display(Decimal("0.7377")) == "0.7377"
