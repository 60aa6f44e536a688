"""Chaos run: a mixed workload against the portal while its processes are SIGKILLed; then the invariants.

Run: .venv/bin/python bench/chaos.py [--minutes 10] [--database chaos_db] [--seed N]
It recreates the scratch PostgreSQL database (`createdb -h 127.0.0.1 -U postgres`; the name must start
with "chaos"), starts its own Redis server (port 6391, no persistence), gunicorn (2 workers x 4
threads), a Celery worker on default,releases and one on gpu (the tiny preset on the CPU), all
bound to 127.0.0.1. Client threads drive public reads, correction suggestions, imports, review
transitions, benchmark jobs and release cuts (bounded by --max-requests, --max-jobs, --max-releases)
as the application's database role (not a superuser: `manage.py db_grants`), while a chaos thread SIGKILLs a gunicorn worker (its master starts another), a Celery worker (the
script restarts it) or the Redis server (restarted empty) at random moments. The sweepers run every
--sweep-seconds (as beat would, faster). Then the chaos stops, everything comes back, the work left
settles (up to --settle-seconds), and the invariants are checked and printed: every write that got a
2xx is stored; every review state equals its last event's target; every job and release build is
finished or progressing with a fresh heartbeat, and none ran twice; every published release
verifies (manage.py verify_release); no staging folder is left. Exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PORT, REDIS_PORT = 8767, 6391
APP_ROLE = "chaos_app"
PROTOCOL = "gfm-guide-20261014-protocol-nt-ia3-finetune-runtime"
RECIPE = "nt-v1-500m-ia3-splice-sites-all-10000-steps"
TINY = {"preset": "tiny", "task": "promoter_tata", "steps": 12, "batch_size": 2, "precision": "fp32", "device": "cpu"}

SETUP = """
import django, json, os
django.setup()
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from portal.tokens import api_token_create
call_command("migrate", verbosity=0)
call_command("db_grants", os.environ["CHAOS_APP_ROLE"], stdout=open(os.devnull, "w"))
call_command("import_seed", stdout=open(os.devnull, "w"))
call_command("ensure_roles", stdout=open(os.devnull, "w"))
tokens = {}
for name, group in [("curator-a", "Curators"), ("curator-b", "Curators"), ("manager", "Release managers"),
                    ("operator", "Benchmark operators")]:
    user = get_user_model().objects.create_user(f"chaos-{name}", password="chaos-password-123456")
    user.groups.add(Group.objects.get(name=group))
    tokens[name] = api_token_create(user=user)
print(json.dumps(tokens))
"""

CHECK = (ROOT / "bench" / "chaos_check.py").read_text()

SWEEP = """
import django
django.setup()
from benchmarks.tasks import benchmark_jobs_sweep
from releases.tasks import release_builds_sweep
benchmark_jobs_sweep(); release_builds_sweep()
"""


class Fleet:
    """The processes under test: started, SIGKILLed and restarted, always stopped at the end."""

    def __init__(self, env: dict[str, str], folder: Path):
        self.env, self.folder, self.procs = env, folder, {}
        self.kills: Counter[str] = Counter()
        self.restarts: Counter[str] = Counter()
        self.lock = threading.Lock()

    def commands(self) -> dict[str, list[str]]:
        celery = [sys.executable, "-m", "celery", "-A", "portal", "worker", "--loglevel", "WARNING"]
        return {
            "redis": [
                "redis-server",
                "--port",
                str(REDIS_PORT),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            "gunicorn": [
                sys.executable,
                "-m",
                "gunicorn",
                "portal.wsgi",
                "--bind",
                f"127.0.0.1:{PORT}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--log-level",
                "warning",
                "--graceful-timeout",
                "5",
            ],
            "worker": [*celery, "-Q", "default,releases", "-c", "2", "-n", "chaos-main@%h"],
            "gpu-worker": [*celery, "-Q", "gpu", "-c", "1", "--prefetch-multiplier", "1", "-n", "chaos-gpu@%h"],
        }

    def start(self, name: str) -> None:
        log = open(self.folder / f"{name}.log", "ab")
        self.procs[name] = subprocess.Popen(
            self.commands()[name], cwd=ROOT, env=self.env, stdout=log, stderr=log, start_new_session=True
        )

    def kill(self, name: str) -> None:
        """SIGKILL the process group: a Celery worker and its pool, or the Redis server."""
        with self.lock:
            proc = self.procs[name]
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            self.kills[name] += 1

    def restart(self, name: str) -> None:
        with self.lock:
            self.start(name)
            self.restarts[name] += 1

    def kill_gunicorn_worker(self) -> bool:
        """SIGKILL one of gunicorn's worker processes; the master starts another."""
        children = Path(f"/proc/{self.procs['gunicorn'].pid}/task/{self.procs['gunicorn'].pid}/children")
        pids = children.read_text().split() if children.exists() else []
        if not pids:
            return False
        os.kill(int(random.choice(pids)), signal.SIGKILL)
        self.kills["gunicorn worker"] += 1
        return True

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


class Workload:
    """Client threads; every write answered with a 2xx is remembered for the final check."""

    def __init__(self, tokens: dict[str, str], args: argparse.Namespace):
        self.tokens, self.args = tokens, args
        self.writes: dict[str, list] = {
            k: [] for k in ("corrections", "configurations", "review_events", "jobs", "releases")
        }
        self.statuses: dict[str, Counter[int]] = {}
        # Server errors other than 503 (a service down, Retry-After) and 599 (no answer): what was asked
        # and the first bytes of the answer, to be explained (the gunicorn log holds the traceback).
        self.server_errors: list[str] = []
        self.count, self.lock = 0, threading.Lock()
        self.evaluations = [
            "nt-500m-ia3-finetune-runtime-dalla-torre-2025",
            "nt-2-5b-ia3-finetune-runtime-dalla-torre-2025",
        ]

    def call(self, name: str, method: str, path: str, body=None, token: str | None = None) -> tuple[int, dict]:
        headers = {"Host": "127.0.0.1"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Token {self.tokens[token]}"
        try:
            connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
            connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = connection.getresponse()
            status, raw = response.status, response.read()
            connection.close()
        except (OSError, http.client.HTTPException):
            status, raw = 599, b""  # no answer: the process serving it was killed
        with self.lock:
            self.statuses.setdefault(name, Counter())[status] += 1
            if status >= 500 and status not in (503, 599):
                self.server_errors.append(f"{time.strftime('%H:%M:%S')} {status} {method} {path}: {raw[:300]!r}")
        try:
            data = json.loads(raw) if raw and raw[:1] in b"{[" else {}
        except ValueError:
            data = {}
        return status, data

    def read(self) -> None:
        path = random.choice(
            [
                "/",
                f"/protocols/{PROTOCOL}/",
                "/coverage/",
                "/search/?q=IA3",
                "/api/v1/protocols/",
                "/api/v1/evaluations/?page_size=20",
                "/api/v1/releases/",
                "/releases/",
            ]
        )
        self.call("public read", "GET", path)

    def correction(self) -> None:
        body = {
            "target_type": "protocol",
            "target_id": PROTOCOL,
            "explanation": f"Chaos run suggestion {random.random()}",
        }
        status, data = self.call("correction", "POST", "/api/v1/corrections/", body)
        if status == 201:
            with self.lock:
                self.writes["corrections"].append(data["status_url"].rstrip("/").rsplit("/", 1)[1])

    def imports(self) -> None:
        stable_id = f"chaos-config-{random.getrandbits(48):012x}"
        document = {
            "format": "benchmark-evidence-import",
            "version": 2,
            "configurations": [{"stable_id": stable_id, "name": f"Chaos run configuration {stable_id}"}],
        }
        status, _ = self.call("import", "POST", "/api/v1/imports/", document, token="curator-a")
        if 200 <= status < 300:
            with self.lock:
                self.writes["configurations"].append(stable_id)

    def transition(self) -> None:
        curator = random.choice(["curator-a", "curator-b"])
        evaluation = random.choice(self.evaluations)
        status, record = self.call("review transition", "GET", f"/api/v1/evaluations/{evaluation}/", token=curator)
        _, available = self.call(
            "review transition", "GET", f"/api/v1/evaluations/{evaluation}/transitions/", token=curator
        )
        if status != 200 or not isinstance(available, list) or not available:
            return
        body = {
            "transition": random.choice(available)["name"],
            "reason": "Chaos run review.",
            "expected_state": record["review_state"],
        }
        status, data = self.call(
            "review transition", "POST", f"/api/v1/evaluations/{evaluation}/transitions/", body, curator
        )
        if status == 200:
            with self.lock:
                self.writes["review_events"].append(data["event"]["id"])

    def job(self) -> None:
        if len(self.writes["jobs"]) >= self.args.max_jobs:
            return self.read()
        status, data = self.call(
            "benchmark job", "POST", "/api/v1/benchmark-jobs/", {"recipe": RECIPE, "overrides": TINY}, token="operator"
        )
        if status == 201:
            with self.lock:
                self.writes["jobs"].append(data["id"])

    def release(self) -> None:
        if len(self.writes["releases"]) >= self.args.max_releases:
            return self.read()
        status, data = self.call("release cut", "POST", "/api/v1/releases/", {}, token="manager")
        if status == 202:  # accepted: the row is there, a worker builds it
            with self.lock:
                self.writes["releases"].append(int(data["url"].rstrip("/").rsplit("/", 1)[1]))

    def run(self, deadline: float) -> None:
        actions = [
            (self.read, 50),
            (self.correction, 14),
            (self.imports, 10),
            (self.transition, 16),
            (self.job, 5),
            (self.release, 5),
        ]
        while time.monotonic() < deadline:
            with self.lock:
                if self.count >= self.args.max_requests:
                    return
                self.count += 1
            random.choices([a for a, _ in actions], [w for _, w in actions])[0]()


def chaos(fleet: Fleet, deadline: float, stop: threading.Event, args: argparse.Namespace) -> None:
    """At random moments: SIGKILL a gunicorn worker, a Celery worker, or the Redis server, and bring it back."""
    while not stop.wait(random.uniform(args.min_gap, args.max_gap)) and time.monotonic() < deadline:
        victim = random.choices(["gunicorn", "worker", "gpu-worker", "redis"], [4, 3, 2, 2])[0]
        if victim == "gunicorn":
            fleet.kill_gunicorn_worker()
            continue
        fleet.kill(victim)
        time.sleep(random.uniform(0.5, 3.0))
        fleet.restart(victim)


def django_run(code: str, env: dict[str, str], stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return done.stdout


def sweeping(env: dict[str, str], stop: threading.Event, every: float) -> None:
    while not stop.wait(every):
        subprocess.run([sys.executable, "-c", SWEEP], cwd=ROOT, env=env, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--database", default="chaos_db")
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--max-jobs", type=int, default=16)
    parser.add_argument("--max-releases", type=int, default=8)
    parser.add_argument("--min-gap", type=float, default=3.0, help="seconds between kills, at least")
    parser.add_argument("--max-gap", type=float, default=12.0)
    parser.add_argument("--sweep-seconds", type=float, default=10.0)
    parser.add_argument("--settle-seconds", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if not args.database.startswith("chaos"):
        raise SystemExit("the scratch database's name must start with 'chaos' (it is dropped and created again)")
    random.seed(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="bench-chaos-"))
    pg = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *pg, "--if-exists", args.database], check=True)
    subprocess.run(["createdb", *pg, args.database], check=True)
    # Everything but the set-up connects as the documented application role (deploy/postgres-roles.sh:
    # no superuser, SELECT and INSERT only on the audit tables once `db_grants` has run).
    subprocess.run(
        [
            "psql",
            *pg,
            "-d",
            args.database,
            "-v",
            "ON_ERROR_STOP=1",
            "-qc",
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN"
            f" CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOINHERIT; END IF; END $$;"
            f" REVOKE TEMPORARY ON DATABASE {args.database} FROM PUBLIC; GRANT CONNECT ON DATABASE {args.database} TO {APP_ROLE}",
        ],
        check=True,
    )
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("CACHE_URL",)},
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{args.database}",
        "REDIS_URL": f"redis://127.0.0.1:{REDIS_PORT}/0",
        "PORTAL_VAR_DIR": str(folder / "var"),
        "PORTAL_RELEASES_DIR": str(folder / "releases"),
        "PORTAL_LOG_LEVEL": "WARNING",
        "PORTAL_CORRECTIONS_PER_IP": "1000000",
        "PORTAL_SEARCHES_PER_IP": "1000000",
        "PORTAL_CORRECTIONS_PER_RECORD": "1000000",
        "PORTAL_API_ANON_RATE": "100000000/minute",
        "PORTAL_API_USER_RATE": "100000000/minute",
        "PORTAL_REVIEW_FOUR_EYES": "1",
        "BENCHMARK_HEARTBEAT_SECONDS": "2",
        "BENCHMARK_STALE_AFTER_SECONDS": "15",
        "BENCHMARK_RESEND_AFTER_SECONDS": "15",
        "PORTAL_RELEASE_STALE_AFTER_SECONDS": "15",
    }
    fleet = Fleet(env, folder)
    fleet.start("redis")
    time.sleep(0.5)
    owner = env | {"CHAOS_APP_ROLE": APP_ROLE}  # the set-up migrates as the schema's owner
    tokens = json.loads(django_run(SETUP, owner).strip().splitlines()[-1])
    env["DATABASE_URL"] = f"postgres://{APP_ROLE}@127.0.0.1:5432/{args.database}"
    stop = threading.Event()
    try:
        for name in ("gunicorn", "worker", "gpu-worker"):
            fleet.start(name)
        wait_for_gunicorn()
        workload = Workload(tokens, args)
        started = time.monotonic()
        deadline = started + args.minutes * 60
        threads = [threading.Thread(target=workload.run, args=(deadline,)) for _ in range(args.clients)]
        threads += [
            threading.Thread(target=chaos, args=(fleet, deadline, stop, args)),
            threading.Thread(target=sweeping, args=(env, stop, args.sweep_seconds)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads[: args.clients]:
            thread.join()
        elapsed = time.monotonic() - started
        stop.set()
        for thread in threads[args.clients :]:
            thread.join()
        settled = settle(env, fleet, args.settle_seconds)
        print(
            f"chaos run: {elapsed:.0f} s on PostgreSQL ({args.database}) and Redis :{REDIS_PORT}, "
            f"{args.clients} clients, settled in {settled:.0f} s"
        )
        total = sum(sum(c.values()) for c in workload.statuses.values())
        print(f"requests: {total} ({total / elapsed:.1f}/s)")
        for name, statuses in sorted(workload.statuses.items()):
            print(f"  {name:<18} {sum(statuses.values()):>7}  {dict(sorted(statuses.items()))}")
        print(f"kills: {dict(fleet.kills)}; restarts: {dict(fleet.restarts)} (gunicorn's master replaces its workers)")
        print(f"server errors other than 503: {len(workload.server_errors)}")
        for line in workload.server_errors[:20]:
            print(f"  {line}")
        if workload.server_errors:
            print(f"  (tracebacks: {folder / 'gunicorn.log'}; the folder is kept)")
        print("2xx writes: " + ", ".join(f"{k} {len(v)}" for k, v in workload.writes.items()))
        print("invariants:")
        report = django_run(CHECK, env, stdin=json.dumps(workload.writes))
        lines = report.strip().splitlines()
        print("\n".join(lines[:-1]))
        result = json.loads(lines[-1])
        verified = [verify(env, release) for release in result["published"]]
        problems = [release for release, ok in zip(result["published"], verified, strict=True) if not ok]
        print(
            f"  {'ok  ' if not problems else 'FAIL'} every published release verifies ({len(verified)} releases)"
            + (f": {problems}" if problems else "")
        )
        violations = result["violations"] + len(problems)
        print(f"invariant violations: {violations}")
        return 1 if violations else 0
    finally:
        stop.set()
        fleet.stop()


def wait_for_gunicorn(timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status < 500:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"gunicorn did not answer on port {PORT} within {timeout:.0f} s")
        time.sleep(0.2)


UNFINISHED = """
import django
django.setup()
from benchmarks.models import BenchmarkJob
from releases.models import ReleaseBuild
print(BenchmarkJob.objects.filter(status__in=["queued", "running"]).count() + ReleaseBuild.objects.filter(status__in=["requested", "building"]).count())
"""


def settle(env: dict[str, str], fleet: Fleet, limit: float) -> float:
    """Everything up again; sweep until no job or build is left unfinished, or `limit` seconds pass."""
    for name in ("redis", "worker", "gpu-worker"):
        if fleet.procs[name].poll() is not None:
            fleet.restart(name)
    started = time.monotonic()
    while time.monotonic() - started < limit:
        subprocess.run([sys.executable, "-c", SWEEP], cwd=ROOT, env=env, capture_output=True)
        if int(django_run(UNFINISHED, env).strip() or 0) == 0:
            break
        time.sleep(5)
    return time.monotonic() - started


def verify(env: dict[str, str], release_id: str) -> bool:
    done = subprocess.run(
        [sys.executable, "manage.py", "verify_release", release_id], cwd=ROOT, env=env, capture_output=True, text=True
    )
    return done.returncode == 0 and "intact" in done.stdout


if __name__ == "__main__":
    sys.exit(main())
