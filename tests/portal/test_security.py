"""Security by default: headers on every page type, production settings, admin login limits."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from records.seed import PROTOCOL_ID

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PAGE_TYPES = [
    "/",
    f"/protocols/{PROTOCOL_ID}/",
    "/evaluations/nt-500m-ia3-finetune-runtime-dalla-torre-2025/",
    "/coverage/",
    "/search/?q=IA3",
    "/corrections/new/?record=protocol:" + PROTOCOL_ID,
    "/api/v1/protocols/",
    "/api/v1/docs/",
    "/admin/login/",
    "/admin/",
    "/admin/records/evaluation/",
    "/no-such-page/",
]


@pytest.mark.parametrize("url", PAGE_TYPES)
def test_every_page_type_sends_the_security_headers(admin_client, seeded, url):
    response = admin_client.get(url)
    assert response.status_code in (200, 302, 404), url
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "strict-origin-when-cross-origin"


def deployment_checks(**env: str) -> subprocess.CompletedProcess:
    """`manage.py check --deploy` with production settings, a metrics token and `env` (PORTAL_SITE_URL unset unless given)."""
    environment = {k: v for k, v in os.environ.items() if k != "PORTAL_SITE_URL"}
    environment.update(
        {"PORTAL_PRODUCTION": "1", "SECRET_KEY": "k" * 40 + "-Zq9#xW2!pL", "ALLOWED_HOSTS": "portal.example"}
    )
    environment.update({"PORTAL_METRICS_TOKEN": "a-metrics-token", **env})
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_the_deployment_checks():
    completed = deployment_checks(PORTAL_SITE_URL="https://portal.example")
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_production_adds_hsts_secure_cookies_and_no_debug_page(tmp_path):
    code = (
        "from django.test import Client; import json;"
        "c = Client(HTTP_HOST='portal.example', HTTP_X_FORWARDED_PROTO='https');"
        "r = c.get('/no-such-page/');"
        "print(json.dumps({'status': r.status_code, 'hsts': r.get('Strict-Transport-Security'), 'body': r.content.decode()[:2000]}));"
        "from django.conf import settings;"
        "print(json.dumps([settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, settings.DEBUG, settings.SECURE_SSL_REDIRECT]));"
        "print(json.dumps({'icon': c.get('/favicon.ico')['Location']}))"
    )
    env = {k: v for k, v in os.environ.items()}
    env.update(
        {
            "PORTAL_PRODUCTION": "1",
            "SECRET_KEY": "k" * 40 + "-Zq9#xW2!pL",
            "ALLOWED_HOSTS": "portal.example",
            "PORTAL_LOG_LEVEL": "ERROR",
            "PORTAL_STATIC_ROOT": str(tmp_path / "static"),
        }
    )
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, timeout=300
    )
    completed = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith(("{", "["))]
    page, flags = json.loads(lines[0]), json.loads(lines[1])
    assert page["status"] == 404 and "Traceback" not in page["body"] and "DEBUG" not in page["body"]
    assert page["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert flags == [True, True, False, True]
    assert re.fullmatch(
        r"/static/favicon\.[0-9a-f]{12}\.svg", json.loads(lines[2])["icon"]
    )  # the manifest's hashed name


def test_it_refuses_debug_in_production():
    env = {**os.environ, "PORTAL_PRODUCTION": "1", "PORTAL_DEBUG": "1", "SECRET_KEY": "k" * 60, "ALLOWED_HOSTS": "x"}
    completed = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode != 0 and "PORTAL_DEBUG cannot be on" in completed.stderr


def test_the_admin_login_is_rate_limited(client, settings):
    settings.ADMIN_LOGIN_ATTEMPTS = 3
    statuses = [client.post("/admin/login/", {"username": "nobody", "password": "wrong"}).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_a_curator_who_signs_in_all_day_is_never_locked_out_but_failures_still_are(client, settings, make_user):
    settings.ADMIN_LOGIN_ATTEMPTS = 3
    make_user("curator", "curator-one")
    for _ in range(12):  # a working day's sign-ins from one address
        answer = client.post("/admin/login/", {"username": "curator-one", "password": "a-long-test-password"})
        assert answer.status_code == 302
        client.post("/admin/logout/")
    failures = [
        client.post("/admin/login/", {"username": "curator-one", "password": "wrong"}).status_code for _ in range(4)
    ]
    assert failures == [200, 200, 200, 429]
    refused = client.post("/admin/login/", {"username": "curator-one", "password": "a-long-test-password"})
    assert refused.status_code == 429 and "failed logins" in refused.content.decode()


def test_password_validators_refuse_a_weak_password(django_user_model):
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        validate_password("password123")


@pytest.mark.parametrize(
    "method, url, body, content_type",
    [
        ("get", "/api/v1/protocols/?protocol_id=%00", None, None),
        ("get", "/search/?q=a%00b", None, None),
        ("post", "/api/v1/baseline-roles/", '{"protocol_id": "\\u0000"}', "application/json"),
    ],
)
def test_it_refuses_null_characters_anywhere_with_400(client, method, url, body, content_type):
    response = getattr(client, method)(url, body, content_type=content_type) if body else getattr(client, method)(url)
    assert response.status_code == 400 and "null characters" in response.content.decode()


@pytest.mark.parametrize(
    ("site_url", "said"),
    [
        (None, "PORTAL_SITE_URL is not set"),
        ("http://portal.example", "is not https"),
        ("https://other.example", "not in ALLOWED_HOSTS"),
    ],
)
def test_the_deployment_checks_refuse_a_site_url_mail_links_cannot_use(site_url, said):
    completed = deployment_checks(**({"PORTAL_SITE_URL": site_url} if site_url else {}))
    assert completed.returncode != 0 and "portal.W002" in completed.stderr and said in completed.stderr
