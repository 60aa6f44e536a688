"""Protocol page cost: the real GUE page (270 results of the demo content) and suite protocols of
10, 1,000 and 10,000 evaluations (tasks x configurations, as a paper's table), each with a few rows
proposed and excluded and a spread on every value, and the largest with one task chosen and with
its evaluations filtered. Prints the SQL query count, the render time
(min and median of REQUESTS requests) and the page's size, rendered three ways: afresh (the page
cache emptied before each request; the protocol's summary current, as it is once one reader has
read the page since the last write to the protocol), after a write (the page cache emptied and the
protocol's summary gone too, as for the first reader after a write: records.protocol_summary reads
every row and stores the summary) and from the page cache (pages/page_cache.py, keyed by the
catalogue version). The last lines compare the slowest afresh render with the goal (GOAL_MS) and
the GUE page's size with its goal (GOAL_BYTES).

Run: .venv/bin/python bench/page_queries.py   (uses a throw-away SQLite database under a temp
folder, or the database named by DATABASE_URL if set: then it must be a scratch database; on
PostgreSQL the tables are analysed once seeded, as autovacuum would).
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
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.machine import machine_line  # noqa: E402
from records.examples import examples_load  # noqa: E402
from records.models import (  # noqa: E402
    Configuration,
    Dataset,
    Evaluation,
    Protocol,
    ProtocolSummary,
    Result,
    Source,
)
from reviews.services import review_transition_apply  # noqa: E402

# (evaluations, tasks): configurations = evaluations / tasks
SIZES = ((10, 2), (1000, 20), (10000, 20))
GUE = "gue-mcc-x100-zhou-2024"
REQUESTS = 10
GOAL_MS = 100
GOAL_BYTES = 200_000


def seed(size: int, task_count: int) -> Protocol:
    """A suite protocol of `size` evaluations; every hundredth row stays proposed, every
    two-hundred-and-first is excluded, the rest are source checked through the review service."""
    with transaction.atomic():
        source = Source.objects.create(stable_id=f"bench-source-{size}", title=f"Bench paper of {size} rows")
        suite = Dataset.objects.create(stable_id=f"bench-suite-{size}", name=f"Bench suite {size}")
        tasks = Dataset.objects.bulk_create(
            Dataset(stable_id=f"bench-{size}-task-{n}", name=f"Task {n:02d}", suite=suite, task_key=f"t{n}", position=n)
            for n in range(task_count)
        )
        protocol = Protocol.objects.create(
            stable_id=f"bench-protocol-{size}",
            title=f"Bench protocol with {size} evaluations",
            summary="Bench.",
            metric_name="Matthews correlation coefficient",
            metric_short_name="MCC",
            metric_unit="MCC x 100",
            metric_direction="higher",
            source=source,
        )
        protocol.datasets.set([suite])
        configurations = Configuration.objects.bulk_create(
            Configuration(stable_id=f"bench-{size}-config-{n}", name=f"Model {n:05d}")
            for n in range(size // task_count)
        )
        evaluations = Evaluation.objects.bulk_create(
            Evaluation(
                stable_id=f"bench-{size}-evaluation-{c.pk}-{t.pk}",
                title=f"{c.name} on {t.name}",
                protocol=protocol,
                configuration=c,
                dataset=t,
                measured_by="authors",
                reading_method="table",
                source=source,
                source_locator="Table 1",
                quote="A quoted row of the table.",
            )
            for c in configurations
            for t in tasks
        )
        Result.objects.bulk_create(
            Result(
                stable_id=f"{e.stable_id}-r",
                evaluation=e,
                value=Decimal(index * 7919 % 5000) / 100,
                unit="MCC x 100",
                printed_value=f"{Decimal(index * 7919 % 5000) / 100}",
                uncertainty_kind="sd",
                uncertainty_value=Decimal("0.60"),
            )
            for index, e in enumerate(evaluations)
        )
    for index, evaluation in enumerate(evaluations):
        if index % 100 == 99:
            continue
        review_transition_apply(
            record=evaluation, transition="check_source", actor=None, reason="bench", automatic=True
        )
        if index % 201 == 200:
            review_transition_apply(
                record=evaluation, transition="exclude", actor=None, reason="A bench concern.", automatic=True
            )
    return protocol


def measure(client: Client, url: str, *, kind: str, protocol: Protocol) -> tuple[int, list[float], int]:
    """Query count of one request, the times of REQUESTS requests (ms) and the page's size."""

    def prepare() -> None:
        if kind != "cached":
            cache.clear()
        if kind == "after a write":
            ProtocolSummary.objects.filter(protocol=protocol).delete()

    if kind == "afresh":
        client.get(url)  # a reader since the last write has stored the summary
    prepare()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    query_count = len(queries)  # read now: the next request resets the query log
    assert response.status_code == 200, (url, response.status_code)
    timings = []
    for _ in range(REQUESTS):
        prepare()
        started = time.perf_counter()
        client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
    return query_count, timings, len(response.content)


def main() -> None:
    call_command("migrate", verbosity=0)
    call_command("import_seed", verbosity=0)
    examples_load()
    client = Client(HTTP_HOST="localhost")
    print(f"database: {connection.vendor}")
    print(machine_line())
    print(f"{'page':>28} {'render':>13} {'queries':>8} {'min ms':>8} {'median ms':>10} {'bytes':>10}")
    pages = {"GUE (270 results)": (Protocol.objects.get(stable_id=GUE), "")}
    for size, task_count in SIZES:
        started = time.perf_counter()
        protocol = seed(size, task_count)
        print(f"(seeded {size:,} evaluations in {time.perf_counter() - started:.0f} s)", file=sys.stderr)
        pages[f"{size:,} evaluations"] = (protocol, "")
    # The largest protocol with one task chosen (its column header's link), and filtered by who measured.
    task = Dataset.objects.get(stable_id=f"bench-{SIZES[-1][0]}-task-3")
    pages[f"{SIZES[-1][0]:,}, one task"] = (protocol, f"?dataset={task.stable_id}")
    pages[f"{SIZES[-1][0]:,}, filtered"] = (protocol, "?measured_by=authors")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    afresh: dict[str, float] = {}
    sizes: dict[str, int] = {}
    for name, (protocol, query) in pages.items():
        url = f"/protocols/{protocol.stable_id}/{query}"
        for kind in ("afresh", "after a write", "cached"):
            query_count, timings, size_bytes = measure(client, url, kind=kind, protocol=protocol)
            if kind == "afresh":
                afresh[name], sizes[name] = statistics.median(timings), size_bytes
            print(
                f"{name:>28} {kind:>13} {query_count:>8} {min(timings):>8.1f} "
                f"{statistics.median(timings):>10.1f} {size_bytes:>10,}"
            )
    slowest = max(afresh, key=afresh.__getitem__)
    print(
        f"slowest afresh: {slowest}, median {afresh[slowest]:.1f} ms (goal <= {GOAL_MS} ms): "
        f"{afresh[slowest] / GOAL_MS:.2f} of the goal"
    )
    gue = "GUE (270 results)"
    print(f"GUE page: {sizes[gue]:,} bytes (goal < {GOAL_BYTES:,}): {sizes[gue] / GOAL_BYTES:.2f} of the goal")


if __name__ == "__main__":
    main()
