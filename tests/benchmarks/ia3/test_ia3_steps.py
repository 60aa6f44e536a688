"""The fast path's device-resident step: it draws the plain loop's batches, trains the same model,
and is captured as a CUDA graph exactly when a portal job runs on a GPU."""

import dataclasses
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
import torch

from benchmarks.ia3 import RunConfig, run
from benchmarks.ia3.models import build_model
from benchmarks.ia3.runner import _set_up, _train, make_optimizer, uses_cuda_graph
from benchmarks.ia3.steps import CAPTURE_AFTER_STEPS, DeviceStep, before_capture, capture_step

#: Same model, same batches, same operations in fp32: only the order of float sums may differ.
FP32_TOLERANCE = 1e-5


def _config(**options) -> RunConfig:
    config = RunConfig(**{"preset": "tiny", "steps": 50, "warmup_steps": 1, "device": "cpu", **options})
    config.validate()
    return config


def test_the_device_step_draws_each_step_the_batch_the_plain_loop_takes(tmp_path):
    # Sequences of unequal length, so the padding mask is gathered too.
    rows = ["sequence,label"] + [f"{'ACGT' * (3 + i % 5)},{i % 2}" for i in range(10)]
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    setup = _set_up(_config(steps=7, batch_size=3, data=str(tmp_path)))
    assert setup.step is not None and setup.train.mask is not None
    shapes = set()
    for step in range(7):
        for drawn, taken in zip(setup.step.batch(), setup.train.take(setup.order[step]), strict=True):
            assert torch.equal(drawn, taken)
            shapes.add(tuple(drawn.shape))
        setup.step()
        assert setup.step.counter.item() == step + 1
    assert shapes == {(3, setup.train.ids.shape[1]), (3,)}  # one static shape for every step
    assert np.all(setup.losses.numpy() > 0)  # every step wrote its loss at its own index


@pytest.mark.parametrize("preset", ["tiny", "tiny-v2"])
def test_over_50_steps_the_device_step_with_a_capturable_adam_follows_the_plain_loop(preset):
    plain_config, fast_config = (
        _config(preset=preset, fast=False, synthetic="motif"),
        _config(preset=preset, synthetic="motif"),
    )
    plain_setup, fast_setup = _set_up(plain_config), _set_up(fast_config)
    # The optimiser a captured step needs (its step count on the device); fused Adam takes it on a CPU too.
    capturable = make_optimizer(fast_setup.forward, 3e-3, capturable=True)
    assert fast_setup.step is not None
    fast_setup.step.optimizer = fast_setup.optimizer = capturable
    plain = _train(plain_config, plain_setup, None).losses
    fast = _train(fast_config, fast_setup, None).losses
    assert plain[-10:].mean() < plain[:10].mean() - 0.3  # it learns
    np.testing.assert_allclose(fast, plain, rtol=0, atol=FP32_TOLERANCE)
    assert isinstance(capturable.state[next(iter(capturable.state))]["step"], torch.Tensor)
    trained = {n: p for n, p in fast_setup.forward.named_parameters() if p.requires_grad}
    reference = {n: p for n, p in plain_setup.forward.named_parameters() if p.requires_grad}
    assert trained.keys() == reference.keys()
    for name, parameter in trained.items():
        torch.testing.assert_close(parameter, reference[name], rtol=0, atol=1e-4, msg=name)


def test_a_portal_job_captures_its_step_on_a_gpu_and_not_on_a_cpu():
    from benchmarks.parameters import OVERRIDABLE  # what a job may set; fast and cuda_graph are not among them

    job = RunConfig(preset="nt-v1-500m", task="splice_sites_all", steps=10_000)
    assert not {"fast", "cuda_graph", "compile"} & set(OVERRIDABLE)
    assert uses_cuda_graph(job, torch.device("cuda"))
    assert not uses_cuda_graph(job, torch.device("cpu"))
    assert not uses_cuda_graph(dataclasses.replace(job, fast=False), torch.device("cuda"))
    assert not uses_cuda_graph(dataclasses.replace(job, cuda_graph=False), torch.device("cuda"))


def test_the_capture_waits_for_the_warm_up_and_for_three_eager_steps():
    assert capture_step(steps=10_000, warmup_steps=20) == 20
    assert capture_step(steps=10_000, warmup_steps=0) == CAPTURE_AFTER_STEPS
    assert capture_step(steps=CAPTURE_AFTER_STEPS, warmup_steps=0) is None  # nothing left to replay


def test_on_a_cpu_the_fast_path_runs_eagerly_and_leaves_the_stream_alone():
    with before_capture(torch.device("cpu"), capturing=True):
        pass
    setup = _set_up(_config(steps=4))
    assert setup.capture_at is None and setup.step is not None and setup.step.graph is None
    assert run(_config(steps=4))["step_capture"] == "none"


def test_the_model_attends_through_sdpa():
    assert build_model("tiny", num_labels=2).config._attn_implementation == "sdpa"
    assert build_model("tiny-v2", num_labels=2).config._attn_implementation == "sdpa"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("preset", ["tiny", "tiny-v2"])
def test_on_cuda_the_captured_step_follows_the_eager_step_over_50_steps(preset):
    options = {"preset": preset, "device": "cuda", "precision": "fp32", "synthetic": "motif", "warmup_steps": 5}
    captured = run(_config(**options))
    eager = run(_config(**options, cuda_graph=False))
    assert (captured["step_capture"], eager["step_capture"]) == ("cuda_graph", "none")
    assert captured["loss_end"] < captured["loss_start"] - 0.3
    assert captured["loss_end"] == pytest.approx(eager["loss_end"], abs=1e-3)


def test_device_steps_need_no_host_index():
    # The step's whole state is on the device: the counter is a tensor, not a Python int.
    setup = _set_up(_config(steps=3))
    assert isinstance(setup.step, DeviceStep)
    assert setup.step.counter.device == setup.train.ids.device and setup.step.counter.dtype == torch.long
