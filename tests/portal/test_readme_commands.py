"""Every `manage.py` command the README and the docs show runs as written on a fresh clone: through
`.venv/bin/python` (Django is installed nowhere else) or inside a compose container, and it exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import get_commands

pytestmark = [pytest.mark.backend_independent]

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: How a shown command may start Django: the project's environment, or a container that has it.
RUNS_DJANGO = re.compile(r"(\.venv/bin/python|docker compose (?:run|exec)[^`\n]*?python) manage\.py$")


def shown_commands() -> list[tuple[str, str, str]]:
    """(file, how it is started, the command's name) for each `manage.py NAME` the docs show, in inline
    code, a fenced or an indented block: what stands before it back to a backtick or the line's start."""
    found = []
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            for match in re.finditer(r"manage\.py (\w+)", line):
                before = line[: match.start()].rsplit("`", 1)[-1].strip()
                found.append((doc.name, f"{before} manage.py".strip(), match.group(1)))
    return found


def test_the_docs_show_manage_py_commands():
    assert len(shown_commands()) > 10


def test_every_shown_manage_py_command_exists():
    missing = sorted({(doc, name) for doc, _prefix, name in shown_commands() if name not in get_commands()})
    assert missing == []


def test_every_shown_manage_py_command_starts_with_the_projects_python():
    outside = sorted(
        {(doc, f"{prefix} {name}") for doc, prefix, name in shown_commands() if not RUNS_DJANGO.search(prefix)}
    )
    assert outside == []
