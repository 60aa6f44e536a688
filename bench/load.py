"""Load test: a mixed workload against gunicorn for a fixed time; throughput, latency percentiles, errors.

Run: .venv/bin/python bench/load.py [--seconds 30] [--clients 8] [--workers 1 --threads 8]
It sets up a throw-away portal (the embedded default in a temp folder, or the database named by
DATABASE_URL: a scratch one) with the seed record, 200 more evaluations and a published release,
starts gunicorn, and drives it from keep-alive client threads in this process:

  record pages 35% . API lists 25% . search 15% . correction submissions 10% . release downloads 15%

Correction and search limits are raised for the run (every client is 127.0.0.1). Exits 1 if any response is a 5xx.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.serving import gunicorn_serving  # noqa: E402

PORT = 8766
PROTOCOL = "gfm-guide-20261014-protocol-nt-ia3-finetune-runtime"

SETUP = """
import django, json, os
django.setup()
from decimal import Decimal
from django.contrib.auth import get_user_model
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("import_seed", stdout=open(os.devnull, "w"))
call_command("ensure_roles", stdout=open(os.devnull, "w"))
from django.contrib.auth.models import Group
from records.models import Configuration, Dataset, Evaluation, Protocol, Result
from records.services import record_save
from releases.build import release_build
from releases.services import release_cut
protocol = Protocol.objects.get()
dataset = Dataset.objects.get(stable_id="nt-benchmark-revised-18-tasks")
for i in range(200):
    c = Configuration(stable_id=f"load-config-{i}", name=f"Load model {i:03d}")
    record_save(record=c, actor=None)
    e = Evaluation(stable_id=f"load-eval-{i}", title=f"Load evaluation {i}", protocol=protocol, configuration=c, dataset=dataset,
                     measured_by="authors", reading_method="table", source=protocol.source, source_locator="Table 1", quote="A sentence.")
    record_save(record=e, actor=None)
    record_save(record=Result(stable_id=f"load-result-{i}", evaluation=e, value=Decimal(i), unit="minute", printed_value=f"{i} min"), actor=None)
manager = get_user_model().objects.create_user("load-release-manager", password="load-test-password-123")
manager.groups.add(Group.objects.get(name="Release managers"))
release = release_build(release_pk=release_cut(actor=manager).pk)
files = [f.name for f in release.files.all()]
print(json.dumps({"release": release.release_id, "files": files, "evaluations": list(Evaluation.objects.values_list("stable_id", flat=True)[:50])}))
"""


def setup(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def requests_for(data: dict):
    """Weighted request makers: (name, weight, function returning method, path, body)."""
    release, files, evaluations = data["release"], data["files"], data["evaluations"]
    words = ["IA3", "Nucleotide Transformer", "runtime", "Load model 1", "splice", PROTOCOL]

    def correction():
        body = {
            "target_type": "protocol",
            "target_id": PROTOCOL,
            "explanation": f"Load test suggestion {random.random()}",
        }
        return "POST", "/api/v1/corrections/", json.dumps(body)

    return [
        ("record page", 20, lambda: ("GET", f"/protocols/{PROTOCOL}/", None)),
        ("record page", 15, lambda: ("GET", f"/evaluations/{random.choice(evaluations)}/", None)),
        (
            "API list",
            25,
            lambda: (
                "GET",
                random.choice(
                    ["/api/v1/evaluations/?page_size=50", "/api/v1/protocols/", "/api/v1/results/?page_size=100"]
                ),
                None,
            ),
        ),
        ("search", 15, lambda: ("GET", f"/search/?q={random.choice(words).replace(' ', '+')}", None)),
        ("correction", 10, correction),
        ("release download", 15, lambda: ("GET", f"/releases/{release}/files/{random.choice(files)}", None)),
    ]


def drive(makers, seconds: float, clients: int):
    names = [name for name, _, _ in makers]
    weights = [weight for _, weight, _ in makers]
    results: list[tuple[str, int, float]] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
        local = []
        while time.perf_counter() < deadline:
            index = random.choices(range(len(makers)), weights)[0]
            method, path, body = makers[index][2]()
            headers = {"Host": "127.0.0.1", "Content-Type": "application/json"} if body else {"Host": "127.0.0.1"}
            started = time.perf_counter()
            try:
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                status = 599  # a broken connection counts as a server error
                connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
            local.append((names[index], status, (time.perf_counter() - started) * 1000))
        with lock:
            results.extend(local)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1]
        if len(values) > 1
        else (values[0] if values else 0.0)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "PORTAL_LOG_LEVEL": "WARNING",
        "PORTAL_CORRECTIONS_PER_IP": "1000000",
        "PORTAL_SEARCHES_PER_IP": "1000000",
        "PORTAL_CORRECTIONS_PER_RECORD": "1000000",
        "PORTAL_API_ANON_RATE": "100000000/minute",
        "PORTAL_API_USER_RATE": "100000000/minute",  # DRF counts anonymous clients under both rates
        "PORTAL_CORRECTIONS_DIGEST_INTERVAL_SECONDS": "3600",
    }
    if not env.get("DATABASE_URL"):
        env["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-load-")
    data = setup(env)
    options = ["--workers", str(args.workers), "--threads", str(args.threads)]
    with gunicorn_serving("portal.wsgi", port=PORT, env=env, options=options):
        results, elapsed = drive(requests_for(data), args.seconds, args.clients)
    by_kind: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for name, status, ms in results:
        by_kind[name].append((status, ms))
    print(
        f"gunicorn {args.workers} worker(s) x {args.threads} threads, {args.clients} keep-alive clients, {elapsed:.1f} s, "
        f"database {'DATABASE_URL' if os.environ.get('DATABASE_URL') else 'embedded SQLite'}"
    )
    print(f"{'workload':<18} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  statuses")
    rows = [*sorted(by_kind.items()), ("all", [(s, ms) for name, s, ms in results])]
    for name, entries in rows:
        times = [ms for _, ms in entries]
        statuses = Counter(status for status, _ in entries)
        print(
            f"{name:<18} {len(entries):>8} {len(entries) / elapsed:>7.1f} {percentile(times, 50):>8.1f} {percentile(times, 95):>8.1f} "
            f"{percentile(times, 99):>8.1f}  {dict(sorted(statuses.items()))}"
        )
    server_errors = sum(1 for _, status, _ in results if status >= 500)
    client_errors = sum(1 for _, status, _ in results if 400 <= status < 500)
    print(f"errors: {server_errors} server (5xx), {client_errors} client (4xx)")
    return 1 if server_errors else 0


if __name__ == "__main__":
    sys.exit(main())
