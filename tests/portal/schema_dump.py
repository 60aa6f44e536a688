"""Print the schema of a freshly migrated SQLite database, one line per object (a table as the sorted
items of its definition), for tests/portal/test_migrations.py. With REPLACED_MIGRATIONS=1 it migrates
through the migrations that the squashed ones replace (a copy of them without the squashed files)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

BASE = Path(__file__).resolve().parents[2]
SQUASHED_APPS = ("records", "releases")


def replaced_only() -> dict[str, str]:
    """A copy of each squashed app's migrations without its squashed files, as MIGRATION_MODULES."""
    folder = Path(tempfile.mkdtemp(prefix="replaced-migrations-"))
    (folder / "replaced").mkdir()
    (folder / "replaced" / "__init__.py").write_text("")
    for app in SQUASHED_APPS:
        shutil.copytree(
            BASE / app / "migrations",
            folder / "replaced" / app,
            ignore=shutil.ignore_patterns("*squashed*", "__pycache__"),
        )
    sys.path.insert(0, str(folder))
    return {app: f"replaced.{app}" for app in SQUASHED_APPS}


def top_level_items(definition: str) -> list[str]:
    items, depth, current = [], 0, ""
    for character in definition:
        depth += (character == "(") - (character == ")")
        if character == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += character
    return sorted([*items, current.strip()])


def main() -> None:
    sys.path.insert(0, str(BASE))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django
    from django.conf import settings

    modules = replaced_only() if os.environ.get("REPLACED_MIGRATIONS") else {}
    django.setup()
    settings.MIGRATION_MODULES = modules
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
        )
        for kind, name, table, sql in cursor.fetchall():
            if kind == "table" and sql:
                print(f"table {name}", *top_level_items(sql.split("(", 1)[1].rsplit(")", 1)[0]), sep="\n  ")
            else:
                print(kind, name, table, sql)


if __name__ == "__main__":
    main()
