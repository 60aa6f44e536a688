"""Units: a result's unit is the metric unit of its evaluation's protocol, and a metric's scale is data.

The unit rule is in Python once: `unit_problem` is the only Python check of it; the models'
clean() (and so the admin, the API and every service write), the import's whole-document
validation and its batches (`count_off_unit`) all ask it. The database triggers
(records.db_triggers) stay the last line, whichever of the three rows changes and however it is
written.

The scale: a protocol's `metric_scale` says how its values are printed, so that values of one
metric printed on different scales compare ("MCC x 100" 61.2 is 0.612 on the plain scale):

- `fraction`: the metric's plain scale (an MCC of 0.612, an accuracy of 0.9);
- `percent` (divided by 100), `x100` (printed multiplied by 100, divided by 100), `per_mille`
  (divided by 1,000): all three compare with `fraction`;
- `raw`: units with a name ("minute", "tokens", "x" for a speed-up), compared only with values in
  the unit of the same name.

`scale_read` reads the scale from the unit's words: a scale word at the end ("MCC x100",
"MCC (x100)", "accuracy (%)", "‰", "accuracy (fraction)"), else `fraction` when the unit names
the metric itself ("MCC" for MCC), else `raw`. A word that looks like a scale but is none of
SCALE_SPELLINGS ("x10", "(scaled)") is refused with the accepted spellings listed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db.models import Count, TextChoices

if TYPE_CHECKING:
    from django.db.models import QuerySet


def unit_problem(*, unit: str | None, metric_unit: str | None, protocol: str | None = None) -> str:
    """Why a result in `unit` cannot be a result of a protocol measured in `metric_unit`, or ""
    when it can (or when the protocol's unit is not known: None). `protocol` names the protocol in
    the message (its stable id, as the import does); without it the message speaks of the
    evaluation's protocol (as a form does)."""
    if metric_unit is None or unit == metric_unit:
        return ""
    whose = "the evaluation's protocol" if protocol is None else f"protocol {protocol!r}"
    return f"must be {metric_unit!r}, the metric unit of {whose}"


def count_off_unit(results: QuerySet[Any], *, metric_unit: str) -> int:
    """How many of `results` (Result rows; the rule sits below the models and imports none) break the unit rule against `metric_unit`: one query, grouped by unit,
    each unit judged by `unit_problem` (for a protocol whose unit changes, or an evaluation moved
    to another protocol)."""
    per_unit = results.order_by().values_list("unit").annotate(count=Count("pk"))
    return sum(count for unit, count in per_unit if unit_problem(unit=unit, metric_unit=metric_unit))


class Scale(TextChoices):
    FRACTION = "fraction", "fraction (the metric's plain scale)"
    PERCENT = "percent", "percent (divided by 100)"
    X100 = "x100", "x 100 (divided by 100)"
    PER_MILLE = "per_mille", "per mille (divided by 1,000)"
    RAW = "raw", "raw units (compared only in the same unit)"


#: What a value on each scale is divided by to be on the metric's plain scale.
SCALE_FACTORS: dict[str, Decimal] = {
    Scale.FRACTION: Decimal(1),
    Scale.PERCENT: Decimal(100),
    Scale.X100: Decimal(100),
    Scale.PER_MILLE: Decimal(1000),
    Scale.RAW: Decimal(1),
}

#: The scale words a unit may end with, folded (lower case, no spaces, "×" and "*" read as "x").
SCALE_SPELLINGS: dict[str, str] = {
    "%": Scale.PERCENT,
    "percent": Scale.PERCENT,
    "percentage": Scale.PERCENT,
    "percentpoints": Scale.PERCENT,
    "pct": Scale.PERCENT,
    "x100": Scale.X100,
    "x10^2": Scale.X100,
    "x1e2": Scale.X100,
    "‰": Scale.PER_MILLE,
    "permille": Scale.PER_MILLE,
    "x1000": Scale.PER_MILLE,
    "x10^3": Scale.PER_MILLE,
    "fraction": Scale.FRACTION,
    "proportion": Scale.FRACTION,
    "0-1": Scale.FRACTION,
}
ACCEPTED_SPELLINGS = '"%", "percent", "pct", "x100", "x 100", "×100", "(x100)", "‰", "per mille", "x1000", "fraction"'

# A unit's last word when it is a scale word, or looks like one: in parentheses or brackets, or a
# bare symbol, multiplier or scale name at the end.
_SCALE_AT_END = re.compile(
    r"^(?P<name>.*?)[\s,;:-]*(?:\((?P<paren>[^()]*)\)|\[(?P<bracket>[^\[\]]*)\]|"
    r"(?P<bare>%|‰|[x×*]\s*[\d][\d.,^e]*|percent(?:age)?|per\s*cent|pct|per\s*mille|permille|fraction|proportion))$",
    re.IGNORECASE,
)
# What makes a parenthesised word a scale word rather than part of the name ("accuracy (top-1)").
_SCALE_LIKE = re.compile(
    r"%|‰|^[x×*]\s*\d|\d\s*[x×*]|^1e|10\^|percent|per\s*cent|pct|mille|fraction|proportion|scale", re.I
)


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).lower().replace("×", "x").replace("*", "x")
    return re.sub(r"\s+", "", folded)


def _name_key(text: str) -> str:
    return "".join(char for char in unicodedata.normalize("NFKD", text).casefold() if char.isalnum())


@dataclass(frozen=True, slots=True)
class ReadScale:
    """A unit's scale and the name of what it counts, or why its scale word is refused."""

    scale: str
    name: str  # the unit's words without the scale word ("MCC" of "MCC x 100")
    problem: str = ""
    said: bool = False  # the unit carries a scale word (a unit without one may be given any scale)


def scale_read(*, unit: str, metric_names: tuple[str, ...] = ()) -> ReadScale:
    """The scale a unit's words state (`metric_names`: the metric's name and short name, which a
    unit on the plain scale may simply repeat)."""
    text = " ".join((unit or "").split())
    match = _SCALE_AT_END.match(text)
    word = ""
    name = text
    if match:
        word = match.group("paren") if match.group("paren") is not None else match.group("bracket")
        if word is None:
            word = match.group("bare")
        elif not _SCALE_LIKE.search(word):
            word = ""  # a parenthesised qualifier, part of the name
        if word:
            name = match.group("name").strip()
    if word:
        scale = SCALE_SPELLINGS.get(_fold(word))
        if scale is None:
            return ReadScale(
                Scale.RAW,
                text,
                f"unknown scale word {word.strip()!r} in unit {text!r}: write the scale as one of {ACCEPTED_SPELLINGS}",
                said=True,
            )
        return ReadScale(scale, name, said=True)
    if _name_key(text) and _name_key(text) in {_name_key(n) for n in metric_names if n}:
        return ReadScale(Scale.FRACTION, text)
    return ReadScale(Scale.RAW, text)


def scale_problem(*, unit: str, scale: str, metric_names: tuple[str, ...] = ()) -> str:
    """Why `scale` cannot be the scale of a metric printed in `unit` ("" when it can): the unit's
    scale word is unknown, or says another scale (a unit without a scale word may have any)."""
    read = scale_read(unit=unit, metric_names=metric_names)
    if read.problem:
        return read.problem
    if scale not in SCALE_FACTORS:
        return f"unknown scale {scale!r}: one of {', '.join(SCALE_FACTORS)}"
    if read.scale != scale and read.said:
        return f"the unit {unit!r} says the scale is {str(read.scale)!r}, not {str(scale)!r}"
    return ""


def scale_key(*, metric: str, scale: str, unit: str, metric_names: tuple[str, ...] = ()) -> tuple[str, str]:
    """What values must share to be compared: the metric's short name, and the plain scale (every
    scale but raw) or, for raw units, the unit's name."""
    if scale != Scale.RAW:
        return (metric, "")
    return (metric, _name_key(scale_read(unit=unit, metric_names=metric_names).name) or _name_key(unit))
