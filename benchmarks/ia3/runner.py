"""One IA3 fine-tuning run of an NT model on one downstream task, timed, as a JSON report.

The default recipe is the NT paper's IA3 fine-tuning: 10,000 steps, batch 8, Adam at
3e-3. The loop is kept to what a step needs, so the timings measure the model and not the
harness: the data is tokenised once and lives on the device, every step's batch indices are
drawn once (seeded, so every device trains on the same batches) and kept on the device, and
losses are written into a device tensor. The fast path (the default) goes further: its step
(``steps.DeviceStep``) takes nothing from the host, and on CUDA it is captured as one CUDA graph
after the warm-up, so the loop is one graph launch a step. The host waits for the device only
where the clock starts and stops, at the ~50 progress points, and around evaluations.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .fast import loss_function, speed_up
from .measures import device_for, flops_per_step, matthews, sync
from .models import PRESETS, apply_ia3, build_model, load_local_weights, matmul_parameters
from .report import format_summary as format_summary  # re-exported: the runner's public face
from .report import run_report
from .run_types import Batches, ConfigError, Loop, Progress, RunConfig, Setup
from .steps import DeviceStep, before_capture, capture_step
from .tasks import Task, TaskData, get_task, load_local, synthetic

#: Evaluation keeps no activations for backward, so it can take bigger batches.
EVAL_BATCH_FACTOR = 4


def _batch_order(size: int, steps: int, batch_size: int, seed: int, device: torch.device) -> torch.Tensor:
    """Every step's example indices, drawn epoch by epoch without replacement, made once so the
    loop never samples on the host."""
    generator = torch.Generator().manual_seed(seed)
    needed = steps * batch_size
    epochs = -(-needed // size)
    order = torch.cat([torch.randperm(size, generator=generator) for _ in range(epochs)])[:needed]
    return order.view(steps, batch_size).to(device)


def make_optimizer(model: nn.Module, learning_rate: float, capturable: bool = False) -> torch.optim.Adam:
    """Adam over the trainable parameters only; the fused kernel (CPU and CUDA) keeps the
    update to one launch per step. ``capturable`` keeps its step count on the device, which a
    CUDA graph of the step needs."""
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    return torch.optim.Adam(trainable, lr=learning_rate, fused=True, capturable=capturable)


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
    capture_at = capture_step(config.steps, config.warmup_steps) if uses_cuda_graph(config, device) else None
    # A captured step must not reuse autocast's casts of the capture (PyTorch's rule for graphs).
    autocast = functools.partial(
        torch.autocast,
        device.type,
        dtype=torch.bfloat16,
        enabled=precision == "bf16",
        cache_enabled=capture_at is None,
    )
    order = _batch_order(len(train.labels), config.steps, config.batch_size, config.seed, device)
    loss = loss_function(ia3, autocast, compile=config.compile)
    optimizer = make_optimizer(ia3, config.learning_rate, capturable=capture_at is not None)
    losses = torch.zeros(config.steps, device=device)
    step = (
        DeviceStep(
            ids=train.ids,
            mask=train.mask,
            labels=train.labels,
            order=order,
            loss=loss,
            optimizer=optimizer,
            losses=losses,
        )
        if config.fast
        else None
    )
    return Setup(
        device=device,
        precision=precision,
        task=task,
        data=data,
        train=train,
        test=test,
        order=order,
        forward=ia3,
        loss=loss,
        optimizer=optimizer,
        losses=losses,
        step=step,
        capture_at=capture_at,
        trainable_parameters=trainable,
        total_parameters=total,
        flops_per_step=step_flops,
        autocast=autocast,
    )


def uses_cuda_graph(config: RunConfig, device: torch.device) -> bool:
    """Whether a run captures its step: the fast path on CUDA with ``cuda_graph`` on, which is
    what a portal job (``RunConfig``'s defaults) does on a GPU."""
    return config.fast and config.cuda_graph and device.type == "cuda"


def _timed(device: torch.device, action: Callable[[], object]) -> float:
    sync(device)
    started = time.perf_counter()
    action()
    sync(device)
    return time.perf_counter() - started


def _host_step(setup: Setup, step: int) -> None:
    """The plain path's step: the host indexes the resident batch and calls each part."""
    loss = setup.loss(*setup.train.take(setup.order[step]))
    loss.backward()
    setup.optimizer.step()
    setup.optimizer.zero_grad(set_to_none=True)
    setup.losses[step] = loss.detach()


def _train(config: RunConfig, setup: Setup, progress: Progress | None) -> Loop:
    """The loop. Its phases are timed apart: the first step when it compiles and the capture of
    the CUDA graph (compile), the other untimed first steps (warm-up), the timed steps (loop),
    and evaluations, which are left out of the loop time. The host waits for the device where a
    phase starts or ends and at the progress points, so a progress call reports steps done."""
    device, forward = setup.device, setup.forward
    checkpoints = _progress_points(config.steps, config.progress_interval)
    evaluations: list[dict[str, float]] = []
    eval_time = timed_eval_time = compile_time = timed_compile_time = 0.0
    device_step = setup.step
    one_step: Callable[[int], None] = (
        (lambda _step: device_step()) if device_step is not None else functools.partial(_host_step, setup)
    )

    forward.train()
    sync(device)
    warmup_start = loop_start = time.perf_counter()
    for step in range(config.steps):
        if step == config.warmup_steps:
            sync(device)
            loop_start = time.perf_counter()
        if step == setup.capture_at and device_step is not None:
            spent = _timed(device, device_step.capture)
            compile_time += spent
            timed_compile_time += spent if step >= config.warmup_steps else 0.0
        with before_capture(device, setup.capture_at is not None and step < setup.capture_at):
            if config.compile and step == 0:
                compile_time += _timed(device, functools.partial(one_step, step))
            else:
                one_step(step)
        done = step + 1
        if progress is not None and done in checkpoints:
            sync(device)
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
        losses=setup.losses.cpu().numpy(),
        warmup_time=loop_start - warmup_start - (compile_time - timed_compile_time),
        compile_time=compile_time,
        loop_time=time.perf_counter() - loop_start - timed_eval_time - timed_compile_time,
        eval_time=eval_time,
        evaluations=evaluations,
    )


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
    report = run_report(config, setup, _train(config, setup, progress), setup_time)
    report["total_wall_time_s"] = time.perf_counter() - started
    return report
