"""Serving Llama-3.1-70B on 8-GPU instances, colocated or disaggregated: a roofline latency model and a
discrete-event simulator.

An instance is 8 H100s running the model with tensor parallelism 8. How long a piece of work takes comes
from the roofline: a prefill is compute-bound (its FLOPs at an efficiency of the peak), a decode step
reads every weight once and every KV entry of its batch (bytes at an efficiency of the peak bandwidth),
unless its FLOPs take longer. A request's KV cache goes from a prefill instance to a decode instance over
one link, after its prefill ends.

:func:`simulate` plays a workload on instances laid out one of two ways:

- **colocated**: each instance does both. A request joins the instance with the fewest requests waiting,
  prefilling or decoding; a waiting prefill runs before the next decode step (prompts batched up to a
  token budget), and while it runs every request decoding there waits;
- **disaggregated**: P instances only prefill, from one first-come-first-served queue; after its KV
  transfer a request joins the decode instance with the smallest batch, and decode instances only decode.

Decode is iteration-level batching: every request on an instance advances one token per step, and a
request that arrives during a step joins the next one. The model leaves out chunked prefill, prefix
caching, a KV memory limit, tensor-parallel communication and network contention.

Nothing here knows about figures or screens; ``tools/chapters/serving.py`` checks what it returns.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

# -- the model -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer's shape (Llama's conventions: SwiGLU FFN, GQA, untied embeddings)."""

    layers: int
    d_model: int
    heads: int
    kv_heads: int
    vocab: int
    ffn_dim_multiplier: float
    multiple_of: int
    bytes_per_value: int = 2  # bf16

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def ffn(self) -> int:
        """Llama's FFN width rule: 2/3 of 4d, times the multiplier, rounded up to a multiple."""
        hidden = int(2 * 4 * self.d_model / 3)
        hidden = int(self.ffn_dim_multiplier * hidden)
        return self.multiple_of * ((hidden + self.multiple_of - 1) // self.multiple_of)

    @property
    def params(self) -> int:
        """Every parameter: per layer Q and O (d²), K and V (d × kv width), three FFN matrices, two norms;
        the input embedding and the output head (V × d each), and the final norm."""
        d, kv = self.d_model, self.kv_heads * self.head_dim
        per_layer = 2 * d * d + 2 * d * kv + 3 * d * self.ffn + 2 * d
        return self.layers * per_layer + 2 * self.vocab * d + d

    @property
    def matmul_params(self) -> int:
        """The parameters a token multiplies by: all but the input embedding (a lookup)."""
        return self.params - self.vocab * self.d_model

    def kv_bytes_per_token(self, kv_heads: int | None = None) -> int:
        """K and V, per layer, per KV head, head_dim numbers each: 2 · L · n_kv · d_head · bytes."""
        n_kv = self.kv_heads if kv_heads is None else kv_heads
        return 2 * self.layers * n_kv * self.head_dim * self.bytes_per_value


LLAMA_31_70B = Model(
    layers=80, d_model=8192, heads=64, kv_heads=8, vocab=128256, ffn_dim_multiplier=1.3, multiple_of=4096
)


def mla_kv_bytes_per_token(latent: int, rope: int, layers: int, bytes_per_value: int = 2) -> int:
    """Multi-head latent attention (DeepSeek-V3) caches one compressed latent and one RoPE key per layer."""
    return (latent + rope) * layers * bytes_per_value


# -- the roofline ------------------------------------------------------------------------------


def ridge(flops: float, bandwidth: float) -> float:
    """FLOP per byte at which the bandwidth roof meets the compute roof."""
    return flops / bandwidth


def attainable(intensity: float, flops: float, bandwidth: float) -> float:
    """FLOP/s the roofline allows at an arithmetic intensity."""
    return min(flops, intensity * bandwidth)


def linear_intensity(tokens: int, d_in: int, d_out: int, bytes_per_value: int = 2) -> float:
    """FLOP per byte of y = x W for `tokens` rows of x: read x and W, write y (closed form)."""
    flops = 2 * tokens * d_in * d_out
    moved = bytes_per_value * (tokens * d_in + d_in * d_out + tokens * d_out)
    return flops / moved


def _shaped(*shape: int, dtype=np.float16) -> np.ndarray:
    """An array of that shape and type that takes no memory (every element is one shared zero)."""
    return np.broadcast_to(np.zeros((), dtype=dtype), shape)


def linear_intensity_of_arrays(tokens: int, d_in: int, d_out: int) -> float:
    """The same intensity from actual fp16 arrays: FLOPs from x's and W's shapes, bytes from their nbytes."""
    x, w = _shaped(tokens, d_in), _shaped(d_in, d_out)
    y = _shaped(x.shape[0], w.shape[1])
    flops = 2 * x.shape[0] * x.shape[1] * w.shape[1]
    return flops / (x.nbytes + w.nbytes + y.nbytes)


def decode_attention_intensity(model: Model, context: int, kv_heads: int | None = None) -> float:
    """One new token's attention over `context` cached tokens: QKᵀ and PV for every query head (4·h·d_h·c
    FLOPs) over the K and V of the KV heads (2·c·h_kv·d_h values): h / h_kv FLOP per byte, whatever c is."""
    n_kv = model.kv_heads if kv_heads is None else kv_heads
    flops = 4 * model.heads * model.head_dim * context
    moved = 2 * context * n_kv * model.head_dim * model.bytes_per_value
    return flops / moved


def prefill_attention_intensity(model: Model, seq: int) -> float:
    """A whole prompt's causal attention: 2·S²·h·d_h FLOPs over Q, K, V and the output (S·d_h·(2h + 2h_kv))."""
    flops = 2 * seq * seq * model.heads * model.head_dim
    moved = seq * model.head_dim * (2 * model.heads + 2 * model.kv_heads) * model.bytes_per_value
    return flops / moved


# -- the instance ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    """An instance of `gpus` GPUs and what each piece of work takes on it (seconds)."""

    model: Model = LLAMA_31_70B
    gpus: int = 8
    peak_flops: float = 989.4e12  # per GPU, dense bf16
    peak_bandwidth: float = 3.35e12  # per GPU, HBM3, B/s
    flop_efficiency: float = 0.5  # prefill reaches this share of the peak
    bandwidth_efficiency: float = 0.7  # decode reaches this share of the bandwidth
    link: float = 87e9  # KV transfer, B/s per instance

    @property
    def flops(self) -> float:
        return self.gpus * self.peak_flops * self.flop_efficiency

    @property
    def bandwidth(self) -> float:
        return self.gpus * self.peak_bandwidth * self.bandwidth_efficiency

    def prefill_flops(self, seq: int) -> tuple[float, float]:
        """(linear layers, causal attention) FLOPs of one prompt: 2·N_mm·S and 2·L·S²·d."""
        m = self.model
        return 2.0 * m.matmul_params * seq, 2.0 * m.layers * seq * seq * m.d_model

    def prefill(self, seqs) -> float:
        """One prefill of a batch of prompts: every prompt's FLOPs at the instance's sustained rate."""
        return sum(sum(self.prefill_flops(s)) for s in seqs) / self.flops

    def decode_step(self, batch: int, context: int) -> float:
        """One decode step of `batch` requests holding `context` tokens of KV in all: the weights once and
        every KV entry from memory, or the step's FLOPs, whichever takes longer."""
        m = self.model
        memory = (m.bytes_per_value * m.params + m.kv_bytes_per_token() * context) / self.bandwidth
        compute = 2.0 * m.matmul_params * batch / self.flops
        return max(memory, compute)

    def transfer(self, seq: int) -> float:
        """A prompt's whole KV cache over the link."""
        return seq * self.model.kv_bytes_per_token() / self.link


def streamed_transfer(compute_per_layer: float, transfer_per_layer: float, layers: int) -> tuple[float, float]:
    """Layer-wise KV streaming as an event loop: layer i's KV is sent once layer i is computed and the link is
    free. Returns (when the last layer's KV arrives, the part of that after the last layer's compute ends)."""
    computed = link_free = 0.0
    for _ in range(layers):
        computed += compute_per_layer
        link_free = max(link_free, computed) + transfer_per_layer
    return link_free, link_free - computed


# -- the workload ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    id: int
    arrival: float  # seconds
    prompt: int  # tokens
    output: int  # tokens generated, the first one by the prefill


def workload(
    rate: float,
    count: int,
    seed: int,
    prompt: tuple[int, int] = (512, 4096),
    output: tuple[int, int] = (64, 512),
) -> list[Request]:
    """Poisson arrivals at `rate` per second, prompt and output lengths uniform on the closed ranges; drawn in
    that order (gaps, prompts, outputs) from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rate, count))
    prompts = rng.integers(prompt[0], prompt[1] + 1, count)
    outputs = rng.integers(output[0], output[1] + 1, count)
    return [Request(i, float(a), int(s), int(o)) for i, (a, s, o) in enumerate(zip(arrivals, prompts, outputs))]


# -- the simulator -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """How many instances, and what each does: ``colocated`` instances do both; otherwise ``prefill`` P
    instances and ``decode`` D instances."""

    colocated: int = 0
    prefill: int = 0
    decode: int = 0

    def __post_init__(self):
        if bool(self.colocated) == bool(self.prefill or self.decode):
            raise ValueError("a layout is either colocated instances or prefill and decode instances")
        if not self.colocated and not (self.prefill and self.decode):
            raise ValueError("a disaggregated layout needs at least one prefill and one decode instance")

    @property
    def instances(self) -> int:
        return self.colocated or self.prefill + self.decode

    @property
    def name(self) -> str:
        return f"{self.colocated} 混部" if self.colocated else f"{self.prefill}P{self.decode}D"

    def role(self, instance: int) -> str:
        """ "mixed", "prefill" or "decode"."""
        if self.colocated:
            return "mixed"
        return "prefill" if instance < self.prefill else "decode"


@dataclass(frozen=True)
class Segment:
    """One piece of work in the trace: a prefill block, a decode step or a KV transfer (its link belongs to
    the prefill instance it leaves), on one instance, for some requests."""

    instance: int
    kind: str  # "prefill", "decode" or "transfer"
    start: float
    end: float
    requests: tuple[int, ...] = ()


@dataclass
class Outcome:
    """What happened to one request."""

    request: Request
    first_token: float = math.nan
    last_token: float = math.nan
    prefill_instance: int = -1
    decode_instance: int = -1

    @property
    def ttft(self) -> float:
        return self.first_token - self.request.arrival

    @property
    def tpot(self) -> float:
        return (self.last_token - self.first_token) / (self.request.output - 1)


@dataclass
class Run:
    layout: Layout
    outcomes: list[Outcome]
    segments: list[Segment] = field(default_factory=list)  # only when traced
    _tokens: dict[int, list[float]] | None = field(default=None, repr=False, compare=False)  # token_times, indexed

    def token_times(self, request: int) -> list[float]:
        """When each of a request's tokens came out, read off the trace: its prefill's end, then the end of
        every decode step it was in."""
        if self._tokens is None:
            self._tokens = {}
            for s in self.segments:
                if s.kind != "transfer":
                    for r in s.requests:
                        self._tokens.setdefault(r, []).append(s.end)
            for times in self._tokens.values():
                times.sort()
        return list(self._tokens.get(request, []))

    def longest_gap(self, request: int) -> float:
        times = self.token_times(request)
        return max(b - a for a, b in itertools.pairwise(times))

    def attainment(self, ttft: float, tpot: float) -> float:
        """The share of requests that met both SLOs."""
        met = sum(1 for o in self.outcomes if o.ttft <= ttft and o.tpot <= tpot)
        return met / len(self.outcomes)


class _Decoder:
    """The decode side of one instance: its batch advances one token per step.

    Requests that join during a step wait for the next one. The batch's KV context is kept as a running sum,
    and when each request leaves as a heap of step numbers, so a step costs O(1) plus what finishes.
    """

    def __init__(self) -> None:
        self.steps = 0  # steps done
        self.batch = 0
        self.context = 0  # KV tokens held by the batch (prompt + tokens so far, each)
        self.pending: list[Outcome] = []  # joined, not yet stepped
        self.members: dict[int, Outcome] = {}
        self.leaving: list[tuple[int, int]] = []  # (the step after which it is done, request id)

    def join(self, outcome: Outcome) -> None:
        self.pending.append(outcome)

    def size(self) -> int:
        return self.batch + len(self.pending)

    def admit(self) -> None:
        for o in self.pending:
            r = o.request
            self.members[r.id] = o
            self.batch += 1
            self.context += r.prompt + 1  # its prompt and its first token
            heapq.heappush(self.leaving, (self.steps + r.output - 1, r.id))
        self.pending.clear()

    def step_done(self, now: float) -> list[Outcome]:
        """A step ended at `now`: every member has one more token; returns those that are done."""
        self.steps += 1
        self.context += self.batch
        done = []
        while self.leaving and self.leaving[0][0] == self.steps:
            _, rid = heapq.heappop(self.leaving)
            o = self.members.pop(rid)
            o.last_token = now
            self.batch -= 1
            self.context -= o.request.prompt + o.request.output
            done.append(o)
        return done


PREFILL_BUDGET = 8192  # tokens of prompt one prefill block takes at most


def simulate(
    requests: list[Request],
    layout: Layout,
    instance: Instance = Instance(),
    *,
    budget: int = PREFILL_BUDGET,
    trace: bool = False,
    into_running_step: bool = False,
) -> Run:
    """Play the requests on the layout; with `trace`, keep every segment (which requests each step served).

    A request whose KV reaches a decode instance in the middle of a step joins the next step. With
    `into_running_step` it is counted into the step in progress instead, and gets a token when that step
    ends, though the step began before its KV arrived: the rule of the reference script behind the numbers
    in docs/figures.md#pd_timeline's note, kept so a test can show that this rule is the whole difference.
    """
    outcomes = [Outcome(r) for r in requests]
    n = layout.instances
    decoders = [_Decoder() for _ in range(n)]
    waiting: list[deque[Outcome]] = [deque() for _ in range(n)]  # colocated: per instance
    queue: deque[Outcome] = deque()  # disaggregated: the prefill instances' one queue
    busy = [False] * n
    prefilling = [0] * n
    segments: list[Segment] = []
    events: list[tuple[float, int, str, object]] = []  # (time, order, kind, payload)
    order = 0

    def push(time: float, kind: str, payload) -> None:
        nonlocal order
        heapq.heappush(events, (time, order, kind, payload))
        order += 1

    def take(line: deque[Outcome]) -> list[Outcome]:
        """First come, first served, up to the token budget (always at least one prompt)."""
        block, tokens = [line.popleft()], 0
        tokens = block[0].request.prompt
        while line and tokens + line[0].request.prompt <= budget:
            tokens += line[0].request.prompt
            block.append(line.popleft())
        return block

    def start(i: int, now: float) -> None:
        """Instance i is free at `now`: give it its next piece of work, if any."""
        role = layout.role(i)
        line = waiting[i] if role == "mixed" else queue
        if role != "decode" and line:
            block = take(line)
            prefilling[i] = len(block)
            for o in block:
                o.prefill_instance = i
            end = now + instance.prefill([o.request.prompt for o in block])
            busy[i] = True
            push(end, "prefilled", (i, now, block))
            return
        dec = decoders[i]
        if role != "prefill" and dec.size():
            dec.admit()
            end = now + instance.decode_step(dec.batch, dec.context)
            busy[i] = True
            push(end, "stepped", (i, now))
            return
        busy[i] = False

    for o in outcomes:
        push(o.request.arrival, "arrival", o)

    while events:
        now, _, kind, payload = heapq.heappop(events)
        if kind == "arrival":
            o = payload
            if layout.colocated:
                i = min(range(n), key=lambda k: (len(waiting[k]) + prefilling[k] + decoders[k].size(), k))
                waiting[i].append(o)
            else:
                queue.append(o)
                i = next((k for k in range(layout.prefill) if not busy[k]), None)
                if i is None:
                    continue
            if not busy[i]:
                start(i, now)
        elif kind == "prefilled":
            i, began, block = payload
            prefilling[i] = 0
            if trace:
                segments.append(Segment(i, "prefill", began, now, tuple(o.request.id for o in block)))
            for o in block:
                o.first_token = now
                if layout.colocated:
                    o.decode_instance = i
                    decoders[i].join(o)
                else:
                    arrive = now + instance.transfer(o.request.prompt)
                    if trace:
                        segments.append(Segment(i, "transfer", now, arrive, (o.request.id,)))
                    push(arrive, "transferred", o)
            start(i, now)
        elif kind == "transferred":
            o = payload
            d = min(range(layout.prefill, n), key=lambda k: (decoders[k].size(), k))
            o.decode_instance = d
            decoders[d].join(o)
            if not busy[d]:
                start(d, now)
            elif into_running_step:
                decoders[d].admit()
        else:  # "stepped"
            i, began = payload
            if trace:
                segments.append(Segment(i, "decode", began, now, tuple(decoders[i].members)))
            decoders[i].step_done(now)
            start(i, now)

    return Run(layout, outcomes, segments)
