# syntax=docker/dockerfile:1
# The portal image: web (gunicorn), worker and beat share it. Multi-stage, non-root, static files
# collected at build time. Build: docker build -t portal .

FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements.txt /tmp/requirements.txt
RUN python -m venv /venv && /venv/bin/pip install --no-compile -r /tmp/requirements.txt

FROM python:3.11-slim-bookworm AS web
ENV PATH=/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PORTAL_PRODUCTION=1 \
    PORTAL_VAR_DIR=/var/lib/portal \
    PORTAL_STATIC_ROOT=/app/staticfiles
RUN groupadd --system --gid 10001 portal \
    && useradd --system --uid 10001 --gid portal --home-dir /app --shell /usr/sbin/nologin portal \
    && mkdir -p /var/lib/portal \
    && chown portal:portal /var/lib/portal
WORKDIR /app
COPY --from=build /venv /venv
COPY . /app
# collectstatic needs settings but no secrets: throw-away values, used for this step only.
RUN SECRET_KEY=collectstatic-only ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput --verbosity 0
USER portal
EXPOSE 8000
VOLUME ["/var/lib/portal"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"]
CMD ["gunicorn", "portal.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-", "--graceful-timeout", "30"]
