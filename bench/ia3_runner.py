"""Steps/s of the IA3 runner against a plain Hugging Face ``Trainer`` doing the same work.

Both train the same PEFT model (same preset, seed, synthetic data, batch size and step count)
with Adam at the same constant learning rate and no evaluation, saving, logging or gradient
clipping. The Trainer runs the stock PEFT and ESM forwards; the runner is measured twice, on
its fast path (the same model with cheaper forwards, ``benchmarks/ia3/fast.py``) and with
``--plain`` forwards, so the harness and the fast path each show. All exclude their first
``--warmup`` steps from the timing. Each is measured ``--repeats`` times, interleaved, and its
best kept (the median beside it), because on a shared machine the slowest runs measure the
neighbours rather than the code; steps per CPU second are printed beside, as a machine busy with
other work slows the wall clock more than the process. ``--compile`` adds the compiled runner,
with its compile time (set ``TORCHINDUCTOR_CACHE_DIR`` to an empty folder for a cold start) and
the run length from which that time is paid back; it is not in the ratio.

    .venv/bin/python bench/ia3_runner.py [--preset tiny] [--steps 200] [--batch-size 8] [--compile]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments  # noqa: E402

from benchmarks.ia3 import PRESETS, RunConfig, apply_ia3, build_model, get_task, run  # noqa: E402
from benchmarks.ia3.runner import make_optimizer  # noqa: E402
from benchmarks.ia3.tasks import synthetic  # noqa: E402
from benchmarks.ia3.tokenizer import encode_batch  # noqa: E402


class TokenisedTask(torch.utils.data.Dataset):
    """The runner's tokenised tensors, served the way ``Trainer``'s default collator expects."""

    def __init__(self, ids: torch.Tensor, labels: torch.Tensor) -> None:
        self.ids, self.labels = ids, labels

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[index], "labels": self.labels[index]}


class LoopClock(TrainerCallback):
    """Starts the clocks after the warm-up steps, as the runner does: the wall clock, and the
    process's CPU time, which a busy machine's other work does not inflate (one torch thread)."""

    def __init__(self, warmup: int) -> None:
        self.warmup = warmup
        self.start = self.end = (0.0, 0.0)

    def step_done(self, step: int) -> None:
        now = (time.perf_counter(), time.process_time())
        if step == self.warmup:
            self.start = now
        self.end = now

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN003, ANN201
        self.step_done(state.global_step)

    def rates(self, steps: int) -> tuple[float, float]:
        """Steps per wall second and per CPU second over the timed steps."""
        wall, cpu = (end - start for end, start in zip(self.end, self.start, strict=True))
        return steps / wall, steps / cpu


def ours(config: RunConfig) -> tuple[float, float]:
    """The runner's steps/s (its own wall figure) and steps per CPU second."""
    clock = LoopClock(config.warmup_steps)
    report = run(dataclasses.replace(config, progress_interval=1), progress=lambda step, _: clock.step_done(step))
    return report["steps_per_s"], clock.rates(report["timed_steps"])[1]


def line(name: str, values: list[tuple[float, float]]) -> str:
    wall, cpu = [v[0] for v in values], [v[1] for v in values]
    every = ", ".join(f"{v:.2f}" for v in wall)
    return (
        f"  {name:<19}: {max(wall):7.2f} steps/s best, {statistics.median(wall):7.2f} median   (all: {every}); "
        f"per CPU s {max(cpu):.2f} best, {statistics.median(cpu):.2f} median"
    )


def ratios(name: str, ours: list[tuple[float, float]], theirs: list[tuple[float, float]]) -> str:
    def best(values: list[tuple[float, float]], i: int) -> float:
        return max(v[i] for v in values)

    def median(values: list[tuple[float, float]], i: int) -> float:
        return statistics.median(v[i] for v in values)

    return (
        f"  {name:<19}: {best(ours, 0) / best(theirs, 0):7.2f}x best, {median(ours, 0) / median(theirs, 0):.2f}x median"
        f" (CPU time: {best(ours, 1) / best(theirs, 1):.2f}x best, {median(ours, 1) / median(theirs, 1):.2f}x median)"
    )


def trainers(config: RunConfig) -> tuple[float, float]:
    task = get_task(config.task)
    data = synthetic(task, min(task.train_size, config.steps * config.batch_size), 0, config.seed)
    ids, _ = encode_batch(data.train.sequences, PRESETS[config.preset].layout, max_tokens=1000)
    dataset = TokenisedTask(ids, torch.tensor(data.train.labels))
    model = apply_ia3(build_model(config.preset, task.num_classes, seed=config.seed))
    optimizer = make_optimizer(model, config.learning_rate)
    clock = LoopClock(config.warmup_steps)
    with tempfile.TemporaryDirectory() as scratch:
        arguments = TrainingArguments(
            output_dir=scratch,
            max_steps=config.steps,
            per_device_train_batch_size=config.batch_size,
            learning_rate=config.learning_rate,
            lr_scheduler_type="constant",
            max_grad_norm=0.0,
            eval_strategy="no",
            save_strategy="no",
            logging_strategy="no",
            report_to=[],
            disable_tqdm=True,
            dataloader_num_workers=0,
            use_cpu=True,
            seed=config.seed,
        )
        trainer = Trainer(
            model=model, args=arguments, train_dataset=dataset, optimizers=(optimizer, None), callbacks=[clock]
        )
        trainer.remove_callback(PrinterCallback)  # its end-of-training metrics line would garble the table
        trainer.train()
    return clock.rates(config.steps - config.warmup_steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="tiny", choices=list(PRESETS))
    parser.add_argument("--task", default="promoter_all")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compile", action="store_true", help="also measure the compiled runner")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads for both sides; one keeps a tiny model off a busy machine's noise",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = RunConfig(
        preset=args.preset,
        task=args.task,
        steps=args.steps,
        batch_size=args.batch_size,
        warmup_steps=args.warmup,
        device="cpu",
        precision="fp32",
    )
    plain, fast_compiled = dataclasses.replace(config, fast=False), dataclasses.replace(config, compile=True)
    ours(config), ours(plain), trainers(config)  # untimed: a fresh process pays one-off costs on its first steps
    first_compiled = run(fast_compiled) if args.compile else {}  # compiles; later runs reuse its code
    runner, runner_plain, trainer, runner_compiled = [], [], [], []
    for _ in range(args.repeats):  # interleaved, so drifting background load hits every side alike
        runner.append(ours(config))
        runner_plain.append(ours(plain))
        trainer.append(trainers(config))
        if args.compile:
            runner_compiled.append(ours(fast_compiled))
    print(
        f"{args.preset} on {args.task} (synthetic), {args.steps} steps x batch {args.batch_size}, "
        f"cpu, {torch.get_num_threads()} threads, best and median of {args.repeats}"
    )
    print(line("IA3 runner (plain)", runner_plain))
    print(line("IA3 runner", runner))
    if args.compile:
        print(compiled_line(first_compiled, runner_compiled, runner))
    print(line("HF Trainer", trainer))
    print(ratios("plain ratio", runner_plain, trainer))
    print(ratios("ratio", runner, trainer))


def compiled_line(first: dict, runs: list[tuple[float, float]], eager: list[tuple[float, float]]) -> str:
    """The compiled runner beside the others, with its compile time (the first run's, which the
    runner reports apart) and the run length from which it pays for itself."""
    rate, eager_rate = max(wall for wall, _ in runs), max(wall for wall, _ in eager)
    compile_s = first["compile_time_s"]
    gain = 1 / eager_rate - 1 / rate
    pays = f"pays for itself after {compile_s / gain:,.0f} steps" if gain > 0 else "never pays for itself"
    return f"{line('IA3 runner compiled', runs)}\n  {'':19}  compile {compile_s:.1f} s, {pays}"


if __name__ == "__main__":
    main()
