"""Rebuilding a published release's lost files from the database (`manage.py rebuild_release`) against
building the release, at 1,000 and 10,000 results (or the sizes given): seconds of each, and whether
the rebuilt files are the published bytes.

Run: .venv/bin/python bench/release_rebuild.py [SIZES...]   (default: 1000 10000)

A throw-away SQLite database and release folder under a temp folder, or the database named by
DATABASE_URL if set (then it must be a scratch database); the catalogue is grown as
bench/release_build.py grows it. Per size: one build by the real service, its folder deleted,
then the real command in this process. The rebuild exports as the build does but stores no
memberships, and hashes every file twice more (the comparison and the re-verification).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.release_build import grow_catalogue, one_source_more  # noqa: E402  (sets Django up)

SIZES = (1_000, 10_000)


def digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def main(sizes: list[int]) -> None:
    call_command("migrate", verbosity=0)
    from releases import store
    from releases.build import release_build
    from releases.models import Release, ReleaseStatus

    print(f"database: {connection.vendor}; releases under {store.conf.releases_dir()}")
    print(f"{'results':>8} {'build s':>8} {'rebuild s':>10} {'rebuild/build':>14} {'files':>6} {'same bytes':>11}")
    for size in sizes:
        grow_catalogue(size)
        one_source_more()
        release = Release.objects.create(
            release_date=timezone.localdate(), status=ReleaseStatus.REQUESTED, note="bench"
        )
        started = time.perf_counter()
        built = release_build(release_pk=release.pk)
        build_seconds = time.perf_counter() - started
        if built.status != ReleaseStatus.PUBLISHED:
            raise SystemExit(f"build failed: {built.error}")
        folder = store.release_directory(built.release_id)
        published = digests(folder)
        store.remove_tree(folder)
        out = StringIO()
        started = time.perf_counter()
        call_command("rebuild_release", built.release_id, stdout=out)
        rebuild_seconds = time.perf_counter() - started
        same = digests(folder) == published
        print(
            f"{size:>8,} {build_seconds:>8.2f} {rebuild_seconds:>10.2f} {rebuild_seconds / build_seconds:>14.2f} "
            f"{len(published):>6} {str(same):>11}",
            flush=True,
        )
        if not same or "reinstated" not in out.getvalue():
            raise SystemExit(f"the rebuild did not reinstate the published bytes: {out.getvalue()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    main(parser.parse_args().sizes)
