"""The newcomer's first start, measured: clone the repository, run `bin/serve`, time the first answers.

    python bench/fresh_start.py [--repo PATH] [--keep]

Clones the repository's committed HEAD (`--repo`, default this checkout) into a temporary folder,
runs `bin/serve` there on a free port with a clean environment (no DATABASE_URL or REDIS_URL: the
embedded default), and polls until `/` answers 200 and `/readyz` answers 200 (a worker has run
its heartbeat). It prints the seconds from the start of `bin/serve` to each, and to the gpu worker's
start once the benchmark runner is installed in the background (up to `--runner-timeout`), then
stops `bin/serve` as Ctrl-C does (SIGINT to its process group) and prints how long that took.
pip installs into a fresh `.venv` from whatever index pip is configured with (here: local
registries and wheels on disk), as `bin/_venv.sh` does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Lines of bin/serve's output that end a phase of the start, and the phase's name.
MARKS = {
    "Operations to perform": "portal's requirements installed",
    "account admin": "database migrated, seed imported",
    "bin/serve: installing the benchmark runner": "processes started",
}


def default_sigint() -> None:
    """In the child before it runs bin/serve: SIGINT back to its default. A process started in the
    background of a non-interactive shell inherits SIGINT ignored, and bash cannot trap a signal
    ignored when it starts: Ctrl-C's SIGINT would then do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kill_session(session: int) -> None:
    """SIGKILL every process of the session bin/serve leads (its processes have their own groups)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:
            try:
                os.kill(int(stat.parent.name), signal.SIGKILL)
            except ProcessLookupError:
                pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def status_of(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, urllib.error.URLError):
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=str(ROOT), help="the repository to clone (default: this checkout)")
    parser.add_argument("--timeout", type=float, default=600, help="give up on the site after this many seconds")
    parser.add_argument("--runner-timeout", type=float, default=600, help="how long to wait for the gpu worker")
    parser.add_argument("--keep", action="store_true", help="keep the clone (and its log) afterwards")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="portal-fresh-"))
    clone = folder / "portal"
    subprocess.run(["git", "clone", "--quiet", args.repo, str(clone)], check=True)
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CACHE_URL", "VIRTUAL_ENV", "PORTAL_VAR_DIR"}
        and not key.startswith("PORTAL_")
    }
    env["PORTAL_BIND"] = f"127.0.0.1:{port}"
    log_path = folder / "serve.log"
    base = f"http://127.0.0.1:{port}"
    figures: dict[str, float] = {}
    with open(log_path, "w") as log:
        started = time.monotonic()
        serve = subprocess.Popen(
            ["bin/serve"],
            cwd=clone,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=default_sigint,
        )
        try:
            deadline = started + args.timeout
            while ("/" not in figures or "/readyz" not in figures) and time.monotonic() < deadline:
                if serve.poll() is not None:
                    raise SystemExit(f"bin/serve ended with {serve.returncode}; see {log_path}")
                text = log_path.read_text()
                for mark, label in MARKS.items():
                    if label not in figures and mark in text:
                        figures[label] = time.monotonic() - started
                        print(f"{label:32} after {figures[label]:6.1f} s", flush=True)
                for path in ("/", "/readyz"):
                    if path not in figures and status_of(base + path) == 200:
                        figures[path] = time.monotonic() - started
                        print(f"{path:8} 200 after {figures[path]:6.1f} s", flush=True)
                time.sleep(0.25)
            runner_deadline = time.monotonic() + args.runner_timeout
            while time.monotonic() < runner_deadline and "/readyz" in figures:
                if "gpu@" in log_path.read_text() and " ready." in log_path.read_text().split("gpu@", 1)[1]:
                    figures["gpu worker"] = time.monotonic() - started
                    print(f"gpu worker ready after {figures['gpu worker']:6.1f} s (runner installed)", flush=True)
                    break
                time.sleep(1)
        finally:
            stop_started = time.monotonic()
            os.killpg(serve.pid, signal.SIGINT)  # what Ctrl-C at a terminal sends
            try:
                code = serve.wait(timeout=60)
            except subprocess.TimeoutExpired:
                kill_session(serve.pid)
                code = serve.wait()
            print(f"stopped   after {time.monotonic() - stop_started:6.1f} s (exit {code})", flush=True)
    text = log_path.read_text()
    if "SIGKILL" in text or "killing what is left" in text:
        print("the stop was not clean: see", log_path)
    if args.keep:
        print("kept", folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)
    missing = {"/", "/readyz"} - figures.keys()
    return 1 if missing or code != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
