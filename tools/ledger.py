"""The per-parameter byte ledger: which cells hang on every parameter.

A ledger is a tuple of :class:`Cell`; a cell's size follows from its
precision. The classic mixed-precision AdamW row (ZeRO, arXiv 1910.02054
§3: 2Ψ + 2Ψ + 12Ψ) is :data:`MIXED_ADAMW`. Figures turn a ledger into a
``data`` fact with :func:`as_fact`, and ``scenes.style.LedgerRow`` draws
that fact, each cell as wide as its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tools import numbers
from tools.facts import Fact

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1}


@dataclass(frozen=True)
class Cell:
    key: str  # weight, grad, m, v, master
    label: str  # the course's term, shown in the cell
    precision: str  # a key of BYTES

    @property
    def nbytes(self) -> int:
        return BYTES[self.precision]


WEIGHT = Cell("weight", "权重", "bf16")
GRAD = Cell("grad", "梯度", "bf16")
MOMENTUM = Cell("m", "动量 m", "fp32")
SECOND_MOMENT = Cell("v", "二阶矩 v", "fp32")
MASTER = Cell("master", "主权重", "fp32")

MIXED_ADAMW = (WEIGHT, GRAD, MOMENTUM, SECOND_MOMENT, MASTER)
PURE_FP32 = (replace(WEIGHT, precision="fp32"), replace(GRAD, precision="fp32"), MOMENTUM, SECOND_MOMENT)
OPTIMIZER_SIDE = ("m", "v", "master")
# What only a parameter that gets updated needs (page §3, LoRA: 14 of the 16 bytes).
UPDATE_ONLY = ("grad", *OPTIMIZER_SIDE)


def total(cells: tuple[Cell, ...]) -> int:
    return sum(c.nbytes for c in cells)


def optimizer_bytes(cells: tuple[Cell, ...]) -> int:
    return sum(c.nbytes for c in cells if c.key in OPTIMIZER_SIDE)


def frozen(cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """The row of a frozen parameter (LoRA's base): it keeps only what inference keeps."""
    return tuple(c for c in cells if c.key not in UPDATE_ONLY)


def sharded_total(cells: tuple[Cell, ...], devices: int, sharded: tuple[str, ...]) -> float:
    """Bytes per parameter on one of `devices` when the cells in `sharded` are cut evenly across them."""
    return sum(c.nbytes / devices if c.key in sharded else c.nbytes for c in cells)


def as_fact(cells: tuple[Cell, ...]) -> Fact:
    """The row as drawable data: per cell key, label, precision, bytes and its text."""
    rows = [{"key": c.key, "label": c.label, "precision": c.precision, "bytes": c.nbytes,
             "text": f"{c.nbytes} B"} for c in cells]
    return Fact(rows, f"{total(cells)} B", f"{numbers.zh_quantity(str(total(cells)))}字节")
