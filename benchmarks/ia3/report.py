"""A run's JSON report and its few lines for a person."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .measures import device_name, peak_memory, versions

if TYPE_CHECKING:
    from .run_types import Loop, RunConfig, Setup

OPTIMIZER = "Adam"


def run_report(config: RunConfig, setup: Setup, loop: Loop, setup_time: float) -> dict[str, Any]:
    """The run as flat JSON. The fields whose meaning is not in their name:

    * ``setup_time_s``: from the call to the first step (validation, model, data, tokenising);
      ``compile_time_s``: the first step when ``compile`` is on (Dynamo and Inductor run there)
      plus the capture of the CUDA graph; ``warmup_time_s``: the rest of the untimed first
      ``warmup_steps``; ``training_loop_time_s``: the timed steps, evaluations and any compile
      time excluded; ``eval_time_s``: all evaluations; ``total_wall_time_s``: the whole call,
      which is the figure the portal records as the run's time.
    * ``step_capture``: ``"cuda_graph"`` when the fast path's step ran as a CUDA graph from
      step ``capture_step`` on, else ``"none"``; ``attention``: the model's attention kernel.
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
        "step_capture": "none" if setup.capture_at is None else "cuda_graph",
        "capture_step": setup.capture_at,
        "attention": str(setup.forward.config._attn_implementation),
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
        "compile_time_s": loop.compile_time,
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


def format_summary(report: dict[str, Any]) -> str:
    """The report as a few lines for a person."""
    model = report["preset"] or f"weights {report['weights']}"
    fraction = f" ({report['peak_fraction']:.1%} of {report['peak_tflops']:g})" if report["peak_fraction"] else ""
    path = "fast" if report["fast_path"] else "plain"
    path += ", compiled" if report["compile"] else ""
    path += ", CUDA graph" if report["step_capture"] == "cuda_graph" else ""
    lines = [
        f"IA3 {model} on {report['task']} ({report['data_origin']}), {report['device_name']} [{report['device']}], "
        f"{report['precision']}, {path} path, {report['attention']} attention",
        f"  {report['steps']} steps x batch {report['batch_size']} x {report['sequence_length_tokens']} tokens, "
        f"Adam lr {report['learning_rate']:g}, seed {report['seed']}",
        f"  parameters: {report['trainable_parameters']:,} trainable of {report['total_parameters']:,}",
        f"  time: {report['total_wall_time_s']:.2f} s total, {report['setup_time_s']:.2f} s set-up, "
        f"{report['compile_time_s']:.2f} s compile, {report['warmup_time_s']:.2f} s warm-up, "
        f"{report['training_loop_time_s']:.2f} s loop ({report['timed_steps']} timed steps), "
        f"{report['eval_time_s']:.2f} s eval",
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
