"""The per-parameter byte ledger: which cells hang on every parameter.

A ledger is a tuple of :class:`Cell`; a cell's size follows from its
precision. The classic mixed-precision AdamW row (ZeRO, arXiv 1910.02054
§3: 2Ψ + 2Ψ + 12Ψ) is :data:`MIXED_ADAMW`. Variants are made from it by
the three moves the ledger chapter makes (optimizer_bytes_table): :func:`drop` a cell, :func:`factor` it into a
row + a column, or store it in another precision with :func:`store_as`.
The ledger chapter turns a row into a fact (``tools.chapters.ledger.row_fact``),
and ``scenes.widgets.LedgerRow`` draws it, each cell as wide as its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1}


class LedgerError(ValueError):
    """A move the ledger cannot make, e.g. factoring a cell that was dropped."""


@dataclass(frozen=True)
class Cell:
    key: str  # weight, grad, m, v, master
    label: str  # the course's term, shown in the cell
    precision: str  # a key of BYTES
    short: str = ""  # a shorter label for a narrow cell
    factored: bool = False  # stored as a row + a column (Adafactor): about 0 bytes per parameter

    @property
    def nbytes(self) -> int:
        return 0 if self.factored else BYTES[self.precision]


WEIGHT = Cell("weight", "权重", "bf16")
GRAD = Cell("grad", "梯度", "bf16")
MOMENTUM = Cell("m", "动量 m", "fp32", short="m")
SECOND_MOMENT = Cell("v", "二阶矩 v", "fp32", short="v")
MASTER = Cell("master", "主权重", "fp32")

MIXED_ADAMW = (WEIGHT, GRAD, MOMENTUM, SECOND_MOMENT, MASTER)
PURE_FP32 = (replace(WEIGHT, precision="fp32"), replace(GRAD, precision="fp32"), MOMENTUM, SECOND_MOMENT)
OPTIMIZER_SIDE = ("m", "v", "master")
# What only a parameter that gets updated needs (lora_ledger: 14 of the 16 bytes).
UPDATE_ONLY = ("grad", *OPTIMIZER_SIDE)


def _find(cells: tuple[Cell, ...], key: str) -> int:
    for index, cell in enumerate(cells):
        if cell.key == key:
            return index
    raise LedgerError(f"no cell '{key}' in the row ({', '.join(c.key for c in cells)})")


def drop(cells: tuple[Cell, ...], key: str) -> tuple[Cell, ...]:
    """The row without one cell (Muon and Lion keep no second moment)."""
    index = _find(cells, key)
    return cells[:index] + cells[index + 1 :]


def factor(cells: tuple[Cell, ...], key: str) -> tuple[Cell, ...]:
    """One cell stored as a row + a column of its matrix (Adafactor's v)."""
    index = _find(cells, key)
    if cells[index].factored:
        raise LedgerError(f"cell '{key}' is already factored")
    return (*cells[:index], replace(cells[index], factored=True), *cells[index + 1 :])


def store_as(cells: tuple[Cell, ...], keys: tuple[str, ...], precision: str) -> tuple[Cell, ...]:
    """The same cells stored in another precision (8-bit Adam: m and v in one byte each)."""
    indices = {_find(cells, key) for key in keys}
    return tuple(replace(c, precision=precision) if i in indices else c for i, c in enumerate(cells))


def factored_bytes(rows: int, cols: int, precision: str = "fp32") -> float:
    """Bytes per parameter of a factored cell: rows + cols numbers for rows × cols parameters."""
    return BYTES[precision] * (rows + cols) / (rows * cols)


def must_save(cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """The cells a checkpoint must hold: those that cannot be rebuilt.

    The gradient is recomputed by the next step; a bf16 weight is its fp32
    master weight rounded, when the row has one.
    """
    rebuilt = {"grad"} | ({"weight"} if any(c.key == "master" for c in cells) else set())
    return tuple(c for c in cells if c.key not in rebuilt)


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
