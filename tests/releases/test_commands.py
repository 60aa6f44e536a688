"""`manage.py verify_release` re-hashes a release's files; `manage.py cut_release` cuts one as a named user."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from records.seed import SEED_RELEASE_ID
from releases.store import release_file_path
from tests.conftest import database_url_for

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def verify(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("verify_release", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, out.getvalue(), err.getvalue()


def tamper(release, name: str, content: bytes) -> None:
    path = release_file_path(release, name)
    path.parent.chmod(0o755)
    path.chmod(0o644)
    path.write_bytes(content)


def test_verify_release_reports_an_intact_release_and_records_the_check(published_release):
    code, out, err = verify(published_release.release_id)
    assert code == 0 and err == ""
    assert out == f"{published_release.release_id}: intact ({published_release.files.count()} files)\n"
    assert published_release.fixity_checks.get().intact


def test_verify_release_prints_one_line_per_difference_and_fails(published_release):
    tamper(published_release, "data/source_table.csv.gz", b"not the published bytes")
    code, out, err = verify(published_release.release_id)
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert all(line.startswith(f"{published_release.release_id}: ") for line in lines)
    assert any("data/source_table.csv.gz: bytes is 23" in line for line in lines)
    assert any("data/source_table.csv.gz: sha256 is" in line for line in lines)
    assert any("data/source_table.csv.gz: is writable" in line for line in lines)
    assert any(line.startswith(f"{published_release.release_id}: bag:") for line in lines)  # bagit's own check agrees
    check = published_release.fixity_checks.get()
    assert not check.intact and "data/source_table.csv.gz" in check.problems


def test_verify_release_notices_a_missing_file(published_release):
    path = release_file_path(published_release, "bag-info.txt")
    path.parent.chmod(0o755)
    path.unlink()
    code, _, err = verify(published_release.release_id)
    assert code == 1 and "bag-info.txt: missing" in err


def test_verify_release_of_an_external_release_says_it_holds_no_files(seeded):
    code, out, err = verify(SEED_RELEASE_ID)
    assert code == 0 and err == ""
    assert out == f"{SEED_RELEASE_ID}: external release; this portal holds none of its files, nothing to verify\n"


def test_verify_release_all_checks_every_published_release(published_release):
    code, out, _ = verify("--all")
    assert code == 0
    assert out.splitlines() == [
        f"{SEED_RELEASE_ID}: external release; this portal holds none of its files, nothing to verify",
        f"{published_release.release_id}: intact ({published_release.files.count()} files)",
    ]


def test_verify_release_needs_a_known_release_or_all(db):
    with pytest.raises(CommandError, match="no release"):
        call_command("verify_release", "2020-01-01-000000000000")
    with pytest.raises(CommandError, match="name one release id, or --all"):
        call_command("verify_release")


@pytest.mark.django_db(transaction=True)
def test_the_commands_exit_non_zero_with_one_line_when_refused_or_damaged(
    make_user, seeded, settings, tmp_path, monkeypatch
):
    """As a shell sees them: exit codes and stderr lines of real `manage.py` processes."""
    from releases.build import release_build
    from releases.services import release_cut

    monkeypatch.setattr("releases.tasks.release_build.apply_async", lambda *args, **kwargs: None)  # built here

    settings.RELEASES_DIR = tmp_path / "releases"
    make_user("curator", "a-curator")
    manager = make_user("release_manager", "a-manager")
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor),
        "PORTAL_RELEASES_DIR": str(settings.RELEASES_DIR),
    }

    def manage(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )

    refused = manage("cut_release", "--user", "a-curator")
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines() == [
        "CommandError: a-curator: only release managers may cut a release (permission releases.cut_release)"
    ]

    release = release_build(release_pk=release_cut(actor=manager).pk)
    assert manage("verify_release", release.release_id).returncode == 0
    tamper(release, "data/evidence.csv.gz", b"")
    damaged = manage("verify_release", release.release_id)
    assert damaged.returncode == 1 and damaged.stdout == ""
    assert len(damaged.stderr.strip().splitlines()) >= 3
