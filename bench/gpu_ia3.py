"""The GPU check: the paper's IA3 recipe on NT-shaped models, timed on one GPU in one command.

The plan, in order, on ``splice_sites_all`` (synthetic sequences of its shape) at batch 8, Adam 3e-3,
bf16, 20 warm-up steps:

0. ``check``: the tiny preset in fp32 for 50 steps with the step captured as a CUDA graph and
   without, the same seed: the two loss curves must agree (a wrong capture shows here, in seconds);
1. ``nt-v1-500m`` for 10,000 steps on the fast path (device-resident step, CUDA graph, SDPA);
2. ``nt-v1-500m`` for 2,000 steps on the plain path (stock PEFT and ESM forwards, host loop), for
   the ratio of the two paths;
3. ``nt-v2-500m`` for 2,000 steps on the fast path;
4. ``nt-v1-2.5b`` on the fast path for as many steps as the deadline leaves (whole hundreds, at
   most 10,000), judged from run 1's rate scaled by the FLOPs per step, so it errs short.

Each run writes ``<n>-<preset>-<steps>-steps-<path>.json`` (the runner's report) as it finishes,
and prints its summary, JSON and a progress line every ``--every`` steps, so a run cut short still
says how far it got. At the end ``summary.md`` tabulates the reports. Everything goes under
``--out``/``<dated folder>`` (``--out`` defaults to ``$OUT``, the device machine's return folder),
named to be copied as it is into ``bench/results/``.

Needs only PyTorch, transformers and PEFT (no Django), so it runs on a bare GPU image:

    python3 bench/gpu_ia3.py --deadline 450             # on the GPU: within 8 minutes
    python3 bench/gpu_ia3.py --smoke --out /tmp/smoke   # on a CPU: the same plan on tiny presets

On a lent device machine (no network; its own Python and CUDA torch), carry this project's pinned
pure-Python wheels as the 2026-11-30 run did, made here with
``pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 -d .whl
transformers==5.24.0 peft==0.21.2 huggingface_hub==2.4.0
safetensors==0.8.0 tokenizers==0.23.3 accelerate==1.15.0`` (the wheels for the device's Python; see
requirements-runner.txt for the rest), and run
``pip install -q --no-index --find-links .whl transformers peft && python3 bench/gpu_ia3.py`` with a
limit of about 480 s.

``--peak-tflops`` defaults to 989.5, the H200 SXM's dense BF16 Tensor Core peak: NVIDIA's H200
datasheet (https://www.nvidia.com/en-us/data-center/h200/) gives 1,979 TFLOPS "with sparsity",
twice the dense rate.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.ia3 import RunConfig, run  # noqa: E402
from benchmarks.ia3.runner import format_summary  # noqa: E402

H200_DENSE_BF16_TFLOPS = 989.5
#: Seconds a run needs besides its steps (building the model, tokenising, capture, warm-up).
SETUP_ALLOWANCE = 30.0
#: The most the check's two loss curves may differ (fp32, same batches; only float sums reorder).
CHECK_TOLERANCE = 1e-3


@dataclasses.dataclass
class Planned:
    name: str
    preset: str
    steps: int | None  # None: as many as the deadline leaves
    fast: bool = True
    precision: str = "auto"
    cuda_graph: bool = True


def plan(smoke: bool) -> list[Planned]:
    if smoke:
        return [
            Planned("nt-v1-500m-fast", "tiny", 12),
            Planned("nt-v1-500m-plain", "tiny", 8, fast=False),
            Planned("nt-v2-500m-fast", "tiny-v2", 8),
            Planned("nt-v1-2.5b-fast", "tiny", None),
        ]
    return [
        Planned("nt-v1-500m-fast", "nt-v1-500m", 10_000),
        Planned("nt-v1-500m-plain", "nt-v1-500m", 2_000, fast=False),
        Planned("nt-v2-500m-fast", "nt-v2-500m", 2_000),
        Planned("nt-v1-2.5b-fast", "nt-v1-2.5b", None),
    ]


def check(args: argparse.Namespace) -> dict[str, Any]:
    """The captured step against the eager one, tiny preset, fp32, 50 steps (8 in a smoke run),
    same batches."""
    config = RunConfig(
        preset="tiny",
        task=args.task,
        steps=8 if args.smoke else 50,
        warmup_steps=2 if args.smoke else 5,
        precision="fp32",
        synthetic="motif",
        progress_interval=10,
        device=args.device,
    )
    captured, eager = run(config), run(dataclasses.replace(config, cuda_graph=False))
    difference = abs(captured["loss_end"] - eager["loss_end"])
    return {
        "captured": captured["step_capture"],
        "loss_start": captured["loss_start"],
        "loss_end_captured": captured["loss_end"],
        "loss_end_eager": eager["loss_end"],
        "difference": difference,
        "agrees": difference <= CHECK_TOLERANCE,
    }


def _steps_that_fit(left: float, reference: dict[str, Any] | None, preset_flops: int | None, every: int) -> int:
    """Steps of the deadline's last run: the reference run's loop rate divided by the ratio of
    FLOPs per step (a GPU-bound guess; a launch-bound run is faster), rounded down to hundreds."""
    if reference is None or preset_flops is None:
        return 0
    rate = reference["steps_per_s"] * reference["flops_per_step"] / preset_flops
    fits = int(max(0.0, left - SETUP_ALLOWANCE) * rate * 0.9)
    return min(10_000, fits // every * every)


def _flops_of(preset: str, batch_size: int, task: str) -> int:
    """FLOPs per step of ``preset`` on ``task`` (the runner's count), from a meta-device model."""
    import torch

    from benchmarks.ia3.measures import flops_per_step
    from benchmarks.ia3.models import PRESETS, build_model, matmul_parameters
    from benchmarks.ia3.tasks import get_task
    from benchmarks.ia3.tokenizer import tokenize

    spec = get_task(task)
    model = build_model(preset, spec.num_classes, torch.device("meta"))
    tokens = len(tokenize("A" * spec.sequence_length_bp, PRESETS[preset].layout))
    config = model.config
    return flops_per_step(matmul_parameters(model), batch_size, tokens, config.num_hidden_layers, config.hidden_size)


def _table(reports: list[tuple[str, dict[str, Any]]], checked: dict[str, Any] | None) -> str:
    lines = [
        "| run | steps | path | wall | set-up | compile | warm-up | loop | steps/s | tokens/s | TFLOP/s | of peak | peak memory | loss |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in reports:
        path = ("fast" if r["fast_path"] else "plain") + (", CUDA graph" if r["step_capture"] == "cuda_graph" else "")
        fraction = f"{r['peak_fraction']:.1%}" if r["peak_fraction"] else "-"
        lines.append(
            f"| {name} ({r['preset']}) | {r['steps']:,} | {path} | {r['total_wall_time_s']:.1f} s | "
            f"{r['setup_time_s']:.1f} s | {r['compile_time_s']:.1f} s | {r['warmup_time_s']:.1f} s | "
            f"{r['training_loop_time_s']:.1f} s | {r['steps_per_s']:.1f} | {r['tokens_per_s']:,.0f} | "
            f"{r['achieved_tflops']:.1f} | {fraction} | {r['peak_memory_bytes'] / 2**30:.1f} GiB | "
            f"{r['loss_start']:.3f} -> {r['loss_end']:.3f} |"
        )
    by_name = dict(reports)
    fast, plain = by_name.get("nt-v1-500m-fast"), by_name.get("nt-v1-500m-plain")
    if fast and plain:
        lines += ["", f"Fast over plain path, loop steps/s: {fast['steps_per_s'] / plain['steps_per_s']:.2f}x."]
    if checked is not None:
        lines += [
            "",
            f"Capture check (tiny, fp32, 50 steps): step {checked['captured']}, final loss "
            f"{checked['loss_end_captured']:.5f} captured vs {checked['loss_end_eager']:.5f} eager "
            f"(difference {checked['difference']:.1e}, {'agrees' if checked['agrees'] else 'DISAGREES'})."
            if "error" not in checked
            else f"Capture check failed ({checked['error']}): the fast runs ran their step eagerly.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--deadline", type=float, default=450.0, help="seconds from start this script may use")
    cli.add_argument("--task", default="splice_sites_all")
    cli.add_argument("--peak-tflops", type=float, default=H200_DENSE_BF16_TFLOPS, help="dense bf16 peak")
    cli.add_argument("--every", type=int, default=500, help="progress line every N steps")
    cli.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench/out")))
    cli.add_argument("--folder", default=f"h200-{datetime.date.today().isoformat()}", help="dated folder in --out")
    cli.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    cli.add_argument("--smoke", action="store_true", help="tiny presets and step counts: the plan end to end on a CPU")
    cli.add_argument("--skip", default="", help="comma-separated run names to leave out")
    args = cli.parse_args(argv)
    every = 4 if args.smoke else args.every
    out = args.out / args.folder
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    def elapsed() -> float:
        return time.perf_counter() - started

    # One device run has to bring figures back: a capture that fails or disagrees is reported, and the
    # fast runs then go on with the step eager rather than end the script.
    try:
        checked = check(args)
    except Exception as error:  # noqa: BLE001 - reported in full, then the plan goes on without graphs
        traceback.print_exc()
        checked = {"captured": "failed", "error": f"{type(error).__name__}: {error}", "agrees": False}
    print(f"== check: {json.dumps(checked)}", flush=True)
    (out / "0-check.json").write_text(json.dumps(checked, indent=2) + "\n")
    graphs = bool(checked["agrees"])
    failures: list[str] = []
    reports: list[tuple[str, dict[str, Any]]] = []
    for number, planned in enumerate(plan(args.smoke), start=1):
        if planned.name in args.skip.split(","):
            continue
        left = args.deadline - elapsed()
        steps = planned.steps
        if steps is None:
            reference = dict(reports).get("nt-v1-500m-fast")
            steps = _steps_that_fit(left, reference, _flops_of(planned.preset, 8, args.task), every)
            if args.smoke:
                steps = min(max(steps, 8), 8)
        if steps < 2 * every and not args.smoke:
            print(f"== skipping {planned.name}: {left:.0f} s left, too little", flush=True)
            continue
        print(f"== {number}: {planned.name} ({planned.preset}), {steps} steps, {left:.0f} s left", flush=True)
        run_started = time.perf_counter()

        def progress(step: int, total: int, run_started: float = run_started) -> None:
            print(f"   step {step}/{total} at {time.perf_counter() - run_started:.1f} s", flush=True)

        config = RunConfig(
            preset=planned.preset,
            task=args.task,
            steps=steps,
            batch_size=8,
            learning_rate=3e-3,
            precision=planned.precision,
            peak_tflops=args.peak_tflops,
            progress_interval=every,
            warmup_steps=2 if args.smoke else 20,
            fast=planned.fast,
            cuda_graph=planned.cuda_graph and graphs,
            device=args.device,
        )
        try:
            report = run(config, progress=progress)
        except Exception as error:  # noqa: BLE001 - the next runs may still bring figures back
            traceback.print_exc()
            failures.append(f"{planned.name}: {type(error).__name__}: {error}")
            continue
        if not np.isfinite(report["loss_end"]):
            failures.append(f"{planned.name}: the loss is not finite")
        path = "fast" if planned.fast else "plain"
        (out / f"{number}-{planned.preset}-{steps}-steps-{path}.json").write_text(json.dumps(report, indent=2) + "\n")
        print(format_summary(report), flush=True)
        print(json.dumps(report), flush=True)
        reports.append((planned.name, report))
    table = _table(reports, checked) + "".join(f"\nFailed: {failure}\n" for failure in failures)
    (out / "summary.md").write_text(table)
    print(table, flush=True)
    print(f"== done in {elapsed():.0f} s; reports in {out} (copy the folder into bench/results/)", flush=True)
    return 0 if checked["agrees"] and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
