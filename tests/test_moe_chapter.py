"""The moe chapter (专题五): each figure's facts against docs/figures.md, the stated assertions, and a tamper
test per figure (one broken input, the named FactError)."""

import pytest
from helpers import in_play_order, refused

from tools.chapters import moe as chapter
from tools.course import catalogue
from tools.models import router

FIGURES = (
    "moe_softmax_as_soft_max",
    "moe_router_topk",
    "moe_dispatch_permute",
    "moe_capacity_drop",
    "moe_gate_gradient",
    "moe_bias_balancing",
)


def texts(figure, *names):
    facts = catalogue.facts(figure)
    return tuple(facts[name].text for name in names)


def test_the_chapter_follows_pipeline_in_topic_5():
    assert in_play_order("moe", FIGURES) == list(FIGURES)
    order = catalogue.CHAPTER_ORDER
    assert order.index("moe") == order.index("pipeline") + 1
    assert catalogue.chapter("moe").topic.number == "专题五"


def test_softmax_turns_equal_steps_into_equal_ratios_and_sharpens_with_temperature():
    assert texts("moe_softmax_as_soft_max", "step_probs", "e", "shift", "two_way") == (
        "0.0321 0.0871 0.2369 0.6439",
        "2.71828",
        "< 10⁻¹⁵",
        "< 10⁻¹⁵",
    )
    assert texts("moe_softmax_as_soft_max", "logits", "p_max", "argmax", "sigmoid") == (
        "1.098 0.763 −1.150 2.805 0.893 0.059 −1.325 1.001",
        "0.21 0.58 0.91 1.00",
        "3 号",
        "0.9429",
    )
    assert texts("moe_softmax_as_soft_max", "shrunk", "grown", "convex") == ("0.042", "17.4", "0.9816")


def test_router_picks_experts_3_and_0_for_the_token_and_loads_are_uneven():
    assert texts("moe_router_topk", "first", "second", "soft_gates", "sig_gates", "gap") == (
        "3 号",
        "0 号",
        "0.846 0.154",
        "0.557 0.443",
        "0.289",
    )
    assert texts("moe_router_topk", "loads", "busiest_ratio", "same_sets", "v3_used", "v3_used_pct") == (
        "3 4 6 4 4 6 3 2",
        "1.50×",
        "16/16",
        "9/257",
        "3.50%",
    )


def test_dispatch_is_a_stable_sort_and_the_all_to_all_is_uneven():
    assert texts("moe_dispatch_permute", "buffer", "offsets", "row_sums", "col_sums", "round_trip") == (
        "词元计个两位做每个去两专算词家里算每只里计只去位专家。元那。那做",
        "0 3 7 13 17 21 27 30",
        "8 8 8 8",
        "7 10 10 5",
        "< 10⁻¹²",
    )
    assert catalogue.facts("moe_dispatch_permute")["sends"].value == [
        [3, 3, 1, 1],
        [2, 2, 4, 0],
        [0, 3, 3, 2],
        [2, 2, 2, 2],
    ]


def test_capacity_trades_drops_for_padding():
    assert texts("moe_capacity_drop", "capacities", "drops", "empty", "padded", "dropped_text", "lost_both") == (
        "4 5 6 8",
        "4 2 0 0",
        "4 10 16 32",
        "50%",
        "位→5、专→2、家→5、算→2",
        "0",
    )


def test_the_gradient_reaches_only_the_chosen_experts():
    assert texts("moe_gate_gradient", "renorm_up", "renorm_down", "moved_renorm", "moved_full", "idle") == (
        "5.52",
        "−5.52",
        "2",
        "8",
        "6",
    )
    assert texts("moe_gate_gradient", "full", "fd_renorm", "fd_full") == (
        "−1.97 −1.53 −0.23 8.36 −1.74 −0.76 −0.19 −1.94",
        "< 10⁻⁸",
        "< 10⁻⁸",
    )
    grads = catalogue.facts("moe_gate_gradient")["weight_grads"].value
    assert [g > 0 for g in grads] == [e in (0, 3) for e in range(8)]


def test_bias_balancing_relaxes_the_load_and_leaves_the_gates_alone():
    assert texts("moe_bias_balancing", "step0", "start_ratio", "mark_ratios", "late", "below") == (
        "64 57 6 64 139 2 76 71 6 42 10 11 39 95 117 225",
        "3.52×",
        "3.52 2.80 1.80 1.23",
        "1.25×",
        "106",
    )
    assert texts("moe_bias_balancing", "bias_low", "bias_high", "changed", "stat_start", "stat_end", "gamma") == (
        "−0.147",
        "0.197",
        "341/512",
        "1.17",
        "1.01",
        "0.001",
    )


# -- tamper tests: one broken input, the named check ------------------------------------------------------


def test_unequal_steps_are_refused():
    err = refused(chapter.moe_softmax_as_soft_max, "moe_softmax_as_soft_max", steps=(0.0, 1.0, 2.0, 4.0))
    assert err.fact.startswith("softmax([0,1,2,3])")


def test_another_router_matrix_is_refused():
    err = refused(chapter.moe_router_topk, "moe_router_topk", engine=router.make(seed=1))
    assert "「词」" in err.fact


def test_another_card_layout_is_refused():
    assert refused(chapter.moe_dispatch_permute, "moe_dispatch_permute", cards=2).fact == "send counts"


def test_another_capacity_factor_is_refused():
    err = refused(chapter.moe_capacity_drop, "moe_capacity_drop", factors=(1.0, 1.5, 1.5, 2.0))
    assert err.fact == "capacity per expert"


def test_a_coarse_finite_difference_is_refused():
    err = refused(chapter.moe_gate_gradient, "moe_gate_gradient", eps=1e-2)
    assert err.fact == "renormalised: analytic − finite differences"


@pytest.mark.parametrize("gamma", [0.002, 0.0])
def test_another_gamma_is_refused(gamma):
    err = refused(chapter.moe_bias_balancing, "moe_bias_balancing", gamma=gamma)
    assert err.fact.startswith("busiest / mean at step")
