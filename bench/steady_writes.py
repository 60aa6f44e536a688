"""A large import and a release cut while a curator's client PATCHes every second.

A catalogue that curators edit all day must still import and release. On a scratch PostgreSQL
database (DATABASE_URL) holding RESULTS results (grown by bench/release_build.py's bulk insert), a
thread PATCHes a configuration through the API once a second (a new description each time: a real
write, its history row and version bump), while this process

1. imports a 20,000-record document (bench/import_speed.py's shape: one evaluation and one result
   per row, with its configurations, tasks and protocol), through `records_import` as the API's
   import job does; then
2. cuts a release and builds it in this process (`release_cut`, `release_build`), reading one
   snapshot of the catalogue (releases.snapshot) while the PATCHes go on.

It prints whether each succeeded, its seconds, and the PATCHes answered meanwhile (count, failures,
median and slowest). It exits non-zero when the import or the cut fails or a PATCH is refused.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_steady .venv/bin/python bench/steady_writes.py
[--results 100000] [--records 20000]   (the database must be a scratch one: it is migrated and filled)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
    sys.exit("bench/steady_writes.py: set DATABASE_URL to a scratch PostgreSQL database")
os.environ.setdefault("PORTAL_VAR_DIR", tempfile.mkdtemp(prefix="bench-steady-"))

import django  # noqa: E402

django.setup()

import import_speed  # noqa: E402  (bench/import_speed.py: the document's shape)
import release_build  # noqa: E402  (bench/release_build.py: the bulk-grown catalogue)
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from records.imports import records_import  # noqa: E402
from records.models import Configuration, Result  # noqa: E402
from releases.build import release_build as build  # noqa: E402
from releases.services import release_cut  # noqa: E402
from reviews.services import roles_ensure  # noqa: E402


class Patcher(threading.Thread):
    """PATCHes `target` once a second until stopped; keeps each answer's seconds and every refusal."""

    def __init__(self, curator: User, target: str) -> None:
        super().__init__(daemon=True)
        self.curator, self.target = curator, target
        self.stop = threading.Event()
        self.seconds: list[float] = []
        self.refused: list[str] = []

    def run(self) -> None:
        client = APIClient(HTTP_HOST="localhost")
        client.force_authenticate(self.curator)
        try:
            while not self.stop.is_set():
                began = time.perf_counter()
                response = client.patch(
                    f"/api/v1/configurations/{self.target}/",
                    {"description": f"edit {len(self.seconds) + len(self.refused)} at {time.time():.3f}"},
                    format="json",
                )
                took = time.perf_counter() - began
                if response.status_code == 200:
                    self.seconds.append(took)
                else:
                    self.refused.append(f"{response.status_code}: {response.content[:200]!r}")
                self.stop.wait(max(0.0, 1.0 - took))
        finally:
            connection.close()

    def summary(self, since: int) -> str:
        waits = sorted(self.seconds[since:])
        if not waits:
            return "no PATCH answered"
        return (
            f"{len(waits)} PATCHes answered (median {waits[len(waits) // 2]:.3f} s, slowest {waits[-1]:.3f} s), "
            f"{len(self.refused)} refused"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--records", type=int, default=20_000)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    roles_ensure()
    curator, _ = User.objects.get_or_create(username="bench-curator", defaults={"is_staff": True})
    curator.groups.add(Group.objects.get(name="Curators"))
    manager, _ = User.objects.get_or_create(username="bench-release-manager", defaults={"is_staff": True})
    manager.groups.add(Group.objects.get(name="Release managers"))
    curator, manager = User.objects.get(pk=curator.pk), User.objects.get(pk=manager.pk)
    began = time.perf_counter()
    release_build.grow_catalogue(args.results)
    print(
        f"backend {connection.vendor}: {Result.objects.count()} results in the catalogue "
        f"(grown in {time.perf_counter() - began:.1f} s)"
    )
    target = Configuration.objects.order_by("pk").values_list("stable_id", flat=True).first()
    patcher = Patcher(curator, target)
    patcher.start()
    time.sleep(2)
    failed = False

    mark = len(patcher.seconds)
    prefix = f"steady{int(time.time())}"
    document = import_speed.document(prefix, args.records)
    began = time.perf_counter()
    try:
        report = records_import(document=document, actor=curator)
        outcome = f"imported {len(report.created.get('results', []))} results"
    except Exception as exc:  # the bench reports what the curator would see
        outcome, failed = f"FAILED: {exc}", True
    print(
        f"import of {args.records} records: {outcome} in {time.perf_counter() - began:.1f} s; {patcher.summary(mark)}"
    )

    mark = len(patcher.seconds)
    began = time.perf_counter()
    release = build(release_pk=release_cut(actor=manager).pk)
    seconds = time.perf_counter() - began
    if release.status == "published":
        outcome = f"published {release.release_id} ({release.record_total} records)"
    else:
        outcome, failed = f"FAILED: {release.build.error}", True
    print(f"release cut of {Result.objects.count()} results: {outcome} in {seconds:.1f} s; {patcher.summary(mark)}")

    patcher.stop.set()
    patcher.join()
    if patcher.refused:
        print("refused PATCHes: " + "; ".join(patcher.refused[:5]))
        failed = True
    print(f"import write batches of {settings.IMPORT_WRITE_BATCH_RECORDS} records; PATCH every 1 s from one client")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
