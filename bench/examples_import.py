"""Real papers' tables: how long the import of each example document takes, and the pages that show them.

Prints, per document of data/examples/, the records created and the seconds its import took (the
whole `load_examples` run, curation review included), then a second, idempotent run, then the SQL
query count and median render time of the largest suite protocol page (GUE: 10 models x 27 tasks).

Run: .venv/bin/python bench/examples_import.py   (uses a throw-away SQLite database under a temp
folder, or the database named by DATABASE_URL if set: then it must be a scratch database).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
if not os.environ.get("DATABASE_URL"):
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-examples-")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from records.examples import example_paths, examples_load  # noqa: E402

REQUESTS = 10
PAGE = "/protocols/gue-mcc-x100-zhou-2024/"


def main() -> None:
    call_command("migrate", verbosity=0)
    call_command("import_seed", stdout=open(os.devnull, "w"))
    print(f"backend: {connection.vendor}")
    for run in ("first", "second"):
        total = 0.0
        for path in example_paths():
            started = time.perf_counter()
            report = examples_load(paths=[path])
            seconds = time.perf_counter() - started
            total += seconds
            created = sum(len(ids) for document in report.documents.values() for ids in document.created.values())
            print(f"{run} run  {path.name:55s} {created:5d} records created  {seconds:6.2f} s")
        print(f"{run} run  all documents: {total:.2f} s")
    client = Client(HTTP_HOST="localhost")
    with CaptureQueriesContext(connection) as queries:
        response = client.get(PAGE)
    query_count = len(queries)  # read now: the next request resets the query log
    assert response.status_code == 200
    timings = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        client.get(PAGE)
        timings.append(time.perf_counter() - started)
    print(
        f"{PAGE}: {query_count} queries, median {statistics.median(timings) * 1000:.0f} ms over {REQUESTS} requests, {len(response.content):,} bytes"
    )


if __name__ == "__main__":
    main()
