"""The largest demo protocol's comparison chart (data/examples/, loaded into a fresh database): time
and SQL statements of an uncached render (the cache emptied before each request) and of a cached
answer (pages.page_cache, keyed by the catalogue version), as PNG and SVG, and their ratio; the
same for that protocol's page and the coverage matrix, the other costly public pages.

Run: .venv/bin/python bench/chart_render.py   (uses a throw-away SQLite database under a temp
folder, or the database named by DATABASE_URL if set: then it must be a scratch database).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
if not os.environ.get("DATABASE_URL"):
    os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-charts-")

import django  # noqa: E402

django.setup()

from django.core.cache import cache, caches  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from records.models import Protocol  # noqa: E402


def timed(client: Client, path: str, *, fresh: bool) -> tuple[float, float, int, int]:
    """Wall and CPU seconds of this process, SQL statements and bytes of one anonymous GET; `fresh`
    empties the cache first (the CPU time is what a loaded machine does not inflate)."""
    if fresh:
        cache.clear()  # the rendered charts and pages, and the render counters with them
    with CaptureQueriesContext(connection) as queries:
        start, cpu = time.perf_counter(), time.process_time()
        response = client.get(path)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if response.status_code != 200:
        raise SystemExit(f"{path}: status {response.status_code}")
    return elapsed, cpu, len(queries.captured_queries), len(response.content)


def measure(client: Client, path: str, *, uncached: int, cached: int) -> None:
    fresh = [timed(client, path, fresh=True) for _ in range(uncached)]
    warm = [timed(client, path, fresh=False) for _ in range(cached)]
    fresh_s, fresh_cpu = (statistics.median(run[i] for run in fresh) for i in (0, 1))
    warm_s, warm_cpu = (statistics.median(run[i] for run in warm) for i in (0, 1))
    print(
        f"{path}: {fresh[0][3]:,} bytes; uncached {fresh_s * 1000:,.1f} ms, CPU {fresh_cpu * 1000:,.1f} ms "
        f"({fresh[0][2]} SQL, median of {uncached}); cached {warm_s * 1000:,.2f} ms, CPU {warm_cpu * 1000:,.2f} ms "
        f"({warm[0][2]} SQL, median of {cached}); ratio {fresh_s / warm_s:,.0f}x (CPU {fresh_cpu / warm_cpu:,.0f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uncached", type=int, default=3, help="uncached renders of each path (default 3)")
    parser.add_argument("--cached", type=int, default=50, help="cached answers of each path (default 50)")
    args = parser.parse_args()
    started = time.perf_counter()
    quiet = open(os.devnull, "w")
    call_command("migrate", verbosity=0)
    call_command("import_seed", stdout=quiet)
    call_command("load_examples", stdout=quiet)
    protocol = Protocol.objects.annotate(results=Count("evaluations__results")).order_by("-results").first()
    assert protocol is not None
    print(
        f"{connection.vendor}, {type(caches['default']).__name__}; demo content loaded in {time.perf_counter() - started:.1f} s; "
        f"largest protocol {protocol.stable_id} ({protocol.results} results)"
    )
    client = Client(HTTP_HOST="127.0.0.1")  # an ALLOWED_HOSTS name of the embedded default
    base = f"/protocols/{protocol.stable_id}/"
    for path in (f"{base}comparison.png", f"{base}comparison.svg", base, "/coverage/"):
        measure(client, path, uncached=args.uncached, cached=args.cached)


if __name__ == "__main__":
    main()
