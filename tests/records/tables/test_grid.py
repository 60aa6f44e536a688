"""A pasted table is read into the same grid whichever way it was copied."""

from __future__ import annotations

import pytest

from records.tables.cells import cell_read
from records.tables.grid import grid_parse
from tests.records.tables.catalogue import pasted

PASTES = ["caduceus-table-1.pdf.txt", "caduceus-table-1.tsv", "caduceus-table-1.md"]


@pytest.mark.parametrize("name", PASTES)
def test_each_copy_of_the_table_reads_to_the_same_grid(name):
    grid = grid_parse(text=pasted(name))
    reference = grid_parse(text=pasted("caduceus-table-1.tsv"))
    assert grid.format == {"pdf.txt": "whitespace", "tsv": "tsv", "md": "markdown"}[name.split(".", 1)[1]]
    assert grid.column_labels() == reference.column_labels()
    assert [row.cells for row in grid.body] == [row.cells for row in reference.body]
    assert len(grid.body) == 8 and grid.width == 7


def test_a_browser_paste_with_crlf_reads_as_the_same_grid():
    text = pasted("caduceus-table-1.tsv")
    assert [r.cells for r in grid_parse(text=text.replace("\n", "\r\n")).body] == [
        r.cells for r in grid_parse(text=text).body
    ]


def test_a_pdf_copy_with_single_spaces_is_read_by_its_tokens():
    text = "Model  Mouse Enhancers  Human vs Worm\nHyenaDNA 1.6M 0.780 ±0.025 0.964 ± 0.002\nCNN 0.715 (0.087) 0.942\n"
    grid = grid_parse(text=text)
    assert [row.cells for row in grid.body] == [
        ["HyenaDNA 1.6M", "0.780 ±0.025", "0.964 ± 0.002"],
        ["CNN", "0.715 (0.087)", "0.942"],
    ]
    assert all(row.tokens_read for row in grid.body)


def test_latex_source_reads_with_its_nested_headers_bold_and_escapes():
    text = r"""\begin{tabular}{l|cc}
\hline
 & \textbf{\begin{tabular}[c]{@{}c@{}}CNN\\ (char)\end{tabular}} & DNABERT2 \\ \hline
prom\_core\_all & 0.617 & {\ul \textbf{0.708}} \\
\multicolumn{1}{l|}{} & \multicolumn{2}{c}{\textit{baseline}} \\ \hline
\end{tabular}"""
    grid = grid_parse(text=text)
    assert grid.format == "latex"
    assert grid.column_labels() == ["", "CNN (char)", "DNABERT2"]
    assert grid.body[0].cells == ["prom_core_all", "0.617", "<u>**0.708**</u>"]
    assert grid.body[0].line == 4
    assert grid.body[1].cells == ["", "baseline", ""]


@pytest.mark.parametrize(
    ("text", "value", "spread", "bold"),
    [
        ("0.549 ± 0.056", "0.549", "0.056", False),
        ("0.549±0.056", "0.549", "0.056", False),
        ("0.549 (0.056)", "0.549", "0.056", False),
        ("54.9±5.6", "54.9", "5.6", False),
        ("**0.410**", "0.410", "", True),
        ("<u>**0.708**</u>", "0.708", "", True),
        ("74.3 +/- 0.9", "74.3", "0.9", False),
        ("61.2*", "61.2", "", False),
    ],
)
def test_a_cell_keeps_its_printed_digits_and_its_spread(text, value, spread, bold):
    cell = cell_read(text)
    assert (cell.value, cell.spread, cell.bold, cell.problem) == (value, spread, bold, "")


@pytest.mark.parametrize("text", ["-", "–", "—", "N/A", ""])
def test_a_dash_is_a_missing_cell(text):
    assert cell_read(text).missing


def test_a_cell_with_two_numbers_is_refused_with_why():
    cell = cell_read("0.549 0.61")
    assert not cell.value and "prints 2 numbers" in cell.problem
