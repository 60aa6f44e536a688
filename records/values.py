"""Exact values as papers print them: parsing, the printed-value check, and display.

A value is a `Decimal` kept with the precision it was printed with: 0.410 is not 0.41, "300B" is
3.00E+11 (three significant digits), "1T" is 1E+12 (one). It is stored as the text of that Decimal
(`str(Decimal)`), which both backends hold exactly, whatever its magnitude.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# Plain ASCII decimal notation only: no NaN, no infinity, no other scripts' digits, no words.
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
MAX_EXPONENT = 300  # floats (the database's cast for bounds checks) hold up to about 1e308
MAX_TEXT = 60


class ValueInvalid(ValueError):
    """Text that is not an exact decimal; the message says why in words a curator can act on."""


def parse_exact(raw: object) -> Decimal:
    """An exact decimal from text (or a Decimal or int), keeping every printed digit."""
    if isinstance(raw, bool):
        raise ValueInvalid("must be a number written with digits, e.g. 0.410 or 3E-12")
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
    ("0.410", "66.47", "3.00E+11", "3E-12")."""
    return "" if value is None else str(value)


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
    (0.410, 66.47, 20, 0.000031), otherwise engineering notation ("300 × 10⁹" for 300B, which keeps
    its three digits; "1 × 10¹²" for 1T; "3 × 10⁻¹²")."""
    if value is None:
        return ""
    if value.as_tuple().exponent <= 0 and value.adjusted() >= -5:
        text = format(value, "f")
        return "0" if text == "-0" else text
    mantissa, _, power = value.to_eng_string().partition("E")
    return f"{mantissa} × 10{str(int(power)).translate(_TO_SUPERSCRIPT)}" if power else mantissa


# -- the printed-value check -------------------------------------------------------------------

_SCALE_WORDS = {
    "k": 3, "K": 3, "thousand": 3, "kb": 3,
    "M": 6, "million": 6, "Mb": 6,
    "B": 9, "G": 9, "billion": 9, "Gb": 9, "bn": 9,
    "T": 12, "trillion": 12, "Tb": 12,
}
_PRINTED_NUMBER = re.compile(
    r"(?P<sign>[-+−]?)(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)"
    r"(?:\s*(?:[eE](?P<e>[-+−]?\d+)|[x×·]\s*10\s*(?:\^\s*)?(?P<pow>[-+−]?\d+|[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)))?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|kb|Mb|Gb|Tb|[kKMBGT])(?![A-Za-z]))?",
    re.ASCII,
)
_PLUS_MINUS = re.compile(r"±\s*(?P<spread>\d+(?:\.\d*)?|\.\d+)")


def printed_numbers(printed: str) -> list[Decimal]:
    """The numbers a printed value shows, each scaled by its exponent or scale word ("300B" ->
    3.00E+11, "3 × 10^-12" -> 3E-12, "1,024" -> 1024), in the order printed."""
    numbers = []
    for match in _PRINTED_NUMBER.finditer(printed):
        sign = "-" if match["sign"] in ("-", "−") else ""
        number = Decimal(sign + match["number"].replace(",", ""))
        power = match["e"] or match["pow"]
        if power:
            number = number.scaleb(int(power.translate(_SUPERSCRIPT).replace("−", "-")))
        if match["scale"]:
            number = number.scaleb(_SCALE_WORDS[match["scale"]])
        numbers.append(number)
    return numbers


def printed_spread(printed: str) -> Decimal | None:
    """The number after "±" in a printed value, if any ("74.32±0.89" -> 0.89)."""
    match = _PLUS_MINUS.search(printed)
    return Decimal(match["spread"]) if match else None


def printed_value_problem(*, value: Decimal, printed: str) -> str:
    """Why `printed` does not show `value` with the same digits, or "" when it does."""
    numbers = printed_numbers(printed)
    if not numbers:
        return f"{printed[:60]!r} shows no number; record the value as the source prints it"
    if any(same_exact(number, value) for number in numbers):
        return ""
    equal = [number for number in numbers if number == value]
    if equal:
        return (
            f"the value {exact_text(value)} does not keep the precision printed in {printed[:60]!r} "
            f"({exact_text(equal[0])}): write it with the same digits"
        )
    shown = ", ".join(exact_text(number) for number in numbers[:4])
    return f"the value {exact_text(value)} is not the number printed in {printed[:60]!r} (it shows {shown})"
