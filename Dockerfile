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
USER 10001:10001
EXPOSE 8000
VOLUME ["/var/lib/portal"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"]
CMD ["gunicorn", "portal.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-", "--graceful-timeout", "30"]

# The GPU worker: the portal plus the IA3 runner on a CUDA build of PyTorch; one container per GPU.
#   docker build --target gpu-worker -t portal-gpu-worker .
# CUDA user-space libraries come inside the torch wheel (its nvidia-* dependencies); the driver comes
# from the host through the NVIDIA Container Toolkit. TORCH_CUDA picks the build for the hosts' driver.
FROM python:3.11-slim-bookworm AS gpu-build
ARG TORCH_CUDA=cu128
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements.txt requirements-runner.txt /tmp/
RUN python -m venv /venv \
    && /venv/bin/pip install --no-compile --index-url "https://download.pytorch.org/whl/${TORCH_CUDA}" "torch==2.13.0" \
    && /venv/bin/pip install --no-compile -r /tmp/requirements.txt -r /tmp/requirements-runner.txt \
    && /venv/bin/python -c "import torch; assert torch.version.cuda, 'not a CUDA build'; print('torch', torch.__version__, 'CUDA', torch.version.cuda)"

FROM python:3.11-slim-bookworm AS gpu-worker
ENV PATH=/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PORTAL_PRODUCTION=1 \
    PORTAL_VAR_DIR=/var/lib/portal \
    XDG_CACHE_HOME=/tmp/cache \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    TORCHINDUCTOR_CACHE_DIR=/var/lib/portal/torchinductor
# The IA3 runner's fast path, which a job runs, needs nothing beyond the CUDA torch wheel: its step is
# captured as a CUDA graph by PyTorch itself, attention is PyTorch's SDPA (flash kernels in the wheel),
# Adam is fused. `compile` (not a job option; `python -m benchmarks.ia3 --compile` in this image) would
# run Inductor, whose cache lives on the volume (TORCHINDUCTOR_CACHE_DIR, Triton's beneath it) so it is
# paid once per code and PyTorch version; its Triton launchers would also need gcc, not installed here.
RUN groupadd --system --gid 10001 portal \
    && useradd --system --uid 10001 --gid portal --home-dir /app --shell /usr/sbin/nologin portal \
    && mkdir -p /var/lib/portal \
    && chown portal:portal /var/lib/portal
WORKDIR /app
COPY --from=gpu-build /venv /venv
COPY . /app
USER 10001:10001
VOLUME ["/var/lib/portal"]
CMD ["celery", "-A", "portal", "worker", "-Q", "gpu", "-c", "1", "--prefetch-multiplier", "1", "-l", "info", "-n", "gpu@%h"]
