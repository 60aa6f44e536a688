"""A database set up as the compose file sets it up, on the local PostgreSQL: deploy/postgres-roles.sh run
by the superuser (roles and database named uniquely: roles are cluster-wide), then the `migrate`
service's own command run as the owner role. Commands run in subprocesses with the URL of the role they
connect as, on Celery's filesystem transport under a folder of their own."""

from __future__ import annotations

import os
import secrets
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def compose_migrate_script() -> str:
    """The shell command of the compose file's `migrate` service (`sh -c SCRIPT`)."""
    command = COMPOSE["services"]["migrate"]["command"]
    assert command[:2] == ["sh", "-c"], command
    return command[2]


@dataclass
class Deployment:
    host: str
    port: int
    superuser: str
    database: str
    owner: str
    app: str
    folder: Path

    def url(self, role: str, database: str | None = None) -> str:
        return f"postgres://{role}@{self.host}:{self.port}/{database or self.database}"

    def env(self, role: str, database: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CACHE_URL"}}
        env |= {
            "DATABASE_URL": self.url(role, database),
            "PORTAL_VAR_DIR": str(self.folder / "var"),
            "PORTAL_LOG_LEVEL": "WARNING",
            # `python` in the compose command is this interpreter.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        return env

    def sh(self, script: str, *, role: str, database: str | None = None, timeout: int = 300):
        return subprocess.run(
            ["sh", "-c", script],
            cwd=ROOT,
            env=self.env(role, database),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def manage(self, *args: str, role: str, database: str | None = None, timeout: int = 300):
        return self.sh(shlex.join(["python", "manage.py", *args]), role=role, database=database, timeout=timeout)

    def psql(self, sql: str, *, role: str, database: str | None = None):
        """One statement through psql as `role`: (exit code, its output)."""
        completed = subprocess.run(
            ["psql", "--no-psqlrc", "-X", "-v", "ON_ERROR_STOP=1", "-At", "-d", self.url(role, database), "-c", sql],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return completed.returncode, completed.stdout + completed.stderr

    def set_up_database(self, database: str) -> subprocess.CompletedProcess:
        """deploy/postgres-roles.sh, as the postgres image runs it on an empty data directory."""
        for name in ("owner", "app"):
            (self.folder / f"{name}_password").write_text(secrets.token_urlsafe(16))
        env = os.environ | {
            "PGHOST": self.host,
            "PGPORT": str(self.port),
            "POSTGRES_USER": self.superuser,
            "PORTAL_DB_NAME": database,
            "PORTAL_DB_OWNER": self.owner,
            "PORTAL_DB_APP": self.app,
            "PORTAL_DB_OWNER_PASSWORD_FILE": str(self.folder / "owner_password"),
            "PORTAL_DB_APP_PASSWORD_FILE": str(self.folder / "app_password"),
        }
        return subprocess.run(
            ["sh", str(ROOT / "deploy" / "postgres-roles.sh")], env=env, capture_output=True, text=True, timeout=120
        )

    def drop(self, *databases: str) -> None:
        for database in databases:
            self.psql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)', role=self.superuser, database="postgres")
        for role in (self.owner, self.app):
            self.psql(f'DROP ROLE IF EXISTS "{role}"', role=self.superuser, database="postgres")


def new_deployment(folder: Path, *, host: str, port: int, superuser: str) -> Deployment:
    suffix = secrets.token_hex(4)
    return Deployment(
        host=host,
        port=port,
        superuser=superuser,
        database=f"deploy_{suffix}",
        owner=f"deploy_owner_{suffix}",
        app=f"deploy_app_{suffix}",
        folder=folder,
    )


def check(completed: subprocess.CompletedProcess) -> str:
    assert completed.returncode == 0, (
        f"exit {completed.returncode}\n{completed.stdout[-3000:]}\n{completed.stderr[-5000:]}"
    )
    return completed.stdout
