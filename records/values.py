"""Exact values as papers print them: parsing, the printed-value check, and display.

A value is a `Decimal` kept with the precision it was printed with: 0.410 is not 0.41, "300B" is
3.00E+11 (three significant digits), "1T" is 1E+12 (one). It is stored as the text of that Decimal
(`str(Decimal)`), which both backends hold exactly, whatever its magnitude.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from common.errors import DomainError

# Plain ASCII decimal notation only: no NaN, no infinity, no other scripts' digits, no words.
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
MAX_EXPONENT = 300  # floats (the database's cast for bounds checks) hold up to about 1e308
MAX_TEXT = 60


class ValueInvalid(DomainError, ValueError):
    """Text that is not an exact decimal; the message says why in words a curator can act on."""


def parse_exact(raw: object) -> Decimal:
    """An exact decimal from text (or a Decimal or int), keeping every printed digit."""
    if isinstance(raw, bool):
        raise ValueInvalid("must be a number written with digits, e.g. 0.410 or 3E-12")
    if isinstance(getattr(raw, "json_text", None), str):
        raw = raw.json_text  # a JSON number as the request wrote it (common.parsers): its digits, not a float's
    if isinstance(raw, Decimal):
        value = raw
    elif isinstance(raw, int):
        value = Decimal(raw)
    elif isinstance(raw, float):
        value = Decimal(repr(raw))  # the shortest text that reads back as this float
    elif isinstance(raw, str):
        text = raw.strip()
        if len(text) > MAX_TEXT or not NUMBER.fullmatch(text):
            raise ValueInvalid(
                f"{raw[:40]!r} is not a number: write digits with an optional point and exponent, e.g. 0.410, 66.47, 300E9 or 3E-12"
            )
        try:
            value = Decimal(text)
        except InvalidOperation:  # pragma: no cover - the pattern admits only what Decimal reads
            raise ValueInvalid(f"{raw[:40]!r} is not a number") from None
    else:
        raise ValueInvalid("must be a number written with digits, e.g. 0.410 or 3E-12")
    if not value.is_finite():
        raise ValueInvalid("must be a finite number (not NaN or infinity)")
    if abs(value.adjusted()) > MAX_EXPONENT:
        raise ValueInvalid(f"must lie between 1E-{MAX_EXPONENT} and 1E+{MAX_EXPONENT} in magnitude")
    if len(value.as_tuple().digits) > 40:
        raise ValueInvalid("has more than 40 significant digits")
    return value


def exact_text(value: Decimal | None) -> str:
    """The stored, exported and API form: Python's decimal text, which reads back to the same digits
    ("0.410", "66.47", "3.00E+11", "3E-12"); no negative zero."""
    if value is None:
        return ""
    return str(abs(value)) if value.is_zero() else str(value)


def same_exact(a: object, b: object) -> bool:
    """Equal including printed precision (0.410 and 0.41 differ); other values compare as usual."""
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a.as_tuple() == b.as_tuple()
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return False if a is None or b is None else str(a) == str(b)
    return a == b


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_TO_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def display(value: Decimal | None) -> str:
    """For readers: every printed digit and no more. Positional notation where the digits allow it
    (0.410, 66.47, 20, 0.000031); otherwise powers of ten, in engineering notation when that adds no
    digit ("300 × 10⁹" for 300B, three digits as printed) and scientific when it would ("1 × 10⁴",
    "3 × 10⁻⁷", never "10 × 10³" or "300 × 10⁻⁹")."""
    if value is None:
        return ""
    sign, digits, exponent = value.as_tuple()
    if exponent <= 0 and value.adjusted() >= -5:
        text = format(value, "f")
        return text.removeprefix("-") if value.is_zero() else text
    mantissa, _, power = value.to_eng_string().partition("E")
    if len(mantissa.lstrip("-").replace(".", "").lstrip("0")) != len(digits) or not power:
        mantissa = format(Decimal((sign, digits, 1 - len(digits))), "f")
        power = str(value.adjusted())
    return f"{mantissa} × 10{str(int(power)).translate(_TO_SUPERSCRIPT)}"


# -- the printed-value check -------------------------------------------------------------------

_SCALE_WORDS = {
    "k": 3,
    "K": 3,
    "thousand": 3,
    "kb": 3,
    "M": 6,
    "million": 6,
    "Mb": 6,
    "B": 9,
    "G": 9,
    "billion": 9,
    "Gb": 9,
    "bn": 9,
    "T": 12,
    "trillion": 12,
    "Tb": 12,
}
_PRINTED_NUMBER = re.compile(
    r"(?P<sign>[-+−]?)(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)"
    r"(?:\s*(?:[eE](?P<e>[-+−]?\d{1,6})|[x×·]\s*10\s*(?:\^\s*)?(?P<pow>[-+−]?\d{1,6}|[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,6})))?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|kb|Mb|Gb|Tb|[kKMBGT])(?![A-Za-z]))?",
    re.ASCII,
)
# Powers beyond this are not numbers a source prints; they are skipped rather than computed.
_MAX_POWER = 1000


@dataclass(frozen=True)
class PrintedNumber:
    value: Decimal
    text: str  # as printed
    # After "±" (the spread), inside brackets (bounds, a note) or after "n =" (a count): not the value.
    beside: bool


def _printed(printed: str) -> list[PrintedNumber]:
    found = []
    for match in _PRINTED_NUMBER.finditer(printed):
        sign, digits, exponent = Decimal(match["number"].replace(",", "")).as_tuple()
        power = match["e"] or match["pow"]
        shift = int(power.translate(_SUPERSCRIPT).replace("−", "-")) if power else 0
        shift += _SCALE_WORDS[match["scale"]] if match["scale"] else 0
        if abs(exponent + shift) > _MAX_POWER:
            continue
        value = Decimal((1 if match["sign"] in ("-", "−") else 0, digits, exponent + shift))
        before = printed[: match.start()]
        beside = (
            before.rstrip().endswith(("±", "+/-"))
            or before.count("(") > before.count(")")
            or before.count("[") > before.count("]")
            or re.search(r"\bn\s*=\s*$", before) is not None
        )
        found.append(PrintedNumber(value=value, text=match[0].strip(), beside=beside))
    return found


def printed_numbers(printed: str) -> list[Decimal]:
    """The numbers a printed value shows, each scaled by its exponent or scale word ("300B" ->
    3.00E+11, "3 × 10^-12" -> 3E-12, "1,024" -> 1024), exactly, in the order printed."""
    return [number.value for number in _printed(printed)]


def printed_spread(printed: str) -> Decimal | None:
    """The number after "±" in a printed value, scaled like the value ("74.32±0.89" -> 0.89,
    "300B ± 20B" -> 2.0E+10), or None."""
    at = printed.find("±")
    if at < 0:
        return None
    numbers = _printed(printed[at:])
    return numbers[0].value if numbers else None


def printed_value_problem(*, value: Decimal, printed: str) -> str:
    """Why `printed` does not show `value` with the same digits as its first number (not a ±
    spread, a bracketed note or a count), or "" when it does."""
    numbers = [number.value for number in _printed(printed) if not number.beside]
    if not numbers:
        return f"{printed[:60]!r} shows no number; record the value as the source prints it"
    shown = numbers[0]
    if same_exact(shown, value):
        return ""
    if shown == value:
        return (
            f"the value {exact_text(value)} does not keep the precision printed in {printed[:60]!r} "
            f"({exact_text(shown)}): write it with the same digits"
        )
    return f"the value {exact_text(value)} is not the number printed in {printed[:60]!r} (it shows {exact_text(shown)} first)"


# -- the value-and-quote check ------------------------------------------------------------------


def quote_value_problem(*, value: Decimal, quote: str) -> str:
    """Why `quote` contradicts `value` (no number it prints, spreads, bracketed and counted ones
    included, is `value` with the same digits once scaled), or "" when it prints it, or when there
    is no quote to read."""
    if not quote.strip():
        return ""
    numbers = _printed(quote)
    if any(same_exact(number.value, value) for number in numbers):
        return ""
    printed = ", ".join(dict.fromkeys(number.text for number in numbers[:12]))
    return (
        f"its quote does not print {exact_text(value)} ({f'it prints {printed}' if printed else 'it prints no number'})"
    )
