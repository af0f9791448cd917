"""The schedule simulator (tools/models/pipeline.py) against every closed form of figures.md Part C,
and the toy MoE layer (tools/models/moe.py) against finite differences."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from tools.models import moe, v3
from tools.models import pipeline as pp

TIMES = pp.Times()  # t_F = 1, full t_B = 2 (split: B 1 + W 1)
SLOTS = pp.Times(f=Fraction(1), b=Fraction(1), w=Fraction(0))
PAIRED = pp.Times(pair=Fraction(3))


def _holds_every_dependency(tl: pp.Timeline) -> None:
    """No two ops overlap on a rank, and every op starts after the ops it needs have ended."""
    ends: dict[tuple, Fraction] = {}
    for s in tl.slots:
        parts = [(s.op if s.paired is None else "F", s.micro, s.chunk)]
        if s.paired is not None:
            parts.append(("B", s.paired.micro, s.paired.chunk))
        for kind, micro, chunk in parts:
            key = (kind, tl.placement.stage_of(s.rank, chunk, micro), micro)
            assert key not in ends, f"{key} ran twice"
            ends[key] = s.end
    for s in tl.slots:
        ops = [pp.Op(s.op, s.micro, s.chunk, s.split)] if s.paired is None else [pp.Op("F", s.micro, s.chunk), s.paired]
        for op in ops:
            for need in pp._needs(tl.placement, s.rank, op):
                assert ends[need] <= s.start, f"{s.name} on rank {s.rank} starts before {need} ends"
    for rank in range(tl.ranks):
        on = tl.on(rank)
        assert all(a.end <= b.start for a, b in itertools.pairwise(on)), f"rank {rank} runs two ops at once"


# -- GPipe and 1F1B (C1, C2) ---------------------------------------------------------------


@pytest.mark.parametrize("p", [2, 4, 8])
@pytest.mark.parametrize("m", [1, 3, 8, 16])
def test_gpipe_and_1f1b_bubble_is_p_minus_1_over_m_plus_p_minus_1(p, m):
    for schedule in (pp.gpipe, pp.one_f_one_b):
        tl = pp.simulate(schedule(p, m), TIMES)
        _holds_every_dependency(tl)
        assert tl.bubble() == Fraction(p - 1, m + p - 1)
        assert all(tl.idle_time(r) == (p - 1) * 3 for r in range(p))


@pytest.mark.parametrize(("p", "m"), [(4, 8), (8, 16), (4, 2)])
def test_peak_in_flight_gpipe_m_1f1b_min_p_minus_r_m(p, m):
    gpipe, one = pp.simulate(pp.gpipe(p, m), TIMES), pp.simulate(pp.one_f_one_b(p, m), TIMES)
    assert [gpipe.peak_in_flight(r) for r in range(p)] == [m] * p
    assert [one.peak_in_flight(r) for r in range(p)] == [min(p - r, m) for r in range(p)]


def test_the_notes_recipe_is_megatrons_order_only_when_stages_count_from_1():
    p, m = 4, 8
    for r in range(p):
        megatron = pp.one_f_one_b_order(m, pp.one_f_one_b_warmup(p, m, r))
        assert pp.notes_recipe_order(p, m, r + 1) == megatron
        assert pp.notes_recipe_order(p, m, r) != megatron  # D21: 0-indexed, one micro-batch too many


def test_a_rank_that_waits_on_an_op_that_never_comes_is_refused():
    backwards_first = pp.Schedule(
        "broken", pp.Placement("linear", 2), ((pp.Op("B", 0), pp.Op("F", 0)), (pp.Op("F", 0), pp.Op("B", 0)))
    )
    with pytest.raises(pp.ScheduleError, match=r"'broken': rank 0 waits forever on B0"):
        pp.simulate(backwards_first, TIMES)


# -- interleaved 1F1B (C3) -----------------------------------------------------------------


@pytest.mark.parametrize(("p", "m", "v"), [(4, 8, 2), (4, 16, 2), (4, 8, 4), (8, 16, 2), (2, 6, 3)])
def test_interleaved_bubble_and_peaks(p, m, v):
    tl = pp.simulate(pp.interleaved(p, m, v), pp.Times(chunks=v))
    _holds_every_dependency(tl)
    assert tl.bubble() == Fraction(p - 1, v * m + p - 1)
    assert [tl.peak_in_flight(r) for r in range(p)] == [
        Fraction((p - r - 1) * 2 + (v - 1) * p + 1, v) for r in range(p)
    ]
    assert tl.peak_in_flight(0) == p + Fraction(p - 1, v)


def test_interleaving_needs_m_a_multiple_of_p():
    with pytest.raises(ValueError, match="multiple of p"):
        pp.interleaved(4, 6, 2)


# -- zero bubble (C6) ----------------------------------------------------------------------


@pytest.mark.parametrize(("p", "m"), [(4, 8), (8, 16), (8, 32), (4, 4)])
def test_zb_h1_keeps_a_third_of_1f1b_bubble_at_1f1b_memory(p, m):
    h1 = pp.simulate(pp.zero_bubble_h1(p, m), TIMES)
    _holds_every_dependency(h1)
    assert [h1.idle_time(r) for r in range(p)] == [p - 1] * p  # (p − 1)(T_F + T_B − T_W), T = 1
    assert h1.bubble() == Fraction(p - 1, 3 * m + p - 1)
    assert [h1.peak_in_flight(r) for r in range(p)] == [min(p, m)] * p


@pytest.mark.parametrize(("p", "m"), [(4, 8), (8, 16), (8, 32)])
def test_zb_h2_has_no_idle_inside_any_rank_and_holds_2p_minus_1(p, m):
    h2 = pp.simulate(pp.zero_bubble_h2(p, m), TIMES)
    _holds_every_dependency(h2)
    assert [h2.own_span_idle(r) for r in range(p)] == [0] * p
    assert h2.peak_in_flight(0) == 2 * p - 1
    assert [h2.idle_time(r) for r in range(p)] == [p - 1] * p  # only the two slanted edges


# -- bidirectional (C4, C5) ----------------------------------------------------------------


@pytest.mark.parametrize(("d", "n"), [(4, 4), (4, 8), (8, 8), (8, 16), (4, 16), (6, 12), (16, 32)])
def test_chimera_bubble_in_slots_is_d_minus_2_over_2n_plus_d_minus_2(d, n):
    tl = pp.simulate(pp.chimera(d, n), SLOTS)
    _holds_every_dependency(tl)
    assert [tl.idle_time(r) for r in range(d)] == [d - 2] * d
    assert tl.bubble() == Fraction(d - 2, 2 * n + d - 2)
    assert all(tl.peak_in_flight(r) <= d for r in range(d))
    assert tl.placement.weights == 2


@pytest.mark.parametrize(("p", "m"), [(4, 8), (4, 10), (4, 20), (2, 4)])
def test_dualpipe_v_bubble_is_v3_tables_and_holds_pp_plus_1(p, m):
    stages = 2 * p
    tl = pp.simulate(pp.dualpipe_v(p, m), PAIRED)
    _holds_every_dependency(tl)
    assert [tl.idle_time(r) for r in range(p)] == [(Fraction(stages, 2) - 1) * (3 + 2 - 3)] * p
    assert tl.peak_in_flight(0, Fraction(1)) == stages + 1
    assert [tl.placement.stage_of(r, c, 0) for r in range(p) for c in (0, 1)] == [
        s for r in range(p) for s in (r, stages - 1 - r)
    ]


@pytest.mark.parametrize(("p", "m"), [(8, 16), (8, 20), (4, 8)])
def test_dualpipe_bubble_is_v3_tables_with_two_replicas(p, m):
    tl = pp.simulate(pp.dualpipe(p, m), PAIRED)
    _holds_every_dependency(tl)
    assert [tl.idle_time(r) for r in range(p)] == [(Fraction(p, 2) - 1) * 2] * p
    assert tl.peak_in_flight(0) == p + 1
    assert tl.placement.weights == 2


def test_chimera_takes_micro_batches_in_units_of_d():
    with pytest.raises(ValueError, match="multiple of d"):
        pp.chimera(4, 6)


def test_dualpipe_refuses_what_its_reference_refuses():
    with pytest.raises(ValueError, match="m ≥ 2p"):
        pp.dualpipe_v(4, 6)
    with pytest.raises(ValueError, match="even"):
        pp.dualpipe(3, 12)


# -- the trace -----------------------------------------------------------------------------


def test_a_chrome_trace_has_a_process_per_rank_and_bubbles_that_fill_the_idle_time():
    tl = pp.simulate(pp.interleaved(4, 8, 2), pp.Times(chunks=2))
    trace = tl.chrome_trace("VPP")
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    assert names == {r: f"rank {r}" for r in range(4)}
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["name"] for e in slices if e["name"] != "bubble"} == {s.name for s in tl.slots}
    idle = sum(e["dur"] for e in slices if e["name"] == "bubble")
    assert Fraction(idle, 1000) == tl.bubble() * 4 * tl.makespan
    for r in range(4):  # each rank's slices tile [0, makespan] exactly
        mine = sorted((e["ts"], e["ts"] + e["dur"]) for e in slices if e["pid"] == r)
        assert mine[0][0] == 0
        assert mine[-1][1] == tl.makespan * 1000
        assert all(a[1] == b[0] for a, b in itertools.pairwise(mine))


# -- the toy MoE (C8) ----------------------------------------------------------------------


def test_moe_routes_top_8_of_256_plus_1_shared_and_its_backward_is_the_derivative():
    layer = moe.toy(v3.ROUTED_EXPERTS, v3.SHARED_EXPERTS, v3.TOP_K)
    x = np.random.default_rng(3).normal(size=(3, 6))
    grad_out = np.random.default_rng(4).normal(size=x.shape)
    routing = moe.route(layer, x)
    assert routing.chosen.shape == (3, 8)
    assert np.allclose(routing.weights.sum(axis=1), 1)
    assert (routing.weights > 0).all()
    assert moe.copies_per_token(moe.dispatch(layer, routing), 3) == [9, 9, 9]
    back = moe.backward(layer, x, grad_out)
    assert back.pieces == [9, 9, 9]
    assert np.allclose(back.grad_x, moe.finite_difference_grad(layer, x, grad_out), atol=1e-6)
