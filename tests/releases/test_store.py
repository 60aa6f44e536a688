"""The release store: a written bundle is installed under RELEASES_DIR once, in one rename, read-only;
content already there under its id is kept when identical and never overwritten otherwise."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from releases import store
from releases.bundle import BundleResult, file_info, verify_bundle
from releases.models import FileKind
from tests.releases.bundle_data import all_files, build, rows_in_order

pytestmark = pytest.mark.backend_independent


def staged(tmp_path: Path, name: str = "claim", reverse: bool = False) -> tuple[Path, BundleResult]:
    """What a build's export leaves in its staging folder: `<staging>/release/{<id>/, <id>.tar.gz}`."""
    output = tmp_path / f"staging-{name}" / "release"
    tables = rows_in_order(lambda rows: rows[::-1]) if reverse else None
    return output, build(output, tables)


def modes(root: Path) -> tuple[set[int], set[int]]:
    """(file modes, folder modes) of `root` and everything under it."""
    paths = [root, *root.rglob("*")]
    return (
        {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_file()},
        {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_dir()},
    )


@pytest.fixture
def store_root(releases_dir) -> Path:
    releases_dir.mkdir(parents=True)
    return releases_dir


def test_installing_renames_the_staged_release_into_place_and_makes_it_read_only(store_root, tmp_path):
    output, result = staged(tmp_path)

    final, renamed = store.install(output, result)

    assert renamed and final == store.release_directory(result.release_id) == store_root / result.release_id
    assert not output.exists()
    assert sorted(p.name for p in final.iterdir()) == [result.release_id, f"{result.release_id}.tar.gz"]
    assert modes(final) == ({0o444}, {0o555})
    assert verify_bundle(final / result.release_id) == []


def test_installing_the_same_content_again_keeps_the_installed_folder_untouched(store_root, tmp_path):
    """A lost worker renamed its folder into place and died; the claim that took over wrote the same."""
    first_output, first = staged(tmp_path, "lost")
    final, _ = store.install(first_output, first)
    before = {p: p.stat().st_mtime_ns for p in final.rglob("*")}
    output, again = staged(tmp_path, "next", reverse=True)

    assert store.install(output, again) == (final, False)
    assert {p: p.stat().st_mtime_ns for p in final.rglob("*")} == before
    assert not output.exists() and modes(final) == ({0o444}, {0o555})


def test_other_content_under_the_release_id_is_a_conflict_and_stays_as_it_was(store_root, tmp_path):
    output, result = staged(tmp_path)
    squatter = store_root / result.release_id / result.release_id
    squatter.mkdir(parents=True)
    (squatter / "bagit.txt").write_text("something else\n", encoding="utf-8")
    before = all_files(store_root)

    with pytest.raises(store.InstallConflict, match="already exists with other content"):
        store.install(output, result)
    assert all_files(store_root) == before
    assert output.is_dir(), "the staged files are the build's to remove, with its staging folder"


def test_a_release_lists_its_payload_tag_files_and_archive_as_they_lie_installed(store_root, tmp_path):
    output, result = staged(tmp_path)
    store.install(output, result)
    installed = store.installed_result(result)

    files = store.release_files(installed)

    kinds = [kind for kind, _ in files]
    assert kinds == [FileKind.PAYLOAD] * 5 + [FileKind.TAG] * 6 + [FileKind.ARCHIVE]
    for kind, info in files:
        path = installed.tarball if kind == FileKind.ARCHIVE else installed.bag_dir / info.name
        assert file_info(path, info.name) == info
