"""Dense GPT-3-family transformers (arXiv 2005.14165 Table 2.1): parameters,
the activations a layer keeps, and attention's share of a layer's FLOPs.

Widths are per token; a layer's MLP is 4× the model width. bf16 = 2 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

BF16 = 2
GIB = 2**30
KIB = 2**10
PER_LAYER = 12  # weights per layer in units of d²: attention q, k, v, o (4) + MLP up and down (8)

# What one layer keeps for backward, per token, in multiples of the width (activation_mountain).
KEPT = (
    ("两个 norm 的输出", 2),
    ("Q / K / V", 3),
    ("attention 输出", 1),
    ("MLP 第一层输出", 4),
    ("激活函数的输出", 4),
    ("MLP 第二层输出", 1),
)


@dataclass(frozen=True)
class Gpt:
    layers: int
    width: int
    vocab: int = 50_257
    context: int = 2_048

    def params(self) -> int:
        """12·L·d² + token and position embeddings (biases and norms, about 0.1%, left out)."""
        return PER_LAYER * self.layers * self.width**2 + self.vocab * self.width + self.context * self.width

    def kept_widths(self) -> list[tuple[str, int]]:
        return [(label, share * self.width) for label, share in KEPT]

    def kept_per_layer(self) -> int:
        """Numbers one layer keeps per token."""
        return sum(w for _label, w in self.kept_widths())

    def keep_all_bytes(self, tokens: int) -> int:
        return self.layers * self.kept_per_layer() * BF16 * tokens

    def full_recompute_bytes(self, tokens: int) -> int:
        """Each layer keeps its entry; the layer being recomputed keeps everything."""
        return (self.layers * self.width + self.kept_per_layer()) * BF16 * tokens

    def attention_share(self, seq: int) -> float:
        """Attention's QKᵀ and AV (causal: half the square) in one layer's forward FLOPs."""
        core = 2 * seq**2 * self.width  # heads · S²/2 · (d_head + d_head) · 2, heads · d_head = d
        linear = 2 * seq * PER_LAYER * self.width**2
        return core / (core + linear)


GPT3_SMALL = Gpt(layers=12, width=768)
GPT3_175B = Gpt(layers=96, width=12_288)
