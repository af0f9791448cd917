"""DeepSeek-V3, the course's running model: config, activation bytes, FLOPs.

Everything here is computed from the config (arXiv 2412.19437 and its
reference MLA forward), for one 128K sequence, batch 1, bf16; figures
check the results against the page in their own builders. GiB = 2**30 B.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30
TIB = 2**40
BF16, FP32 = 2, 4

SEQ = 131_072  # 128K tokens
HIDDEN = 7168
Q_LORA = 1536
KV_LORA = 512
ROPE = 64
HEADS = 128
QK_HEAD = 192  # 128 nope + 64 rope
V_HEAD = 128
ROUTED_EXPERTS = 256
TOP_K = 8
SHARED_EXPERTS = 1
EXPERT_FFN = 2048
DENSE_FFN = 18_432
LAYERS = 61
DENSE_LAYERS = 3
MOE_LAYERS = LAYERS - DENSE_LAYERS
VOCAB = 129_280
TOTAL_PARAMS = 671e9
ACTIVE_PARAMS = 37e9

COPIES = TOP_K + SHARED_EXPERTS  # 「9 份」: each token goes to 8 routed + 1 shared expert


# How forward makes a kept tensor, which is what recomputing it costs
# (tools.models.recompute): a matmul from an input k wide, attention's core,
# a copy, an elementwise op, or nothing (the layer's entry is the save point).
ENTRY, RESIDUAL, COPY, NORM, SWIGLU, MATMUL, ATTENTION = (
    "entry",
    "residual",
    "copy",
    "norm",
    "swiglu",
    "matmul",
    "attention",
)


@dataclass(frozen=True)
class Tensor:
    """One tensor forward makes and backward needs: per token `width` numbers of `nbytes`,
    made by `op` (a matmul's input is `k` wide)."""

    name: str
    width: int
    op: str
    k: int = 0
    nbytes: int = BF16

    @property
    def gib(self) -> float:
        return SEQ * self.width * self.nbytes / GIB


# One MoE layer's kept tensors, each once; the tables below group them the page's way.
ATTN_NORM_IN = Tensor("attention 的 norm 输入", HIDDEN, ENTRY)
ATTN_NORM_OUT = Tensor("attention 的 norm 输出", HIDDEN, NORM)
Q_DOWN = Tensor("Q 降维", Q_LORA, MATMUL, k=HIDDEN)
Q_DOWN_NORMED = Tensor("Q 降维后 norm", Q_LORA, NORM)
KV_DOWN = Tensor("KV 降维（含 RoPE）", KV_LORA + ROPE, MATMUL, k=HIDDEN)
KV_DOWN_NORMED = Tensor("KV 降维后 norm", KV_LORA, NORM)
Q_UP = Tensor("Q 展开", HEADS * QK_HEAD, MATMUL, k=Q_LORA)
KV_UP = Tensor("K/V 解压", HEADS * (QK_HEAD - ROPE + V_HEAD), MATMUL, k=KV_LORA)
ATTN_OUT = Tensor("attention 输出", HEADS * V_HEAD, ATTENTION)
LOGSUMEXP = Tensor("logsumexp", HEADS, ATTENTION, nbytes=FP32)
FFN_NORM_IN = Tensor("FFN 的 norm 输入", HIDDEN, RESIDUAL)
FFN_NORM_OUT = Tensor("FFN 的 norm 输出", HIDDEN, NORM)
ROUTER = Tensor("路由分数", ROUTED_EXPERTS, MATMUL, k=HIDDEN)
DISPATCHED = Tensor("MoE 派发", COPIES * HIDDEN, COPY)
GATE = Tensor("gate", COPIES * EXPERT_FFN, MATMUL, k=HIDDEN)
UP = Tensor("up", COPIES * EXPERT_FFN, MATMUL, k=HIDDEN)
SWIGLU_PRODUCT = Tensor("SwiGLU 乘积", COPIES * EXPERT_FFN, SWIGLU)
EXPERT_OUT = Tensor("专家输出", COPIES * HIDDEN, MATMUL, k=EXPERT_FFN)
# The attention output projection makes the residual, not a kept tensor; the FLOP check needs it.
O_PROJ = (HEADS * V_HEAD, HIDDEN)


@dataclass(frozen=True)
class Kept:
    """One row of the page's activation tables: tensors a layer keeps for backward."""

    label: str
    parts: tuple[Tensor, ...]

    @property
    def width(self) -> int:
        return sum(t.width for t in self.parts)

    @property
    def nbytes(self) -> int:
        return self.parts[0].nbytes

    @property
    def gib(self) -> float:
        return sum(t.gib for t in self.parts)


ATTENTION_KEPT = (
    Kept("norm 的输入", (ATTN_NORM_IN,)),
    Kept("norm 的输出", (ATTN_NORM_OUT,)),
    Kept("Q 降维结果", (Q_DOWN, Q_DOWN_NORMED)),
    Kept("KV 降维结果", (KV_DOWN, KV_DOWN_NORMED)),
    Kept("Q 展开后", (Q_UP,)),
    Kept("K、V 解压后", (KV_UP,)),
    Kept("attention 输出", (ATTN_OUT,)),
    Kept("logsumexp", (LOGSUMEXP,)),
)

MOE_KEPT = (
    Kept("norm 的输入 / 输出", (FFN_NORM_IN, FFN_NORM_OUT)),
    Kept("路由分数", (ROUTER,)),
    Kept("派发出去的激活", (DISPATCHED,)),
    Kept("gate / up / SwiGLU 乘积", (GATE, UP, SWIGLU_PRODUCT)),
    Kept("专家输出（合并前）", (EXPERT_OUT,)),
)

# The page's dense block (约 40 GiB) is reproduced by attention + norms +
# gate/up/product at 18,432, without the FFN output (docs/figures.md#selective_recompute_table).
DENSE_FFN_KEPT = (
    Kept("norm 的输入 / 输出", (FFN_NORM_IN, FFN_NORM_OUT)),
    Kept(
        "gate / up / 乘积",
        (
            Tensor("dense gate", DENSE_FFN, MATMUL, k=HIDDEN),
            Tensor("dense up", DENSE_FFN, MATMUL, k=HIDDEN),
            Tensor("dense 乘积", DENSE_FFN, SWIGLU),
        ),
    ),
)


def moe_layer_tensors() -> tuple[Tensor, ...]:
    """Every tensor one MoE layer keeps, in forward order."""
    return tuple(t for kept in ATTENTION_KEPT + MOE_KEPT for t in kept.parts)


def subtotal(kept: tuple[Kept, ...]) -> float:
    return sum(k.gib for k in kept)


def moe_layer_gib() -> float:
    return subtotal(ATTENTION_KEPT) + subtotal(MOE_KEPT)


def dense_layer_gib() -> float:
    return subtotal(ATTENTION_KEPT) + subtotal(DENSE_FFN_KEPT)


def keep_all_gib() -> float:
    """Activations kept by the whole model for one sequence, no recompute."""
    return MOE_LAYERS * moe_layer_gib() + DENSE_LAYERS * dense_layer_gib()


def layer_entry_gib() -> float:
    """One layer's residual entry, the only tensor full recompute keeps."""
    return ATTN_NORM_IN.gib


def full_recompute_gib() -> float:
    """Each layer keeps only its entry (the page's convention; derived_numbers_appendix adds one back)."""
    return LAYERS * layer_entry_gib()


# -- FLOPs, forward, one sequence ------------------------------------------------


def attention_weights() -> int:
    q = HIDDEN * Q_LORA + Q_LORA * HEADS * QK_HEAD
    kv = HIDDEN * (KV_LORA + ROPE) + KV_LORA * HEADS * (QK_HEAD - ROPE + V_HEAD)
    out = HEADS * V_HEAD * HIDDEN
    return q + kv + out


def moe_active_weights() -> int:
    """Weights one token touches in a MoE layer: attention, router, 9 experts."""
    return attention_weights() + HIDDEN * ROUTED_EXPERTS + COPIES * 3 * HIDDEN * EXPERT_FFN


def dense_weights() -> int:
    return attention_weights() + 3 * HIDDEN * DENSE_FFN


def moe_layer_weights() -> int:
    """All weights of a MoE layer (every expert, not just the 9 a token visits)."""
    experts = (ROUTED_EXPERTS + SHARED_EXPERTS) * 3 * HIDDEN * EXPERT_FFN
    return attention_weights() + HIDDEN * ROUTED_EXPERTS + experts


def embedding_weights() -> int:
    """The token embedding; the output head (untied) is as large."""
    return VOCAB * HIDDEN


def total_weights() -> int:
    """Every weight matrix of the model (norm scales, about a million, left out)."""
    return MOE_LAYERS * moe_layer_weights() + DENSE_LAYERS * dense_weights() + 2 * embedding_weights()


def linear_flops(weights: int) -> float:
    return 2.0 * SEQ * weights


def attention_core_flops() -> float:
    """QKᵀ and AV with causal halving: heads · S² · (d_qk + d_v). No weights."""
    return HEADS * SEQ**2 * (QK_HEAD + V_HEAD)


def moe_layer_forward_flops() -> float:
    return linear_flops(moe_active_weights()) + attention_core_flops()


def dense_layer_forward_flops() -> float:
    return linear_flops(dense_weights()) + attention_core_flops()


def lm_head_flops() -> float:
    return linear_flops(HIDDEN * VOCAB)


def step_flops_per_operator() -> float:
    """Forward + backward (3 passes) of one sequence, summed operator by operator."""
    forward = MOE_LAYERS * moe_layer_forward_flops() + DENSE_LAYERS * dense_layer_forward_flops() + lm_head_flops()
    return 3 * forward


def six_nd_flops() -> float:
    """6 · active parameters · tokens: counts weights only."""
    return 6 * ACTIVE_PARAMS * SEQ
