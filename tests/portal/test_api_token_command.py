"""`manage.py api_token`: the way curators, release managers and operators get an API token. Tokens
are stored hashed: the key is printed once, when it is made, and the database holds only its digest."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from portal.models import ApiToken
from portal.tokens import token_digest
from tests.conftest import database_url_for

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def token_of(username: str, *options: str) -> str:
    out = io.StringIO()
    call_command("api_token", username, *options, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip()


def test_it_prints_a_curators_token_once_that_writes_through_the_api_as_that_curator(make_user, client):
    curator = make_user("curator", "curator-with-token")
    key = token_of("curator-with-token")
    answer = client.get("/api/v1/protocols/", HTTP_AUTHORIZATION=f"Token {key}")
    assert answer.status_code == 200
    stored = ApiToken.objects.get(user=curator)
    assert stored.digest == token_digest(key) and stored.prefix == key[:8]
    # a second call cannot show the key again: it says how the token starts and how to get a new one
    with pytest.raises(CommandError, match=rf"has a token already .*starting {key[:8]}.*--rotate"):
        token_of("curator-with-token")
    # A curator cannot reach any admin page of tokens: this command is the way.
    client.force_login(curator)
    assert client.get("/admin/portal/apitoken/").status_code in (302, 403, 404)


def test_no_key_is_anywhere_in_the_database(make_user):
    make_user("curator", "curator-dumped")
    key = token_of("curator-dumped")
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            columns = [c.name for c in connection.introspection.get_table_description(cursor, table)]
            quoted = ", ".join(connection.ops.quote_name(c) for c in columns)
            cursor.execute(f"SELECT {quoted} FROM {connection.ops.quote_name(table)}")
            assert not any(key in str(value) for row in cursor.fetchall() for value in row), table


def test_it_rotates_and_revokes_a_token(make_user, client):
    make_user("benchmark_operator", "operator-with-token")
    first = token_of("operator-with-token")
    second = token_of("operator-with-token", "--rotate")
    assert second != first
    assert client.get("/api/v1/protocols/", HTTP_AUTHORIZATION=f"Token {first}").status_code == 401
    assert client.get("/api/v1/protocols/", HTTP_AUTHORIZATION=f"Token {second}").status_code == 200
    assert token_of("operator-with-token", "--revoke") == "token of operator-with-token: revoked"
    assert client.get("/api/v1/protocols/", HTTP_AUTHORIZATION=f"Token {second}").status_code == 401


def test_it_refuses_an_unknown_or_inactive_user(make_user):
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        token_of("nobody")
    user = make_user("release_manager", "gone-manager")
    user.is_active = False
    user.save()
    with pytest.raises(CommandError, match="inactive"):
        token_of("gone-manager")


@pytest.mark.django_db(transaction=True)
def test_the_documented_command_prints_the_key_once_and_exits_1_with_one_line_after(make_user):
    """As the docs show it: `.venv/bin/python manage.py api_token <username>`, in a shell."""
    make_user("curator", "curator-shell")
    env = {**os.environ, "DATABASE_URL": database_url_for(connection.settings_dict, connection.vendor)}
    command = [sys.executable, "manage.py", "api_token", "curator-shell"]
    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    key = first.stdout.strip()
    assert len(key) == 40 and "shown only now" in first.stderr
    assert ApiToken.objects.get(user__username="curator-shell").digest == token_digest(key)
    again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and again.stdout == "" and key not in again.stderr
    assert again.stderr.strip().splitlines() == [again.stderr.strip()] and "--rotate" in again.stderr
