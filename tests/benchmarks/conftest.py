"""Fixtures of the benchmark jobs' tests (the runner's own tests live in tests/benchmarks/ia3/)."""

from __future__ import annotations

import pytest

TINY = {"preset": "tiny", "task": "promoter_tata", "steps": 40, "batch_size": 4, "warmup_steps": 2}


@pytest.fixture
def operator(make_user):
    return make_user("benchmark_operator", "operator-one")


@pytest.fixture
def seed_recipe(seeded):
    from benchmarks.seed import seed_recipes

    [(recipe, _created)] = seed_recipes()
    return recipe


@pytest.fixture
def timed_protocol(db):
    """A run-time protocol (unit: minute) and the promoter_tata task's dataset record, as the seed has them."""
    from records.seed import task_stable_id
    from tests.factories import DatasetFactory, ProtocolFactory

    DatasetFactory(stable_id=task_stable_id("promoter_tata"), name="promoter_tata", task_key="promoter_tata")
    return ProtocolFactory(metric_unit="minute")


def make_tiny_recipe(protocol, stable_id: str = "tiny-promoter-tata-test", **values):
    """A recipe that runs in well under a second on a CPU."""
    from benchmarks.services import recipe_ensure

    recipe, _ = recipe_ensure(
        stable_id=stable_id, title="Tiny test model on promoter_tata", protocol=protocol, **{**TINY, **values}
    )
    return recipe


@pytest.fixture
def tiny_recipe(timed_protocol):
    return make_tiny_recipe(timed_protocol)


@pytest.fixture
def seed_tiny_recipe(seeded):
    """A tiny recipe of the seed protocol (whose page the end-to-end tests read)."""
    from records.models import Protocol
    from records.seed import PROTOCOL_ID

    return make_tiny_recipe(Protocol.objects.get(stable_id=PROTOCOL_ID))


class Broker:
    """Records what the services would send to Celery, instead of sending it."""

    def __init__(self):
        self.sent: list[dict] = []
        self.revoked: list[dict] = []

    def apply_async(self, args=None, kwargs=None, **options):
        self.sent.append({"args": args, **options})

    def revoke(self, task_id, **options):
        self.revoked.append({"task_id": task_id, **options})


@pytest.fixture
def broker(monkeypatch):
    from celery import current_app

    from benchmarks.tasks import benchmark_job_run

    recorder = Broker()
    monkeypatch.setattr(benchmark_job_run, "apply_async", recorder.apply_async)
    monkeypatch.setattr(current_app.control, "revoke", recorder.revoke)
    return recorder


def fake_report(*, seconds: float = 90.0, device: str = "cpu", precision: str = "fp32") -> dict:
    """A report shaped like benchmarks.ia3.run's."""
    return {
        "preset": "tiny",
        "task": "promoter_tata",
        "device": device,
        "device_name": "Test CPU",
        "precision": precision,
        "versions": {"python": "3.11", "torch": "2.13.0", "transformers": "5", "peft": "0.21", "cuda": None},
        "total_wall_time_s": seconds,
        "setup_time_s": 1.0,
        "warmup_time_s": 0.5,
        "training_loop_time_s": seconds - 1.5,
        "eval_time_s": 0.0,
        "steps_per_s": 10.0,
        "tokens_per_s": 2000.0,
        "achieved_tflops": 0.01,
        "peak_memory_bytes": 2**28,
        "peak_memory_source": "max_rss",
        "loss_start": 0.7,
        "loss_end": 0.69,
        "sequence_length_tokens": 51,
        "trainable_parameters": 5058,
        "total_parameters": 436301,
        "evaluations": [],
    }


@pytest.fixture
def make_user(make_user, settings):
    """The shared fixture, with a fast password hasher: these tests create many users and log none in by password."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return make_user
