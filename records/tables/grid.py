"""A pasted table split into a grid of cells: tab- or comma-separated (Python's `csv`), Markdown
pipes, LaTeX `tabular` source, or whitespace-aligned text as a PDF viewer copies it.

The grid keeps each cell's text as pasted (bold and underline marks included, `records.tables.cells`
reads them) and each row's line number, so an error can name the cell it is about. The format is
told or detected: Markdown where a `|---|` separator line is present, LaTeX where `&` and `\\\\`
separate cells and rows, tabs where most lines hold one, commas where `csv` reads every line to the
same width, whitespace otherwise.

Whitespace-aligned text is split at runs of two or more spaces. A PDF viewer often copies one
space between cells; a body row that does not split into the header's width is then read by its
tokens: the values are its last cells (a number with its "± spread" or "(spread)" is one cell),
the row label is what comes before them.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from records.tables.cells import looks_like_values, unmarked

FORMATS = ("auto", "tsv", "csv", "markdown", "latex", "whitespace")

_MARKDOWN_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_WIDE_GAP = re.compile(r"\s{2,}|\t")
_LATEX_RULES = re.compile(
    r"\\(?:hline|toprule|midrule|bottomrule|cmidrule(?:\[[^]]*\])?(?:\([^)]*\))?\{[^}]*\}|cline\{[^}]*\})"
)
_LATEX_ENVIRONMENT = re.compile(r"\\(?:begin|end)\{(?:table\*?|center|small|footnotesize)\}")
_SPREAD_TOKEN = re.compile(r"^(?:±|\+/-|\+-)$")
_NUMBER_START = re.compile(r"^\**[-−+]?(?:\d|\.\d)")


@dataclass
class Row:
    """One line of the table: its cells as pasted and its line number in the paste (1-based)."""

    cells: list[str]
    line: int
    tokens_read: bool = False  # split by tokens (a PDF copy with single spaces), not by its gaps


@dataclass
class Grid:
    format: str
    header: list[Row]
    body: list[Row]
    problems: list[str] = field(default_factory=list)

    @property
    def width(self) -> int:
        return max((len(row.cells) for row in self.header), default=0)

    def column_labels(self) -> list[str]:
        """Each column's label: its header cells top to bottom, joined by a space."""
        labels = []
        for index in range(self.width):
            parts = [unmarked(row.cells[index]) for row in self.header if index < len(row.cells)]
            labels.append(" ".join(part for part in parts if part))
        return labels


def _detected(lines: list[str]) -> str:
    if any(_MARKDOWN_SEPARATOR.match(line) and "|" in line for line in lines):
        return "markdown"
    if "&" in "".join(lines) and ("\\\\" in "".join(lines) or "\\begin{tabular" in "".join(lines)):
        return "latex"
    if sum("\t" in line for line in lines) * 2 >= len(lines):
        return "tsv"
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    widths = {len(row) for row in rows if row}
    if len(widths) == 1 and widths.pop() > 1:
        return "csv"
    return "whitespace"


def grid_parse(*, text: str, format: str = "auto", header_rows: int = 1) -> Grid:
    """The grid of a pasted table. Blank lines are dropped; a browser's CRLF reads as LF."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    numbered = [(number, line.rstrip()) for number, line in enumerate(text.split("\n"), start=1) if line.strip()]
    lines = [line for _, line in numbered]
    chosen = _detected(lines) if format == "auto" else format
    if chosen == "latex":
        rows = _latex_rows(text)
    elif chosen == "markdown":
        rows = [Row(_markdown_cells(line), number) for number, line in numbered if not _MARKDOWN_SEPARATOR.match(line)]
    elif chosen in ("tsv", "csv"):
        delimiter = "\t" if chosen == "tsv" else ","
        rows = [
            Row([cell.strip() for cell in next(csv.reader([line], delimiter=delimiter))], n) for n, line in numbered
        ]
    else:
        rows = [Row([cell.strip() for cell in _WIDE_GAP.split(line.strip())], number) for number, line in numbered]
    header, body = rows[:header_rows], rows[header_rows:]
    grid = Grid(format=chosen, header=header, body=body)
    if not body:
        grid.problems.append(f"the paste has no row under its {header_rows} header row(s)")
        return grid
    if chosen == "whitespace":
        widest = max(grid.width, *(len(row.cells) for row in body))
        for row in body:
            if len(row.cells) != widest:
                _read_by_tokens(row, width=widest)
    widths = [len(row.cells) for row in body if looks_like_values(row.cells[1:])]
    if header and widths.count(grid.width + 1) > widths.count(grid.width):
        for row in header:  # a header without a corner cell above the row labels
            row.cells.insert(0, "")
    return grid


def _markdown_cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


def _read_by_tokens(row: Row, *, width: int) -> None:
    """Re-split a whitespace row by its tokens: values from the right, the label is the rest."""
    line = " ".join(row.cells)
    tokens = line.split()
    cells: list[str] = []
    index = len(tokens) - 1
    while index >= 0 and len(cells) < width - 1:
        token = tokens[index]
        if token.startswith("(") and index > 0 and _NUMBER_START.match(unmarked(tokens[index - 1])):
            token, index = f"{tokens[index - 1]} {token}", index - 1  # "0.549 (0.056)"
        elif index >= 2 and _SPREAD_TOKEN.match(tokens[index - 1]):
            token, index = " ".join(tokens[index - 2 : index + 1]), index - 2  # "0.549 ± 0.056"
        elif index >= 1 and tokens[index].startswith("±") and _NUMBER_START.match(unmarked(tokens[index - 1])):
            token, index = f"{tokens[index - 1]} {token}", index - 1  # "0.549 ±0.056"
        if not (_NUMBER_START.match(unmarked(token)) or token in {"-", "–", "—", "N/A", "n/a", "NA"}):
            break
        cells.insert(0, token)
        index -= 1
    label = " ".join(tokens[: index + 1])
    if label or len(cells) == width - 1:
        row.cells = [label, *cells]
        row.tokens_read = True


# -- LaTeX ----------------------------------------------------------------------------------------


def _latex_rows(text: str) -> list[Row]:
    """The rows of a LaTeX tabular: cells split at `&` and rows at `\\\\`, both outside braces;
    `\\multicolumn{n}{..}{x}` spans n cells; rules, captions and labels are dropped."""
    offset = 0
    start = text.find("\\begin{tabular")
    if start >= 0:
        opening = re.match(r"\\begin\{tabular\*?\}(\{[^}]*\})?(\[[^]]*\])?\{(?:[^{}]|\{[^{}]*\})*\}", text[start:])
        offset = start + (opening.end() if opening else 0)
    end = text.rfind("\\end{tabular")
    body = text[offset : end if end > offset else len(text)]
    rows: list[Row] = []
    for raw in _split_top(body, "\\\\"):
        blanked = _LATEX_RULES.sub(lambda rule: " " * len(rule[0]), raw)
        lead = len(blanked) - len(blanked.lstrip())
        number = text.count("\n", 0, offset + lead) + 1
        offset += len(raw) + 2
        cleaned = _LATEX_RULES.sub("", raw)
        cleaned = re.sub(r"\\(?:caption|label)\{(?:[^{}]|\{[^{}]*\})*\}", "", cleaned)
        cleaned = _LATEX_ENVIRONMENT.sub("", cleaned).strip()
        if not cleaned or cleaned.startswith("%"):
            continue
        cells: list[str] = []
        for cell in _split_top(cleaned, "&"):
            span, content = _multicolumn(cell.strip())
            cells.extend([_latex_text(content), *([""] * (span - 1))])
        rows.append(Row(cells, number))
    return rows


def _split_top(text: str, separator: str) -> list[str]:
    """`text` split at `separator` where no brace is open (a nested tabular's `\\\\` stays whole)."""
    parts, depth, current, index = [], 0, [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and text.startswith(separator, index) and depth == 0:
            parts.append("".join(current))
            current, index = [], index + len(separator)
            continue
        if char == "\\" and index + 1 < len(text) and separator != "\\\\":
            current.append(text[index : index + 2])  # "\&" is a printed ampersand
            index += 2
            continue
        if char == "\\" and index + 1 < len(text) and text[index + 1] in "{}":
            current.append(text[index : index + 2])
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == separator and depth == 0 and separator == "&":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


def _multicolumn(cell: str) -> tuple[int, str]:
    match = re.match(r"^\\multicolumn\{(\d+)\}\{[^}]*\}\{(.*)\}$", cell, re.S)
    return (int(match[1]), match[2]) if match else (1, cell)


def _latex_text(cell: str) -> str:
    """A LaTeX cell as it prints, with bold as `**x**` and underline as `<u>x</u>` (the marks
    `records.tables.cells` reads)."""
    text = re.sub(r"\\begin\{tabular\}(\[[^]]*\])?\{(?:[^{}]|\{[^{}]*\})*\}", "", cell)
    text = text.replace("\\end{tabular}", "").replace("\\\\", " ")
    for _ in range(4):  # nested marks, innermost first
        text = re.sub(r"\\textbf\{([^{}]*)\}", r"**\1**", text)
        text = re.sub(r"\{\\bf(?:series)?\s+([^{}]*)\}", r"**\1**", text)
        text = re.sub(r"\\(?:underline|uline)\{([^{}]*)\}", r"<u>\1</u>", text)
        text = re.sub(r"\{\\ul\s+([^{}]*)\}", r"<u>\1</u>", text)
        text = re.sub(r"\\(?:textit|emph|textrm|text|mathrm|mathbf)\{([^{}]*)\}", r"\1", text)
        text = re.sub(r"\{\\(?:it|em|rm)\s+([^{}]*)\}", r"\1", text)
    text = text.replace("$\\pm$", "±").replace("\\pm", "±").replace("$", "")
    text = re.sub(r"\\([_%&#])", r"\1", text)
    text = re.sub(r"\\[a-zA-Z]+\*?", "", text).replace("{", "").replace("}", "")
    return " ".join(text.split())
