"""`manage.py rebuild_release` rebuilds a published release's lost files from the database and
reinstates them only when every byte is as recorded."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from records.models import Source
from records.services import record_save
from releases import selectors, store
from releases.build import release_build
from releases.models import ReleaseEvent, ReleaseStatus
from releases.rebuild import DAMAGED_PREFIX
from releases.services import release_cut
from tests.conftest import database_url_for
from tests.factories import release_with_build
from tests.releases.test_damaged_files import flip_a_byte

ROOT = Path(__file__).resolve().parents[2]
MATRIX = "data/model_evaluation_matrix.csv.gz"

pytestmark = pytest.mark.django_db


def run(command: str, *args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command(command, *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def every_file(release) -> dict[str, bytes]:
    return {f.name: store.release_file_path(release, f.name).read_bytes() for f in release.files.all()}


def rebuilt_events(release) -> list[str]:
    return [e.reason for e in ReleaseEvent.objects.filter(release=release) if "rebuilt" in e.reason]


def test_it_rebuilds_a_deleted_release_folder_byte_for_byte_and_verify_release_says_intact(published_release):
    release = published_release
    original = every_file(release)
    store.remove_tree(store.release_directory(release.release_id))
    code, _out, err = run("verify_release", release.release_id)
    assert code == 1 and "missing" in err
    assert selectors.release_damage(release).damaged

    code, out, err = run("rebuild_release", release.release_id)
    assert (code, err) == (0, "")
    assert out.splitlines() == [f"{release.release_id}: reinstated, {len(original)} files rebuilt byte for byte"]

    code, out, _err = run("verify_release", release.release_id)
    assert code == 0 and out.startswith(f"{release.release_id}: intact")
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PUBLISHED and release.release_id == published_release.release_id
    assert every_file(release) == original
    assert not selectors.release_damage(release).damaged
    [reason] = rebuilt_events(release)
    assert "reinstated" in reason and "every checksum as recorded" in reason
    assert sorted(p.name for p in store.conf.releases_dir().iterdir()) == [release.release_id]  # no staging left


def test_it_rebuilds_a_later_release_with_its_change_list_against_the_one_before(
    published_release, curator, release_manager
):
    source = Source.objects.order_by("stable_id").first()
    source.title = f"{source.title} (revised)"
    record_save(record=source, actor=curator, changed_fields=["title"])
    second = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert second.counts["changes_against"] == published_release.release_id, second.build.error
    original = every_file(second)
    assert f"source_table,{source.stable_id},changed,title" in original["metadata/changes.csv"].decode()
    store.remove_tree(store.release_directory(second.release_id))

    code, out, err = run("rebuild_release", second.release_id)
    assert (code, err) == (0, ""), out
    assert every_file(second) == original


def test_it_sets_a_damaged_folder_aside_and_reinstates_the_recorded_bytes(published_release):
    release = published_release
    original = every_file(release)
    flip_a_byte(store.release_file_path(release, MATRIX))
    code, out, err = run("rebuild_release", release.release_id)
    assert code == 0 and "reinstated" in out, err
    assert every_file(release) == original
    assert run("verify_release", release.release_id)[0] == 0
    [aside] = [p for p in store.conf.releases_dir().iterdir() if p.name.startswith(DAMAGED_PREFIX)]
    assert (aside / release.release_id / MATRIX).read_bytes() != original[MATRIX]  # kept, never overwritten
    assert "the damaged folder was moved to" in rebuilt_events(release)[0]


def test_it_reports_the_changed_table_and_installs_nothing_when_the_catalogue_changed_since(published_release, curator):
    release = published_release
    source = Source.objects.order_by("stable_id").first()
    source.title = f"{source.title} (corrected)"
    record_save(record=source, actor=curator, changed_fields=["title"])
    store.remove_tree(store.release_directory(release.release_id))

    code, out, err = run("rebuild_release", release.release_id)
    assert code == 1 and out == ""
    lines = err.splitlines()
    sources = release.counts["rows"]["source_table"]
    assert (
        f"{release.release_id}: table source_table differs (data/source_table.csv.gz): {sources} rows in the "
        f"release, {sources} now; since the release: source 1 changed, 0 added, 0 removed"
    ) in lines
    assert not any("model_evaluation_matrix" in line for line in lines)  # only what differs is named
    assert lines[-1].endswith("nothing was installed; restore its files from a copy of the bag")
    assert not store.release_directory(release.release_id).exists()
    assert sorted(p.name for p in store.conf.releases_dir().iterdir()) == []
    assert rebuilt_events(release) == []
    assert run("verify_release", release.release_id)[0] == 1


def test_it_does_nothing_for_a_release_whose_files_are_intact(published_release):
    code, out, err = run("rebuild_release", published_release.release_id)
    assert (code, out, err) == (0, f"{published_release.release_id}: intact; nothing to rebuild\n", "")
    assert rebuilt_events(published_release) == []


def test_it_refuses_a_release_that_is_not_published(seeded, releases_dir, release_manager):

    release_with_build(release_date="2026-01-02", release_id="2026-01-02-000000000000", status="failed")
    with pytest.raises(CommandError, match="^release 2026-01-02-000000000000 is failed, not published"):
        call_command("rebuild_release", "2026-01-02-000000000000")


@pytest.mark.django_db(transaction=True)
def test_as_a_shell_sees_it_rebuild_then_verify_exit_zero_and_an_unknown_id_exits_one_with_one_line(
    published_release, monkeypatch
):
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor),
        "PORTAL_RELEASES_DIR": str(store.conf.releases_dir()),
    }

    def manage(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )

    release = published_release
    original = every_file(release)
    store.remove_tree(store.release_directory(release.release_id))
    assert manage("verify_release", release.release_id).returncode == 1
    rebuilt = manage("rebuild_release", release.release_id)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout.splitlines() == [
        f"{release.release_id}: reinstated, {len(original)} files rebuilt byte for byte"
    ]
    assert manage("verify_release", release.release_id).returncode == 0
    assert every_file(release) == original

    unknown = manage("rebuild_release", "2099-01-01-000000000000")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.strip().splitlines() == ["CommandError: no release '2099-01-01-000000000000'"]
