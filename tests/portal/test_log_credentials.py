"""No credential sent with a request reaches a log line: the portal's JSON lines, gunicorn's access and error logs."""

from __future__ import annotations

import json
import logging
import time

import pytest

from tests.portal.gunicorn_process import Gunicorn, dockerfile_command, serve_command

SECRET = "s3cr3t0123456789abcdef"
#: Requests a client might send with a credential where it does not belong, or where it does.
CREDENTIAL_REQUESTS = [
    ("GET", f"/api/v1/evaluations/?token={SECRET}&page_size=2", {}),  # 400: an unknown parameter
    ("POST", f"/api/v1/evaluations/?api_key={SECRET}", {}),
    ("GET", f"/nowhere/?access_token={SECRET}", {}),
    ("GET", f"/coverage/?password={SECRET}&X-Amz-Signature={SECRET}", {}),
    ("POST", "/api/v1/evaluations/", {"Authorization": f"Token {SECRET}"}),
    ("GET", "/api/v1/evaluations/", {"Authorization": f"Bearer {SECRET}", "Referer": f"http://x/?token={SECRET}"}),
]


def console_formatter() -> logging.Formatter:
    """The formatter of the handler every portal log line goes through (settings.LOGGING)."""
    handler = next(h for h in logging.getLogger().handlers if h.get_name() == "console")
    assert handler.formatter is not None
    return handler.formatter


@pytest.mark.django_db
def test_it_writes_no_credential_from_a_request_into_the_json_log_lines(client, caplog):
    with caplog.at_level(logging.INFO):
        for method, path, headers in CREDENTIAL_REQUESTS:
            client.generic(method, path, headers=headers)
    lines = [console_formatter().format(record) for record in caplog.records]
    assert any(json.loads(line)["logger"] == "django.request" for line in lines)  # the 401s and 404 are logged
    leaked = [line for line in lines if SECRET in line]
    assert not leaked, "\n".join(leaked)
    requests = [json.loads(line) for line in lines if json.loads(line)["logger"] == "portal.request"]
    assert [entry["path"] for entry in requests] == [path.split("?")[0] for _, path, _ in CREDENTIAL_REQUESTS]
    assert any("token=[redacted]" in line or "api_key=[redacted]" in line for line in lines)


#: An access-log format that names the query string, the referrer and the Authorization header.
WIDE_FORMAT = '%(h)s "%(r)s" %(s)s %(b)s q=%(q)s "%(f)s" "%({Authorization}i)s" "%({http_authorization}e)s"'


@pytest.mark.backend_independent
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "command",
    [serve_command(), dockerfile_command(), serve_command("--access-logformat", WIDE_FORMAT)],
    ids=["bin-serve", "image", "wide-format"],
)
def test_a_real_gunicorn_writes_no_credential_into_its_access_log_or_the_portal_lines(command, tmp_path):
    server = Gunicorn(command, tmp_path / "gunicorn.log")
    try:
        statuses = [server.send(method, path, headers)[0] for method, path, headers in CREDENTIAL_REQUESTS]
        assert statuses == [400, 401, 404, 200, 401, 200], server.log()[-4000:]
        time.sleep(0.5)  # the access lines of the last answers
    finally:
        server.stop()
    log = server.log()
    access_lines = [line for line in log.splitlines() if any(f'" {code} ' in line for code in (200, 400, 401, 404))]
    assert len(access_lines) >= len(CREDENTIAL_REQUESTS), log[-4000:]  # gunicorn's access log is there
    assert "?token=[redacted]&page_size=2" in log and "api_key=[redacted]" in log, log[-4000:]
    assert SECRET not in log, "\n".join(line for line in log.splitlines() if SECRET in line)


@pytest.mark.backend_independent
@pytest.mark.parametrize(
    ("line", "logged"),
    [
        ("GET /x/?token=abc&page_size=5 HTTP/1.1", "GET /x/?token=[redacted]&page_size=5 HTTP/1.1"),
        ("/x/?API_KEY=abc&author=Smith&cursor=cD0x", "/x/?API_KEY=[redacted]&author=Smith&cursor=cD0x"),
        ("/x/?%74oken=abc&q=IA3", "/x/?%74oken=[redacted]&q=IA3"),
        (
            "http://h/?client_secret=a&X-Amz-Signature=b",
            "http://h/?client_secret=[redacted]&X-Amz-Signature=[redacted]",
        ),
        ("Authorization: Token 0123456789abcdef", "Authorization: [redacted]"),
        ("HTTP_COOKIE='sessionid=abc; csrftoken=def'", "HTTP_COOKIE='[redacted]'"),
        ("sent Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "sent Bearer [redacted]"),
        (
            "Token authentication failed for /api/v1/x/?page_size=2",
            "Token authentication failed for /api/v1/x/?page_size=2",
        ),
    ],
)
def test_it_redacts_each_credential_and_keeps_every_other_word(line, logged):
    from portal.redact import redact

    assert redact(line) == logged
