"""Reading configuration from the environment, failing loudly and early.

Every helper raises ImproperlyConfigured with one line that names the variable and says what is
wrong, so a malformed value stops start-up instead of surfacing later inside a request.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.validators import validate_email

from common.licences import DEFAULT_LICENCE, LicenceInvalid, licence_resolve

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no or on/off)")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str) -> list[str]:
    """A comma-separated list of IP addresses or networks ('10.0.0.2, 172.16.0.0/12, fd00::/8'),
    each checked by the ipaddress module; given back as written, for common.ratelimit to parse."""
    items = env_list(name, [])
    for item in items:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {item!r} is not an IP address or network") from None
    return items


def env_site_url(name: str, default: str) -> tuple[str, bool]:
    """The portal's public address from NAME: scheme://host[:port], no path, without a trailing
    slash; and whether it was set at all. Anything else fails here, so a mail never carries a link
    that cannot work."""
    used = name
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default, False
    url = raw.rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises on a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImproperlyConfigured(f"{used}={raw!r} is not an http(s) address; use e.g. https://portal.example.org")
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        raise ImproperlyConfigured(
            f"{used}={raw!r} must be scheme://host[:port] only (no path, query or credentials); links add the path"
        )
    return url, True


def env_data_licence() -> tuple[str, str, str]:
    """PORTAL_DATA_LICENSE (an SPDX id, CC-BY-4.0 unless set), PORTAL_DATA_LICENSE_NAME and
    PORTAL_DATA_LICENSE_URL (needed for an id common.licences does not know), as given, once checked
    that common.licences.data_licence() can resolve them."""
    spdx_id = os.environ.get("PORTAL_DATA_LICENSE", "").strip() or DEFAULT_LICENCE
    name = os.environ.get("PORTAL_DATA_LICENSE_NAME", "").strip()
    url = os.environ.get("PORTAL_DATA_LICENSE_URL", "").strip()
    try:
        licence_resolve(spdx_id=spdx_id, name=name, url=url)
    except LicenceInvalid as exc:
        raise ImproperlyConfigured(str(exc)) from None
    return spdx_id, name, url


def env_email(name: str, default: str = "") -> str:
    """An e-mail address from NAME (empty: none), checked as Django's forms check one."""
    raw = os.environ.get(name, default).strip()
    if raw:
        try:
            validate_email(raw)
        except ValidationError:
            raise ImproperlyConfigured(f"{name}={raw!r} is not an e-mail address") from None
    return raw


def env_secret(name: str) -> str | None:
    """The value of NAME, or the contents of the file named by NAME_FILE (Docker secrets)."""
    value = os.environ.get(name)
    file_name = os.environ.get(f"{name}_FILE")
    if value and file_name:
        raise ImproperlyConfigured(f"set either {name} or {name}_FILE, not both")
    if file_name:
        try:
            return Path(file_name).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_name!r} cannot be read: {exc.strerror}") from None
    return value or None


def persistent_secret_key(var_dir: Path) -> str:
    """A key kept under var/ so sessions survive restarts of the embedded default (never in production)."""
    key_file = var_dir / "secret_key"
    if key_file.exists():
        return key_file.read_text(encoding="utf-8").strip()
    var_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(key)
    return key


SQLITE_OPTIONS = {
    # IMMEDIATE takes the write lock when a transaction starts, so two writers queue on the busy
    # timeout instead of one failing later with "database is locked" on lock upgrade.
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
}


def database_from_env(var_dir: Path) -> dict:
    """DATABASE_URL (postgres:// or sqlite:///) or, with none set, SQLite under var/."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(var_dir / "portal.sqlite3"),
            "OPTIONS": dict(SQLITE_OPTIONS),
            "TEST": {"NAME": str(var_dir / "test-portal.sqlite3")},
            # Kept open between requests, as on PostgreSQL: opening one (the pragmas, Django's SQL
            # functions) costs more than a cached API answer; outside a transaction it holds no snapshot.
            "CONN_MAX_AGE": env_int("DATABASE_CONN_MAX_AGE", 60),
            "CONN_HEALTH_CHECKS": True,
        }
    scheme = urlsplit(url).scheme
    if scheme not in {"postgres", "postgresql", "pgsql", "sqlite"}:
        raise ImproperlyConfigured(
            f"DATABASE_URL has scheme {scheme or '(none)'!r}; use postgres://user:password@host:port/name or sqlite:////absolute/path"
        )
    try:
        config = dj_database_url.parse(url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60), conn_health_checks=True)
    except (ValueError, dj_database_url.UnknownSchemeError) as exc:
        raise ImproperlyConfigured(f"DATABASE_URL cannot be parsed: {exc or 'malformed URL'}") from None
    if not config.get("NAME"):
        raise ImproperlyConfigured("DATABASE_URL names no database (add /name to the URL)")
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
        config["TEST"] = {"NAME": str(Path(config["NAME"]).with_name("test-" + Path(config["NAME"]).name))}
    else:
        password = env_secret("DATABASE_PASSWORD")
        if password:
            config["PASSWORD"] = password
        config.setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
        # No JIT compilation: the portal's statements are short, and compiling a plan the planner
        # costs high (a search over a common word) took 20 to 80 ms, more than it saved (bench/search.py).
        config["OPTIONS"].setdefault("options", "-c jit=off")
    return config


def redis_url_from_env(name: str = "REDIS_URL") -> str | None:
    """A validated redis:// URL, or None when the variable is unset."""
    url = os.environ.get(name, "").strip()
    if not url:
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"{name} has an invalid port: {url!r}") from None
    if parts.scheme not in {"redis", "rediss"}:
        raise ImproperlyConfigured(f"{name} must start with redis:// or rediss://, got {url!r}")
    if not parts.hostname:
        raise ImproperlyConfigured(f"{name} names no host: {url!r}")
    database = parts.path.lstrip("/")
    if database and not database.isdigit():
        raise ImproperlyConfigured(f"{name} database must be a number, got {database!r}")
    del port
    return url


def redis_url_with_db(url: str, database: int) -> str:
    """The same server as url, another logical database (keeps the cache apart from the broker)."""
    parts = urlsplit(url)
    return parts._replace(path=f"/{database}").geturl()
