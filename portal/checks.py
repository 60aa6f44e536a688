"""Deployment checks of the portal's own settings (`manage.py check --deploy`)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register


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
