"""The fast path's training step: nothing per step on the host, and on CUDA one graph launch.

``DeviceStep`` is one whole training step (batch, forward, loss, backward, fused Adam, loss
record) that takes nothing from the host: a step counter that lives on the device picks the
step's row of the precomputed batch order (also on the device), the batch is gathered from the
tokenised data by index on the device, the loss is written into a device vector at the
counter's position, and the counter advances, all as device operations. Every batch is a set
of rows of one padded id matrix, so every step has the same shapes.

That makes the step capturable: on CUDA, after a few eager steps on a side stream (PyTorch's
rule for capturing a backward: AccumulateGrad and the optimiser's state must exist first),
``capture`` records it once with ``torch.cuda.graph`` and every later call is a single
``CUDAGraph.replay``: one launch instead of the thousands of kernel launches of a 24-layer
forward and backward, which at batch 8 is what bounded the runner on an H200. On a
CPU there is no graph; the same step runs eagerly, which is how the CPU tests prove that the
captured step trains what the plain loop trains.

What capture asks of the step, and how it is met:

* no host synchronisation inside: the loss stays on the device, batches are gathered with
  ``index_select`` on device indices, and transformers skips its mask-content checks while a
  stream is capturing (``is_tracing``);
* static memory: gradients are set to ``None`` before capture so that the captured backward
  assigns them (the graph's pool then holds them) and is never zeroed inside the graph;
* an optimiser whose step counter is a device tensor: Adam with ``capturable=True``
  (``make_optimizer``), fused into one kernel;
* autocast without its weight-cast cache (``cache_enabled=False``), which would otherwise hand a
  replay the casts of the capture.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch

#: Eager steps before capture. One makes the gradients and Adam's state; PyTorch's examples use
#: three on a side stream, and so does the runner (they are real training steps, in the warm-up).
CAPTURE_AFTER_STEPS = 3

Loss = Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor], torch.Tensor]


class DeviceStep:
    """One training step drawn, run and recorded on the device; see the module docstring."""

    def __init__(
        self,
        *,
        ids: torch.Tensor,
        mask: torch.Tensor | None,
        labels: torch.Tensor,
        order: torch.Tensor,
        loss: Loss,
        optimizer: torch.optim.Optimizer,
        losses: torch.Tensor,
    ) -> None:
        self.ids, self.mask, self.labels, self.order = ids, mask, labels, order
        self.loss, self.optimizer, self.losses = loss, optimizer, losses
        self.counter = torch.zeros(1, dtype=torch.long, device=ids.device)
        self.graph: torch.cuda.CUDAGraph | None = None

    def batch(self) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """The current step's batch, gathered on the device."""
        rows = self.order.index_select(0, self.counter).view(-1)
        mask = None if self.mask is None else self.mask.index_select(0, rows)
        return self.ids.index_select(0, rows), mask, self.labels.index_select(0, rows)

    def _step(self) -> None:
        loss = self.loss(*self.batch())
        loss.backward()
        self.optimizer.step()
        self.losses.index_copy_(0, self.counter, loss.detach().view(1))
        self.counter.add_(1)

    def __call__(self) -> None:
        if self.graph is not None:
            self.graph.replay()
            return
        self._step()
        self.optimizer.zero_grad(set_to_none=True)

    def capture(self) -> None:
        """Record the step as a CUDA graph; later calls replay it. Runs nothing: the counter,
        parameters and losses are where the eager steps left them."""
        self.optimizer.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self._step()
        self.graph = graph


@contextlib.contextmanager
def before_capture(device: torch.device, capturing: bool) -> Iterator[None]:
    """Where the eager steps before a capture run: a side stream on CUDA (as
    ``torch.cuda.graph`` requires of the warm-up), the current stream otherwise."""
    if device.type != "cuda" or not capturing:
        yield
        return
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        yield
    torch.cuda.current_stream(device).wait_stream(side)


def capture_step(steps: int, warmup_steps: int) -> int | None:
    """The step at which the step is captured: after the untimed warm-up, and never before
    ``CAPTURE_AFTER_STEPS`` eager steps; ``None`` when the run is too short to replay anything."""
    at = max(warmup_steps, CAPTURE_AFTER_STEPS)
    return at if at < steps else None
