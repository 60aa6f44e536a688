"""Version counters: bumped inside the writer's transaction, read by caches and conditional GETs.

Bumping is one upsert of one row, so it holds that row's lock until the writer commits: writers of
the catalogue take turns at their very end (SQLite serialises every writer anyway), and a reader
sees a number only once the data it stands for is committed. A cache key that includes the
number is then never stale: new data means a new number, hence a new key."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.http import HttpRequest
from django.utils import timezone

from common.models import Version

CATALOGUE = "catalogue"


@dataclass(frozen=True)
class Current:
    number: int
    changed_at: datetime

    @property
    def key(self) -> str:
        return f"v{self.number}"


def version_bump(*, name: str = CATALOGUE) -> None:
    """Count one more change of `name`; call it inside the transaction that makes the change."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("version_bump must run inside the transaction of the change it versions")
    table = Version._meta.db_table
    # One upsert (PostgreSQL and SQLite alike): two first writers at once cannot both insert the row.
    with transaction.get_connection().cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (name, number, changed_at) VALUES (%s, 1, %s) "
            f"ON CONFLICT (name) DO UPDATE SET number = {table}.number + 1, changed_at = excluded.changed_at",
            [name, timezone.now()],
        )


def version_current(*, name: str = CATALOGUE) -> Current:
    """The committed number and time of the last change (0 and the epoch before any)."""
    row = Version.objects.filter(name=name).values_list("number", "changed_at").first()
    if row is None:
        return Current(0, datetime(1970, 1, 1, tzinfo=UTC))
    return Current(*row)


def version_key(*, name: str = CATALOGUE) -> str:
    """`version_current`'s number and time as one cache-key text, read with one plain SELECT.

    Every cached GET reads it first, so it skips the ORM's query building (a third of a cached
    answer's time). The time is part of the key so that a database restored from a backup, whose
    numbers repeat, does not meet the entries of the numbers it had before."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT number, changed_at FROM {Version._meta.db_table} WHERE name = %s", [name])
        row = cursor.fetchone()
    return "v0" if row is None else f"v{row[0]}@{str(row[1]).replace(' ', 'T')}"


def request_version(request: HttpRequest) -> str:
    """`version_key()` read once per request and kept on it: a page, its parts, the API's cache and
    the X-Portal-Release header all stand for the same version."""
    version = getattr(request, "catalogue_version", None)
    if version is None:
        version = request.catalogue_version = version_key()  # type: ignore[attr-defined]
    return version


CODE_SUFFIXES = {".py", ".html", ".svg"}


@functools.cache
def code_fingerprint() -> str:
    """The deployed code and templates (name, size and modification time of each file, hashed once a
    process): with the catalogue version, the key of every cached rendering, so a deploy never serves
    the previous code's pages or API answers from a shared cache."""
    base = Path(settings.BASE_DIR)
    folders = [base / "templates", *(path for path in base.iterdir() if (path / "__init__.py").is_file())]
    digest = hashlib.sha256()
    for folder in sorted(folders):
        for path in sorted(folder.rglob("*")):
            if path.suffix in CODE_SUFFIXES:
                stat = path.stat()
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]
