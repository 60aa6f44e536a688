"""Release build cost at 100,000 and 1,000,000 results: the build's wall time, the time `gzip -n -9`
plus `sha256sum` take on the same CSV bytes (the floor any builder pays), their ratio, and the
builder's peak memory.

Run: .venv/bin/python bench/release_build.py [--repeats N] [--compare-with TREE] [SIZES...]
     (default: 3 repeats of 100000 1000000)

It uses a throw-away SQLite database and release folder under a temp folder, or the database
named by DATABASE_URL if set: then it must be a scratch database. The catalogue grows to each
size in turn (bulk inserts: a bench, not a curation; the seconds it takes are printed), and each
size is built `--repeats` times by the real service (`releases.build.release_build`: export, write,
memberships, validate, install, publish), each in a fresh process; one source more before each
build gives each release new content (a build of unchanged content publishes nothing). Each
build's bag is then compressed again by `gzip -n -9` and hashed by `sha256sum`, right after it:
its ratio is build seconds / those seconds, printed as min / median over the repeats.

Memory, two figures: the builder process's peak resident set (`resource.getrusage(RUSAGE_SELF)
.ru_maxrss`, Django and the interpreter included, so read its growth between sizes), and the Python
heap's peak under `tracemalloc` while a second fresh process writes the same bundle (with its
memberships reported to a counting sink). On a shared, busy machine wall seconds swing with the
load: each size also prints the CPU seconds of the whole builder process (start-up included) and
their ratio to the tools' CPU seconds. Builds use the default chunk size
(RELEASE_BUILD_CHUNK_ROWS, 10,000 rows).

`--compare-with TREE` (another checkout of this repository, e.g. `git worktree add /tmp/before
<commit>`) builds each repeat twice, side by side on the same database: first with TREE's code
("before"), then with this one's ("after").
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
if not os.environ.get("PORTAL_VAR_DIR"):
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-release-")
os.environ.setdefault("PORTAL_RELEASES_DIR", str(Path(os.environ["PORTAL_VAR_DIR"]) / "bench-releases"))

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from records.models import (  # noqa: E402
    BaselineKind,
    BaselineRole,
    Configuration,
    Dataset,
    Evaluation,
    EvidenceRow,
    Protocol,
    Result,
    Source,
)

SIZES = (100_000, 1_000_000)
RESULTS_PER_EVALUATION = 2
RESULTS_PER_PROTOCOL = 100
BATCH = 5_000


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ------------------------------------------------------------------ seeding


def bench_value(evaluation: int, result: int) -> Decimal:
    return Decimal(evaluation % 997) + Decimal(result) / Decimal(8)


def grow_catalogue(results: int) -> None:
    """Add rows until the catalogue holds `results` results (bulk inserts, proposed records)."""
    have = Result.objects.count()
    if have >= results:
        return
    protocols = results // RESULTS_PER_PROTOCOL
    start_protocol = Protocol.objects.count()
    sources = [
        Source(stable_id=f"bench-source-{i}", title=f"Bench source {i}, a paper", venue="Bench", kind="paper")
        for i in range(start_protocol, protocols)
    ]
    Source.objects.bulk_create(sources, batch_size=BATCH)
    source_ids = dict(Source.objects.values_list("stable_id", "pk"))
    Protocol.objects.bulk_create(
        [
            Protocol(
                stable_id=f"bench-protocol-{i}",
                title=f"Bench protocol {i}",
                summary="Bench.",
                metric_name="Runtime",
                metric_short_name="runtime",
                metric_unit="minute",
                metric_direction="lower",
                source_id=source_ids[f"bench-source-{i}"],
                source_locator=f"Table {i % 9 + 1}",
            )
            for i in range(start_protocol, protocols)
        ],
        batch_size=BATCH,
    )
    protocol_ids = dict(Protocol.objects.values_list("stable_id", "pk"))
    BaselineRole.objects.bulk_create(
        [
            BaselineRole(
                stable_id=f"bench-protocol-{i}-{kind}",
                protocol_id=protocol_ids[f"bench-protocol-{i}"],
                kind=kind,
                selection_rule="Select one.",
            )
            for i in range(start_protocol, protocols)
            for kind in BaselineKind.values
        ],
        batch_size=BATCH,
    )
    if not Dataset.objects.filter(stable_id__startswith="bench-dataset-").exists():
        Dataset.objects.bulk_create(
            [Dataset(stable_id=f"bench-dataset-{i}", name=f"Bench task {i}") for i in range(20)]
        )
    dataset_ids = list(
        Dataset.objects.filter(stable_id__startswith="bench-dataset-").order_by("pk").values_list("pk", flat=True)
    )
    start_configuration = Configuration.objects.count()
    Configuration.objects.bulk_create(
        [
            Configuration(stable_id=f"bench-config-{i}", name=f"Model {i:06d}, fine-tuned")
            for i in range(start_configuration, results // 10)
        ],
        batch_size=BATCH,
    )
    configuration_ids = list(Configuration.objects.order_by("pk").values_list("pk", flat=True))

    start_evaluation = Evaluation.objects.count()
    for first in range(start_evaluation, results // RESULTS_PER_EVALUATION, BATCH):
        last = min(first + BATCH, results // RESULTS_PER_EVALUATION)
        Evaluation.objects.bulk_create(
            [
                Evaluation(
                    stable_id=f"bench-evaluation-{i}",
                    title=f"Bench evaluation {i}",
                    protocol_id=protocol_ids[f"bench-protocol-{i * RESULTS_PER_EVALUATION // RESULTS_PER_PROTOCOL}"],
                    configuration_id=configuration_ids[i % len(configuration_ids)],
                    dataset_id=dataset_ids[i % len(dataset_ids)],
                    measured_by=("authors", "third_party")[i % 2],
                    measured_by_name="" if i % 2 == 0 else "Bench et al.",
                    reading_method="table",
                    source_id=source_ids[f"bench-source-{i * RESULTS_PER_EVALUATION // RESULTS_PER_PROTOCOL}"],
                    source_locator=f"Table {i % 7 + 1}, row {i % 40 + 1}",
                    # the quote prints its results' values, as a table row's does (the value-and-quote check)
                    quote=f"The model reached {', '.join(str(bench_value(i, j)) for j in range(RESULTS_PER_EVALUATION))} "
                    f'minutes, "as reported", in run {i}.',
                )
                for i in range(first, last)
            ]
        )
        evaluation_ids = dict(
            Evaluation.objects.filter(stable_id__in=[f"bench-evaluation-{i}" for i in range(first, last)]).values_list(
                "stable_id", "pk"
            )
        )
        Result.objects.bulk_create(
            [
                Result(
                    stable_id=f"bench-result-{i}-{j}",
                    evaluation_id=evaluation_ids[f"bench-evaluation-{i}"],
                    value=bench_value(i, j),
                    unit="minute",
                    printed_value=f"{bench_value(i, j)} min",
                )
                for i in range(first, last)
                for j in range(RESULTS_PER_EVALUATION)
            ]
        )
        EvidenceRow.objects.bulk_create(
            [
                EvidenceRow(
                    stable_id=f"bench-evidence-{i}",
                    protocol_id=protocol_ids[f"bench-protocol-{i * RESULTS_PER_EVALUATION // RESULTS_PER_PROTOCOL}"],
                    evaluation_id=evaluation_ids[f"bench-evaluation-{i}"],
                    property_name="metric",
                    statement=f"Statement {i}, with a comma.",
                    source_id=source_ids[f"bench-source-{i * RESULTS_PER_EVALUATION // RESULTS_PER_PROTOCOL}"],
                    locator="Methods",
                    quote="A quoted line.",
                )
                for i in range(first, last)
                if i % 5 == 0
            ]
        )


# ------------------------------------------------------------- the builder


def build_in_this_process() -> None:
    """--build: cut a release row and run the real build service; print figures as JSON."""
    from releases.build import release_build
    from releases.models import Release, ReleaseBuild, ReleaseStatus

    release = Release.objects.create(release_date=timezone.localdate(), note="bench")
    ReleaseBuild.objects.create(release=release, status=ReleaseStatus.REQUESTED)
    before = rss_kib()
    started = time.perf_counter()
    built = release_build(release_pk=release.pk)
    seconds = time.perf_counter() - started
    if built.status != ReleaseStatus.PUBLISHED:
        raise SystemExit(f"build failed: {built.error}")
    json.dump(
        {
            "release_id": built.release_id,
            "seconds": seconds,
            "rss_before_kib": before,
            "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "rows": built.counts["rows"],
            "records": sum(built.counts["records"].values()),
        },
        sys.stdout,
    )


def heap_in_this_process(output: str) -> None:
    """--heap: write the same bundle under tracemalloc, its memberships counted; print the heap's peak."""
    import tracemalloc

    from releases import catalogue_rows, conf

    class Counting:
        count = 0

        def add(self, record_type: str, stable_id: str, digest: str) -> None:
            self.count += 1

        def add_many(self, record_type: str, stable_ids: list[str], digests: list[str]) -> None:
            self.count += len(stable_ids)

    tracemalloc.start()
    catalogue_rows.bundle_write(
        output_dir=Path(output),
        release_date=timezone.localdate(),
        chunk_size=conf.chunk_rows(),
        memberships=Counting(),
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    json.dump({"heap_peak_bytes": peak}, sys.stdout)


def children_cpu_seconds() -> float:
    """CPU seconds (user + system) of this process's finished children, all threads."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def in_fresh_process(*args: str, tree: Path = ROOT) -> dict:
    """Run this script of `tree` with `args`; its JSON, with `process_cpu_s`: the CPU seconds of the
    whole process (start-up included), a figure a busy machine changes less than wall time."""
    script = tree / "bench" / "release_build.py"
    # Run in the tree: Celery's app loading puts the working directory first on sys.path.
    cpu = children_cpu_seconds()
    completed = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, env=os.environ.copy(), cwd=tree
    )
    if completed.returncode != 0:
        raise SystemExit(completed.stderr[-3000:])
    return {**json.loads(completed.stdout.strip().splitlines()[-1]), "process_cpu_s": children_cpu_seconds() - cpu}


def one_source_more() -> None:
    """New content for the next build: a build of unchanged content publishes nothing."""
    n = Source.objects.filter(stable_id__startswith="bench-repeat-").count()
    Source.objects.create(stable_id=f"bench-repeat-{n}", title=f"Repeat {n}", venue="Bench", kind="paper")


# ------------------------------------------------------------ the floor


def tools_seconds(bag: Path, scratch: Path) -> tuple[float, int, float]:
    """gzip -n -9 then sha256sum on the uncompressed CSV bytes of the bundle's tables: their wall
    seconds, the CSV bytes and their CPU seconds."""
    scratch.mkdir(parents=True, exist_ok=True)
    plain = []
    for table in sorted((bag / "data").glob("*.csv.gz")):
        target = scratch / table.name.removesuffix(".gz")
        with gzip.open(table, "rb") as source, target.open("wb") as sink:
            shutil.copyfileobj(source, sink)
        plain.append(target)
    started, cpu = time.perf_counter(), children_cpu_seconds()
    for path in plain:
        with open(f"{path}.gz", "wb") as sink:
            subprocess.run(["gzip", "-n", "-9", "-c", str(path)], stdout=sink, check=True)
        subprocess.run(["sha256sum", f"{path}.gz"], stdout=subprocess.DEVNULL, check=True)
    seconds, cpu = time.perf_counter() - started, children_cpu_seconds() - cpu
    size = sum(p.stat().st_size for p in plain)
    shutil.rmtree(scratch)
    return seconds, size, cpu


def min_median(values: list[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def main(sizes: list[int], repeats: int, before: Path | None) -> None:
    call_command("migrate", verbosity=0)
    from releases import conf
    from releases.store import release_directory

    print(f"database: {connection.vendor}; chunk rows: {conf.chunk_rows()}; releases under {conf.releases_dir()}")
    print(f"{repeats} builds per size and code; each figure min / median")
    header = (
        f"{'results':>8} {'code':>6} {'build s':>13} {'rows/s':>8} {'peak RSS MiB':>13} {'RSS growth MiB':>15} "
        f"{'heap peak MiB':>14} {'CSV MiB':>8} {'gzip+sha256sum s':>17} {'build/tools':>13}"
    )
    print(header)
    trees = [("before", before), ("after", ROOT)] if before else [("after", ROOT)]
    last: dict[str, tuple[float, float]] = {}
    for size in sizes:
        started = time.perf_counter()
        grow_catalogue(size)
        print(f"{size:>8,} catalogue grown to this size in {time.perf_counter() - started:.0f} s", flush=True)
        runs: dict[str, list[tuple[dict, float, int]]] = {label: [] for label, _ in trees}
        cpu_ratios: dict[str, list[float]] = {label: [] for label, _ in trees}
        for _ in range(repeats):
            for label, tree in trees:
                one_source_more()
                connection.close()  # the builder's process opens its own
                built = in_fresh_process("--build", tree=tree)
                bag = release_directory(built["release_id"]) / built["release_id"]
                tools, csv_bytes, tools_cpu = tools_seconds(bag, Path(tempfile.mkdtemp(prefix="bench-csv-")))
                runs[label].append((built, tools, csv_bytes))
                cpu_ratios[label].append(built["process_cpu_s"] / tools_cpu)
        for label, tree in trees:
            heap = in_fresh_process("--heap", tempfile.mkdtemp(prefix="bench-heap-"), tree=tree)
            builds = runs[label]
            seconds = min_median([b["seconds"] for b, _, _ in builds])
            tools = min_median([t for _, t, _ in builds])
            ratio = min_median([b["seconds"] / t for b, t, _ in builds])
            rows = sum(builds[0][0]["rows"].values())
            peak = max(b["peak_rss_kib"] for b, _, _ in builds)
            growth = max(b["peak_rss_kib"] - b["rss_before_kib"] for b, _, _ in builds)
            print(
                f"{size:>8,} {label:>6} {seconds[0]:>6.2f}/{seconds[1]:<6.2f} {rows / seconds[1]:>8,.0f} "
                f"{peak / 1024:>13.1f} {growth / 1024:>15.1f} {heap['heap_peak_bytes'] / 2**20:>14.1f} "
                f"{builds[0][2] / 2**20:>8.1f} {tools[0]:>8.2f}/{tools[1]:<8.2f} {ratio[0]:>6.1f}/{ratio[1]:<6.1f}",
                flush=True,
            )
            cpu = min_median([b["process_cpu_s"] for b, _, _ in builds])
            cpu_ratio = min_median(cpu_ratios[label])
            print(
                f"{'':>8} {label:>6} CPU s of the whole builder process (start-up included): "
                f"{cpu[0]:.2f}/{cpu[1]:.2f}; its ratio to the tools' CPU s: {cpu_ratio[0]:.1f}/{cpu_ratio[1]:.1f}",
                flush=True,
            )
            last[label] = ratio
    print(
        f"release build / (gzip -n + sha256sum) at {sizes[-1]:,} results, min/median of {repeats}: "
        + "; ".join(f"{label} {ratio[0]:.1f} / {ratio[1]:.1f}" for label, ratio in last.items())
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--build"]:
        build_in_this_process()
    elif sys.argv[1:2] == ["--heap"]:
        heap_in_this_process(sys.argv[2])
    else:
        parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
        parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
        parser.add_argument("--repeats", type=int, default=3)
        parser.add_argument("--compare-with", type=Path, default=None, help="another checkout: its code is 'before'")
        options = parser.parse_args()
        main(options.sizes, options.repeats, options.compare_with)
