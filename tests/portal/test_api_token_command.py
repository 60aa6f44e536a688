"""`manage.py api_token`: the way curators, release managers and operators get an API token."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def token_of(username: str, *options: str) -> str:
    out = io.StringIO()
    call_command("api_token", username, *options, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip()


def test_it_prints_a_curators_token_that_writes_through_the_api_as_that_curator(make_user, client):
    curator = make_user("curator", "curator-with-token")
    key = token_of("curator-with-token")
    assert key == token_of("curator-with-token")  # the same token again, not a new one each time
    answer = client.get("/api/v1/protocols/", HTTP_AUTHORIZATION=f"Token {key}")
    assert answer.status_code == 200
    from rest_framework.authtoken.models import Token

    assert Token.objects.get(key=key).user == curator
    # A curator cannot reach the admin's token pages: this command is the way.
    client.force_login(curator)
    assert client.get("/admin/authtoken/tokenproxy/").status_code in (302, 403, 404)


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
