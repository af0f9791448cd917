"""Random matrices as wide layers see them: the μP chapter's first three figures, seeded numpy.

- an N(0, 1/n) matrix (``default_rng(21)``, drawn afresh for each n): its columns' cosines, its columns'
  squared lengths, what it does to the length of 1000 random vectors (``default_rng(22)``), its singular
  values, beside an orthogonal matrix from QR;
- a vector of width 512 (``default_rng(31)``) through 20 square layers (``default_rng(32)``, the same
  standard-normal draws scaled to each variance), linear or with a ReLU before each layer; one rectangular
  layer 512 → 2048 (W from ``default_rng(35)``, x from 33, the backward's g from 34), forward and backward;
- one hidden layer h = W·x (x from ``default_rng(41)``, W from 42, the incoming gradient from 43) and its
  first Adam step, against a random ±η matrix (``default_rng(44)``) of the same size.

Every seed and convention is the one docs/figures.md lists for these figures.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

MATRIX_SEED, VECTOR_SEED = 21, 22
DEPTH_X_SEED, DEPTH_W_SEED = 31, 32
RECT_X_SEED, RECT_G_SEED, RECT_W_SEED = 33, 34, 35
STEP_X_SEED, STEP_W_SEED, STEP_G_SEED, STEP_R_SEED = 41, 42, 43, 44


def rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(values))))


def gaussian(n: int, seed: int = MATRIX_SEED) -> np.ndarray:
    """An n×n matrix of N(0, 1/n) entries."""
    return np.random.default_rng(seed).standard_normal((n, n)) / np.sqrt(n)


@dataclass(frozen=True)
class MatrixStats:
    n: int
    cosine_spread: float  # std of the off-diagonal column cosines × √n (→ 1: cosines shrink like 1/√n)
    length_spread: float  # std of the squared column lengths ÷ √(2/n) (→ 1)
    gain_spread: float  # std of ‖Wx‖/‖x‖ over 1000 random x × √(2n) (→ 1)
    gain_mean: float  # mean of ‖Wx‖/‖x‖ (→ 1)
    singular_values: np.ndarray  # largest first
    cosines: np.ndarray  # the off-diagonal column cosines

    @property
    def near_one(self) -> float:
        """The share of singular values within 1 ± 0.1."""
        s = self.singular_values
        return float(np.mean((s >= 0.9) & (s <= 1.1)))


def matrix_stats(n: int, vectors: int = 1000) -> MatrixStats:
    w = gaussian(n)
    gram = w.T @ w
    lengths = np.sqrt(np.diag(gram))
    cosines = (gram / np.outer(lengths, lengths))[~np.eye(n, dtype=bool)]
    x = np.random.default_rng(VECTOR_SEED).standard_normal((n, vectors))
    gains = np.linalg.norm(w @ x, axis=0) / np.linalg.norm(x, axis=0)
    return MatrixStats(
        n=n,
        cosine_spread=float(cosines.std() * np.sqrt(n)),
        length_spread=float(np.diag(gram).std() / np.sqrt(2 / n)),
        gain_spread=float(gains.std() * np.sqrt(2 * n)),
        gain_mean=float(gains.mean()),
        singular_values=np.linalg.svd(w, compute_uv=False),
        cosines=cosines,
    )


def orthogonal_deviation(n: int) -> float:
    """max |σ − 1| of the orthogonal factor Q of the same N(0, 1/n) matrix (QR): float noise only."""
    q, _ = np.linalg.qr(gaussian(n))
    return float(np.abs(np.linalg.svd(q, compute_uv=False) - 1).max())


def depth_walk(variance: float, layers: int = 20, width: int = 512, relu: bool = False) -> np.ndarray:
    """RMS of the vector after each of `layers` square layers x ← W·x (W·ReLU(x) with `relu`), entries of W
    N(0, variance): index 0 is the input."""
    x = np.random.default_rng(DEPTH_X_SEED).standard_normal(width)
    sizes = [rms(x)]
    for draws in _depth_draws(width, layers):
        x = (draws * np.sqrt(variance)) @ (np.maximum(x, 0) if relu else x)
        sizes.append(rms(x))
    return np.array(sizes)


@functools.cache
def _depth_draws(width: int, layers: int) -> np.ndarray:
    """The standard-normal draws of the square layers, drawn once: every walk scales the same draws."""
    draws = np.random.default_rng(DEPTH_W_SEED).standard_normal((layers, width, width))
    draws.flags.writeable = False
    return draws


def rectangular(variance: float, fan_in: int = 512, fan_out: int = 2048) -> tuple[float, float]:
    """One layer fan_in → fan_out with N(0, variance) entries: RMS(W·x)/RMS(x) forward and
    RMS(Wᵀ·g)/RMS(g) backward."""
    w = np.random.default_rng(RECT_W_SEED).standard_normal((fan_out, fan_in)) * np.sqrt(variance)
    x = np.random.default_rng(RECT_X_SEED).standard_normal(fan_in)
    g = np.random.default_rng(RECT_G_SEED).standard_normal(fan_out)
    return rms(w @ x) / rms(x), rms(w.T @ g) / rms(g)


@dataclass(frozen=True)
class AdamStep:
    n: int
    init: float  # RMS(W·x) at initialisation, W ~ N(0, 1/n)
    update: float  # RMS(ΔW·x) after Adam's first step, ΔW = −η·sign(g)·sign(x)ᵀ
    l1_term: float  # η·‖x‖₁, which every coordinate of ΔW·x equals in size
    coordinate_gap: float  # max over coordinates of | |ΔW·x|_i − η‖x‖₁ | / (η‖x‖₁)
    random: float  # RMS(R·x), R a random ±η matrix


def step_vectors(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The layer's input x and the gradient g arriving at its output h = W·x."""
    return np.random.default_rng(STEP_X_SEED).standard_normal(n), np.random.default_rng(STEP_G_SEED).standard_normal(n)


def adam_step(n: int, lr: float, block: int = 256) -> AdamStep:
    """h = W·x; its weight gradient is the outer product g·xᵀ, and Adam's first step is its sign (see
    `adam_sign_gap`): ΔW = −η·sign(g)·sign(x)ᵀ. Against it, a random ±η matrix R of the same size.

    The n×n matrices are drawn and multiplied `block` rows at a time (the generator fills rows in order, so
    the draws are the same): at n = 4096 a whole matrix is 134 MB and allocating it costs more than the maths.
    """
    x, g = step_vectors(n)
    w_rng, r_rng = np.random.default_rng(STEP_W_SEED), np.random.default_rng(STEP_R_SEED)
    init, moved, random = np.empty(n), np.empty(n), np.empty(n)
    signs = np.sign(x)
    for top in range(0, n, block):
        rows = slice(top, min(top + block, n))
        size = rows.stop - rows.start
        init[rows] = w_rng.standard_normal((size, n)) @ x / np.sqrt(n)
        moved[rows] = (-lr * np.outer(np.sign(g[rows]), signs)) @ x
        r = r_rng.random((size, n))
        r -= 0.5
        np.sign(r, out=r)
        random[rows] = lr * (r @ x)
    term = lr * float(np.abs(x).sum())
    return AdamStep(
        n=n,
        init=rms(init),
        update=rms(moved),
        l1_term=term,
        coordinate_gap=float(np.abs(np.abs(moved) - term).max() / term),
        random=rms(random),
    )


def adam_sign_gap(n: int, floor: float = 1e-6) -> float:
    """Adam's first step from zero moments, bias-corrected (β 0.9 / 0.999, ε 10⁻⁸), on the gradient g·xᵀ:
    max |m̂/(√v̂ + ε) − sign(G)| over the entries with |G| > floor (elsewhere ε is not small beside |G|)."""
    x, g = step_vectors(n)
    grad = np.outer(g, x)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    m_hat = (1 - beta1) * grad / (1 - beta1)
    v_hat = (1 - beta2) * grad * grad / (1 - beta2)
    gap = np.abs(m_hat / (np.sqrt(v_hat) + eps) - np.sign(grad))
    return float(gap[np.abs(grad) > floor].max())


def loglog_slope(widths, values) -> float:
    """The least-squares slope of log value against log width."""
    return float(np.polyfit(np.log(widths), np.log(values), 1)[0])
