"""Imports inside the benchmarks app point one way: services -> tasks -> execution, sweeper -> jobs -> models.

The request side sends messages through the tasks module; the worker side (execution, the sweeper)
and what both sides share never import the services or the tasks, lazily or not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import benchmarks

APP = Path(benchmarks.__file__).parent


def benchmark_imports(module: str) -> set[str]:
    """The benchmarks modules `benchmarks/<module>.py` imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((APP / f"{module}.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "benchmarks":
            found.add(node.module)
            if node.module == "benchmarks":
                found.update(f"benchmarks.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "benchmarks")
    return found


@pytest.mark.parametrize("module", ["execution", "sweeper", "jobs", "measurement", "monitor", "models", "conf"])
def test_the_worker_side_and_the_shared_modules_import_neither_services_nor_tasks(module):
    assert not benchmark_imports(module) & {"benchmarks.services", "benchmarks.tasks"}


def test_the_tasks_import_the_worker_side_not_the_services():
    imports = benchmark_imports("tasks")
    assert "benchmarks.services" not in imports
    assert {"benchmarks.execution", "benchmarks.sweeper"} <= imports


def test_the_lifecycle_module_imports_no_app():
    tree = ast.parse((APP.parent / "common" / "lifecycle.py").read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {module.split(".")[0] for module in modules} <= {"__future__", "logging", "collections", "dataclasses", "datetime", "typing", "django", "common"}
