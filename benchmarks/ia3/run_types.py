"""What a run is made of: its options (RunConfig, checked as it is made), what the loop needs
(Setup) and what it measured (Loop). The runner builds and runs them; the report reads them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .fast import Loss
from .models import PRESETS
from .steps import DeviceStep
from .tasks import SYNTHETIC_VARIANTS, Split, Task, TaskData, get_task
from .tokenizer import encode_batch

PRECISIONS = ("auto", "bf16", "fp32")
DEVICES = ("auto", "cpu", "cuda")

Progress = Callable[[int, int], None]


class ConfigError(ValueError):
    """An option that cannot work; the message is written for the person who passed it."""


@dataclass
class RunConfig:
    """Every option of a run. With ``weights`` set, the architecture comes from the
    checkpoint and ``preset`` is not used. ``cuda_graph`` captures the fast path's step as a
    CUDA graph when the run is on CUDA (on a CPU it is skipped; the plain path never captures)."""

    preset: str = "tiny"
    task: str = "promoter_all"
    steps: int = 10_000
    batch_size: int = 8
    learning_rate: float = 3e-3
    precision: str = "auto"
    eval_interval: int = 0
    seed: int = 0
    warmup_steps: int = 5
    compile: bool = False
    fast: bool = True
    cuda_graph: bool = True
    device: str = "auto"
    weights: str | None = None
    data: str | None = None
    synthetic: str = "uniform"
    peak_tflops: float | None = None
    max_length: int | None = None
    progress_interval: int = 100

    def validate(self) -> None:
        """Reject bad options before anything expensive is built."""
        checks = [
            (
                self.weights is not None or self.preset in PRESETS,
                f"unknown preset {self.preset!r}; known presets: {', '.join(PRESETS)}",
            ),
            (self.steps > 0, f"steps must be positive, got {self.steps}"),
            (self.batch_size > 0, f"batch size must be positive, got {self.batch_size}"),
            (self.learning_rate > 0, f"learning rate must be positive, got {self.learning_rate}"),
            (self.precision in PRECISIONS, f"precision must be one of {', '.join(PRECISIONS)}"),
            (self.device in DEVICES, f"device must be one of {', '.join(DEVICES)}"),
            (self.eval_interval >= 0, f"eval interval must be 0 (off) or positive, got {self.eval_interval}"),
            (
                0 <= self.warmup_steps < self.steps,
                f"warm-up steps must be at least 0 and fewer than steps ({self.steps}), got {self.warmup_steps}",
            ),
            (self.synthetic in SYNTHETIC_VARIANTS, f"synthetic variant must be one of {', '.join(SYNTHETIC_VARIANTS)}"),
            (
                self.peak_tflops is None or self.peak_tflops > 0,
                f"peak TFLOP/s must be positive, got {self.peak_tflops}",
            ),
            (
                self.max_length is None or self.max_length >= 2,
                f"max length must be at least 2 tokens, got {self.max_length}",
            ),
            (self.progress_interval > 0, f"progress interval must be positive, got {self.progress_interval}"),
            (
                not self.compile or self.warmup_steps >= 1,
                "compile needs at least one warm-up step (the first step compiles)",
            ),
            (self.device != "cuda" or torch.cuda.is_available(), "device 'cuda' requested but CUDA is not available"),
            (self.data is None or Path(self.data).exists(), f"--data {self.data}: no such file or directory"),
            (
                self.weights is None or (Path(self.weights) / "config.json").is_file(),
                f"--weights {self.weights}: no config.json there",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)
        try:
            get_task(self.task)
        except ValueError as error:
            raise ConfigError(str(error)) from None


@dataclass(frozen=True)
class Batches:
    """Tokenised data resident on the device."""

    ids: torch.Tensor
    mask: torch.Tensor | None
    labels: torch.Tensor

    @classmethod
    def of(cls, split: Split, layout: str, max_tokens: int, truncate: bool, device: torch.device) -> Batches:
        ids, mask = encode_batch(split.sequences, layout, max_tokens, truncate)
        labels = torch.tensor(split.labels, dtype=torch.long)
        return cls(ids.to(device), None if mask is None else mask.to(device), labels.to(device))

    def take(self, index: torch.Tensor | slice) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        mask = None if self.mask is None else self.mask[index]
        return self.ids[index], mask, self.labels[index]


@dataclass
class Setup:
    """Everything the loop needs, built before the clock starts."""

    device: torch.device
    precision: str
    task: Task
    data: TaskData
    train: Batches
    test: Batches | None
    order: torch.Tensor
    forward: nn.Module
    loss: Loss
    optimizer: torch.optim.Optimizer
    losses: torch.Tensor
    #: The fast path's device-resident step (``None`` on the plain path) and the step at which
    #: it is captured as a CUDA graph (``None``: not captured).
    step: DeviceStep | None
    capture_at: int | None
    trainable_parameters: int
    total_parameters: int
    flops_per_step: int
    autocast: Callable[[], torch.autocast]


@dataclass
class Loop:
    """What the loop measured."""

    losses: np.ndarray
    warmup_time: float
    compile_time: float
    loop_time: float
    eval_time: float
    evaluations: list[dict[str, float]]
