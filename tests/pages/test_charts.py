"""The comparison charts read through the chart download and the pages: an interval for every result
with a structured uncertainty (± figure or bounds) with its kind in the text description, a best mark
that says when its interval overlaps another's (and which rule holds), and a drawing whose texts stay
at least 12 units in a chart 340 units wide (shown at that width on a 390 px phone)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest
from django.core.cache import cache

from records.models import Direction, Result, UncertaintyKind
from tests.factories import ConfigurationFactory, DatasetFactory, EvaluationFactory, ProtocolFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = [pytest.mark.django_db, pytest.mark.backend_independent]

SVG_NS = "{http://www.w3.org/2000/svg}"


def measure(protocol, dataset, name: str, value: str, **uncertainty) -> Result:
    evaluation = EvaluationFactory(
        protocol=protocol, dataset=dataset, configuration=ConfigurationFactory(name=name, short_name=name)
    )
    result = ResultFactory(evaluation=evaluation, value=Decimal(value), printed_value=value, **uncertainty)
    apply_transitions(evaluation, "check_source")
    return result


def sd(spread: str) -> dict[str, object]:
    return {"uncertainty_kind": UncertaintyKind.SD, "uncertainty_value": Decimal(spread)}


@pytest.fixture
def protocol():
    return ProtocolFactory(
        metric_name="AUROC", metric_short_name="auroc", metric_unit="AUROC", metric_direction=Direction.HIGHER
    )


@pytest.fixture
def dataset():
    return DatasetFactory(stable_id="promoters", name="Promoters")


def chart_of(client, protocol) -> ET.Element:
    cache.clear()  # the factories write around the services (no catalogue version bump): draw afresh
    response = client.get(f"/protocols/{protocol.stable_id}/comparison.svg")
    assert response.status_code == 200
    return ET.fromstring(response.content)


def texts(svg: ET.Element) -> list[str]:
    return ["".join(text.itertext()) for text in svg.iter(f"{SVG_NS}text")]


def description(svg: ET.Element) -> str:
    desc = svg.find(f"{SVG_NS}desc")
    assert desc is not None
    return desc.text or ""


def test_it_draws_an_interval_for_each_result_with_a_structured_uncertainty_and_names_its_kind(
    client, protocol, dataset
):
    measure(protocol, dataset, "Alpha", "0.976", **sd("0.006"))
    measure(
        protocol,
        dataset,
        "Gamma",
        "0.90",
        uncertainty_kind=UncertaintyKind.CI,
        lower_bound=Decimal("0.85"),
        upper_bound=Decimal("0.95"),
        uncertainty_level=Decimal("95"),
    )
    measure(
        protocol,
        dataset,
        "Delta",
        "0.70",
        uncertainty_kind=UncertaintyKind.RANGE,
        lower_bound=Decimal("0.62"),
        upper_bound=Decimal("0.74"),
    )
    measure(protocol, dataset, "Epsilon", "0.50")
    svg = chart_of(client, protocol)
    intervals = [path for path in svg.iter(f"{SVG_NS}path") if path.get("class") == "interval"]
    assert len(intervals) == 3  # Epsilon states none: no interval drawn for it
    text = description(svg)
    assert "Alpha: 0.976 AUROC (± s.d.: 0.970 to 0.982)" in text
    assert "Gamma: 0.90 AUROC (95% CI: 0.85 to 0.95)" in text
    assert "Delta: 0.70 AUROC (range: 0.62 to 0.74)" in text
    assert "Epsilon: 0.50 AUROC, measured by" in text
    drawn = texts(svg)
    assert "0.976 ± 0.006 s.d. best" in drawn and "0.90 [0.85, 0.95] 95% CI" in drawn and "0.50" in drawn
    assert "interval: 95% CI, range, ± s.d." in drawn
    # The interval spans its bounds on the axis: Gamma's whiskers lie left and right of its marker.
    gamma = next(group for group in svg.iter(f"{SVG_NS}g") if "Gamma" in texts(group))
    interval = next(path for path in gamma.iter(f"{SVG_NS}path") if path.get("class") == "interval")
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", interval.get("d") or "")]
    low, high = numbers[0], numbers[5]  # M low y v 12 M low y H high ...
    marker = gamma.find(f"{SVG_NS}circle")
    assert marker is not None and low < float(marker.get("cx") or 0) < high


def test_the_best_mark_says_it_ties_with_a_runner_up_whose_interval_overlaps_its_own(client, protocol, dataset):
    measure(protocol, dataset, "NT-2500M-multi", "0.976", **sd("0.006"))
    measure(protocol, dataset, "DNABERT-2", "0.971", **sd("0.006"))
    measure(protocol, dataset, "HyenaDNA", "0.80", **sd("0.01"))
    svg = chart_of(client, protocol)
    assert "best; tied with DNABERT-2" in texts(svg)
    assert "0.976 ± 0.006 s.d." in texts(svg)  # no bare "best" beside the value: the note says more
    text = description(svg)
    assert "best; tied with DNABERT-2;" in text
    assert "DNABERT-2 ties with the best. Two values tie where their intervals overlap" in text
    assert "HyenaDNA" not in text.split("ties with the best")[1]  # its interval lies apart


def test_a_runner_up_ties_when_the_two_intervals_overlap_though_neither_spread_reaches_the_other_value(
    client, protocol, dataset
):
    measure(protocol, dataset, "Alpha", "0.976", **sd("0.002"))
    measure(protocol, dataset, "Beta", "0.971", **sd("0.004"))  # 0.974..0.978 and 0.967..0.975 overlap
    svg = chart_of(client, protocol)
    assert "best; tied with Beta" in texts(svg)
    assert "Beta ties with the best." in description(svg)


def test_it_marks_a_plain_best_when_no_interval_overlaps(client, protocol, dataset):
    measure(protocol, dataset, "Alpha", "0.976", **sd("0.001"))
    measure(protocol, dataset, "Beta", "0.971", **sd("0.001"))
    measure(protocol, dataset, "Gamma", "0.960")  # no spread: 0.5 % of the value, 0.955..0.965
    svg = chart_of(client, protocol)
    assert "0.976 ± 0.001 s.d. best" in texts(svg)
    assert not any("tied" in text for text in texts(svg))
    assert "No runner-up ties with the best." in description(svg)


def test_values_without_spreads_tie_only_within_the_stated_tolerance(client, protocol, dataset):
    measure(protocol, dataset, "Alpha", "0.9")
    measure(protocol, dataset, "Beta", "0.8")
    svg = chart_of(client, protocol)
    assert "0.9 best" in texts(svg) and "No runner-up ties with the best." in description(svg)


def test_every_text_of_a_chart_is_at_least_12_units_in_a_chart_340_units_wide(client, protocol, dataset):
    long_name = "A configuration with a very long name, fine-tuned for ten epochs on every task"
    measure(protocol, dataset, long_name, "0.976", **sd("0.006"))
    measure(protocol, dataset, "DNABERT-2", "0.971", **sd("0.006"))
    svg = chart_of(client, protocol)
    assert svg.get("viewBox") == f"0 0 340 {svg.get('height')}" and svg.get("width") == "340"
    assert svg.get("font-size") == "12"
    sizes = [float(text.get("font-size") or 12) for text in svg.iter(f"{SVG_NS}text")]
    assert sizes and min(sizes) >= 12
    for group in svg.iter(f"{SVG_NS}g"):
        assert group.get("font-size") is None  # no group shrinks its texts
    # A label shares its line with the value: shortened so that both fit the width.
    label = next(text for text in texts(svg) if text.startswith("A configuration"))
    assert label.endswith("…") and (len(label) + len("0.976 ± 0.006 s.d.")) * 7.7 <= 340 - 16


def test_the_task_page_draws_the_intervals_and_the_tie_of_its_measurements(client, protocol, dataset):
    measure(protocol, dataset, "Alpha", "0.976", **sd("0.006"))
    measure(protocol, dataset, "Beta", "0.971", **sd("0.006"))
    cache.clear()
    response = client.get(f"/datasets/{dataset.stable_id}/")
    assert response.status_code == 200
    page = response.content.decode()
    found = re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="chart".*?</svg>', page, re.S)
    assert found is not None
    svg = ET.fromstring(found.group(0))
    assert len([path for path in svg.iter(f"{SVG_NS}path") if path.get("class") == "interval"]) == 2
    assert "best; tied with Beta" in texts(svg)
    assert "Alpha: 0.976 AUROC (± s.d.: 0.970 to 0.982)" in description(svg)


def test_the_download_places_a_suite_small_multiples_side_by_side(client, protocol):
    for index in range(4):
        dataset = DatasetFactory(stable_id=f"task-{index}", name=f"Task {index}")
        measure(protocol, dataset, f"Alpha {index}", "0.9", **sd("0.01"))
        measure(protocol, dataset, f"Beta {index}", "0.8")
    svg = chart_of(client, protocol)
    charts = svg.findall(f"{SVG_NS}g/{SVG_NS}svg")
    assert len(charts) == 4 and svg.get("width") == "1020"
    offsets = [group.get("transform") for group in svg.findall(f"{SVG_NS}g")]
    assert offsets[:3] == ["translate(0 0)", "translate(340 0)", "translate(680 0)"]
    assert (offsets[3] or "").startswith("translate(0 ") and offsets[3] != "translate(0 0)"
    cache.clear()
    png = client.get(f"/protocols/{protocol.stable_id}/comparison.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_a_png_is_drawn_at_twice_the_size_for_one_chart_and_at_its_size_for_a_large_suite(client, protocol):
    dataset = DatasetFactory(stable_id="one-task", name="One task")
    measure(protocol, dataset, "Alpha", "0.9", **sd("0.01"))
    measure(protocol, dataset, "Beta", "0.8")
    cache.clear()
    svg = ET.fromstring(client.get(f"/protocols/{protocol.stable_id}/comparison.svg").content)
    png = client.get(f"/protocols/{protocol.stable_id}/comparison.png").content
    assert int.from_bytes(png[16:20], "big") == 2 * int(svg.get("width") or 0)  # the IHDR width
    for index in range(40):
        other = DatasetFactory(stable_id=f"many-{index}", name=f"Task {index}")
        for name in ("Alpha", "Beta", "Gamma"):
            measure(protocol, other, f"{name} {index}", "0.5")
    cache.clear()
    svg = ET.fromstring(client.get(f"/protocols/{protocol.stable_id}/comparison.svg").content)
    assert int(svg.get("width") or 0) * int(svg.get("height") or 0) > 1_000_000
    png = client.get(f"/protocols/{protocol.stable_id}/comparison.png").content
    assert int.from_bytes(png[16:20], "big") == int(svg.get("width") or 0) == 1020
