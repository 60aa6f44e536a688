"""Presets, their parameter counts, the v2 architecture and where IA3 goes."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import time

import pytest
import torch
from peft.tuners.ia3 import Linear as IA3Linear
from transformers import EsmForMaskedLM

from benchmarks.ia3 import PRESETS, apply_ia3, build_model, load_local_weights, parameter_count
from benchmarks.ia3.models import NTv2ForMaskedLM, SwiGLUIntermediate


def test_nt_v1_500m_has_the_published_486m_parameters_with_its_mlm_head():
    # 485.7 M: the LM head's decoder is untied from the token embedding in NT checkpoints
    # (tied, it would be 480.4 M).
    assert parameter_count("nt-v1-500m", with_mlm_head=True) == pytest.approx(486e6, rel=0.01)


def test_nt_v2_50m_has_the_published_56m_once_its_unused_position_table_is_counted():
    # Our rotary model has 54.86 M parameters. NT v2 checkpoints were saved by ESM code that
    # always created a learned position table (2,050 x 512) even for rotary models; transformers
    # now ignores that key on load, and the published 55.9 M includes it.
    count = parameter_count("nt-v2-50m", with_mlm_head=True)
    assert count == pytest.approx(54.86e6, rel=0.001)
    assert count + 2050 * 512 == pytest.approx(56e6, rel=0.01)


@pytest.mark.parametrize(
    ("preset", "nominal", "tolerance"),
    [("nt-v1-2.5b", 2.5e9, 0.03), ("nt-v2-100m", 100e6, 0.05), ("nt-v2-500m", 500e6, 0.01)],
)
def test_the_other_presets_have_their_nominal_size(preset, nominal, tolerance):
    assert parameter_count(preset, with_mlm_head=True) == pytest.approx(nominal, rel=tolerance)


def test_counting_the_largest_preset_allocates_nothing():
    started = time.perf_counter()
    encoder = parameter_count("nt-v1-2.5b", with_mlm_head=False)
    assert time.perf_counter() - started < 10
    assert encoder < parameter_count("nt-v1-2.5b", with_mlm_head=True)


@pytest.mark.parametrize("preset", ["tiny", "tiny-v2"])
def test_ia3_scales_keys_values_and_the_feed_forward_output_of_every_layer_only(preset):
    model = apply_ia3(build_model(preset, num_labels=2, seed=0))
    adapted = {
        name.split("encoder.layer.", 1)[1]: module
        for name, module in model.named_modules()
        if isinstance(module, IA3Linear)
    }
    expected = {
        f"{layer}.{target}"
        for layer in range(PRESETS[preset].num_layers)
        for target in ("attention.self.key", "attention.self.value", "output.dense")
    }
    assert set(adapted) == expected
    spec = PRESETS[preset]
    for name, module in adapted.items():
        feedforward = name.endswith(".output.dense")
        assert module.is_feedforward == feedforward
        vector = module.ia3_l["default"]
        assert vector.shape == ((1, spec.ffn_size) if feedforward else (spec.hidden_size, 1))


@pytest.mark.parametrize("preset", ["tiny", "tiny-v2"])
def test_ia3_trains_only_its_vectors_and_the_classification_head(preset):
    model = apply_ia3(build_model(preset, num_labels=3, seed=0))
    trainable = [name for name, parameter in model.named_parameters() if parameter.requires_grad]
    assert trainable
    assert all(".ia3_l." in name or "classifier.modules_to_save." in name for name in trainable)
    assert any("classifier.modules_to_save." in name for name in trainable)
    vectors = [name for name in trainable if ".ia3_l." in name]
    assert len(vectors) == 3 * PRESETS[preset].num_layers


def test_a_v2_model_uses_rotary_positions_and_a_bias_free_swiglu_under_esm_names():
    model = build_model("tiny-v2", num_labels=2, seed=0)
    assert model.esm.rotary_embeddings is not None
    assert not hasattr(model.esm.embeddings, "position_embeddings")
    layer = model.esm.encoder.layer[0]
    assert isinstance(layer.intermediate, SwiGLUIntermediate)
    assert layer.intermediate.dense.out_features == 2 * PRESETS["tiny-v2"].ffn_size
    assert layer.intermediate.dense.bias is None and layer.output.dense.bias is None
    assert layer.attention.output.dense.bias is not None  # only the feed-forward loses its bias
    assert layer.intermediate.dense.weight.std().item() == pytest.approx(0.02, rel=0.1)  # HF init, not torch's


def test_a_v2_model_runs_forward_and_backward_through_ia3():
    model = apply_ia3(build_model("tiny-v2", num_labels=2, seed=0))
    ids = torch.randint(4, 4106, (2, 17))
    loss = torch.nn.functional.cross_entropy(model(input_ids=ids).logits, torch.tensor([0, 1]))
    loss.backward()
    vectors = [p for name, p in model.named_parameters() if ".ia3_l." in name]
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in vectors)


@pytest.mark.parametrize(("preset", "mlm"), [("tiny", EsmForMaskedLM), ("tiny-v2", NTv2ForMaskedLM)])
def test_a_local_checkpoint_loads_into_the_right_architecture_without_the_hub(tmp_path, preset, mlm):
    torch.manual_seed(1)
    saved = mlm(PRESETS[preset].config())
    saved.save_pretrained(tmp_path)
    model, layout = load_local_weights(tmp_path, num_labels=2)
    assert layout == PRESETS[preset].layout
    for name in ("intermediate.dense.weight", "output.dense.weight", "attention.self.key.weight"):
        loaded = model.esm.encoder.layer[1].get_parameter(name)
        assert torch.equal(loaded, saved.esm.encoder.layer[1].get_parameter(name))
