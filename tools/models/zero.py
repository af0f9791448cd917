"""ZeRO (arXiv 1910.02054): cut the ledger's cells across data-parallel GPUs.

The stages are not listed by hand: they follow from sorting the ledger's
three groups by size (largest first) and by how many phases of a step
touch them (fewest first), then sharding one more group per stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.models import byte_ledger


@dataclass(frozen=True)
class Group:
    label: str
    keys: tuple[str, ...]
    phases: tuple[str, ...]  # the phases of a step that read or write it

    def nbytes(self, cells: tuple[byte_ledger.Cell, ...]) -> int:
        return sum(c.nbytes for c in cells if c.key in self.keys)


GROUPS = (
    Group("参数", ("weight",), ("前向", "反向", "更新")),
    Group("梯度", ("grad",), ("反向", "更新")),
    Group("优化器状态", byte_ledger.OPTIMIZER_SIDE, ("更新",)),
)


def cut_order(cells: tuple[byte_ledger.Cell, ...]) -> list[Group]:
    """Biggest first; among equals, the least used first."""
    return sorted(GROUPS, key=lambda g: (-g.nbytes(cells), len(g.phases)))


def stages(cells: tuple[byte_ledger.Cell, ...]) -> list[tuple[str, ...]]:
    """The sharded cell keys of plain data parallelism and of each ZeRO stage."""
    sharded: tuple[str, ...] = ()
    out = [sharded]
    for group in cut_order(cells):
        sharded = sharded + group.keys
        out.append(sharded)
    return out


def per_gpu_bytes(cells: tuple[byte_ledger.Cell, ...], params: float, gpus: int, sharded: tuple[str, ...]) -> float:
    return params * byte_ledger.sharded_total(cells, gpus, sharded)


def communication(sharded: tuple[str, ...]) -> int:
    """Elements each GPU moves per step, in units of Ψ (ZeRO §7.2): the gradients are
    reduce-scattered once (Ψ); the weights are all-gathered once after the update, or,
    when they are sharded too, before every phase that reads them (forward, backward)."""
    weight = next(g for g in GROUPS if g.keys == ("weight",))
    sharded_weights = "weight" in sharded
    gathers = sum(p != "更新" for p in weight.phases) if sharded_weights else 1
    return 1 + gathers
