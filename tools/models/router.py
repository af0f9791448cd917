"""One seeded MoE router, followed station by station: route, dispatch, compute, combine, and back.

Sixteen real characters (「每个词元只去两位专家那里做计算。」) each get a 32-number embedding seeded by
the character itself, so a character always gets the same vector; a 32 × 8 router matrix turns each
into 8 logits, one per expert, and every token keeps its top 2. From there the module does what an
MoE layer does with those picks: gates (softmax or V3's sigmoid, normalised among the chosen),
loads, dispatch as a stable sort by expert with its offsets and inverse, the all-to-all's send
counts when experts sit on several cards, a capacity queue that drops what does not fit, and the
gradient the gates hand back to the logits.

A second, larger router runs V3's auxiliary-loss-free balancing (arXiv 2412.19437 §2.1.2): 16
experts, 512 tokens a step whose mean direction skews the router, and a bias per expert that is
nudged by γ after each step and enters only the choice of the top k, never the gates.

Everything here is manim-free numpy; the seeds and sizes are the course's own inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
from threadpoolctl import threadpool_limits

TEXT = "每个词元只去两位专家那里做计算。"
EXPERTS, TOP_K, DIM = 8, 2, 32
EMBED_SEED = 1000  # a character's vector: default_rng(1000 + its code point)
ROUTER_SEED = 20250501


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(z) / Σ exp(z), with the largest logit subtracted first (the result does not change, nothing overflows)."""
    shifted = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def embed(ch: str, dim: int = DIM) -> np.ndarray:
    """A character's embedding: the same character, the same vector."""
    return np.random.default_rng(EMBED_SEED + ord(ch)).standard_normal(dim)


@dataclass(frozen=True)
class Router:
    """The tokens, their embeddings X (T × d), the router matrix W (d × E) and the logits Z = X W."""

    text: str
    x: np.ndarray
    w: np.ndarray
    logits: np.ndarray
    top_k: int

    @property
    def tokens(self) -> int:
        return len(self.text)

    @property
    def experts(self) -> int:
        return self.w.shape[1]


def make(
    text: str = TEXT, experts: int = EXPERTS, dim: int = DIM, top_k: int = TOP_K, seed: int = ROUTER_SEED
) -> Router:
    x = np.array([embed(ch, dim) for ch in text])
    w = np.random.default_rng(seed).standard_normal((dim, experts)) / math.sqrt(dim)
    return Router(text, x, w, x @ w, top_k)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Each row's k highest scores, highest first (a stable sort: a tie goes to the lower expert id)."""
    return np.argsort(-scores, axis=-1, kind="stable")[..., :k]


def gates(scores: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """The chosen experts' scores, normalised to sum to 1 per token (rows in the order of `chosen`)."""
    picked = np.take_along_axis(scores, chosen, axis=-1)
    return picked / picked.sum(axis=-1, keepdims=True)


def loads(chosen: np.ndarray, experts: int) -> np.ndarray:
    """How many picks each expert received."""
    return np.bincount(chosen.ravel(), minlength=experts)


# -- dispatch and combine ------------------------------------------------------------------


@dataclass(frozen=True)
class Dispatch:
    """The T·k picks laid out in token order (token t's choices at t·k … t·k + k − 1), and the buffer
    they are sorted into: `order[j]` is the pick at buffer position j, `offsets[e]` where expert e's
    group starts, `inverse` the permutation that puts the buffer back in token order."""

    token: np.ndarray  # per pick, its token
    expert: np.ndarray  # per pick, its expert
    order: np.ndarray
    offsets: np.ndarray
    inverse: np.ndarray


def dispatch(chosen: np.ndarray, experts: int) -> Dispatch:
    """Dispatch is a stable sort of the picks by expert id; the offsets are the loads' exclusive prefix sum."""
    tokens, k = chosen.shape
    token = np.repeat(np.arange(tokens), k)
    expert = chosen.ravel()
    order = np.argsort(expert, kind="stable")
    counts = np.bincount(expert, minlength=experts)
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return Dispatch(token, expert, order, offsets, inverse)


def combine(buffer_out: np.ndarray, plan: Dispatch, weights: np.ndarray) -> np.ndarray:
    """Put the experts' outputs (in buffer order) back into token order and sum each token's k copies,
    weighted by its gates."""
    tokens, k = weights.shape
    in_token_order = buffer_out[plan.inverse].reshape(tokens, k, -1)
    return np.einsum("tk,tkd->td", weights, in_token_order)


def send_counts(chosen: np.ndarray, cards: int, experts: int) -> np.ndarray:
    """The all-to-all's matrix: [src][dst] picks that card src sends to card dst, with the tokens split
    evenly over the cards in order (token t on card ⌊t / (T/cards)⌋) and the experts too (expert e on
    card ⌊e / (E/cards)⌋)."""
    tokens = chosen.shape[0]
    counts = np.zeros((cards, cards), dtype=int)
    for t, row in enumerate(chosen):
        for e in row:
            counts[t // (tokens // cards), int(e) // (experts // cards)] += 1
    return counts


# -- capacity ------------------------------------------------------------------------------


def capacity(factor: float, tokens: int, k: int, experts: int) -> int:
    """Seats per expert: ⌈CF · T · k / E⌉ (Switch Transformer's rule, with T·k picks for top-k)."""
    return math.ceil(factor * tokens * k / experts)


@dataclass(frozen=True)
class Seating:
    """Who got a seat: `kept[t, r]` for token t's r-th choice; the dropped picks as (token, expert, rank)."""

    capacity: int
    kept: np.ndarray
    dropped: tuple[tuple[int, int, int], ...]
    filled: np.ndarray  # seats taken per expert

    @property
    def empty(self) -> int:
        """Seats that compute padding."""
        return int(self.capacity * self.filled.size - self.filled.sum())


def seat(chosen: np.ndarray, cap: int, experts: int) -> Seating:
    """Fill each expert's seats: all first choices in token order, then all second choices, and so on;
    a pick that finds its expert full is dropped (it passes on through the residual)."""
    tokens, k = chosen.shape
    filled = np.zeros(experts, dtype=int)
    kept = np.zeros((tokens, k), dtype=bool)
    dropped = []
    for r in range(k):
        for t in range(tokens):
            e = int(chosen[t, r])
            if filled[e] < cap:
                filled[e] += 1
                kept[t, r] = True
            else:
                dropped.append((t, e, r))
    return Seating(cap, kept, tuple(dropped), filled)


# -- the gates' gradient -------------------------------------------------------------------


def logit_grad_renormalised(z: np.ndarray, chosen: np.ndarray, dl_dg: np.ndarray) -> np.ndarray:
    """dL/dz when the gates are softmax(z) renormalised over the chosen set S: g = softmax(z_S), so
    dL/dz_j = g_j (∂L/∂g_j − Σ_i g_i ∂L/∂g_i) for j in S, and 0 for every other expert."""
    g = softmax(z[chosen])
    grad = np.zeros_like(z)
    grad[chosen] = g * (dl_dg - g @ dl_dg)
    return grad


def logit_grad_softmax(z: np.ndarray, chosen: np.ndarray, dl_dg: np.ndarray) -> np.ndarray:
    """dL/dz when the gates are the full softmax's entries at S, not renormalised: the shared denominator
    ties every logit in, dL/dz_j = Σ_{i∈S} ∂L/∂g_i · p_i (δ_ij − p_j)."""
    p = softmax(z)
    grad = -p * (p[chosen] @ dl_dg)
    grad[chosen] += p[chosen] * dl_dg
    return grad


def central_difference(loss, z: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d loss / dz by central differences, one logit at a time: the second route to the gradients above."""
    grad = np.zeros_like(z)
    for j in range(z.size):
        up, down = z.copy(), z.copy()
        up[j] += eps
        down[j] -= eps
        grad[j] = (loss(up) - loss(down)) / (2 * eps)
    return grad


# -- auxiliary-loss-free balancing (V3 §2.1.2) ---------------------------------------------


@dataclass(frozen=True)
class Balancing:
    """A run of the bias loop: the loads of every step (steps × E), the bias after every step (steps × E),
    and what is needed to look again at a batch (centroids, the tokens' shared mean)."""

    loads: np.ndarray
    bias: np.ndarray
    centroids: np.ndarray
    mean: np.ndarray
    tokens: int
    top_k: int
    gamma: float
    batch_seed: int

    @property
    def steps(self) -> int:
        return self.loads.shape[0]

    @property
    def experts(self) -> int:
        return self.loads.shape[1]

    def affinities(self, step: int) -> np.ndarray:
        """V3's affinities of batch `step`: sigmoid of each token's dot product with each expert's centroid."""
        u = np.random.default_rng(self.batch_seed + step).standard_normal((self.tokens, self.mean.size)) + self.mean
        with threadpool_limits(1):
            return sigmoid(u @ self.centroids.T)


@cache
def balancing(
    experts: int = 16,
    top_k: int = 2,
    dim: int = 32,
    tokens: int = 512,
    steps: int = 400,
    gamma: float = 0.001,
    seed: int = 7,
    skew: float = 0.6,
    batch_seed: int = 10_000,
) -> Balancing:
    """Route `steps` batches; after each, b ← b + γ·sign(mean load − load): an overloaded expert's bias goes
    down, an underloaded one's up. The bias is added to the affinities only to choose the top k."""
    rng = np.random.default_rng(seed)
    centroids = rng.standard_normal((experts, dim)) / math.sqrt(dim)
    mean = skew * rng.standard_normal(dim)
    run = Balancing(
        np.zeros((steps, experts), int), np.zeros((steps, experts)), centroids, mean, tokens, top_k, gamma, batch_seed
    )
    bias = np.zeros(experts)
    target = tokens * top_k / experts
    for step in range(steps):
        chosen = top_k_of(run.affinities(step) + bias, top_k)
        run.loads[step] = loads(chosen, experts)
        bias = bias + gamma * np.sign(target - run.loads[step])
        run.bias[step] = bias
    return run


top_k_of = top_k  # the balancing loop's name for it, where `top_k` is an argument


def balance_statistic(affinities: np.ndarray, chosen: np.ndarray) -> float:
    """V3's sequence-wise balance statistic without α (Eq. 17–20): Σ f_i P_i, with f_i = E/(k T) · picks of i
    and P_i the mean of the affinities normalised per token. 1 when the load and the scores are even."""
    tokens, experts = affinities.shape
    k = chosen.shape[1]
    f = experts / (k * tokens) * loads(chosen, experts)
    p = (affinities / affinities.sum(axis=1, keepdims=True)).mean(axis=0)
    return float(f @ p)
