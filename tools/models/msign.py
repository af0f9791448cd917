"""Muon's matrix view: msign(M) = UVᵀ, its special cases, the trace it maximises,
the Newton–Schulz iteration that approximates it, and its FLOP overhead.

msign is computed from the SVD; Newton–Schulz is iterated for real. numpy only.
"""

from __future__ import annotations

import numpy as np

# Keller Jordan's quintic Newton–Schulz coefficients (Muon reference code, 2024):
# X ← aX + (bA + cA²)X with A = XXᵀ; tuned to push singular values near 1 fast, not exactly to 1.
NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
NS_STEPS = 5


def msign(m: np.ndarray) -> np.ndarray:
    """UVᵀ from the thin SVD M = UΣVᵀ: keep the directions, set every singular value to 1."""
    u, _s, vt = np.linalg.svd(np.atleast_2d(m), full_matrices=False)
    return u @ vt


def nuclear_norm(m: np.ndarray) -> float:
    """‖M‖_*: the sum of the singular values."""
    return float(np.linalg.svd(m, compute_uv=False).sum())


def spectral_norm(m: np.ndarray) -> float:
    """‖M‖₂: the largest singular value."""
    return float(np.linalg.svd(m, compute_uv=False)[0])


def trace_with(g: np.ndarray, o: np.ndarray) -> float:
    """tr(GᵀO): how far a step O goes along the gradient G (the matrix form of g·d)."""
    return float(np.trace(g.T @ o))


def random_semi_orthogonal(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """A random O with orthonormal columns (all singular values 1, so ‖O‖₂ = 1)."""
    q, r = np.linalg.qr(rng.standard_normal((rows, cols)))
    return q * np.sign(np.diag(r))


def newton_schulz(
    g: np.ndarray, steps: int = NS_STEPS, coefficients: tuple[float, float, float] = NS_COEFFICIENTS
) -> list[np.ndarray]:
    """The iterates X_0 … X_steps of the quintic Newton–Schulz iteration toward msign(G).

    X_0 = G/‖G‖_F puts every singular value at or below 1; each step maps a singular
    value σ to aσ + bσ³ + cσ⁵. Works on the wide orientation, as the reference code does.
    """
    a, b, c = coefficients
    tall = g.shape[0] > g.shape[1]
    x = (g.T if tall else g) / np.linalg.norm(g)
    iterates = [x]
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
        iterates.append(x)
    return [it.T for it in iterates] if tall else iterates


def singular_values(m: np.ndarray) -> np.ndarray:
    return np.linalg.svd(m, compute_uv=False)


def ns_flops(width: int, steps: int = NS_STEPS) -> float:
    """FLOPs of Newton–Schulz on one m×m matrix: per step XXᵀ, A², and (bA + cA²)X, 2m³ each."""
    return steps * 3 * 2 * float(width) ** 3


def step_flops(width: int, batch_tokens: float) -> float:
    """Forward + backward FLOPs of one m×m weight over B tokens: 2m²B forward, twice that backward."""
    return 6 * float(width) ** 2 * batch_tokens


def ns_overhead_closed(width: int, batch_tokens: float, steps: int = NS_STEPS) -> float:
    """The ratio of the two counts above, simplified: T·m/B (Keller Jordan's estimate)."""
    return steps * width / batch_tokens
