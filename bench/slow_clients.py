"""Slow clients (slowloris) against the portal, with Caddy in front of gunicorn and without.

    python -m bench.slow_clients [--seconds 60] [--sockets 50] [--interval 5] [--body]

Starts the portal's gunicorn as bin/serve does (one process, 8 threads, portal.gunicorn_conf) on a free
loopback port, on a throw-away embedded database, and Caddy on deploy/Caddyfile in front of it (plain
HTTP on another free port: PORTAL_DOMAIN=http://127.0.0.1:PORT). Then, first straight at gunicorn and
then through Caddy: SOCKETS connections each send a request line and one more header line every
INTERVAL seconds, never the blank line that ends the header (with --body: a whole header, then a form
body 16 bytes at a time, to a view whose CSRF check reads it); a connection the server closes is
opened again. Meanwhile a probe asks for /healthz four times a second, each with a 1 s limit. It
prints, for each, the probes answered within the limit, the slowest answer, the slow sockets open at
the end and how often the attack reconnected (the server closed a slow connection).
Needs `caddy` (Debian: apt-get install caddy).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from bench.fresh_start import free_port

ROOT = Path(__file__).resolve().parents[1]
CADDYFILE = ROOT / "deploy" / "Caddyfile"


@dataclass
class Report:
    probes: int = 0
    answered: int = 0  # 200 within the limit
    slowest: float = 0.0  # seconds, over the probes answered
    failures: list[str] = field(default_factory=list)
    reconnects: int = 0
    open_at_end: int = 0

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.answered}/{self.probes} /healthz probes answered within the limit, slowest "
            f"{self.slowest * 1000:.0f} ms; {self.open_at_end} slow sockets open at the end, {self.reconnects} reconnects"
            + (f"; first failure: {self.failures[0]}" if self.failures else "")
        )


def wait_for_200(url: str, *, timeout: float, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer 200 within {timeout} s")


def start_gunicorn(port: int, var_dir: Path, log: Path) -> subprocess.Popen:
    """gunicorn with bin/_serve_processes' options, on the embedded default under `var_dir`."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CACHE_URL", "PORTAL_BIND"}}
    env |= {"PORTAL_VAR_DIR": str(var_dir), "PORTAL_LOG_LEVEL": "WARNING"}
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "portal.wsgi", "--config", "python:portal.gunicorn_conf"]
        + ["--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "8", "--graceful-timeout", "4"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def start_caddy(port: int, upstream_port: int, folder: Path, log: Path, caddy: str = "caddy") -> subprocess.Popen:
    """Caddy on deploy/Caddyfile, plain HTTP on `port`, proxying to 127.0.0.1:`upstream_port`."""
    env = os.environ | {
        "PORTAL_DOMAIN": f"http://127.0.0.1:{port}",
        "PORTAL_UPSTREAM": f"127.0.0.1:{upstream_port}",
        "CADDY_ADMIN": f"127.0.0.1:{free_port()}",
        "HOME": str(folder),
        "XDG_DATA_HOME": str(folder / "data"),
        "XDG_CONFIG_HOME": str(folder / "config"),
    }
    return subprocess.Popen(
        [caddy, "run", "--config", str(CADDYFILE), "--adapter", "caddyfile"],
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class SlowClients:
    """SOCKETS connections to host:port, each sending one more header line every INTERVAL seconds."""

    def __init__(self, host: str, port: int, *, sockets: int, interval: float, body: bool = False):
        self.host, self.port, self.count, self.interval, self.body = host, port, sockets, interval, body
        self.sockets: list[socket.socket | None] = [None] * sockets
        self.reconnects = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self) -> socket.socket | None:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=2)
            if self.body:  # a whole header, then a body that never ends
                # With a CSRF cookie, Django's CSRF check reads the form body (looking for the token).
                head = f"POST /admin/login/ HTTP/1.1\r\nHost: {self.host}\r\nContent-Length: 1000000\r\n"
                head += f"Cookie: csrftoken={'a' * 32}\r\n"
                sock.sendall(f"{head}Content-Type: application/x-www-form-urlencoded\r\n\r\n".encode())
            else:
                sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {self.host}\r\n".encode())
            return sock
        except OSError:
            return None

    def _trickle(self, index: int, line: bytes) -> None:
        sock = self.sockets[index]
        if sock is not None:
            try:
                sock.setblocking(False)
                try:
                    closed = sock.recv(4096) == b""  # the server answered (408) or closed: open another
                except BlockingIOError:
                    closed = False
                sock.setblocking(True)
                if not closed:
                    sock.sendall(line)
                    return
            except OSError:
                pass
            sock.close()
            self.reconnects += 1
        self.sockets[index] = self._open()

    def _run(self) -> None:
        beat = 0
        while not self.stopping.is_set():
            for index in range(self.count):
                self._trickle(index, b"a" * 16 if self.body else f"X-Slow-{beat}: {'a' * 8}\r\n".encode())
            beat += 1
            self.stopping.wait(self.interval)

    def __enter__(self) -> SlowClients:
        self.sockets = [self._open() for _ in range(self.count)]
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.thread.join(timeout=self.interval + 5)
        for sock in self.sockets:
            if sock is not None:
                sock.close()

    def open_now(self) -> int:
        return sum(sock is not None for sock in self.sockets)


def attack(
    host: str,
    port: int,
    *,
    seconds: float,
    sockets: int = 50,
    interval: float = 5,
    limit: float = 1.0,
    body: bool = False,
) -> Report:
    """Run the slow clients at host:port for `seconds` while probing http://host:port/healthz. With
    `body`, each sends its whole header and then its body, 16 bytes at a time."""
    report = Report()
    url = f"http://{host}:{port}/healthz"
    with SlowClients(host, port, sockets=sockets, interval=interval, body=body) as clients:
        time.sleep(min(1.0, seconds / 4))  # the sockets have sent their first lines
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            report.probes += 1
            started = time.monotonic()
            try:
                with urllib.request.urlopen(url, timeout=limit) as answer:
                    answer.read()
                    elapsed = time.monotonic() - started
                    if answer.status == 200 and elapsed <= limit:
                        report.answered += 1
                        report.slowest = max(report.slowest, elapsed)
                    else:
                        report.failures.append(f"{answer.status} after {elapsed:.2f} s")
            except OSError as error:
                report.failures.append(f"{type(error).__name__} after {time.monotonic() - started:.2f} s: {error}")
            time.sleep(max(0.0, 0.25 - (time.monotonic() - started)))
        report.reconnects, report.open_at_end = clients.reconnects, clients.open_now()
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--sockets", type=int, default=50)
    parser.add_argument("--interval", type=float, default=5)
    parser.add_argument("--body", action="store_true", help="slow bodies (whole headers, a form body trickled in)")
    args = parser.parse_args()
    caddy = shutil.which("caddy")
    if caddy is None:
        print("bench/slow_clients.py: caddy is not installed (apt-get install caddy)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="slow-clients-") as folder_name:
        folder = Path(folder_name)
        gunicorn_port, caddy_port = free_port(), free_port()
        gunicorn = start_gunicorn(gunicorn_port, folder / "var", folder / "gunicorn.log")
        proxy = None
        try:
            wait_for_200(f"http://127.0.0.1:{gunicorn_port}/healthz", timeout=60, process=gunicorn)
            options = {"seconds": args.seconds, "sockets": args.sockets, "interval": args.interval, "body": args.body}
            print(attack("127.0.0.1", gunicorn_port, **options).line("gunicorn alone"), flush=True)
            # The first attack's sockets are closed: gunicorn's threads are free again. Caddy starts only
            # now, so that its health check (every 15 s) never saw gunicorn under the first attack.
            wait_for_200(f"http://127.0.0.1:{gunicorn_port}/healthz", timeout=60, process=gunicorn)
            proxy = start_caddy(caddy_port, gunicorn_port, folder, folder / "caddy.log", caddy)
            wait_for_200(f"http://127.0.0.1:{caddy_port}/healthz", timeout=30, process=proxy)
            print(attack("127.0.0.1", caddy_port, **options).line("through Caddy"), flush=True)
        finally:
            if proxy is not None:
                stop(proxy)
            stop(gunicorn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
