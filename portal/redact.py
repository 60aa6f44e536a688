"""Credentials kept out of log lines: query parameters named like one, Authorization and Cookie values.

Standard library only: gunicorn's logger (portal/gunicorn_conf.py) uses it before Django is set up,
and the portal's log formatters (portal/observability.py) on every line they write.

A query parameter is a credential when its name (percent-decoded, lower-cased) contains `token`,
`secret`, `passw`, `pwd`, `apikey`, `credential`, `signature` or `jwt`, or one of its parts split on
`-`, `_` or `.` is `key`, `auth`, `authorization`, `session`, `sessionid`, `sig`, `pass`, `otp` or
`bearer` (`api_key`, `access_token`, `X-Amz-Signature`; not `author` or `page_size`). Its value
becomes REDACTED; the name stays, so a log still shows that one was sent.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

REDACTED = "[redacted]"

_NAME_FRAGMENTS = re.compile(r"token|secret|passw|pwd|apikey|credential|signature|jwt")
_NAME_PARTS = frozenset({"key", "auth", "authorization", "session", "sessionid", "sig", "pass", "otp", "bearer"})
#: `name=value` at the start, after `?`, `&`, `;`, `,` or a space (a query string, a URL inside a
#: longer line, a Cookie header, `key=value` words in a message). Possessive: no backtracking.
_PARAMETER = re.compile(r"(?<![^?&;\s,])(?P<name>[^=&;?#\s\"'<>]++)=(?P<value>[^&;#\s\"'<>]*+)")
#: `Authorization: ...`, `"authorization": "..."`, `Cookie: ...`, `HTTP_AUTHORIZATION='...'`.
_HEADER = re.compile(
    r"(?i)(?P<lead>\b(?:http_)?(?:proxy[-_])?(?:authorization|cookie)[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\"'\r\n]+)"
)
#: An authorization scheme followed by something that looks like a credential (a digit, base64's
#: `+/=`, or 20 characters in one word).
_SCHEME = re.compile(
    r"(?P<lead>\b(?:Token|Bearer|Basic|Digest)\s+)(?P<value>(?=\S*[0-9+/=]|\S{20})[A-Za-z0-9._~+/-]{8,}=*)"
)
_SCHEMES = ("Token ", "Bearer ", "Basic ", "Digest ")
#: A line without one of these (lower-cased) names no credential parameter, unless it is percent-encoded.
_KEYWORDS = ("token", "secret", "pass", "pwd", "key", "auth", "session", "sig", "credential", "jwt", "otp", "bearer")


def is_credential_name(name: str) -> bool:
    """Whether a query parameter of this name carries a credential (see the module's docstring)."""
    lowered = unquote_plus(name).strip().lower()
    if _NAME_FRAGMENTS.search(lowered):
        return True
    return any(part in _NAME_PARTS for part in re.split(r"[-_.\s\[\]]+", lowered))


def _parameter(match: re.Match[str]) -> str:
    if not is_credential_name(match["name"]):
        return match[0]
    return f"{match['name']}={REDACTED}"


def redact(text: str) -> str:
    """TEXT with every credential it holds replaced by REDACTED; text without one comes back as it is.

    Each pattern runs only on a line holding a word it needs, so a line without any costs a few
    substring checks (every request's log lines go through here)."""
    lowered = text.lower()
    if "authorization" in lowered or "cookie" in lowered:
        text = _HEADER.sub(lambda match: match["lead"] + REDACTED, text)
    if any(scheme in text for scheme in _SCHEMES):
        text = _SCHEME.sub(lambda match: match["lead"] + REDACTED, text)
    if "=" in text and ("%" in text or any(keyword in lowered for keyword in _KEYWORDS)):
        text = _PARAMETER.sub(_parameter, text)
    return text


def redact_query(query: str) -> str:
    """A bare query string (`a=1&token=x`, no leading `?`) with its credentials' values replaced."""
    return redact(query) if query else query
