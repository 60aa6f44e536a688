"""The one settings module. Every value that differs between machines comes from the environment.

With no environment at all the portal runs on the embedded default: SQLite and Celery's filesystem
transport under var/. DATABASE_URL and REDIS_URL switch to PostgreSQL and Redis; PORTAL_PRODUCTION=1
turns on the production hardening (and then requires SECRET_KEY and ALLOWED_HOSTS).
"""

from __future__ import annotations

from pathlib import Path

from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from portal.env import (
    database_from_env,
    env_bool,
    env_data_licence,
    env_email,
    env_int,
    env_list,
    env_networks,
    env_secret,
    env_site_url,
    env_str,
    persistent_secret_key,
    redis_url_from_env,
    redis_url_with_db,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PORTAL_VAR_DIR", str(BASE_DIR / "var"))).resolve()

PRODUCTION = env_bool("PORTAL_PRODUCTION", False)
DEBUG = env_bool("PORTAL_DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("PORTAL_DEBUG cannot be on when PORTAL_PRODUCTION is on")

SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) must be set when PORTAL_PRODUCTION is on")
    SECRET_KEY = persistent_secret_key(VAR_DIR)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]"])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when PORTAL_PRODUCTION is on")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

PORTAL_SITE_NAME = env_str("PORTAL_SITE_NAME", "Rewire")
# Four-eyes rule: nobody checks the source of a record they edited last; a one-person site may turn it off.
REVIEW_FOUR_EYES = env_bool("PORTAL_REVIEW_FOUR_EYES", True)
# How long a curator's claim on records ("I am checking these", reviews.models.ReviewClaim) lasts.
REVIEW_CLAIM_MINUTES = env_int("PORTAL_REVIEW_CLAIM_MINUTES", 60, minimum=1)
# Public pages name the role that reviewed a record ("a curator"); a site may choose to show names.
PUBLIC_REVIEWER_NAMES = env_bool("PORTAL_PUBLIC_REVIEWER_NAMES", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.sitemaps",
    # Full text search and pg_trgm's lookups on PostgreSQL (records.search_backends); inert on SQLite.
    "django.contrib.postgres",
    "simple_history",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "django_prometheus",
    "common",
    "reviews",
    "records",
    "corrections",
    "releases",
    "benchmarks",
    "pages",
    "portal",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "portal.middleware.PermissionsPolicyMiddleware",  # outermost of the portal's: every answer has it
    "portal.observability.RequestLogMiddleware",
    "portal.middleware.DatabaseLimitsMiddleware",  # before any middleware or view queries
    "portal.health.HealthCheckMiddleware",
    "portal.middleware.RequestSizeLimitMiddleware",
    "portal.middleware.NullCharacterGuardMiddleware",
    "portal.middleware.MetricsAccessMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "portal.middleware.AdminLoginThrottleMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "portal.middleware.DatabaseUnavailableMiddleware",
    "portal.middleware.PortalReleaseHeaderMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.context_processors.site",
            ],
        },
    },
]

DATABASES = {"default": database_from_env(VAR_DIR)}
# Web requests' database limits (portal/db_limits.py), ms, 0 for none: PostgreSQL's statement_timeout
# (under gunicorn's 30 s) and lock_timeout, SQLite's busy timeout; past one a request answers 504 or
# 503 saying so. Celery workers and management commands have none.
DB_STATEMENT_TIMEOUT_MS = env_int("PORTAL_DB_STATEMENT_TIMEOUT_MS", 20_000)
DB_LOCK_TIMEOUT_MS = env_int("PORTAL_DB_LOCK_TIMEOUT_MS", 5_000)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = redis_url_from_env("REDIS_URL")
CACHE_URL = redis_url_from_env("CACHE_URL") or (redis_url_with_db(REDIS_URL, 1) if REDIS_URL else None)
if CACHE_URL:
    _CACHE_STORE = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
else:
    _CACHE_STORE = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "portal"}
# `responses`: rendered API answers keyed by the catalogue version (common.api), in the same store under
# their own prefix (clearing the cache clears them); an old version's entry is never read and expires.
CACHES = {
    "default": _CACHE_STORE,
    "responses": {
        **_CACHE_STORE,
        "KEY_PREFIX": "responses",
        "TIMEOUT": env_int("PORTAL_RESPONSE_CACHE_SECONDS", 3600),
        "OPTIONS": {} if CACHE_URL else {"MAX_ENTRIES": 1000},
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("PORTAL_STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Outside production static files are served straight from the source folders, so the embedded
# default needs no collectstatic step.
WHITENOISE_USE_FINDERS = not PRODUCTION
if not PRODUCTION:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)

RELEASES_DIR = Path(env_str("PORTAL_RELEASES_DIR", str(VAR_DIR / "releases"))).resolve()

# Celery: the database row is the truth, a message only a nudge (docs/architecture/design-map.md).
CELERY_DATA_DIR = VAR_DIR / "celery"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Longer than the longest job's hard time limit, so Redis never re-delivers a running job.
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 6 * 3600, minimum=60),
        "socket_connect_timeout": 5,
    }
else:
    CELERY_BROKER_URL = "filesystem://"
    # Kombu's filesystem transport with atomic writes and claims (portal/kombu_filesystem.py).
    CELERY_BROKER_TRANSPORT = "portal.kombu_filesystem:Transport"
    CELERY_RESULT_BACKEND = f"file://{CELERY_DATA_DIR / 'results'}"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_DATA_DIR / "queue"),
        "data_folder_out": str(CELERY_DATA_DIR / "queue"),
        "processed_folder": str(CELERY_DATA_DIR / "processing"),
        "control_folder": str(CELERY_DATA_DIR / "control"),
        "store_processed": False,
        # A message is taken within a fifth of a second; a worker told to stop stops as soon
        # (portal/kombu_filesystem.py).
        "polling_interval": 0.2,
    }
    for folder in ("queue", "processing", "control", "results"):
        (CELERY_DATA_DIR / folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "releases.tasks.*": {"queue": "releases"},
    "benchmarks.tasks.benchmark_job_run": {"queue": "gpu"},
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The search pages warmed after each catalogue change (pages.search_page); off without the shared cache.
SEARCH_WARM_TOP = env_int("PORTAL_SEARCH_WARM_TOP", 40 if CACHE_URL else 0)
SEARCH_WARM_INTERVAL_SECONDS = env_int("PORTAL_SEARCH_WARM_INTERVAL_SECONDS", 10, minimum=5)
SEARCH_WARM_BUDGET_SECONDS = env_int("PORTAL_SEARCH_WARM_BUDGET_SECONDS", 20, minimum=1)


def _every(task: str, seconds: int) -> dict[str, object]:
    """Beat sends `task` to the default queue every `seconds`; a message not taken within them expires."""
    return {"task": task, "schedule": float(seconds), "options": {"queue": "default", "expires": max(1, seconds - 5)}}


CELERY_BEAT_SCHEDULE = {
    # A worker's heartbeat (/readyz); the reapers of benchmark jobs (re-send lost messages, requeue or
    # fail jobs whose worker died), import jobs and release builds (queued or re-sent, then failed
    # after the attempt limit); the search warm below, when it is on.
    "worker-heartbeat": _every("portal.tasks.worker_heartbeat", 30),
    "benchmark-jobs-sweep": _every("benchmarks.tasks.benchmark_jobs_sweep", 60),
    "import-jobs-sweep": _every("records.tasks.import_jobs_sweep", 60),
    "release-builds-sweep": _every("releases.tasks.release_builds_sweep", 60),
    # The weekly fixity audit re-hashes every file of every published release.
    "release-fixity-audit": {
        "task": "releases.tasks.release_fixity_audit",
        "schedule": crontab(minute=17, hour=3, day_of_week="sun"),
    },
}
if SEARCH_WARM_TOP > 0:
    CELERY_BEAT_SCHEDULE["search-pages-warm"] = _every("pages.tasks.search_pages_warm", SEARCH_WARM_INTERVAL_SECONDS)

# Releases (releases/conf.py describes each).
RELEASE_MAX_ATTEMPTS = env_int("PORTAL_RELEASE_MAX_ATTEMPTS", 3, minimum=1)
RELEASE_STALE_AFTER_SECONDS = env_int("PORTAL_RELEASE_STALE_AFTER_SECONDS", 300, minimum=10)
RELEASE_BUILD_CHUNK_ROWS = env_int("PORTAL_RELEASE_BUILD_CHUNK_ROWS", 10_000, minimum=1)
RELEASE_GIVE_UP_AFTER_SECONDS = env_int("PORTAL_RELEASE_GIVE_UP_AFTER_SECONDS", 3600, minimum=60)
RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS = env_int("PORTAL_RELEASE_BUILD_SOFT_TIME_LIMIT_SECONDS", 7200, minimum=60)
RELEASE_BUILD_TIME_LIMIT_SECONDS = env_int("PORTAL_RELEASE_BUILD_TIME_LIMIT_SECONDS", 7500, minimum=61)

# Imports (records.import_jobs, records.jobs): a document of more entries than this is imported by a
# worker as a job (the API answers 202 with its status URL), never inside a web request.
IMPORT_INLINE_MAX_RECORDS = env_int("PORTAL_IMPORT_INLINE_MAX_RECORDS", 500, minimum=0)
# A real import writes its plan in transactions of about this many records each (records.imports.service):
# other writes get through between them; a document of at most this many is written all or nothing.
IMPORT_WRITE_BATCH_RECORDS = env_int("PORTAL_IMPORT_WRITE_BATCH_RECORDS", 1000, minimum=1)

# Benchmark jobs (defaults in benchmarks/conf.py; time limits per preset in benchmarks/presets.py).
BENCHMARK_HEARTBEAT_SECONDS = env_int("BENCHMARK_HEARTBEAT_SECONDS", 30, minimum=1)
BENCHMARK_STALE_AFTER_SECONDS = env_int("BENCHMARK_STALE_AFTER_SECONDS", 300, minimum=10)
BENCHMARK_RESEND_AFTER_SECONDS = env_int("BENCHMARK_RESEND_AFTER_SECONDS", 600, minimum=10)
BENCHMARK_MAX_ATTEMPTS = env_int("BENCHMARK_MAX_ATTEMPTS", 3, minimum=1)
# PyTorch Inductor's on-disk cache for the GPU worker's runs (a compiled run then pays its compile
# time once per code and PyTorch version, not once per job); the worker exports it before PyTorch loads.
BENCHMARK_INDUCTOR_CACHE_DIR = Path(env_str("TORCHINDUCTOR_CACHE_DIR", str(VAR_DIR / "torchinductor"))).resolve()

# One JSON line per record (PORTAL_LOG_FORMAT=plain for humans at a terminal).
LOG_FORMAT = env_str("PORTAL_LOG_FORMAT", "json")
if LOG_FORMAT not in {"json", "plain"}:
    raise ImproperlyConfigured(f"PORTAL_LOG_FORMAT must be json or plain, got {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        # Both redact credentials (a `?token=` in an address, an Authorization value) from every line.
        "json": {
            "()": "portal.observability.RedactingJsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
        "plain": {
            "()": "portal.observability.RedactingFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env_str("PORTAL_LOG_LEVEL", "INFO")},
    "loggers": {
        "django.server": {"level": "WARNING"},  # requests are logged once, by portal.request
        "bagit": {"level": "WARNING"},  # one line per hashed file otherwise
        "kombu.connection": {"level": "ERROR"},  # "no hostname supplied" for every filesystem-transport connection
    },
}

LOGIN_URL = "admin:login"
# Where a login goes when its `next` is missing or not on this site (Django follows only a `next`
# on ALLOWED_HOSTS): the admin's index, the only place a login is for.
LOGIN_REDIRECT_URL = "admin:index"

# Security headers on every response; the production-only ones below need HTTPS in front.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "strict-origin-when-cross-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("PORTAL_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("PORTAL_HSTS_SECONDS", 365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # The proxy in front terminates TLS and says so in X-Forwarded-Proto.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
# A content security policy with no inline script anywhere, the admin included. Inline *styles* are
# allowed: the admin's history pages, DRF's browsable API and Swagger UI set style attributes.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}
# Permissions-Policy (portal.middleware.PermissionsPolicyMiddleware): no page uses a device, payment or
# ad-interest API, so each (a name Chromium knows) is off, `feature=()`, for the page and any frame.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer", "autoplay", "browsing-topics", "camera", "display-capture",
        "encrypted-media", "fullscreen", "gamepad", "geolocation", "gyroscope", "hid", "idle-detection",
        "local-fonts", "magnetometer", "microphone", "midi", "payment", "picture-in-picture",
        "publickey-credentials-create", "publickey-credentials-get", "screen-wake-lock", "serial", "usb",
        "window-management", "xr-spatial-tracking",
    )
}  # fmt: skip
ADMIN_LOGIN_ATTEMPTS = env_int("PORTAL_ADMIN_LOGIN_ATTEMPTS", 10, minimum=1)
ADMIN_LOGIN_WINDOW_SECONDS = env_int("PORTAL_ADMIN_LOGIN_WINDOW_SECONDS", 15 * 60, minimum=1)
METRICS_TOKEN = env_secret("PORTAL_METRICS_TOKEN") or ""
WORKER_HEARTBEAT_MAX_AGE_SECONDS = env_int("PORTAL_WORKER_HEARTBEAT_MAX_AGE_SECONDS", 120, minimum=10)

# The portal's public address, the root of absolute links made without a request (common.links);
# bin/serve sets it from PORTAL_BIND; unset or plain http is a deploy check warning (portal.checks).
PORTAL_SITE_URL, PORTAL_SITE_URL_SET = env_site_url("PORTAL_SITE_URL", "http://127.0.0.1:8000")

# The data licence (common.licences.data_licence: an SPDX id, CC-BY-4.0 unless set; an unknown id needs
# its name and URL) and the API schema's contact address (none unless set).
PORTAL_DATA_LICENSE, PORTAL_DATA_LICENSE_NAME, PORTAL_DATA_LICENSE_URL = env_data_licence()
PORTAL_CONTACT_EMAIL = env_email("PORTAL_CONTACT_EMAIL")

# Mail: the console on the embedded default; SMTP when EMAIL_HOST is set.
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
)
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_secret("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "portal@localhost")

# How many proxies append to X-Forwarded-For, and their addresses: the header is believed only from a
# connection from one of TRUSTED_PROXIES, one entry per trusted hop from the right (common.ratelimit.
# client_ip); a client reaching gunicorn directly is its own address. With 0 proxies it is ignored.
NUM_PROXIES = env_int("PORTAL_NUM_PROXIES", 0)
TRUSTED_PROXIES = env_networks("PORTAL_TRUSTED_PROXIES")
if NUM_PROXIES and not TRUSTED_PROXIES:
    raise ImproperlyConfigured(
        "PORTAL_NUM_PROXIES is set: PORTAL_TRUSTED_PROXIES must name the proxies' addresses or networks"
    )

# Public correction suggestions (corrections app): limits per client and per record, digest interval.
CORRECTIONS_PER_IP = env_int("PORTAL_CORRECTIONS_PER_IP", 20, minimum=1)
CORRECTIONS_WINDOW_SECONDS = env_int("PORTAL_CORRECTIONS_WINDOW_SECONDS", 3600, minimum=1)
CORRECTIONS_PER_RECORD = env_int("PORTAL_CORRECTIONS_PER_RECORD", 50, minimum=1)
CORRECTIONS_RECORD_WINDOW_SECONDS = env_int("PORTAL_CORRECTIONS_RECORD_WINDOW_SECONDS", 24 * 3600, minimum=1)
CORRECTIONS_DIGEST_INTERVAL_SECONDS = env_int("PORTAL_CORRECTIONS_DIGEST_INTERVAL_SECONDS", 900)

# Comparison charts (pages.page_cache): uncached renders per client address per window for readers
# who are not staff (a cached chart is never limited), and PNG renders at once across all processes.
CHART_RENDERS_PER_IP = env_int("PORTAL_CHART_RENDERS_PER_IP", 30, minimum=1)
CHART_RENDERS_WINDOW_SECONDS = env_int("PORTAL_CHART_RENDERS_WINDOW_SECONDS", 600, minimum=1)
CHART_RENDERS_AT_ONCE = env_int("PORTAL_CHART_RENDERS_AT_ONCE", 1, minimum=1)
# Searches (pages.views.search_page) per client address per window for readers who are not staff.
SEARCHES_PER_IP = env_int("PORTAL_SEARCHES_PER_IP", 120, minimum=1)
SEARCHES_WINDOW_SECONDS = env_int("PORTAL_SEARCHES_WINDOW_SECONDS", 60, minimum=1)

# Request bodies: anything larger is refused with 413 before it is read (portal.middleware).
REQUEST_BODY_LIMITS = {
    "/corrections/": 32 * 1024,
    "/api/v1/corrections/": 32 * 1024,
    "/api/v1/imports/": 10 * 1024 * 1024,
    "/admin/records/importjob/": 10 * 1024 * 1024,
    "": 2 * 1024 * 1024,
}
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

REST_FRAMEWORK = {
    # The throttles find the client with common.ratelimit.client_ip (trusted proxies only), not DRF's NUM_PROXIES.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "portal.tokens.HashedTokenAuthentication",  # `Authorization: Token <key>`, keys stored hashed
        "rest_framework.authentication.SessionAuthentication",  # enforces CSRF for the browsable API
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.DjangoModelPermissionsOrAnonReadOnly"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": ["common.parsers.JSONParser"],
    "DEFAULT_PAGINATION_CLASS": "common.api.StableCursorPagination",
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_SCHEMA_CLASS": "common.api_schema.PortalAutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "common.ratelimit.AnonCountingThrottle",
        "common.ratelimit.UserCountingThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("PORTAL_API_ANON_RATE", "300/minute"),
        "user": env_str("PORTAL_API_USER_RATE", "3000/minute"),
    },
    "EXCEPTION_HANDLER": "common.api.exception_handler",
    "ORDERING_PARAM": "ordering",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Benchmark-evidence portal API",
    "DESCRIPTION": (
        "Read the catalogue of benchmark evidence about genomic foundation models, its review log and its "
        "releases; curators write with a token (`Authorization: Token <key>`). Records are addressed by stable "
        "id. Lists use cursor pagination (`page_size` up to 200). Every response to GET carries an ETag and, "
        "where known, Last-Modified (send If-None-Match for a 304), and `X-Portal-Release` names the latest "
        "published release. Errors are JSON objects naming the field or the reason."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Without deep links an operation's summary button holds no link (axe: nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.api_schema.add_error_responses",
        "common.api_schema.add_client_aids",
    ],
    "ENUM_NAME_OVERRIDES": {
        "ReviewStateEnum": "reviews.models.ReviewState",
        "MeasuredByEnum": "records.models.MeasuredBy",
        "ReadingMethodEnum": "records.models.ReadingMethod",
        "RelationEnum": "records.models.Relation",
        "UncertaintyKindEnum": "records.models.UncertaintyKind",
        "SourceKindEnum": "records.models.SourceKind",
        "DirectionEnum": "records.models.Direction",
        "IdentityBasisEnum": "records.models.IdentityBasis",
    },
}

# Review reasons (the public concern) are long texts; history keeps them whole.
SIMPLE_HISTORY_HISTORY_CHANGE_REASON_USE_TEXT_FIELD = True
# History is read-only in the admin: every change goes through the services and the review panel.
SIMPLE_HISTORY_REVERT_DISABLED = True
