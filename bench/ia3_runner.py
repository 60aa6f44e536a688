"""Steps/s of the IA3 runner against a plain Hugging Face ``Trainer`` doing the same work.

Both train the same PEFT model (same preset, seed, synthetic data, batch size and step count)
with Adam at the same constant learning rate and no evaluation, saving, logging or gradient
clipping, so the difference is the harness. Both exclude their first ``--warmup`` steps from
the timing. Each side is measured ``--repeats`` times and its best kept, because on a shared
machine the slowest runs measure the neighbours rather than the code.

    .venv/bin/python bench/ia3_runner.py [--preset tiny] [--steps 200] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import os
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
    """Starts the clock after the warm-up steps, as the runner does."""

    def __init__(self, warmup: int) -> None:
        self.warmup, self.start, self.end = warmup, 0.0, 0.0

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN003, ANN201
        if state.global_step == self.warmup:
            self.start = time.perf_counter()
        self.end = time.perf_counter()


def ours(config: RunConfig) -> float:
    return run(config)["steps_per_s"]


def trainers(config: RunConfig) -> float:
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
    return (config.steps - config.warmup_steps) / (clock.end - clock.start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="tiny", choices=list(PRESETS))
    parser.add_argument("--task", default="promoter_all")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
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
    ours(config), trainers(config)  # untimed: a fresh process pays one-off costs on its first steps
    runner, trainer = [], []
    for _ in range(args.repeats):  # interleaved, so drifting background load hits both sides
        runner.append(ours(config))
        trainer.append(trainers(config))
    print(
        f"{args.preset} on {args.task} (synthetic), {args.steps} steps x batch {args.batch_size}, "
        f"cpu, {torch.get_num_threads()} threads, best of {args.repeats}"
    )
    print(f"  IA3 runner : {max(runner):7.2f} steps/s   (all: {', '.join(f'{v:.2f}' for v in runner)})")
    print(f"  HF Trainer : {max(trainer):7.2f} steps/s   (all: {', '.join(f'{v:.2f}' for v in trainer)})")
    print(f"  ratio      : {max(runner) / max(trainer):7.2f}x")


if __name__ == "__main__":
    main()
