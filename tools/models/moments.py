"""Running statistics of the gradient, run for real: AdaGrad's sum, RMSProp's and Adam's
moving averages, bias correction, Adam's update RMS, and how long a β remembers.

Each optimizer here is iterated step by step on a gradient sequence; the closed
forms beside them are what the figures check the runs against. numpy only.
"""

from __future__ import annotations

import numpy as np


# -- one denominator, three refinements ---------------------------------------------------
def adagrad_steps(grads: np.ndarray, form: str = "sum") -> np.ndarray:
    """AdaGrad's step per unit learning rate: |g_t| / √(Σ_{s≤t} g_s²) in the original "sum" form.

    The "mean" form divides the sum by t first (a root-mean-square, as some lecture slides
    write it); its step does not shrink for a steady gradient.
    """
    grads = np.asarray(grads, dtype=float)
    total = np.cumsum(grads**2)
    if form == "mean":
        total = total / np.arange(1, len(grads) + 1)
    elif form != "sum":
        raise ValueError(f"AdaGrad form must be 'sum' or 'mean', got {form!r}")
    return np.abs(grads) / np.sqrt(total)


def adam_steps(grads: np.ndarray, beta1: float, beta2: float, correct: tuple[str, ...] = ("m", "v")) -> np.ndarray:
    """|m̂_t| / √v̂_t: Adam's step per unit learning rate, m and v started at 0.

    `correct` names the moments divided by their bias factor (1 − βᵗ); () is no correction.
    β₁ = 0 makes m the gradient itself: that is RMSProp.
    """
    m = v = 0.0
    steps = []
    for t, g in enumerate(np.asarray(grads, dtype=float), 1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t) if "m" in correct else m
        v_hat = v / (1 - beta2**t) if "v" in correct else v
        steps.append(abs(m_hat) / np.sqrt(v_hat))
    return np.array(steps)


def adagrad_closed(t: np.ndarray) -> np.ndarray:
    """Constant gradient: g / √(t·g²) = 1/√t."""
    return 1 / np.sqrt(np.asarray(t, dtype=float))


def rmsprop_uncorrected_closed(t: np.ndarray, beta2: float) -> np.ndarray:
    """Constant gradient, no correction: v_t = (1 − β₂ᵗ)·g², so the step is 1/√(1 − β₂ᵗ)."""
    return 1 / np.sqrt(1 - beta2 ** np.asarray(t, dtype=float))


def adam_uncorrected_closed(t: np.ndarray, beta1: float, beta2: float) -> np.ndarray:
    """Constant gradient, no correction: m_t = (1 − β₁ᵗ)·g, so the step is (1 − β₁ᵗ)/√(1 − β₂ᵗ)."""
    t = np.asarray(t, dtype=float)
    return (1 - beta1**t) / np.sqrt(1 - beta2**t)


# -- Adam's update RMS --------------------------------------------------------------------
def adam_update_rms_closed(beta1: float) -> float:
    """Mean-field: with pure-noise gradients v ≈ σ² and m's variance is σ²(1 − β₁)/(1 + β₁)."""
    return float(np.sqrt((1 - beta1) / (1 + beta1)))


def adam_update_rms_run(
    beta1: float,
    beta2: float,
    params: int,
    steps: int,
    burn_in: int,
    scale: float = 1.0,
    mean: float = 0.0,
    seed: int = 0,
    eps: float = 1e-30,
) -> np.ndarray:
    """Adam (bias-corrected) fed gradients N(mean, 1)·scale: the RMS of its update, per step after burn_in.

    mean = 0 is the closed form's premise (the gradient is mostly noise).
    """
    rng = np.random.default_rng(seed)
    m, v, rms = np.zeros(params), np.zeros(params), []
    for t in range(1, steps + 1):
        g = scale * (mean + rng.standard_normal(params))
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        update = (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps * scale)
        if t > burn_in:
            rms.append(float(np.sqrt(np.mean(update**2))))
    return np.array(rms)


# -- how long a β remembers ----------------------------------------------------------------------
def window(beta: float) -> float:
    """Effective window of a moving average with a fixed β: Σ_k β^k = 1/(1 − β) steps."""
    return 1 / (1 - beta)


def palm_beta2(k: np.ndarray, decay: float = 0.8) -> np.ndarray:
    """PaLM's schedule β₂ = 1 − k^(−decay) at step k (arXiv 2204.02311)."""
    return 1 - np.asarray(k, dtype=float) ** -decay


def ema_weights(betas: np.ndarray) -> np.ndarray:
    """How much each past input counts in the average after the last step, found by running the average.

    Step t does v ← β_t·v + (1 − β_t)·x_t. Weight j is what v ends with when only
    x_j = 1 (an impulse); all impulses run side by side. Index 0 is the first
    input, the last index the newest.
    """
    betas = np.asarray(betas, dtype=float)
    weights = np.zeros(len(betas))
    for t, beta in enumerate(betas):
        weights *= beta
        weights[t] += 1 - beta
    return weights


def ema_window(betas: np.ndarray) -> float:
    """Steps the average remembers after the last of `betas`, found by running it twice: on all
    ones (its total weight) and on a single 1 at the newest step (that step's weight)."""
    betas = np.asarray(betas, dtype=float)
    newest = np.zeros(len(betas))
    newest[-1] = 1.0
    return float(ema_run(np.ones(len(betas)), betas)[-1] / ema_run(newest, betas)[-1])


def ema_run(inputs: np.ndarray, betas: np.ndarray) -> np.ndarray:
    """The average itself, step by step: v_t = β_t·v_{t−1} + (1 − β_t)·x_t, v_0 = 0."""
    v, out = 0.0, np.empty(len(inputs))
    for t, (x, beta) in enumerate(zip(inputs, betas)):
        v = beta * v + (1 - beta) * x
        out[t] = v
    return out
