"""Requests per second of the evaluations list (100 per page) against a bare Django view returning the
same bytes, both under gunicorn with 2 workers, and their ratio.

Run: .venv/bin/python bench/api_throughput.py [--seconds 10] [--clients 8] [--rounds 3]
Uses a throw-away SQLite database (embedded default) in a temp folder; the clients are threads in
this process holding keep-alive connections, so client and server share the machine's cores.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.serving import gunicorn_serving  # noqa: E402

PORT = 8765
LIST_PATH = "/api/v1/evaluations/?page_size=100"


def prepare(var_dir: str) -> Path:
    """Migrate, seed 100 evaluations with results, and save the list's body for the bare view."""
    code = f"""
import django, os
django.setup()
from decimal import Decimal
from django.core.management import call_command
from django.test import Client
call_command("migrate", verbosity=0)
call_command("import_seed", verbosity=0, stdout=open(os.devnull, "w"))
from records.models import Configuration, Dataset, Evaluation, Protocol, Result
from records.services import record_save
protocol = Protocol.objects.get()
source, dataset = protocol.source, Dataset.objects.get(suite__isnull=True, stable_id__endswith="18-tasks")
for i in range(98):
    c = Configuration(stable_id=f"bench-config-{{i}}", name=f"Bench model {{i:03d}}")
    record_save(record=c, actor=None)
    e = Evaluation(stable_id=f"bench-eval-{{i}}", title=f"Bench evaluation {{i}}", protocol=protocol, configuration=c, dataset=dataset,
                     measured_by="authors", reading_method="table", source=source, source_locator="Table 1", quote="A sentence.")
    record_save(record=e, actor=None)
    record_save(record=Result(stable_id=f"bench-result-{{i}}", evaluation=e, value=Decimal(i), unit="minute", printed_value=f"{{i}} min"), actor=None)
body = Client(HTTP_HOST="127.0.0.1").get("{LIST_PATH}").content
open(os.path.join("{var_dir}", "body.json"), "wb").write(body)
print(len(body))
"""
    env = {**os.environ, "PORTAL_VAR_DIR": var_dir, "DJANGO_SETTINGS_MODULE": "portal.settings"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    print(f"list body: {out.stdout.strip()} bytes, 100 evaluations")
    return Path(var_dir) / "body.json"


def hammer(path: str, seconds: float, clients: int) -> tuple[float, int]:
    """Requests per second over `seconds` from `clients` keep-alive connections; and the error count."""
    counts = [0] * clients
    errors = [0] * clients
    deadline = time.perf_counter() + seconds

    def client(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        while time.perf_counter() < deadline:
            connection.request("GET", path, headers={"Host": "127.0.0.1"})
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                counts[index] += 1
            else:
                errors[index] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.perf_counter() - started), sum(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    var_dir = tempfile.mkdtemp(prefix="bench-api-")
    body = prepare(var_dir)
    env = {
        **os.environ,
        "PORTAL_VAR_DIR": var_dir,
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "BENCH_BODY_FILE": str(body),
        "PORTAL_API_ANON_RATE": "100000000/minute",
        "PORTAL_API_USER_RATE": "100000000/minute",  # DRF counts anonymous clients under both rates
        "PORTAL_LOG_LEVEL": "WARNING",
    }
    api_rates, bare_rates, errors = [], [], 0
    with gunicorn_serving("bench.api_bench_wsgi:application", port=PORT, env=env, options=["--workers", "2"]):
        hammer(LIST_PATH, 2, args.clients)  # warm both workers up
        for _ in range(args.rounds):  # side by side, so the machine's other load falls on both alike
            api, api_errors = hammer(LIST_PATH, args.seconds, args.clients)
            bare, bare_errors = hammer("/bench/bare/", args.seconds, args.clients)
            api_rates.append(api)
            bare_rates.append(bare)
            errors += api_errors + bare_errors
    ratios = sorted(api / bare for api, bare in zip(api_rates, bare_rates, strict=True))
    print(f"gunicorn 2 workers, {args.clients} keep-alive clients, {args.seconds:.0f} s each, {args.rounds} rounds")
    print(f"{'endpoint':<40} {'min req/s':>10} {'median':>8}")
    print(f"{'GET ' + LIST_PATH:<40} {min(api_rates):>10.1f} {statistics.median(api_rates):>8.1f}")
    print(f"{'bare Django view, same bytes':<40} {min(bare_rates):>10.1f} {statistics.median(bare_rates):>8.1f}")
    print(f"errors (non-200): {errors}")
    print(f"ratio (API / bare), min / median of {args.rounds}: {ratios[0]:.3f} / {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
