"""What a run measures besides the loss: the machine (device, its name, peak memory, library
versions) and the figures (model FLOPs of a step, Matthews correlation)."""

from __future__ import annotations

import contextlib
import math
import platform
import resource
from pathlib import Path

import numpy as np
import peft
import torch
import transformers


def device_for(choice: str) -> torch.device:
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(choice)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def peak_memory(device: torch.device) -> tuple[int, str]:
    """CUDA's allocator peak on a GPU; on a CPU the process's maximum resident set size
    (Linux reports it in KiB), which covers the whole process, not just this run."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device), "cuda_max_allocated"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "max_rss"


def versions() -> dict[str, str | None]:
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "cuda": torch.version.cuda,
    }


def flops_per_step(matmul_params: int, batch_size: int, tokens: int, layers: int, hidden: int) -> int:
    """Model FLOPs of one training step with a frozen base.

    Each matmul weight costs 2 FLOPs per token forward and 2 backward for the gradient of
    its input; the weight gradient is never formed because the weight is frozen, hence 4.
    Attention's two T x T products (QK^T and AV, 2*T*T*d each) cost 4*T^2*d per layer
    forward and twice that backward, since both of their operands need gradients.
    """
    dense = 4 * matmul_params * tokens
    attention = 3 * 4 * layers * tokens * tokens * hidden
    return batch_size * (dense + attention)


def matthews(labels: np.ndarray, predictions: np.ndarray, classes: int) -> float:
    """Multiclass Matthews correlation (Gorodkin's R_K), the NT benchmark's metric."""
    confusion = np.zeros((classes, classes), dtype=np.float64)
    np.add.at(confusion, (labels, predictions), 1)
    total, correct = confusion.sum(), np.trace(confusion)
    true, predicted = confusion.sum(axis=1), confusion.sum(axis=0)
    numerator = correct * total - predicted @ true
    denominator = math.sqrt((total**2 - predicted @ predicted) * (total**2 - true @ true))
    return float(numerator / denominator) if denominator else 0.0
