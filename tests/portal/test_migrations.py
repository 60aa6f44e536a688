from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_it_has_a_migration_for_every_model_change():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def schema_after_migrate(tmp_path, **env) -> str:
    import os
    import subprocess
    import sys
    from pathlib import Path

    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CACHE_URL")}
    environment.update(PORTAL_VAR_DIR=str(tmp_path), PORTAL_LOG_LEVEL="WARNING", **env)
    script = Path(__file__).with_name("schema_dump.py")
    done = subprocess.run([sys.executable, str(script)], env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.backend_independent  # it builds SQLite databases of its own, whatever the pass's backend
@pytest.mark.embedded_pass
def test_the_squashed_migrations_build_the_schema_of_the_migrations_they_replace(tmp_path):
    """A new database takes the squashed migrations; one from before them took the replaced ones:
    both must end with the same tables, constraints, indexes and triggers."""
    squashed = schema_after_migrate(tmp_path / "squashed")
    replaced = schema_after_migrate(tmp_path / "replaced", REPLACED_MIGRATIONS="1")
    assert squashed.count("\ntrigger records_") == replaced.count("\ntrigger records_") > 20
    assert squashed.count("\ntrigger releases_") == replaced.count("\ntrigger releases_") > 4
    assert squashed == replaced
