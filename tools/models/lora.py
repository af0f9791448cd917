"""LoRA (arXiv 2106.09685) on a LLaMA-style model: who carries the 16 bytes.

The base model is frozen: every base weight keeps only its bf16 cell
(:func:`tools.models.byte_ledger.frozen`); the adapters are trained and carry the full
ledger row. LLaMA-7B's shape is from arXiv 2302.13971 Table 2 and its
reference code (SwiGLU width 11,008, untied output head).
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.models import byte_ledger


@dataclass(frozen=True)
class Llama:
    layers: int
    width: int
    ffn: int
    vocab: int

    def params(self) -> int:
        """q, k, v, o; gate, up, down; two RMSNorms per layer; embedding, head, final norm."""
        per_layer = 4 * self.width**2 + 3 * self.width * self.ffn + 2 * self.width
        return self.layers * per_layer + 2 * self.vocab * self.width + self.width


LLAMA_7B = Llama(layers=32, width=4096, ffn=11_008, vocab=32_000)


def adapter_pair(width: int, rank: int) -> int:
    """A (width × rank) and B (rank × width) beside one width × width matrix."""
    return 2 * width * rank


def resident_bytes(frozen: int, trained: int, cells: tuple[byte_ledger.Cell, ...]) -> int:
    """Frozen base weights keep their frozen row; trained parameters the whole row."""
    return frozen * byte_ledger.total(byte_ledger.frozen(cells)) + trained * byte_ledger.total(cells)


def passes(frozen: int, trained: int) -> float:
    """Step compute in forward passes of the model: every weight pays forward 1 and the
    input-gradient matmul 1, only a trained weight the weight-gradient matmul 1 (layer_two_matmuls)."""
    weights = frozen + trained
    return (2 * weights + trained) / weights
