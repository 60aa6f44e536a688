"""The worker's run of the IA3 runner: where PyTorch's compile cache goes, and what it runs by default."""

import os
from datetime import timedelta

from benchmarks import conf
from benchmarks.monitor import LogTail, run_measurement


def test_it_points_inductors_cache_at_the_setting_before_the_runner_runs(settings, tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    settings.BENCHMARK_INDUCTOR_CACHE_DIR = tmp_path / "torchinductor"
    parameters = {
        "preset": "tiny",
        "task": "promoter_all",
        "steps": 2,
        "batch_size": 2,
        "learning_rate": 3e-3,
        "precision": "fp32",
        "eval_interval": 0,
        "seed": 0,
        "warmup_steps": 0,
        "device": "cpu",
    }
    with LogTail() as log:
        report = run_measurement(
            parameters=parameters,
            write_progress=lambda step, total: True,
            beat=lambda: True,
            heartbeat_interval=timedelta(seconds=30),
            log=log,
        )
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "torchinductor") == str(conf.inductor_cache_dir())
    # A job runs the fast path; on this CPU its step runs eagerly (a GPU worker captures it).
    assert report["fast_path"] and report["step_capture"] == "none" and not report["compile"]


def test_the_cache_defaults_to_the_var_dir(settings):
    del settings.BENCHMARK_INDUCTOR_CACHE_DIR
    assert conf.inductor_cache_dir() == settings.VAR_DIR / "torchinductor"
