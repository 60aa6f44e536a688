"""A client generated from the live schema types the API as it answers: openapi-python-client makes the
package, `mypy --strict` checks a short script that uses it (anonymous reads with a plain `Client`,
paging by `next_cursor`, path parameters named as the fields, values as strings, a review transition
with a token), and the script runs against the live portal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.factories import EvaluationFactory

# The generator and mypy answer the same on every backend: CI runs this in one pass only, the embedded
# one (the PostgreSQL pass runs the curator's schemathesis run instead).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.backend_independent, pytest.mark.embedded_pass]

SCRIPT = Path(__file__).with_name("generated_client_script.py")
BIN = Path(sys.executable).parent


def run(command: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    # The generator formats its output with ruff, which it finds on PATH: the virtual environment's.
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("MYPYPATH", None)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_a_generated_client_type_checks_and_reads_pages_and_reviews(live_server, seeded, curator, tmp_path):
    from portal.tokens import api_token_create

    to_check = EvaluationFactory()  # proposed, last edited by no one: the curator may check it
    token = api_token_create(user=curator)

    schema = requests.get(f"{live_server.url}/api/v1/schema/", params={"format": "json"}, timeout=60)
    assert schema.status_code == 200, schema.text[:500]
    (tmp_path / "schema.json").write_text(schema.text, encoding="utf-8")

    generated = run(
        [str(BIN / "openapi-python-client"), "generate", "--path", "schema.json", "--meta", "none"]
        + ["--output-path", "portal_client"],
        cwd=tmp_path,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert "Warning" not in generated.stdout + generated.stderr, generated.stdout + generated.stderr
    shutil.copy(SCRIPT, tmp_path / SCRIPT.name)

    # The script strictly; the generated package is read for its types, its own style not judged.
    checked = run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental", SCRIPT.name],
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    ran = run([sys.executable, SCRIPT.name, live_server.url, token, to_check.stable_id], cwd=tmp_path, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    said = json.loads(ran.stdout)
    assert said["pages"] == 3 and len(set(said["evaluation_ids"])) == 3  # one a page: the seed's two and ours
    assert to_check.stable_id in said["evaluation_ids"] and said["first"] == said["evaluation_ids"][0]
    assert {"20", "50"} <= set(said["values"])  # the seed's run times, as the strings sent
    assert said["checked"] == {"review_state": "source_checked", "transition": "check_source"}
    to_check.refresh_from_db()
    assert to_check.review_state == "source_checked"
