"""Descent, run for real: the runs and landscapes behind the optimizer pictures.

Every trajectory a figure draws comes from iterating an update rule here;
critical points are solved for (sign changes of the derivative, then
bisection), never typed in. numpy + stdlib only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Fn = Callable[[float], float]


# -- one-dimensional losses ---------------------------------------------
@dataclass(frozen=True)
class Bumpy:
    """L(x) = a·x² + b·cos(c·x): a bowl with ripples (the heavy-ball loss)."""

    a: float
    b: float
    c: float

    def __call__(self, x):
        return self.a * x**2 + self.b * np.cos(self.c * x)

    def grad(self, x):
        return 2 * self.a * x - self.b * self.c * np.sin(self.c * x)

    def curvature(self, x):
        return 2 * self.a - self.b * self.c**2 * np.cos(self.c * x)


@dataclass(frozen=True)
class Quartic:
    """L(x) = p4·x⁴ + p2·x² + p1·x: two valleys of different depth."""

    p4: float
    p2: float
    p1: float

    def __call__(self, x):
        return self.p4 * x**4 + self.p2 * x**2 + self.p1 * x

    def grad(self, x):
        return 4 * self.p4 * x**3 + 2 * self.p2 * x + self.p1

    def curvature(self, x):
        return 12 * self.p4 * x**2 + 2 * self.p2


@dataclass(frozen=True)
class CriticalPoint:
    x: float
    kind: str  # "min" or "max"


def _bisect(f: Fn, lo: float, hi: float, tol: float = 1e-13) -> float:
    f_lo = f(lo)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        f_mid = f(mid)
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def critical_points(loss, lo: float, hi: float, samples: int = 20001) -> list[CriticalPoint]:
    """Zeros of loss.grad on [lo, hi], each refined by bisection and classified by curvature."""
    grid = np.linspace(lo, hi, samples)
    slope = loss.grad(grid)
    found = []
    for i in range(samples - 1):
        if slope[i] == 0 or slope[i] * slope[i + 1] < 0:
            x = grid[i] if slope[i] == 0 else _bisect(lambda t: float(loss.grad(t)), grid[i], grid[i + 1])
            found.append(CriticalPoint(float(x), "min" if loss.curvature(x) > 0 else "max"))
    return found


@dataclass(frozen=True)
class Run:
    """One run of x ← x + v, v ← β·v − η·L′(x): iterates, gradients, moves."""

    xs: np.ndarray  # x_0 … x_n
    grads: np.ndarray  # L′(x_0) … L′(x_{n−1})
    moves: np.ndarray  # v_1 … v_n, v_k = x_k − x_{k−1}


def heavy_ball(grad: Fn, x0: float, lr: float, beta: float, steps: int) -> Run:
    """Polyak's heavy ball; β = 0 is plain gradient descent."""
    xs, grads, moves = [x0], [], []
    x, v = x0, 0.0
    for _ in range(steps):
        g = float(grad(x))
        v = beta * v - lr * g
        x = x + v
        xs.append(x)
        grads.append(g)
        moves.append(v)
    return Run(np.array(xs), np.array(grads), np.array(moves))


def unrolled_move(grads: np.ndarray, lr: float, beta: float) -> float:
    """The last move written as a sum: −η Σ_k β^k g_{t−k} (Li Hongyi's form)."""
    weights = beta ** np.arange(len(grads))
    return float(-lr * np.sum(weights * grads[::-1]))


def route(loss, xs: np.ndarray, per_step: int) -> np.ndarray:
    """Points (x, L(x)) along the curve from iterate to iterate, per_step points each.

    Row k·per_step is iterate k exactly; the rows between follow the curve,
    so a ball moved through them stays on it.
    """
    rows = []
    for a, b in itertools.pairwise(xs):
        for j in range(per_step):
            x = a + (b - a) * j / per_step
            rows.append((x, float(loss(x))))
    rows.append((float(xs[-1]), float(loss(xs[-1]))))
    return np.array(rows)


def settled_after(xs: np.ndarray, within: float) -> int:
    """The first step after which every iterate stays within `within` of the last one."""
    far = np.nonzero(np.abs(xs - xs[-1]) >= within)[0]
    return int(far[-1]) + 1 if len(far) else 0


# -- two-dimensional quadratics -------------------------------------------
def quadratic_descent(curvatures: tuple[float, ...], start: tuple[float, ...], lr: float, steps: int) -> np.ndarray:
    """Gradient descent on f = ½ Σ λ_i x_i²; rows are the iterates x_0 … x_steps."""
    lam = np.array(curvatures, dtype=float)
    x = np.array(start, dtype=float)
    rows = [x.copy()]
    for _ in range(steps):
        x = x - lr * lam * x
        rows.append(x.copy())
    return np.array(rows)


def steps_to_halfway(contraction: float) -> float:
    """Closed form: steps for a coordinate shrinking by `contraction` per step to halve."""
    return math.log(0.5) / math.log(contraction)


def first_step_at_or_below(values: np.ndarray, level: float) -> int:
    below = np.nonzero(values <= level)[0]
    if not len(below):
        raise ValueError(f"never reached {level}")
    return int(below[0])


# -- saddles ---------------------------------------------------------------
@dataclass(frozen=True)
class TwoPeaks:
    """Height of two round hills on the y axis, at ±d; the pass between them is at the origin."""

    d: float
    width: float

    def __call__(self, x, y):
        return np.exp(-(x**2 + (y - self.d) ** 2) / self.width) + np.exp(-(x**2 + (y + self.d) ** 2) / self.width)


def gradient_2d(f: Callable, x: float, y: float, h: float = 1e-5) -> np.ndarray:
    """Central differences."""
    return np.array([(f(x + h, y) - f(x - h, y)) / (2 * h), (f(x, y + h) - f(x, y - h)) / (2 * h)])


def hessian_2d(f: Callable, x: float, y: float, h: float = 1e-4) -> np.ndarray:
    """Central second differences; symmetric 2×2."""
    fxx = (f(x + h, y) - 2 * f(x, y) + f(x - h, y)) / h**2
    fyy = (f(x, y + h) - 2 * f(x, y) + f(x, y - h)) / h**2
    fxy = (f(x + h, y + h) - f(x + h, y - h) - f(x - h, y + h) + f(x - h, y - h)) / (4 * h**2)
    return np.array([[fxx, fxy], [fxy, fyy]])


def contour_loop(
    f: Callable, centre: tuple[float, float], level: float, rays: int = 96, reach: float = 5.0
) -> np.ndarray:
    """A closed level line f = level around a hilltop, found by bisection along rays.

    Valid where the level set is star-shaped about the centre (a single hill
    above the pass height).
    """
    cx, cy = centre
    points = []
    for angle in np.linspace(0, 2 * np.pi, rays, endpoint=False):
        ux, uy = math.cos(angle), math.sin(angle)
        r = _bisect(lambda t, ux=ux, uy=uy: float(f(cx + t * ux, cy + t * uy)) - level, 0.0, reach, tol=1e-9)
        points.append((cx + r * ux, cy + r * uy))
    return np.array(points)


# -- steepest descent under a norm -------------------------------------------
def steepest_on_boundary(grad: np.ndarray, boundary: np.ndarray) -> np.ndarray:
    """The point of a unit ball's boundary along which the loss falls fastest (min g·d)."""
    return boundary[int(np.argmin(boundary @ grad))]


def unit_circle(samples: int) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, samples, endpoint=False)
    return np.stack([np.cos(t), np.sin(t)], axis=1)


def unit_square(samples_per_side: int) -> np.ndarray:
    """The boundary of the max-norm unit ball, corners included."""
    s = np.linspace(-1, 1, samples_per_side + 1)[:-1]
    sides = [
        np.stack([s, -np.ones_like(s)], 1),
        np.stack([np.ones_like(s), s], 1),
        np.stack([-s, np.ones_like(s)], 1),
        np.stack([-np.ones_like(s), -s], 1),
    ]
    return np.concatenate(sides)
