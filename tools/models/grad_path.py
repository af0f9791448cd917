"""What happens to a gradient between backward and the update, as toy models.

Schematic on purpose: time is counted in "one layer's backward" and batch in
"what fills the hardware", so the shapes are real but no scale is claimed
(the page: 没有刻度的曲线是示意).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Interval = tuple[float, float]


@dataclass(frozen=True)
class Timeline:
    backward: list[Interval]  # one per layer, last layer first
    all_reduce: list[Interval]  # one per bucket of layers
    clip: Interval

    @property
    def backward_end(self) -> float:
        return self.backward[-1][1]

    def hidden_share(self) -> float:
        """The share of all-reduce time that runs while backward still computes."""
        total = sum(end - start for start, end in self.all_reduce)
        under = sum(max(0.0, min(end, self.backward_end) - start) for start, end in self.all_reduce)
        return under / total


def backward_timeline(layers: int, bucket: int, comm: float, clip: float) -> Timeline:
    """Backward takes one unit per layer; a bucket's all-reduce starts once its
    layers' gradients exist and the link is free; clipping needs every
    averaged gradient (the global norm), so it waits for the last bucket."""
    backward = [(float(t), float(t + 1)) for t in range(layers)]
    reduces, link_free = [], 0.0
    for first in range(0, layers, bucket):
        ready = float(min(first + bucket, layers))
        start = max(ready, link_free)
        reduces.append((start, start + comm))
        link_free = start + comm
    clip_start = max(backward[-1][1], link_free)
    return Timeline(backward, reduces, (clip_start, clip_start + clip))


def mse_gradient(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Gradient of the mean squared error of a linear model over the rows given."""
    return 2.0 * x.T @ (x @ w - y) / len(y)


def accumulated_gradient(x: np.ndarray, y: np.ndarray, w: np.ndarray, micro: int) -> np.ndarray:
    """The same batch in `micro` equal pieces, one backward each, summed into one accumulator."""
    accumulator = np.zeros_like(w)
    for xs, ys in zip(np.split(x, micro), np.split(y, micro)):
        accumulator += mse_gradient(xs, ys, w) / micro
    return accumulator


def gradient_payload(batch: int, width: int, seed: int = 0) -> int:
    """Bytes one card sends to average a linear layer's gradient, trained on `batch` rows (bf16)."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((batch, width)), rng.standard_normal((batch, width))
    grad = mse_gradient(x, y, rng.standard_normal((width, width)))
    return grad.size * 2


def step_flops(batch: int, width: int) -> float:
    """One forward matmul and two backward ones over `batch` rows of a width × width layer."""
    return 3 * 2.0 * batch * width * width


def compute_time(flops: np.ndarray, capacity: float) -> np.ndarray:
    """Parallel hardware: a step takes one round until the work overflows it, then grows with it."""
    return np.maximum(1.0, np.asarray(flops, dtype=float) / capacity)
