"""What the portal knows about the runner's options without importing it.

`benchmarks.ia3` imports PyTorch, which the web process, the default worker and beat never need, so
the portal keeps its own copy of the option names here; `tests/benchmarks/test_presets.py` proves
the copy equals the runner's (`benchmarks.ia3.PRESETS`, `PRECISIONS`, `DEVICES`, the task table).
Tasks come from the one shared table in `data/`, as the runner's and the catalogue's do.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TASKS_CSV = Path(__file__).resolve().parents[1] / "data" / "nt_downstream_tasks_revised.csv"
#: The dataset card and its file tree spell one task differently; the runner accepts both.
TASK_ALIASES = {"splice_sites_acceptors": "splice_sites_acceptor"}

PRECISIONS = ("auto", "bf16", "fp32")
DEVICES = ("auto", "cpu", "cuda")
SYNTHETIC = "uniform"  # the runner's pure-speed synthetic data: the run-time protocol measures speed


@dataclass(frozen=True)
class PresetLimits:
    """Celery time limits of one job of a preset, in seconds.

    The soft limit raises inside the run (the job fails with the reason); the hard limit kills the
    worker's child process (the sweeper fails the job once its start is older than the hard limit).
    Sized for the recipe defaults (10,000 steps, batch 8) on one data-centre GPU, with room to spare:
    one H200 ran nt-v1-500m at 15 steps/s (a run about 11 min) and nt-v1-2.5b at 11 steps/s (about
    15 min); slower GPUs and local data with longer sequences take several times that.
    """

    label: str
    soft: int
    hard: int
    #: A test model's smoke test: the steps a job that switches to this preset runs unless it gives
    #: its own (the recipe's 10,000 are a real model's run). None: the recipe's steps.
    smoke_steps: int | None = None


MINUTE, HOUR = 60, 3600
SMOKE_STEPS, SMOKE_WARMUP_STEPS = 20, 2  # a tiny preset's run: seconds, even on a CPU
#: Every preset of `benchmarks.ia3.PRESETS`, with its time limits. The longest hard limit must stay
#: below the Redis visibility timeout (`CELERY_BROKER_TRANSPORT_OPTIONS`, 6 h by default); the
#: system check `benchmarks.E001` refuses to start otherwise.
PRESETS: dict[str, PresetLimits] = {
    "tiny": PresetLimits("Tiny NT v1-shaped test model (2 layers, 64 wide)", 10 * MINUTE, 15 * MINUTE, SMOKE_STEPS),
    "tiny-v2": PresetLimits("Tiny NT v2-shaped test model (2 layers, 64 wide)", 10 * MINUTE, 15 * MINUTE, SMOKE_STEPS),
    "nt-v2-50m": PresetLimits("NT v2 50M-shaped model", 1 * HOUR, 1 * HOUR + 15 * MINUTE),
    "nt-v2-100m": PresetLimits("NT v2 100M-shaped model", 1 * HOUR + 30 * MINUTE, 1 * HOUR + 45 * MINUTE),
    "nt-v1-500m": PresetLimits("NT v1 500M-shaped model", 3 * HOUR, 3 * HOUR + 30 * MINUTE),
    "nt-v2-500m": PresetLimits("NT v2 500M-shaped model", 3 * HOUR, 3 * HOUR + 30 * MINUTE),
    "nt-v1-2.5b": PresetLimits("NT v1 2.5B-shaped model", 5 * HOUR, 5 * HOUR + 30 * MINUTE),
}
LONGEST_HARD_LIMIT = max(limits.hard for limits in PRESETS.values())
#: The limits of a job whose preset this version does not know (a row written before a preset was
#: renamed or removed): the longest of any preset, so that the job is neither cut short nor kept forever.
UNKNOWN_PRESET_LIMITS = PresetLimits(
    "Unknown preset", max(limits.soft for limits in PRESETS.values()), LONGEST_HARD_LIMIT
)

#: Bounds on what a job may ask for: far above any recipe, low enough that a typo cannot hold a GPU for days.
MAX_STEPS = 1_000_000
MAX_BATCH_SIZE = 4096


@dataclass(frozen=True)
class TaskShape:
    name: str
    num_classes: int
    sequence_length_bp: int
    train_size: int
    test_size: int


@cache
def task_shapes() -> dict[str, TaskShape]:
    with TASKS_CSV.open(newline="", encoding="utf-8") as handle:
        return {
            row["task"]: TaskShape(
                name=row["task"],
                num_classes=int(row["num_classes"]),
                sequence_length_bp=int(row["sequence_length_bp"]),
                train_size=int(row["train_size"]),
                test_size=int(row["test_size"]),
            )
            for row in csv.DictReader(handle)
        }


def canonical_task(name: str) -> str | None:
    """The task's name in the shared table, under either spelling; None when unknown."""
    canonical = TASK_ALIASES.get(name, name)
    return canonical if canonical in task_shapes() else None


def time_limits(preset: str | None) -> PresetLimits:
    """The preset's time limits; `UNKNOWN_PRESET_LIMITS` for a preset this version does not know."""
    return PRESETS.get(preset or "", UNKNOWN_PRESET_LIMITS)
