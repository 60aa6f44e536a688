"""The coverage page and its CSV at the size of a 200-paper catalogue: PROTOCOLS protocols (the last
EMPTY of them with nothing recorded) and CONFIGURATIONS tested configurations, RESULTS results in
all. Configurations come four to a model (MODELS models) except the last STANDALONE, which name
none; every protocol with results scores TASKS tasks of its suite for the POPULAR most common
configurations and about a hundred more spread over the rest, one evaluation and one result each.
Areas, contexts and suites (SUITES of TASKS tasks) are spread over the protocols; some evaluations of
the first protocols are source checked or excluded through the review service.

Prints, for the first page, a filtered page (one area and one suite), a later page of rows and
columns, and the CSV: the SQL query count, the time afresh (min and median of REQUESTS requests, the
page cache emptied before each), the size, and the ratios to the goals (GOAL_MS, GOAL_BYTES; the CSV
has no size goal: it holds one row per protocol and configuration with evaluations).

Run: .venv/bin/python bench/coverage.py [--requests 5]   (a throw-away SQLite database under a temp
folder, or the database named by DATABASE_URL if set: then it must be a scratch database, e.g.
DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_coverage; one that holds the catalogue from an
earlier run is measured as it is).
"""

from __future__ import annotations

import argparse
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
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-coverage-")

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.machine import machine_line  # noqa: E402
from records.models import Area, Configuration, Context, Dataset, Evaluation, GenomicModel, Protocol, Result, Source  # noqa: E402
from reviews.services import review_transition_apply  # noqa: E402

PROTOCOLS = 200
EMPTY = 8
CONFIGURATIONS = 5000
STANDALONE = 1000
MODELS = (CONFIGURATIONS - STANDALONE) // 4
RESULTS = 300_000
TASKS = 10
SUITES = 20
AREAS = 4
POPULAR = 50
REQUESTS = 5
GOAL_MS = 1000
GOAL_BYTES = 2_000_000
BATCH = 5000


def configurations_of(index: int, count: int) -> list[int]:
    """The configurations (indexes) protocol `index` scores: the popular ones, then a spread of the rest."""
    spread = [POPULAR + (index * 97 + k * 31) % (CONFIGURATIONS - POPULAR) for k in range(count - POPULAR)]
    return list(range(POPULAR)) + sorted(set(spread))


def grow() -> None:
    """The catalogue."""
    source = Source.objects.create(stable_id="bench-source", title="Bench paper")
    areas = Area.objects.bulk_create(Area(stable_id=f"bench-area-{n}", label=f"Bench area {n}") for n in range(AREAS))
    contexts = Context.objects.bulk_create(
        Context(stable_id=f"bench-context-{n}", label=f"Bench context {n}") for n in range(2)
    )
    suites = Dataset.objects.bulk_create(
        Dataset(stable_id=f"bench-suite-{n}", name=f"Bench suite {n}") for n in range(SUITES)
    )
    tasks = Dataset.objects.bulk_create(
        Dataset(stable_id=f"bench-task-{s}-{t}", name=f"Bench task {s}.{t}", suite=suite, task_key=f"t{t}", position=t)
        for s, suite in enumerate(suites)
        for t in range(TASKS)
    )
    models = GenomicModel.objects.bulk_create(
        GenomicModel(stable_id=f"bench-model-{n}", name=f"Bench model {n:04d}") for n in range(MODELS)
    )
    configurations = Configuration.objects.bulk_create(
        (
            Configuration(
                stable_id=f"bench-cfg-{n}",
                name=f"Bench configuration {n:04d}",
                short_name=f"cfg {n}",
                method=f"method {n % 4}",
                model=models[n // 4] if n < CONFIGURATIONS - STANDALONE else None,
            )
            for n in range(CONFIGURATIONS)
        ),
        batch_size=BATCH,
    )
    recorded = PROTOCOLS - EMPTY
    per_protocol, extra = divmod(RESULTS // TASKS, recorded)  # configurations per protocol
    protocols = Protocol.objects.bulk_create(
        Protocol(
            stable_id=f"bench-protocol-{p:03d}",
            title=f"Bench protocol {p:03d}",
            summary="Bench.",
            metric_name="MCC",
            metric_short_name="mcc",
            metric_unit="MCC",
            metric_direction="higher",
            source=source,
        )
        for p in range(PROTOCOLS)
    )
    for p, protocol in enumerate(protocols):
        protocol.areas.set([areas[p % AREAS]])
        protocol.contexts.set([contexts[p % 2]])
        protocol.datasets.set([suites[p % SUITES], *tasks[(p % SUITES) * TASKS : (p % SUITES + 1) * TASKS]])
    for p, protocol in enumerate(protocols[:recorded]):
        chosen = configurations_of(p, per_protocol + (1 if p < extra else 0))
        suite_tasks = tasks[(p % SUITES) * TASKS : (p % SUITES + 1) * TASKS]
        with transaction.atomic():
            evaluations = Evaluation.objects.bulk_create(
                (
                    Evaluation(
                        stable_id=f"bench-ev-{p}-{c}-{t}",
                        title="Bench evaluation",
                        protocol=protocol,
                        configuration=configurations[c],
                        dataset=task,
                        measured_by="authors",
                        reading_method="table",
                        source=source,
                        source_locator="Table 1",
                        quote="A quoted row.",
                    )
                    for c in chosen
                    for t, task in enumerate(suite_tasks)
                ),
                batch_size=BATCH,
            )
            Result.objects.bulk_create(
                (
                    Result(
                        stable_id=f"{e.stable_id}-r",
                        evaluation=e,
                        value=Decimal(40 + (i * 13 + p) % 50) / 100,
                        unit="MCC",
                        printed_value=str(Decimal(40 + (i * 13 + p) % 50) / 100),
                    )
                    for i, e in enumerate(evaluations)
                ),
                batch_size=BATCH,
            )
    # Mixed states on the first page's cells, through the review service as a curator's are.
    first_task = Evaluation.objects.filter(protocol__in=protocols[:50], dataset__position=0)
    for evaluation in first_task.filter(configuration__in=configurations[:POPULAR]).order_by("pk").iterator():
        review_transition_apply(
            record=evaluation, transition="check_source", actor=None, reason="bench", automatic=True
        )
        if evaluation.pk % 10 == 0:
            review_transition_apply(
                record=evaluation, transition="exclude", actor=None, reason="bench concern", automatic=True
            )


# The filtered page's choice: a quarter of the protocols by area, a twentieth by suite (ten in all).
FILTERED = "area=bench-area-3&suite=bench-suite-3"


def measure(client: Client, url: str, requests: int) -> tuple[int, list[float], int]:
    """Queries, times afresh (ms) and bytes of `url` (a streamed answer read to its end)."""

    def get() -> bytes:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        return b"".join(response.streaming_content) if response.streaming else response.content

    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        body = get()
    count = len(queries)  # read now: the next request empties the log its slice is read from
    timings = []
    for _ in range(requests):
        cache.clear()
        started = time.perf_counter()
        get()
        timings.append((time.perf_counter() - started) * 1000)
    return count, timings, len(body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=REQUESTS)
    requests = parser.parse_args().requests
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    if not Protocol.objects.filter(stable_id__startswith="bench-protocol-").exists():
        grow()  # a scratch database that holds the catalogue already is measured as it is
    print(
        f"database: {connection.vendor}; {Protocol.objects.count()} protocols, "
        f"{Configuration.objects.count():,} configurations ({GenomicModel.objects.count():,} models), "
        f"{Evaluation.objects.count():,} evaluations, {Result.objects.count():,} results "
        f"(built in {time.perf_counter() - started:.0f} s)"
    )
    print(machine_line())
    client = Client(HTTP_HOST="localhost")
    pages = {
        "first page": "/coverage/",
        "filtered (area, suite)": f"/coverage/?{FILTERED}",
        "rows 4, columns 3": "/coverage/?page=4&columns=3",
        "CSV": "/coverage.csv",
    }
    print(
        f"{'page':<24} {'queries':>8} {'min ms':>8} {'median ms':>10} {'bytes':>12} {'ms/goal':>8} {'bytes/goal':>10}"
    )
    for name, url in pages.items():
        count, timings, size = measure(client, url, requests)
        median = statistics.median(timings)
        size_ratio = "" if url.endswith(".csv") else f"{size / GOAL_BYTES:.3f}"
        print(
            f"{name:<24} {count:>8} {min(timings):>8.1f} {median:>10.1f} {size:>12,} "
            f"{median / GOAL_MS:>8.3f} {size_ratio:>10}"
        )
    print(f"goals: at most {GOAL_MS} ms afresh (median) and {GOAL_BYTES:,} bytes of HTML a page")


if __name__ == "__main__":
    main()
