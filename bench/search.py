"""Search at the size users will reach: PAPERS papers, CONFIGURATIONS configurations and RESULTS
results (one an evaluation), built with bulk_create and indexed by the portal's own rebuild
(records.search_index.search_index_rebuild). Then a fixed set of realistic searches, each kind of
query ROUNDS times through the search page (the test client: the view, the two SQL statements,
the template): model names in several spellings, task words, "NT benchmark promoter", a number, a
rare and a very common term, a page deep in the results, a misspelling with nothing matched.
Prints the hits and SQL statements of each query, then p50 and p95 in ms per kind and overall,
searched afresh (the page cache emptied before each request), asked again (the page cache's copy)
and as readers meet them (`readers`: a catalogue change and the warm of pages.search_page before
each round, and searches asked for the first time among them), each overall p95 against the goal
(GOAL_MS at 300,000 results on PostgreSQL), and the warm's own time after each change. `--explain`
prints PostgreSQL's EXPLAIN ANALYZE of the statements of the slowest kind searched afresh.

Run: .venv/bin/python bench/search.py [--results 300000] [--rounds 20] [--explain] [--keep-index]   (a throw-away
SQLite database under a temp folder, or the database named by DATABASE_URL if set: then it must be
a scratch database, e.g. `psql -h 127.0.0.1 -U postgres -c 'create database bench_search'` and
DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_search).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
os.environ["PORTAL_SEARCHES_PER_IP"] = "100000000"  # one client asks everything: no rate limit here
# The warm on, as with a shared cache (this one process's cache is the one its searches read).
os.environ["PORTAL_SEARCH_WARM_TOP"] = "40"
if not os.environ.get("DATABASE_URL"):
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-search-")

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.machine import machine_line  # noqa: E402
from common.versions import version_bump  # noqa: E402
from pages.search_page import search_pages_warm  # noqa: E402
from records.models import (  # noqa: E402
    Configuration,
    Dataset,
    Evaluation,
    GenomicModel,
    ModelAlias,
    Protocol,
    Result,
    SearchEntry,
    Source,
    Work,
    alias_key,
)
from records.search_index import search_index_rebuild  # noqa: E402

PAPERS = 200
CONFIGURATIONS_PER_PAPER = 25  # 5,000 configurations
PROTOCOLS_PER_PAPER = 3
TASKS_PER_PROTOCOL = 20  # 200 x 3 x 20 x 25 = 300,000 evaluations, one result each
GOAL_MS = 50
METRICS = [("MCC", "MCC"), ("F1", "F1 x 100"), ("AUC", "AUC"), ("accuracy", "%"), ("Pearson r", "r")]
# Models papers test, with the names they print for them (one alias a spelling: "DNABERT2" is
# "DNABERT-2"); the first are in many papers.
KNOWN_MODELS = [
    ("DNABERT-2 (117M)", ["DNABERT-2", "DNABERT-2 117M"]),
    ("HyenaDNA tiny 1k", ["HyenaDNA-1KB", "HyenaDNA 436k"]),
    ("HyenaDNA 1.6M", ["HyenaDNA (1.6M)"]),
    ("Nucleotide Transformer v2 500M multi-species", ["NT-v2 500M"]),
    ("Nucleotide Transformer v1 2.5B multi-species", ["NT-2500M-multi", "NT 2.5B (850 genomes)"]),
    ("Caduceus-Ph 1.9M", ["Caduceus-Ph", "Caduceus Ph 1.9M"]),
    ("Caduceus-PS 1.9M", ["Caduceus-PS"]),
    ("Enformer (252M)", ["Enformer"]),
    ("GENA-LM base", ["GENA-LM", "GENA LM bert-base"]),
    ("GPN-MSA", ["GPN MSA"]),
]
SUITES = {
    "NT benchmark, all 18 tasks": [
        "promoter_all",
        "promoter_tata",
        "promoter_no_tata",
        "enhancers",
        "enhancers_types",
        "splice_sites_all",
        "splice_sites_acceptors",
        "splice_sites_donors",
        "H3",
        "H3K4me1",
        "H3K4me2",
        "H3K4me3",
        "H3K9ac",
        "H3K14ac",
        "H3K36me3",
        "H3K79me3",
        "H4",
        "H4ac",
    ],
    "GUE (Genome Understanding Evaluation), 28 datasets": [
        "Promoter Detection: all",
        "Promoter Detection: tata",
        "Core Promoter Detection: all",
        "Core Promoter Detection: notata",
        "Transcription Factor Prediction (Human): 0",
        "Transcription Factor Prediction (Mouse): 1",
        "Splice Site Prediction: reconstructed",
        "Covid Variant Classification",
        "Epigenetic Marks Prediction: H3K4me3",
        "Epigenetic Marks Prediction: H3K36me3",
    ],
    "Genomic Benchmarks, 8 regulatory-element classification datasets": [
        "Human Nontata Promoters",
        "Human Enhancers Cohn",
        "Human Enhancers Ensembl",
        "Human Regulatory",
        "Human OCR Ensembl",
        "Mouse Enhancers",
        "Coding vs Intergenomic",
        "Human vs Worm",
    ],
    "DNA foundation model benchmark (Feng et al. 2025)": [
        "Promoter GM12878",
        "Promoter HUVEC",
        "Promoter All 300 bps",
        "Enhancer Cohn",
        "Donor",
        "Acceptor",
        "Human TFBS 1",
        "Mouse TFBS 2",
    ],
}
SURNAMES = ["Zhou", "Nguyen", "Schiff", "Dalla-Torre", "Feng", "Gresova", "Avsec", "Fishman", "Benegas", "Ji"]


def grow(results: int, seed: int = 28) -> None:
    """The catalogue: models with aliases, suites of tasks, and PAPERS papers each with its
    protocols, configurations, evaluations and results; written with bulk_create (around the
    services: the index is built afterwards, by the rebuild)."""
    rng = random.Random(seed)
    models = GenomicModel.objects.bulk_create(
        [
            GenomicModel(stable_id=f"known-{i}", name=name, family=name.split()[0])
            for i, (name, _) in enumerate(KNOWN_MODELS)
        ]
        + [
            GenomicModel(
                stable_id=f"genoformer-{n}", name=f"GenoFormer-{n} ({25 * (n % 12 + 1)}M)", family="GenoFormer"
            )
            for n in range(390)
        ]
    )
    aliases = [
        ModelAlias(stable_id=f"alias-{model.stable_id}-{k}", model=model, alias=alias, key=alias_key(alias))
        for model, (_, printed) in zip(models, KNOWN_MODELS, strict=False)
        for k, alias in enumerate(printed)
    ]
    aliases += [
        ModelAlias(stable_id=f"alias-{model.stable_id}", model=model, alias=model.name.split(" (")[0].replace("-", ""))
        for model in models[len(KNOWN_MODELS) :]
    ]
    for alias in aliases:  # the bench's names are printed by no source: a curator's inference, said so
        alias.key = alias_key(alias.alias)
        alias.basis, alias.reason = "inferred", "A generated bench name."
    ModelAlias.objects.bulk_create(aliases)
    suites, tasks = [], []
    for s, (suite_name, names) in enumerate([*SUITES.items(), *((f"Regulatory suite {k}", []) for k in range(26))]):
        suite = Dataset.objects.create(stable_id=f"suite-{s}", name=suite_name)
        names = names or [f"Regulatory element {s}-{j}" for j in range(20)]
        tasks.append(
            Dataset.objects.bulk_create(
                Dataset(
                    stable_id=f"task-{s}-{j}",
                    name=name,
                    suite=suite,
                    task_key=name.lower().replace(" ", "_").replace(":", ""),
                    position=j,
                )
                for j, name in enumerate(names)
            )
        )
        suites.append(suite)
    per_paper = max(1, results // PAPERS)
    for p in range(PAPERS):
        author, year = rng.choice(SURNAMES), 2019 + p % 7
        cited = f"{author} et al. {year}"
        rare = " Zanzibar" if p == 123 else ""
        with transaction.atomic():
            work = Work.objects.create(
                stable_id=f"work-{p}", title=f"Genomic language models, study {p}", authors_short=cited
            )
            source = Source.objects.create(
                stable_id=f"source-{p}",
                title=f"Genomic language models, study {p}{rare}",
                authors_short=cited,
                work=work,
            )
            chosen = [*rng.sample(models[: len(KNOWN_MODELS)], 5), *rng.sample(models[len(KNOWN_MODELS) :], 20)]
            configurations = Configuration.objects.bulk_create(
                Configuration(
                    stable_id=f"cfg-{p}-{c}",
                    name=f"{model.name}, {'fine-tuned' if c % 2 else 'frozen embeddings'} ({cited})",
                    short_name=model.name.split(" (")[0],
                    method="fine-tuning" if c % 2 else "linear probe",
                    model=model,
                )
                for c, model in enumerate(chosen[:CONFIGURATIONS_PER_PAPER])
            )
            rows: list[tuple[Protocol, Dataset]] = []
            for k in range(PROTOCOLS_PER_PAPER):
                suite_index = rng.randrange(len(suites)) if k else p % 4  # the named suites in every paper
                metric, unit = METRICS[(p + k) % len(METRICS)]
                protocol = Protocol.objects.create(
                    stable_id=f"protocol-{p}-{k}",
                    title=f"{suites[suite_index].name.split(',')[0]}, {metric} ({cited}, Table {k + 1})",
                    summary=f"Fine-tuned and frozen models scored by {metric} on the suite's test sets.",
                    metric_name=metric,
                    metric_short_name=metric.lower().replace(" ", "-"),
                    metric_unit=unit,
                    metric_direction="higher",
                    source=source,
                )
                suite_tasks = tasks[suite_index]
                rows += [(protocol, suite_tasks[j % len(suite_tasks)]) for j in range(TASKS_PER_PROTOCOL)]
            pairs = [
                (c, configuration, r, protocol, task)
                for c, configuration in enumerate(configurations)
                for r, (protocol, task) in enumerate(rows)
            ]
            evaluations = Evaluation.objects.bulk_create(
                Evaluation(
                    stable_id=f"ev-{p}-{c}-{r}",
                    title=f"{configuration.short_name} on {task.name}, {protocol.metric_name} ({cited}, Table {r // TASKS_PER_PROTOCOL + 1})",
                    protocol=protocol,
                    configuration=configuration,
                    dataset=task,
                    measured_by="authors" if c == 0 else "third_party",
                    measured_by_name="" if c == 0 else cited,
                    reading_method="table",
                    setup=f"{configuration.method}; 10-fold cross-validation with seeds 1 to 10; test split of the suite",
                    source=source,
                    source_locator=f"Table {r // TASKS_PER_PROTOCOL + 1}",
                    quote="A quoted row.",
                )
                for c, configuration, r, protocol, task in pairs[:per_paper]
            )
            values = [Decimal(rng.randrange(300, 999)) / 1000 for _ in evaluations]
            Result.objects.bulk_create(
                Result(
                    stable_id=f"{evaluation.stable_id}-r",
                    evaluation=evaluation,
                    value=value,
                    unit=evaluation.protocol.metric_unit,
                    printed_value=str(value),
                )
                for evaluation, value in zip(evaluations, values, strict=True)
            )


QUERIES = {
    "model, as printed": ["/search/?q=DNABERT-2", "/search/?q=HyenaDNA", "/search/?q=Caduceus-Ph"],
    "model, other spellings": ["/search/?q=dnabert2", "/search/?q=dnabert+2", "/search/?q=nt+v2+500m"],
    "task words": ["/search/?q=promoter", "/search/?q=splice+acceptors", "/search/?q=H3K4me3"],
    "NT benchmark promoter": ["/search/?q=NT+benchmark+promoter"],
    "a number": ["/search/?q=0.731"],
    "rare term": ["/search/?q=Zanzibar", "/search/?q=genoformer-217"],
    "very common term": ["/search/?q=fine-tuned", "/search/?q=MCC"],
    "deep page": ["/search/?q=promoter&type=evaluation&page=400"],
    "misspelt, nothing matched": ["/search/?q=hyenadan"],
}


# Searches asked for the first time in a round of readers (the long tail): a model's name, a value, a task.
LONG_TAIL = ("/search/?q=genoformer-{n}", "/search/?q=0.{value}", "/search/?q=regulatory+element+{suite}-{task}")


def readers(client: Client, rounds: int, rng: random.Random) -> tuple[dict[str, list[float]], list[float], list[int]]:
    """Readers as the warm leaves them: before each round the catalogue changes (a version bump, what
    every write does in its transaction) and the worker's warm runs (timed apart: nobody waits for
    it); then the readers ask every query of QUERIES once (the searches asked under the previous
    version, as they were before the first round) and len(LONG_TAIL) searches nobody asked before."""
    for urls in QUERIES.values():
        for url in urls:
            client.get(url)
    timings: dict[str, list[float]] = {kind: [] for kind in QUERIES} | {"asked for the first time": []}
    warm_ms, rendered = [], []
    for _ in range(rounds):
        with transaction.atomic():
            version_bump()
        begun = time.perf_counter()
        warm = search_pages_warm()
        warm_ms.append((time.perf_counter() - begun) * 1000)
        rendered.append(warm.rendered)
        assert warm.done, warm
        for kind, urls in QUERIES.items():
            for url in urls:
                timings[kind].append(timed(client, url, afresh=False))
        for template in LONG_TAIL:
            url = template.format(
                n=rng.randrange(390), value=rng.randrange(300, 999), suite=rng.randrange(4, 30), task=rng.randrange(20)
            )
            timings["asked for the first time"].append(timed(client, url, afresh=False))
    return timings, warm_ms, rendered


def explain(client: Client, url: str) -> None:
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {query['sql']}")
            print(f"-- {url}\n" + "\n".join(row[0] for row in cursor.fetchall()))


def timed(client: Client, url: str, *, afresh: bool) -> float:
    if afresh:
        cache.clear()  # searched afresh, not read from the page cache
    begun = time.perf_counter()
    client.get(url)
    return (time.perf_counter() - begun) * 1000


def report(title: str, timings: dict[str, list[float]]) -> float:
    print(f"{title}\n{'kind':<28} {'requests':>9} {'p50 ms':>8} {'p95 ms':>8}")
    every = []
    for kind, times in timings.items():
        every += times
        print(f"{kind:<28} {len(times):>9} {percentile(times, 50):>8.1f} {percentile(times, 95):>8.1f}")
    p95 = percentile(every, 95)
    print(f"{'all':<28} {len(every):>9} {percentile(every, 50):>8.1f} {p95:>8.1f}")
    print(
        f"p95 {p95:.1f} ms against the goal of {GOAL_MS} ms (on PostgreSQL at 300,000 results): {p95 / GOAL_MS:.2f} of it"
    )
    return p95


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--keep-index", action="store_true", help="search the index already built (a second run)")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    if not Result.objects.exists():
        grow(args.results)
    built = time.perf_counter() - started
    started = time.perf_counter()
    entries = SearchEntry.objects.count() if args.keep_index else search_index_rebuild()
    indexed = time.perf_counter() - started
    with connection.cursor() as cursor:
        # A rebuild deletes every row and writes it again: compact the table as a fresh build's would be.
        cursor.execute("VACUUM FULL ANALYZE records_searchentry" if connection.vendor == "postgresql" else "ANALYZE")
    print(
        f"database: {connection.vendor}; {Work.objects.count()} papers, {Configuration.objects.count():,} configurations, "
        f"{Evaluation.objects.count():,} evaluations, {Result.objects.count():,} results (built in {built:.0f} s); "
        f"{entries:,} index entries (rebuilt in {indexed:.0f} s)"
    )
    print(machine_line())
    client = Client(HTTP_HOST="localhost")
    print(f"{'query':<50} {'hits':>8} {'queries':>8}")
    for urls in QUERIES.values():
        for url in urls:
            cache.clear()
            with CaptureQueriesContext(connection) as captured:
                response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            hits = response.content.decode().split('class="match-count">', 1)[1].split(" result", 1)[0]
            print(f"{url:<50} {hits:>8} {len(captured):>8}")
    afresh: dict[str, list[float]] = {kind: [] for kind in QUERIES}
    cached: dict[str, list[float]] = {kind: [] for kind in QUERIES}
    for _ in range(args.rounds):
        for kind, urls in QUERIES.items():
            for url in urls:
                afresh[kind].append(timed(client, url, afresh=True))
                cached[kind].append(timed(client, url, afresh=False))
    report("searched afresh (the page cache emptied before each request):", afresh)
    report("asked again (the same page from the page cache, under the same catalogue version):", cached)
    if connection.vendor != "postgresql":
        print("(readers with the warm: not on SQLite, where the embedded default's per-process cache keeps it off)")
        return
    timings, warm_ms, rendered = readers(client, args.rounds, random.Random(5))
    report(
        f"readers as the warm leaves them (a catalogue change and the warm before each round; {len(LONG_TAIL)} "
        "searches a round asked for the first time):",
        timings,
    )
    print(
        f"the warm after each change: {percentile(warm_ms, 50):.0f} ms median, {max(warm_ms):.0f} ms at most, "
        f"{min(rendered)} to {max(rendered)} pages rendered (the worker's time: no reader waits for it)"
    )
    if args.explain and connection.vendor == "postgresql":
        slowest = max(QUERIES, key=lambda kind: percentile(afresh[kind], 95))
        for url in QUERIES[slowest]:
            explain(client, url)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share / 100 * (len(ordered) - 1))))] if ordered else 0.0


if __name__ == "__main__":
    main()
