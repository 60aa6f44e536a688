"""Backup and restore as the docs document them (docs/operations/backup-restore.md), on a database set up as the compose file sets it up:
pg_dump of a portal with its seed and a published release, pg_restore into a new empty database (the
one deploy/postgres-roles.sh creates on a fresh stack), the release files unpacked from their archive.
The restored portal serves its pages as the app role, the release verifies, the audit is append-only.
PostgreSQL only."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.portal.pg_deployment import ROOT, Deployment, check

#: The backup page's commands, run here by the local superuser on the local server (PGHOST, PGPORT)
#: where the page runs them in the postgres container; DATABASE and FILE are all that differ.
BACKUP_COMMAND = "pg_dump -U {superuser} -Fc {database} > {file}"
RESTORE_COMMAND = (
    "pg_restore -U {superuser} -d {database} --clean --if-exists --exit-on-error --single-transaction < {file}"
)
FILES_BACKUP_COMMAND = "tar -C {var} -czf {file} releases"
FILES_RESTORE_COMMAND = "tar -C {var} -xzf {file}"

BUILD_A_RELEASE = """
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from records.models import Area
from releases.build import release_build
from releases.services import release_cut
from reviews.roles import RELEASE_MANAGERS
area = Area.objects.order_by("pk").first()
area.label = area.label + " (before the backup)"
area.save()
user = get_user_model().objects.create_user("backup-release-manager", "rm@example.org", "a-long-password-1", is_staff=True)
user.groups.add(Group.objects.get(name=RELEASE_MANAGERS.group))
release = release_build(release_pk=release_cut(actor=user).pk)
print("release", release.status, release.release_id, release.pk)
"""

SERVE_PAGES = """
from django.test import Client
client = Client(HTTP_HOST="localhost")
for path in ("/", "/releases/", "/releases/%s/", "/healthz"):
    answer = client.get(path, follow=True)
    print(path, answer.status_code, answer.redirect_chain[-1][0] if answer.redirect_chain else "")
"""


BACKUP_PAGE = ROOT / "docs" / "operations" / "backup-restore.md"


@pytest.mark.backend_independent
def test_the_backup_page_shows_the_commands_run_here():
    page = BACKUP_PAGE.read_text()
    shown = [
        BACKUP_COMMAND.format(superuser="postgres", database="portal", file="backup/portal-$(date +%F).dump"),
        RESTORE_COMMAND.format(superuser="postgres", database="portal", file="backup/portal-DATE.dump"),
        FILES_BACKUP_COMMAND.format(var="/var/lib/portal", file="/backup/releases-$(date +%F).tar.gz"),
        FILES_RESTORE_COMMAND.format(var="/var/lib/portal", file="/backup/releases-DATE.tar.gz"),
    ]
    assert [command for command in shown if command not in page] == []


def shell(command: str, deployment: Deployment) -> subprocess.CompletedProcess:
    env = os.environ | {"PGHOST": deployment.host, "PGPORT": str(deployment.port)}
    return subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def restored(pg_deployment):
    """The deployment backed up and restored into `<database>_restored`, its files into a new folder."""
    deployment = pg_deployment
    out = check(deployment.manage("shell", "-c", BUILD_A_RELEASE, role=deployment.app))
    [(status, release_id, release_pk)] = [line.split()[1:] for line in out.splitlines() if line.startswith("release ")]
    assert status == "published"
    folder = deployment.folder
    dump, archive = folder / "portal.dump", folder / "releases.tar.gz"
    check(
        shell(
            BACKUP_COMMAND.format(superuser=deployment.superuser, database=deployment.database, file=dump), deployment
        )
    )
    check(shell(FILES_BACKUP_COMMAND.format(var=folder / "var", file=archive), deployment))

    # A fresh stack: the postgres image's first start runs the roles script (roles exist already:
    # the same cluster), which creates the empty database; the restore fills it.
    database = f"{deployment.database}_restored"
    check(deployment.set_up_database(database))
    restore = shell(RESTORE_COMMAND.format(superuser=deployment.superuser, database=database, file=dump), deployment)
    (folder / "restored-var").mkdir()
    check(shell(FILES_RESTORE_COMMAND.format(var=folder / "restored-var", file=archive), deployment))
    return deployment, database, restore, release_id, release_pk


def manage_restored(restored, *args: str, role: str | None = None) -> subprocess.CompletedProcess:
    deployment, database, *_ = restored
    env = deployment.env(role or deployment.app, database) | {"PORTAL_VAR_DIR": str(deployment.folder / "restored-var")}
    return subprocess.run(
        ["python", "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_documented_restore_into_an_empty_database_exits_0_with_no_error(restored):
    _deployment, _database, restore, *_ = restored
    assert restore.returncode == 0, restore.stderr
    assert "error" not in (restore.stdout + restore.stderr).lower(), restore.stderr


def test_the_restored_portal_serves_its_pages_as_the_app_role(restored):
    *_, release_id, release_pk = restored
    out = check(manage_restored(restored, "shell", "-c", SERVE_PAGES.replace("%s", release_pk)))
    answers = [line.split() for line in out.splitlines() if line.startswith("/")]
    assert answers == [
        ["/", "200"],
        ["/releases/", "200"],
        [f"/releases/{release_pk}/", "200", f"/releases/{release_id}/"],
        ["/healthz", "200"],
    ], out


def test_the_restored_release_verifies_intact(restored):
    *_, release_id, _pk = restored
    completed = manage_restored(restored, "verify_release", release_id)
    assert completed.returncode == 0 and f"{release_id}: intact" in completed.stdout, (
        completed.stdout + completed.stderr
    )


def test_the_restored_audit_is_append_only_and_the_app_role_as_restricted(restored):
    deployment, database, *_ = restored
    code, rows = deployment.psql(
        "SELECT count(*) FROM records_historicalarea WHERE label LIKE '%(before the backup)'",
        role=deployment.app,
        database=database,
    )
    assert (code, rows.strip()) == (0, "1")
    # Even the owner meets the triggers (restored with the schema); the app role has not the privilege.
    code, out = deployment.psql(
        "UPDATE records_historicalarea SET label = 'rewritten'", role=deployment.owner, database=database
    )
    assert code != 0 and "audit rows are append-only" in out, out
    code, out = deployment.psql(
        "UPDATE records_historicalarea SET label = 'rewritten'", role=deployment.app, database=database
    )
    assert code != 0 and "permission denied" in out, out
    code, out = deployment.psql("SET session_replication_role = replica", role=deployment.app, database=database)
    assert code != 0 and "permission denied" in out, out
    # The owner still owns the schema: the next upgrade's migrations run.
    check(manage_restored(restored, "migrate", "--check", role=deployment.owner))
