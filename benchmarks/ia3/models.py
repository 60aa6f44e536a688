"""Nucleotide Transformer presets built from ``transformers.EsmConfig`` with random weights,
local checkpoints, and the IA3 wrapping the runner trains.

NT v1 is the stock Hugging Face ESM architecture (learned positions, GELU feed-forward with
bias). NT v2 swaps in rotary positions and a bias-free SwiGLU feed-forward; stock ESM has the
rotary part but not the SwiGLU one, so the v2 classes below replace only each layer's
``intermediate`` and ``output`` modules and keep their names. That keeps a real NT v2
checkpoint's keys loadable and lets one IA3 target pattern serve both generations.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch
from peft import IA3Config, PeftModel, TaskType, get_peft_model
from torch import nn
from transformers import EsmConfig, EsmForMaskedLM, EsmForSequenceClassification
from transformers.models.esm.modeling_esm import EsmOutput

from .tokenizer import LAYOUTS

#: IA3 scales keys and values (outputs of ``attention.self.key``/``value``) and the input of
#: each layer's feed-forward output projection ``layer.N.output.dense``. The pattern anchors
#: ``output.dense`` right after ``layer.N.`` so ``layer.N.attention.output.dense`` (the
#: attention output projection) and ``query`` are left alone, as in the IA3 paper.
IA3_TARGET_MODULES = r".*\.layer\.\d+\.(attention\.self\.(key|value)|output\.dense)"
IA3_FEEDFORWARD_MODULES = r".*\.layer\.\d+\.output\.dense"
#: PyTorch's fused attention (``scaled_dot_product_attention``: flash or memory-efficient kernels
#: on CUDA). transformers 5 already picks it for ESM when nothing is asked; the runner asks, so a
#: change of that default can never silently put the materialised T x T attention back.
ATTENTION = "sdpa"
CLASSIFIER = "classifier"
#: The checkpoint config keys that shape the network. Label maps, problem type and the like
#: are left behind: the head is new and sized for the task being run.
ARCHITECTURE_KEYS = (
    "vocab_size",
    "pad_token_id",
    "mask_token_id",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "position_embedding_type",
    "rope_theta",
    "layer_norm_eps",
    "emb_layer_norm_before",
    "token_dropout",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "initializer_range",
    "tie_word_embeddings",
    "add_bias_fnn",
)


@dataclass(frozen=True)
class Preset:
    """One model shape; ``layout`` picks both the architecture generation and the vocabulary."""

    name: str
    layout: str
    num_layers: int
    hidden_size: int
    num_heads: int
    ffn_size: int

    @property
    def max_positions(self) -> int:
        """NT v1 takes 1,000 tokens and v2 2,048; ESM counts positions from the pad id + 1."""
        return 1002 if self.layout == "v1" else 2050

    def config(self, num_labels: int = 2) -> EsmConfig:
        """The ``EsmConfig`` of this shape with the settings of the published NT v2 config (no
        dropout, no token dropout, LM head untied from the embedding, which is what makes
        nt-v1-500m come to its published 486 M), the reference tokenizer's pad and mask ids,
        ``add_bias_fnn`` on v2 as NT v2 configs carry it, and SDPA attention (``ATTENTION``)."""
        layout = LAYOUTS[self.layout]
        v2 = self.layout == "v2"
        extra = {"add_bias_fnn": False} if v2 else {}
        return EsmConfig(
            vocab_size=layout.vocab_size,
            pad_token_id=layout.pad_id,
            mask_token_id=layout.mask_id,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_layers,
            num_attention_heads=self.num_heads,
            intermediate_size=self.ffn_size,
            max_position_embeddings=self.max_positions,
            position_embedding_type="rotary" if v2 else "absolute",
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            layer_norm_eps=1e-12,
            emb_layer_norm_before=False,
            token_dropout=False,
            tie_word_embeddings=False,
            num_labels=num_labels,
            attn_implementation=ATTENTION,
            **extra,
        )


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("tiny", "v1", 2, 64, 4, 256),
        Preset("tiny-v2", "v2", 2, 64, 4, 256),
        Preset("nt-v1-500m", "v1", 24, 1280, 20, 5120),
        Preset("nt-v1-2.5b", "v1", 32, 2560, 20, 10240),
        Preset("nt-v2-50m", "v2", 12, 512, 16, 2048),
        Preset("nt-v2-100m", "v2", 22, 512, 16, 2048),
        Preset("nt-v2-500m", "v2", 29, 1024, 16, 4096),
    )
}


class SwiGLUIntermediate(nn.Module):
    """NT v2's gated feed-forward input: one projection to twice the width, split, SiLU gate."""

    def __init__(self, config: EsmConfig) -> None:
        super().__init__()
        bias = bool(getattr(config, "add_bias_fnn", False))
        self.dense = nn.Linear(config.hidden_size, 2 * config.intermediate_size, bias=bias)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        gate, value = self.dense(hidden_states).chunk(2, dim=-1)
        return nn.functional.silu(gate) * value


class BiasFreeOutput(EsmOutput):
    """Stock ``EsmOutput`` whose projection follows ``add_bias_fnn`` (no bias in NT v2)."""

    def __init__(self, config: EsmConfig) -> None:
        super().__init__(config)
        bias = bool(getattr(config, "add_bias_fnn", False))
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size, bias=bias)


def _install_swiglu(model: EsmForSequenceClassification | EsmForMaskedLM) -> None:
    """Swap each layer's feed-forward for NT v2's and initialise only the new modules
    (``post_init`` skips modules it has already initialised)."""
    for layer in model.esm.encoder.layer:
        layer.intermediate = SwiGLUIntermediate(model.config)
        layer.output = BiasFreeOutput(model.config)
    model.post_init()


class NTv2ForSequenceClassification(EsmForSequenceClassification):
    def __init__(self, config: EsmConfig) -> None:
        super().__init__(config)
        _install_swiglu(self)


class NTv2ForMaskedLM(EsmForMaskedLM):
    def __init__(self, config: EsmConfig) -> None:
        super().__init__(config)
        _install_swiglu(self)


def _classifier_class(layout: str) -> type[EsmForSequenceClassification]:
    return NTv2ForSequenceClassification if layout == "v2" else EsmForSequenceClassification


def build_model(
    preset: str, num_labels: int, device: str | torch.device = "cpu", seed: int | None = None
) -> EsmForSequenceClassification:
    """A randomly initialised sequence classifier of ``preset``, built directly on ``device``
    so the large presets never materialise a CPU copy first."""
    spec = PRESETS[preset]
    if seed is not None:
        torch.manual_seed(seed)
    with torch.device(device):
        model = _classifier_class(spec.layout)(spec.config(num_labels))
    return model


def load_local_weights(
    directory: str | Path, num_labels: int, device: str | torch.device = "cpu"
) -> tuple[EsmForSequenceClassification, str]:
    """Load a local Hugging Face NT checkpoint (``config.json`` + safetensors) and say which
    tokenizer layout its vocabulary needs.

    The config is read as plain JSON rather than through ``AutoConfig`` because NT v2
    checkpoints name remote code in ``auto_map`` and have no ``model_type``; running that
    code is exactly what this loader avoids. The v2 feed-forward is recognised by the
    ``add_bias_fnn`` key that only NT v2 configs carry.
    """
    path = Path(directory)
    raw = json.loads((path / "config.json").read_text())
    fields = {key: raw[key] for key in ARCHITECTURE_KEYS if key in raw}
    vocab = fields.get("vocab_size")
    layout = next((name for name, spec in LAYOUTS.items() if spec.vocab_size == vocab), None)
    if layout is None:
        raise ValueError(f"{path}: vocab_size {vocab} is neither NT v1 (4105) nor NT v2 (4107)")
    fields["num_labels"] = num_labels
    config = EsmConfig(**fields, attn_implementation=ATTENTION)
    model_class = NTv2ForSequenceClassification if "add_bias_fnn" in raw else EsmForSequenceClassification
    model = model_class.from_pretrained(
        path,
        config=config,
        local_files_only=True,
        use_safetensors=True,
        dtype=torch.float32,
        attn_implementation=ATTENTION,
    )
    return model.to(device), layout


def parameter_count(preset: str, with_mlm_head: bool) -> int:
    """Parameters of ``preset`` as published (with the MLM head) or of its bare encoder,
    counted on the meta device so even the 2.5B preset allocates nothing."""
    spec = PRESETS[preset]
    config = spec.config()
    with torch.device("meta"):
        if with_mlm_head:
            model: nn.Module = (NTv2ForMaskedLM if spec.layout == "v2" else EsmForMaskedLM)(config)
        else:
            model = _classifier_class(spec.layout)(config).esm
    return sum(parameter.numel() for parameter in model.parameters())


def matmul_parameters(model: EsmForSequenceClassification) -> int:
    """Weights of the encoder's linear layers: the ones every token is multiplied by,
    which is what the FLOP estimate counts (embeddings are lookups, the head sees one token)."""
    return sum(module.weight.numel() for module in model.esm.encoder.modules() if isinstance(module, nn.Linear))


def apply_ia3(model: EsmForSequenceClassification) -> PeftModel:
    """Wrap ``model`` with IA3 (PEFT has no ESM default, hence the explicit patterns);
    everything but the IA3 vectors and the classification head is frozen."""
    config = IA3Config(
        task_type=TaskType.SEQ_CLS,
        target_modules=IA3_TARGET_MODULES,
        feedforward_modules=IA3_FEEDFORWARD_MODULES,
        modules_to_save=[CLASSIFIER],
    )
    with warnings.catch_warnings():
        # PEFT still calls transformers' deprecated is_gradient_checkpointing; not ours to fix.
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        return get_peft_model(model, config)
