"""Chapter 7 in play order (专题五's first), pipeline: pipeline-parallel schedules, each played by the simulator.

Every timeline on screen comes from ``tools.models.pipeline.simulate``; each
figure checks what it reads off the timeline (bubble, in-flight micro-batches,
per-rank orders) against the closed forms and orders the schedules' papers give,
and against the orders and timelines the course notes print for p = 4, m = 8.

Times are in units of one forward of one micro-batch through one stage
(t_F = 1); a full backward takes 2 (the course's 1 + 2 = 3), split into an
input gradient B of 1 and a weight gradient W of 1 where the schedule splits it.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from functools import cache

import numpy as np

from tools.course import catalogue, numbers
from tools.course.catalogue import Attachment, Chapter
from tools.course.facts import Check, Fact, data, number, percent, times
from tools.models import moe, v3
from tools.models import pipeline as pp

CHAPTER = Chapter(
    "pipeline",
    "流水线并行：把模型切到多张卡上",
    summary=(
        "GPipe, 1F1B, interleaved 1F1B, zero bubble, bidirectional (Chimera, DualPipeV), "
        "the summary table, MoE's nine copies; every timeline from one schedule simulator, "
        "each published as a trace"
    ),
)

P, M, V = 4, 8, 2  # ranks, micro-batches per step, chunks per rank (VPP): the course notes' example
TIMES = pp.Times(f=Fraction(1), b=Fraction(2), w=Fraction(1))
SLOTS = pp.Times(f=Fraction(1), b=Fraction(1), w=Fraction(0))  # one F or one B per slot (Chimera's unit)

# The course notes' simulated timelines at t_F = t_B = 1 (digits: F of micro-batch j, letters: B, a = 0).
GPIPE_PAGE_TIMELINE = (
    "01234567......abcdefgh",
    ".01234567....abcdefgh.",
    "..01234567..abcdefgh..",
    "...01234567abcdefgh...",
)
ONE_F_ONE_B_PAGE_TIMELINE = (
    "0123...a4b5c6d7e.f.g.h",
    ".012..a3b4c5d6e7f.g.h.",
    "..01.a2b3c4d5e6f7g.h..",
    "...0a1b2c3d4e5f6g7h...",
)
# The course notes' per-rank orders for p = 4, m = 8 (v = 2 for VPP; F/B + chunk.micro-batch).
ONE_F_ONE_B_PAGE_ORDERS = (
    "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
    "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
    "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
    "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
)
VPP_PAGE_ORDERS = (
    "F0.0 F0.1 F0.2 F0.3 F1.0 F1.1 F1.2 F1.3 F0.4 F0.5 F0.6 B1.0 F0.7 B1.1 F1.4 B1.2 F1.5 B1.3 F1.6 B0.0 F1.7 B0.1 "
    "B0.2 B0.3 B1.4 B1.5 B1.6 B1.7 B0.4 B0.5 B0.6 B0.7",
    "F0.0 F0.1 F0.2 F0.3 F1.0 F1.1 F1.2 F1.3 F0.4 B1.0 F0.5 B1.1 F0.6 B1.2 F0.7 B1.3 F1.4 B0.0 F1.5 B0.1 F1.6 B0.2 "
    "F1.7 B0.3 B1.4 B1.5 B1.6 B1.7 B0.4 B0.5 B0.6 B0.7",
    "F0.0 F0.1 F0.2 F0.3 F1.0 F1.1 F1.2 B1.0 F1.3 B1.1 F0.4 B1.2 F0.5 B1.3 F0.6 B0.0 F0.7 B0.1 F1.4 B0.2 F1.5 B0.3 "
    "F1.6 B1.4 F1.7 B1.5 B1.6 B1.7 B0.4 B0.5 B0.6 B0.7",
    "F0.0 F0.1 F0.2 F0.3 F1.0 B1.0 F1.1 B1.1 F1.2 B1.2 F1.3 B1.3 F0.4 B0.0 F0.5 B0.1 F0.6 B0.2 F0.7 B0.3 F1.4 B1.4 "
    "F1.5 B1.5 F1.6 B1.6 F1.7 B1.7 B0.4 B0.5 B0.6 B0.7",
)
# The course notes' simulated bubble fractions (4 decimals) at t_F = 1, t_B = 2, and VPP's peaks in flight.
GPIPE_PAGE_BUBBLES = {(4, 4): 0.4286, (4, 8): 0.2727, (8, 16): 0.3043, (4, 16): 0.1579}
VPP_PAGE_BUBBLES = {(4, 8, 2): 0.1579, (4, 16, 2): 0.0857, (4, 8, 4): 0.0857, (8, 16, 2): 0.1795}
VPP_PAGE_PEAKS = {
    (4, 2): (5.5, 4.5, 3.5, 2.5),
    (4, 4): (4.75, 4.25, 3.75, 3.25),
    (8, 2): (11.5, 10.5, 9.5, 8.5, 7.5, 6.5, 5.5, 4.5),
}
ZB_H1_PAGE_BUBBLES = {(4, 8): 0.1111, (8, 16): 0.1273, (8, 32): 0.0680}
# The NOTES' placements: 「s0 0 4 / s1 1 5 …」 (VPP) and 「s0 0 7 / s1 1 6 …」 (called Chimera there; a V).
NOTES_VPP_PLACEMENT = ((0, 4), (1, 5), (2, 6), (3, 7))
NOTES_V_PLACEMENT = ((0, 7), (1, 6), (2, 5), (3, 4))

HOW_TO_OPEN = "在 ui.perfetto.dev 点 Open trace file，或在 Chrome 的 chrome://tracing 点 Load 打开它"
NOTES = "输入：学习笔记的例子"  # how p, m and v are given (Fact.via)


# -- shared pieces -------------------------------------------------------------------------


def _pct(fraction: Fraction) -> Fact:
    return percent(float(fraction), 1)


def _count(value: Fraction | int) -> Fact:
    """A count of time units or micro-batches: whole numbers plain, halves and quarters with their digits."""
    value = Fraction(value)
    digits = 0 if value.denominator == 1 else 1 if value.denominator == 2 else 2
    return number(float(value), digits)


def _n(value: Fraction | int) -> str:
    """A time or count as the screen writes it, for a formula in a fact's how: 1, 0.5, 5.5."""
    return _count(value).text


def _cells(value: Fraction | int, unit: str = "格") -> Fact:
    """A count said with its measure word, so a 2 is read 两格, not 二格."""
    return number(float(value), unit=unit)


def _closed(p_minus_1: int, denominator: int, formula: str) -> str:
    """A simulated bubble's how: idle time over all ranks' time, equal to the closed form."""
    return f"模拟：空闲格 ÷ 总格数，= {formula} = {p_minus_1}/{denominator}"


def _ratio(fraction: Fraction) -> Fact:
    """An exact ratio as the formula gives it: 3/11 / 十一分之三."""
    spoken = f"{numbers.zh_int(fraction.denominator)}分之{numbers.zh_int(fraction.numerator)}"
    return Fact(float(fraction), f"{fraction.numerator}/{fraction.denominator}", spoken)


def _ascii(timeline: pp.Timeline) -> tuple[str, ...]:
    """Part C's notation for a timeline of unit-length ops: digits for F, letters for B, dots for idle."""
    rows = []
    for rank in range(timeline.ranks):
        row = ["."] * int(timeline.makespan)
        for s in timeline.on(rank):
            row[int(s.start)] = str(s.micro) if s.op == "F" else "abcdefghijklmnop"[s.micro]
        rows.append("".join(row))
    return tuple(rows)


def _notes_placement(placement: tuple[tuple[int, ...], ...]) -> Fact:
    """The NOTES' way of writing a placement: s0 0 4 / s1 1 5 …"""
    return data(" / ".join(f"s{r} " + " ".join(map(str, stages)) for r, stages in enumerate(placement)))


def _timeline(tl: pp.Timeline) -> Fact:
    """What a scene needs to play a timeline: its ops, its idle stretches, each rank's in-flight steps."""
    slots = [
        {
            "rank": s.rank,
            "op": s.op,
            "name": s.name,
            "micro": s.micro,
            "chunk": s.chunk,
            "start": float(s.start),
            "end": float(s.end),
            "split": s.split,
            "paired_chunk": None if s.paired is None else s.paired.chunk,
        }
        for s in tl.slots
    ]
    return data(
        {
            "ranks": tl.ranks,
            "chunks": tl.chunks,
            "makespan": float(tl.makespan),
            "slots": slots,
            "idle": [[[float(a), float(b)] for a, b in tl.idle(r)] for r in range(tl.ranks)],
            "in_flight": [[[float(t), float(c)] for t, c in tl.in_flight(r)] for r in range(tl.ranks)],
        }
    )


def _hold(tl: pp.Timeline, rank: int, micro: int) -> tuple[Fraction, Fraction]:
    """When the rank starts the micro-batch's F and when its (last) backward there ends."""
    mine = [s for s in tl.on(rank) if s.micro == micro]
    return min(s.start for s in mine if s.op == "F"), max(s.end for s in mine if s.op != "F")


def _up_front(order: tuple[pp.Op, ...]) -> int:
    """How many forwards a rank's order starts before its first backward."""
    return next(i for i, op in enumerate(order) if op.kind == "B")


def _hops(placement: pp.Placement) -> int:
    """How many times micro-batch 0's activations cross from one rank to another on the way forward."""
    ranks = [placement.where(s, 0)[0] for s in range(placement.stages)]
    return sum(a != b for a, b in itertools.pairwise(ranks))


def _idle_total(tl: pp.Timeline) -> Fraction:
    return sum((tl.idle_time(r) for r in range(tl.ranks)), Fraction(0))


def _check_bubble(check: Check, name: str, tl: pp.Timeline, closed: Fraction) -> None:
    """The simulated bubble fraction is the closed form exactly, and its idle time adds up to it."""
    check.equal(name, tl.bubble(), closed)
    check.equal(f"{name} (idle time / ranks × makespan)", _idle_total(tl) / (tl.ranks * tl.makespan), closed)


def _check_page_bubble(check: Check, name: str, tl: pp.Timeline, page: float) -> None:
    check.close(f"{name} (the notes, 4 decimals)", float(tl.bubble()), page, abs=5e-5)


def _trace(title: str, timeline) -> tuple[Attachment, ...]:
    """The figure's simulated timeline, published beside its clip as Chrome trace-event JSON."""

    def make() -> str:
        return json.dumps(timeline().chrome_trace(title), ensure_ascii=False, indent=1)

    return (Attachment("trace.json", "模拟时间线（Chrome trace JSON）", HOW_TO_OPEN, make),)


@cache
def gpipe_timeline(p: int = P, m: int = M) -> pp.Timeline:
    return pp.simulate(pp.gpipe(p, m), TIMES)


@cache
def one_f_one_b_timeline(p: int = P, m: int = M) -> pp.Timeline:
    return pp.simulate(pp.one_f_one_b(p, m), TIMES)


@cache
def interleaved_timeline(p: int = P, m: int = M, v: int = V) -> pp.Timeline:
    return pp.simulate(pp.interleaved(p, m, v), pp.Times(TIMES.f, TIMES.b, TIMES.w, chunks=v))


@cache
def zero_bubble_timelines(p: int = P, m: int = M) -> tuple[pp.Timeline, pp.Timeline]:
    return pp.simulate(pp.zero_bubble_h1(p, m), TIMES), pp.simulate(pp.zero_bubble_h2(p, m), TIMES)


# Bidirectional: Chimera in the paper's slot units, D = 4 workers, N = 8 micro-batches;
# DualPipeV as the DualPipe README's example, 4 ranks (8 stages) and 10 micro-batches.
CHIMERA_D, CHIMERA_N = 4, 8
DUALPIPE_V_RANKS, DUALPIPE_V_M = 4, 10
V3_PP = 8  # the V3 table evaluated at PP = 8 …
V3_TIMES = pp.Times(f=Fraction(1), b=Fraction(2), w=Fraction(1), pair=Fraction(3))  # … F 1, B 2, W 1, F&B 3
V3_PAGE = {"1F1B": 21, "ZB1P": 7, "DualPipe": 6}  # the bubbles the issue states for that setting
V3_FORMULAS = {"1F1B": "(PP − 1)(F + B)", "ZB1P": "(PP − 1)(F + B − 2W)", "DualPipe": "(PP/2 − 1)(F&B + B − 3W)"}
DUALPIPE_M = 20  # the README's DualPipe figure: 8 PP ranks, 20 micro-batches


@cache
def chimera_timeline(d: int = CHIMERA_D, n: int = CHIMERA_N) -> pp.Timeline:
    return pp.simulate(pp.chimera(d, n), SLOTS)


@cache
def dualpipe_v_timeline(p: int = DUALPIPE_V_RANKS, m: int = DUALPIPE_V_M) -> pp.Timeline:
    return pp.simulate(pp.dualpipe_v(p, m), V3_TIMES)


# -- pipeline_gpipe ------------------------------------------------------------------------


@CHAPTER.figure(
    "pipeline_gpipe",
    "GPipe：先全部前向，再全部反向",
    source="Huang et al. 2019（GPipe，arXiv 1811.06965）；学习笔记「GPipe」；时间线由本课模拟器算出",
    attachments=_trace("GPipe, p = 4, m = 8, t_F = 1, t_B = 2", gpipe_timeline),
)
def pipeline_gpipe(check: Check, p: int = P, m: int = M, schedule=pp.gpipe):
    tl = pp.simulate(schedule(p, m), TIMES)
    closed = Fraction(p - 1, m + p - 1)
    _check_bubble(check, "bubble", tl, closed)
    per_rank = (p - 1) * (TIMES.f + TIMES.b)
    for r in range(p):
        check.equal(f"idle rank {r}", tl.idle_time(r), per_rank)
        check.equal(f"peak in-flight rank {r}", tl.peak_in_flight(r), m)
        check.equal(f"order rank {r}", tl.order(r), [f"F{j}" for j in range(m)] + [f"B{j}" for j in range(m)])
    if (p, m) == (P, M):
        check.equal(
            "timeline (the notes, t_F = t_B = 1)", _ascii(pp.simulate(schedule(p, m), SLOTS)), GPIPE_PAGE_TIMELINE
        )
    rows = []
    for (pages_p, pages_m), page in GPIPE_PAGE_BUBBLES.items():
        run = pp.simulate(schedule(pages_p, pages_m), TIMES)
        _check_page_bubble(check, f"bubble p={pages_p}, m={pages_m}", run, page)
        if pages_p == p:
            check.equal(f"peak in-flight p={pages_p}, m={pages_m}", run.peak_in_flight(0), pages_m)
            rows.append(
                {"m": str(pages_m), "bubble": _pct(run.bubble()).text, "peak": _count(run.peak_in_flight(0)).text}
            )
    holds = [_hold(tl, r, 0) for r in range(p)]  # how long each rank keeps micro-batch 0's activations
    check.that(
        "rank 0 holds micro-batch 0 longest",
        holds[0][1] - holds[0][0] == max(b - a for a, b in holds),
        "the first stage forwards first and backwards last",
        holds,
    )
    return {
        "p": number(p).via(f"{NOTES}，卡数 p"),
        "m": number(m).via(f"{NOTES}，每步的微批次数 m"),
        "t_f": _count(TIMES.f).via(f"输入：时间单位，一个微批次过一段的前向记 {_n(TIMES.f)} 格"),
        "t_b": _count(TIMES.b).via(f"输入：本课口径，整段反向按前向的 {_n(TIMES.b / TIMES.f)} 倍算"),
        "b_times": number(float(TIMES.b / TIMES.f), unit="倍").via(f"t_B ÷ t_F = {_n(TIMES.b)} ÷ {_n(TIMES.f)}"),
        "b_cells": _cells(TIMES.b).via(f"t_B：本课口径，整段反向按前向的 {_n(TIMES.b / TIMES.f)} 倍算"),
        "bubble": _pct(tl.bubble()).via(f"模拟：空闲格 ÷ 总格数 = {_n(_idle_total(tl))} ÷ {_n(p * tl.makespan)}"),
        "ratio": _ratio(closed).via(f"(p − 1)/(m + p − 1) = {p - 1}/({m} + {p} − 1)"),
        "p_minus_1": number(p - 1).via(f"p − 1 = {p} − 1"),
        "m_plus_p_minus_1": number(m + p - 1).via(f"m + p − 1 = {m} + {p} − 1"),
        "idle_total": _count(_idle_total(tl)).via(f"模拟：{p} 张卡的空闲格相加，每张 {_n(per_rank)} 格"),
        "makespan": _count(tl.makespan).via("模拟：一步从第一张卡开工到收工的格数"),
        "area": _count(p * tl.makespan).via(f"{p} 张卡 × {_n(tl.makespan)} 格"),
        "idle_per_rank": _count(per_rank).via(
            f"(p − 1)(t_F + t_B) = {p - 1} × ({_n(TIMES.f)} + {_n(TIMES.b)})，每张卡都是（模拟核过）"
        ),
        "peak": number(m).via("m：前向全做完才开始反向，全部微批次同时在途（模拟核过）"),
        "rows": data(rows),
        "timeline": _timeline(tl),
        "forward_done": data(float(max(s.end for s in tl.slots if s.op == "F"))),
        "hold": data([float(t) for t in holds[0]]),
    }


# -- pipeline_1f1b -------------------------------------------------------------------------


@CHAPTER.figure(
    "pipeline_1f1b",
    "1F1B：空泡不变，在途变少",
    source="Narayanan et al. 2021（arXiv 2104.04473）；Megatron-LM forward_backward_pipelining_without_interleaving；"
    "学习笔记「1F1B」",
    attachments=_trace("1F1B, p = 4, m = 8, t_F = 1, t_B = 2", one_f_one_b_timeline),
)
def pipeline_1f1b(check: Check, p: int = P, m: int = M, warmup=pp.one_f_one_b_warmup):
    tl = pp.simulate(pp.one_f_one_b(p, m, warmup), TIMES)
    gpipe = pp.simulate(pp.gpipe(p, m), TIMES)
    if (p, m) == (P, M):
        for r in range(p):
            check.equal(f"order rank {r}", " ".join(tl.order(r)), ONE_F_ONE_B_PAGE_ORDERS[r])
        check.equal(
            "timeline (the notes, t_F = t_B = 1)",
            _ascii(pp.simulate(pp.one_f_one_b(p, m, warmup), SLOTS)),
            ONE_F_ONE_B_PAGE_TIMELINE,
        )
    closed = Fraction(p - 1, m + p - 1)
    _check_bubble(check, "bubble", tl, closed)
    check.equal("bubble (same as GPipe)", tl.bubble(), gpipe.bubble())
    for r in range(p):
        check.equal(f"peak in-flight rank {r}", tl.peak_in_flight(r), min(p - r, m))
    for (pages_p, pages_m), page in GPIPE_PAGE_BUBBLES.items():
        _check_page_bubble(
            check,
            f"bubble p={pages_p}, m={pages_m}",
            pp.simulate(pp.one_f_one_b(pages_p, pages_m, warmup), TIMES),
            page,
        )
    # The NOTES' recipe: stage i gets p − i + 1 micro-batches up front, then B takes the
    # oldest unfinished, F the newest + 1. Read with i from 1 it is Megatron's order; from 0, one too many.
    megatron = [pp.one_f_one_b_order(m, pp.one_f_one_b_warmup(p, m, r)) for r in range(p)]
    from_1 = [pp.notes_recipe_order(p, m, r + 1) for r in range(p)]
    from_0 = [pp.notes_recipe_order(p, m, r) for r in range(p)]
    for r in range(p):
        check.equal(f"notes recipe, stage i = {r + 1} (1-indexed)", from_1[r], megatron[r])
    check.equal("notes recipe, 0-indexed", [_up_front(o) for o in from_0], [_up_front(o) + 1 for o in megatron])
    up_front = [_up_front(o) for o in megatron]
    check.equal("forwards before the first B", up_front, [p - r for r in range(p)])
    first_b = min(s.start for s in tl.on(0) if s.op == "B")
    last_f = max(s.end for s in tl.on(0) if s.op == "F")
    closed_how = _closed(p - 1, m + p - 1, "(p − 1)/(m + p − 1)")
    return {
        "p": number(p).via(f"{NOTES}，卡数 p"),
        "m": number(m).via(f"{NOTES}，每步的微批次数 m"),
        "bubble": _pct(tl.bubble()).via(closed_how),
        "gpipe_bubble": _pct(gpipe.bubble()).via(f"GPipe {closed_how}"),
        "idle_total": _count(_idle_total(tl)).via("模拟：各卡的空闲格相加"),
        "gpipe_idle_total": _count(_idle_total(gpipe)).via("模拟 GPipe：各卡的空闲格相加"),
        "gpipe_peak": number(m).via("GPipe 的在途 = m：前向全做完才反向"),
        **{
            f"peak_{r}": _count(tl.peak_in_flight(r)).via(
                f"模拟：卡 {r} 最多同时在途几个，= min(p − r, m) = min({p - r}, {m})"
            )
            for r in range(p)
        },
        **{
            f"warmup_{r}": number(warmup(p, m, r)).via(f"Megatron 的预热：min(p − r − 1, m) = min({p - r - 1}, {m})")
            for r in range(p)
        },
        "recipe": data(
            [
                {
                    "rank": str(r),
                    "warmup": str(warmup(p, m, r)),
                    "up_front": str(up_front[r]),
                    "notes_1": str(_up_front(from_1[r])),
                    "notes_0": str(_up_front(from_0[r])),
                }
                for r in range(p)
            ]
        ),
        **{
            f"up_front_{r}": number(up_front[r]).via(f"卡 {r} 第一个 B 之前的前向数，= p − r = {p} − {r}")
            for r in range(p)
        },
        "off_by_one": number(_up_front(from_0[0])).via(f"笔记配方 p − i + 1 从 i = 0 编号，卡 0：{p} − 0 + 1"),
        "timeline": _timeline(tl),
        "gpipe_timeline": _timeline(gpipe),
        "phases": data([float(first_b), float(last_f), float(tl.makespan)]),
    }


# -- pipeline_interleaved ------------------------------------------------------------------


@CHAPTER.figure(
    "pipeline_interleaved",
    "交错 1F1B：每张卡再切成几块",
    source="Narayanan et al. 2021（arXiv 2104.04473）§2.2；Megatron-LM forward_backward_pipelining_with_interleaving；"
    "学习笔记「interleaved 1F1B」",
    attachments=_trace("Interleaved 1F1B (VPP), p = 4, m = 8, v = 2", interleaved_timeline),
)
def pipeline_interleaved(check: Check, p: int = P, m: int = M, v: int = V):
    tl = pp.simulate(pp.interleaved(p, m, v), pp.Times(TIMES.f, TIMES.b, TIMES.w, chunks=v))
    base = pp.simulate(pp.one_f_one_b(p, m), TIMES)
    placement = [tuple(s for s in range(p * v) if tl.placement.where(s, 0)[0] == r) for r in range(p)]
    if (p, m, v) == (P, M, V):
        check.equal("placement (NOTES: s0 0 4 / s1 1 5 …)", tuple(placement), NOTES_VPP_PLACEMENT)
        for r in range(p):
            check.equal(f"order rank {r}", " ".join(tl.order(r)), VPP_PAGE_ORDERS[r])
    _check_bubble(check, "bubble", tl, Fraction(p - 1, v * m + p - 1))
    for r in range(p):
        check.equal(f"peak in-flight rank {r}", tl.peak_in_flight(r), Fraction((p - r - 1) * 2 + (v - 1) * p + 1, v))
    check.equal("peak in-flight rank 0 (p + (p − 1)/v)", tl.peak_in_flight(0), p + Fraction(p - 1, v))
    for (pages_p, pages_m, pages_v), page in VPP_PAGE_BUBBLES.items():
        run = interleaved_timeline(pages_p, pages_m, pages_v)
        _check_page_bubble(check, f"bubble p={pages_p}, m={pages_m}, v={pages_v}", run, page)
        if (pages_p, pages_v) in VPP_PAGE_PEAKS and pages_m == 2 * pages_p:
            check.equal(
                f"peaks in flight p={pages_p}, v={pages_v}",
                [float(run.peak_in_flight(r)) for r in range(pages_p)],
                list(VPP_PAGE_PEAKS[pages_p, pages_v]),
            )
    last_start, base_last_start = tl.on(p - 1)[0].start, base.on(p - 1)[0].start
    check.equal("last rank starts v× earlier", last_start * v, base_last_start)
    sends, base_sends = tl.sends(0), base.sends(0)
    check.equal("rank 0 sends v× as often", sends, v * base_sends)
    chunk = "（一块算 1/v 个）"
    return {
        "p": number(p).via(f"{NOTES}，卡数 p"),
        "m": number(m).via(f"{NOTES}，每步的微批次数 m"),
        "v": number(v).via(f"{NOTES}，每张卡再切的块数 v"),
        "v_chunks": _cells(v, "块").via(f"{NOTES}，每张卡再切的块数 v"),
        "stages": number(p * v).via(f"p × v = {p} × {v}"),
        "placement": data([list(stages) for stages in placement]),
        "notes_placement": _notes_placement(tuple(placement)),
        "bubble": _pct(tl.bubble()).via(_closed(p - 1, v * m + p - 1, "(p − 1)/(v·m + p − 1)")),
        "base_bubble": _pct(base.bubble()).via("1F1B " + _closed(p - 1, m + p - 1, "(p − 1)/(m + p − 1)")),
        "ratio": _ratio(Fraction(p - 1, v * m + p - 1)).via(f"(p − 1)/(v·m + p − 1) = {p - 1}/({v} × {m} + {p} − 1)"),
        "base_ratio": _ratio(Fraction(p - 1, m + p - 1)).via(f"(p − 1)/(m + p − 1) = {p - 1}/({m} + {p} − 1)"),
        "chunk_f": _count(TIMES.f / v).via(f"t_F ÷ v = {_n(TIMES.f)} ÷ {v}"),
        "chunk_b": _count(TIMES.b / v).via(f"t_B ÷ v = {_n(TIMES.b)} ÷ {v}"),
        "last_start": _count(last_start).via(
            f"模拟：最后一张卡开工的时刻，= (p − 1) × t_F ÷ v = {p - 1} × {_n(TIMES.f)} ÷ {v}"
        ),
        "base_last_start": _count(base_last_start).via(
            f"模拟 1F1B：最后一张卡开工的时刻，= (p − 1) × t_F = {p - 1} × {_n(TIMES.f)}"
        ),
        "sends": number(sends).via("模拟：卡 0 一步里把激活发给别的卡的次数"),
        "base_sends": number(base_sends).via("模拟 1F1B：卡 0 一步里把激活发给别的卡的次数"),
        "hops": number(_hops(tl.placement)).via(f"微批次 0 依次走过 {p * v} 块，相邻两块不在一张卡就算一次"),
        "base_hops": number(_hops(base.placement)).via(f"1F1B：微批次 0 依次走过 {p} 段，相邻两段不在一张卡就算一次"),
        "peak_0": _count(tl.peak_in_flight(0)).via(f"模拟：卡 0 最多同时在途几个{chunk}，= p + (p − 1)/v"),
        "base_peak_0": _count(base.peak_in_flight(0)).via("模拟 1F1B：卡 0 最多同时在途几个，= p"),
        **{
            f"peak_{r}": _count(tl.peak_in_flight(r)).via(
                f"模拟：卡 {r} 最多同时在途几个{chunk}，= (2(p − r − 1) + (v − 1)·p + 1)/v"
            )
            for r in range(1, p)
        },
        "timeline": _timeline(tl),
        "base_timeline": _timeline(base),
    }


# -- pipeline_zero_bubble ------------------------------------------------------------------


def _zb_h1_timeline() -> pp.Timeline:
    return zero_bubble_timelines()[0]


@CHAPTER.figure(
    "pipeline_zero_bubble",
    "零空泡：把反向拆成两半",
    source="Qi et al. 2024（Zero Bubble Pipeline Parallelism，arXiv 2401.10241）；学习笔记「dw 分离」；"
    "时间线由本课模拟器算出",
    attachments=_trace("ZB-H1, p = 4, m = 8, t_F = t_B = t_W = 1", _zb_h1_timeline),
)
def pipeline_zero_bubble(check: Check, p: int = P, m: int = M, times: pp.Times = TIMES):
    base = pp.simulate(pp.one_f_one_b(p, m), times)
    h1 = pp.simulate(pp.zero_bubble_h1(p, m), times)
    h2 = pp.simulate(pp.zero_bubble_h2(p, m), times)
    t_f, t_b, t_w = times.f, times.b - times.w, times.w  # ZB's B is the input-gradient half
    for r in range(p):
        check.equal(f"1F1B idle rank {r}", base.idle_time(r), (p - 1) * (t_f + t_b + t_w))
        check.equal(f"ZB-H1 idle rank {r}", h1.idle_time(r), (p - 1) * (t_f + t_b - t_w))
        check.equal(f"ZB-H1 peak in-flight rank {r}", h1.peak_in_flight(r), base.peak_in_flight(0))
        check.equal(f"ZB-H2 idle within rank {r}'s own span", h2.own_span_idle(r), 0)
    third = h1.idle_time(0) / base.idle_time(0)
    check.equal("ZB-H1 / 1F1B bubble time", third, Fraction(1, 3))
    _check_bubble(check, "ZB-H1 bubble (equal T)", h1, Fraction(p - 1, 3 * m + p - 1))
    for (pages_p, pages_m), page in ZB_H1_PAGE_BUBBLES.items():
        _check_page_bubble(
            check,
            f"ZB-H1 bubble p={pages_p}, m={pages_m}",
            pp.simulate(pp.zero_bubble_h1(pages_p, pages_m), times),
            page,
        )
    check.equal("ZB-H2 peak in-flight rank 0", h2.peak_in_flight(0), 2 * p - 1)
    check.equal("ZB-H2 idle with a step-end sync (the two slanted edges)", h2.idle_time(0), (p - 1) * t_f)
    f, b, w = _n(t_f), _n(t_b), _n(t_w)
    return {
        "p": number(p).via(f"{NOTES}，卡数 p"),
        "m": number(m).via(f"{NOTES}，每步的微批次数 m"),
        "t_f": _count(t_f).via(f"输入：时间单位，前向记 {f} 格"),
        "t_b": _count(t_b).via(f"整段反向 − W = {_n(times.b)} − {w}"),
        "t_w": _count(t_w).via("输入：本课口径，权重梯度 W 的格数"),
        "t_full": _count(times.b).via("输入：本课口径，整段反向 B + W 的格数"),
        "base_idle": _count(base.idle_time(0)).via(f"1F1B：(p − 1)(t_F + t_B + t_W) = {p - 1} × ({f} + {b} + {w})"),
        "h1_idle": _count(h1.idle_time(0)).via(f"ZB-H1：(p − 1)(t_F + t_B − t_W) = {p - 1} × ({f} + {b} − {w})"),
        "third": _ratio(third).via(f"ZB-H1 ÷ 1F1B 的空等 = {_n(h1.idle_time(0))} ÷ {_n(base.idle_time(0))}"),
        "base_bubble": _pct(base.bubble()).via("1F1B " + _closed(p - 1, m + p - 1, "(p − 1)/(m + p − 1)")),
        "h1_bubble": _pct(h1.bubble()).via(
            "ZB-H1 " + _closed(p - 1, 3 * m + p - 1, "(p − 1)/(3m + p − 1)") + "（t_F = t_B = t_W）"
        ),
        "base_peak": _count(base.peak_in_flight(0)).via("模拟 1F1B：卡 0 最多同时在途几个，= p"),
        "h1_peak": _count(h1.peak_in_flight(0)).via("模拟 ZB-H1：卡 0 最多同时在途几个，同 1F1B"),
        "h2_peak": _count(h2.peak_in_flight(0)).via(f"模拟 ZB-H2：卡 0 最多同时在途几个，= 2p − 1 = 2 × {p} − 1"),
        "h2_span_idle": _count(h2.own_span_idle(0)).via("模拟 ZB-H2：卡 0 从自己第一格到最后一格之间的空闲"),
        "h2_edges": _count(h2.idle_time(0)).via(f"模拟 ZB-H2 加步末同步：卡 0 空等 (p − 1) × t_F = {p - 1} × {f}"),
        "timeline": _timeline(base),
        "h1_timeline": _timeline(h1),
        "h2_timeline": _timeline(h2),
    }


# -- pipeline_bidirectional ----------------------------------------------------------------


def _v3_table(check: Check, pp_stages: int, t: pp.Times) -> dict[str, dict]:
    """The V3 paper's table (Table 2, DualPipe README) at PP stages: closed form, then the simulator."""
    f, b, w, fb = t.f, t.b, t.w, t.pair
    closed = {
        "1F1B": (pp_stages - 1) * (f + b),
        "ZB1P": (pp_stages - 1) * (f + b - 2 * w),
        "DualPipe": (Fraction(pp_stages, 2) - 1) * (fb + b - 3 * w),
    }
    for name, page in V3_PAGE.items():
        check.equal(f"V3 table {name} bubble", closed[name], page)
    m = 2 * pp_stages
    runs = {
        "1F1B": pp.simulate(pp.one_f_one_b(pp_stages, m), t),
        "ZB1P": pp.simulate(pp.zero_bubble_h1(pp_stages, m), t),
        "DualPipe": pp.simulate(pp.dualpipe(pp_stages, DUALPIPE_M), t),
        "DualPipeV": pp.simulate(pp.dualpipe_v(pp_stages // 2, DUALPIPE_M), t),
    }
    rows = {}
    for name, run in runs.items():
        formula = closed["DualPipe" if name.startswith("Dual") else name]
        for r in range(run.ranks):
            check.equal(f"{name} simulated idle rank {r}", run.idle_time(r), formula)
        peak = run.peak_in_flight(0, Fraction(1))  # in chunks, the table's unit
        check.equal(f"{name} activation", peak, pp_stages + (1 if name.startswith("Dual") else 0))
        weights = run.placement.chunks * Fraction(pp_stages, run.placement.stages)
        rows[name] = {
            "bubble": formula,
            "simulated": run.idle_time(0),
            "weights": weights,
            "activation": peak,
            "devices": run.ranks,
        }
    check.equal("parameters per device", [rows[n]["weights"] for n in runs], [1, 1, 2, 2])
    check.equal("devices", [rows[n]["devices"] for n in runs], [pp_stages] * 3 + [pp_stages // 2])
    return rows


@CHAPTER.figure(
    "pipeline_bidirectional",
    "双向流水线：Chimera 与 DualPipe",
    source="Li & Hoefler 2021（Chimera，arXiv 2107.06925）；DeepSeek-V3 技术报告 §3.2.1 与表 2（arXiv 2412.19437）；"
    "github.com/deepseek-ai/DualPipe；学习笔记「Chimera」「dual V」",
    attachments=_trace("DualPipeV, 4 ranks (8 stages), 10 micro-batches, F 1, B 2, W 1, F&B 3", dualpipe_v_timeline),
)
def pipeline_bidirectional(check: Check, d: int = CHIMERA_D, n: int = CHIMERA_N, pp_stages: int = V3_PP):
    chimera = pp.simulate(pp.chimera(d, n), SLOTS)
    base = pp.simulate(pp.one_f_one_b(d, n), SLOTS)
    for r in range(d):
        check.equal(f"Chimera idle worker {r} (slots)", chimera.idle_time(r), d - 2)
        check.equal(f"1F1B idle worker {r} (slots)", base.idle_time(r), 2 * (d - 1))
        check.that(
            f"Chimera peak in-flight worker {r}",
            d // 2 + 1 <= chimera.peak_in_flight(r) <= d,
            f"between D/2 + 1 = {d // 2 + 1} and D = {d}",
            chimera.peak_in_flight(r),
        )
    _check_bubble(check, "Chimera bubble", chimera, Fraction(d - 2, 2 * n + d - 2))
    for grid_d, grid_n in ((4, 4), (8, 8), (8, 16)):
        _check_bubble(
            check,
            f"Chimera bubble D={grid_d}, N={grid_n}",
            pp.simulate(pp.chimera(grid_d, grid_n), SLOTS),
            Fraction(grid_d - 2, 2 * grid_n + grid_d - 2),
        )
    down_up = [(r, d - 1 - r) for r in range(d)]
    check.equal(
        "Chimera placement (down stage, up stage)",
        [(chimera.placement.stage_of(r, 0, 0), chimera.placement.stage_of(r, 1, n - 1)) for r in range(d)],
        down_up,
    )
    check.equal("Chimera weights per worker", chimera.placement.weights, 2)
    vee = dualpipe_v_timeline()
    v_stages = [(vee.placement.stage_of(r, 0, 0), vee.placement.stage_of(r, 1, 0)) for r in range(vee.ranks)]
    check.equal("V placement (NOTES: s0 0 7 / s1 1 6 …)", tuple(v_stages), NOTES_V_PLACEMENT)
    rows = _v3_table(check, pp_stages, V3_TIMES)
    check.equal("DualPipeV idle rank 0 (drawn run)", vee.idle_time(0), rows["DualPipeV"]["bubble"])
    table = [
        {
            "name": name,
            "formula": V3_FORMULAS["DualPipe" if name.startswith("Dual") else name],
            "bubble": numbers.signed(float(row["bubble"])),
            "simulated": numbers.signed(float(row["simulated"])),
            "weights": times(float(row["weights"])).text,
            "activation": {pp_stages: "PP", pp_stages + 1: "PP + 1"}[row["activation"]],
            "devices": {pp_stages: "PP", pp_stages // 2: "PP/2"}[row["devices"]],
        }
        for name, row in rows.items()
    ]
    pairs = sum(1 for s in vee.slots if s.op == "F&B")
    f, b, w, fb = (_n(t) for t in (V3_TIMES.f, V3_TIMES.b, V3_TIMES.w, V3_TIMES.pair))
    chimera_idle = f"模拟（F、B 各占一格）：每个 worker 空等 D − 2 = {d} − 2"
    readme = "输入：DualPipe README 的例子"
    return {
        "d": number(d).via("输入：本课取的 Chimera 例子，worker 数 D"),
        "n": number(n).via("输入：本课取的 Chimera 例子，微批次数 N"),
        "chimera_idle": _count(chimera.idle_time(0)).via(chimera_idle),
        "chimera_idle_cells": _cells(chimera.idle_time(0)).via(chimera_idle),
        "base_idle": _count(base.idle_time(0)).via(f"模拟 1F1B（同口径）：每个 worker 空等 2(D − 1) = 2 × ({d} − 1)"),
        "chimera_bubble": _pct(chimera.bubble()).via(_closed(d - 2, 2 * n + d - 2, "(D − 2)/(2N + D − 2)")),
        "base_bubble": _pct(base.bubble()).via("1F1B（同口径）" + _closed(d - 1, n + d - 1, "(D − 1)/(N + D − 1)")),
        "chimera_weights": times(float(chimera.placement.weights)).via(
            "每个 worker 存下行、上行两条流水线各一段的权重"
        ),
        "dualpipe_weights": _cells(rows["DualPipe"]["weights"], "倍").via(
            "V3 表：DualPipe 每张卡存两个方向各一段，1F1B 存一段（模拟的放置核过）"
        ),
        "dualpipe_v_weights": _cells(rows["DualPipeV"]["weights"], "倍").via(
            f"V3 表：DualPipeV 把 {pp_stages} 段放在 {pp_stages // 2} 张卡上，1F1B 一张卡一段"
        ),
        "chimera_peak": data([int(chimera.peak_in_flight(r)) for r in range(d)]),
        "down_up": data(down_up),
        "v_stages": data([list(s) for s in v_stages]),
        "notes_placement": _notes_placement(tuple(v_stages)),
        "v_ranks": number(vee.ranks).via(f"{readme}，卡数"),
        "v_stage_count": number(vee.placement.stages).via(
            f"卡数 × 每卡段数 = {vee.ranks} × {vee.placement.chunks}（V 形对折）"
        ),
        "v_m": number(DUALPIPE_V_M).via(f"{readme}，微批次数"),
        "pairs": number(pairs).via("模拟 DualPipeV：数 F&B 配对块"),
        "v_idle": _count(vee.idle_time(0)).via(
            f"模拟：卡 0 空等，= (PP/2 − 1)(F&B + B − 3W)，PP = {vee.placement.stages}"
        ),
        "v_peak": _count(vee.peak_in_flight(0, 1)).via("模拟：卡 0 最多同时存着几块的激活"),
        "pp": number(pp_stages).via("输入：本课代入 V3 表的流水线段数 PP"),
        "f": _count(V3_TIMES.f).via("输入：本课口径，前向 F 的格数"),
        "b": _count(V3_TIMES.b).via("输入：本课口径，整段反向 B 的格数"),
        "b_cells": _cells(V3_TIMES.b).via("输入：本课口径，整段反向 B 的格数"),
        "w": _count(V3_TIMES.w).via("输入：本课口径，权重梯度 W 的格数"),
        "fb": _count(V3_TIMES.pair).via(f"F + B = {f} + {b}：F&B 按前向加反向算"),
        "one_f_one_b_units": _count(rows["1F1B"]["bubble"]).via(
            f"(PP − 1)(F + B) = {pp_stages - 1} × ({f} + {b})（模拟核过）"
        ),
        "zb1p_units": _count(rows["ZB1P"]["bubble"]).via(
            f"(PP − 1)(F + B − 2W) = {pp_stages - 1} × ({f} + {b} − 2 × {w})（模拟核过）"
        ),
        "dualpipe_units": _count(rows["DualPipe"]["bubble"]).via(
            f"(PP/2 − 1)(F&B + B − 3W) = {pp_stages // 2 - 1} × ({fb} + {b} − 3 × {w})（模拟核过）"
        ),
        "table": data(table),
        "chimera_timeline": _timeline(chimera),
        "base_timeline": _timeline(base),
        "timeline": _timeline(vee),
    }


# -- pipeline_summary ----------------------------------------------------------------------


def summary_runs(p: int = P, m: int = M, v: int = V) -> list[tuple[str, pp.Timeline, Fraction | None, str]]:
    """Every schedule of the chapter at p = 4, m = 8: (name, timeline, closed-form bubble, peak's closed form)."""
    h1, h2 = zero_bubble_timelines(p, m)
    half = pp.Times(TIMES.f, TIMES.b, TIMES.w, pair=TIMES.f + TIMES.b, chunks=2)
    return [
        ("GPipe", gpipe_timeline(p, m), Fraction(p - 1, m + p - 1), "m"),
        ("1F1B", one_f_one_b_timeline(p, m), Fraction(p - 1, m + p - 1), "p"),
        ("交错 1F1B", interleaved_timeline(p, m, v), Fraction(p - 1, v * m + p - 1), "p + (p−1)/v"),
        ("ZB-H1", h1, Fraction(p - 1, 3 * m + p - 1), "p"),
        ("ZB-H2", h2, None, "2p − 1"),
        ("Chimera", chimera_timeline(p, m), Fraction(p - 2, 2 * m + p - 2), "≤ p"),
        (
            "DualPipe",
            pp.simulate(pp.dualpipe(p, m), pp.Times(TIMES.f, TIMES.b, TIMES.w, pair=TIMES.f + TIMES.b)),
            None,
            "p + 1",
        ),
        ("DualPipeV", pp.simulate(pp.dualpipe_v(p, m), half), None, "(2p + 1)/2"),
    ]


@CHAPTER.figure(
    "pipeline_summary",
    "一张表：这些调度各换来了什么",
    source=f"本章模拟器，p = {P}、m = {M}；公式见 Narayanan 2021、Qi 2024、Li & Hoefler 2021、DeepSeek-V3 表 2；"
    "学习笔记「scheduler」",
)
def pipeline_summary(check: Check, p: int = P, m: int = M, v: int = V, cite=catalogue.cite):
    peaks = {
        "m": m,
        "p": p,
        "p + (p−1)/v": p + Fraction(p - 1, v),
        "2p − 1": 2 * p - 1,
        "p + 1": p + 1,
        "(2p + 1)/2": Fraction(2 * p + 1, 2),
    }
    rows = []
    for name, tl, closed, peak_form in summary_runs(p, m, v):
        if closed is not None:
            _check_bubble(check, f"{name} bubble", tl, closed)
        peak = tl.peak_in_flight(0)
        if peak_form == "≤ p":
            check.that(f"{name} peak in-flight", peak <= p, f"at most p = {p}", peak)
        else:
            check.equal(f"{name} peak in-flight", peak, peaks[peak_form])
        rows.append(
            {
                "name": name,
                "bubble": _pct(tl.bubble()).text,
                "peak": _count(peak).text,
                "weights": times(float(tl.placement.weights)).text,
                "own_span_zero": all(tl.own_span_idle(r) == 0 for r in range(tl.ranks)),
                "timeline": _timeline(tl).value,
            }
        )
    h2 = next(row for row in rows if row["name"] == "ZB-H2")
    check.that(
        "ZB-H2 idles only at the step's two edges",
        h2["own_span_zero"],
        "no idle between a rank's own first and last op",
        h2,
    )
    return {
        "p": number(p).via(f"{NOTES}，卡数 p"),
        "m": number(m).via(f"{NOTES}，每步的微批次数 m"),
        "v": number(v).via(f"{NOTES}，交错 1F1B 每张卡的块数 v"),
        "v3_weights": cite("pipeline_bidirectional.dualpipe_v_weights"),
        "rows": data(rows),
        "slot_note": data("Chimera 按论文口径：F、B 各占一格"),
    }


# -- moe_flow ------------------------------------------------------------------------------

MOE_TOKENS = 4
MOE_SEED = 7


@CHAPTER.figure(
    "moe_flow",
    "MoE 一层的来回：九份拷贝从哪来",
    source="DeepSeek-V3 技术报告 §2.1.2（arXiv 2412.19437）：256 个路由专家取 8 个，外加 1 个共享专家；"
    "学习笔记「moe f&b 计算流程」；示意的 token 与分数是随机数",
)
def moe_flow(check: Check, tokens: int = MOE_TOKENS, top_k: int = v3.TOP_K, shared: int = v3.SHARED_EXPERTS):
    layer = moe.toy(v3.ROUTED_EXPERTS, shared, top_k, seed=MOE_SEED)
    rng = np.random.default_rng(MOE_SEED)
    x = rng.normal(size=(tokens, layer.centroids.shape[1]))
    grad_out = rng.normal(size=x.shape)
    routing = moe.route(layer, x)
    for t in range(tokens):
        check.that(
            f"token {t} weights positive", bool((routing.weights[t] > 0).all()), "every weight > 0", routing.weights[t]
        )
        check.close(f"token {t} weights sum", float(routing.weights[t].sum()), 1.0)
    copies = moe.copies_per_token(moe.dispatch(layer, routing), tokens)
    check.equal("copies per token", copies, [v3.COPIES] * tokens)
    back = moe.backward(layer, x, grad_out)
    check.equal("gradients added back per token", back.pieces, [v3.COPIES] * tokens)
    check.close(
        "backward (finite differences)",
        float(np.abs(back.grad_x - moe.finite_difference_grad(layer, x, grad_out)).max()),
        0.0,
        abs=1e-6,
    )
    dispatched = next(k for k in v3.MOE_KEPT if k.label == "派发出去的激活")
    combined = next(k for k in v3.MOE_KEPT if k.label == "专家输出（合并前）")
    check.equal("dispatched width", dispatched.width, copies[0] * v3.HIDDEN)
    check.equal("expert outputs width", combined.width, copies[0] * v3.HIDDEN)

    def gib(kept: v3.Kept) -> str:
        """One kept tensor's size, as v3.Tensor.gib computes it."""
        (tensor,) = kept.parts
        return f"{v3.SEQ:,} token × {copies[0]} × {v3.HIDDEN:,} × {tensor.nbytes} B ÷ 2³⁰"

    return {
        "tokens": number(tokens).via("输入：示意的 token 数", schematic=True),
        "experts": number(v3.ROUTED_EXPERTS).via("输入：DeepSeek-V3，路由专家数"),
        "top_k": number(top_k).via("输入：DeepSeek-V3，每个 token 挑的路由专家数"),
        "shared": number(shared).via("输入：DeepSeek-V3，共享专家数"),
        "copies": number(copies[0]).via(f"top-k + 共享 = {top_k} + {shared}（派发时逐 token 数过）"),
        "weight_sum": number(1).via("挑出的分数归一化成权重后相加（每个 token 核过）"),
        "hidden": number(v3.HIDDEN).via("输入：DeepSeek-V3 的隐藏维度（config 的 hidden_size）"),
        "dispatched": number(dispatched.gib, 2, "GiB", "G").via(gib(dispatched)),
        "seq": Fact(v3.SEQ, f"{v3.SEQ // 1024}K", f"{numbers.zh_int(v3.SEQ // 1024)}K").via(
            "输入：本课的长序列，与反向传播那一章同"
        ),
        "combined": number(combined.gib, 2, "GiB", "G").via(gib(combined)),
        "chosen": data(routing.chosen.tolist()),
        "weights": data(np.round(routing.weights, 4).tolist()),
    }
