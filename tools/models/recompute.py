"""Recomputation: drop a tensor after forward, make it again in backward.

What that costs, per byte it frees, is the one number the page ranks by.
Two routes give it: the shapes (a ``[S,k]×[k,n]`` matmul costs 2·S·k·n
FLOPs and makes S·n·2 bytes; attention's core costs heads·S²·(d_qk+d_v)
with the causal half) and the closed form (a linear output costs k per
byte; attention's cost per byte is S·(d_qk+d_v)/(2·d_v), a line in S).
Also here: the passes of a step, and √L checkpointing's count L/k + k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tools.models import gradients, v3

# A step is forward + backward = 3 forward passes (backward is two matmuls per
# forward one, layer_two_matmuls); full recompute replays the forward once more.
STEP_PASSES = 3
REPLAY_PASSES = 1

# FLOPs per element of the elementwise ops (nominal: the page writes 0.01 TFLOP
# for both rows, and the ranking only needs them to be near 0 per byte).
# RMSNorm: square, sum, scale by 1/rms, scale by the weight. SwiGLU: exp, add,
# divide (the sigmoid), times gate, times up.
ELEMENTWISE_FLOPS = {v3.NORM: 4, v3.SWIGLU: 5}
CAUSAL = 0.5  # a causal mask keeps (about) half of the S×S scores


@dataclass(frozen=True)
class Attention:
    """Attention's core (QKᵀ, softmax, ·V) for one layer: no weights, S² work."""

    heads: int
    d_qk: int
    d_v: int
    causal: float = CAUSAL

    def flops(self, seq: int) -> float:
        """By the shapes: QKᵀ is [S,d_qk]×[d_qk,S], AV is [S,S]×[S,d_v], per head, times the causal share."""
        per_head = 2 * seq * self.d_qk * seq + 2 * seq * seq * self.d_v
        return self.heads * per_head * self.causal

    def output_bytes(self, seq: int, nbytes: int = v3.BF16) -> float:
        return seq * self.heads * self.d_v * nbytes

    def slope(self, nbytes: int = v3.BF16) -> float:
        """Closed form: FLOPs per byte saved grow as slope · S, slope = (d_qk+d_v)/(2·d_v) in bf16, causal."""
        return 2 * self.causal * (self.d_qk + self.d_v) / (nbytes * self.d_v)


V3_ATTENTION = Attention(v3.HEADS, v3.QK_HEAD, v3.V_HEAD)
GPT3_HEADS, GPT3_HEAD = 96, 128  # GPT-3 175B, arXiv 2005.14165 Table 2.1: standard MHA, d_qk = d_v
GPT3_ATTENTION = Attention(GPT3_HEADS, GPT3_HEAD, GPT3_HEAD)


def causal_share(seq: int) -> float:
    """The share of the S×S scores a real causal mask keeps: (S + 1)/(2S), half as S grows."""
    mask = np.tril(np.ones((seq, seq), dtype=bool))
    return float(mask.sum()) / seq**2


def linear_cost_per_byte(k: int, nbytes: int = v3.BF16) -> float:
    """Closed form for a linear output: 2·S·k·n FLOPs over S·n·nbytes bytes = k in bf16."""
    return 2 * k / nbytes


def counted_linear_cost_per_byte(tokens: int, k: int, n: int, rng: np.random.Generator) -> tuple[int, int]:
    """Do one [tokens,k]×[k,n] matmul and count: (FLOPs the tape counted, bytes of its bf16 output)."""
    tape = gradients.Tape()
    out = gradients.linear_forward(rng.standard_normal((tokens, k)), rng.standard_normal((k, n)), tape)
    return tape.flops, out.size * v3.BF16


def recompute_flops(tensor: v3.Tensor, seq: int = v3.SEQ, attention: Attention = V3_ATTENTION) -> float:
    """Route 1, the shapes: the FLOPs forward spends making `tensor` again."""
    if tensor.op == v3.MATMUL:
        return 2.0 * seq * tensor.k * tensor.width
    if tensor.op in ELEMENTWISE_FLOPS:
        return ELEMENTWISE_FLOPS[tensor.op] * seq * tensor.width
    if tensor.op == v3.COPY:
        return 0.0
    if tensor.op == v3.ATTENTION:
        return attention.flops(seq)
    raise ValueError(f"'{tensor.name}' ({tensor.op}) is not recomputed: it is what recomputation starts from")


def cost_per_byte(tensor: v3.Tensor, seq: int = v3.SEQ, attention: Attention = V3_ATTENTION) -> float:
    """Route 2, the closed form: FLOPs per byte of `tensor` that recomputing it frees."""
    if tensor.op == v3.MATMUL:
        return linear_cost_per_byte(tensor.k, tensor.nbytes)
    if tensor.op in ELEMENTWISE_FLOPS:
        return ELEMENTWISE_FLOPS[tensor.op] / tensor.nbytes
    if tensor.op == v3.COPY:
        return 0.0
    if tensor.op == v3.ATTENTION:
        return attention.slope(tensor.nbytes) * seq
    raise ValueError(f"'{tensor.name}' ({tensor.op}) is not recomputed: it is what recomputation starts from")


@dataclass(frozen=True)
class Candidate:
    """One row of the ranking: tensors dropped together, what they free and what they cost."""

    label: str
    parts: tuple[v3.Tensor, ...]
    seq: int = v3.SEQ
    attention: Attention = V3_ATTENTION

    @property
    def gib(self) -> float:
        return sum(t.gib for t in self.parts)

    @property
    def tflop(self) -> float:
        """By the shapes."""
        return sum(recompute_flops(t, self.seq, self.attention) for t in self.parts) / 1e12

    @property
    def tflop_closed_form(self) -> float:
        """Cost per byte × bytes, tensor by tensor."""
        return sum(cost_per_byte(t, self.seq, self.attention) * t.gib * v3.GIB for t in self.parts) / 1e12

    @property
    def per_gib(self) -> float:
        """TFLOP paid per GiB saved: the ranking key."""
        return self.tflop / self.gib


def ranked(candidates: tuple[Candidate, ...]) -> list[Candidate]:
    """Cheapest per GiB first."""
    return sorted(candidates, key=lambda c: c.per_gib)


def present(layers: float, k: float) -> float:
    """√L checkpointing: L/k checkpoints kept, plus the k layers of the segment being recomputed."""
    return layers / k + k


def best_integer_k(layers: int) -> int:
    """The whole number of layers per segment that keeps the fewest present (searched, not solved)."""
    return min(range(1, layers + 1), key=lambda k: present(layers, k))


def layer_forward_share(attention: Attention, seq: int, linear_weights: int) -> float:
    """Attention core's share of one layer's forward FLOPs, against its linear layers' 2·S·weights."""
    core = attention.flops(seq)
    return core / (core + 2.0 * seq * linear_weights)
