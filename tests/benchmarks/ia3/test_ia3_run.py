"""Whole runs of the tiny presets: learning, the report, local data and checkpoints."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import EsmForMaskedLM

from benchmarks.ia3 import PRESETS, ConfigError, RunConfig, apply_ia3, build_model, format_summary, run
from benchmarks.ia3.measures import flops_per_step, matthews
from benchmarks.ia3.runner import _cast_for_precision

REPORT_TYPES = {
    "preset": str,
    "weights": type(None),
    "task": str,
    "num_labels": int,
    "data_origin": str,
    "synthetic_variant": str,
    "train_examples": int,
    "test_examples": int,
    "steps": int,
    "warmup_steps": int,
    "timed_steps": int,
    "batch_size": int,
    "learning_rate": float,
    "optimizer": str,
    "precision": str,
    "compile": bool,
    "fast_path": bool,
    "step_capture": str,
    "capture_step": type(None),
    "attention": str,
    "seed": int,
    "eval_interval": int,
    "max_length": type(None),
    "sequence_length_tokens": int,
    "tokens_per_step": int,
    "trainable_parameters": int,
    "total_parameters": int,
    "flops_per_step": int,
    "device": str,
    "device_name": str,
    "versions": dict,
    "total_wall_time_s": float,
    "setup_time_s": float,
    "compile_time_s": float,
    "warmup_time_s": float,
    "training_loop_time_s": float,
    "eval_time_s": float,
    "steps_per_s": float,
    "tokens_per_s": float,
    "achieved_tflops": float,
    "peak_tflops": float,
    "peak_fraction": float,
    "peak_memory_bytes": int,
    "peak_memory_source": str,
    "loss_start": float,
    "loss_end": float,
    "loss_window": int,
    "evaluations": list,
}
MEASURED = {
    "total_wall_time_s",
    "setup_time_s",
    "compile_time_s",
    "warmup_time_s",
    "training_loop_time_s",
    "eval_time_s",
    "steps_per_s",
    "tokens_per_s",
    "achieved_tflops",
    "peak_fraction",
    "peak_memory_bytes",
}


def cpu(**options) -> RunConfig:
    """Tests pin the CPU so their reports, including the losses, are the same on any machine."""
    return RunConfig(device="cpu", **options)


@pytest.fixture(scope="module")
def learnable_report():
    config = cpu(preset="tiny", task="promoter_all", steps=30, synthetic="motif", peak_tflops=1.0)
    return run(config)


def test_a_tiny_run_lowers_the_loss_on_a_learnable_synthetic_task(learnable_report):
    assert learnable_report["loss_end"] < learnable_report["loss_start"] - 0.1


def test_a_tiny_run_reports_every_field_with_its_type(learnable_report):
    assert {key: type(value) for key, value in learnable_report.items()} == REPORT_TYPES
    assert set(learnable_report["versions"]) == {"python", "torch", "transformers", "peft", "cuda"}
    json.dumps(learnable_report)


def test_a_tiny_run_reports_its_recipe_and_shapes(learnable_report):
    report = learnable_report
    assert (report["preset"], report["task"], report["data_origin"]) == ("tiny", "promoter_all", "synthetic")
    assert (report["steps"], report["batch_size"], report["learning_rate"]) == (30, 8, 3e-3)
    assert (report["precision"], report["device"], report["optimizer"]) == ("fp32", "cpu", "Adam")
    assert report["sequence_length_tokens"] == 51
    assert report["timed_steps"] == 30 - report["warmup_steps"]
    assert 0 < report["trainable_parameters"] < report["total_parameters"]
    assert report["steps_per_s"] == pytest.approx(report["timed_steps"] / report["training_loop_time_s"])
    assert report["tokens_per_s"] == pytest.approx(report["steps_per_s"] * 8 * 51)
    assert report["peak_fraction"] == pytest.approx(report["achieved_tflops"])
    phases = ("setup_time_s", "compile_time_s", "warmup_time_s", "training_loop_time_s", "eval_time_s")
    assert sum(report[phase] for phase in phases) <= report["total_wall_time_s"]
    assert report["compile_time_s"] == 0.0  # neither compiled nor captured on a CPU
    assert (report["step_capture"], report["capture_step"], report["attention"]) == ("none", None, "sdpa")
    assert "tiny on promoter_all (synthetic)" in format_summary(report)


def test_everything_but_the_measurements_is_deterministic():
    config = cpu(preset="tiny-v2", steps=8, warmup_steps=2)
    first, second = run(config), run(config)
    assert {k: v for k, v in first.items() if k not in MEASURED} == {
        k: v for k, v in second.items() if k not in MEASURED
    }


def test_progress_is_reported_every_interval_and_at_the_end():
    calls = []
    run(cpu(preset="tiny", steps=25, warmup_steps=1, progress_interval=10), progress=lambda *a: calls.append(a))
    assert calls == [(10, 25), (20, 25), (25, 25)]


def _write_csv(path: Path, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lines = ["sequence,label"] + [f"{''.join(rng.choice(list('ACGT'), 60))},{i % 2}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")


def test_it_trains_and_evaluates_on_a_local_csv_task(tmp_path):
    _write_csv(tmp_path / "train.csv", 12, seed=0)
    _write_csv(tmp_path / "test.csv", 6, seed=1)
    report = run(cpu(preset="tiny", steps=6, warmup_steps=1, data=str(tmp_path), eval_interval=3))
    assert report["data_origin"] == str(tmp_path)
    assert report["synthetic_variant"] is None
    assert (report["train_examples"], report["test_examples"], report["sequence_length_tokens"]) == (12, 6, 11)
    assert [e["step"] for e in report["evaluations"]] == [3, 6]
    assert all(set(e) == {"step", "loss", "accuracy", "mcc"} for e in report["evaluations"])


def test_it_trains_on_a_local_fasta_file(tmp_path):
    path = tmp_path / "task.fa"
    path.write_text(">a|0\nACGTACGTACGTNNACGT\n>b|1\nTTTTTTGGGGGG\n>c|1\nCCCCCCAAAAAAC\n")
    report = run(cpu(preset="tiny", steps=3, warmup_steps=1, batch_size=2, data=str(path)))
    assert report["data_origin"] == str(path)
    assert report["train_examples"] == 3
    assert report["sequence_length_tokens"] == 9  # the longest; the others are padded and masked


def test_evaluation_without_a_test_split_is_an_error(tmp_path):
    _write_csv(tmp_path / "train.csv", 4, seed=0)
    with pytest.raises(ConfigError, match="needs a test split"):
        run(cpu(preset="tiny", steps=2, warmup_steps=0, data=str(tmp_path / "train.csv"), eval_interval=1))


def test_it_runs_a_local_checkpoint_instead_of_a_preset(tmp_path):
    EsmForMaskedLM(PRESETS["tiny"].config()).save_pretrained(tmp_path)
    report = run(cpu(weights=str(tmp_path), steps=2, warmup_steps=0))
    assert report["preset"] is None and report["weights"] == str(tmp_path)


def test_bf16_keeps_the_ia3_vectors_and_head_in_fp32():
    model = apply_ia3(build_model("tiny", num_labels=2, seed=0))
    _cast_for_precision(model, "bf16")
    assert {p.dtype for p in model.parameters() if p.requires_grad} == {torch.float32}
    assert {p.dtype for p in model.parameters() if not p.requires_grad} == {torch.bfloat16}
    report = run(cpu(preset="tiny", steps=2, warmup_steps=0, precision="bf16"))
    assert report["precision"] == "bf16" and np.isfinite(report["loss_end"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"preset": "huge"}, "unknown preset 'huge'"),
        ({"task": "nope"}, "unknown task 'nope'"),
        ({"steps": 0}, "steps must be positive"),
        ({"steps": 3, "warmup_steps": 3}, "fewer than steps"),
        ({"precision": "fp16"}, "precision must be one of"),
        ({"data": "/no/such/place"}, "no such file or directory"),
        ({"compile": True, "warmup_steps": 0}, "the first step compiles"),
    ],
)
def test_a_bad_option_is_refused_before_anything_is_built(options, message):
    with pytest.raises(ConfigError, match=message):
        run(cpu(**options))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_auto_precision_is_bf16_and_memory_is_the_allocator_peak():
    report = run(RunConfig(device="cuda", preset="tiny-v2", steps=20, synthetic="motif"))
    assert (report["device"], report["precision"]) == ("cuda", "bf16")
    assert report["peak_memory_source"] == "cuda_max_allocated" and report["peak_memory_bytes"] > 0
    assert report["versions"]["cuda"] is not None
    assert report["loss_end"] < report["loss_start"]


def test_flops_count_4_per_frozen_weight_and_token_plus_attention():
    # 10 matmul weights, 2 tokens, 1 layer of width 3, batch 1: 4*10*2 + 12*1*2*2*3.
    assert flops_per_step(10, batch_size=1, tokens=2, layers=1, hidden=3) == 80 + 144
    assert flops_per_step(10, batch_size=5, tokens=2, layers=1, hidden=3) == 5 * 224


def test_matthews_correlation_spans_minus_one_to_one():
    truth = np.array([0, 1, 2, 0, 1, 2])
    assert matthews(truth, truth, 3) == pytest.approx(1.0)
    assert matthews(np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), 2) == pytest.approx(-1.0)
    assert matthews(truth, np.zeros(6, dtype=int), 3) == 0.0
