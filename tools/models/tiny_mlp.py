"""The page's ruler experiment, our own run of it: a two-layer tanh MLP 8→16→4 trained with
plain minibatch SGD, forward and backward written out in numpy, fixed seeds, 400 steps.

The page gives no data, loss or initialisation (docs/figures.md#weight_update_ratio); ours are a fixed random
tanh teacher with a little label noise, mean squared error, and 1/√fan-in weights.
Each step records ‖ΔW‖/‖W‖ over the two weight matrices: updates, not raw gradients.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SIZES = (8, 16, 4)


@dataclass(frozen=True)
class Task:
    inputs: np.ndarray
    targets: np.ndarray
    params: tuple[np.ndarray, ...]  # W1, b1, W2, b2 at initialisation
    seed: int


def make_task(seed: int = 0, samples: int = 256, noise: float = 0.1) -> Task:
    """Inputs ~ N(0, 1); targets from a random tanh teacher of the same shape, plus noise."""
    n_in, n_hidden, n_out = SIZES
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, n_in))
    teacher_1 = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
    teacher_2 = rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)
    y = np.tanh(x @ teacher_1) @ teacher_2 + noise * rng.standard_normal((samples, n_out))
    params = (
        rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in),
        np.zeros(n_hidden),
        rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden),
        np.zeros(n_out),
    )
    return Task(x, y, params, seed)


def loss_and_grads(params, x: np.ndarray, y: np.ndarray) -> tuple[float, tuple[np.ndarray, ...]]:
    """Mean squared error over the batch (summed over outputs) and its gradient, by hand."""
    w1, b1, w2, b2 = params
    hidden = np.tanh(x @ w1 + b1)
    out = hidden @ w2 + b2
    err = out - y
    loss = float(np.sum(err**2) / len(x))
    d_out = 2 * err / len(x)
    d_hidden = (d_out @ w2.T) * (1 - hidden**2)
    return loss, (x.T @ d_hidden, d_hidden.sum(0), hidden.T @ d_out, d_out.sum(0))


def numeric_grads(params, x: np.ndarray, y: np.ndarray, h: float = 1e-6) -> tuple[np.ndarray, ...]:
    """Central differences of the same loss, one parameter at a time (the check on the hand-written backward)."""
    grads = []
    for i, p in enumerate(params):
        g = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            shifted = [q.copy() for q in params]
            shifted[i][idx] += h
            up = loss_and_grads(shifted, x, y)[0]
            shifted[i][idx] -= 2 * h
            down = loss_and_grads(shifted, x, y)[0]
            g[idx] = (up - down) / (2 * h)
        grads.append(g)
    return tuple(grads)


@dataclass(frozen=True)
class Run:
    lr: float
    ratios: np.ndarray  # ‖ΔW‖/‖W‖ at each step taken
    finite: bool  # the weights stayed finite for every step
    steps: int  # steps taken (fewer than asked when the weights overflowed)


def train(task: Task, lr: float, steps: int = 400, batch: int = 32) -> Run:
    """Minibatch SGD; the batches are the same for every learning rate (their own fixed seed)."""
    picks = _picks(task.seed, len(task.inputs), steps, batch)
    inputs, targets = task.inputs[picks], task.targets[picks]
    params = [p.copy() for p in task.params]
    ratios = []
    with np.errstate(all="ignore"):  # an overflow is an outcome here, not an error
        for step in range(steps):
            _loss, grads = loss_and_grads(params, inputs[step], targets[step])
            updates = [lr * g for g in grads]
            weight_norm = np.sqrt((params[0] ** 2).sum() + (params[2] ** 2).sum())
            update_norm = np.sqrt((updates[0] ** 2).sum() + (updates[2] ** 2).sum())
            params = [p - u for p, u in zip(params, updates)]
            if not all(np.isfinite(p).all() for p in params):
                return Run(lr, np.array(ratios), False, step + 1)
            ratios.append(update_norm / weight_norm)
    return Run(lr, np.array(ratios), True, steps)


@functools.cache
def _picks(seed: int, samples: int, steps: int, batch: int) -> np.ndarray:
    """Every step's minibatch (rows of the task), drawn once: the 70-odd runs of a sweep share them."""
    rng = np.random.default_rng(seed + 1)
    return np.array([rng.choice(samples, batch, replace=False) for _ in range(steps)])


def steady_ratio(run: Run, last: int = 100) -> float:
    """The ratio once training has settled: the geometric mean over the last `last` steps."""
    return float(np.exp(np.mean(np.log(run.ratios[-last:]))))


def sweep(task: Task, lrs: np.ndarray, steps: int = 400) -> list[Run]:
    return [train(task, float(lr), steps) for lr in lrs]


@dataclass(frozen=True)
class Bisection:
    value: float  # the smallest tried value found to fail, within rel_tol of the boundary
    brackets: list[tuple[float, float]]  # (still fine, already fails) after each halving


def bisect_boundary(fails: Callable[[float], bool], fine: float, failing: float, rel_tol: float = 0.01) -> Bisection:
    """The boundary between `fine` and `failing`, halving the bracket in log space until it is rel_tol wide."""
    if fails(fine) or not fails(failing):
        raise ValueError(f"bracket [{fine}, {failing}] does not straddle the boundary")
    brackets = [(fine, failing)]
    while failing / fine > 1 + rel_tol:
        mid = float(np.sqrt(fine * failing))
        if fails(mid):
            failing = mid
        else:
            fine = mid
        brackets.append((fine, failing))
    return Bisection(failing, brackets)
