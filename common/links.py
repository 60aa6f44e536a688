"""Absolute links to the portal's own pages, made in one place.

A link made while answering a request follows the host and scheme that request came with (Django
checks the host against ALLOWED_HOSTS, and reads the scheme behind a proxy by SECURE_PROXY_SSL_HEADER),
so an API client is sent back to the address it used. A link made without a request (mail sent by a
task, a management command) starts from settings.PORTAL_SITE_URL, which bin/serve sets from
PORTAL_BIND and production sets to the public https address.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def absolute_url(path: str, *, request: HttpRequest | None = None) -> str:
    """`path` (a site-absolute path, as `reverse()` gives it) as an absolute URL of this portal."""
    if not path.startswith("/"):
        raise ValueError(f"a site-absolute path starts with '/': {path!r}")
    if request is not None:
        return request.build_absolute_uri(path)
    return f"{settings.PORTAL_SITE_URL}{path}"
