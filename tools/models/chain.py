"""The chain rule's consequences: running products over depth, the sigmoid's
local factor, and the two directions of walking a chain of Jacobians.

Everything is computed by doing it: products by multiplying layer after
layer, the sigmoid's ceiling by sampling, gradients by pushing vectors
through real matrices in both directions.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def running_products(factor: float, links: int) -> list[float]:
    """The product after 0, 1, …, links layers, multiplied one layer at a time."""
    products = [1.0]
    for _ in range(links):
        products.append(products[-1] * factor)
    return products


def first_above(products: list[float], ceiling: float) -> int | None:
    """The first layer whose running product exceeds `ceiling` (None: never)."""
    return next((k for k, p in enumerate(products) if p > ceiling), None)


def first_below(products: list[float], floor: float) -> int | None:
    """The first layer whose running product falls under `floor` (None: never)."""
    return next((k for k, p in enumerate(products) if p < floor), None)


def crossing_layer(factor: float, bound: float) -> int:
    """Closed form of the same crossing: the least k with factor**k beyond bound."""
    return math.floor(math.log(bound) / math.log(factor)) + 1


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


def sigmoid_slope(x):
    """The sigmoid's local factor σ(x)·(1 − σ(x))."""
    s = sigmoid(x)
    return s * (1.0 - s)


def sigmoid_slope_ceiling() -> tuple[float, float]:
    """Closed form: d/dx[σ(1−σ)] = σ(1−σ)(1−2σ) vanishes only at σ = ½, i.e. x = 0."""
    return 0.0, 0.5 * (1.0 - 0.5)


def sampled_ceiling(samples: int, span: float = 10.0) -> tuple[float, float]:
    """The largest σ(1−σ) over `samples` evenly spaced points of [−span, span], and where."""
    xs = np.linspace(-span, span, samples)
    ys = sigmoid_slope(xs)
    best = int(np.argmax(ys))
    return float(xs[best]), float(ys[best])


def random_chain(widths: list[int], seed: int = 0) -> list[np.ndarray]:
    """Jacobians of a chain of layers: widths[0] inputs, widths[-1] outputs."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((out, inp)) for inp, out in itertools.pairwise(widths)]


def forward_mode(jacobians: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """From the inputs: push one direction per input through the whole chain."""
    inputs = jacobians[0].shape[1]
    columns, passes = [], 0
    for i in range(inputs):
        tangent = np.zeros(inputs)
        tangent[i] = 1.0
        for jac in jacobians:
            tangent = jac @ tangent
        columns.append(tangent)
        passes += 1
    return np.stack(columns, axis=1), passes


def reverse_mode(jacobians: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """From the output: pull one direction per output back through the whole chain."""
    outputs = jacobians[-1].shape[0]
    rows, passes = [], 0
    for o in range(outputs):
        cotangent = np.zeros(outputs)
        cotangent[o] = 1.0
        for jac in reversed(jacobians):
            cotangent = cotangent @ jac
        rows.append(cotangent)
        passes += 1
    return np.stack(rows, axis=0), passes
