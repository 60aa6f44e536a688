"""The issue's GPU check: the paper's IA3 recipe on NT-shaped models, timed on one GPU.

Runs ``nt-v1-500m`` on ``splice_sites_all`` for 10,000 steps at batch 8 (Adam 3e-3, bf16
autocast), then ``nt-v1-2.5b`` for 1,000 steps if the deadline leaves room, and prints each
report (human summary and JSON) as it finishes, with a progress line every ``--every`` steps
so a run cut short by the deadline still says how far it got. Needs only PyTorch,
transformers and PEFT (no Django), so it runs on a bare GPU image:

    python3 bench/gpu_ia3.py --deadline 450 --out DIR

The paper's figures to compare with: 20 minutes (500M) and 50 minutes (2.5B) per run on
eight A100s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.ia3 import RunConfig, run  # noqa: E402
from benchmarks.ia3.runner import format_summary  # noqa: E402

#: The paper's recipe per preset; every run after the first may be shortened to fit the deadline.
RUNS = "nt-v1-500m:10000,nt-v1-2.5b:1000"
#: Seconds a run needs besides its steps (imports, building the model, tokenising, warm-up).
SETUP_ALLOWANCE = 45.0


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--deadline", type=float, default=450.0, help="seconds from start this script may use")
    cli.add_argument("--task", default="splice_sites_all")
    cli.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 peak (H100/H200 SXM datasheet)")
    cli.add_argument("--every", type=int, default=1000, help="progress line every N steps")
    cli.add_argument("--out", type=Path, default=Path("bench/out"))
    cli.add_argument("--runs", default=RUNS, help=f"preset:steps,... in order (default {RUNS})")
    cli.add_argument("--compile", action="store_true", help="run the model through torch.compile")
    args = cli.parse_args()
    runs = [(preset, int(steps)) for preset, steps in (item.split(":") for item in args.runs.split(","))]
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    previous_rate = None  # steps/s of the run before, to judge whether the next one fits

    for preset, steps in runs:
        left = args.deadline - (time.perf_counter() - started)
        if previous_rate is not None:
            # The 2.5B model has about five times the 500M's FLOPs per step; assume the next run is that much slower.
            fits = int(max(0.0, left - SETUP_ALLOWANCE) * previous_rate / 5)
            if fits < 100:
                print(f"skipping {preset}: {left:.0f} s left, too little for 100 steps", flush=True)
                break
            steps = min(steps, fits // 100 * 100)
        print(f"== {preset} on {args.task}: {steps} steps (deadline in {left:.0f} s)", flush=True)
        run_started = time.perf_counter()

        def progress(step: int, total: int, run_started: float = run_started) -> None:
            print(f"   step {step}/{total} at {time.perf_counter() - run_started:.1f} s", flush=True)

        config = RunConfig(
            preset=preset,
            task=args.task,
            steps=steps,
            batch_size=8,
            learning_rate=3e-3,
            precision="auto",
            peak_tflops=args.peak_tflops,
            progress_interval=args.every,
            warmup_steps=20,
            compile=args.compile,
        )
        report = run(config, progress=progress)
        (args.out / f"{preset}.json").write_text(json.dumps(report, indent=2) + "\n")
        print(format_summary(report), flush=True)
        print(json.dumps(report), flush=True)
        previous_rate = report["steps_per_s"]
    return 0


if __name__ == "__main__":
    sys.exit(main())
