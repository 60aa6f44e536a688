"""Synthetic tables written to show each problem the evidence rules solve, read on every surface:
the protocol page, the task and model pages, the agreements API and the release's tables say the
verdict a careful reader expects, and say the same."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError

from records.models import Direction, MeasuredBy, Protocol, ReadingMethod, Scale
from records.rules.evidence import Verdict
from records.rules.units import scale_read
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    GenomicModelFactory,
    ProtocolFactory,
    ResultFactory,
    SourceFactory,
    WorkFactory,
)
from tests.helpers import apply_transitions
from tests.records import evidence_surfaces as surfaces

pytestmark = pytest.mark.django_db


@pytest.fixture
def task():
    return DatasetFactory(stable_id="h3k4me3", name="H3K4me3")


def mcc_protocol(unit: str = "MCC", **fields) -> Protocol:
    fields = {"metric_name": "MCC", "metric_short_name": "mcc", "metric_direction": Direction.HIGHER, **fields}
    return ProtocolFactory(metric_unit=unit, **fields)


def measure(protocol, task, model, value: str, *, source=None, spread: str | None = None, checked=True, **fields):
    """An evaluation of `model` printing `value` (± `spread`), quoted as printed: source-checked
    unless told (then proposed)."""
    source = source or SourceFactory()
    printed = f"{value}±{spread}" if spread else value
    evaluation = EvaluationFactory(
        protocol=protocol,
        dataset=task,
        configuration=ConfigurationFactory(model=model, name=f"{model.name} ({source.title})"),
        source=source,
        quote=fields.pop("quote", f"{model.name} {printed}"),
        reading_method=fields.pop("reading_method", ReadingMethod.TABLE),
        **fields,
    )
    ResultFactory(
        evaluation=evaluation,
        value=Decimal(value),
        printed_value=printed,
        uncertainty_kind="sd" if spread else "",
        uncertainty_value=Decimal(spread) if spread else None,
    )
    if checked:
        apply_transitions(evaluation, "check_source")
    return evaluation


def said_everywhere(client, task, metric, models):
    cache.clear()
    found = surfaces.every_agreement(client, task, metric, models)
    reference = found["task page"]
    for surface, said in found.items():
        assert said == reference, (surface, said, reference)
    return reference


def test_a_scale_word_puts_values_on_one_scale_whatever_its_spelling():
    for unit, scale in (
        ("MCC x 100", Scale.X100),
        ("MCC x100", Scale.X100),
        ("MCC (x100)", Scale.X100),
        ("F1 ×100", Scale.X100),
        ("accuracy (%)", Scale.PERCENT),
        ("%", Scale.PERCENT),
        ("‰", Scale.PER_MILLE),
        ("accuracy (fraction)", Scale.FRACTION),
        ("minute", Scale.RAW),
        ("x", Scale.RAW),
    ):
        assert scale_read(unit=unit).scale == scale, unit
    assert scale_read(unit="MCC", metric_names=("MCC", "mcc")).scale == Scale.FRACTION


def test_it_refuses_a_scale_word_it_does_not_know_naming_the_accepted_ones():
    protocol = ProtocolFactory.build(metric_name="MCC", metric_short_name="mcc", metric_unit="MCC x10")
    with pytest.raises(ValidationError) as refused:
        protocol.clean()
    message = refused.value.message_dict["metric_unit"][0]
    assert "unknown scale word 'x10'" in message and '"x100"' in message and '"per mille"' in message


def test_it_refuses_a_stated_scale_the_units_words_contradict():
    protocol = ProtocolFactory.build(metric_unit="MCC x 100", metric_scale=Scale.FRACTION)
    with pytest.raises(ValidationError) as refused:
        protocol.clean()
    assert "says the scale is 'x100'" in refused.value.message_dict["metric_scale"][0]


def test_one_metric_printed_x100_and_as_a_fraction_is_one_table_and_agrees(client, task):
    """Problem 1: "MCC x100" 61.2 and "MCC" 0.605 ± 0.02 are one quantity, not a false conflict."""
    scaled, plain = mcc_protocol("MCC x100"), mcc_protocol("MCC")
    model = GenomicModelFactory()
    measure(scaled, task, model, "61.2")
    measure(plain, task, model, "0.605", spread="0.02", measured_by=MeasuredBy.THIRD_PARTY, measured_by_name="B")
    assert scaled.metric_scale == Scale.X100 and plain.metric_scale == Scale.FRACTION
    assert surfaces.task_tables(task) == [("mcc", "MCC")]
    said = said_everywhere(client, task, "mcc", [model])
    assert said[model.stable_id].verdict == Verdict.CONSISTENT


def test_a_protocol_of_ratios_only_makes_no_task_table(task):
    """A ratio has its own reference: it is compared on its protocol's page, not in a task's tables."""
    protocol = mcc_protocol()
    evaluation = measure(protocol, task, GenomicModelFactory(), "0.61")
    ratios = ProtocolFactory(metric_name="Speed-up", metric_short_name="speedup", metric_unit="x")
    reference = ConfigurationFactory()
    faster = EvaluationFactory(protocol=ratios, dataset=task, source=evaluation.source)
    ResultFactory(
        evaluation=faster,
        value=Decimal("160"),
        printed_value="160x",
        relation="ratio",
        reference_configuration=reference,
    )
    apply_transitions(faster, "check_source")
    assert surfaces.task_tables(task) == [("mcc", "MCC")]


def test_a_figure_label_and_the_cell_it_rounds_count_once_and_tie_by_both_spreads_on_every_page(client, task):
    """Problem 2: the label 0.55 and the cell 0.549 ± 0.056 of one paper are one measurement on the
    protocol page as on the task page, and it ties with 0.546 ± 0.073."""
    protocol = mcc_protocol()
    paper = SourceFactory()
    leader, runner_up, last = GenomicModelFactory(), GenomicModelFactory(), GenomicModelFactory()
    label = measure(protocol, task, leader, "0.55", source=paper, reading_method=ReadingMethod.FIGURE_LABEL)
    cell = measure(protocol, task, leader, "0.549", source=paper, spread="0.056")
    second = measure(protocol, task, runner_up, "0.546", spread="0.073")
    third = measure(protocol, task, last, "0.30", spread="0.01")
    on_protocol = surfaces.protocol_marks(protocol, task)
    assert on_protocol == surfaces.task_marks(task, "mcc")
    assert set(on_protocol) == {cell.stable_id, second.stable_id, third.stable_id}
    assert on_protocol[cell.stable_id] == surfaces.Mark(1, True, True)
    assert on_protocol[second.stable_id] == surfaces.Mark(2, False, True)
    assert on_protocol[third.stable_id] == surfaces.Mark(3, False, False)
    assert surfaces.protocol_counted_once(protocol, task) == {label.stable_id: "copy"}
    cache.clear()
    page = client.get(f"/protocols/{protocol.stable_id}/").content.decode()
    assert "(best in column, tied with a runner-up)" in page and "Two values tie where their intervals overlap" in page


def test_a_value_without_a_spread_ties_with_a_runner_up_whose_spread_reaches_it(task):
    protocol = mcc_protocol()
    label = measure(protocol, task, GenomicModelFactory(), "0.55", reading_method=ReadingMethod.FIGURE_LABEL)
    other = measure(protocol, task, GenomicModelFactory(), "0.546", spread="0.073")
    marks = surfaces.protocol_marks(protocol, task)
    assert marks == surfaces.task_marks(task, "mcc")
    assert marks[label.stable_id] == surfaces.Mark(1, True, True) and marks[other.stable_id].tied


def test_a_copy_that_prints_another_number_is_a_transcription_conflict_shown_with_both_quotes(client, task):
    """Problem 3: a repository that prints 42.1 (x 100) where its paper prints 0.41."""
    paper_protocol, repository_protocol = mcc_protocol("MCC"), mcc_protocol("MCC x100")
    model = GenomicModelFactory()
    paper = SourceFactory(title="The paper")
    original = measure(paper_protocol, task, model, "0.41", source=paper, quote="Table 3: our model reaches 0.41")
    copy = measure(
        repository_protocol,
        task,
        model,
        "42.1",
        source=SourceFactory(title="The repository README", kind="repository"),
        original_source=paper,
        original_locator="Table 3",
        quote="| our model | 42.1 |",
    )
    said = said_everywhere(client, task, "mcc", [model])[model.stable_id]
    assert said.verdict == Verdict.TRANSCRIPTION
    assert said.compared == {original.stable_id}
    assert said.counted_as == {(copy.stable_id, "copy_disagrees")}
    row = client.get("/api/v1/agreements/", {"task_id": task.stable_id}).json()["results"][0]
    assert row["verdict_label"] == "transcription conflict; copy disagrees with its original"
    [disagreement] = row["disagreements"]
    assert disagreement["value"] == "42.1" and disagreement["compared_value"] == "0.41"
    assert disagreement["quote"] == "| our model | 42.1 |"
    assert disagreement["compared_quote"] == "Table 3: our model reaches 0.41"
    cache.clear()
    text = client.get(f"/datasets/{task.stable_id}/").content.decode()
    assert "Copy disagrees with its original:</strong> 42.1 against 0.41" in text


def test_a_later_version_supersedes_an_earlier_one_that_prints_another_number_which_stays_visible(client, task):
    protocol = mcc_protocol("MCC x 100")
    model = GenomicModelFactory()
    work = WorkFactory()
    preprint = SourceFactory(work=work, published_date="2023-06", arxiv_id="2306.00001", arxiv_version="v1")
    journal = SourceFactory(work=work, published_date="2024-02-10")
    earlier = measure(protocol, task, model, "36.27", source=preprint)
    later = measure(protocol, task, model, "44.00", source=journal)
    said = said_everywhere(client, task, "mcc", [model])[model.stable_id]
    assert said.verdict == Verdict.SINGLE
    assert said.compared == {later.stable_id}
    assert said.counted_as == {(earlier.stable_id, "changed_between_versions")}
    row = client.get("/api/v1/agreements/", {"task_id": task.stable_id}).json()["results"][0]
    assert row["verdict_label"] == "single measurement; changed between versions"
    marks = surfaces.protocol_marks(protocol, task)
    assert set(marks) == {later.stable_id}
    assert surfaces.protocol_counted_once(protocol, task) == {earlier.stable_id: "changed between versions"}


def test_two_self_reports_that_disagree_are_a_conflict_not_self_reported_only(client, task):
    """Problem 4: the authors' repository run and their paper, three points apart."""
    protocol = mcc_protocol("MCC x 100")
    model = GenomicModelFactory()
    measure(protocol, task, model, "61.2", spread="0.5", source=SourceFactory(title="The paper"))
    measure(protocol, task, model, "64.3", spread="0.8", source=SourceFactory(title="The authors' repository"))
    said = said_everywhere(client, task, "mcc", [model])
    assert said[model.stable_id].verdict == Verdict.SELF_CONFLICTING
    consistent = GenomicModelFactory()
    measure(protocol, task, consistent, "50.0", source=SourceFactory())
    measure(protocol, task, consistent, "50.4", source=SourceFactory())
    said = said_everywhere(client, task, "mcc", [model, consistent])
    assert said[consistent.stable_id].verdict == Verdict.SELF_CONSISTENT


def test_values_without_spreads_closer_than_the_tolerance_share_no_single_best(task):
    """Problem 7: 87.3 over 87.1, no spread given, is a tie, not a best."""
    protocol = mcc_protocol("accuracy (%)", metric_name="Accuracy", metric_short_name="accuracy")
    first = measure(protocol, task, GenomicModelFactory(), "87.3")
    second = measure(protocol, task, GenomicModelFactory(), "87.1")
    marks = surfaces.protocol_marks(protocol, task)
    assert marks == surfaces.task_marks(task, "accuracy")
    assert marks[first.stable_id] == surfaces.Mark(1, True, True)
    assert marks[second.stable_id] == surfaces.Mark(2, False, True)


def test_every_surface_shows_a_number_with_its_verbatim_quote_and_locator(client, task):
    """Problem 8: the task and model pages, the agreements API and the release's table carry the quote."""
    protocol = mcc_protocol()
    model = GenomicModelFactory()
    measure(
        protocol, task, model, "0.612", quote="HyenaDNA reaches an MCC of 0.612 on H3K4me3", source_locator="Table 2"
    )
    cache.clear()
    for url in (f"/datasets/{task.stable_id}/", f"/models/{model.stable_id}/"):
        page = client.get(url).content.decode()
        assert "HyenaDNA reaches an MCC of 0.612 on H3K4me3" in page and "Table 2" in page, url
    [row] = client.get("/api/v1/agreements/", {"task_id": task.stable_id}).json()["results"]
    assert row["measurements"][0]["quote"] == "HyenaDNA reaches an MCC of 0.612 on H3K4me3"
    assert row["measurements"][0]["locator"] == "Table 2"
    from releases import identity_rows

    [printed] = list(identity_rows.agreement_measurement_rows(chunk_size=10))
    assert printed["quote"] == "HyenaDNA reaches an MCC of 0.612 on H3K4me3" and printed["locator"] == "Table 2"


def test_a_page_says_the_source_marks_no_best_where_the_curator_recorded_so(client, task):
    protocol = mcc_protocol(best_marking="none")
    measure(protocol, task, GenomicModelFactory(), "0.70")
    measure(protocol, task, GenomicModelFactory(), "0.50")
    cache.clear()
    for url in (f"/protocols/{protocol.stable_id}/", f"/datasets/{task.stable_id}/"):
        page = client.get(url).content.decode()
        assert "The source marks no best: the marks here are the portal&#x27;s" in page, url
    other = mcc_protocol(best_marking="best", metric_short_name="auc")
    cache.clear()
    assert "The source marks no best" not in client.get(f"/protocols/{other.stable_id}/").content.decode()
