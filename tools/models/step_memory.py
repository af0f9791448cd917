"""DeepSeek-V3's four memory items over one training step, global totals, no sharding.

Time is counted in forward layer-passes: each layer's forward takes 1, its
backward 2 (one matmul forward, two back: layer_two_matmuls), the optimizer update a
short slot at the end. Per layer, forward adds what the layer keeps
(``tools.models.v3``, keep-all); backward frees it and writes the layer's bf16
gradients. The output head's gradients come first in backward, the
embedding's last; the optimizer's cells are read only in the update,
after which the gradients are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.models import byte_ledger, v3

UPDATE_SLOT = 8.0  # length of the update on the time axis (schematic)


@dataclass(frozen=True)
class Timeline:
    t: list[float]
    weights: list[float]  # TiB
    grads: list[float]
    optimizer: list[float]
    activations: list[float]
    forward_end: float
    backward_end: float
    update_end: float

    def total(self) -> list[float]:
        return [sum(x) for x in zip(self.weights, self.grads, self.optimizer, self.activations)]

    def peak_time(self, item: list[float]) -> float:
        return self.t[max(range(len(item)), key=item.__getitem__)]


def _layers() -> list[tuple[float, int]]:
    """(GiB kept, weights) per layer, in forward order: 3 dense, then 58 MoE."""
    return [(v3.dense_layer_gib(), v3.dense_weights())] * v3.DENSE_LAYERS + [
        (v3.moe_layer_gib(), v3.moe_layer_weights())
    ] * v3.MOE_LAYERS


def step(cells: tuple[byte_ledger.Cell, ...] = byte_ledger.MIXED_ADAMW) -> Timeline:
    grad_bytes = sum(c.nbytes for c in cells if c.key == "grad")
    weight_bytes = sum(c.nbytes for c in cells if c.key == "weight")
    optimizer_bytes = byte_ledger.optimizer_bytes(cells)
    params = v3.total_weights()
    tib = 1 / v3.TIB
    points: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)]  # (t, grads, activations) in bytes

    def add(dt: float, d_grads: float = 0.0, d_act: float = 0.0) -> None:
        t, g, a = points[-1]
        points.append((t + dt, g + d_grads, a + d_act))

    layers = _layers()
    for kept_gib, _weights in layers:
        add(1.0, d_act=kept_gib * v3.GIB)
    forward_end = points[-1][0]
    add(0.0, d_grads=v3.embedding_weights() * grad_bytes)  # output head, first in backward
    for kept_gib, weights in reversed(layers):
        add(2.0, d_grads=weights * grad_bytes, d_act=-kept_gib * v3.GIB)
    add(0.0, d_grads=v3.embedding_weights() * grad_bytes)  # embedding, last in backward
    backward_end = points[-1][0]
    add(UPDATE_SLOT)
    add(0.0, d_grads=-points[-1][1])  # gradients dropped after the update
    update_end = points[-1][0]
    return Timeline(
        t=[p[0] for p in points],
        weights=[params * weight_bytes * tib] * len(points),
        grads=[p[1] * tib for p in points],
        optimizer=[params * optimizer_bytes * tib] * len(points),
        activations=[p[2] * tib for p in points],
        forward_end=forward_end,
        backward_end=backward_end,
        update_end=update_end,
    )
