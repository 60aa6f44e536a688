"""Protocol page cost with 10 and 1,000 evaluations: SQL query count and render time (min and
median of 20 requests), rendered afresh (the page cache emptied before each request) and from the
page cache (records/page_cache.py, keyed by the catalogue version). The last line compares the
1,000-evaluation page against the goal of 100 ms or less.

Run: .venv/bin/python bench/page_queries.py   (uses a throw-away SQLite database under a temp
folder, or the database named by DATABASE_URL if set: then it must be a scratch database).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
if not os.environ.get("DATABASE_URL"):
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-page-")

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from records import models as m  # noqa: E402
from records.services import record_save  # noqa: E402

SIZES = (10, 1000)
REQUESTS = 20
GOAL_MS = 100


def seed(size: int) -> m.Protocol:
    source = m.Source(stable_id=f"bench-source-{size}", title="Bench source", venue="Bench")
    record_save(record=source, actor=None)
    dataset = m.Dataset(stable_id=f"bench-dataset-{size}", name="Bench dataset")
    record_save(record=dataset, actor=None)
    protocol = m.Protocol(
        stable_id=f"bench-protocol-{size}",
        title=f"Bench protocol with {size} evaluations",
        summary="Bench.",
        metric_name="Runtime",
        metric_short_name="runtime",
        metric_unit="minute",
        metric_direction="lower",
        source=source,
    )
    record_save(record=protocol, actor=None)
    for index in range(size):
        configuration = m.Configuration(stable_id=f"bench-{size}-config-{index}", name=f"Model {index:05d}")
        record_save(record=configuration, actor=None)
        evaluation = m.Evaluation(
            stable_id=f"bench-{size}-evaluation-{index}",
            title=f"Evaluation {index}",
            protocol=protocol,
            configuration=configuration,
            dataset=dataset,
            measured_by="authors",
            reading_method="table",
            source=source,
            source_locator="Table 1",
            quote="A quoted sentence.",
        )
        record_save(record=evaluation, actor=None)
        record_save(
            record=m.Result(
                stable_id=f"bench-{size}-result-{index}",
                evaluation=evaluation,
                value=Decimal(index % 97) + Decimal("0.5"),
                unit="minute",
                printed_value=f"{Decimal(index % 97) + Decimal('0.5')} min",
            ),
            actor=None,
        )
    return protocol


def measure(client: Client, url: str, *, cold: bool) -> tuple[int, list[float], int]:
    """Query count of one request, the times of REQUESTS requests (ms) and the page's size."""
    if cold:
        cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    query_count = len(queries)  # read now: the next request resets the query log
    assert response.status_code == 200
    timings = []
    for _ in range(REQUESTS):
        if cold:
            cache.clear()
        started = time.perf_counter()
        client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
    return query_count, timings, len(response.content)


def main() -> None:
    call_command("migrate", verbosity=0)
    client = Client(HTTP_HOST="localhost")
    print(f"database: {connection.vendor}")
    print(f"{'evaluations':>12} {'render':>7} {'queries':>8} {'min ms':>8} {'median ms':>10} {'bytes':>10}")
    figures = {}
    for size in SIZES:
        protocol = seed(size)
        url = f"/protocols/{protocol.stable_id}/"
        for kind in ("afresh", "cached"):
            query_count, timings, size_bytes = measure(client, url, cold=kind == "afresh")
            figures[size, kind] = statistics.median(timings)
            print(
                f"{size:>12} {kind:>7} {query_count:>8} {min(timings):>8.1f} "
                f"{statistics.median(timings):>10.1f} {size_bytes:>10}"
            )
    largest = SIZES[-1]
    print(
        f"protocol page with {largest:,} evaluations: median {figures[largest, 'cached']:.1f} ms from the page cache, "
        f"{figures[largest, 'afresh']:.1f} ms rendered afresh (goal <= {GOAL_MS} ms): "
        f"{figures[largest, 'cached'] / GOAL_MS:.2f} / {figures[largest, 'afresh'] / GOAL_MS:.2f} of the goal"
    )


if __name__ == "__main__":
    main()
