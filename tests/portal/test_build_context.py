"""No file the docs tell an operator to create (secrets, backups, compose's .env) can enter a Docker
build context (`COPY . /app`) or the repository: `.dockerignore` and `.gitignore` both leave it out."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from docker.utils.build import exclude_paths

pytestmark = [pytest.mark.backend_independent]

ROOT = Path(__file__).resolve().parents[2]
#: Files an operator keeps beside the compose file that no command in the docs writes: compose's own.
ALWAYS_PRIVATE = [".env", "secrets/any_new_secret"]


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, flags=re.S)


def written_paths(block: str) -> set[str]:
    """Relative paths a block of shell writes: redirections, `mkdir -p`, `$PWD/...` mounts."""
    block = re.sub(r"\$\([^)]*\)", "X", block)  # backup/portal-$(date +%F).dump -> backup/portal-X.dump
    block = re.sub(r"<[^<>\n]*>", "X", block)  # a placeholder (<this repository>) is no redirection
    for loop in re.finditer(r"for (\w+) in ([^;\n]+); do\n?(.*?)\bdone", block, flags=re.S):
        name, values, body = loop.groups()  # each pass of a `for` loop, with its variable's value
        block += "\n" + "\n".join(body.replace(f"${name}", value) for value in values.split())
    paths = set(re.findall(r">>?\s*([\w.][\w./$-]*)", block))
    for arguments in re.findall(r"mkdir -p ((?:[\w.][\w./-]* ?)+)", block):
        paths.update(f"{folder.rstrip('/')}/a_file" for folder in arguments.split())
    paths.update(f"{folder}/a_file" for folder in re.findall(r"\$PWD/([\w./-]+):", block))  # a mounted folder
    return {path for path in paths if not path.startswith(("/", "-"))}


def documented_paths() -> set[str]:
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    paths: set[str] = set()
    for text in texts:
        for block in shell_blocks(text.read_text()):
            paths |= written_paths(block)
    return paths


@pytest.fixture
def operator_tree(tmp_path: Path) -> tuple[Path, list[str]]:
    """A copy of the ignore files with every path the docs create, as an operator's checkout has them."""
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    shutil.copy(ROOT / ".dockerignore", tmp_path / ".dockerignore")
    created = sorted(documented_paths()) + ALWAYS_PRIVATE
    for relative in created:
        target = tmp_path / relative
        if target.exists() and target.is_dir():  # `mkdir -p secrets` and `> secrets/x` name one folder
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("s3cr3t\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path, created


def test_the_docs_create_the_secret_files_the_test_guards():
    secrets = ["secret_key", "postgres_password", "postgres_owner_password", "postgres_app_password", "metrics_token"]
    assert {f"secrets/{name}" for name in secrets} <= documented_paths()


def test_no_path_the_docs_create_enters_the_docker_build_context(operator_tree):
    tree, created = operator_tree
    context = exclude_paths(str(tree), (tree / ".dockerignore").read_text().split())
    assert sorted(set(created) & set(context)) == []
    assert ".gitignore" in context  # the matcher reads the tree: a plain file stays in the context


def test_no_path_the_docs_create_can_be_committed(operator_tree):
    tree, created = operator_tree
    tracked = subprocess.run(
        ["git", "-C", str(tree), "ls-files", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(set(created) & set(tracked)) == []
    assert ".dockerignore" in tracked
