"""The portal's copy of the runner's options, the seed recipe, and the broker's visibility timeout."""

from __future__ import annotations

import pytest

from benchmarks import presets
from benchmarks.models import Precision, Recipe


def test_it_knows_exactly_the_runners_presets_precisions_devices_and_tasks():
    from benchmarks.ia3 import PRESETS, TASKS
    from benchmarks.ia3.run_types import DEVICES, PRECISIONS
    from benchmarks.ia3.tasks import ALIASES

    assert set(presets.PRESETS) == set(PRESETS)
    assert presets.PRECISIONS == PRECISIONS == tuple(Precision.values)
    assert presets.DEVICES == DEVICES
    assert set(presets.task_shapes()) == set(TASKS) and presets.TASK_ALIASES == ALIASES


def test_its_time_limits_grow_with_the_model_and_stay_below_the_visibility_timeout():
    for limits in presets.PRESETS.values():
        assert 0 < limits.soft < limits.hard
    assert presets.PRESETS["tiny"].hard < presets.PRESETS["nt-v1-500m"].soft < presets.PRESETS["nt-v1-2.5b"].soft
    assert presets.LONGEST_HARD_LIMIT < 6 * 3600  # settings' default CELERY_VISIBILITY_TIMEOUT


def test_it_gives_an_unknown_preset_the_longest_time_limits():
    assert presets.time_limits("tiny") == presets.PRESETS["tiny"]
    for unknown in ("a-retired-preset", "", None):
        limits = presets.time_limits(unknown)
        assert limits.hard == presets.LONGEST_HARD_LIMIT
        assert limits.soft == max(preset.soft for preset in presets.PRESETS.values())


def test_it_refuses_to_start_with_a_visibility_timeout_shorter_than_a_job(settings):
    from benchmarks.checks import visibility_timeout_outlasts_jobs

    settings.CELERY_BROKER_URL = "redis://localhost:6379/0"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
    [error] = visibility_timeout_outlasts_jobs()
    assert error.id == "benchmarks.E001"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 6 * 3600}
    assert visibility_timeout_outlasts_jobs() == []
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    assert visibility_timeout_outlasts_jobs() == []


@pytest.mark.django_db
def test_it_seeds_the_seed_protocols_recipe_once(seeded):
    from benchmarks.seed import SEED_RECIPE_ID, seed_recipes

    [(recipe, _created)] = seed_recipes()  # created here, or already by import_seed once it calls seed_recipes()
    assert recipe.protocol.stable_id == "gfm-guide-20261014-protocol-nt-ia3-finetune-runtime"
    assert recipe.run_parameters() == {
        "preset": "nt-v1-500m",
        "task": "splice_sites_all",
        "steps": 10_000,
        "batch_size": 8,
        "learning_rate": 3e-3,
        "precision": "auto",
        "eval_interval": 0,
        "seed": 0,
        "warmup_steps": 5,
    }
    assert recipe.review_state == "proposed"
    assert recipe.history.count() == 1
    [(again, created)] = seed_recipes()
    assert (again.pk, created) == (recipe.pk, False)
    assert Recipe.objects.get(stable_id=SEED_RECIPE_ID).history.count() == 1


@pytest.mark.django_db
def test_it_refuses_an_impossible_recipe_in_the_database(timed_protocol):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        Recipe.objects.create(
            stable_id="bad",
            title="Bad",
            protocol=timed_protocol,
            preset="tiny",
            task="promoter_tata",
            steps=5,
            warmup_steps=5,
        )


def test_it_refuses_a_stale_limit_shorter_than_three_heartbeats(settings):
    from benchmarks.checks import heartbeat_outlasts_beats

    assert heartbeat_outlasts_beats() == []
    settings.BENCHMARK_HEARTBEAT_SECONDS, settings.BENCHMARK_STALE_AFTER_SECONDS = 30, 60
    [error] = heartbeat_outlasts_beats()
    assert error.id == "benchmarks.E002"


def test_the_recipe_lookup_counts_source_checked_recipes_only(seeded):
    from benchmarks.models import Recipe
    from benchmarks.selectors import reviewed_recipe_protocols
    from records.models import Protocol
    from records.seed import PROTOCOL_ID
    from tests.factories import ProtocolFactory
    from tests.helpers import apply_transitions

    other = ProtocolFactory()
    assert reviewed_recipe_protocols([PROTOCOL_ID, other.stable_id]) == set()
    apply_transitions(Recipe.objects.get(protocol=Protocol.objects.get(stable_id=PROTOCOL_ID)), "check_source")
    assert reviewed_recipe_protocols([PROTOCOL_ID, other.stable_id]) == {PROTOCOL_ID}
