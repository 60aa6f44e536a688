"""Command line: ``python -m benchmarks.ia3 --preset tiny --task promoter_all --steps 30``.

Prints a human summary (or, with ``--json -``, only the JSON report) and writes the report to
``--json PATH``. Any bad option ends the process with status 2 and one line on stderr, because
the portal's worker and people at a shell both need the reason, not a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from tqdm import tqdm

from .models import PRESETS
from .run_types import DEVICES, PRECISIONS, RunConfig
from .runner import format_summary, run
from .tasks import ALIASES, SYNTHETIC_VARIANTS, TASKS

PROG = "python -m benchmarks.ia3"


class OneLineParser(argparse.ArgumentParser):
    """argparse without the usage block on errors: one line saying why."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _number(kind: type, minimum: float, strict: bool) -> Callable[[str], float]:
    bound = f"greater than {minimum:g}" if strict else f"at least {minimum:g}"

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number {bound}, got {text!r}") from None
        if value < minimum or (strict and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {bound}, got {text}")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    defaults = RunConfig()
    p = OneLineParser(prog=PROG, description="IA3 fine-tuning benchmark of NT models on NT downstream tasks.")
    p.add_argument("--preset", default=defaults.preset, choices=list(PRESETS), help="model shape (random weights)")
    p.add_argument(
        "--task",
        default=defaults.task,
        choices=[*TASKS, *ALIASES],
        metavar="TASK",
        help=f"one of the 18 NT downstream tasks (default {defaults.task})",
    )
    p.add_argument("--steps", type=_number(int, 0, strict=True), default=defaults.steps)
    p.add_argument("--batch-size", type=_number(int, 0, strict=True), default=defaults.batch_size)
    p.add_argument("--learning-rate", "--lr", type=_number(float, 0, strict=True), default=defaults.learning_rate)
    p.add_argument(
        "--precision", choices=PRECISIONS, default=defaults.precision, help="auto: bf16 autocast on CUDA, fp32 on CPU"
    )
    p.add_argument(
        "--eval-interval",
        type=_number(int, 0, strict=False),
        default=defaults.eval_interval,
        help="evaluate on the test split every N steps (0: off)",
    )
    p.add_argument("--seed", type=int, default=defaults.seed)
    p.add_argument(
        "--warmup-steps",
        type=_number(int, 0, strict=False),
        default=defaults.warmup_steps,
        help="leading steps left out of the loop timing",
    )
    p.add_argument("--compile", action="store_true", help="compile forward, loss and backward (pays only on long runs)")
    p.add_argument(
        "--plain",
        dest="fast",
        action="store_false",
        help="PEFT's and ESM's stock forwards instead of the fast path (same model; for comparison)",
    )
    p.add_argument(
        "--no-cuda-graph",
        dest="cuda_graph",
        action="store_false",
        help="on CUDA, run the fast path's step eagerly instead of replaying it as one CUDA graph",
    )
    p.add_argument("--device", choices=DEVICES, default=defaults.device)
    p.add_argument("--weights", metavar="DIR", help="local Hugging Face checkpoint instead of the preset")
    p.add_argument("--data", metavar="PATH", help="local task: a CSV/parquet/FASTA file or a directory with train.*")
    p.add_argument(
        "--synthetic",
        choices=SYNTHETIC_VARIANTS,
        default=defaults.synthetic,
        help="synthetic data when --data is absent: uniform bases, or a learnable class motif",
    )
    p.add_argument("--peak-tflops", type=_number(float, 0, strict=True), help="peak to report a fraction of")
    p.add_argument("--max-length", type=_number(int, 2, strict=False), help="truncate to this many tokens")
    p.add_argument("--progress-interval", type=_number(int, 0, strict=True), default=defaults.progress_interval)
    p.add_argument("--json", metavar="PATH", help="write the JSON report here ('-': print only the JSON)")
    return p


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    if args.json not in (None, "-") and not Path(args.json).resolve().parent.is_dir():
        cli.error(f"argument --json: no directory to write {args.json} into")
    config = RunConfig(**{key: value for key, value in vars(args).items() if key != "json"})
    bar = tqdm(total=config.steps, unit="step", file=sys.stderr) if sys.stderr.isatty() else None
    try:
        report = run(config, progress=(lambda step, _total: bar.update(step - bar.n)) if bar else None)
    except (ValueError, OSError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    text = json.dumps(report, indent=2)
    if args.json == "-":
        print(text)
        return 0
    print(format_summary(report))
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
