"""The moe chapter's engine (tools.models.router): softmax and sigmoid against their closed forms, top-k,
dispatch and combine as a permutation and its inverse, the capacity queue, the gates' gradient against
finite differences, and the bias-balancing loop's invariants."""

import math

import numpy as np
import pytest

from tools.models import router


def test_softmax_is_shift_invariant_and_sums_to_one():
    z = np.random.default_rng(0).standard_normal((5, 8))
    p = router.softmax(z)
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-15)
    assert np.allclose(router.softmax(z + 100.0), p, atol=1e-15)
    assert np.all(router.softmax(np.array([0.0, 1000.0])) == np.array([0.0, 1.0]))  # no overflow


def test_equal_differences_become_equal_ratios():
    p = router.softmax(np.array([0.0, 1.0, 2.0, 3.0]))
    assert p[1:] / p[:-1] == pytest.approx([math.e] * 3, rel=1e-12)


def test_sigmoid_is_the_two_way_softmax():
    for z in np.linspace(-6, 6, 25):
        assert router.sigmoid(np.array(z)) == pytest.approx(router.softmax(np.array([z, 0.0]))[0], abs=1e-15)


def test_the_same_character_gets_the_same_vector():
    assert np.array_equal(router.embed("词"), router.embed("词"))
    engine = router.make("词词")
    assert np.array_equal(engine.logits[0], engine.logits[1])


def test_top_k_is_stable_and_gates_sum_to_one():
    scores = np.array([[0.5, 0.9, 0.9, 0.1]])
    assert router.top_k(scores, 2).tolist() == [[1, 2]]  # a tie goes to the lower expert id
    g = router.gates(scores, router.top_k(scores, 2))
    assert g.tolist() == [[0.5, 0.5]]


def test_dispatch_sorts_by_expert_and_combine_undoes_it():
    chosen = np.array([[2, 0], [0, 1], [2, 1]])
    plan = router.dispatch(chosen, 3)
    assert plan.expert[plan.order].tolist() == [0, 0, 1, 1, 2, 2]
    assert plan.token[plan.order].tolist() == [0, 1, 1, 2, 0, 2]  # stable: token order within an expert
    assert plan.offsets.tolist() == [0, 2, 4]
    x = np.arange(12.0).reshape(3, 4)
    weights = np.array([[0.25, 0.75], [0.5, 0.5], [1.0, 0.0]])
    buffer = x[plan.token[plan.order]]  # identity experts
    assert np.allclose(router.combine(buffer, plan, weights), x)


def test_send_counts_rows_are_what_each_card_holds():
    chosen = np.array([[0, 3], [1, 2], [2, 3], [3, 0]])
    counts = router.send_counts(chosen, cards=2, experts=4)
    assert counts.tolist() == [[2, 2], [1, 3]]
    assert counts.sum(axis=1).tolist() == [4, 4]


def test_drops_are_the_overflow_when_first_choices_fit():
    chosen = np.array([[0, 1], [0, 1], [0, 2], [1, 0]])
    cap = router.capacity(1.0, tokens=4, k=2, experts=3)
    assert cap == 3  # ⌈8 / 3⌉
    seating = router.seat(chosen, cap, 3)
    load = router.loads(chosen, 3)
    assert len(seating.dropped) == int(np.maximum(load - cap, 0).sum()) == 1
    assert seating.dropped == ((3, 0, 1),)  # second choices queue after every first choice
    assert seating.empty == 3 * cap - (8 - 1)


def test_capacity_rounds_up():
    assert [router.capacity(cf, 16, 2, 8) for cf in (1.0, 1.25, 1.5, 2.0)] == [4, 5, 6, 8]
    assert router.capacity(1.1, 16, 2, 8) == 5


@pytest.mark.parametrize("renormalised", [True, False])
def test_logit_gradients_match_finite_differences(renormalised):
    rng = np.random.default_rng(3)
    z, outs, target = rng.standard_normal(6), rng.standard_normal((2, 5)), rng.standard_normal(5)
    chosen = router.top_k(z[None, :], 2)[0]

    def gates(zz):
        return router.softmax(zz[chosen]) if renormalised else router.softmax(zz)[chosen]

    def loss(zz):
        y = gates(zz) @ outs
        return 0.5 * float((y - target) @ (y - target))

    g = gates(z)
    dl_dg = outs @ (g @ outs - target)
    grad = (router.logit_grad_renormalised if renormalised else router.logit_grad_softmax)(z, chosen, dl_dg)
    assert np.allclose(grad, router.central_difference(loss, z), atol=1e-8)
    if renormalised:
        assert np.count_nonzero(grad) == 2
        assert grad.sum() == pytest.approx(0.0, abs=1e-12)


def test_balancing_keeps_the_total_load_and_moves_the_bias_by_gamma():
    run = router.balancing(experts=4, dim=8, tokens=64, steps=20)
    assert set(run.loads.sum(axis=1).tolist()) == {64 * 2}
    steps = np.diff(np.vstack([np.zeros(4), run.bias]), axis=0)
    assert set(np.round(np.abs(steps) / run.gamma, 9).ravel().tolist()) <= {0.0, 1.0}  # ±γ, or 0 when exactly even


def test_the_balance_statistic_is_one_when_everything_is_even():
    affinities = np.full((4, 4), 0.5)
    chosen = np.array([[0, 1], [2, 3], [0, 1], [2, 3]])
    assert router.balance_statistic(affinities, chosen) == pytest.approx(1.0)
