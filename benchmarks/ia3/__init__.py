"""IA3 fine-tuning benchmark of Nucleotide Transformer models on the NT downstream tasks.

Plain PyTorch, transformers and PEFT with no Django import, so the curation portal's worker
can call ``run`` and the same code runs from a shell as ``python -m benchmarks.ia3``.
"""

from .models import PRESETS, Preset, apply_ia3, build_model, load_local_weights, parameter_count
from .run_types import ConfigError, RunConfig
from .runner import format_summary, run
from .tasks import TASKS, Task, get_task
from .tokenizer import LAYOUTS, split_tokens, tokenize

__all__ = [
    "LAYOUTS",
    "PRESETS",
    "TASKS",
    "ConfigError",
    "Preset",
    "RunConfig",
    "Task",
    "apply_ia3",
    "build_model",
    "format_summary",
    "get_task",
    "load_local_weights",
    "parameter_count",
    "run",
    "split_tokens",
    "tokenize",
]
