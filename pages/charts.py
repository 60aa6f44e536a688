"""The comparison charts of the protocol and task pages: geometry computed here, drawn by
templates/records/_chart.svg.

One chart per comparison group (records.comparisons: one dataset or task, one relation to one
reference), so a suite protocol gets small multiples and no task is ranked against another.
Readable without colour: who measured a result is a marker shape (circle: the model's authors,
square: a third party, diamond: this portal), the best value is labelled in words, and excluded
rows are drawn apart, hollow and dashed, with their concern. The SVG carries a title and a text
description; the results table beside it holds every value.

Readable on a phone: a chart is drawn 340 units wide, the width it is shown at on a 390 px screen
(and on a wide one, where the small multiples stand side by side), each row's label and value on a
line of their own above its bar, every text at least 12 units: no label is scaled below 11 px.

Uncertainty: a result with a structured uncertainty (records.models.Result: the printed ± figure,
or lower and upper bounds) is drawn with its interval, and its kind ("± s.d.", "range", "95% CI")
is in the value and the text description. A best that ties with another compared result by the
one tie rule (records.rules.evidence.TIE_RULE, as the tables mark it) says so in its mark
("best; tied with …"), and the description states the rule.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from records.agreement import ResultLike, TaskTable
from records.comparisons import ComparisonGroup, ResultRow
from records.models import Dataset, Direction, Evaluation, MeasuredBy, Protocol, Relation, Result, UncertaintyKind
from records.rules.evidence import TIE_RULE
from records.values import display, exact_text

WIDTH = 340
PAD = 8
PLOT_LEFT = 24
PLOT_RIGHT = WIDTH - 24
FONT = 12  # every text of a chart; the title is 14
CHAR = 7.7  # the widest average advance of DejaVu Sans at 12 units (digits 7.6): labels and values
PROSE_CHAR = 6.8  # the average advance of its lower-case prose at 12 units: wrapped lines
TITLE_CHAR = 8.6  # the same at 14 units, bold
LINE = 15
ROW_GAP = 8
CONCERN_CHARS = 130
LABEL_CHARS = 44
MAX_BARS = 30  # bars a comparison chart draws, best first (a protocol of thousands of rows draws its best)
MARKERS = {MeasuredBy.AUTHORS: "circle", MeasuredBy.THIRD_PARTY: "square", MeasuredBy.PORTAL: "diamond"}
KINDS = {
    UncertaintyKind.SD: "± s.d.",
    UncertaintyKind.SE: "± s.e.",
    UncertaintyKind.CI: "CI",
    UncertaintyKind.RANGE: "range",
}
APART = "Excluded from comparison (shown apart, not ranked)"


@dataclass(frozen=True)
class Interval:
    """A result's structured uncertainty as drawn: from `low` to `high`, of kind `kind`."""

    low: Decimal
    high: Decimal
    kind: str  # "± s.d.", "± s.e.", "95% CI", "range"
    spread: Decimal | None  # the printed ± figure, when that is what the source gives

    @property
    def value_suffix(self) -> str:
        """What follows the value: " ± 0.006 s.d." or " [0.671, 0.767] range"."""
        if self.spread is not None:
            kind = self.kind.removeprefix("± ")
            return f" ± {display(self.spread)} {kind}"
        return f" [{display(self.low)}, {display(self.high)}] {self.kind}"

    @property
    def text(self) -> str:
        """For the text description: "± s.d.: 0.970 to 0.982"."""
        return f"{self.kind}: {exact_text(self.low)} to {exact_text(self.high)}"


def interval_of(result: ResultLike) -> Interval | None:
    """The interval a result's structured uncertainty states, or None (none stated, or no figure)."""
    kind = result.uncertainty_kind
    if not kind:
        return None
    value, spread = result.value, result.uncertainty_value
    low = result.lower_bound if result.lower_bound is not None else (value - spread if spread is not None else None)
    high = result.upper_bound if result.upper_bound is not None else (value + spread if spread is not None else None)
    if low is None and high is None:
        return None
    text = KINDS.get(UncertaintyKind(kind), kind)
    if kind == UncertaintyKind.CI and result.uncertainty_level is not None:
        text = f"{display(result.uncertainty_level)}% CI"
    if kind == UncertaintyKind.CI and spread is not None:
        text = f"± {text}"
    return Interval(
        low=low if low is not None else value,
        high=high if high is not None else value,
        kind=text,
        spread=spread if result.lower_bound is None and result.upper_bound is None else None,
    )


@dataclass
class Point:
    """One result to draw, whichever page it comes from."""

    label: str
    result: Result
    evaluation: Evaluation
    origin: str  # "measured by the model's authors"
    best: bool = False
    rank: int | None = None
    tied_with_best: bool = False  # it ties with the best (records.rules.evidence.TIE_RULE)
    excluded: bool = False
    concern: str = ""


@dataclass
class Bar:
    """One drawn row: its label and value on a line (`label_y`), its bar below (`y`), notes under it."""

    label: str
    value_text: str
    exact: str
    origin: str
    marker: str
    x0: float
    x1: float
    y: float
    label_y: float = 0
    best: bool = False
    excluded: bool = False
    concern: str = ""
    interval: Interval | None = None
    low_x: float = 0
    high_x: float = 0
    best_note: str = ""
    notes: list[tuple[float, str]] = field(default_factory=list)  # (y, line): the best note, the concern


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
    title_lines: list[tuple[float, str]] = field(default_factory=list)
    subtitle_lines: list[tuple[float, str]] = field(default_factory=list)
    axis_label_lines: list[tuple[float, str]] = field(default_factory=list)
    excluded_heading_lines: list[tuple[float, str]] = field(default_factory=list)
    grid_top: float = 0
    interval_kinds: str = ""  # "± s.d., range": the kinds drawn, for the legend
    apart_label: str = ""  # the heading of the excluded rows drawn apart, whole (it is drawn wrapped)

    @property
    def bars(self) -> list[Bar]:
        return self.compared + self.excluded


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _chars(width: float, advance: float = CHAR) -> int:
    return max(8, int(width / advance))


def _wrap(text: str, *, advance: float = PROSE_CHAR, lines: int = 3) -> list[str]:
    """The text in lines that fit the chart's width (the last one shortened with … if need be)."""
    width = _chars(WIDTH - 2 * PAD, advance)
    wrapped = textwrap.wrap(text, width=width, break_long_words=True) or [""]
    if len(wrapped) > lines:
        wrapped = [*wrapped[: lines - 1], _short(" ".join(wrapped[lines - 1 :]), width)]
    return wrapped


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


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten) spanning low..high, whatever the magnitude
    (a p-value of 3E-12 as well as 1E+12 tokens)."""
    if not high > low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(power * f for f in (1, 2, 5, 10) if power * f >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    return [index * step for index in range(first, last + 1)]


def best_note(points: Sequence[Point]) -> tuple[Point | None, list[Point], str]:
    """The one best of the compared points, the others that tie with it (nearest rank first), and
    what its mark says ("best", or "best; tied with X")."""
    best = [point for point in points if point.best]
    if len(best) != 1:
        return None, [], ""
    tied = sorted(
        (point for point in points if point is not best[0] and point.tied_with_best),
        key=lambda point: point.rank or 0,
    )
    if not tied:
        return best[0], [], "best"
    more = f" and {len(tied) - 1} more" if len(tied) > 1 else ""
    return best[0], tied, f"best; tied with {tied[0].label}{more}"


def _rule_sentence(best: Point | None, tied: list[Point]) -> str:
    if best is None:
        return ""
    if not tied:
        return f" No runner-up ties with the best. {TIE_RULE}"
    return f" {', '.join(point.label for point in tied)} tie{'s' if len(tied) == 1 else ''} with the best. {TIE_RULE}"


def _value_text(point: Point) -> str:
    interval = interval_of(point.result)
    return display(point.result.value) + (interval.value_suffix if interval else "")


def draw(
    *,
    chart_id: str,
    title: str,
    subtitle: str,
    axis_label: str,
    unit: str,
    compared: Sequence[Point],
    excluded: Sequence[Point] = (),
    empty_message: str = "",
) -> Chart:
    """The geometry of one chart: `compared` points ranked among themselves, `excluded` drawn apart."""
    bounds = [0.0]
    for point in [*compared, *excluded]:
        bounds.append(float(point.result.value))
        interval = interval_of(point.result)
        if interval is not None:
            bounds += [float(interval.low), float(interval.high)]
    ticks = nice_ticks(min(bounds), max(bounds))
    low, high = ticks[0], ticks[-1]

    def x(value: float | Decimal) -> float:
        return PLOT_LEFT + (float(value) - low) / (high - low) * (PLOT_RIGHT - PLOT_LEFT)

    best, overlapping, note = best_note(compared)
    y = 20.0
    title_lines = []
    for line in _wrap(title, advance=TITLE_CHAR, lines=3):
        title_lines.append((y, line))
        y += 18
    subtitle_lines = []
    for line in _wrap(subtitle):
        subtitle_lines.append((y, line))
        y += LINE
    grid_top = y - 6
    y += 4

    def bar(point: Point, excluded: bool) -> Bar:
        nonlocal y
        interval = interval_of(point.result)
        value_text = _value_text(point) + (" best" if point is best and note == "best" else "")
        room = WIDTH - 2 * PAD - len(value_text) * CHAR - 10
        drawn = Bar(
            label=_short(point.label, min(LABEL_CHARS, _chars(room))),
            value_text=value_text,
            exact=exact_text(point.result.value),
            origin=point.origin,
            marker=MARKERS.get(MeasuredBy(point.evaluation.measured_by), "circle"),
            x0=x(0.0),
            x1=x(point.result.value),
            label_y=y + 12,
            y=y + 22,
            best=point is best,
            excluded=excluded,
            concern=_short(point.concern, CONCERN_CHARS) if excluded or point.excluded else "",
            interval=interval,
            low_x=x(interval.low) if interval else 0,
            high_x=x(interval.high) if interval else 0,
            best_note=note if point is best else "",
        )
        notes_y = drawn.y + 20
        lines = _wrap(drawn.best_note, lines=2) if drawn.best_note and drawn.best_note != "best" else []
        if drawn.concern:
            lines += _wrap(f"Excluded: {drawn.concern}")
        for line in lines:
            drawn.notes.append((notes_y, line))
            notes_y += LINE
        y = drawn.y + 8 + LINE * len(lines) + ROW_GAP
        return drawn

    compared_bars = [bar(point, excluded=point.excluded) for point in compared]
    axis_y = y
    y = axis_y + 16  # tick labels
    axis_label_lines: list[tuple[float, str]] = []
    for line in _wrap(axis_label, lines=2):
        y += LINE if axis_label_lines else LINE + 2
        axis_label_lines.append((y, line))
    y += 10
    excluded_heading_lines: list[tuple[float, str]] = []
    excluded_bars: list[Bar] = []
    if excluded:
        y += 14
        for line in _wrap(APART):
            excluded_heading_lines.append((y, line))
            y += LINE
        excluded_bars = [bar(point, excluded=True) for point in excluded]
    legend_y = y + 14
    kinds = sorted({b.interval.kind for b in [*compared_bars, *excluded_bars] if b.interval is not None})
    legend_rows = 3 if kinds else 2
    description = (
        "; ".join(
            f"{b.label}: {b.exact} {unit}"
            + (f" ({b.interval.text})" if b.interval else "")
            + f", {b.origin}"
            + (f", {b.best_note}" if b.best_note else "")
            for b in compared_bars
        )
        or "no results to compare"
    )
    if excluded_bars:
        description += ". Excluded from comparison: " + "; ".join(
            f"{b.label}: {b.exact} {unit}" + (f" ({b.interval.text})" if b.interval else "") + f" ({b.concern})"
            for b in excluded_bars
        )
    description += "." + _rule_sentence(best, overlapping)
    return Chart(
        id=chart_id,
        title=title,
        subtitle=subtitle,
        description=description,
        axis_label=axis_label,
        width=WIDTH,
        height=int(legend_y + LINE * (legend_rows - 1) + 12),
        plot_left=PLOT_LEFT,
        plot_right=PLOT_RIGHT,
        zero_x=x(0.0),
        axis_y=axis_y,
        ticks=[(x(t), tick_label(Decimal(str(t)))) for t in ticks],
        compared=compared_bars,
        excluded=excluded_bars,
        excluded_heading_y=excluded_heading_lines[0][0] if excluded_heading_lines else 0,
        legend_y=legend_y,
        empty_message="" if compared_bars else empty_message,
        title_lines=title_lines,
        subtitle_lines=subtitle_lines,
        axis_label_lines=axis_label_lines,
        excluded_heading_lines=excluded_heading_lines,
        apart_label=APART if excluded_bars else "",
        grid_top=grid_top,
        interval_kinds=", ".join(kinds),
    )


def _point(row: ResultRow, *, excluded: bool) -> Point:
    configuration = row.evaluation.configuration
    return Point(
        label=configuration.short_name or configuration.name,
        result=row.result,
        evaluation=row.evaluation,
        origin=f"measured by {row.evaluation.get_measured_by_display().lower()}",
        best=row.is_best,
        rank=row.rank,
        tied_with_best=row.tied_with_best,
        excluded=excluded,
        concern=row.evaluation.concern if excluded or row.evaluation.is_excluded else "",
    )


def comparison_chart(
    *, protocol: Protocol, group: ComparisonGroup, include_excluded: bool, several: bool = False
) -> Chart:
    """The chart of one comparison group; `several` when it is one of a protocol's small multiples
    (its title then names the dataset or task)."""
    compared_rows = [row for row in group.rows if row.in_comparison]
    apart_rows = [] if include_excluded else [row for row in group.rows if row.evaluation.is_excluded]
    direction = protocol.get_metric_direction_display()
    scope = "source-checked and excluded rows" if include_excluded else "source-checked rows"
    if len(compared_rows) + len(apart_rows) > MAX_BARS:  # a thousand bars are read by nobody: the best ones
        scope += f", the first {MAX_BARS} of {len(compared_rows) + len(apart_rows)} (all in the table)"
        compared_rows = compared_rows[:MAX_BARS]
        apart_rows = apart_rows[: MAX_BARS - len(compared_rows)]
    compared = [_point(row, excluded=row.evaluation.is_excluded) for row in compared_rows]
    apart = [_point(row, excluded=True) for row in apart_rows]
    title = protocol.metric_label if not several else f"{group.label}: {protocol.metric_name}"
    return draw(
        chart_id=f"chart-{group.key}",
        title=_short(title, 80),
        subtitle=f"{direction}; compares {scope}" if protocol.is_ranked else "descriptive facts: not ranked",
        axis_label=f"{protocol.metric_name} ({protocol.metric_unit}), {direction}",
        unit=protocol.metric_unit,
        compared=compared,
        excluded=apart,
        empty_message="No source-checked result to compare yet.",
    )


def task_chart(
    *,
    dataset: Dataset,
    table: TaskTable,
    key: str,
    label_of: Callable[[Evaluation], str],
    origin_of: Callable[[Evaluation], str],
) -> Chart:
    """A task page's table (records.agreement.task_tables) drawn as the protocol page's charts are:
    one bar a measurement (its most precise printing), best first; the marker says who measured it."""
    points = [
        Point(
            label=label_of(row.measurement.shown.evaluation),
            result=row.measurement.shown.result,
            evaluation=row.measurement.shown.evaluation,
            origin=f"measured by {origin_of(row.measurement.shown.evaluation)}",
            best=row.is_best,
            rank=row.rank,
            tied_with_best=row.tied_with_best,
        )
        for row in table.rows
    ]
    direction = Direction(table.direction).label if table.direction in Direction.values else ""
    ranked = table.direction != Direction.NONE
    return draw(
        chart_id=f"chart-{key}",
        title=_short(f"{dataset.name}: {table.metric} ({table.unit})", 80),
        subtitle=(
            f"{direction}; source-checked measurements, each counted once" if ranked else "descriptive: not ranked"
        ),
        axis_label=f"{table.metric} ({table.unit}){f', {direction}' if direction else ''}",
        unit=table.unit,
        compared=points,
        empty_message="No source-checked measurement to compare yet.",
    )


def protocol_charts(
    *, protocol: Protocol, groups: list[ComparisonGroup], include_excluded: bool, several: bool = False
) -> list[Chart]:
    """One chart per group (small multiples for a suite: `several`, or more than one group, names
    each chart's dataset or task); one empty chart when nothing is recorded."""
    several = several or len(groups) > 1
    groups = groups or [ComparisonGroup(dataset=None, relation=Relation.ABSOLUTE, reference=None)]
    return [
        comparison_chart(protocol=protocol, group=group, include_excluded=include_excluded, several=several)
        for group in groups
    ]
