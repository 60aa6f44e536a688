"""What checking a release file before sending it costs: the first download of a
file hashes it, later ones find the verdict under the file's identity in the cache.

Run: .venv/bin/python bench/download_check.py [--megabytes N] [--repeats N]

Part 1 builds a real release (the seed and the four example documents, the real build service) in a
throw-away SQLite database and folder, and times downloads of its largest file through the Django
test client (after one request for its smallest file, which warms the process up): the first
(hash, then send), then the median of `--repeats` later ones (cached). Part 2
times `releases.fixity.file_verdict` alone on a file of N random megabytes (default 256): the hash
once, then the cached look-up. The cache is the configured one (local memory without CACHE_URL).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
if not os.environ.get("PORTAL_VAR_DIR"):
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-download-")
os.environ.setdefault("PORTAL_RELEASES_DIR", str(Path(os.environ["PORTAL_VAR_DIR"]) / "bench-releases"))
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from releases import fixity  # noqa: E402
from releases.models import ReleaseFile  # noqa: E402


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def real_release(repeats: int) -> None:
    from django.contrib.auth import get_user_model

    from records.examples import examples_load
    from releases.build import release_build
    from releases.services import release_cut
    from reviews.services import roles_ensure

    call_command("migrate", verbosity=0)
    call_command("import_seed", stdout=open(os.devnull, "w"))
    examples_load()
    roles_ensure()
    manager = get_user_model().objects.create_user("bench-release-manager")
    from django.contrib.auth.models import Group

    manager.groups.add(Group.objects.get(name="Release managers"))
    release = release_build(release_pk=release_cut(actor=manager).pk)
    largest, smallest = release.files.order_by("-bytes").first(), release.files.order_by("bytes").first()
    client = Client(HTTP_HOST="127.0.0.1")

    def download(name: str) -> None:
        response = client.get(f"/releases/{release.release_id}/files/{name}")
        assert response.status_code == 200, response.status_code
        b"".join(response.streaming_content)

    cache.clear()
    download(smallest.name)  # the process's first request (imports, connection) is not the check's cost
    first = timed(lambda: download(largest.name))
    later = statistics.median(timed(lambda: download(largest.name)) for _ in range(repeats))
    print(f"release {release.release_id}: {largest.name}, {largest.bytes:,} bytes")
    print(f"  first download (hash + send): {first * 1000:.2f} ms; later (cached verdict): {later * 1000:.2f} ms")


def big_file(megabytes: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.bin"
        digest = hashlib.sha256()
        with path.open("wb") as handle:
            for _ in range(megabytes):
                block = os.urandom(1 << 20)
                digest.update(block)
                handle.write(block)
        record = ReleaseFile(name="big.bin", bytes=megabytes << 20, sha256=digest.hexdigest())
        cache.clear()
        with path.open("rb") as handle:
            hashed = timed(lambda: fixity.file_verdict(record=record, handle=handle))
            cached = statistics.median(
                timed(lambda: fixity.file_verdict(record=record, handle=handle)) for _ in range(repeats)
            )
        print(f"{megabytes} MiB file: first check (sha256) {hashed:.3f} s; cached check {cached * 1e6:.0f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    real_release(options.repeats)
    big_file(options.megabytes, options.repeats)


if __name__ == "__main__":
    main()
