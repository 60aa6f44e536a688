"""The evidence rules, once: which printings are one measurement, whether they agree, how values
rank and tie, and whether independent measurements agree. The protocol page (records.comparisons),
the task and model pages and the API (records.agreement) and the release build (releases.identity_rows)
all call these functions; tests/records/test_evidence_surfaces.py feeds the same rows to each and
asserts they say the same.

- **One scale.** A value is put on its metric's plain scale by its protocol's scale
  (records.rules.units): "MCC x 100" 61.2 is 0.612. Its printed precision moves with it.
- **Same measurement.** Printings of one subject (a model, or a configuration naming none), on one
  task family and metric, from one origin are one measurement: a repeat with its original; a copy
  (`original_source`, `original_citation`) with its original and the other copies of it; the rows
  of one work's versions (`MEASUREMENT_RULE`).
- **Printings that disagree.** Printings of one measurement agree when they are equal at the
  coarser one's printed precision (0.549 and the figure label 0.55). Then the most precise is
  compared. When they do not, nothing is hidden: the original is compared over a copy, and the
  latest version over an earlier one; a copy that disagrees is a transcription conflict
  ("copy disagrees with its original"), an earlier version is superseded ("changed between
  versions"), two printings in one source disagree ("printed differently in one source").
- **Ties.** Two values tie where their intervals overlap: each value's reported spread, or where it
  reports none TIE_TOLERANCE of the value (`TIE_RULE`). Every value that ties with the best is "tied with the best", and the best is "tied".
- **Ranks.** Only a metric with a direction is ranked, and only where two or more compare.
- **Verdict.** Over the measurements of one subject on one task family and metric (`AGREEMENT_RULE`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Generic, TypeVar

from records.models import Direction, MeasuredBy
from records.works import title_key
from reviews.models import EXCLUDED_STATES, ReviewState

TIE_TOLERANCE = Decimal("0.005")
AGREEMENT_TOLERANCE = Decimal("0.05")

SCALE_RULE = (
    "Values of one metric (the protocols' metric short name) compare on one scale: x 100 and % are divided by 100, "
    "per mille by 1,000; raw units compare only with the same unit."
)
MEASUREMENT_RULE = (
    "Printings of one model's measurement on one task (with the tasks a source says are the same data) count once: "
    "a copy of a number first published elsewhere counts with its original, and one work's versions count once. "
    "Printings that agree at their printed precision are one value, the most precise compared; printings that do "
    "not are all shown: a copy that disagrees with its original (a transcription conflict), an earlier version "
    "a later one changed (superseded), two printings in one source that differ."
)
TIE_RULE = (
    "Two values tie where their intervals overlap: each value's reported ± spread, or where it reports none "
    f"{(TIE_TOLERANCE * 100).normalize()} % of the value. A best that ties with a runner-up is marked tied."
)
AGREEMENT_RULE = (
    "Measurements of one model on one task (with the tasks a source says are the same data) and one metric, "
    "on one scale (x 100 and % divided by 100), each counted once. One measurement: single measurement. "
    "All by the model's own authors: self-reported, consistent or conflicting. Otherwise consistent when every "
    "two values lie within their stated ± spreads added together, or, where one has none, within "
    f"{int(AGREEMENT_TOLERANCE * 100)}% of the larger value (or the one spread given, if wider), each widened by "
    "half a unit of its last printed digit; else conflicting. Printings of one measurement that disagree make a "
    "transcription conflict. Excluded measurements count, marked as such."
)


# -- where a number comes from (an evaluation's `provenance`: records.rules.provenance) ------------


def subject_key(evaluation: Any) -> tuple[str, int]:
    """A model, or the configuration where it names none."""
    configuration = evaluation.configuration
    return (
        ("model", configuration.model_id) if configuration.model_id else ("configuration", evaluation.configuration_id)
    )


def origin_key(evaluation: Any, *, repeated: set[int]) -> tuple[str, Any]:
    """What makes two printings one measurement besides subject, task family and metric; `repeated`
    names the evaluations others repeat (an original is keyed as its repeats key it)."""
    if evaluation.pk in repeated:
        return ("evaluation", evaluation.pk)
    p = evaluation.provenance
    if p.repeats_id:
        return ("evaluation", p.repeats_id)
    if p.original_source_id:
        return ("work", p.original_work_id) if p.original_work_id else ("source", p.original_source_id)
    if p.original_citation:
        return ("citation", title_key(p.original_citation))
    if p.source_id is None:  # the portal's own run: its own measurement
        return ("evaluation", evaluation.pk)
    return ("work", p.work_id) if p.work_id else ("source", p.source_id)


def compared_states(*, include_excluded: bool) -> frozenset[str]:
    """Review states whose results enter best marks, ranks and charts."""
    if include_excluded:
        return frozenset({ReviewState.SOURCE_CHECKED, *EXCLUDED_STATES})
    return frozenset({ReviewState.SOURCE_CHECKED})


def compared_with_original(evaluation: Any, *, states: frozenset[str]) -> bool:
    """Whether an evaluation in a compared state may enter a comparison: not when the measurement it
    repeats is excluded (it stays out with its original)."""
    original = evaluation.repeats.review_state if evaluation.repeats_id is not None else None
    return not (original in EXCLUDED_STATES and original not in states)


# -- printings ---------------------------------------------------------------------------------------


_ONE = Decimal(1)


def spread_of(result: Any) -> Decimal | None:
    """The ± figure, or half the interval between bounds, in the result's unit."""
    if result.uncertainty_value is not None:
        return Decimal(result.uncertainty_value)
    if result.lower_bound is not None and result.upper_bound is not None:
        return (Decimal(result.upper_bound) - Decimal(result.lower_bound)) / 2
    return None


def _exponent(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int), value  # values are finite (records.values)
    return exponent


@dataclass(slots=True, eq=False)
class Printing:
    """One result that prints a measurement, on the metric's plain scale."""

    evaluation: Any
    result: Any
    value: Decimal
    spread: Decimal | None
    factor: Decimal

    @property
    def precision(self) -> int:
        """The exponent of the last printed digit on the plain scale (lower: more precise): read
        only where printings are compared with each other (most rows never need it)."""
        shift = self.factor.adjusted() if self.factor != 1 else 0  # 100: two places, 1,000: three
        return _exponent(Decimal(self.result.value)) - shift

    @property
    def half_unit(self) -> Decimal:
        """Half a unit of the last printed digit (0.55: 0.005)."""
        return Decimal(5).scaleb(self.precision - 1)

    @property
    def is_copy(self) -> bool:
        return self.evaluation.provenance.is_copy

    @property
    def compared(self) -> bool:
        return self.evaluation.review_state == ReviewState.SOURCE_CHECKED

    @property
    def version(self) -> tuple[str, int]:
        return self.evaluation.provenance.version


def printing_of(evaluation: Any, result: Any, *, factor: Decimal = _ONE) -> Printing:
    value = result.value if isinstance(result.value, Decimal) else Decimal(result.value)
    spread = spread_of(result)
    if factor == 1:
        return Printing(evaluation, result, value, spread, factor)
    return Printing(evaluation, result, value / factor, spread / factor if spread is not None else None, factor)


def same_printed(a: Printing, b: Printing) -> bool:
    """Whether two printings are one number at the coarser one's printed precision (0.549 and 0.55)."""
    coarser = a if a.precision >= b.precision else b
    return abs(a.value - b.value) <= coarser.half_unit


# -- one measurement, however often printed ---------------------------------------------------------


class Discrepancy:
    COPY = "copy_disagrees"
    VERSIONS = "changed_between_versions"
    ONE_SOURCE = "printed_differently"
    LABELS = {
        COPY: "copy disagrees with its original",
        VERSIONS: "changed between versions",
        ONE_SOURCE: "printed differently in one source",
    }
    CHOICES = tuple(LABELS.items())


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A printing that does not agree with the one compared, and how."""

    kind: str
    printing: Printing
    against: Printing

    @property
    def label(self) -> str:
        return Discrepancy.LABELS[self.kind]


@dataclass(frozen=True, slots=True)
class OtherPrinting:
    """A printing of a measurement besides the one compared, and how it counts."""

    printing: Printing
    status: str  # "the same value, counted once", or a Discrepancy label
    disagrees: bool


def _most_precise(p: Printing) -> tuple:
    return (p.precision, p.spread is None, not p.compared, p.evaluation.pk or 0)


@dataclass
class Measurement:
    """One measurement with every printing of it (read `shown` once every printing is in)."""

    key: tuple
    printings: list[Printing] = field(default_factory=list)
    _cached: tuple[Printing, tuple[Disagreement, ...]] | None = field(default=None, repr=False, compare=False)

    @property
    def _resolved(self) -> tuple[Printing, tuple[Disagreement, ...]]:
        # kept by hand: functools.cached_property takes a lock on each first read (a page reads thousands)
        if self._cached is None:
            self._cached = self._resolve()
        return self._cached

    def _resolve(self) -> tuple[Printing, tuple[Disagreement, ...]]:
        if len(self.printings) == 1:
            return self.printings[0], ()
        first = min(self.printings, key=_most_precise)
        if all(same_printed(p, first) for p in self.printings):
            return first, ()
        originals = [p for p in self.printings if not p.is_copy] or self.printings
        latest = max((p.version, p.evaluation.provenance.source_id or 0) for p in originals)
        shown = min(
            (p for p in originals if (p.version, p.evaluation.provenance.source_id or 0) == latest), key=_most_precise
        )
        found = []
        for p in self.printings:
            if p is shown or same_printed(p, shown):
                continue
            if not p.is_copy and p.evaluation.provenance.source_id != shown.evaluation.provenance.source_id:
                kind = Discrepancy.VERSIONS
            elif not p.is_copy:
                kind = Discrepancy.ONE_SOURCE
            elif any(same_printed(p, q) for q in originals if q is not shown and not q.is_copy):
                kind = Discrepancy.VERSIONS  # a copy of an earlier version, superseded with it
            else:
                kind = Discrepancy.COPY
            found.append(Disagreement(kind=kind, printing=p, against=shown))
        return shown, tuple(found)

    @property
    def shown(self) -> Printing:
        """The printing compared: the most precise of printings that agree; where they do not, the
        original over a copy and the latest version over an earlier one."""
        return self._resolved[0]

    @property
    def disagreements(self) -> tuple[Disagreement, ...]:
        return self._resolved[1]

    @property
    def transcription_conflict(self) -> bool:
        return any(d.kind != Discrepancy.VERSIONS for d in self.disagreements)

    @property
    def copies(self) -> list[Printing]:
        shown = self.shown
        return [p for p in self.printings if p is not shown]

    @property
    def others(self) -> list[OtherPrinting]:
        """Its printings but the one compared, each with how it counts: those that disagree first."""
        found = [
            OtherPrinting(p, self.status_of(p), any(d.printing is p for d in self.disagreements)) for p in self.copies
        ]
        return sorted(found, key=lambda other: not other.disagrees)

    def status_of(self, printing: Printing) -> str:
        """What the pages say of one printing of the measurement."""
        if printing is self.shown:
            return "compared" if not self.disagreements else "compared (the original, latest version)"
        for d in self.disagreements:
            if d.printing is printing:
                return d.label
        return "the same value, counted once"

    @property
    def measured_by(self) -> str:
        return self.shown.evaluation.measured_by

    @property
    def measured_by_label(self) -> str:
        evaluation = self.shown.evaluation
        return evaluation.measured_by_name or evaluation.get_measured_by_display()

    @property
    def value(self) -> Decimal:
        return self.shown.value

    @property
    def spread(self) -> Decimal | None:
        return self.shown.spread

    @property
    def review_state(self) -> str:
        return self.shown.evaluation.review_state

    @property
    def is_excluded(self) -> bool:
        return self.review_state in EXCLUDED_STATES


def measurements_of(printings: Sequence[Printing], *, key_of: Callable[[Printing], tuple]) -> dict[tuple, Measurement]:
    """The printings grouped into measurements by `key_of` (subject, family, metric, origin), in first-seen order."""
    found: dict[tuple, Measurement] = {}
    for printing in printings:
        key = key_of(printing)
        found.setdefault(key, Measurement(key=key)).printings.append(printing)
    return found


# -- ranks and ties ------------------------------------------------------------------------------------


def reach(printing: Printing) -> Decimal:
    """How far a value's interval reaches either side: its spread, or TIE_TOLERANCE of it where it
    reports none."""
    return printing.spread if printing.spread is not None else TIE_TOLERANCE * abs(printing.value)


def tied(a: Printing, b: Printing) -> bool:
    """Whether two values' intervals overlap (TIE_RULE)."""
    return abs(a.value - b.value) <= reach(a) + reach(b)


T = TypeVar("T")


@dataclass(eq=False, slots=True)
class Ranked(Generic[T]):
    item: T
    printing: Printing
    rank: int | None = None
    is_best: bool = False
    tied_with_best: bool = False  # a runner-up whose interval overlaps the best's
    best_tied: bool = False  # a best with such a runner-up


R = TypeVar("R", bound="Ranked[Any]")


def rank(
    items: Sequence[T],
    *,
    printing_of: Callable[[T], Printing],
    direction: str,
    name_of: Callable[[T], Any],
    row_type: type[R],
) -> list[R]:
    """`items` best first (by their printing's value on the plain scale, then `name_of`), as rows of
    `row_type`; ranks and best marks where the metric has a direction and at least two compare;
    equal values share a rank; every runner-up that ties with the best (TIE_RULE) is marked, and
    the best with it."""
    lower = direction == Direction.LOWER
    ranked = direction != Direction.NONE
    rows = [row_type(item=item, printing=printing_of(item)) for item in items]
    rows.sort(key=lambda r: ((r.printing.value if lower else -r.printing.value) if ranked else 0, name_of(r.item)))
    if not ranked or len(rows) < 2:
        return rows
    previous: Decimal | None = None
    position_rank = 0
    for position, row in enumerate(rows, start=1):
        if row.printing.value != previous:
            position_rank, previous = position, row.printing.value
        row.rank = position_rank
        row.is_best = position_rank == 1
    best = rows[0].printing
    for row in rows:
        if not row.is_best and tied(best, row.printing):
            row.tied_with_best = True
    if any(row.tied_with_best for row in rows):
        for row in rows:
            row.best_tied = row.is_best
    return rows


# -- whether measurements agree -------------------------------------------------------------------------


class Verdict:
    SINGLE = "single_measurement"
    SELF_CONSISTENT = "self_reported_consistent"
    SELF_CONFLICTING = "self_reported_conflicting"
    CONSISTENT = "consistent"
    CONFLICTING = "conflicting"
    TRANSCRIPTION = "transcription_conflict"
    LABELS = {
        SINGLE: "single measurement",
        SELF_CONSISTENT: "self-reported, consistent",
        SELF_CONFLICTING: "self-reported, conflicting",
        CONSISTENT: "consistent",
        CONFLICTING: "conflicting",
        TRANSCRIPTION: "transcription conflict",
    }
    CHOICES = tuple(LABELS.items())
    #: The verdicts a reader should see first, most urgent first.
    CONFLICTS = (TRANSCRIPTION, CONFLICTING, SELF_CONFLICTING)


def within(a: Printing, b: Printing) -> bool:
    """Whether two measurements' values agree (AGREEMENT_RULE)."""
    difference = abs(a.value - b.value)
    rounding = a.half_unit + b.half_unit
    if a.spread is not None and b.spread is not None:
        allowed = a.spread + b.spread
    else:
        tolerance = AGREEMENT_TOLERANCE * max(abs(a.value), abs(b.value))
        allowed = max(tolerance, a.spread or Decimal(0), b.spread or Decimal(0))
    return difference <= allowed + rounding


def verdict(found: Sequence[Measurement]) -> str:
    """The verdict on the measurements of one subject, task family and metric."""
    if any(x.transcription_conflict for x in found):
        return Verdict.TRANSCRIPTION
    if len(found) <= 1:
        return Verdict.SINGLE
    pairs = [(a, b) for i, a in enumerate(found) for b in found[i + 1 :]]
    agree = all(within(a.shown, b.shown) for a, b in pairs)
    if all(x.measured_by == MeasuredBy.AUTHORS for x in found):
        return Verdict.SELF_CONSISTENT if agree else Verdict.SELF_CONFLICTING
    return Verdict.CONSISTENT if agree else Verdict.CONFLICTING


def verdict_label(verdict_value: str, found: Sequence[Measurement]) -> str:
    """The verdict in words, with what its printings say ("consistent; changed between versions")."""
    kinds = list(dict.fromkeys(d.label for x in found for d in x.disagreements))
    label = Verdict.LABELS[verdict_value]
    return "; ".join([label, *kinds]) if kinds else label
