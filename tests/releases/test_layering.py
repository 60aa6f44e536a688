"""The releases app's imports point one way: services -> tasks -> build -> lifecycle, store, selectors,
exporter -> bundle; the bundle writer imports nothing of Django. Imports inside functions count."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.backend_independent

APP = Path(__file__).resolve().parents[2] / "releases"

# module -> the releases modules it must never import, directly or through others
NEVER = {
    "build": {"services", "tasks"},
    "lifecycle": {"services", "tasks", "build"},
    "store": {"services", "tasks", "build", "lifecycle"},
    "fixity": {"services", "tasks", "build"},
    "selectors": {"services", "tasks", "build", "lifecycle"},
    "tasks": {"services"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(APP).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module this file imports, wherever the import statement is."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def releases_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in APP.rglob("*.py") if "migrations" not in p.parts}
    graph = {}
    for name, path in modules.items():
        found = {n.removeprefix("releases.") for n in imported(path) if n.startswith("releases.")}
        graph[name] = {n for n in found if n in modules and n != name}
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph.get(name, set())
    return seen


def test_no_releases_module_imports_itself_back_through_others():
    graph = releases_graph()
    assert [name for name in graph if name in reachable(graph, name)] == []


@pytest.mark.parametrize("module", sorted(NEVER))
def test_the_worker_side_never_imports_the_request_side(module):
    assert reachable(releases_graph(), module) & NEVER[module] == set()


def test_the_bundle_writer_imports_no_django_and_no_other_releases_module():
    for path in (APP / "bundle").glob("*.py"):
        names = imported(path)
        assert not {n for n in names if n.split(".")[0] == "django"}, path.name
        assert {n for n in names if n.startswith("releases.")} <= {n for n in names if n.startswith("releases.bundle")}, path.name
