"""Post-LN against Pre-LN at initialisation: how much of the input x₀ reaches layer l directly.

Post-LN is x_{l+1} = Norm(x_l + F_l(x_l)). Each residual adds a branch F
of unit variance, roughly independent of x at initialisation, so the sum
has variance 2 and Norm divides it by √2; unrolled, x₀ enters layer l
with coefficient 2^(−l/2). Pre-LN is x_{l+1} = x_l + F_l(Norm(x_l)): the
residual stream is never divided, x₀'s coefficient stays 1 and only one
final Norm scales every branch alike.

:func:`run` does it for real, vector by vector: a unit-variance x₀ of width
d through L residual blocks, each a fresh Gaussian linear layer F(x) = W x
with W of variance 1/d, as at initialisation. A Gaussian W drawn
independently of x sends x to a Gaussian vector of variance |x|²/d per
entry, so each block's output is drawn as exactly that, without building
the d × d matrix. x₀'s coefficient is carried through the run: Norm
subtracts the mean (x₀ has none) and divides by the sum's measured
standard deviation, so the coefficient is the product of 1 / that
deviation over the layers. This is the forward residual direct term, not a
gradient multiplier.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def closed_form(layers: np.ndarray) -> np.ndarray:
    """Post-LN: x₀'s coefficient after l layers, 2^(−l/2)."""
    return 2.0 ** (-np.asarray(layers, dtype=float) / 2)


def norm(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LayerNorm of each row (no gain or bias, as at initialisation), and the deviation it divided by."""
    centred = x - x.mean(axis=-1, keepdims=True)
    deviation = np.sqrt((centred**2).mean(axis=-1, keepdims=True))
    return centred / deviation, deviation[..., 0]


def linear_block(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """F(x) = W x for a fresh Gaussian W of variance 1/d, one row of x at a time: N(0, |x|²/d) per entry."""
    scale = np.sqrt((x**2).mean(axis=-1, keepdims=True))
    return scale * rng.standard_normal(x.shape)


@dataclass(frozen=True)
class Run:
    """Per layer 0..L and per run: x₀'s coefficient in the output, the output's variance, and
    the variance of x + F before any Norm (layer 0 has no sum: its entries are NaN)."""

    coefficient: np.ndarray  # (L + 1, runs)
    variance: np.ndarray  # (L + 1, runs)
    sum_variance: np.ndarray  # (L + 1, runs)

    def geometric_mean(self) -> np.ndarray:
        """The coefficient per layer, averaged over runs in log space (it is a product)."""
        return 2.0 ** np.log2(self.coefficient).mean(axis=1)

    def log2_spread(self) -> np.ndarray:
        """The standard deviation of log₂ coefficient across runs, per layer."""
        return np.log2(self.coefficient).std(axis=1)


def run(placement: str, dim: int, layers: int, runs: int, seed: int) -> Run:
    """`runs` independent vectors of width `dim`, each through its own `layers` residual blocks."""
    if placement not in ("post", "pre"):
        raise ValueError(f"placement is 'post' or 'pre', not {placement!r}")
    rng = np.random.default_rng(seed)
    x, _ = norm(rng.standard_normal((runs, dim)))
    coefficient, variance, sums = [np.ones(runs)], [x.var(axis=1)], [np.full(runs, np.nan)]
    for _ in range(layers):
        if placement == "post":
            added = x + linear_block(x, rng)
            x, deviation = norm(added)
            coefficient.append(coefficient[-1] / deviation)
        else:
            added = x = x + linear_block(norm(x)[0], rng)
            coefficient.append(coefficient[-1])  # the stream is added to, never divided
        sums.append(added.var(axis=1))
        variance.append(x.var(axis=1))
    return Run(*(np.array(rows, dtype=float) for rows in (coefficient, variance, sums)))


def predicted_log2_noise(dim: int, layers: np.ndarray, runs: int) -> np.ndarray:
    """The Monte-Carlo's own noise: standard error of the run-averaged log₂ coefficient, per layer.

    After Norm, |x|²/d = 1. One layer's measured variance of x + F is then
    1 + |F|²/d + 2⟨x, F⟩/d, of mean 2: |F|²/d varies by √(2/d), the cross
    term by 2/√d, so the sum by √(6/d), which is √(6/d)/2 relative; the
    deviation varies half as much, √(6/d)/4 relative, i.e. √(6/d)/(4 ln 2)
    in log₂. Independent layers add up as √l; averaging over the runs
    divides by √runs.
    """
    per_layer = np.sqrt(6 / dim) / (4 * np.log(2))
    return per_layer * np.sqrt(np.asarray(layers, dtype=float) / runs)
