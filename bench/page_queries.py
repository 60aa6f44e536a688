"""Protocol page cost with 10 and 1,000 evaluations: SQL query count and median render time.

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

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from records import models as m  # noqa: E402
from records.services import record_save  # noqa: E402

SIZES = (10, 1000)
REQUESTS = 20


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


def main() -> None:
    call_command("migrate", verbosity=0)
    client = Client(HTTP_HOST="localhost")
    print(f"database: {connection.vendor}")
    print(f"{'evaluations':>12} {'queries':>8} {'median ms':>10} {'bytes':>10}")
    for size in SIZES:
        protocol = seed(size)
        url = f"/protocols/{protocol.stable_id}/"
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        query_count = len(queries)  # read now: the next request resets the query log
        assert response.status_code == 200
        timings = []
        for _ in range(REQUESTS):
            started = time.perf_counter()
            client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
        print(f"{size:>12} {query_count:>8} {statistics.median(timings):>10.1f} {len(response.content):>10}")


if __name__ == "__main__":
    main()
