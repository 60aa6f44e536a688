"""The deployment files: the Dockerfile lints clean, the compose file has every process it needs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.backend_independent


def test_the_dockerfile_lints_clean_with_hadolint():
    hadolint = shutil.which("hadolint") or str(Path(__import__("sys").executable).parent / "hadolint")
    completed = subprocess.run(
        [hadolint, "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_the_dockerfile_runs_as_a_non_root_user_with_a_health_check_and_static_files_collected():
    text = (ROOT / "Dockerfile").read_text()
    assert "USER 10001:10001" in text and "HEALTHCHECK" in text and "collectstatic" in text
    assert "AS web" in text and "AS gpu-worker" in text


def test_the_compose_file_runs_every_process_behind_a_proxy_with_a_noeviction_broker_and_a_separate_cache():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"proxy", "web", "worker", "gpu-worker", "beat", "postgres", "redis", "cache", "migrate"} <= set(services)
    assert "ports" not in services["web"] and {"80:80", "443:443"} <= set(services["proxy"]["ports"])
    assert "noeviction" in services["redis"]["command"] and "--appendonly" in services["redis"]["command"]
    assert services["cache"]["image"].startswith("redis") and "6379/0" in services["web"]["environment"]["CACHE_URL"]
    gpu = services["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"][0]
    assert gpu["driver"] == "nvidia" and gpu["capabilities"] == ["gpu"]
    assert services["gpu-worker"]["command"][:7] == ["celery", "-A", "portal", "worker", "-Q", "gpu", "-c"]
    assert services["web"]["environment"]["PORTAL_NUM_PROXIES"] == "1"
    assert services["web"]["environment"]["SECRET_KEY_FILE"].startswith("/run/secrets/")


def test_the_portal_trusts_forwarded_for_only_from_the_proxy_which_alone_reaches_gunicorn():
    import ipaddress

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services, environment = compose["services"], compose["services"]["web"]["environment"]
    [subnet] = [ipaddress.ip_network(c["subnet"]) for c in compose["networks"]["edge"]["ipam"]["config"]]
    proxy_address = services["proxy"]["networks"]["edge"]["ipv4_address"]
    web_address = services["web"]["networks"]["edge"]["ipv4_address"]
    assert environment["PORTAL_TRUSTED_PROXIES"] == proxy_address and ipaddress.ip_address(proxy_address) in subnet
    assert ipaddress.ip_address(web_address) in subnet and web_address != proxy_address
    # Only the proxy and web are on the edge network; the proxy is on no other.
    assert [name for name, s in services.items() if "edge" in s.get("networks", {})] == ["web", "proxy"]
    assert set(services["proxy"]["networks"]) == {"edge"}
    # gunicorn binds web's edge address and loopback (the image's health check), never every interface.
    command = services["web"]["command"]
    binds = [command[i + 1] for i, word in enumerate(command) if word in ("--bind", "-b")]
    assert binds == [f"{web_address}:8000", "127.0.0.1:8000"]
    assert "127.0.0.1:8000/healthz" in (ROOT / "Dockerfile").read_text()


def test_the_compose_file_gives_the_portal_a_metrics_token_from_a_secret():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    web = compose["services"]["web"]
    assert web["environment"]["PORTAL_METRICS_TOKEN_FILE"] == "/run/secrets/metrics_token"
    assert "metrics_token" in web["secrets"] and compose["secrets"]["metrics_token"]["file"].startswith("./secrets/")
