"""The release store: where release files lie under RELEASES_DIR, and how they get there and go away.

    RELEASES_DIR/<release id>/<release id>/         the bag (read-only once installed)
    RELEASES_DIR/<release id>/<release id>.tar.gz   the archive of the bag
    RELEASES_DIR/.build-<release pk>-<claim token>/  a build's staging folder (removed after each claim)

No status changes here: `releases.build` decides when to install and `releases.lifecycle` when a
failed build's folders go. The rows are read only to tell a published release's folder from one a
failed build left behind.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
from pathlib import Path

from releases import conf
from releases.bundle import BundleResult, EarlierRelease, FileInfo, file_info, verify_bundle
from releases.models import UNFINISHED, FileKind, Release

logger = logging.getLogger(__name__)

STAGING_PREFIX = ".build-"
RELEASE_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}-[0-9a-f]{12}")  # RELEASES_DIR/<release id>


class InstallConflict(Exception):
    """RELEASES_DIR/<id> already holds other content than the bundle being installed."""


def release_directory(release_id: str) -> Path:
    """Where a release's files lie: the bag `<id>/<id>/` and the archive `<id>/<id>.tar.gz`."""
    return conf.releases_dir() / release_id


def earlier_release(release: Release | None) -> EarlierRelease:
    """What a bundle's change list compares with: `release`'s installed bag (no release: every row is
    added). A release recorded from elsewhere is compared with its bag where one was put here
    (RELEASES_DIR/<id>/<id>), and otherwise named with no rows compared."""
    if release is None or release.release_id is None:
        return EarlierRelease()
    bag = release_directory(release.release_id) / release.release_id
    if release.is_external and not bag.is_dir():
        return EarlierRelease(
            release_id=release.release_id
        )  # published elsewhere, its files not here: rows not compared
    return EarlierRelease(release_id=release.release_id, bag=bag)


def release_file_path(release: Release, name: str) -> Path:
    """The path of one of `release`'s files (by its name in the file table)."""
    base = release_directory(release.release_id)
    if name == f"{release.release_id}.tar.gz":
        return base / name
    return base / release.release_id / name


# ----------------------------------------------------------------- staging


def staging_directory(release_pk: int, token: str) -> Path:
    """The staging folder of one claim of a build (on the store's file system: installing is a rename)."""
    return conf.releases_dir() / f"{STAGING_PREFIX}{release_pk}-{token}"


def staging_directories(release_pk: int, token: str = "*") -> list[Path]:
    root = conf.releases_dir()
    return sorted(root.glob(f"{STAGING_PREFIX}{release_pk}-{token}")) if root.is_dir() else []


def remove_staging(release_pk: int, token: str = "*") -> None:
    """Remove the build's staging folders: one claim's (`token`) or, by default, every claim's."""
    for path in staging_directories(release_pk, token):
        remove_tree(path)


def remove_tree(path: Path) -> None:
    """Remove a (possibly read-only) tree."""

    def make_writable_and_retry(function, failed_path, _exc_info):
        parent = os.path.dirname(failed_path)
        for target in (parent, failed_path):
            try:
                os.chmod(target, stat.S_IRWXU)
            except OSError:
                pass
        function(failed_path)

    if path.is_dir():
        shutil.rmtree(path, onerror=make_writable_and_retry)
    elif path.exists():
        path.unlink()


def remove_unpublished_folders(release: Release) -> None:
    """Remove the `<id>` folders a claim of this failed (locked) release renamed into place but never published.

    Its ids all start with its release date, and cuts are serialised (one release is built at a
    time), so a folder of that date that no published release names is one of its own.
    """
    root = conf.releases_dir()
    prefix = f"{release.release_date.isoformat()}-"
    others = Release.objects.filter(build__status__in=UNFINISHED, release_date=release.release_date).exclude(
        pk=release.pk
    )
    if not root.is_dir() or others.exists():
        return  # not the only build of its date: its folders cannot be told apart
    published = set(
        Release.objects.published().filter(release_id__startswith=prefix).values_list("release_id", flat=True)
    )
    for path in root.glob(f"{prefix}*"):
        if path.name not in published and RELEASE_FOLDER.fullmatch(path.name):
            logger.warning("release %s failed: removing its unpublished folder %s", release.pk, path)
            remove_tree(path)


# ------------------------------------------------------------------ files


def release_files(result: BundleResult) -> list[tuple[FileKind, FileInfo]]:
    """Every file of a built release with its kind: payload, tag files, archive (as the writer hashed them)."""
    files = [(FileKind.PAYLOAD, info) for info in result.payload_files]
    files += [(FileKind.TAG, info) for info in result.tag_files]
    files.append((FileKind.ARCHIVE, result.tarball_info))
    return files


def make_read_only(path: Path) -> None:
    """Every file under `path` 0444, every folder 0555 (published files never change)."""
    for directory, _, files in os.walk(path, topdown=False):
        for name in files:
            os.chmod(os.path.join(directory, name), 0o444)
        os.chmod(directory, 0o555)


def installed_result(result: BundleResult) -> BundleResult:
    """`result` (as written in a staging folder) with the paths it has once installed."""
    final = release_directory(result.release_id)
    return BundleResult(
        release_id=result.release_id,
        bag_dir=final / result.release_id,
        tarball=final / f"{result.release_id}.tar.gz",
        payload_files=result.payload_files,
        tarball_info=result.tarball_info,
        row_counts=result.row_counts,
        tag_files=result.tag_files,
    )


# ---------------------------------------------------------------- install


def install(staged: Path, result: BundleResult) -> tuple[Path, bool]:
    """Rename the staged release folder (the writer's `output_dir`, validated) to RELEASES_DIR/<id>
    in one step and make it read-only: the one place a release's files are installed.

    A folder already there (a lost worker renamed it, then died before publishing) is kept when
    it holds the same files, verified; anything else there is an InstallConflict. Returns the
    folder and whether this call renamed it into place.
    """
    final = release_directory(result.release_id)
    renamed = True
    try:
        os.rename(staged, final)
    except OSError:
        renamed = False
        if not final.is_dir():
            raise
        existing = final / result.release_id
        expected = {info.name: info.sha256 for _, info in release_files(result)}
        found = {}
        for name in expected:
            path = existing.parent / name if name.endswith(".tar.gz") else existing / name
            if path.is_file():
                found[name] = file_info(path, name).sha256
        if found != expected or verify_bundle(existing):
            raise InstallConflict(f"{final} already exists with other content") from None
        remove_tree(staged)
    make_read_only(final)
    return final, renamed
