"""The μP chapter's toy: a 3-layer ReLU MLP 16 → n → n → 1 trained full-batch with Adam, in the standard
parametrization (SP) or in μP, as the `mup` package implements μP for Adam (base width N0 = 32).

The task is ours (docs/figures.md#mup_lr_transfer): 128 inputs x ~ N(0, 1)¹⁶ (``default_rng(5)``), fitted to
a random sine network of width 64 (``default_rng(99)``): t = sin(x·A/√16)·b/√16, with A and b standard normal.
The loss is ½·MSE; Adam has β = 0.9 / 0.999, ε = 10⁻⁸ and bias correction; there are no biases.

The two parametrizations (the student's weights are drawn from ``default_rng(seed)`` as standard normals,
W1, W2, W3 in that order, and only scaled differently):

    weight          SP: init var, lr    μP: init var, multiplier, Adam lr   the `mup` package's rule
    W1 (16 → n)     1/16, η             1/16, 1, η                          vector-like: lr kept (MuAdam)
    W2 (n → n)      1/n, η              1/n, 1, η·N0/n                      matrix-like: lr / width_mult (MuAdam)
    W3 (n → 1)      1/n, η              1/N0, N0/n, η                       MuReadout: input × 1/width_mult

At n = N0 the two are the same model. Tensor Programs V's Table 3 writes the readout rule without a
multiplier (init var ∝ 1/fan_in², Adam lr ∝ 1/fan_in); for Adam the two forms train the same function
(`equivalent_readout`), which is how the package's maintainers explain their table (microsoft/mup issue 7).

A sweep trains one model per learning rate at once, the rates stacked along a first axis, so its matrix
products run as one batched call: the sweeps are this course's heaviest facts. Callers run it with one BLAS
thread (threadpoolctl): for matrices this small two threads are many times slower.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

N0 = 32  # the base width: SP and μP coincide here
INPUTS, SAMPLES, TEACHER_WIDTH = 16, 128, 64
DATA_SEED, TEACHER_SEED = 5, 99
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8
PARAMETRIZATIONS = ("sp", "mup")


@functools.cache
def task() -> tuple[np.ndarray, np.ndarray]:
    """The 128 fixed inputs and their targets from the sine teacher."""
    x = np.random.default_rng(DATA_SEED).standard_normal((SAMPLES, INPUTS))
    rng = np.random.default_rng(TEACHER_SEED)
    a = rng.standard_normal((INPUTS, TEACHER_WIDTH))
    b = rng.standard_normal(TEACHER_WIDTH)
    t = np.sin(x @ a / np.sqrt(INPUTS)) @ b / np.sqrt(INPUTS)
    return x, t.reshape(-1, 1)


@dataclass(frozen=True)
class Model:
    """Weights (each with a leading axis over the learning rates of a sweep), the readout's multiplier and
    each weight's learning-rate factor."""

    weights: tuple[np.ndarray, np.ndarray, np.ndarray]
    multiplier: float
    lr_factors: tuple[float, float, float]


def init(width: int, parametrization: str, seed: int = 0, copies: int = 1) -> Model:
    """The student at initialisation, `copies` identical copies stacked (one per learning rate)."""
    if parametrization not in PARAMETRIZATIONS:
        raise ValueError(f"parametrization must be one of {PARAMETRIZATIONS}, not {parametrization!r}")
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((INPUTS, width)) / np.sqrt(INPUTS)
    w2 = rng.standard_normal((width, width)) / np.sqrt(width)
    w3 = rng.standard_normal((width, 1))
    if parametrization == "sp":
        w3, multiplier, factors = w3 / np.sqrt(width), 1.0, (1.0, 1.0, 1.0)
    else:
        w3, multiplier, factors = w3 / np.sqrt(N0), N0 / width, (1.0, N0 / width, 1.0)
    stack = tuple(np.repeat(w[None], copies, axis=0) for w in (w1, w2, w3))
    return Model(stack, multiplier, factors)


@dataclass(frozen=True)
class Pass:
    """One forward pass: the two hidden layers' pre-activations h = W·x and the output, per copy."""

    h1: np.ndarray
    h2: np.ndarray
    y: np.ndarray
    a1: np.ndarray  # ReLU(h1), ReLU(h2): kept for the backward pass
    a2: np.ndarray


def forward(model: Model, x: np.ndarray) -> Pass:
    w1, w2, w3 = model.weights
    h1 = x @ w1
    a1 = np.maximum(h1, 0)
    h2 = a1 @ w2
    a2 = np.maximum(h2, 0)
    return Pass(h1, h2, (a2 @ w3) * model.multiplier, a1, a2)


def loss(model: Model, x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """½·MSE per copy."""
    return 0.5 * np.mean((forward(model, x).y - t) ** 2, axis=(1, 2))


def gradients(model: Model, x: np.ndarray, t: np.ndarray) -> tuple[Pass, tuple[np.ndarray, ...]]:
    """The forward pass and ∂(½·MSE)/∂W for each weight, by hand."""
    _, w2, w3 = model.weights
    run = forward(model, x)
    dy = (run.y - t) * (model.multiplier / len(x))
    g3 = run.a2.transpose(0, 2, 1) @ dy
    dh2 = dy @ w3.transpose(0, 2, 1)
    dh2 *= run.h2 > 0
    g2 = run.a1.transpose(0, 2, 1) @ dh2
    dh1 = dh2 @ w2.transpose(0, 2, 1)
    dh1 *= run.h1 > 0
    g1 = x.T @ dh1
    return run, (g1, g2, g3)


@dataclass(frozen=True)
class Run:
    """A trained sweep: the final MSE per learning rate, and (if asked) the forward pass before each step
    and after the last."""

    lrs: np.ndarray
    mse: np.ndarray
    passes: list[Pass]


def train(width: int, parametrization: str, lrs, steps: int, seed: int = 0, keep_passes: bool = False) -> Run:
    """Full-batch Adam on the task, one model per learning rate, all from the same initialisation."""
    lrs = np.asarray(lrs, dtype=float)
    return adam(init(width, parametrization, seed, len(lrs)), lrs, steps, keep_passes)


def adam(model: Model, lrs: np.ndarray, steps: int, keep_passes: bool = False) -> Run:
    """`steps` full-batch Adam steps from `model`, copy k at learning rate lrs[k] (times each weight's factor)."""
    x, t = task()
    weights = [w.copy() for w in model.weights]
    first = [np.zeros_like(w) for w in weights]
    second = [np.zeros_like(w) for w in weights]
    rates = [(lrs * factor).reshape(-1, 1, 1) for factor in model.lr_factors]
    passes = []
    for step in range(1, steps + 1):
        run, grads = gradients(Model(tuple(weights), model.multiplier, model.lr_factors), x, t)
        if keep_passes:
            passes.append(run)
        for w, m, v, g, rate in zip(weights, first, second, grads, rates):
            _adam_step(w, m, v, g, rate, step)
    final = forward(Model(tuple(weights), model.multiplier, model.lr_factors), x)
    if keep_passes:
        passes.append(final)
    return Run(lrs, np.mean((final.y - t) ** 2, axis=(1, 2)), passes)


def first_order_loss_change(width: int, parametrization: str, lrs, seed: int = 0) -> list[tuple[float, float]]:
    """One sign step on W2 (Adam's first step) at initialisation, for each learning rate η: the Taylor term
    η'·‖∇W2 L‖₁ (η' = η times the parametrization's factor) and the loss change measured directly,
    L(W) − L(W − η'·sign(∇W2 L))."""
    x, t = task()
    model = init(width, parametrization, seed)
    _, (_, g2, _) = gradients(model, x, t)
    w1, w2, w3 = model.weights
    before = float(loss(model, x, t)[0])
    changes = []
    for lr in lrs:
        eta = lr * model.lr_factors[1]
        stepped = Model((w1, w2 - eta * np.sign(g2), w3), model.multiplier, model.lr_factors)
        changes.append((float(eta * np.abs(g2).sum()), before - float(loss(stepped, x, t)[0])))
    return changes


def _adam_step(w: np.ndarray, m: np.ndarray, v: np.ndarray, g: np.ndarray, rate: np.ndarray, step: int) -> None:
    """One bias-corrected Adam step, in place: w −= rate · m̂ / (√v̂ + ε), with m̂ = m/(1 − β1ᵗ) and
    v̂ = v/(1 − β2ᵗ). In place (g is overwritten) because the sweep's elementwise work is a third of its time."""
    m *= BETA1
    m += (1 - BETA1) * g
    g *= g
    g *= 1 - BETA2
    v *= BETA2
    v += g
    np.divide(v, 1 - BETA2**step, out=g)
    np.sqrt(g, out=g)
    g += EPS
    np.divide(m, g, out=g)
    g *= rate / (1 - BETA1**step)
    w -= g


def equivalent_readout(width: int, lr: float, steps: int, seed: int = 0) -> float:
    """μP's readout in Tensor Programs V's Table 3 form (init var N0/n², Adam lr η·N0/n, no multiplier)
    trained beside the package's form: the largest gap between the two models' outputs after `steps`, relative
    to the largest output (Adam's ε, added to gradients of different sizes in the two forms, is all that differs)."""
    package = init(width, "mup", seed)
    w1, w2, w3 = package.weights
    table = Model((w1, w2, w3 * package.multiplier), 1.0, (1.0, N0 / width, N0 / width))
    lrs = np.array([lr])
    ours = adam(package, lrs, steps, keep_passes=True).passes[-1].y
    theirs = adam(table, lrs, steps, keep_passes=True).passes[-1].y
    return float(np.abs(ours - theirs).max() / np.abs(ours).max())


def l1(values: np.ndarray) -> np.ndarray:
    """The coordinate check's size of a layer: mean |coordinate| per copy (the mup README's l1)."""
    return np.abs(values).mean(axis=tuple(range(1, values.ndim)))


def slope(widths, values) -> float:
    """The least-squares slope of log₂ value against log₂ width."""
    return float(np.polyfit(np.log2(widths), np.log2(values), 1)[0])
