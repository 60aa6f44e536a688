"""How long an import takes against a plain bulk insert of the same rows, and whether a dry run
of a large document lets other writes through.

Builds import documents in the shape of data/examples/ (one source, a suite of 20 tasks,
10 configurations, one protocol, one evaluation with one result per row) with 2,000 and 20,000
results, and for each size times

- bulk: the same rows (sources ... results) built as model instances and inserted with
  `bulk_create`, nothing else (no validation, history, snapshot or audit row);
- dry run and import: `records_import` (as the API and `import_records` call it) of a document
  with other stable ids, with the same validation, history rows and snapshots as any import;

and prints the seconds and the import's ratio to the bulk insert. Then, while a dry run of the
20,000-result document plans in another process, it PATCHes a configuration through the API and
prints how long that answer took, then how long one waits while an import of the smallest
document writes, and then how long each of a run of PATCHes waits while an import of the largest
writes (each of its batches, PORTAL_IMPORT_WRITE_BATCH_RECORDS records, holds the catalogue's
write lock for its own short transaction; other writes get through between batches).

Run: .venv/bin/python bench/import_speed.py [SIZES ...] [--concurrency-only]   (default 2000 20000;
--concurrency-only imports the largest document and times the PATCH only; a throw-away SQLite
database under a temp folder, or the database named by DATABASE_URL if set: then it must be a
scratch database).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
if not os.environ.get("DATABASE_URL"):
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-imports-")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections, transaction  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from records.imports import FORMAT_NAME, FORMAT_VERSION, records_import  # noqa: E402
from records.models import Configuration, Dataset, Evaluation, Protocol, Result, Source  # noqa: E402
from reviews.services import roles_ensure  # noqa: E402

TASKS = 20
CONFIGURATIONS = 10
UNIT = "MCC x 100"


def document(prefix: str, results: int) -> dict:
    """An import document with `results` results, one per evaluation, its stable ids under `prefix`."""
    source = f"{prefix}-source"
    suite = f"{prefix}-suite"
    protocol = f"{prefix}-protocol"
    tasks = [f"{prefix}-task-{t}" for t in range(TASKS)]
    configurations = [f"{prefix}-cfg-{c}" for c in range(CONFIGURATIONS)]
    evaluations = []
    for row in range(results):
        task, configuration = tasks[row % TASKS], configurations[(row // TASKS) % CONFIGURATIONS]
        value = f"{(row * 37) % 10000 / 100:.2f}"
        evaluations.append(
            {
                "stable_id": f"{prefix}-ev-{row}",
                "title": f"Configuration {configuration} on {task}, row {row}",
                "protocol": protocol,
                "configuration": configuration,
                "dataset": task,
                "measured_by": "authors",
                "measured_by_name": "The authors",
                "source": source,
                "source_locator": f"Table 4, row {row // TASKS}, column {row % TASKS}",
                "quote": f"{configuration} | {value}",
                "reading_method": "table",
                "setup": "Fine-tuned on the task's training split, scored on its test split.",
                "results": [
                    {
                        "stable_id": f"{prefix}-ev-{row}-r1",
                        "value": value,
                        "unit": UNIT,
                        "printed_value": value,
                        "relation": "absolute",
                    }
                ],
            }
        )
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "title": f"Synthetic benchmark table {prefix} ({results} results)",
        "sources": [
            {
                "stable_id": source,
                "title": f"A synthetic benchmark paper {prefix}",
                "kind": "paper",
                "authors_short": "Bench et al. 2026",
                "published_date": "2026",
                "url": f"https://example.org/{prefix}",
            }
        ],
        "datasets": [
            {
                "stable_id": suite,
                "name": f"Suite {prefix}",
                "source": source,
                "tasks": [
                    {
                        "stable_id": task,
                        "name": f"Task {t}",
                        "task_key": f"task-{t}",
                        "position": t + 1,
                        "source": source,
                    }
                    for t, task in enumerate(tasks)
                ],
            }
        ],
        "configurations": [
            {"stable_id": c, "name": f"Model {c}", "short_name": c[-12:], "source": source} for c in configurations
        ],
        "protocols": [
            {
                "stable_id": protocol,
                "title": f"Suite {prefix} scored by MCC x 100",
                "summary": "Each model fine-tuned on each task, scored on its test split.",
                "metric": {
                    "name": "MCC",
                    "short_name": "mcc",
                    "description": "Matthews correlation coefficient x 100",
                    "unit": UNIT,
                    "direction": "higher",
                },
                "source": source,
                "datasets": [suite, *tasks],
            }
        ],
        "evaluations": evaluations,
    }


def bulk_insert(doc: dict) -> float:
    """Seconds to build and bulk_create the document's rows as model instances in one transaction, nothing else."""
    started = time.perf_counter()
    with transaction.atomic():
        _bulk_insert(doc)
    return time.perf_counter() - started


def _bulk_insert(doc: dict) -> None:
    (source_item,) = doc["sources"]
    source = Source.objects.bulk_create([Source(**source_item)])[0]
    (suite_item,) = doc["datasets"]
    suite = Dataset.objects.bulk_create(
        [Dataset(**{k: v for k, v in suite_item.items() if k not in ("tasks", "source")}, source=source)]
    )[0]
    tasks = Dataset.objects.bulk_create(
        [Dataset(**{**item, "source": source}, suite=suite) for item in suite_item["tasks"]]
    )
    task_of = {task.stable_id: task for task in tasks}
    configurations = Configuration.objects.bulk_create(
        [Configuration(**{**item, "source": source}) for item in doc["configurations"]]
    )
    configuration_of = {c.stable_id: c for c in configurations}
    (protocol_item,) = doc["protocols"]
    metric = protocol_item["metric"]
    protocol = Protocol.objects.bulk_create(
        [
            Protocol(
                stable_id=protocol_item["stable_id"],
                title=protocol_item["title"],
                summary=protocol_item["summary"],
                source=source,
                **{f"metric_{key}": value for key, value in metric.items()},
            )
        ]
    )[0]
    protocol.datasets.set([suite, *tasks])
    evaluations = Evaluation.objects.bulk_create(
        [
            Evaluation(
                **{
                    k: v
                    for k, v in item.items()
                    if k not in ("protocol", "configuration", "dataset", "source", "results")
                },
                protocol=protocol,
                configuration=configuration_of[item["configuration"]],
                dataset=task_of[item["dataset"]],
                source=source,
            )
            for item in doc["evaluations"]
        ],
        batch_size=1000,
    )
    Result.objects.bulk_create(
        [
            Result(
                **{
                    **result,
                    "value": Decimal(result["value"]),
                },
                evaluation=evaluation,
            )
            for item, evaluation in zip(doc["evaluations"], evaluations, strict=True)
            for result in item["results"]
        ],
        batch_size=1000,
    )


def timed_import(doc: dict, curator: User, *, dry_run: bool) -> float:
    started = time.perf_counter()
    report = records_import(document=doc, actor=curator, dry_run=dry_run)
    seconds = time.perf_counter() - started
    assert len(report.created["results"]) == len(doc["evaluations"]), report.as_dict()
    return seconds


def timed_patch(curator: User, target: str, description: str) -> float:
    """Seconds a curator's PATCH of the configuration `target` through the API takes (a new
    `description` each time: a PATCH that changes nothing writes nothing)."""
    client = APIClient(HTTP_HOST="localhost")
    client.force_authenticate(curator)
    began = time.perf_counter()
    response = client.patch(f"/api/v1/configurations/{target}/", {"description": description}, format="json")
    seconds = time.perf_counter() - began
    assert response.status_code == 200, response.content
    return seconds


def _import_child(doc: dict, curator_id: int, dry_run: bool, reached: Any, finished: Any) -> None:
    connections.close_all()  # the parent's connections stay the parent's

    def progress(done: int, total: int) -> None:
        # a dry run: a tenth planned; an import: a tenth written (its first half is the plan)
        if done >= (total // 10 if dry_run else total // 2 + total // 20):
            reached.set()

    try:
        records_import(document=doc, actor=User.objects.get(pk=curator_id), dry_run=dry_run, progress=progress)
    finally:
        finished.set()
        reached.set()


def patch_during_import(doc: dict, curator: User, target: str, *, dry_run: bool = True) -> tuple[float, float]:
    """Seconds a PATCH of `target` took while a dry run of `doc` planned (or an import of it wrote)
    in another process (as a web worker and an import job run), and the import's seconds."""
    context = multiprocessing.get_context("fork")
    planning, finished = context.Event(), context.Event()
    connections.close_all()
    began_dry_run = time.perf_counter()
    child = context.Process(target=_import_child, args=(doc, curator.pk, dry_run, planning, finished))
    child.start()
    planning.wait()
    patch_seconds = timed_patch(curator, target, f"edited during an import of {len(doc['evaluations'])} ({dry_run=})")
    still_planning = not finished.is_set()
    child.join()
    dry_seconds = time.perf_counter() - began_dry_run
    assert child.exitcode == 0, "the dry run failed"
    if dry_run:
        assert still_planning, "the dry run ended before the PATCH was answered: use a larger document"
    return patch_seconds, dry_seconds


def patches_while_importing(doc: dict, curator: User, target: str) -> tuple[list[float], float]:
    """The seconds of each PATCH of `target`, one after another, sent from the time an import of
    `doc` in another process has written a tenth of it until it ends, and the import's seconds."""
    context = multiprocessing.get_context("fork")
    writing, finished = context.Event(), context.Event()
    connections.close_all()
    began = time.perf_counter()
    child = context.Process(target=_import_child, args=(doc, curator.pk, False, writing, finished))
    child.start()
    writing.wait()
    waits = []
    while not finished.is_set():
        waits.append(timed_patch(curator, target, f"edit {len(waits)} while {len(doc['evaluations'])} are written"))
        time.sleep(0.05)
    child.join()
    assert child.exitcode == 0, "the import failed"
    return waits, time.perf_counter() - began


def main() -> None:
    concurrency_only = "--concurrency-only" in sys.argv
    sizes = [int(size) for size in sys.argv[1:] if size.isdigit()] or [2000, 20000]
    call_command("migrate", verbosity=0)
    roles_ensure()
    curator = User.objects.create_user("bench-curator", is_staff=True)
    curator.groups.add(Group.objects.get(name="Curators"))
    curator = User.objects.get(pk=curator.pk)
    print(f"backend: {connection.vendor}")
    for size in sizes:
        if concurrency_only:
            timed_import(document(f"imp{size}", size), curator, dry_run=False)
            continue
        bulk = bulk_insert(document(f"bulk{size}", size))
        dry = timed_import(document(f"imp{size}", size), curator, dry_run=True)
        real = timed_import(document(f"imp{size}", size), curator, dry_run=False)
        rows = Result.objects.filter(stable_id__startswith=f"imp{size}-").count()
        assert rows == size
        print(
            f"{size:6d} results: bulk insert {bulk:6.2f} s, dry run {dry:6.2f} s ({dry / bulk:4.1f}x), "
            f"import {real:6.2f} s ({real / bulk:4.1f}x the bulk insert)"
        )
    largest = max(sizes)
    target = f"imp{largest}-cfg-0"
    idle = min(timed_patch(curator, target, f"edit {n}") for n in range(3))  # the first request loads the API
    patch, dry = patch_during_import(document(f"dry{largest}", largest), curator, target)
    print(
        f"PATCH during a dry run of {largest} results: answered in {patch:.3f} s "
        f"(with nothing else running: {idle:.3f} s; the dry run took {dry:.2f} s)"
    )
    smallest = min(sizes)
    patch, real = patch_during_import(document(f"late{smallest}", smallest), curator, target, dry_run=False)
    print(
        f"PATCH sent while an import of {smallest} results writes: answered in {patch:.3f} s "
        f"(the import took {real:.2f} s; it waits for the import's batch transaction then writing)"
    )
    waits, real = patches_while_importing(document(f"busy{largest}", largest), curator, target)
    print(
        f"PATCHes sent one after another while an import of {largest} results writes: {len(waits)} answered, "
        f"slowest {max(waits):.3f} s, median {sorted(waits)[len(waits) // 2]:.3f} s (the import took {real:.2f} s, "
        f"in batches of {settings.IMPORT_WRITE_BATCH_RECORDS} records)"
    )


if __name__ == "__main__":
    main()
