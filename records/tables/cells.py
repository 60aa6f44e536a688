"""One cell of a pasted table read as a printed value: its number with the digits printed, its
spread ("0.549 ± 0.056", "0.549±0.056", "0.549 (0.056)", "54.9 +/- 5.6"), the source's marks
(bold `**x**` or `__x__`, underline `<u>x</u>`, a trailing star or dagger as a footnote mark) and
missing cells ("-", "–", "—", "N/A", empty).

`printed` is the cell as the source prints it, without the formatting marks a paste adds for bold
and underline; it is what the result's `printed_value` and the quote hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MISSING = {"", "-", "–", "—", "−", "n/a", "na", "nan", "n.a."}
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__|<b>(.+?)</b>|<strong>(.+?)</strong>", re.S)
_UNDERLINE = re.compile(r"<u>(.+?)</u>", re.S)
_NUMBER = r"[-−+]?(?:\d+(?:\.\d+)?|\.\d+)"
_CELL = re.compile(
    rf"^(?P<value>{_NUMBER})\s*(?P<unit>%)?"
    rf"(?:\s*(?:±|\+/-|\+-)\s*(?P<pm>{_NUMBER})\s*%?|\s*\(\s*(?:±\s*)?(?P<paren>{_NUMBER})\s*\))?"
    r"\s*(?P<marks>[*†‡§¶#]+|\^?[a-z]|\^\{?[a-z*†‡]+\}?)?$"
)
_ANY_NUMBER = re.compile(r"\d")


@dataclass(frozen=True)
class Cell:
    printed: str  # the cell as printed, without the paste's bold and underline marks
    value: str = ""  # the number with its printed digits ("0.410"); "" when missing or unreadable
    spread: str = ""  # the ± figure or the bracketed one, as printed
    bold: bool = False
    underlined: bool = False
    marks: str = ""  # footnote marks printed after the number ("*", "†", "a")
    missing: bool = False
    problem: str = ""  # why this is not a value, for a cell meant to hold one


def unmarked(text: str) -> str:
    """The text without the paste's bold and underline marks, its spaces collapsed."""
    text = _UNDERLINE.sub(lambda m: m[1], text)
    text = _BOLD.sub(lambda m: next(group for group in m.groups() if group is not None), text)
    return " ".join(text.split())


def cell_read(text: str) -> Cell:
    """The value a cell prints, or the problem with it."""
    bold = bool(_BOLD.search(text))
    underlined = bool(_UNDERLINE.search(text))
    printed = unmarked(text)
    if printed.casefold() in MISSING:
        return Cell(printed=printed, missing=True, bold=bold, underlined=underlined)
    match = _CELL.match(printed.replace("−", "-"))
    if match is None:
        numbers = re.findall(_NUMBER, printed)
        if len(numbers) > 1:
            problem = f"{printed!r} prints {len(numbers)} numbers: one value per cell, with at most its ± spread"
        elif numbers:
            problem = f"{printed!r} is not a value as this reads them (a number, then ± spread or (spread), then marks)"
        else:
            problem = f"{printed!r} is not a number"
        return Cell(printed=printed, bold=bold, underlined=underlined, problem=problem)
    value = match["value"].lstrip("+")
    return Cell(
        printed=printed,
        value=value,
        spread=match["pm"] or match["paren"] or "",
        bold=bold,
        underlined=underlined,
        marks=(match["marks"] or "").lstrip("^{").rstrip("}"),
    )


def looks_like_values(cells: list[str]) -> bool:
    """Whether a row's cells hold numbers at all (a row of words only is a section heading)."""
    return any(_ANY_NUMBER.search(unmarked(cell)) for cell in cells)
