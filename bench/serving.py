"""Gunicorn for the benchmark scripts: started on a local port, awaited, always stopped."""

from __future__ import annotations

import contextlib
import http.client
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def gunicorn_serving(
    app: str, *, port: int, env: dict[str, str], options: list[str], start_timeout: float = 10.0
) -> Iterator[None]:
    """Run ``gunicorn app`` with ``options`` until the block ends; wait until ``/healthz`` answers."""
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}", "--log-level", "warning", *options],
        cwd=ROOT,
        env=env,
    )
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/healthz")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit(f"gunicorn did not answer on port {port} within {start_timeout:.0f} s") from None
                time.sleep(0.1)
        yield
    finally:
        server.terminate()
        server.wait(timeout=30)
