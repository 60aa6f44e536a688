"""A finished run in the catalogue: the proposed `Evaluation` (measured by this portal) and its one
`Result`, in the protocol's time unit, written through records' services with history.

Called by the worker side (`benchmarks.execution.benchmark_job_succeed`) inside its transaction,
with the job locked; the request side reads `TIME_UNITS` to refuse a protocol that is not timed.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from benchmarks.models import BenchmarkJob, Recipe
from benchmarks.presets import PRESETS
from common.types import Actor
from records.models import Configuration, Dataset, Evaluation, MeasuredBy, ReadingMethod, Result
from records.seed import task_stable_id
from records.services import record_save
from records.values import exact_text
from reviews.models import ReviewState

#: Seconds per unit of the protocol's metric, for the units a run-time protocol may use.
TIME_UNITS: dict[str, int] = {
    "second": 1,
    "seconds": 1,
    "s": 1,
    "minute": 60,
    "minutes": 60,
    "min": 60,
    "hour": 3600,
    "hours": 3600,
    "h": 3600,
}


def _preset_label(preset: str) -> str:
    return PRESETS[preset].label if preset in PRESETS else preset


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _configuration_for(*, preset: str, precision: str, device: str, actor: Actor) -> Configuration:
    """The tested configuration: the preset's shape, IA3, at this precision on this kind of device.

    Created on first use. Two jobs of one configuration may finish at once: the loser's insert fails
    inside its own savepoint (`record_save` reports the taken stable id as a ValidationError), and it
    takes the winner's row instead of failing its successful run.
    """
    stable_id = f"portal-ia3-{_slug(preset)}-{precision}-{device}"
    configuration = Configuration.objects.filter(stable_id=stable_id).first()
    if configuration is None:
        label = _preset_label(preset)
        configuration = Configuration(
            stable_id=stable_id,
            name=f"{label}, random weights, IA3 fine-tuning, {precision} on {device.upper()} (benchmarks.ia3 preset {preset})",
            short_name=f"{preset} IA3 {precision} {device}",
            family="Nucleotide Transformer (architecture only)",
            method="IA3 fine-tuning",
            description=(
                f"{label}, built with random weights by the portal's runner (benchmarks.ia3, preset {preset}): "
                "a run's time depends on the architecture, not on the weights. Measured by this portal."
            ),
        )
        try:
            with transaction.atomic():
                record_save(record=configuration, actor=actor, reason="created for a measurement by this portal")
        except (IntegrityError, ValidationError):
            existing = Configuration.objects.filter(stable_id=stable_id).first()
            if existing is None:  # not a concurrent create: a real error
                raise
            return existing
    return configuration


# The measured time is stored to the microminute: the runner's clock is no finer.
VALUE_PLACES = 6


def _value_in_unit(*, seconds: float, unit: str) -> Decimal:
    exact = Decimal(repr(seconds)) / TIME_UNITS[unit]
    return exact.quantize(Decimal(1).scaleb(-VALUE_PLACES), rounding=ROUND_HALF_UP)


def different_measurement(*, job: BenchmarkJob) -> str:
    """How a job's run differs from what its recipe measures ("" when it ran the recipe as stated).

    A recipe states the protocol's measurement (shape, task, steps, batch, precision, ...); a job run
    with overrides measures something else (a 30-step run of the tiny preset is not the protocol's
    10,000-step run of the 500M model), so its evaluation says so and is never compared with the
    protocol's own (records.models.evaluation_comparable)."""
    recipe = job.recipe.run_parameters()
    changed = [
        f"{name.replace('_', ' ')} {job.parameters[name]} (the recipe's: {recipe[name]})"
        for name in Recipe.RUN_FIELDS
        if name in job.parameters and job.parameters[name] != recipe[name]
    ]
    if not changed:
        return ""
    return f"a run of recipe {job.recipe.stable_id} with overrides: {', '.join(changed)}"[:500]


def measured_evaluation_create(*, job: BenchmarkJob, report: dict[str, Any]) -> Evaluation:
    """The proposed evaluation (measured by this portal) and its one result, in the protocol's unit."""
    protocol = job.recipe.protocol
    p = job.parameters
    actor = job.requested_by
    reason = f"measured by benchmark job {job.pk}"
    configuration = _configuration_for(
        preset=p["preset"], precision=report["precision"], device=report["device"], actor=actor
    )
    dataset = Dataset.objects.get(stable_id=task_stable_id(p["task"]))
    seconds = float(report["total_wall_time_s"])
    unit = protocol.metric_unit
    value = _value_in_unit(seconds=seconds, unit=unit)
    recipe_state = ReviewState(job.recipe_review_state).label.lower() if job.recipe_review_state else "unknown"
    setup = (
        f"benchmarks.ia3, one run: {p['steps']} steps x batch {p['batch_size']}, Adam lr {p['learning_rate']:g}, "
        f"{report['precision']}, synthetic {p['task']}-shaped sequences ({report['sequence_length_tokens']} tokens), "
        f"seed {p['seed']}; {report['device_name']} ({report['device']}); recipe {job.recipe.stable_id} ({recipe_state})"
    )
    evaluation = Evaluation(
        stable_id=f"benchmark-job-{job.pk}-{_slug(p['preset'])}-{_slug(p['task'])}-runtime",
        title=f"{_preset_label(p['preset'])} IA3 fine-tuning run time on {p['task']}, measured by this portal (benchmark job {job.pk})",
        protocol=protocol,
        configuration=configuration,
        dataset=dataset,
        measured_by=MeasuredBy.PORTAL,
        reading_method=ReadingMethod.JOB_REPORT,
        setup=setup[:300],
        aggregation=(
            f"One run: the runner's total wall time (set-up, {p['warmup_steps']} warm-up steps and the timed loop) "
            f"in {unit}s, rounded to {VALUE_PLACES} decimals"
        )[:300],
        uncertainty="",
        coverage_scored=1,
        coverage_eligible=1,
        different_measurement=different_measurement(job=job),
    )
    record_save(record=evaluation, actor=actor, reason=reason)
    result = Result(
        stable_id=f"{evaluation.stable_id}-wall-time",
        evaluation=evaluation,
        value=value,
        unit=unit,
        printed_value=f"{exact_text(value)} {unit} ({seconds:.3f} s total wall time)",
        num_runs=1,
    )
    record_save(record=result, actor=actor, reason=reason)
    return evaluation
