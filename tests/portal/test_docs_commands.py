"""Every command the README and the docs show runs as written on a fresh clone: a `manage.py` command
exists and starts through `.venv/bin/python` (Django is installed nowhere else) or inside a compose
container; every script of `bin/` and `bench/` they name (and every dated result file) is there."""

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


#: `bin/serve`, `bench/load.py`, `bench/results/2026-12-02-charts.md`, `.ci/run`: a path of the checkout
#: (not `.venv/bin/python`, whose `bin/` follows a folder name).
SHOWN_PATH = re.compile(r"(?<![\w./-])((?:bin|bench|\.ci)/[\w./-]*\w)")
#: `python -m bench.slow_clients`: a bench script run as a module.
SHOWN_MODULE = re.compile(r"-m (bench\.\w+)")


def shown_paths() -> set[tuple[str, str]]:
    found = set()
    for doc in DOCS:
        text = doc.read_text()
        found |= {(doc.name, match.group(1)) for match in SHOWN_PATH.finditer(text)}
        found |= {(doc.name, match.group(1).replace(".", "/") + ".py") for match in SHOWN_MODULE.finditer(text)}
    return found


def test_the_docs_show_scripts_of_bin_and_bench():
    paths = {path for _doc, path in shown_paths()}
    assert {"bin/serve", "bin/test", "bin/lint", "bench/load.py"} <= paths


def test_every_shown_script_and_result_file_exists():
    missing = sorted((doc, path) for doc, path in shown_paths() if not (ROOT / path).exists())
    assert missing == []
