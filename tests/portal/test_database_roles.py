"""The compose deployment's database roles (deploy/postgres-roles.sh, `manage.py db_grants`): the owner
migrates; the application's role reads and writes the catalogue through the ORM but can neither switch
the append-only triggers off nor rewrite an audit row, and makes no tables. PostgreSQL only."""

from __future__ import annotations

import pytest

from tests.portal.pg_deployment import check

AUDIT_TABLE = "records_historicalarea"


@pytest.fixture(scope="module")
def deployment(pg_deployment):
    return pg_deployment


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
