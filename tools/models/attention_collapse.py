"""Attention collapse done for real: one query over a handful of keys, as the weights grow.

At initialisation q·k/√d has a spread of about 1. As training scales the
query and key projections up by s, every logit grows as s², softmax turns
into a one-hot pick and the weights' entropy falls to 0 (ViT-22B's failure
at about 8B parameters). QK-norm puts a LayerNorm on q and on k before the
dot product; LayerNorm ignores the scale s, so the logits, and the entropy,
stay where they started.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tools.models.gradients import softmax
from tools.models.residual_norm import norm


def entropy_bits(p: np.ndarray) -> float:
    """Shannon entropy in bits; a zero weight contributes nothing (0 · log 0 = 0)."""
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


@dataclass(frozen=True)
class Head:
    """One query and its keys, drawn once from a fixed seed."""

    query: np.ndarray  # (d,)
    keys: np.ndarray  # (n, d)

    @classmethod
    def random(cls, keys: int, dim: int, seed: int) -> Head:
        rng = np.random.default_rng(seed)
        return cls(rng.standard_normal(dim), rng.standard_normal((keys, dim)))

    def logits(self, scale: float, qk_norm: bool) -> np.ndarray:
        """Scaled dot products of the query and keys after both were multiplied by `scale`."""
        q, k = scale * self.query, scale * self.keys
        if qk_norm:
            q, k = norm(q)[0], norm(k)[0]
        return k @ q / np.sqrt(len(q))

    def weights(self, scale: float, qk_norm: bool = False) -> np.ndarray:
        return softmax(self.logits(scale, qk_norm))
