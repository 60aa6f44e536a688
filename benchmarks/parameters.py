"""A job's parameters: the recipe's run fields, overrides applied, checked before anything is queued.

The result is exactly the keyword arguments of `benchmarks.ia3.RunConfig` that the job runs with, so
the row says what was measured and a shell can repeat it (`run_command`).
"""

from __future__ import annotations

import shlex
from typing import Any

from benchmarks.presets import (
    DEVICES,
    MAX_BATCH_SIZE,
    MAX_STEPS,
    PRECISIONS,
    PRESETS,
    SMOKE_WARMUP_STEPS,
    SYNTHETIC,
    canonical_task,
)
from common.errors import DomainError

#: What a job may change of its recipe's parameters (API body "overrides", run_benchmark options).
OVERRIDABLE = (
    "preset",
    "task",
    "steps",
    "batch_size",
    "learning_rate",
    "precision",
    "eval_interval",
    "seed",
    "warmup_steps",
    "device",
)
INTEGER_FIELDS = ("steps", "batch_size", "eval_interval", "seed", "warmup_steps")


class ParameterError(DomainError, ValueError):
    """Parameters that cannot run; `errors` maps each field to why."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))
        self.errors = errors


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parameter_errors(parameters: dict[str, Any]) -> dict[str, str]:
    """Why these parameters cannot run, field by field (empty when they can)."""
    errors: dict[str, str] = {}
    if parameters.get("preset") not in PRESETS:
        errors["preset"] = f"unknown preset {parameters.get('preset')!r}; known presets: {', '.join(PRESETS)}"
    if not isinstance(parameters.get("task"), str) or canonical_task(parameters["task"]) is None:
        errors["task"] = f"unknown task {parameters.get('task')!r}; use one of the 18 NT downstream tasks"
    for name in INTEGER_FIELDS:
        if not _is_int(parameters.get(name)):
            errors[name] = f"must be a whole number, got {parameters.get(name)!r}"
    if "steps" not in errors and not 1 <= parameters["steps"] <= MAX_STEPS:
        errors["steps"] = f"must be between 1 and {MAX_STEPS:,}, got {parameters['steps']}"
    if "batch_size" not in errors and not 1 <= parameters["batch_size"] <= MAX_BATCH_SIZE:
        errors["batch_size"] = f"must be between 1 and {MAX_BATCH_SIZE}, got {parameters['batch_size']}"
    if "eval_interval" not in errors and parameters["eval_interval"] < 0:
        errors["eval_interval"] = f"must be 0 (off) or positive, got {parameters['eval_interval']}"
    if (
        "warmup_steps" not in errors
        and "steps" not in errors
        and not 0 <= parameters["warmup_steps"] < parameters["steps"]
    ):
        errors["warmup_steps"] = (
            f"must be at least 0 and fewer than steps ({parameters['steps']}), got {parameters['warmup_steps']}"
        )
    rate = parameters.get("learning_rate")
    if (
        isinstance(rate, bool)
        or not isinstance(rate, (int, float))
        or not rate > 0
        or rate != rate
        or rate == float("inf")
    ):
        errors["learning_rate"] = f"must be a positive number, got {rate!r}"
    if parameters.get("precision") not in PRECISIONS:
        errors["precision"] = f"must be one of {', '.join(PRECISIONS)}, got {parameters.get('precision')!r}"
    if parameters.get("device", "auto") not in DEVICES:
        errors["device"] = f"must be one of {', '.join(DEVICES)}, got {parameters.get('device')!r}"
    return errors


def job_parameters(*, recipe, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The recipe's run fields with `overrides` applied; raises ParameterError naming each bad field."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(OVERRIDABLE))
    if unknown:
        raise ParameterError(
            {name: f"not a parameter a job may override (use: {', '.join(OVERRIDABLE)})" for name in unknown}
        )
    parameters = {**recipe.run_parameters(), "device": "auto", **{k: v for k, v in overrides.items() if v is not None}}
    _apply_smoke_steps(parameters, recipe_preset=recipe.preset, overrides=overrides)
    if _is_int(parameters.get("learning_rate")):
        parameters["learning_rate"] = float(parameters["learning_rate"])
    errors = parameter_errors(parameters)
    if errors:
        raise ParameterError(errors)
    parameters["task"] = canonical_task(parameters["task"])
    parameters["synthetic"] = SYNTHETIC
    return parameters


def _apply_smoke_steps(parameters: dict[str, Any], *, recipe_preset: str, overrides: dict[str, Any]) -> None:
    """A job that switches to a test model (tiny, tiny-v2) is a smoke test: it runs that preset's
    few steps (and a warm-up shorter than them) unless it gives its own, not the recipe's full run."""
    preset = overrides.get("preset")
    limits = PRESETS.get(preset) if isinstance(preset, str) else None
    if limits is None or limits.smoke_steps is None or preset == recipe_preset or overrides.get("steps") is not None:
        return
    parameters["steps"] = limits.smoke_steps
    if overrides.get("warmup_steps") is None and _is_int(parameters.get("warmup_steps")):
        parameters["warmup_steps"] = min(parameters["warmup_steps"], SMOKE_WARMUP_STEPS)


def recipe_errors(recipe) -> dict[str, str]:
    """Model validation of a recipe's run fields (the admin and record_save show these per field)."""
    return parameter_errors({**recipe.run_parameters(), "device": "auto"})


def run_command(parameters: dict[str, Any]) -> str:
    """The shell command that runs the same measurement without the portal."""
    words = [
        "python",
        "-m",
        "benchmarks.ia3",
        "--preset",
        parameters["preset"],
        "--task",
        parameters["task"],
        "--steps",
        str(parameters["steps"]),
        "--batch-size",
        str(parameters["batch_size"]),
        "--learning-rate",
        f"{parameters['learning_rate']:g}",
        "--precision",
        parameters["precision"],
        "--eval-interval",
        str(parameters["eval_interval"]),
        "--seed",
        str(parameters["seed"]),
        "--warmup-steps",
        str(parameters["warmup_steps"]),
    ]
    if parameters.get("device", "auto") != "auto":
        words += ["--device", parameters["device"]]
    return shlex.join(words)
