"""Chapter 1, figures 7–11: depth, the two modes, the activation mountain, the gradient's path, fig-batch."""

import math
from dataclasses import replace

import numpy as np
import pytest
from helpers import in_play_order, refused

from tools.chapters import backprop
from tools.course import catalogue
from tools.models import chain, grad_path, v3

NUMBER_FREE = ("gradient_journey", "batch_comm_vs_compute")

# -- vanishing_gradients -----------------------------------------------------------


def test_endpoints_are_the_pages_and_are_said_in_mandarin():
    facts = catalogue.facts("vanishing_gradients")
    assert facts["shrink_end"].value == pytest.approx(0.8**59, rel=1e-12)
    assert facts["grow_end"].value == pytest.approx(1.2**59, rel=1e-12)
    assert (facts["shrink_end"].text, facts["shrink_end"].spoken) == ("1.9×10⁻⁶", "一点九乘以十的负六次方")
    assert (facts["grow_end"].text, facts["grow_end"].spoken) == ("46,956", "四万六千九百五十六")


def test_running_products_multiply_layer_by_layer():
    for factor in backprop.DEPTH_FACTORS:
        products = chain.running_products(factor, 59)
        assert len(products) == 60
        assert products[0] == 1.0
        assert products[-1] == pytest.approx(factor**59, rel=1e-12)
    assert set(catalogue.facts("vanishing_gradients")["curves"].value["flat"]) == {1.0}


def test_endpoints_are_at_least_ten_decades_apart():
    facts = catalogue.facts("vanishing_gradients")
    gap = math.log10(facts["grow_end"].value / facts["shrink_end"].value)
    assert gap >= 10
    assert facts["decades"].text == "10"
    assert gap == pytest.approx(10.39, abs=0.01)


def test_frame_exit_and_vanishing_layers_are_computed_against_the_frame():
    facts = catalogue.facts("vanishing_gradients")
    ceiling, floor = facts["ceiling"].value, facts["floor"].value
    assert (ceiling, floor) == (1e3, 1e-3)
    exit_layer, vanish_layer = facts["exit_layer"].value, facts["vanish_layer"].value
    assert (exit_layer, vanish_layer) == (38, 31)
    assert 1.2 ** (exit_layer - 1) <= ceiling < 1.2**exit_layer
    assert 0.8 ** (vanish_layer - 1) >= floor > 0.8**vanish_layer
    assert (facts["ceiling"].text, facts["floor"].spoken) == ("10³", "十的负三次方")


def test_other_frames_move_the_layers_the_way_the_catalogue_says():
    grow, shrink = chain.running_products(1.2, 59), chain.running_products(0.8, 59)
    assert [chain.first_above(grow, 10.0**d) for d in (1, 2, 3)] == [13, 26, 38]
    assert [chain.first_below(shrink, 10.0**-d) for d in (2, 3, 4)] == [21, 31, 42]


def test_sigmoid_factor_peaks_at_a_quarter_closed_form_and_on_ten_thousand_samples():
    peak_x, closed = chain.sigmoid_slope_ceiling()
    assert (peak_x, closed) == (0.0, 0.25)
    x, sampled = chain.sampled_ceiling(10_000)
    assert 0.25 - 1e-6 < sampled <= 0.25
    assert abs(x) < 2e-3
    # σ' by finite differences is σ(1−σ): the curve drawn is the sigmoid's slope.
    xs = np.linspace(-6, 6, 25)
    h = 1e-5
    numeric = (chain.sigmoid(xs + h) - chain.sigmoid(xs - h)) / (2 * h)
    assert np.max(np.abs(numeric - chain.sigmoid_slope(xs))) < 1e-9
    facts = catalogue.facts("vanishing_gradients")
    assert (facts["sigmoid_max"].text, facts["sigmoid_max"].spoken) == ("0.25", "零点二五")
    assert (facts["samples"].text, facts["samples"].spoken) == ("10,000", "一万")


def test_the_histories_gaps_are_the_pages():
    facts = catalogue.facts("vanishing_gradients")
    assert facts["year_paper"].value - facts["year_thesis"].value == 3
    assert facts["year_joint"].value - facts["year_thesis"].value == 10
    assert facts["year_thesis"].spoken == "一九九一年"


@pytest.mark.parametrize(
    ("inputs", "fact"),
    [
        ({"factors": (0.8, 1.0, 1.25)}, "grow_end"),
        ({"links": 60}, "shrink_end"),
        ({"decades": (-3, 6)}, "exit_layer"),
        ({"decades": (-9, 3)}, "vanish_layer"),
        ({"samples": 10}, "sigmoid_max (samples)"),
        ({"factors": (0.8, 1.1, 1.2)}, "factors"),
    ],
)
def test_vanishing_gradients_tampered_inputs_are_refused(inputs, fact):
    assert refused(backprop.vanishing_gradients, "vanishing_gradients", **inputs).fact == fact


# -- forward_vs_reverse_mode ----------------------------------------------------------


def test_the_only_number_on_the_modes_figure_is_three_hundred_billion():
    facts = catalogue.facts("forward_vs_reverse_mode")
    shown = {name: f.text for name, f in facts.items() if f.text}
    assert shown == {"params": "三千亿"}
    assert facts["params"].value == 3 * 10**11
    assert facts["params"].spoken == "三千亿"


def test_both_directions_give_the_same_gradient_with_different_pass_counts():
    jacobians = chain.random_chain([6, 5, 4, 3, 1], seed=3)
    front, front_passes = chain.forward_mode(jacobians)
    back, back_passes = chain.reverse_mode(jacobians)
    direct = jacobians[3] @ jacobians[2] @ jacobians[1] @ jacobians[0]
    assert np.allclose(front, direct)
    assert np.allclose(back, direct)
    assert (front_passes, back_passes) == (6, 1)
    # Many outputs, few inputs: now the front is the cheap end.
    wide = chain.random_chain([2, 4, 8], seed=1)
    assert (chain.forward_mode(wide)[1], chain.reverse_mode(wide)[1]) == (2, 8)


def test_modes_tampered_scale_is_refused():
    assert refused(backprop.forward_vs_reverse_mode, "forward_vs_reverse_mode", params=671 * 10**9).fact == "params"


# -- activation_mountain --------------------------------------------------------------


def test_cards_match_the_page():
    facts = catalogue.facts("activation_mountain")
    assert facts["keep_all"].text == "4.15 TiB"
    assert facts["keep_all_gib"].text == "4,245 GiB"
    assert facts["full_recompute"].text == "106.75 GiB"
    assert facts["full_recompute"].value == 61 * 1.75
    assert facts["keep_all"].value == pytest.approx(4.1454, abs=1e-4)
    assert facts["keep_all_gib"].value / facts["full_recompute"].value == pytest.approx(39.8, abs=0.05)
    assert facts["keep_all"].spoken == "四点一五T"
    assert facts["seq"].text == "128K"


def test_b1_tables_and_totals_match_the_page():
    facts = catalogue.facts("activation_mountain")
    attention = [r["size"] for r in facts["attention_rows"].value]
    moe = [r["size"] for r in facts["moe_rows"].value]
    assert attention == [f"{x} GiB" for x in ("1.75", "1.75", "0.75", "0.27", "6.00", "8.00", "4.00", "0.06")]
    assert moe == [f"{x} GiB" for x in ("3.50", "0.06", "15.75", "13.50", "15.75")]
    assert [r["width"] for r in facts["moe_rows"].value][2:] == ["9 × 7,168", "3 × 9 × 2,048", "9 × 7,168"]
    assert facts["attention_rows"].value[3]["width"] == "576 + 512"
    assert facts["attention_rows"].value[-1]["label"] == "logsumexp（fp32）"
    expected = {
        "attention": "22.6 GiB",
        "moe": "48.6 GiB",
        "moe_layer": "71 GiB",
        "dense_layer": "40 GiB",
        "copies_io": "31.5 GiB",
        "entry": "1.75 GiB",
        "copies": "9",
    }
    assert {name: facts[name].text for name in expected} == expected
    assert 58 * facts["moe_layer_exact"].value + 3 * facts["dense_layer_exact"].value == pytest.approx(4244.9, abs=0.05)


def test_the_working_set_that_the_106_75_leaves_out():
    # figures.md D9: one MoE layer being recomputed would add 71.14 GiB.
    assert v3.full_recompute_gib() + v3.moe_layer_gib() == pytest.approx(177.89, abs=0.01)


def test_mountain_peaks_at_the_forward_backward_boundary():
    facts = catalogue.facts("activation_mountain")
    memory = facts["mountain"].value
    steps = facts["steps"].value
    assert len(memory) == 2 * steps + 1
    assert memory.index(max(memory)) == steps == max(memory)
    assert memory == list(range(steps + 1)) + list(range(steps - 1, -1, -1))
    assert (facts["steps"].text, facts["layers"].text) == ("12", "61")


def test_mountain_tampered_config_is_refused(monkeypatch):
    monkeypatch.setattr(v3, "LAYERS", 60)
    assert refused(backprop.activation_mountain, "activation_mountain").fact == "full_recompute"


def test_mountain_tampered_table_row_is_refused(monkeypatch):
    kept = list(v3.MOE_KEPT)
    forgot_shared = replace(v3.DISPATCHED, width=v3.TOP_K * v3.HIDDEN)  # forget the shared expert's copy
    kept[2] = v3.Kept(kept[2].label, (forgot_shared,))
    monkeypatch.setattr(v3, "MOE_KEPT", tuple(kept))
    error = refused(backprop.activation_mountain, "activation_mountain")
    assert error.fact == "keep_all_gib"  # 4,245 GiB no longer comes out
    assert (error.expected, error.computed) == ("4,245", "4,143")


# -- gradient_journey and batch_comm_vs_compute (number-free) -----------------------------


@pytest.mark.parametrize("figure", NUMBER_FREE)
def test_number_free_figures_show_no_numbers(figure):
    facts = catalogue.facts(figure)
    assert all(not f.text and not f.spoken for f in facts.values())
    labels = facts["stations" if figure == "gradient_journey" else "labels"].value
    assert labels
    assert not any(ch.isdigit() for label in labels.values() for ch in label)


def test_averaging_hides_under_backward_and_clipping_cannot():
    plan = grad_path.backward_timeline(**backprop.JOURNEY_TIMELINE)
    assert plan.hidden_share() == pytest.approx(0.75)
    assert plan.clip[0] == plan.all_reduce[-1][1] > plan.backward_end
    assert all(start >= plan.backward[0][0] + backprop.JOURNEY_TIMELINE["bucket"] for start, _ in plan.all_reduce)


def test_accumulation_changes_the_timeline_not_the_total():
    rng = np.random.default_rng(5)
    x, y, w = rng.standard_normal((12, 3)), rng.standard_normal(12), rng.standard_normal(3)
    for micro in (1, 2, 3, 4, 6):
        assert np.allclose(grad_path.accumulated_gradient(x, y, w, micro), grad_path.mse_gradient(x, y, w))


@pytest.mark.parametrize(
    ("inputs", "fact"),
    [
        ({"timeline": {**backprop.JOURNEY_TIMELINE, "comm": 8.0}}, "all-reduce hides"),
        ({"stations": {**backprop.JOURNEY_STATIONS, "reduce": "第2道"}}, "label 'reduce'"),
    ],
)
def test_gradient_journey_tampered_inputs_are_refused(inputs, fact):
    assert refused(backprop.gradient_journey, "gradient_journey", **inputs).fact == fact


def test_communication_is_flat_and_compute_has_a_knee():
    sizes = backprop.BATCH_SIZES
    assert len({grad_path.gradient_payload(b, 16) for b in sizes[:5]}) == 1
    curves = catalogue.facts("batch_comm_vs_compute")["curves"].value
    compute = np.array(curves["compute"])
    batch = np.array(curves["batch"])
    assert np.all(compute[batch <= curves["knee"]] == 1.0)
    assert np.allclose(np.diff(compute[batch >= curves["knee"]]), 4 / curves["knee"])
    assert len(set(curves["comm"])) == 1
    assert curves["share"][0] > curves["share"][-1]


def test_a_larger_batch_finishes_the_epoch_sooner():
    epoch = catalogue.facts("batch_comm_vs_compute")["epoch"].value
    assert epoch["small"]["step"] == epoch["large"]["step"]  # before the knee a step takes as long
    assert epoch["large"]["steps"] < epoch["small"]["steps"]


@pytest.mark.parametrize(
    ("inputs", "fact"),
    [
        ({"knee": 200}, "two segments"),
        ({"labels": {**backprop.BATCH_LABELS, "knee": "拐点 32"}}, "label 'knee'"),
    ],
)
def test_batch_tampered_inputs_are_refused(inputs, fact):
    assert refused(backprop.batch_comm_vs_compute, "batch_comm_vs_compute", **inputs).fact == fact


def test_figures_seven_to_eleven_play_after_the_gates_in_order():
    tail = [
        "gates_circuit",
        "vanishing_gradients",
        "forward_vs_reverse_mode",
        "activation_mountain",
        "gradient_journey",
        "batch_comm_vs_compute",
    ]
    assert in_play_order("backprop", tail) == tail
