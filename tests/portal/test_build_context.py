"""No file the docs tell an operator to create (secrets, backups, compose's .env) can enter a Docker
build context (`COPY . /app`) or the repository: `.dockerignore` and `.gitignore` both leave it out.
`.dockerignore` is an allow-list: the context holds every tracked file the images run and nothing
else, so a secret-shaped file an operator keeps anywhere in the checkout stays out too."""

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
#: Secret-shaped files an operator might keep in a checkout, none of which the docs name.
PLAUSIBLE_SECRETS = [
    ".env.production",
    "id_rsa",
    "id_ed25519.pub",
    "server.pem",
    "tls.key",
    "tls.crt",
    "secrets.yaml",
    "credentials.json",
    ".netrc",
    ".pgpass",
    "portal-2026-12-01.dump",
    "db.sqlite3",
    "keystore.jks",
    "client.p12",
    "terraform.tfstate",
    "production.env",
]
#: What the images run: the Django apps' packages, the files they read, gunicorn's configuration and
#: the requirements the images install.
IMAGE_ROOTS = ("benchmarks", "common", "corrections", "pages", "portal", "records", "releases", "reviews")
IMAGE_ROOTS += ("data", "static", "templates", "manage.py", "gunicorn.conf.py", "requirements.txt")
IMAGE_ROOTS += ("requirements-runner.txt",)


def dockerignore() -> list[str]:
    """The patterns of `.dockerignore` as Docker reads them: one a line, comments and blanks left out."""
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


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
    shutil.copy(ROOT / "manage.py", tmp_path / "manage.py")
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
    context = exclude_paths(str(tree), dockerignore())
    assert sorted(set(created) & set(context)) == []
    assert "manage.py" in context  # the matcher reads the tree: a file the image needs stays in the context


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


def test_the_build_context_holds_what_the_images_run_and_no_secret_wherever_it_lies(tmp_path):
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
    files = tracked.stdout.split()
    secrets = [
        f"{folder}{name}"
        for folder in ("", "portal/", "records/management/", "data/examples/")
        for name in PLAUSIBLE_SECRETS
    ]
    for relative in [*files, *secrets]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x\n")
    shutil.copy(ROOT / ".dockerignore", tmp_path / ".dockerignore")
    context = {path for path in exclude_paths(str(tmp_path), dockerignore()) if (tmp_path / path).is_file()}
    needed = {path for path in files if path.split("/", 1)[0] in IMAGE_ROOTS}
    assert sorted(needed - context) == []  # everything the images run is copied
    # and nothing else (no tests, docs, bench, CI scripts, secrets) but the two files Docker always sends
    # the daemon, which COPY leaves out of the image
    assert sorted(context - needed) == [".dockerignore", "Dockerfile"]
    assert sorted(set(secrets) & context) == []
    assert "portal/settings.py" in context and "tests/conftest.py" not in context
