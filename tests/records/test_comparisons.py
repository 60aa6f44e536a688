"""Comparisons are made like with like: one protocol (one metric), one dataset or task, one relation
to one reference; among source-checked rows; never with fewer than two rows; never for descriptive
protocols; a repeated measurement counts once."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest

from records import comparisons
from records.models import Evaluation, comparable_q
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


def checked_result(protocol, dataset, configuration, value: str, **result):
    evaluation = EvaluationFactory(protocol=protocol, dataset=dataset, configuration=configuration)
    made = ResultFactory(evaluation=evaluation, value=Decimal(value), **{"printed_value": value, **result})
    apply_transitions(evaluation, "check_source")
    return made


def page_text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def best_in_columns(response) -> dict[str, list[str]]:
    """Matrix column key -> the configurations marked best in it, read off the page."""
    body = response.content.decode()
    table = body.split('<table class="results matrix">')[1].split("</table>")[0]
    columns = re.findall(r'<th scope="col" id="column-([^"]+)">', table)
    marks: dict[str, list[str]] = {key: [] for key in columns}
    for row in table.split("<tbody>")[1].split("</tr>")[:-1]:
        configuration = re.search(r'title="([^"]+)"', row).group(1)
        for key, cell in zip(columns, row.split("<td>")[1:], strict=True):
            if "(best in column" in cell:
                marks[key].append(html.unescape(configuration))
    return marks


@pytest.fixture
def suite():
    """A suite protocol: one metric, two tasks, three models, scores that would cross-rank across tasks."""
    protocol = ProtocolFactory(
        stable_id="suite", metric_name="MCC", metric_short_name="mcc", metric_unit="MCC", metric_direction="higher"
    )
    parent = DatasetFactory(stable_id="bench", name="Bench")
    promoter = DatasetFactory(
        stable_id="bench-promoter", name="promoter", suite=parent, task_key="promoter", position=1
    )
    enhancer = DatasetFactory(
        stable_id="bench-enhancer", name="enhancer", suite=parent, task_key="enhancer", position=2
    )
    a, b, c = (
        ConfigurationFactory(stable_id=s, name=n) for s, n in [("a", "Model A"), ("b", "Model B"), ("c", "Model C")]
    )
    checked_result(protocol, promoter, a, "0.91")
    checked_result(protocol, promoter, b, "0.85")
    checked_result(protocol, enhancer, a, "0.40")
    checked_result(protocol, enhancer, b, "0.52")
    checked_result(protocol, enhancer, c, "0.47")
    return {"protocol": protocol, "promoter": promoter, "enhancer": enhancer, "a": a, "b": b, "c": c}


def test_each_task_has_its_own_best_mark_never_the_suites(client, suite):
    response = client.get("/protocols/suite/")
    assert best_in_columns(response) == {"bench-promoter": ["Model A"], "bench-enhancer": ["Model B"]}
    assert "MCC (MCC)" in page_text(response) or "(MCC)" in page_text(response)  # the unit heads each column


def test_a_dataset_filter_selects_the_tasks_marks_and_chart_alike(client, suite):
    everything = client.get("/protocols/suite/").content.decode()
    charts = re.findall(r'<img src="/protocols/suite/comparison.svg\?dataset=([^"&]+)"', everything)
    assert charts == ["bench-promoter", "bench-enhancer"]  # small multiples: one chart per task
    only = client.get("/protocols/suite/", {"dataset": "bench-enhancer"})
    body = only.content.decode()
    assert re.findall(r'<img src="/protocols/suite/comparison.svg\?dataset=([^"&]+)"', body) == ["bench-enhancer"]
    assert "the best is Model B (0.52)" in body  # the chart's text alternative
    assert "0.91" not in body.split('<table class="evaluations">')[0]  # the other task is not in the comparison shown
    svg = client.get("/protocols/suite/comparison.svg", {"dataset": "bench-enhancer"}).content.decode()
    assert re.findall(r'<text class="value"[^>]*>([^<]+)</text>', svg) == ["0.52 best", "0.47", "0.40"]
    both = client.get("/protocols/suite/comparison.svg").content.decode()
    assert both.count("<svg") == 3  # the download of every task: one document holding both charts


def test_a_single_compared_row_is_not_best_in_its_column(client):
    protocol = ProtocolFactory(stable_id="one")
    checked_result(protocol, DatasetFactory(stable_id="only"), ConfigurationFactory(), "20")
    assert "best in column" not in page_text(client.get("/protocols/one/"))


def test_a_descriptive_protocol_lists_values_and_never_ranks_them(client):
    protocol = ProtocolFactory(
        stable_id="tokens", metric_name="Pre-training tokens", metric_unit="tokens", metric_direction="none"
    )
    corpus = DatasetFactory(stable_id="corpus")
    checked_result(protocol, corpus, ConfigurationFactory(name="Small"), "300E9", printed_value="300B")
    checked_result(protocol, corpus, ConfigurationFactory(name="Large"), "1E12", printed_value="1T")
    [group] = comparisons.compare(
        protocol=protocol, evaluations=list(protocol.evaluations.all()), include_excluded=False
    )
    assert group.best_value is None and not any(row.is_best or row.rank for row in group.rows)
    text = page_text(client.get("/protocols/tokens/"))
    assert "best in column" not in text and "descriptive facts, listed, never ranked" in text
    assert "300 × 10⁹" in text and "1 × 10¹²" in text


def test_relative_results_compare_only_with_results_relative_to_the_same_reference():
    protocol = ProtocolFactory(metric_name="Speed-up", metric_unit="x", metric_direction="higher")
    setting = DatasetFactory(stable_id="1m-tokens")
    transformer, attention = ConfigurationFactory(name="Transformer"), ConfigurationFactory(name="Dense attention")
    checked_result(
        protocol,
        setting,
        ConfigurationFactory(name="HyenaDNA"),
        "160",
        relation="ratio",
        reference_configuration=transformer,
    )
    checked_result(
        protocol,
        setting,
        ConfigurationFactory(name="Other"),
        "20",
        relation="ratio",
        reference_configuration=transformer,
    )
    checked_result(
        protocol,
        setting,
        ConfigurationFactory(name="Third"),
        "500",
        relation="ratio",
        reference_configuration=attention,
    )
    groups = comparisons.compare(
        protocol=protocol, evaluations=list(protocol.evaluations.all()), include_excluded=False
    )
    by_reference = {group.reference.name: group for group in groups}
    assert set(by_reference) == {"Transformer", "Dense attention"}
    assert by_reference["Transformer"].best_value == Decimal("160")
    assert by_reference["Dense attention"].best_value is None  # alone against its reference: nothing to compare


def test_a_relative_result_names_its_reference_and_only_it_does():
    from django.db import IntegrityError, transaction

    evaluation = EvaluationFactory()
    for bad in ({"relation": "ratio"}, {"reference_configuration": ConfigurationFactory()}):
        with pytest.raises(IntegrityError), transaction.atomic():
            ResultFactory(evaluation=evaluation, **bad)


def test_a_repeated_measurement_counts_once_stays_out_with_an_excluded_original_and_stands_in_for_an_unchecked_one(
    client,
):
    protocol = ProtocolFactory(stable_id="repeats", metric_direction="higher", metric_unit="MCC")
    task = DatasetFactory(stable_id="task")
    model = ConfigurationFactory(name="Model R")
    original = checked_result(protocol, task, model, "0.61")
    copy_evaluation = EvaluationFactory(
        protocol=protocol, dataset=task, configuration=model, repeats=original.evaluation, source=SourceFactory()
    )
    ResultFactory(evaluation=copy_evaluation, value=Decimal("0.61"), printed_value="0.61")
    apply_transitions(copy_evaluation, "check_source")
    checked_result(protocol, task, ConfigurationFactory(name="Model S"), "0.55")

    def copy_row():
        evaluations = list(protocol.evaluations.select_related("repeats"))
        [group] = comparisons.compare(protocol=protocol, evaluations=evaluations, include_excluded=False)
        return group, next(row for row in group.rows if row.evaluation == copy_evaluation)

    group, row = copy_row()
    assert group.compared_count == 2 and sum(r.is_best for r in group.rows) == 1
    assert row.counted_through_original and not row.in_comparison
    assert "another printing of this measurement: counted once" in page_text(client.get("/protocols/repeats/"))
    # An exclusion is the measurement's: its copy stays out with it, and says why.
    apply_transitions(original.evaluation, "exclude", reason="Wrong split.")
    group, row = copy_row()
    assert row.excluded_through_original and not row.in_comparison and group.best_value is None
    assert "which is excluded from comparison: Wrong split." in page_text(client.get("/protocols/repeats/"))
    copy_evaluation.refresh_from_db()
    assert not copy_evaluation.is_comparable
    assert not Evaluation.objects.filter(comparable_q(), pk=copy_evaluation.pk).exists()
    # An original nobody has checked yet: the checked copy stands in for the measurement.
    apply_transitions(original.evaluation, "reopen_excluded", "reinstate", "reopen")
    group, row = copy_row()
    assert row.in_comparison and Evaluation.objects.filter(comparable_q(), pk=copy_evaluation.pk).exists()


def test_an_original_cannot_move_away_from_its_repeats():
    from django.core.exceptions import ValidationError

    original = EvaluationFactory()
    EvaluationFactory(
        protocol=original.protocol,
        configuration=original.configuration,
        dataset=original.dataset,
        repeats=original,
        source=SourceFactory(),
    )
    original.dataset = DatasetFactory(stable_id="moved")
    with pytest.raises(ValidationError, match="1 evaluation"):
        original.full_clean()


def test_a_repeat_must_name_the_same_measurement_reported_by_another_source():
    from django.core.exceptions import ValidationError

    original = EvaluationFactory()
    other_task = EvaluationFactory.build(
        protocol=original.protocol,
        configuration=original.configuration,
        dataset=DatasetFactory(stable_id="elsewhere"),
        repeats=original,
        stable_id="r1",
    )
    with pytest.raises(ValidationError, match="same protocol, configuration and dataset"):
        other_task.full_clean()
    same_source = EvaluationFactory.build(
        protocol=original.protocol,
        configuration=original.configuration,
        dataset=original.dataset,
        repeats=original,
        source=original.source,
        stable_id="r2",
    )
    with pytest.raises(ValidationError, match="another source"):
        same_source.full_clean()


def test_ties_are_each_marked_best():
    protocol = ProtocolFactory(metric_direction="higher", metric_unit="accuracy")
    task = DatasetFactory(stable_id="tied")
    for name in ("CNN", "Caduceus-Ph"):
        checked_result(protocol, task, ConfigurationFactory(name=name), "0.872")
    checked_result(protocol, task, ConfigurationFactory(name="HyenaDNA"), "0.869")
    [group] = comparisons.compare(
        protocol=protocol, evaluations=list(protocol.evaluations.all()), include_excluded=False
    )
    assert sorted(row.evaluation.configuration.name for row in group.rows if row.is_best) == ["CNN", "Caduceus-Ph"]
    assert [row.rank for row in group.rows] == [1, 1, 3]


def test_the_coverage_cell_of_mixed_states_says_so(client):
    protocol = ProtocolFactory(title="Mixed")
    configuration = ConfigurationFactory(name="Mixed model")
    for index in range(3):
        evaluation = EvaluationFactory(
            protocol=protocol, configuration=configuration, dataset=DatasetFactory(stable_id=f"t{index}")
        )
        apply_transitions(evaluation, "check_source", *(["exclude"] if index == 0 else []))
    assert "2 checked, 1 excluded" in page_text(client.get("/coverage/"))


def test_the_matrix_page_runs_a_constant_number_of_queries(client, suite):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as before:
        client.get("/protocols/suite/")
    for index in range(6):
        checked_result(
            suite["protocol"],
            DatasetFactory(stable_id=f"extra-{index}", suite=suite["promoter"].suite, position=3 + index),
            ConfigurationFactory(),
            "0.5",
        )
    with CaptureQueriesContext(connection) as after:
        client.get("/protocols/suite/")
    assert len(after) == len(before)
