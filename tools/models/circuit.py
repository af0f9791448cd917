"""A tiny computational graph of add / multiply / max gates, run both ways.

Forward evaluates gate by gate; backward walks the gates in reverse and
applies each gate's local rule (add distributes, multiply swaps, max
routes). Finite differences give a second, independent route to the same
gradients.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gate:
    kind: str  # "add", "mul" or "max"
    output: str
    inputs: tuple[str, str]


def _apply(kind: str, x: float, y: float) -> float:
    if kind == "add":
        return x + y
    if kind == "mul":
        return x * y
    if kind == "max":
        return max(x, y)
    raise ValueError(f"unknown gate kind {kind!r}")


def _local_gradients(kind: str, x: float, y: float, upstream: float) -> tuple[float, float]:
    """What each input of one gate receives from the upstream gradient."""
    if kind == "add":  # distributes: both inputs get it unchanged
        return upstream, upstream
    if kind == "mul":  # swaps: each input gets the other input's value
        return upstream * y, upstream * x
    if kind == "max":  # routes: only the larger input gets it
        return (upstream, 0.0) if x >= y else (0.0, upstream)
    raise ValueError(f"unknown gate kind {kind!r}")


def forward(gates: list[Gate], inputs: dict[str, float]) -> dict[str, float]:
    values = dict(inputs)
    for gate in gates:
        values[gate.output] = _apply(gate.kind, *(values[name] for name in gate.inputs))
    return values


def backward(gates: list[Gate], values: dict[str, float]) -> dict[str, float]:
    """Gradients of the last gate's output with respect to every wire."""
    grads = dict.fromkeys(values, 0.0)
    grads[gates[-1].output] = 1.0
    for gate in reversed(gates):
        x, y = (values[name] for name in gate.inputs)
        gx, gy = _local_gradients(gate.kind, x, y, grads[gate.output])
        grads[gate.inputs[0]] += gx
        grads[gate.inputs[1]] += gy
    return grads


def finite_differences(gates: list[Gate], inputs: dict[str, float], h: float = 1e-6) -> dict[str, float]:
    """Central differences of the output, nudging one input at a time."""
    out = gates[-1].output
    grads = {}
    for name in inputs:
        up = forward(gates, {**inputs, name: inputs[name] + h})[out]
        down = forward(gates, {**inputs, name: inputs[name] - h})[out]
        grads[name] = (up - down) / (2 * h)
    return grads
