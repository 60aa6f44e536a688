"""The compose deployment's database roles (deploy/postgres-roles.sh, `manage.py db_grants`): the owner
migrates; the application's role reads and writes the catalogue through the ORM but can neither switch
the append-only triggers off nor rewrite an audit row, and makes no tables. PostgreSQL only."""

from __future__ import annotations

import pytest

from tests.portal.pg_deployment import COMPOSE, check

AUDIT_TABLE = "records_historicalarea"


@pytest.fixture(scope="module")
def deployment(pg_deployment):
    return pg_deployment


@pytest.mark.backend_independent
def test_the_compose_file_migrates_as_the_owner_and_runs_everything_else_as_the_app_role():
    services = COMPOSE["services"]
    migrate, postgres = services["migrate"], services["postgres"]
    assert migrate["environment"]["DATABASE_URL"] == "postgres://portal_owner@postgres:5432/portal"
    assert migrate["environment"]["DATABASE_PASSWORD_FILE"] == "/run/secrets/postgres_owner_password"
    assert 'db_grants "$$PORTAL_DB_APP"' in migrate["command"][2]
    assert migrate["environment"]["PORTAL_DB_APP"] == postgres["environment"]["PORTAL_DB_APP"] == "portal_app"
    for name in ("web", "worker", "gpu-worker", "beat"):
        environment, secrets = services[name]["environment"], services[name]["secrets"]
        assert environment["DATABASE_URL"] == "postgres://portal_app@postgres:5432/portal", name
        assert environment["DATABASE_PASSWORD_FILE"] == "/run/secrets/postgres_app_password", name
        assert "postgres_app_password" in secrets and not {"postgres_password", "postgres_owner_password"} & set(
            secrets
        )
    assert "postgres_app_password" not in migrate["secrets"] and "postgres_password" not in migrate["secrets"]
    # The superuser's password is the postgres service's alone; the image runs the roles script on first start.
    assert postgres["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    assert "./deploy/postgres-roles.sh:/docker-entrypoint-initdb.d/10-portal-roles.sh:ro" in postgres["volumes"]
    assert {"postgres_owner_password", "postgres_app_password"} <= set(COMPOSE["secrets"])


def test_the_app_role_reads_and_writes_the_catalogue_through_the_orm(deployment):
    script = (
        "from records.models import Area; "
        "area = Area.objects.order_by('pk').first(); area.label = area.label + ' (edited)'; area.save(); "
        "print(Area.objects.get(pk=area.pk).label, area.history.count())"
    )
    out = check(deployment.manage("shell", "-c", script, role=deployment.app))
    assert "(edited)" in out
    # The edit wrote its audit row (INSERT on the audit table is the app's).
    code, rows = deployment.psql(f"SELECT count(*) FROM {AUDIT_TABLE}", role=deployment.app)
    assert code == 0 and int(rows) >= 2


def test_the_app_role_is_no_superuser_and_cannot_switch_the_triggers_off(deployment):
    code, out = deployment.psql("SET session_replication_role = replica", role=deployment.app)
    assert code != 0 and "permission denied" in out
    code, out = deployment.psql(f"ALTER TABLE {AUDIT_TABLE} DISABLE TRIGGER ALL", role=deployment.app)
    assert code != 0 and "must be owner" in out
    code, out = deployment.psql(
        "SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls FROM pg_roles"
        f" WHERE rolname = '{deployment.app}'",
        role=deployment.app,
    )
    assert code == 0 and out.strip() == "f|f|f|f|f"


@pytest.mark.parametrize(
    "statement",
    [
        f"UPDATE {AUDIT_TABLE} SET label = 'rewritten'",
        f"DELETE FROM {AUDIT_TABLE}",
        f"TRUNCATE {AUDIT_TABLE}",
    ],
)
def test_the_app_role_cannot_rewrite_an_audit_row(deployment, statement):
    code, out = deployment.psql(statement, role=deployment.app)
    assert code != 0 and "permission denied" in out, out
    code, rows = deployment.psql(f"SELECT count(*) FROM {AUDIT_TABLE} WHERE label = 'rewritten'", role=deployment.app)
    assert (code, rows.strip()) == (0, "0")


def test_the_app_role_truncates_no_table_and_creates_none(deployment):
    code, out = deployment.psql("TRUNCATE records_area CASCADE", role=deployment.app)
    assert code != 0 and "permission denied" in out, out
    code, out = deployment.psql("CREATE TABLE intruder (id int)", role=deployment.app)
    assert code != 0 and "permission denied for schema public" in out, out
    code, out = deployment.psql("CREATE TEMPORARY TABLE intruder (id int)", role=deployment.app)
    assert code != 0 and "permission denied" in out, out


def test_the_owner_migrates_and_the_app_role_may_not(deployment):
    # The migrations are applied (by the owner, in the fixture): nothing is left to do...
    out = check(deployment.manage("migrate", "--check", role=deployment.owner))
    assert "error" not in out.lower()
    # ... and the app role could not have: it owns nothing.
    code, out = deployment.psql("ALTER TABLE records_area ADD COLUMN intruder int", role=deployment.app)
    assert code != 0 and "must be owner" in out, out


def test_db_grants_refuses_a_superuser_and_sqlite_with_one_line(deployment):
    completed = deployment.manage("db_grants", deployment.superuser, role=deployment.owner)
    assert completed.returncode == 1
    assert completed.stderr.strip().startswith("CommandError: role") and len(completed.stderr.strip().splitlines()) == 1
    completed = deployment.sh("DATABASE_URL= python manage.py db_grants nobody", role=deployment.owner)
    assert completed.returncode == 1 and "is for PostgreSQL" in completed.stderr, completed.stderr


def test_the_roles_script_hands_a_database_the_superuser_migrated_to_the_owner(deployment):
    """A deployment from before these roles (everything owned by the superuser): the script, run again,
    makes the owner own every object, and the app role is as restricted as on a fresh database."""
    database = f"{deployment.database}_legacy"
    check_psql(deployment.psql(f'CREATE DATABASE "{database}"', role=deployment.superuser, database="postgres"))
    check(deployment.manage("migrate", "--noinput", role=deployment.superuser, database=database))
    check(deployment.set_up_database(database))
    code, out = deployment.psql(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        f" WHERE n.nspname = 'public' AND c.relowner <> '{deployment.owner}'::regrole",
        role=deployment.owner,
        database=database,
    )
    assert (code, out.strip()) == (0, "0")
    out = check(deployment.manage("migrate", "--noinput", role=deployment.owner, database=database))
    assert "No migrations to apply" in out
    code, out = deployment.psql(f"DELETE FROM {AUDIT_TABLE}", role=deployment.app, database=database)
    assert code != 0 and "permission denied" in out, out
    code, out = deployment.psql("SELECT count(*) FROM records_area", role=deployment.app, database=database)
    assert code == 0, out


def check_psql(result: tuple[int, str]) -> str:
    code, out = result
    assert code == 0, out
    return out
