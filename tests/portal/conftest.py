"""The portal tests' shared fixture: one database set up and migrated as the compose file does it."""

from __future__ import annotations

import pytest

from tests.portal.pg_deployment import Deployment, check, compose_migrate_script, new_deployment


@pytest.fixture(scope="session")
def pg_deployment(tmp_path_factory) -> Deployment:
    """Roles and database by deploy/postgres-roles.sh, then the compose `migrate` service's command as
    the owner role. PostgreSQL only; dropped (database and roles) at the end of the session."""
    from django.conf import settings

    default = settings.DATABASES["default"]
    if default["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("database roles, pg_dump and pg_restore are PostgreSQL's (set DATABASE_URL)")
    deployment = new_deployment(
        tmp_path_factory.mktemp("deployment"),
        host=default["HOST"] or "localhost",
        port=int(default["PORT"] or 5432),
        superuser=default["USER"] or "postgres",
    )
    try:
        check(deployment.set_up_database(deployment.database))
        # Compose writes $$ for a $ the shell expands; the app role's name is PORTAL_DB_APP there too.
        script = compose_migrate_script().replace("$$", "$")
        check(deployment.sh(f"export PORTAL_DB_APP={deployment.app}; {script}", role=deployment.owner, timeout=600))
        yield deployment
    finally:
        deployment.drop(*(deployment.database + suffix for suffix in ("", "_restored", "_legacy")))
