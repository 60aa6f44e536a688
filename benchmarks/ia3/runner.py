"""One IA3 fine-tuning run of an NT model on one downstream task, timed, as a JSON report.

The default recipe is the NT paper's IA3 fine-tuning: 10,000 steps, batch 8, Adam at
3e-3. The loop is kept to what a step needs (the data is tokenised once and lives on the
device; batch indices are precomputed; losses are written into a device tensor and read once
at the end), so the timings measure the model and not the harness.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .fast import Loss, loss_function, speed_up
from .measures import device_for, device_name, flops_per_step, matthews, peak_memory, sync, versions
from .models import PRESETS, apply_ia3, build_model, load_local_weights, matmul_parameters
from .tasks import SYNTHETIC_VARIANTS, Split, Task, TaskData, get_task, load_local, synthetic
from .tokenizer import encode_batch

PRECISIONS = ("auto", "bf16", "fp32")
DEVICES = ("auto", "cpu", "cuda")
OPTIMIZER = "Adam"
#: Evaluation keeps no activations for backward, so it can take bigger batches.
EVAL_BATCH_FACTOR = 4

Progress = Callable[[int, int], None]


class ConfigError(ValueError):
    """An option that cannot work; the message is written for the person who passed it."""


@dataclass
class RunConfig:
    """Every option of a run. With ``weights`` set, the architecture comes from the
    checkpoint and ``preset`` is not used."""

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


def _batch_order(size: int, steps: int, batch_size: int, seed: int, device: torch.device) -> torch.Tensor:
    """Every step's example indices, drawn epoch by epoch without replacement, made once so the
    loop never samples on the host."""
    generator = torch.Generator().manual_seed(seed)
    needed = steps * batch_size
    epochs = -(-needed // size)
    order = torch.cat([torch.randperm(size, generator=generator) for _ in range(epochs)])[:needed]
    return order.view(steps, batch_size).to(device)


def make_optimizer(model: nn.Module, learning_rate: float) -> torch.optim.Adam:
    """Adam over the trainable parameters only; the fused kernel (CPU and CUDA) keeps the
    update to one launch per step."""
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    return torch.optim.Adam(trainable, lr=learning_rate, fused=True)


def _load_data(config: RunConfig, task: Task) -> TaskData:
    if config.data is not None:
        data = load_local(config.data)
    else:
        train_size = min(task.train_size, config.steps * config.batch_size)
        test_size = task.test_size if config.eval_interval else 0
        data = synthetic(task, train_size, test_size, config.seed, config.synthetic)
    if config.eval_interval and data.test is None:
        raise ConfigError(f"--eval-interval needs a test split, and {data.origin} has none")
    for split in (data.train, data.test):
        if split is not None and not all(0 <= label < task.num_classes for label in split.labels):
            raise ConfigError(f"{data.origin}: labels must lie in 0..{task.num_classes - 1} for {task.name}")
    return data


def _cast_for_precision(model: nn.Module, precision: str) -> None:
    """Frozen weights go to bf16 (half the memory, no per-step re-cast under autocast);
    trainable ones (IA3 vectors, head) stay fp32 so Adam updates are not rounded away."""
    frozen = torch.bfloat16 if precision == "bf16" else torch.float32
    for parameter in model.parameters():
        parameter.data = parameter.data.to(torch.float32 if parameter.requires_grad else frozen)


@torch.no_grad()
def _evaluate(
    forward: nn.Module, data: Batches, batch_size: int, classes: int, autocast: Callable[[], torch.autocast]
) -> dict[str, float]:
    forward.eval()
    losses, predictions = [], []
    for start in range(0, len(data.labels), batch_size):
        ids, mask, labels = data.take(slice(start, start + batch_size))
        with autocast():
            logits = forward(input_ids=ids, attention_mask=mask).logits.float()
        losses.append(nn.functional.cross_entropy(logits, labels, reduction="sum"))
        predictions.append(logits.argmax(dim=-1))
    forward.train()
    truth = data.labels.cpu().numpy()
    predicted = torch.cat(predictions).cpu().numpy()
    return {
        "loss": float(torch.stack(losses).sum().item()) / len(truth),
        "accuracy": float((truth == predicted).mean()),
        "mcc": matthews(truth, predicted, classes),
    }


def _progress_points(steps: int, interval: int) -> set[int]:
    return {*range(interval, steps, interval), steps}


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
    trainable_parameters: int
    total_parameters: int
    flops_per_step: int
    autocast: Callable[[], torch.autocast]


@dataclass
class Loop:
    """What the loop measured."""

    losses: np.ndarray
    warmup_time: float
    loop_time: float
    eval_time: float
    evaluations: list[dict[str, float]]


def _set_up(config: RunConfig) -> Setup:
    device = device_for(config.device)
    if config.precision == "auto":
        precision = "bf16" if device.type == "cuda" else "fp32"
    else:
        precision = config.precision
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    task = get_task(config.task)

    torch.manual_seed(config.seed)
    if config.weights is not None:
        model, layout = load_local_weights(config.weights, task.num_classes, device)
    else:
        model, layout = build_model(config.preset, task.num_classes, device), PRESETS[config.preset].layout
    model_max = model.config.max_position_embeddings - 2  # ESM positions start after the pad id
    if config.max_length is not None and config.max_length > model_max:
        raise ConfigError(f"max length {config.max_length} exceeds the model's {model_max} tokens")
    data = _load_data(config, task)
    tokenise = functools.partial(
        Batches.of,
        layout=layout,
        max_tokens=config.max_length or model_max,
        truncate=config.max_length is not None,
        device=device,
    )
    try:
        train = tokenise(data.train)
        test = tokenise(data.test) if config.eval_interval and data.test is not None else None
    except ValueError as error:
        raise ValueError(f"{data.origin}: {error}") from None
    step_flops = flops_per_step(
        matmul_parameters(model),
        config.batch_size,
        train.ids.shape[1],
        model.config.num_hidden_layers,
        model.config.hidden_size,
    )

    ia3 = apply_ia3(model)
    if config.fast:
        speed_up(ia3)
    _cast_for_precision(ia3, precision)
    trainable, total = ia3.get_nb_trainable_parameters()
    autocast = functools.partial(torch.autocast, device.type, dtype=torch.bfloat16, enabled=precision == "bf16")
    return Setup(
        device=device,
        precision=precision,
        task=task,
        data=data,
        train=train,
        test=test,
        order=_batch_order(len(train.labels), config.steps, config.batch_size, config.seed, device),
        forward=ia3,
        loss=loss_function(ia3, autocast, compile=config.compile),
        optimizer=make_optimizer(ia3, config.learning_rate),
        trainable_parameters=trainable,
        total_parameters=total,
        flops_per_step=step_flops,
        autocast=autocast,
    )


def _train(config: RunConfig, setup: Setup, progress: Progress | None) -> Loop:
    """The loop: index the resident batch, step, and store the loss on the device. The host
    only waits for the device where the clock starts and stops, and around evaluations
    (which are left out of the loop time)."""
    device, forward, optimizer, train = setup.device, setup.forward, setup.optimizer, setup.train
    losses = torch.empty(config.steps, device=device)
    checkpoints = _progress_points(config.steps, config.progress_interval)
    evaluations: list[dict[str, float]] = []
    eval_time = timed_eval_time = 0.0

    forward.train()
    sync(device)
    warmup_start = loop_start = time.perf_counter()
    for step in range(config.steps):
        if step == config.warmup_steps:
            sync(device)
            loop_start = time.perf_counter()
        loss = setup.loss(*train.take(setup.order[step]))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
        done = step + 1
        if progress is not None and done in checkpoints:
            progress(done, config.steps)
        if setup.test is not None and (done % config.eval_interval == 0 or done == config.steps):
            sync(device)
            eval_started = time.perf_counter()
            scores = _evaluate(
                forward, setup.test, EVAL_BATCH_FACTOR * config.batch_size, setup.task.num_classes, setup.autocast
            )
            evaluations.append({"step": done, **scores})
            spent = time.perf_counter() - eval_started
            eval_time += spent
            timed_eval_time += spent if step >= config.warmup_steps else 0.0
    sync(device)
    return Loop(
        losses=losses.cpu().numpy(),
        warmup_time=loop_start - warmup_start,
        loop_time=time.perf_counter() - loop_start - timed_eval_time,
        eval_time=eval_time,
        evaluations=evaluations,
    )


def _report(config: RunConfig, setup: Setup, loop: Loop, setup_time: float) -> dict[str, Any]:
    """The run as flat JSON. The fields whose meaning is not in their name:

    * ``setup_time_s``: from the call to the first step (validation, model, data, tokenising);
      ``warmup_time_s``: the untimed first ``warmup_steps`` (compilation lands here);
      ``training_loop_time_s``: the timed steps, evaluations excluded; ``eval_time_s``: all
      evaluations; ``total_wall_time_s``: the whole call.
    * ``steps_per_s``, ``tokens_per_s`` and ``achieved_tflops`` are over the timed steps;
      tokens include ``<cls>`` and padding, FLOPs are ``flops_per_step`` (see ``flops_per_step``).
    * ``loss_start``/``loss_end``: mean loss of the first/last ``loss_window`` steps.
    * ``total_parameters`` is PEFT's count: frozen base, IA3 vectors, and the classification
      head twice (the frozen original beside the trained copy PEFT swaps in).
    * ``data_origin`` is ``"synthetic"`` or the ``--data`` path; ``preset`` is ``None`` when
      ``weights`` named a checkpoint.
    """
    tokens = setup.train.ids.shape[1]
    timed_steps = config.steps - config.warmup_steps
    window = max(1, min(100, config.steps // 10))
    achieved = setup.flops_per_step * timed_steps / loop.loop_time / 1e12
    memory, memory_source = peak_memory(setup.device)
    return {
        "preset": None if config.weights else config.preset,
        "weights": None if config.weights is None else str(config.weights),
        "task": setup.task.name,
        "num_labels": setup.task.num_classes,
        "data_origin": setup.data.origin,
        "synthetic_variant": config.synthetic if config.data is None else None,
        "train_examples": len(setup.train.labels),
        "test_examples": 0 if setup.test is None else len(setup.test.labels),
        "steps": config.steps,
        "warmup_steps": config.warmup_steps,
        "timed_steps": timed_steps,
        "batch_size": config.batch_size,
        "learning_rate": config.learning_rate,
        "optimizer": OPTIMIZER,
        "precision": setup.precision,
        "compile": config.compile,
        "fast_path": config.fast,
        "seed": config.seed,
        "eval_interval": config.eval_interval,
        "max_length": config.max_length,
        "sequence_length_tokens": tokens,
        "tokens_per_step": tokens * config.batch_size,
        "trainable_parameters": setup.trainable_parameters,
        "total_parameters": setup.total_parameters,
        "flops_per_step": setup.flops_per_step,
        "device": setup.device.type,
        "device_name": device_name(setup.device),
        "versions": versions(),
        "total_wall_time_s": 0.0,
        "setup_time_s": setup_time,
        "warmup_time_s": loop.warmup_time,
        "training_loop_time_s": loop.loop_time,
        "eval_time_s": loop.eval_time,
        "steps_per_s": timed_steps / loop.loop_time,
        "tokens_per_s": timed_steps * tokens * config.batch_size / loop.loop_time,
        "achieved_tflops": achieved,
        "peak_tflops": config.peak_tflops,
        "peak_fraction": achieved / config.peak_tflops if config.peak_tflops else None,
        "peak_memory_bytes": memory,
        "peak_memory_source": memory_source,
        "loss_start": float(loop.losses[:window].mean()),
        "loss_end": float(loop.losses[-window:].mean()),
        "loss_window": window,
        "evaluations": loop.evaluations,
    }


def run(config: RunConfig, progress: Progress | None = None) -> dict[str, Any]:
    """Run ``config`` and return its JSON-ready report.

    Everything in the report but the times, rates and memory is a function of the config, so
    two reports of one config can be compared field by field. ``progress(step, total)`` is
    called every ``config.progress_interval`` steps and at the end, and never makes the host
    wait for the device.
    """
    started = time.perf_counter()
    config.validate()
    setup = _set_up(config)
    sync(setup.device)
    setup_time = time.perf_counter() - started
    report = _report(config, setup, _train(config, setup, progress), setup_time)
    report["total_wall_time_s"] = time.perf_counter() - started
    return report


def format_summary(report: dict[str, Any]) -> str:
    """The report as a few lines for a person."""
    model = report["preset"] or f"weights {report['weights']}"
    fraction = f" ({report['peak_fraction']:.1%} of {report['peak_tflops']:g})" if report["peak_fraction"] else ""
    lines = [
        f"IA3 {model} on {report['task']} ({report['data_origin']}), {report['device_name']} [{report['device']}], "
        f"{report['precision']}{', compiled' if report['compile'] else ''}",
        f"  {report['steps']} steps x batch {report['batch_size']} x {report['sequence_length_tokens']} tokens, "
        f"Adam lr {report['learning_rate']:g}, seed {report['seed']}",
        f"  parameters: {report['trainable_parameters']:,} trainable of {report['total_parameters']:,}",
        f"  time: {report['total_wall_time_s']:.2f} s total, {report['setup_time_s']:.2f} s set-up, "
        f"{report['training_loop_time_s']:.2f} s loop ({report['timed_steps']} timed steps)",
        f"  speed: {report['steps_per_s']:.2f} steps/s, {report['tokens_per_s']:,.0f} tokens/s, "
        f"{report['achieved_tflops']:.3f} TFLOP/s{fraction}",
        f"  peak memory: {report['peak_memory_bytes'] / 2**20:,.0f} MiB ({report['peak_memory_source']})",
        f"  loss: {report['loss_start']:.4f} -> {report['loss_end']:.4f} (means of {report['loss_window']} steps)",
    ]
    lines += [
        f"  eval at step {e['step']}: loss {e['loss']:.4f}, accuracy {e['accuracy']:.3f}, MCC {e['mcc']:.3f}"
        for e in report["evaluations"]
    ]
    versions = ", ".join(f"{name} {version}" for name, version in report["versions"].items())
    lines.append(f"  versions: {versions}")
    return "\n".join(lines)
