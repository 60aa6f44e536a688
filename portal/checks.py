"""Deployment checks of the portal's own settings (`manage.py check --deploy`)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Tags, Warning, register
from django.http.request import validate_host


@register(Tags.security, deploy=True)
def metrics_token_set(app_configs=None, **kwargs) -> list[Warning]:
    """Production serves /metrics only behind a bearer token; without one it answers 404."""
    if settings.METRICS_TOKEN:
        return []
    return [
        Warning(
            "PORTAL_METRICS_TOKEN is not set: in production /metrics answers 404, and anywhere else anyone may read it",
            hint="set PORTAL_METRICS_TOKEN (or PORTAL_METRICS_TOKEN_FILE) and send it as `Authorization: Bearer <token>`",
            id="portal.W001",
        )
    ]


@register(Tags.security, deploy=True)
def site_url_set(app_configs=None, **kwargs) -> list[Warning]:
    """Links in mail start from PORTAL_SITE_URL: in production it must be the public https address,
    whose host the portal answers (ALLOWED_HOSTS), or every mailed link is wrong."""
    hint = "set PORTAL_SITE_URL to the public address, e.g. https://portal.example.org (no path)"
    if not settings.PORTAL_SITE_URL_SET:
        problem = f"PORTAL_SITE_URL is not set: links in mail point at {settings.PORTAL_SITE_URL}"
    elif not settings.PORTAL_SITE_URL.startswith("https://"):
        problem = f"PORTAL_SITE_URL={settings.PORTAL_SITE_URL} is not https: links in mail would be sent in the clear"
    elif not validate_host(urlsplit(settings.PORTAL_SITE_URL).hostname or "", settings.ALLOWED_HOSTS):
        problem = f"PORTAL_SITE_URL={settings.PORTAL_SITE_URL} names a host not in ALLOWED_HOSTS: its links answer 400"
        hint = "add its host to ALLOWED_HOSTS, or correct PORTAL_SITE_URL"
    else:
        return []
    return [Warning(problem, hint=hint, id="portal.W002")]
