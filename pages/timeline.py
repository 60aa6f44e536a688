"""A task's best value over time for one metric (the leaderboard timeline): geometry computed
here, drawn by templates/records/_timeline.svg.

The points are the rows of the task page's tables of one metric (records.agreement.task_tables: one
table a unit, source-checked measurements, each counted once), their values on the metric's one
scale (x 100 and % divided by 100, as the agreement rule compares them), dated by their sources'
publication dates; the line is the running best: a step up (or down, where lower is better) at
each date whose best measurement beats every earlier one; a date's best that only equals the
running best is no new step.

Dates are partial (a year, a year and month, or a day: records.models.Source.published_date). A
date counts as the last day it may stand for ("2023" as 2023-12-31, "2023-10" as 2023-10-31): the
day by which the source was surely out, so no value is drawn earlier than it is known to exist. A
measurement printed by several sources, or copied from a catalogued original, takes the earliest
of their dates, and its point names that source. Measurements whose sources give no date are not
drawn (the page says how many). No timeline where the metric has no direction or the dated
measurements fall on fewer than two dates. At most MAX_STEPS steps are drawn: the latest ones.

The conventions of pages.charts: 340 units wide, every text at least 12 units, who measured a
value shown by its marker's shape, the interval of a stored uncertainty drawn as an error bar, a
title and a text description; record text reaches the SVG only through the template (escaped).
"""

from __future__ import annotations

import calendar
import datetime
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from pages.charts import CHAR, MARKERS, PROSE_CHAR, TITLE_CHAR, WIDTH, Interval, interval_of, nice_ticks, tick_label
from records.agreement import Measurement, TaskTable
from records.models import Direction, MeasuredBy, Source
from records.values import display

PAD = 8
LINE = 15
PLOT_HEIGHT = 150
MAX_STEPS = 12
KEY_LINES = 3  # lines a step's key entry may take
MONTH_STEPS = (1, 2, 3, 6)  # a span under a year
YEAR_STEPS = (12, 24, 60, 120)  # a year or more: ticks on years
EDGE = 0.06  # the share of the span left free before the first date and after the last
MAX_X_TICKS = 4
DATE_RULE = (
    "A publication date known only to its year or month counts as that period's last day (the day by which "
    "the source was surely out); a measurement printed by several sources takes the earliest date."
)


def date_end(text: str) -> datetime.date | None:
    """The last day a partial date may stand for ("2023" -> 2023-12-31), or None for no valid date."""
    found = re.fullmatch(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", text or "")
    if not found:
        return None
    year, month, day = (int(part) if part else None for part in found.groups())
    assert year is not None
    try:
        if month is None:
            return datetime.date(year, 12, 31)
        if day is None:
            return datetime.date(year, month, calendar.monthrange(year, month)[1])
        return datetime.date(year, month, day)
    except ValueError:
        return None


@dataclass(frozen=True)
class Dating:
    end: datetime.date
    text: str  # as the source gives it: "2023", "2023-10", "2023-10-09"
    source: Source


def dating_of(measurement: Measurement) -> Dating | None:
    """The earliest date among the sources that print the measurement and the originals they copy."""
    found = []
    for printing in measurement.printings:
        for source in (printing.evaluation.source, printing.evaluation.original_source):
            end = date_end(source.published_date) if source is not None else None
            if source is not None and end is not None:
                found.append(
                    (end, -len(source.published_date), source.stable_id, Dating(end, source.published_date, source))
                )
    return min(found, key=lambda item: item[:3])[3] if found else None


@dataclass
class Step:
    """A new best: its number on the chart, what it is, and where it is drawn."""

    number: int
    measurement: Measurement
    dating: Dating
    label: str  # the model, or the configuration that names none
    value_text: str  # "0.976 ± 0.006 s.d. F1"
    marker: str
    x: float = 0
    y: float = 0
    interval: Interval | None = None
    scale: Decimal = Decimal(1)  # the factor that puts its unit on the metric's plain scale
    low_y: float = 0
    high_y: float = 0
    number_y: float = 0

    @property
    def interval_path(self) -> str:
        """The error bar with its caps (numbers only)."""
        x, low, high = self.x, self.low_y, self.high_y
        return f"M {x:.1f} {low:.1f} V {high:.1f} M {x - 5:.1f} {low:.1f} h 10 M {x - 5:.1f} {high:.1f} h 10"

    @property
    def source_label(self) -> str:
        source = self.dating.source
        return source.authors_short or str(source)


@dataclass
class Timeline:
    id: str
    title: str
    description: str
    sentence: str  # what the page says of it, computed from it
    width: int
    height: int
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    path: str  # the step line: numbers only
    steps: list[Step]
    title_lines: list[tuple[float, str]] = field(default_factory=list)
    subtitle_lines: list[tuple[float, str]] = field(default_factory=list)
    x_ticks: list[tuple[float, str, str]] = field(default_factory=list)
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    axis_label_lines: list[tuple[float, str]] = field(default_factory=list)
    key_lines: list[tuple[float, str]] = field(default_factory=list)
    legend_y: float = 0
    dated: int = 0
    undated: int = 0
    interval_kinds: str = ""

    @property
    def y_tick_x(self) -> float:
        return self.plot_left - 6

    @property
    def x_tick_end(self) -> float:
        return self.plot_bottom + 4


def _wrap(text: str, *, advance: float = PROSE_CHAR, lines: int = 3, indent: float = 0) -> list[str]:
    width = max(8, int((WIDTH - 2 * PAD - indent) / advance))
    wrapped = textwrap.wrap(text, width=width, break_long_words=True) or [""]
    if len(wrapped) > lines:
        rest = " ".join(wrapped[lines - 1 :])
        wrapped = [*wrapped[: lines - 1], rest if len(rest) <= width else rest[: width - 1].rstrip() + "…"]
    return wrapped


def new_bests(
    dated: Sequence[tuple[Dating, Measurement]], *, lower_is_better: bool
) -> list[tuple[Dating, Measurement]]:
    """The running best in date order: each date's best measurement where it beats every earlier one
    (`dated` sorted by date; a date's ties go to the first in the table's order)."""
    found: list[tuple[Dating, Measurement]] = []
    best: Decimal | None = None
    index = 0
    while index < len(dated):
        end = dated[index][0].end
        same_day = []
        while index < len(dated) and dated[index][0].end == end:
            same_day.append(dated[index])
            index += 1
        top = min(same_day, key=lambda item: item[1].value if lower_is_better else -item[1].value)
        value = top[1].value
        if best is None or (value < best if lower_is_better else value > best):
            found.append(top)
            best = value
    return found


def _value_text(measurement: Measurement) -> str:
    result = measurement.shown.result
    interval = interval_of(result)
    return f"{display(result.value)}{interval.value_suffix if interval else ''} {result.unit}".strip()


def _x_ticks(
    first: datetime.date,
    last: datetime.date,
    x: Callable[[datetime.date], float],
    *,
    ends: tuple[datetime.date, datetime.date],
) -> list[tuple[float, str, str]]:
    """(x, label, text-anchor): a tick at the last day of each year or month between `first` and
    `last`, labelled with it ("2023" at 2023-12-31, where a date of that year is drawn), as few as fit
    (at most MAX_X_TICKS); the dates at the two `ends` when none falls between."""
    start, stop = first.year * 12 + first.month - 1, last.year * 12 + last.month - 1
    steps = YEAR_STEPS if stop - start >= 12 else MONTH_STEPS
    step = next((months for months in steps if (stop - start) / months <= MAX_X_TICKS), steps[-1])
    ticks = []
    for index in range(start, stop + 1):
        year, month = divmod(index, 12)
        day = datetime.date(year, month + 1, calendar.monthrange(year, month + 1)[1])
        if (index + 1) % step == 0 and first <= day <= last:
            ticks.append((x(day), str(year) if step >= 12 else f"{year}-{month + 1:02d}"))
    if not ticks:
        ticks = [(x(day), day.isoformat()) for day in ends]
    placed = []
    for tick_x, label in ticks:
        half = len(label) * CHAR / 2
        anchor = "start" if tick_x - half < PAD else "end" if tick_x + half > WIDTH - PAD else "middle"
        placed.append((tick_x, label, anchor))
    return placed


def timeline(
    *,
    tables: Sequence[TaskTable],
    key: str,
    title: str,
    metric_name: str,
    label_of: Callable[[Measurement], str],
) -> Timeline | None:
    """The best value over time of one metric's task tables (one a unit, its values on one scale:
    the protocols' scale factors), or None (no direction, or fewer than two dates)."""
    direction_value = tables[0].direction if tables else Direction.NONE
    if direction_value not in (Direction.HIGHER, Direction.LOWER):
        return None
    rows = [row for table in tables for row in table.rows]
    dated = []
    for row in rows:
        dating = dating_of(row.measurement)
        if dating is not None:
            dated.append((dating, row.measurement))
    if len({dating.end for dating, _ in dated}) < 2:
        return None
    dated.sort(key=lambda item: item[0].end)  # stable: a date's measurements in the tables' order
    lower = direction_value == Direction.LOWER
    found = new_bests(dated, lower_is_better=lower)
    first_end, last_end = dated[0][0].end, dated[-1][0].end
    all_steps = len(found)
    found = found[-MAX_STEPS:]
    if all_steps > MAX_STEPS:
        first_end = found[0][0].end
    steps = [
        Step(
            number=number,
            measurement=measurement,
            dating=dating,
            label=label_of(measurement),
            value_text=_value_text(measurement),
            marker=MARKERS.get(MeasuredBy(measurement.measured_by), "circle"),
            interval=interval_of(measurement.shown.result),
            scale=measurement.shown.factor,
        )
        for number, (dating, measurement) in enumerate(found, start=1)
    ]
    direction = Direction(direction_value).label
    scaled = any(table.scaled for table in tables)
    y = 20.0
    title_lines = []
    for line in _wrap(title, advance=TITLE_CHAR):
        title_lines.append((y, line))
        y += 18
    subtitle = f"Best so far by publication date, {direction.lower()}; source-checked measurements" + (
        ", on one scale (x 100 and % divided by 100)" if scaled else ""
    )
    subtitle_lines = []
    for line in _wrap(subtitle):
        subtitle_lines.append((y, line))
        y += LINE
    bounds = []
    for step in steps:
        bounds.append(float(step.measurement.value))
        if step.interval is not None:
            bounds += [float(step.interval.low / step.scale), float(step.interval.high / step.scale)]
    ticks = nice_ticks(min(bounds), max(bounds))
    low, high = ticks[0], ticks[-1]
    tick_texts = [tick_label(Decimal(str(t))) for t in ticks]
    plot_left = PAD + max(len(text) for text in tick_texts) * CHAR + 6
    plot_right = WIDTH - PAD - 14
    plot_top = y + 14
    plot_bottom = plot_top + PLOT_HEIGHT

    def to_y(value: float | Decimal) -> float:
        return plot_bottom - (float(value) - low) / (high - low) * PLOT_HEIGHT

    edge = datetime.timedelta(days=max(1, round((last_end - first_end).days * EDGE)))
    axis_first, axis_last = first_end - edge, last_end + edge
    span = (axis_last - axis_first).days

    def to_x(day: datetime.date) -> float:
        return plot_left + (day - axis_first).days / span * (plot_right - plot_left)

    previous_x, previous_above = -100.0, False
    for step in steps:
        step.x, step.y = to_x(step.dating.end), to_y(step.measurement.value)
        top = bottom = step.y
        if step.interval is not None:
            step.low_y, step.high_y = to_y(step.interval.low / step.scale), to_y(step.interval.high / step.scale)
            top, bottom = min(step.y, step.high_y), max(step.y, step.low_y)
        # its number above the point, or below it where the previous number above is too near
        below = step.x - previous_x < 16 and previous_above and bottom + 20 <= plot_bottom - 2
        step.number_y = bottom + 20 if below else top - 9
        previous_x, previous_above = step.x, not below
    path = f"M {steps[0].x:.1f} {steps[0].y:.1f}"
    for step in steps[1:]:
        path += f" H {step.x:.1f} V {step.y:.1f}"
    path += f" H {to_x(last_end):.1f}"
    y = plot_bottom + 16 + LINE  # the date ticks' labels, then the axis label
    axis_label_lines = []
    for line in _wrap("Publication date (a year or month is drawn at its last day, where its tick is)", lines=2):
        axis_label_lines.append((y, line))
        y += LINE
    y += 8
    key_lines = []
    for step in steps:
        text = f"{step.number}. {step.dating.text}: {step.label}, {step.value_text}, {step.source_label}"
        for line in _wrap(text, lines=KEY_LINES):
            key_lines.append((y, line))
            y += LINE
        y += 3
    undated = len(rows) - len(dated)
    earlier = all_steps - len(steps)
    sentence = (
        f"The best {metric_name} over time: the running best of the {len(dated)} source-checked measurements above "
        f"that have a publication date, by that date"
        + (f" ({undated} without one {'is' if undated == 1 else 'are'} not drawn)" if undated else "")
        + f": {all_steps} new best{'s' if all_steps != 1 else ''}"
        + (f", the latest {len(steps)} drawn" if earlier else "")
        + ". "
        + DATE_RULE
    )
    description = (
        "; ".join(
            f"{step.number}. {step.dating.text}: {step.label}, {step.value_text} ({step.source_label}, "
            f"measured by {step.measurement.measured_by_label})"
            for step in steps
        )
        + ". "
        + DATE_RULE
    )
    kinds = sorted({step.interval.kind for step in steps if step.interval is not None})
    return Timeline(
        id=f"timeline-{key}",
        title=title,
        description=description,
        sentence=sentence,
        width=WIDTH,
        height=int(y + 14 + LINE * (2 if kinds else 1) + 12),
        plot_left=plot_left,
        plot_right=plot_right,
        plot_top=plot_top,
        plot_bottom=plot_bottom,
        path=path,
        steps=steps,
        title_lines=title_lines,
        subtitle_lines=subtitle_lines,
        x_ticks=_x_ticks(axis_first, axis_last, to_x, ends=(first_end, last_end)),
        y_ticks=[(to_y(t), text) for t, text in zip(ticks, tick_texts, strict=True)],
        axis_label_lines=axis_label_lines,
        key_lines=key_lines,
        legend_y=y + 14,
        dated=len(dated),
        undated=undated,
        interval_kinds=", ".join(kinds),
    )
