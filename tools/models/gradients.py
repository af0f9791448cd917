"""Small gradients done for real: softmax + cross-entropy, one linear layer.

The analytic rules (p − y on the logits; upstream × Wᵀ and stored inputᵀ ×
upstream for a linear layer) are computed here, and ``numeric_gradient``
gives a second, independent route by central differences of the loss.
Every matrix product goes through :class:`Tape`, which counts the matmuls
and their FLOPs, so "forward 1 + backward 2" is counted, not asserted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max())
    return shifted / shifted.sum()


def cross_entropy(logits: np.ndarray, target: int) -> float:
    """−ln p(target), the loss of one next-token prediction."""
    return float(-np.log(softmax(logits)[target]))


def cross_entropy_logit_gradient(logits: np.ndarray, target: int) -> np.ndarray:
    """∂L/∂logits = p − y: the prediction minus the one-hot truth."""
    truth = np.zeros_like(logits)
    truth[target] = 1.0
    return softmax(logits) - truth


def numeric_gradient(loss: Callable[[np.ndarray], float], at: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences: nudge one entry at a time, rerun the loss, divide."""
    grad = np.zeros_like(at, dtype=float)
    for index in np.ndindex(at.shape):
        up, down = at.copy(), at.copy()
        up[index] += h
        down[index] -= h
        grad[index] = (loss(up) - loss(down)) / (2 * h)
    return grad


@dataclass
class Tape:
    """Counts matrix products and their FLOPs (2·m·k·n each)."""

    matmuls: int = 0
    flops: int = 0
    log: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise ValueError(f"shapes {a.shape} and {b.shape} do not chain")
        self.matmuls += 1
        self.flops += 2 * m * k * n
        self.log.append((a.shape, b.shape))
        return a @ b


def linear_forward(x: np.ndarray, w: np.ndarray, tape: Tape) -> np.ndarray:
    """Y = X W: one matmul."""
    return tape.matmul(x, w)


def linear_backward(
    upstream: np.ndarray, x_stored: np.ndarray, w: np.ndarray, tape: Tape
) -> tuple[np.ndarray, np.ndarray]:
    """The two matmuls of the way back: ① input gradient, ② weight gradient.

    ① upstream × Wᵀ goes down to the layer below; ② (stored input)ᵀ ×
    upstream is this layer's weight gradient, and needs the forward input.
    """
    grad_input = tape.matmul(upstream, w.T)
    grad_weight = tape.matmul(x_stored.T, upstream)
    return grad_input, grad_weight


def squared_error(y: np.ndarray, target: np.ndarray) -> float:
    """L = ½‖Y − T‖², a loss for the small layer example."""
    return float(0.5 * np.sum((y - target) ** 2))


def squared_error_gradient(y: np.ndarray, target: np.ndarray) -> np.ndarray:
    """∂L/∂Y = Y − T: the upstream sensitivity, one entry per output entry."""
    return y - target
