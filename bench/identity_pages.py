"""Cross-paper pages at the size a popular model and task reach: the task page (and a later page of
one of its tables), the model page (and one task's every measurement), the work, source and
configuration pages and the agreements API over a catalogue of WORKS papers, each scoring TASKS
tasks for MODELS_PER_WORK models drawn from a pool of MODELS (one model, the first, tested by every
paper), with one copy of a rounded printing per paper and publication dates of every precision
(year, year-month, day: the task page's best-over-time charts); the rows of that task and that
model are source checked. Prints the SQL query count, the render time (min and median of REQUESTS
requests, the page cache emptied before each, and the median CPU time of this process), the page
size, each page's time and size as a share of the goals (GOAL_MS, GOAL_BYTES: a public page is
bounded in time and size whatever the catalogue's), and the slowest and largest page.

Run: .venv/bin/python bench/identity_pages.py [--works 100]   (a throw-away SQLite database under
a temp folder, or the database named by DATABASE_URL if set: then it must be a scratch database).
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
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-identity-")

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import Q  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from records.models import Configuration, Dataset, Evaluation, GenomicModel, Protocol, Result, Source, Work  # noqa: E402
from reviews.services import review_transition_apply  # noqa: E402

TASKS = 20
MODELS = 100
MODELS_PER_WORK = 20
REQUESTS = 5
GOAL_MS = 300  # "within a few hundred ms" afresh
GOAL_BYTES = 200_000


def published(w: int) -> str:
    """Paper w's publication date: a month apart, every fifth known only to the year, every third to the day."""
    year, month = 2019 + w // 12, w % 12 + 1
    if w % 5 == 4:
        return f"{year}"
    return f"{year}-{month:02d}-15" if w % 3 == 0 else f"{year}-{month:02d}"


def grow(works: int) -> tuple[str, str]:
    """The catalogue; returns (the task every paper scores, the model every paper tests)."""
    pool = GenomicModel.objects.bulk_create(
        GenomicModel(stable_id=f"bench-model-{n}", name=f"Bench model {n:03d}", family="Bench") for n in range(MODELS)
    )
    suite = Dataset.objects.create(stable_id="bench-suite", name="Bench suite")
    tasks = Dataset.objects.bulk_create(
        Dataset(stable_id=f"bench-task-{n}", name=f"Bench task {n}", suite=suite, task_key=f"task_{n}", position=n)
        for n in range(TASKS)
    )
    for w in range(works):
        with transaction.atomic():
            work = Work.objects.create(stable_id=f"bench-work-{w}", title=f"Bench paper {w}")
            source = Source.objects.create(
                stable_id=f"bench-source-{w}", title=f"Bench paper {w}", work=work, published_date=published(w)
            )
            protocol = Protocol.objects.create(
                stable_id=f"bench-protocol-{w}",
                title=f"Bench paper {w}, MCC",
                summary="Bench.",
                metric_name="MCC",
                metric_short_name="mcc",
                metric_unit="MCC" if w % 2 else "MCC x 100",
                metric_direction="higher",
                source=source,
            )
            protocol.datasets.set(tasks)
            chosen = [pool[0], *(pool[1 + (w * 7 + k) % (MODELS - 1)] for k in range(MODELS_PER_WORK - 1))]
            configurations = Configuration.objects.bulk_create(
                Configuration(stable_id=f"bench-cfg-{w}-{model.pk}", name=f"{model.name} in paper {w}", model=model)
                for model in chosen
            )
            evaluations = Evaluation.objects.bulk_create(
                Evaluation(
                    stable_id=f"bench-ev-{w}-{c.pk}-{t.pk}",
                    title="Bench evaluation",
                    protocol=protocol,
                    configuration=c,
                    dataset=t,
                    measured_by="authors" if i == 0 else "third_party",
                    measured_by_name="" if i == 0 else f"Bench group {w}",
                    reading_method="table",
                    source=source,
                    source_locator="Table 1",
                    quote="A quoted row.",
                    original_citation="Bench leaderboard" if (w % 10 == 9 and i == 0) else "",
                    original_basis="stated" if (w % 10 == 9 and i == 0) else "",
                )
                for i, c in enumerate(configurations)
                for t in tasks
            )
            scale = Decimal(1) if w % 2 else Decimal(100)
            Result.objects.bulk_create(
                Result(
                    stable_id=f"{e.stable_id}-r",
                    evaluation=e,
                    value=(Decimal(40 + (index * 13 + w) % 50) / 100 * scale).quantize(Decimal("0.001") * scale),
                    unit=protocol.metric_unit,
                    printed_value=str(
                        (Decimal(40 + (index * 13 + w) % 50) / 100 * scale).quantize(Decimal("0.001") * scale)
                    ),
                    uncertainty_kind="sd",
                    uncertainty_value=Decimal("0.020") * scale,
                )
                for index, e in enumerate(evaluations)
            )
    # The rows the two pages rank are source checked, through the review service as a curator's are.
    checked = Evaluation.objects.filter(Q(dataset=tasks[0]) | Q(configuration__model=pool[0]))
    for evaluation in checked.iterator():
        review_transition_apply(
            record=evaluation, transition="check_source", actor=None, reason="bench", automatic=True
        )
    return tasks[0].stable_id, pool[0].stable_id


def measure(client: Client, url: str) -> tuple[int, list[float], list[float], int]:
    """The page's query count, its wall and CPU times (ms, REQUESTS requests afresh) and its size.
    The CPU time is this process's (SQLite's work included, PostgreSQL's not): on a shared machine
    it says what the wall time would be without the other processes."""
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    count = len(queries)
    timings, cpu = [], []
    for _ in range(REQUESTS):
        cache.clear()
        started, started_cpu = time.perf_counter(), time.process_time()
        client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return count, timings, cpu, len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--works", type=int, default=100)
    works = parser.parse_args().works
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    task, model = grow(works)
    with connection.cursor() as cursor:  # the planner's statistics, as a database in use has them
        cursor.execute("ANALYZE")
    evaluations = Evaluation.objects.count()
    print(
        f"database: {connection.vendor}; {works} papers, {GenomicModel.objects.count()} models, "
        f"{evaluations:,} evaluations (built in {time.perf_counter() - started:.0f} s)"
    )
    print(
        f"task {task}: {Evaluation.objects.filter(dataset__stable_id=task).count():,} evaluations; "
        f"model {model}: {Evaluation.objects.filter(configuration__model__stable_id=model).count():,}"
    )
    client = Client(HTTP_HOST="localhost")
    configuration = Configuration.objects.filter(model__stable_id=model).order_by("stable_id").first()
    assert configuration is not None
    pages = {
        "task page": f"/datasets/{task}/",
        "task page, table page 40": f"/datasets/{task}/?table=mcc-mcc&page=40",
        "model page": f"/models/{model}/",
        "model page, one task": f"/models/{model}/?task={task}&metric=mcc",
        "work page": "/works/bench-work-0/",
        "source page": "/sources/bench-source-0/",
        "configuration page": f"/configurations/{configuration.stable_id}/",
        "agreements API (task)": f"/api/v1/agreements/?task_id={task}",
        "agreements API (model)": f"/api/v1/agreements/?model_id={model}",
    }
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(
        f"{'page':<26} {'queries':>8} {'min ms':>8} {'median ms':>10} {'cpu ms':>8} {'bytes':>10} "
        f"{'time/goal':>10} {'size/goal':>10}"
    )
    medians, sizes = {}, {}
    for name, url in pages.items():
        count, timings, cpu, size = measure(client, url)
        medians[name], sizes[name] = statistics.median(timings), size
        print(
            f"{name:<26} {count:>8} {min(timings):>8.1f} {medians[name]:>10.1f} {statistics.median(cpu):>8.1f} "
            f"{size:>10,} {medians[name] / GOAL_MS:>10.2f} {size / GOAL_BYTES:>10.2f}"
        )
    print(f"load average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    html = [name for name in pages if "API" not in name]
    slowest = max(html, key=lambda name: medians[name])
    largest = max(html, key=lambda name: sizes[name])
    print(
        f"slowest page: {slowest}, median {medians[slowest]:.0f} ms afresh (goal <= {GOAL_MS} ms): "
        f"{medians[slowest] / GOAL_MS:.2f} of the goal"
    )
    print(
        f"largest page: {largest}, {sizes[largest]:,} bytes (goal < {GOAL_BYTES:,}): "
        f"{sizes[largest] / GOAL_BYTES:.2f} of the goal"
    )


if __name__ == "__main__":
    main()
