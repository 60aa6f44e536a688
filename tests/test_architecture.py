"""The house rules a newcomer can rely on: imports point down the layers (docs/architecture/layout.md), no app
code is loaded by a dotted string, and no module grows past what one reader holds in mind."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("common", "reviews", "records", "corrections", "benchmarks", "releases", "pages", "portal")
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
MAX_LINES = 500


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300)


def _copy_of_the_tree(tmp_path: Path) -> Path:
    for app in APPS:
        shutil.copytree(ROOT / app, tmp_path / app, ignore=shutil.ignore_patterns("__pycache__", "migrations"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_import_contracts_hold() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("reviews/_upward.py", "from records import models\n", "The apps are layers"),
        ("records/_upward.py", "import portal.settings\n", "The apps are layers"),
        ("common/_upward.py", "from reviews.models import ReviewState\n", "The apps are layers"),
        ("benchmarks/_upward.py", "from releases import selectors\n", "The apps are layers"),
        ("records/_upward.py", "import pages\n", "The apps are layers"),
        ("releases/_upward.py", "from pages import parts\n", "The apps are layers"),
        ("corrections/_upward.py", "def later():\n    from pages.views import home\n", "The apps are layers"),
        ("pages/_upward.py", "from portal import urls\n", "The apps are layers"),
        ("corrections/_sideways.py", "from benchmarks import selectors\n", "Corrections never import"),
        ("benchmarks/ia3/_django.py", "import django\n", "The IA3 runner is plain"),
        ("benchmarks/sweeper.py", "from benchmarks import tasks\n", "benchmarks: services -> tasks"),
        ("benchmarks/tasks.py", "from benchmarks import services\n", "benchmarks: services -> tasks"),
        ("releases/tasks.py", "from releases import services\n", "releases: services -> tasks"),
        ("releases/store.py", "from releases import lifecycle\n", "releases: services -> tasks"),
        ("releases/bundle/writer.py", "from releases import catalogue_rows\n", "releases: services -> tasks"),
        ("releases/bundle/table_format.py", "from django.db import models\n", "The bundle writer turns rows"),
    ],
)
def test_a_deliberate_upward_import_breaks_a_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    tree = _copy_of_the_tree(tmp_path)
    with (tree / module).open("a") as file:  # a new module, or one more line of an existing one
        file.write(line)
    result = _lint_imports(tree)
    assert result.returncode != 0
    broken = [row for row in result.stdout.splitlines() if row.endswith("BROKEN")]
    assert any(row.startswith(contract) for row in broken), result.stdout
    assert module.removesuffix(".py").replace("/", ".") in result.stdout


def _python_files() -> list[Path]:
    files = []
    for top in (*APPS, "tests", "bench"):
        files += [path for path in (ROOT / top).rglob("*.py") if "migrations" not in path.parts]
    return sorted(files)


def test_no_module_is_longer_than_500_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in _python_files()
        if (n := len(path.read_text().splitlines())) >= MAX_LINES
    }
    assert long == {}


def test_no_app_code_is_loaded_by_a_dotted_string() -> None:
    loader = re.compile(r"\b(import_string|import_module|__import__)\s*\(")
    users = [
        str(path.relative_to(ROOT))
        for path in _python_files()
        if path.parent.name != "tests" and loader.search(path.read_text())
    ]
    # portal/ may load what its settings name (Django does so itself); the apps load nothing by name.
    assert [user for user in users if not user.startswith(("portal/", "tests/"))] == []


LAYOUT_PAGE = ROOT / "docs" / "architecture" / "layout.md"


def _layout_blocks() -> dict[str, str]:
    """The architecture page's module map (the code block under "## Module map"), by app."""
    section = LAYOUT_PAGE.read_text().split("## Module map\n", 1)[1].split("\n## ", 1)[0]
    listing = section.split("```")[1]
    blocks: dict[str, str] = {}
    app = ""
    for line in listing.splitlines():
        head = line.split("/", 1)[0]
        if line[:1].strip() and head in APPS:
            app = head
        if app:
            blocks[app] = blocks.get(app, "") + line + "\n"
    return blocks


def test_the_layout_page_names_every_module_of_every_app() -> None:
    blocks = _layout_blocks()
    assert set(blocks) == set(APPS)
    unnamed = {}
    for app in APPS:
        if app == "portal":
            continue  # the top layer's plumbing is named by kind, not module by module
        names = [path.name for path in (ROOT / app).glob("*.py") if path.stem not in {"__init__", "apps"}]
        names += [
            f"{path.name}/" for path in (ROOT / app).iterdir() if path.is_dir() and (path / "__init__.py").exists()
        ]
        plumbing = {"migrations/", "management/", "templatetags/"}
        missing = [
            name
            for name in names
            if name not in plumbing and not re.search(rf"(?<![\w/]){re.escape(name)}", blocks[app])
        ]
        if missing:
            unnamed[app] = sorted(missing)
    assert unnamed == {}


# The record models are one unit: Django's relations between them are mutual by nature.
ONE_UNIT = "records.models"
# Circles not yet broken, each named; a new one fails the test below, and breaking one of these
# fails it too (take it off the list then).
KNOWN_CIRCLES = {
    frozenset({"records.models", "records.works"}),  # a source's duplicate rule <-> the identifier forms
}


def _circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The import graph's strongly connected components of more than one module (networkx's)."""
    import networkx

    directed = networkx.DiGraph([(module, other) for module, others in graph.items() for other in others])
    return {
        frozenset(component) for component in networkx.strongly_connected_components(directed) if len(component) > 1
    }


def _import_graph() -> dict[str, set[str]]:
    import grimp

    built = grimp.build_graph(*APPS, cache_dir=None)

    def unit(module: str) -> str:
        return ONE_UNIT if module == ONE_UNIT or module.startswith(f"{ONE_UNIT}.") else module

    graph: dict[str, set[str]] = {}
    for module in built.modules:
        for imported in built.find_modules_directly_imported_by(module):
            if imported.split(".")[0] in APPS and unit(imported) != unit(module):
                graph.setdefault(unit(module), set()).add(unit(imported))
    return graph


def test_no_module_imports_itself_in_a_circle_but_the_known_ones() -> None:
    # Every import counts: at the top, inside a function, or for types only.
    assert _circles(_import_graph()) == KNOWN_CIRCLES


def test_the_circle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == {frozenset({"a", "b", "c"})}
