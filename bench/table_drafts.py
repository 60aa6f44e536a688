"""The shipped tables curated through the table draft (data/tables/NN-*), measured as a curator
meets them: for each, in order and against the catalogue holding the examples before it (a
throw-away SQLite database), the values drafted, the labels the catalogue matched by name, the
choices the request had to make (a label nothing matched, or matched otherwise than the paper
means, and who-measured overrides), the cells typed by hand (a cell of the paste its stored copy
does not print as it stands), and the machine's time from paste to imported: reading and drafting
with the dry run (median of 3), then the import itself.

Run: .venv/bin/python bench/table_drafts.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-tables-")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from records.examples import example_paths, examples_load  # noqa: E402
from records.imports import records_import  # noqa: E402
from records.tables import request_read, table_draft  # noqa: E402
from records.tables.cells import unmarked  # noqa: E402
from records.tables.grid import grid_parse  # noqa: E402

TABLES = Path(__file__).resolve().parents[1] / "data" / "tables"


def choices_needed(draft) -> tuple[int, int, int]:
    """(labels, matched by name, choices the request made that the match did not already give)."""
    labels = [item for item in [*draft.drafted.columns, *draft.drafted.rows] if item is not None]
    matched = [item for item in labels if item.match.chosen is not None]
    needed = 0
    for item in labels:
        choice = (draft.request.rows if item in draft.drafted.rows else draft.request.columns).get(item.label) or {}
        auto = item.match.chosen.stable_id if item.match.chosen is not None else None
        if item.manual and item.chosen != auto:
            needed += 1
        needed += sum(1 for key in ("measured_by", "original_source", "original_citation") if key in choice)
    return len(labels), len(matched), needed


def hand_fixed(folder: Path) -> int:
    """Cells of paste.txt that table.txt does not print as they stand (0 without a paste.txt)."""
    paste = folder / "paste.txt"
    if not paste.exists():
        return 0
    stored = " ".join((folder / "table.txt").read_text(encoding="utf-8").split())
    cells = [cell for row in grid_parse(text=paste.read_text(encoding="utf-8")).body for cell in row.cells[1:]]
    return sum(1 for cell in cells if " ".join(cell.split()) not in stored and unmarked(cell) not in stored)


def main() -> None:
    call_command("migrate", verbosity=0)
    call_command("import_seed", verbosity=0)
    print(
        f"{'table':44} {'values':>6} {'format':>10} {'labels':>6} {'matched':>7} {'choices':>7} {'typed':>5} {'draft s':>7} {'import s':>8}"
    )
    total_values = 0
    for path in example_paths():
        folder = TABLES / path.stem
        if not folder.is_dir():
            examples_load(paths=[path])
            continue
        paste = folder / "paste.txt" if (folder / "paste.txt").exists() else folder / "table.txt"
        data = json.loads((folder / "request.json").read_text())
        times = []
        for _ in range(3):
            started = time.perf_counter()
            draft = table_draft(request=request_read(data, text=paste.read_text()), actor=None)
            times.append(time.perf_counter() - started)
        assert not draft.problems, [p.message for p in draft.problems]
        started = time.perf_counter()
        records_import(document=draft.document, actor=None)
        imported = time.perf_counter() - started
        examples_load(paths=[path])  # its review, as the demo records it
        labels, matched, needed = choices_needed(draft)
        total_values += draft.values
        print(
            f"{path.stem[:44]:44} {draft.values:>6} {draft.grid.format:>10} {labels:>6} {matched:>7} {needed:>7} "
            f"{hand_fixed(folder):>5} {statistics.median(times):>7.2f} {imported:>8.2f}"
        )
    print(f"{total_values} values in all")


if __name__ == "__main__":
    main()
