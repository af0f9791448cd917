"""A toy MoE layer with DeepSeek-V3's routing, run forward and backward by hand.

Router → Dispatch → expert FFN → Combine, for a handful of tokens: each token
is scored against every routed expert (sigmoid of a dot product), the top-k
scores are normalised into weights (V3's gating, arXiv 2412.19437 §2.1.2),
the token is copied to those k experts and to the shared ones, and the
outputs come back weighted and summed. The backward pass walks the same road
in reverse: Combine hands each copy its share of the gradient, each expert
runs its own backward, and Dispatch's backward adds the copies' gradients
back into one row per token. The sizes are small; the routing shape (how
many experts, how many chosen, how many shared) is the model's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class ToyMoE:
    """Weights of one MoE layer: router centroids, routed experts, shared experts (each a 2-layer ReLU FFN)."""

    centroids: np.ndarray  # (routed, d)
    up: np.ndarray  # (routed + shared, d, f)
    down: np.ndarray  # (routed + shared, f, d)
    top_k: int

    @property
    def routed(self) -> int:
        return self.centroids.shape[0]

    @property
    def shared(self) -> int:
        return self.up.shape[0] - self.routed


def toy(routed: int, shared: int, top_k: int, d: int = 6, f: int = 4, seed: int = 0) -> ToyMoE:
    rng = np.random.default_rng(seed)
    experts = routed + shared
    return ToyMoE(
        rng.normal(size=(routed, d)),
        rng.normal(size=(experts, d, f)) / np.sqrt(d),
        rng.normal(size=(experts, f, d)) / np.sqrt(f),
        top_k,
    )


@dataclass(frozen=True)
class Routing:
    scores: np.ndarray  # (tokens, routed): sigmoid affinities
    chosen: np.ndarray  # (tokens, top_k): expert ids, highest score first
    weights: np.ndarray  # (tokens, top_k): chosen scores, normalised to sum to 1


def route(layer: ToyMoE, x: np.ndarray) -> Routing:
    """Score every routed expert, keep the top k per token, normalise their scores into weights."""
    scores = sigmoid(x @ layer.centroids.T)
    chosen = np.argsort(-scores, axis=1, kind="stable")[:, : layer.top_k]
    picked = np.take_along_axis(scores, chosen, axis=1)
    return Routing(scores, chosen, picked / picked.sum(axis=1, keepdims=True))


def dispatch(layer: ToyMoE, routing: Routing) -> dict[int, list[int]]:
    """Which tokens each expert receives: the chosen routed experts, and every shared expert gets every token."""
    tokens = routing.chosen.shape[0]
    inbox: dict[int, list[int]] = {e: [] for e in range(layer.routed + layer.shared)}
    for t in range(tokens):
        for e in routing.chosen[t]:
            inbox[int(e)].append(t)
        for s in range(layer.shared):
            inbox[layer.routed + s].append(t)
    return inbox


def copies_per_token(inbox: dict[int, list[int]], tokens: int) -> list[int]:
    return [sum(received.count(t) for received in inbox.values()) for t in range(tokens)]


def _expert(layer: ToyMoE, e: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hidden = np.maximum(x @ layer.up[e], 0.0)
    return hidden @ layer.down[e], hidden


def forward(layer: ToyMoE, x: np.ndarray) -> np.ndarray:
    """Route, dispatch, run each expert on what it received, combine with the weights (shared: weight 1)."""
    routing = route(layer, x)
    out = np.zeros_like(x)
    for e, tokens in dispatch(layer, routing).items():
        for t in tokens:
            y, _ = _expert(layer, e, x[t])
            out[t] += y * _weight(layer, routing, t, e)
    return out


def _weight(layer: ToyMoE, routing: Routing, t: int, e: int) -> float:
    if e >= layer.routed:
        return 1.0
    return float(routing.weights[t][list(routing.chosen[t]).index(e)])


@dataclass(frozen=True)
class Backward:
    grad_x: np.ndarray  # (tokens, d): what the layer hands to the one below
    pieces: list[int]  # per token: how many expert copies sent a gradient back through Dispatch


def backward(layer: ToyMoE, x: np.ndarray, grad_out: np.ndarray) -> Backward:
    """The reverse road: Combine's backward, each expert's backward, Dispatch's backward (adds the copies),
    plus the router's share (the weights depend on x through the scores)."""
    routing = route(layer, x)
    grad_x = np.zeros_like(x)
    pieces = [0] * x.shape[0]
    for e, tokens in dispatch(layer, routing).items():
        for t in tokens:
            _y, hidden = _expert(layer, e, x[t])
            g_y = grad_out[t] * _weight(layer, routing, t, e)  # Combine's backward: this copy's share
            g_hidden = (g_y @ layer.down[e].T) * (hidden > 0)
            grad_x[t] += g_hidden @ layer.up[e].T  # Dispatch's backward: the copies add up
            pieces[t] += 1
    for t in range(x.shape[0]):  # the router: weights w_k = s_k / Σ s over the chosen
        chosen = routing.chosen[t]
        s = routing.scores[t][chosen]
        outputs = np.array([_expert(layer, int(e), x[t])[0] for e in chosen])
        g_w = outputs @ grad_out[t]
        total = s.sum()
        g_s = g_w / total - (g_w @ s) / total**2
        g_logit = g_s * s * (1 - s)
        grad_x[t] += g_logit @ layer.centroids[chosen]
    return Backward(grad_x, pieces)


def finite_difference_grad(layer: ToyMoE, x: np.ndarray, grad_out: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d(Σ grad_out · forward(x))/dx by central differences: a second route to the backward pass."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        bumped = x.copy()
        bumped[index] += eps
        up = np.sum(grad_out * forward(layer, bumped))
        bumped[index] -= 2 * eps
        down = np.sum(grad_out * forward(layer, bumped))
        grad[index] = (up - down) / (2 * eps)
    return grad
