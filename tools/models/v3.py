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


@dataclass(frozen=True)
class Kept:
    """One tensor a layer keeps for backward: per token `width` numbers of `nbytes`."""

    label: str
    width: int
    nbytes: int = BF16

    @property
    def gib(self) -> float:
        return SEQ * self.width * self.nbytes / GIB


ATTENTION_KEPT = (
    Kept("norm 的输入", HIDDEN),
    Kept("norm 的输出", HIDDEN),
    Kept("Q 降维结果", 2 * Q_LORA),
    Kept("KV 降维结果", (KV_LORA + ROPE) + KV_LORA),
    Kept("Q 展开后", HEADS * QK_HEAD),
    Kept("K、V 解压后", HEADS * (QK_HEAD - ROPE + V_HEAD)),
    Kept("attention 输出", HEADS * V_HEAD),
    Kept("logsumexp", HEADS, FP32),
)

MOE_KEPT = (
    Kept("norm 的输入 / 输出", 2 * HIDDEN),
    Kept("路由分数", ROUTED_EXPERTS),
    Kept("派发出去的激活", COPIES * HIDDEN),
    Kept("gate / up / SwiGLU 乘积", 3 * COPIES * EXPERT_FFN),
    Kept("专家输出（合并前）", COPIES * HIDDEN),
)

# The page's dense block (约 40 GiB) is reproduced by attention + norms +
# gate/up/product at 18,432, without the FFN output (figures.md D18).
DENSE_FFN_KEPT = (
    Kept("norm 的输入 / 输出", 2 * HIDDEN),
    Kept("gate / up / 乘积", 3 * DENSE_FFN),
)


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
    return Kept("entry", HIDDEN).gib


def full_recompute_gib() -> float:
    """Each layer keeps only its entry (the page's convention, figures.md D9)."""
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
    forward = (MOE_LAYERS * moe_layer_forward_flops() + DENSE_LAYERS * dense_layer_forward_flops()
               + lm_head_flops())
    return 3 * forward


def six_nd_flops() -> float:
    """6 · active parameters · tokens: counts weights only."""
    return 6 * ACTIVE_PARAMS * SEQ
