"""Pipeline-parallel schedules, played by a small discrete-event simulator.

A schedule is where each stage of the model lives (a :class:`Placement`),
what each rank runs and in which order (its per-rank order of :class:`Op`,
as the literature or the framework's code gives it) and how long each kind
of op takes (:class:`Times`). :func:`simulate` plays it: a rank starts its
next op as soon as the rank is free and the op's inputs exist,

- F of stage s after F of stage s − 1 (same micro-batch),
- B of stage s after B of stage s + 1 and after F of stage s,
- W (the weight gradient of a split backward) after B of the same stage,

and the result is a :class:`Timeline` of (rank, op, micro-batch, chunk,
start, end). Everything a figure shows about a schedule (bubbles, in-flight
micro-batches, the orders themselves) is read off that timeline; the
closed forms are checked against it in ``tools/chapters/pipeline.py``.

Communication takes no time here: the figures are about the shape of a
schedule, as the papers' own diagrams are.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from tools.models import trace_events

# -- what runs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One piece of work on one rank: F, B or W of one micro-batch on one of the rank's chunks.

    ``split`` marks a B that computes only the input gradient; its W (the weight
    gradient) is a separate op, run later (zero-bubble, DualPipe).
    """

    kind: str  # "F", "B" or "W"
    micro: int
    chunk: int = 0
    split: bool = False

    def __post_init__(self):
        if self.kind not in ("F", "B", "W"):
            raise ValueError(f"unknown op kind {self.kind!r}: F, B or W")

    def name(self, chunks: int = 1) -> str:
        """F3, or B1.2 (chunk 1, micro-batch 2) when a rank holds more than one chunk."""
        return f"{self.kind}{self.chunk}.{self.micro}" if chunks > 1 else f"{self.kind}{self.micro}"


@dataclass(frozen=True)
class Pair:
    """A forward and a backward run as one overlapped unit (DualPipe's F&B)."""

    forward: Op
    backward: Op

    def name(self, chunks: int = 1) -> str:
        return f"{self.forward.name(chunks)}&{self.backward.name(chunks)}"


Item = Op | Pair


@dataclass(frozen=True)
class Times:
    """How long each op takes, in units of one forward of one whole stage (t_F = 1 by default).

    ``b`` is a *full* backward (input and weight gradient); a split B takes
    ``b − w`` and its W takes ``w``. ``pair`` is an F&B unit (default: no
    overlap, F + B). ``chunks`` divides everything: a rank cut into v chunks
    runs each chunk in 1/v of the time.
    """

    f: Fraction = Fraction(1)
    b: Fraction = Fraction(2)
    w: Fraction = Fraction(1)
    pair: Fraction | None = None
    chunks: int = 1

    def of(self, item: Item) -> Fraction:
        if isinstance(item, Pair):
            whole = self.pair if self.pair is not None else self.f + self.b
        elif item.kind == "F":
            whole = self.f
        elif item.kind == "W":
            whole = self.w
        else:
            whole = self.b - self.w if item.split else self.b
        return Fraction(whole) / self.chunks


# -- where the stages live -----------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Which rank and chunk hold stage s of micro-batch j's path, for `stages` stages on `ranks` ranks.

    ``kind`` is one of
    - "linear": stage s on rank s (GPipe, 1F1B, zero-bubble);
    - "interleaved": v chunks per rank, round-robin, stage s on rank s mod p as chunk s // p (VPP);
    - "v": two chunks per rank folded into a V, stage s on rank s (chunk 0) going down and on
      rank 2p − 1 − s (chunk 1) coming back (ZB-V, DualPipeV; the NOTES' 「s0 0 7 / s1 1 6」);
    - "bidirectional": two replicas of a p-stage model running in opposite directions; micro-batches
      in ``up`` enter at the last rank (chunk 1 is the up replica) (Chimera, DualPipe).
    """

    kind: str
    ranks: int
    chunks: int = 1
    up: frozenset[int] = frozenset()

    @property
    def stages(self) -> int:
        """Stages along one micro-batch's path."""
        return self.ranks if self.kind == "bidirectional" else self.ranks * self.chunks

    @property
    def chunk_share(self) -> Fraction:
        """A chunk's layers as a share of a 1F1B stage's (the model cut into `ranks` stages)."""
        return Fraction(self.ranks, self.stages)

    @property
    def weights(self) -> Fraction:
        """Weights one rank holds, as a multiple of a 1F1B rank's (two replicas hold twice)."""
        return self.chunks * self.chunk_share

    def where(self, stage: int, micro: int) -> tuple[int, int]:
        p = self.ranks
        if self.kind == "linear":
            return stage, 0
        if self.kind == "interleaved":
            return stage % p, stage // p
        if self.kind == "v":
            return (stage, 0) if stage < p else (2 * p - 1 - stage, 1)
        if self.kind == "bidirectional":
            return (p - 1 - stage, 1) if micro in self.up else (stage, 0)
        raise ValueError(f"unknown placement {self.kind!r}")

    def stage_of(self, rank: int, chunk: int, micro: int) -> int:
        p = self.ranks
        if self.kind == "linear":
            return rank
        if self.kind == "interleaved":
            return chunk * p + rank
        if self.kind == "v":
            return rank if chunk == 0 else 2 * p - 1 - rank
        if self.kind == "bidirectional":
            return p - 1 - rank if micro in self.up else rank
        raise ValueError(f"unknown placement {self.kind!r}")


# -- the timeline --------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One op as it ran: rank, op, micro-batch, chunk, start, end (and the B half of an F&B pair)."""

    rank: int
    op: str  # "F", "B", "W" or "F&B"
    micro: int
    chunk: int
    start: Fraction
    end: Fraction
    name: str
    split: bool = False
    paired: Op | None = None


@dataclass(frozen=True)
class Timeline:
    ranks: int
    chunks: int
    slots: tuple[Slot, ...]
    placement: Placement = field(repr=False)
    times: Times = field(repr=False)

    @property
    def makespan(self) -> Fraction:
        return max(s.end for s in self.slots)

    def on(self, rank: int) -> list[Slot]:
        return sorted((s for s in self.slots if s.rank == rank), key=lambda s: s.start)

    def order(self, rank: int) -> list[str]:
        """The rank's ops by start time, named as the papers name them (F3, B1.2)."""
        return [s.name for s in self.on(rank)]

    def busy(self, rank: int) -> Fraction:
        return sum((s.end - s.start for s in self.on(rank)), Fraction(0))

    def idle(self, rank: int, span: tuple[Fraction, Fraction] | None = None) -> list[tuple[Fraction, Fraction]]:
        """The rank's idle stretches within `span` (default: 0 to the makespan)."""
        start, end = span or (Fraction(0), self.makespan)
        gaps, at = [], start
        for s in self.on(rank):
            if s.start > at:
                gaps.append((at, s.start))
            at = max(at, s.end)
        if end > at:
            gaps.append((at, end))
        return gaps

    def idle_time(self, rank: int) -> Fraction:
        return sum((b - a for a, b in self.idle(rank)), Fraction(0))

    def bubble(self) -> Fraction:
        """Idle time over all ranks / (ranks × makespan): the bubble fraction."""
        total = sum((self.idle_time(r) for r in range(self.ranks)), Fraction(0))
        return total / (self.ranks * self.makespan)

    def own_span_idle(self, rank: int) -> Fraction:
        """Idle time between the rank's own first and last op (what no synchronisation forces)."""
        ops = self.on(rank)
        return sum((b - a for a, b in self.idle(rank, (ops[0].start, ops[-1].end))), Fraction(0))

    def in_flight(self, rank: int, share: Fraction | None = None) -> list[tuple[Fraction, Fraction]]:
        """How many micro-batches the rank holds activations for, as (time, count) steps.

        A micro-batch is held on a chunk from the start of its F to the end of its
        last backward piece there (B, or W when the backward is split). Each counts
        `share` (default: the chunk's share of a stage, 1/v under VPP), so counts
        are in units of one micro-batch through one 1F1B stage.
        """
        share = self.placement.chunk_share if share is None else share
        changes: dict[Fraction, Fraction] = {}
        for s in self.on(rank):
            for kind, split in _parts(s):
                if kind == "F":
                    changes[s.start] = changes.get(s.start, Fraction(0)) + share
                elif kind == "W" or (kind == "B" and not split):
                    changes[s.end] = changes.get(s.end, Fraction(0)) - share
        steps, level = [(Fraction(0), Fraction(0))], Fraction(0)
        for t in sorted(changes):
            level += changes[t]
            steps.append((t, level))
        return steps

    def peak_in_flight(self, rank: int, share: Fraction | None = None) -> Fraction:
        return max(count for _, count in self.in_flight(rank, share))

    def sends(self, rank: int) -> int:
        """Activations the rank sends to another rank: each F whose next stage lives elsewhere."""
        placement, count = self.placement, 0
        for s in self.on(rank):
            if s.op in ("F", "F&B"):
                stage = placement.stage_of(rank, s.chunk, s.micro)
                count += stage + 1 < placement.stages and placement.where(stage + 1, s.micro)[0] != rank
        return count

    def chrome_trace(self, title: str, unit_us: int = 1000) -> dict:
        """The timeline as Chrome trace-event JSON (Perfetto, chrome://tracing).

        One process per rank; each op a complete event ("ph": "X") named as the
        papers name it (F3, B1.2, F0.7&B1.3); every idle stretch between 0 and the
        makespan an explicit slice named "bubble". One time unit (t_F) is
        `unit_us` microseconds.
        """

        def us(t: Fraction) -> int | float:
            value = t * unit_us
            return int(value) if value.denominator == 1 else float(value)

        events: list[dict] = []
        for rank in range(self.ranks):
            events += trace_events.process(rank, f"rank {rank}")
            for s in self.on(rank):
                args = {"micro-batch": s.micro, "chunk": s.chunk}
                if s.paired is not None:
                    args |= {"backward micro-batch": s.paired.micro, "backward chunk": s.paired.chunk}
                events.append(trace_events.span(s.name, s.op, rank, 0, us(s.start), us(s.end - s.start), args))
            events += [trace_events.span("bubble", "bubble", rank, 0, us(a), us(b - a), {}) for a, b in self.idle(rank)]
        return trace_events.document(
            events,
            {
                "schedule": title,
                "ranks": self.ranks,
                "time unit": f"{unit_us} us = one forward of one micro-batch through one stage (t_F)",
                "bubble fraction": str(self.bubble()),
            },
        )


def _parts(slot: Slot) -> list[tuple[str, bool]]:
    """(kind, split) of what a slot runs: an F&B pair is its F and its B."""
    if slot.paired is None:
        return [(slot.op, slot.split)]
    return [("F", False), ("B", slot.paired.split)]


# -- the simulator -------------------------------------------------------------------------


class ScheduleError(ValueError):
    """A schedule that cannot run: an op waits on one that never comes."""


@dataclass(frozen=True)
class Schedule:
    """A placement and what each rank runs.

    By default a rank runs its items strictly in the given order. With a
    ``priority``, the items are the rank's work in no particular order, and a
    free rank runs the ready item that sorts first (Chimera's merged pipelines).
    With ``fill_with_w`` the items hold F and split B only: a rank runs its
    oldest pending W whenever nothing else is ready, or when the next F would
    hold more than ``cap`` micro-batches at once (zero-bubble).
    """

    name: str
    placement: Placement
    orders: tuple[tuple[Item, ...], ...]
    priority: Callable[[Op], tuple] | None = None
    fill_with_w: bool = False
    cap: int | None = None


def _needs(placement: Placement, rank: int, op: Op) -> list[tuple[str, int, int]]:
    """The ops (kind, stage, micro) that must have finished before `op` can start on `rank`."""
    stage = placement.stage_of(rank, op.chunk, op.micro)
    if op.kind == "F":
        return [("F", stage - 1, op.micro)] if stage > 0 else []
    if op.kind == "B":
        after = [("F", stage, op.micro)]
        return after + ([("B", stage + 1, op.micro)] if stage < placement.stages - 1 else [])
    return [("B", stage, op.micro)]


def _ops(item: Item) -> list[Op]:
    return [item.forward, item.backward] if isinstance(item, Pair) else [item]


def simulate(schedule: Schedule, times: Times) -> Timeline:
    """Play the schedule: each op starts as soon as its rank is free and its inputs are done.

    Time moves from one op's end to the next (a discrete-event loop); at each
    such moment every free rank picks its next item (see :class:`Schedule`).
    """
    placement = schedule.placement
    ranks, chunks = placement.ranks, placement.chunks
    done: dict[tuple[str, int, int], Fraction] = {}  # (kind, stage, micro) -> when it finished
    todo = [list(order) for order in schedule.orders]
    free_at = [Fraction(0)] * ranks
    pending_w: list[list[Op]] = [[] for _ in range(ranks)]
    holding = [0] * ranks  # micro-batches whose activations the rank holds (F run, last backward piece not)
    slots: list[Slot] = []
    events: list[Fraction] = [Fraction(0)]
    finishing: list[tuple[Fraction, int, tuple]] = []  # (end, rank, keys of what it finishes)

    def ready(rank: int, item: Item, now: Fraction) -> bool:
        return all(key in done and done[key] <= now for op in _ops(item) for key in _needs(placement, rank, op))

    def over_cap(rank: int, item: Item) -> bool:
        return (
            schedule.cap is not None
            and pending_w[rank] != []
            and isinstance(item, Op)
            and item.kind == "F"
            and holding[rank] + 1 > schedule.cap
        )

    def choose(rank: int, now: Fraction) -> Item | None:
        candidates = todo[rank] if schedule.priority else todo[rank][:1]
        eligible = [item for item in candidates if ready(rank, item, now) and not over_cap(rank, item)]
        if eligible:
            item = min(eligible, key=lambda i: schedule.priority(_ops(i)[0])) if schedule.priority else eligible[0]
            todo[rank].remove(item)
            return item
        return pending_w[rank].pop(0) if pending_w[rank] else None

    def start(rank: int, item: Item, now: Fraction) -> None:
        end = free_at[rank] = now + times.of(item)
        if isinstance(item, Pair):
            f, b = item.forward, item.backward
            slots.append(Slot(rank, "F&B", f.micro, f.chunk, now, end, item.name(chunks), paired=b))
        else:
            slots.append(Slot(rank, item.kind, item.micro, item.chunk, now, end, item.name(chunks), item.split))
        for op in _ops(item):
            holding[rank] += 1 if op.kind == "F" else 0 if op.split else -1
            if op.split and schedule.fill_with_w:
                pending_w[rank].append(Op("W", op.micro, op.chunk))
        keys = tuple((op.kind, placement.stage_of(rank, op.chunk, op.micro), op.micro) for op in _ops(item))
        heapq.heappush(finishing, (end, rank, keys))
        heapq.heappush(events, end)

    while events:
        now = heapq.heappop(events)
        while finishing and finishing[0][0] <= now:
            end, _, keys = heapq.heappop(finishing)
            done.update(dict.fromkeys(keys, end))
        for rank in range(ranks):
            if free_at[rank] <= now and (item := choose(rank, now)) is not None:
                start(rank, item, now)
    stuck = [(rank, left[0]) for rank, left in enumerate(todo) if left]
    if stuck:
        rank, item = stuck[0]
        raise ScheduleError(
            f"schedule '{schedule.name}': rank {rank} waits forever on {item.name(chunks)} (its inputs never finish)"
        )
    return Timeline(ranks, chunks, tuple(slots), placement, times)


# -- the schedules -------------------------------------------------------------------------


def gpipe(p: int, m: int) -> Schedule:
    """Every rank: all forwards F0 … F(m−1), then all backwards B0 … B(m−1)."""
    order = tuple(Op("F", j) for j in range(m)) + tuple(Op("B", j) for j in range(m))
    return Schedule("GPipe", Placement("linear", p), (order,) * p)


def one_f_one_b_warmup(p: int, m: int, rank: int) -> int:
    """Megatron's warm-up count for 0-indexed rank r: min(p − r − 1, m) forwards before the first B."""
    return min(p - rank - 1, m)


def one_f_one_b_order(m: int, warmup: int, split: bool = False) -> tuple[Op, ...]:
    """`warmup` forwards, then F and B alternating (steady), then the remaining Bs (cool-down)."""
    warmup = min(warmup, m)
    order = [Op("F", j) for j in range(warmup)]
    for i in range(m - warmup):
        order += [Op("F", warmup + i), Op("B", i, split=split)]
    order += [Op("B", j, split=split) for j in range(m - warmup, m)]
    return tuple(order)


def one_f_one_b(p: int, m: int, warmup: Callable[[int, int, int], int] = one_f_one_b_warmup) -> Schedule:
    """1F1B (PipeDream-Flush, Megatron without interleaving); `warmup(p, m, r)` counts rank r's warm-up."""
    orders = tuple(one_f_one_b_order(m, warmup(p, m, r)) for r in range(p))
    return Schedule("1F1B", Placement("linear", p), orders)


def notes_recipe_order(p: int, m: int, stage: int) -> tuple[Op, ...]:
    """The NOTES' recipe for 1F1B, taken literally for stage number `stage`.

    The stage gets p − stage + 1 micro-batches (ids 0 … p − stage) up front; then
    B and F alternate, B taking the oldest unfinished micro-batch and F the newest + 1.
    """
    up_front = min(p - stage + 1, m)
    order = [Op("F", j) for j in range(up_front)]
    unfinished = list(range(up_front))
    newest = up_front - 1
    while unfinished:
        order.append(Op("B", unfinished.pop(0)))
        if newest + 1 < m:
            newest += 1
            order.append(Op("F", newest))
            unfinished.append(newest)
    return tuple(order)


def interleaved_order(p: int, m: int, v: int, rank: int) -> tuple[Op, ...]:
    """Megatron's interleaved 1F1B on rank r (requires m to be a multiple of p).

    Virtual micro-batch k is chunk (k // p) mod v, micro-batch (k // (p·v))·p + k mod p
    (backwards walk the chunks in reverse); warm-up min((p − r − 1)·2 + (v − 1)·p, m·v)
    forwards, then F and B alternate, then the cool-down backwards.
    """
    if m % p:
        raise ValueError(f"interleaved 1F1B needs m a multiple of p (m = {m}, p = {p})")
    total = m * v

    def micro(k: int) -> int:
        return (k // (p * v)) * p + k % p

    def forward(k: int) -> Op:
        return Op("F", micro(k), (k // p) % v)

    def backward(k: int) -> Op:
        return Op("B", micro(k), v - 1 - (k // p) % v)

    warmup = min((p - rank - 1) * 2 + (v - 1) * p, total)
    order = [forward(k) for k in range(warmup)]
    for i in range(total - warmup):
        order += [forward(warmup + i), backward(i)]
    order += [backward(k) for k in range(total - warmup, total)]
    return tuple(order)


def interleaved(p: int, m: int, v: int) -> Schedule:
    return Schedule("VPP", Placement("interleaved", p, v), tuple(interleaved_order(p, m, v, r) for r in range(p)))


def zero_bubble_h1(p: int, m: int) -> Schedule:
    """ZB-H1: 1F1B's order of F and B, B split; the Ws fill what would idle, never holding more than p."""
    orders = tuple(one_f_one_b_order(m, one_f_one_b_warmup(p, m, r), split=True) for r in range(p))
    return Schedule("ZB-H1", Placement("linear", p), orders, fill_with_w=True, cap=p)


def zero_bubble_h2(p: int, m: int) -> Schedule:
    """ZB-H2: as ZB-H1, but rank r runs 2(p − r) − 1 forwards before its first B (warm-up 2(p − r) − 2,
    then the first steady F), enough that no rank waits for that B; up to 2p − 1 micro-batches in flight."""
    orders = tuple(one_f_one_b_order(m, 2 * (p - r) - 2, split=True) for r in range(p))
    return Schedule("ZB-H2", Placement("linear", p), orders, fill_with_w=True, cap=2 * p - 1)


def _dualpipe_steps(n: int, k: int, c: int) -> list[tuple]:
    """DualPipe's eight steps for position k of n in one direction, c micro-batches per direction.

    As the reference implementation (github.com/deepseek-ai/DualPipe) writes them,
    in its own terms: phase 0 / 1, ("F", phase), ("B", phase, split), ("W",),
    ("F&B", forward phase, backward phase). Micro-batch ids are given later.
    """
    steps: list[tuple] = [("F", 0)] * ((n - k - 1) * 2)  # 1: nF0
    steps += [("F", 0), ("F", 1)] * (k + 1)  # 2: nF0F1
    steps += [("B", 1, True), ("W",), ("F", 1)] * (n - k - 1)  # 3: nB1W1F1, zero bubble
    for i in range(c - 2 * n + k + 1):  # 4: nF0B1F1B0, the main step
        if i == 0 and k == n - 1:  # the turning rank does not overlap its first pair
            steps += [("F", 0), ("B", 1, False)]
        else:
            steps.append(("F&B", 0, 1))
        steps.append(("F&B", 1, 0))
    steps += [("B", 1, False), ("F&B", 1, 0)] * (n - k - 1)  # 5: nB1F1B0
    split = False
    for i in range(k + 1):  # 6: nB1B0, the second half zero bubble
        if i == (k + 1) // 2 and k % 2 == 1:
            split = True
        steps.append(("B", 1, split))
        if i == (k + 1) // 2 and k % 2 == 0:
            split = True
        steps.append(("B", 0, split))
    steps += [("W",), ("B", 0, True)] * (n - k - 1)  # 7: nWB0
    steps += [("W",)] * (k + 1)  # 8: nW
    return steps


def _number(
    steps: list[tuple], chunk_of: Callable[[int], int], micro_of: Callable[[int, int], int]
) -> tuple[Item, ...]:
    """Give each step its micro-batch: forwards and backwards count up per phase, a W takes the oldest split B."""
    count = {("F", 0): 0, ("F", 1): 0, ("B", 0): 0, ("B", 1): 0}
    waiting: list[Op] = []

    def op(kind: str, phase: int, split: bool = False) -> Op:
        j = count[(kind, phase)]
        count[(kind, phase)] += 1
        made = Op(kind, micro_of(phase, j), chunk_of(phase), split)
        if split:
            waiting.append(made)
        return made

    items: list[Item] = []
    for step in steps:
        if step[0] == "F":
            items.append(op("F", step[1]))
        elif step[0] == "B":
            items.append(op("B", step[1], step[2]))
        elif step[0] == "W":
            b = waiting.pop(0)
            items.append(Op("W", b.micro, b.chunk))
        else:
            items.append(Pair(op("F", step[1]), op("B", step[2])))
    return tuple(items)


def dualpipe_v(p: int, m: int) -> Schedule:
    """DualPipeV on p ranks, 2p stages folded into a V, m micro-batches all entering at rank 0."""
    if m < 2 * p:
        raise ValueError(f"DualPipeV needs m ≥ 2p (m = {m}, p = {p})")
    orders = tuple(_number(_dualpipe_steps(p, r, m), lambda phase: phase, lambda phase, j: j) for r in range(p))
    return Schedule("DualPipeV", Placement("v", p, 2), orders)


def dualpipe(p: int, m: int) -> Schedule:
    """DualPipe on p ranks (p even): two replicas in opposite directions, m/2 micro-batches entering at each end.

    On a rank of the first half, phase 0 is the downward replica (chunk 0); on the second half, phase 0 is
    the upward one (chunk 1). Downward micro-batches are 0 … m/2 − 1, upward ones m/2 … m − 1.
    """
    if p % 2 or m % 2 or m < 2 * p:
        raise ValueError(f"DualPipe needs p and m even and m ≥ 2p (m = {m}, p = {p})")
    half = m // 2
    orders = []
    for r in range(p):
        second = int(r >= p // 2)
        steps = _dualpipe_steps(p // 2, min(r, p - 1 - r), half)
        orders.append(
            _number(steps, lambda phase, s=second: phase ^ s, lambda phase, j, s=second: j + half * (phase ^ s))
        )
    return Schedule("DualPipe", Placement("bidirectional", p, 2, frozenset(range(half, m))), tuple(orders))


def chimera(d: int, n: int) -> Schedule:
    """Chimera (Li & Hoefler 2021): two replicas of a d-stage model in opposite directions, n/2 micro-batches each.

    Worker w holds stage w of the down replica (chunk 0) and stage d − 1 − w of the up
    replica (chunk 1). Each worker runs whatever is ready, backwards first, then the
    micro-batch that entered its pipeline earliest, the down pipeline on a tie. As in the
    paper, n is a multiple of d (a basic unit of d micro-batches, repeated).
    """
    if d % 2 or n % d:
        raise ValueError(f"Chimera needs d even and n a multiple of d (d = {d}, n = {n})")
    half = n // 2
    up = frozenset(range(half, n))
    work = tuple(tuple(Op(kind, j, int(j in up)) for j in range(n) for kind in "FB") for _ in range(d))
    return Schedule(
        "Chimera",
        Placement("bidirectional", d, 2, up),
        work,
        priority=lambda op: (op.kind != "B", op.micro % half, op.chunk),
    )
