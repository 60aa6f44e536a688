"""The protocol page's comparison chart: geometry computed here, drawn by templates/records/_chart.svg.

One chart per comparison group (records.comparisons: one dataset or task, one relation to one
reference), so a suite protocol gets small multiples and no task is ranked against another.
Readable without colour: who measured a result is a marker shape (circle: the model's authors,
square: a third party, diamond: this portal), the best value is labelled in words, and excluded
rows are drawn apart, hollow and dashed, with their concern. The SVG carries a title and a text
description; the results table beside it holds every value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string

from records import models as m
from records.comparisons import ComparisonGroup, ResultRow
from records.values import display, exact_text

WIDTH = 760
LABEL_WIDTH = 300
RIGHT_MARGIN = 90
ROW_HEIGHT = 30
TOP = 72
AXIS_HEIGHT = 44
SECTION_GAP = 34
CONCERN_CHARS = 100
LABEL_CHARS = 44
MARKERS = {m.MeasuredBy.AUTHORS: "circle", m.MeasuredBy.THIRD_PARTY: "square", m.MeasuredBy.PORTAL: "diamond"}
FONT_FILE = Path(settings.BASE_DIR) / "static" / "fonts" / "DejaVuSans.ttf"


@dataclass
class Bar:
    label: str
    value_text: str
    exact: str
    origin: str
    marker: str
    x0: float
    x1: float
    y: float
    best: bool = False
    excluded: bool = False
    concern: str = ""


@dataclass
class Chart:
    id: str
    title: str
    subtitle: str
    description: str
    axis_label: str
    width: int
    height: int
    plot_left: int
    plot_right: int
    zero_x: float
    axis_y: float
    ticks: list[tuple[float, str]]
    compared: list[Bar] = field(default_factory=list)
    excluded: list[Bar] = field(default_factory=list)
    excluded_heading_y: float = 0
    legend_y: float = 0
    empty_message: str = ""


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


TICK_SIGNIFICANT_DIGITS = 4


def tick_label(value: Decimal | None) -> str:
    """An axis tick for a chart: four significant digits, whole numbers kept whole."""
    if value is None:
        return ""
    if value == 0:
        return "0"
    if abs(value.adjusted()) >= 6:  # 1 × 10⁹ rather than 1000000000
        return display(
            value.quantize(
                Decimal(1).scaleb(value.adjusted() - TICK_SIGNIFICANT_DIGITS + 1), rounding=ROUND_HALF_UP
            ).normalize()
        )
    exponent = min(0, max(value.adjusted() - TICK_SIGNIFICANT_DIGITS + 1, -6))
    text = format(value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_UP).normalize(), "f")
    return "0" if text == "-0" else text


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten) spanning low..high, whatever the magnitude
    (a p-value of 3E-12 as well as 1E+12 tokens)."""
    if not high > low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(power * f for f in (1, 2, 5, 10) if power * f >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    return [index * step for index in range(first, last + 1)]


def comparison_chart(
    *, protocol: m.Protocol, group: ComparisonGroup, include_excluded: bool, several: bool = False
) -> Chart:
    """The chart of one comparison group; `several` when it is one of a protocol's small multiples
    (its title then names the dataset or task)."""
    rows = group.rows
    compared_rows = [row for row in rows if row.in_comparison]
    excluded_rows = [] if include_excluded else [row for row in rows if row.evaluation.is_excluded]
    values = [float(row.result.value) for row in compared_rows + excluded_rows]
    ticks = nice_ticks(min([0.0, *values]), max([0.0, *values]))
    low, high = ticks[0], ticks[-1]
    plot_left, plot_right = LABEL_WIDTH, WIDTH - RIGHT_MARGIN
    unit = protocol.metric_unit

    def x(value: float) -> float:
        return plot_left + (value - low) / (high - low) * (plot_right - plot_left)

    def bar(row: ResultRow, y: float, excluded: bool) -> Bar:
        value = float(row.result.value)
        configuration = row.evaluation.configuration
        return Bar(
            label=_short(configuration.short_name or configuration.name, LABEL_CHARS),
            value_text=row.result.display_value,
            exact=exact_text(row.result.value),
            origin=f"measured by {row.evaluation.get_measured_by_display().lower()}",
            marker=MARKERS.get(row.evaluation.measured_by, "circle"),
            x0=x(0.0),
            x1=x(value),
            y=y,
            best=row.is_best,
            excluded=excluded,
            concern=_short(row.evaluation.concern, CONCERN_CHARS) if excluded or row.evaluation.is_excluded else "",
        )

    y = TOP
    compared = []
    for row in compared_rows:
        compared.append(bar(row, y, excluded=row.evaluation.is_excluded))
        y += ROW_HEIGHT + (14 if row.evaluation.is_excluded else 0)
    axis_y = y + 4
    excluded_heading_y = axis_y + AXIS_HEIGHT + SECTION_GAP - 14
    y = excluded_heading_y + 26
    excluded = []
    for row in excluded_rows:
        excluded.append(bar(row, y, excluded=True))
        y += ROW_HEIGHT + 16
    legend_y = (y if excluded else axis_y + AXIS_HEIGHT) + 18
    direction = protocol.get_metric_direction_display()
    scope = "source-checked and excluded rows" if include_excluded else "source-checked rows"
    description = (
        "; ".join(f"{b.label}: {b.exact} {unit}, {b.origin}{', best' if b.best else ''}" for b in compared)
        or "no results to compare"
    )
    if excluded:
        description += ". Excluded from comparison: " + "; ".join(
            f"{b.label}: {b.exact} {unit} ({b.concern})" for b in excluded
        )
    title = protocol.metric_label if not several else f"{group.label}: {protocol.metric_name}"
    return Chart(
        id=f"chart-{group.key}",
        title=_short(title, 80),
        subtitle=f"{direction}; compares {scope}" if protocol.is_ranked else "descriptive facts: not ranked",
        description=description + ".",
        axis_label=f"{protocol.metric_name} ({unit}), {direction}",
        width=WIDTH,
        height=int(legend_y + 30),
        plot_left=plot_left,
        plot_right=plot_right,
        zero_x=x(0.0),
        axis_y=axis_y,
        ticks=[(x(t), tick_label(Decimal(str(t)))) for t in ticks],
        compared=compared,
        excluded=excluded,
        excluded_heading_y=excluded_heading_y,
        legend_y=legend_y,
        empty_message="" if compared else "No source-checked result to compare yet.",
    )


def protocol_charts(*, protocol: m.Protocol, groups: list[ComparisonGroup], include_excluded: bool) -> list[Chart]:
    """One chart per group (small multiples for a suite); one empty chart when nothing is recorded."""
    several = len(groups) > 1
    groups = groups or [ComparisonGroup(dataset=None, relation=m.Relation.ABSOLUTE, reference=None)]
    return [
        comparison_chart(protocol=protocol, group=group, include_excluded=include_excluded, several=several)
        for group in groups
    ]


def charts_sentence(charts: list[Chart], *, include_excluded: bool) -> str:
    """What the protocol page's overview says of its charts, read off the charts themselves: what they
    compare, and whether excluded rows are among the compared or drawn apart."""
    compared = [bar for chart in charts for bar in chart.compared]
    apart = sum(len(chart.excluded) for chart in charts)
    several = len(charts) > 1
    them = "The comparison charts below" if several else "The comparison chart below"
    verb = "draw" if several else "draws"
    if compared:
        if include_excluded and any(bar.excluded for bar in compared):
            return (
                f"{them} {verb} the source-checked results and, labelled as such, the results excluded from comparison."
            )
        return f"{them} {verb} the source-checked results only."
    if apart:
        return (
            f"{them} {verb} no compared result yet: no source-checked result compares, and the results excluded "
            "from comparison are drawn apart, not ranked."
        )
    return f"{them} {verb} no result yet: no result here has had its source checked."


def chart_svg(chart: Chart, *, standalone: bool) -> str:
    return render_to_string("records/_chart.svg", {"chart": chart, "standalone": standalone})


def charts_svg(charts: list[Chart]) -> str:
    """One standalone SVG: the charts stacked (a suite's small multiples as one download)."""
    if len(charts) == 1:
        return chart_svg(charts[0], standalone=True)
    offsets, y = [], 0
    for chart in charts:
        offsets.append(y)
        y += chart.height
    return render_to_string(
        "records/_charts.svg", {"charts": list(zip(charts, offsets, strict=True)), "width": WIDTH, "height": y}
    )


def chart_png(svg: str) -> bytes:
    """The same drawing as PNG, with the bundled font so it renders alike on every machine."""
    import resvg_py

    return bytes(
        resvg_py.svg_to_bytes(
            svg_string=svg, skip_system_fonts=True, font_files=[str(FONT_FILE)], background="#ffffff", zoom=2
        )
    )
