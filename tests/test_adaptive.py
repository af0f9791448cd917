"""Chapter 3b, adaptive: each figure's stated assertions, checked against routes of the test's own,
and a tamper per figure (break one input, expect the named FactError)."""

import math

import numpy as np
import pytest
from helpers import in_play_order, refused

from tools.chapters import adaptive
from tools.course import catalogue
from tools.models import learning_rate, moments, msign, tiny_mlp

ORDER = [
    "adagrad_rmsprop_adam_chain",
    "adam_update_rms",
    "muon",
    "weight_update_ratio",
    "lr_schedules",
    "lr_numbers",
    "beta_windows",
    "warmup_explanations",
]


def facts(figure_id):
    return catalogue.facts(figure_id)


def test_figures_play_in_the_issues_order_between_optimizer_and_ledger():
    assert in_play_order("adaptive", ORDER) == ORDER
    order = catalogue.CHAPTER_ORDER
    assert order.index("optimizer") + 1 == order.index("adaptive") == order.index("ledger") - 1


# -- A22 adagrad_rmsprop_adam_chain: the page's five asserts --------------------------------------------
def test_chain_numbers_match_the_page():
    f = facts("adagrad_rmsprop_adam_chain")
    assert f["adagrad_share"].text == "4.1%"
    assert f["rmsprop_first"].text == "32×"
    assert f["adam_peak"].text == "6.6×"
    assert f["adam_peak_step"].value == 12
    assert f["beta2"].text == "0.999"  # D16: 32× needs Adam's β₂, not Hinton's 0.9


def test_assert_1_adagrad_decays_monotonically_as_one_over_root_t():
    steps = moments.adagrad_steps(np.full(600, 3.7))  # any steady gradient
    assert np.all(np.diff(steps) < 0)
    assert np.allclose(steps, 1 / np.sqrt(np.arange(1, 601)))


def test_assert_1_tamper_the_mean_form_does_not_decay():
    err = refused(adaptive.adagrad_rmsprop_adam_chain, "adagrad_rmsprop_adam_chain", adagrad_form="mean")
    assert err.fact == "AdaGrad decays monotonically"


def test_assert_2_adagrad_is_small_by_step_600():
    share = facts("adagrad_rmsprop_adam_chain")["adagrad_share"].value
    assert share == pytest.approx(1 / math.sqrt(600))
    assert share < 0.05


def test_assert_2_tamper_stopping_at_step_60_is_not_small_yet():
    err = refused(adaptive.adagrad_rmsprop_adam_chain, "adagrad_rmsprop_adam_chain", adagrad_until=60)
    assert err.fact == "AdaGrad small by step 60"


def test_assert_3_the_uncorrected_first_step_is_amplified():
    first = moments.adam_steps(np.ones(3), 0.0, 0.999, correct=())[0]
    assert first == pytest.approx(1 / math.sqrt(0.001))
    assert first > 10


def test_assert_3_tamper_hintons_own_decay_amplifies_only_3x():
    err = refused(adaptive.adagrad_rmsprop_adam_chain, "adagrad_rmsprop_adam_chain", beta2=0.9)
    assert err.fact == "first step amplified (uncorrected RMSProp)"
    assert err.computed == pytest.approx(math.sqrt(10))


def test_assert_4_corrected_is_one_from_step_one():
    for beta1 in (0.0, 0.9):
        assert np.allclose(moments.adam_steps(np.full(50, 0.02), beta1, 0.999), 1.0, atol=1e-12)


def test_assert_4_tamper_correcting_only_v_is_not_one():
    err = refused(adaptive.adagrad_rmsprop_adam_chain, "adagrad_rmsprop_adam_chain", correct=("v",))
    assert err.fact == "corrected = 1 from step 1 (Adam)"


def test_assert_5_adams_uncorrected_peak_is_below_rmsprops():
    t = np.arange(1, 3001)
    adam = (1 - 0.9**t) / np.sqrt(1 - 0.999**t)
    assert adam.max() == pytest.approx(6.569, abs=5e-4)
    assert int(adam.argmax()) + 1 == 12
    assert adam.max() < 1 / math.sqrt(1 - 0.999)


def test_assert_5_tamper_without_momentum_adam_is_rmsprop():
    err = refused(adaptive.adagrad_rmsprop_adam_chain, "adagrad_rmsprop_adam_chain", beta1=0.0)
    assert err.fact == "Adam's uncorrected peak below RMSProp's"


# -- B5 adam_update_rms -----------------------------------------------------------------------------------
def test_update_rms_closed_form_and_simulation_agree():
    f = facts("adam_update_rms")
    assert f["closed"].text == "0.2294"
    assert f["simulated"].text == "0.229"
    traces = f["traces"].value
    assert abs(traces["base"][:, 1].mean() - math.sqrt(0.1 / 1.9)) < 0.005
    assert np.allclose(traces["tiny"][:, 1], traces["base"][:, 1], rtol=1e-6)  # the gradient's scale drops out


def test_windows_are_one_over_one_minus_beta():
    f = facts("adam_update_rms")
    assert [f[k].value for k in ("window_short", "window_mid", "window_long")] == pytest.approx([10, 100, 1000])


def test_update_rms_tamper_a_gradient_that_is_signal_not_noise():
    err = refused(adaptive.adam_update_rms, "adam_update_rms", mean=1.0)
    assert err.fact == "simulation agrees with the closed form"


def test_update_rms_tamper_another_beta1_is_not_the_pages_number():
    err = refused(adaptive.adam_update_rms, "adam_update_rms", beta1=0.5)
    assert err.fact == "update RMS closed form (page 0.2294)"


# -- A21 muon ------------------------------------------------------------------------------------------
def test_msign_special_cases():
    rng = np.random.default_rng(7)
    d = rng.standard_normal(5)
    assert np.allclose(msign.msign(np.diag(d)), np.diag(np.sign(d)))
    v = rng.standard_normal((6, 1))
    assert np.allclose(msign.msign(v), v / np.linalg.norm(v))
    m = rng.standard_normal((4, 4))
    o = msign.msign(m)
    assert np.allclose(o.T @ o, np.eye(4))


def test_msign_maximises_the_trace_and_it_equals_the_nuclear_norm():
    f = facts("muon")
    assert f["trace_best"].value == pytest.approx(f["nuclear"].value)
    assert f["rival_best"].value < f["nuclear"].value
    assert f["rival_counts"].value.sum() == f["samples"].value


def test_the_circle_and_the_square_are_msign_of_a_column_and_of_a_diagonal():
    ball = facts("gradient_descent_ball")
    g = ball["gradient_2d"].value
    assert np.allclose(-msign.msign(np.diag(g)).diagonal(), ball["steepest_square"].value)
    assert np.allclose(-msign.msign(g.reshape(-1, 1)).ravel(), ball["steepest_circle"].value, atol=1e-3)


def test_newton_schulz_squeezes_the_singular_values_and_costs_under_one_percent():
    f = facts("muon")
    last = f["spectra"].value[-1]
    assert last.min() > 0.6
    assert last.max() < 1.2
    assert f["overhead"].value == pytest.approx(5 * 16_384 / 16e6)
    assert f["overhead"].value < 0.01
    assert msign.ns_flops(768) / msign.step_flops(768, 524_288) == pytest.approx(msign.ns_overhead_closed(768, 524_288))


def test_muon_tamper_a_diagonal_with_a_zero_is_not_its_sign():
    # msign keeps a direction for a zero singular value too: the element-wise sign only holds for a full-rank diagonal.
    err = refused(adaptive.muon, "muon", diagonal=(2.5, 0.0, 1.2))
    assert err.fact == "diagonal → element-wise sign"


def test_muon_tamper_one_newton_schulz_step_is_not_enough():
    err = refused(adaptive.muon, "muon", ns_steps=1)
    assert err.fact == "Newton–Schulz pulls every singular value toward 1"


# -- A23 weight_update_ratio -----------------------------------------------------------------------------
def test_the_hand_written_backward_is_the_gradient():
    task = tiny_mlp.make_task(3)
    x, y = task.inputs[:5], task.targets[:5]
    analytic = tiny_mlp.loss_and_grads(task.params, x, y)[1]
    for a, n in zip(analytic, tiny_mlp.numeric_grads(task.params, x, y)):
        assert np.allclose(a, n, atol=1e-7)


def test_the_swept_lr_sits_on_the_ruler_and_the_bisected_multiplier_is_the_nan_boundary():
    f = facts("weight_update_ratio")
    sweep = 10 ** f["sweep"].value
    best = sweep[np.argmin(np.abs(np.log(sweep[:, 1] / 1e-3)))]
    assert np.allclose(10 ** np.array(f["chosen"].value), best)
    assert abs(math.log(best[1] / 1e-3)) < math.log(1.15)
    task = tiny_mlp.make_task(0)
    k = f["multiplier"].value
    assert not tiny_mlp.train(task, best[0] * k).finite
    assert tiny_mlp.train(task, best[0] * k * 0.99).finite


def test_the_pages_times_2_1_does_not_reproduce_here():
    f = facts("weight_update_ratio")
    assert f["page_multiplier"].text == "2.1×"
    assert f["multiplier"].value > 2.1 * 5  # ours is far away (D24): shown, not typed
    lr = 10 ** f["chosen"].value[0]
    assert tiny_mlp.train(tiny_mlp.make_task(0), lr * 2.1).finite


def test_bisection_halves_in_log_space_to_one_percent():
    found = tiny_mlp.bisect_boundary(lambda k: k >= 37.0, 1.0, 1000.0)
    assert 37.0 <= found.value < 37.0 * 1.01
    assert all(lo < 37.0 <= hi for lo, hi in found.brackets)
    with pytest.raises(ValueError, match="does not straddle the boundary"):
        tiny_mlp.bisect_boundary(lambda k: False, 1.0, 10.0)


def test_ratio_tamper_a_coarse_sweep_misses_the_ruler():
    err = refused(adaptive.weight_update_ratio, "weight_update_ratio", lrs=np.logspace(-3.5, 0.5, 5))
    assert err.fact == "swept lr lands on the ruler"


def test_ratio_tamper_a_bracket_that_never_overflows():
    err = refused(adaptive.weight_update_ratio, "weight_update_ratio", top_multiplier=20.0)
    assert err.fact == "the bracket straddles NaN"


# -- A24 lr_schedules ------------------------------------------------------------------------------------
def test_schedule_breakpoints_are_token_fractions():
    gpt3 = learning_rate.gpt3_cosine()
    assert gpt3.breakpoints() == pytest.approx([375e6 / 300e9, 260 / 300])
    v3 = learning_rate.v3_wsd(learning_rate.v3_warmup_tokens_closed())
    assert v3.breakpoints()[1:] == pytest.approx([10 / 14.8, 14.3 / 14.8, 14.633 / 14.8])
    assert v3.at(v3.total - 1) == pytest.approx(7.3e-6 / 2.2e-4)


def test_v3_ends_below_the_dashed_line_gpt3_on_it():
    f = facts("lr_schedules")
    assert f["v3_last"].text == "3.3%"
    assert f["v3_last"].value < f["floor"].value
    gpt3, v3 = f["gpt3_curve"].value, f["v3_curve"].value
    assert gpt3[-1, 1] == pytest.approx(0.1)
    assert v3[-1, 1] == pytest.approx(7.3e-6 / 2.2e-4)
    assert f["gpt3_warmup"].text == "0.125%"


def test_the_run_finds_the_phases_without_knowing_them():
    gpt3 = learning_rate.gpt3_cosine()
    seen = learning_rate.tokens_seen(lambda _t: 3.2e6, gpt3.total)
    found = learning_rate.phase_changes(seen, gpt3.at(seen))
    assert np.allclose(np.array(found) / gpt3.total, gpt3.breakpoints(), atol=3e-5)


def test_schedules_tamper_a_cosine_that_ends_at_20_percent():
    err = refused(adaptive.lr_schedules, "lr_schedules", gpt3=learning_rate.gpt3_cosine(floor=0.2))
    assert err.fact == "GPT-3 ends at the dashed line"


# -- B7 + B8 lr_numbers -----------------------------------------------------------------------------------
def test_gpt3_table_and_the_v3_comparison():
    f = facts("lr_numbers")
    assert len(f["rows"].value) == f["sizes"].value == 8  # D5: eight, not seven
    assert f["scale"].text == "1,400×"
    assert f["lr_span"].text == "10×"
    assert f["peak_ratio"].text == "3.7×"
    assert f["interpolated"].value == pytest.approx(0.839e-4, abs=1e-7)
    assert f["page_gap"].text == "2.8×"
    assert f["gap"].text == "2.6×"
    assert [r["params"] for r in f["rows"].value][:2] == ["1.25 亿", "3.5 亿"]


def test_the_best_lr_rises_with_the_batch_but_stays_under_eta_max():
    assert learning_rate.best_lr_fraction(np.array([0.25, 1, 4, 16])) == pytest.approx([0.2, 0.5, 0.8, 16 / 17])
    curve = facts("lr_numbers")["ceiling_curve"].value[:, 1]
    assert np.all(np.diff(curve) > 0)
    assert curve.max() < 1


def test_lr_numbers_tamper_the_pages_seven_sizes():
    err = refused(adaptive.lr_numbers, "lr_numbers", table=learning_rate.GPT3_TABLE_2_1[:7])
    assert err.fact == "Table 2.1 rows (page: 八个规模)"


# -- B6 beta_windows ---------------------------------------------------------------------------------------
def test_palm_table_regenerated():
    rows = facts("beta_windows")["rows"].value
    assert [r["beta"] for r in rows[1:]] == ["0.84151", "0.97488", "0.99602", "0.99937", "0.99990"]
    assert [r["window"] for r in rows] == ["1.0", "6.3", "39.8", "251.2", "1,584.9", "10,000.0"]


def test_rare_token_fixed_window_forgets_palm_remembers():
    f = facts("beta_windows")
    assert f["swing_fixed"].value == pytest.approx(0.99**-1999, rel=1e-6)
    assert f["swing_palm"].value < 2
    assert f["crossing"].value == pytest.approx(100 ** (1 / 0.8))
    assert f["crossing"].text == "316"


def test_beta_tamper_a_token_that_is_not_rare():
    err = refused(adaptive.beta_windows, "beta_windows", period=50)
    assert err.fact == "fixed 0.99 forgets the rare token"


# -- B13 warmup_explanations -------------------------------------------------------------------------------
def test_warmup_lengths_come_from_the_schedules_figure():
    f = facts("warmup_explanations")
    assert f["gpt3_warmup"] is facts("lr_schedules")["gpt3_warmup"]
    assert (f["layers"].value, f["context"].value) == (4, 64)


def test_warmup_tamper_a_study_at_scale_is_not_the_pages():
    err = refused(
        adaptive.warmup_explanations, "warmup_explanations", study={"year": 2024, "layers": 48, "context": 2048}
    )
    assert err.fact == "a study far smaller than the models discussed"
