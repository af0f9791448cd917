"""Chapter 1, figures 1–5: exchange rate, finite differences, first gradient, 3B1B nudges, two matmuls."""

import math

import numpy as np
import pytest
from helpers import in_play_order, refused

from tools.chapters import backprop
from tools.course import catalogue
from tools.course.facts import Check
from tools.models import gradients, timespan
from tools.voice import cues

MINUS = "\u2212"

# -- exchange_rate ---------------------------------------------------------------


def test_exchange_rate_divides_the_nudge_and_multiplies_the_chain():
    facts = catalogue.facts("exchange_rate")
    assert [facts[k].text for k in ("x_before", "x_after", "y_before", "y_after")] == ["5.00", "5.03", "10.00", "10.06"]
    assert [facts[f"moved_{i}"].text for i in range(4)] == ["0.03", "0.06", "0.03", "0.09"]
    assert facts["rate_a"].value == pytest.approx(0.06 / 0.03)
    assert [facts[f"link_{i}"].text for i in (1, 2, 3)] == ["2", "0.5", "3"]
    assert facts["total"].value == pytest.approx(math.prod(backprop.EXCHANGE_LINKS)) == pytest.approx(3.0)
    assert facts["total"].value == pytest.approx(facts["moved_3"].value / facts["moved_0"].value)
    assert facts["shrinking_link"].value == [2]
    assert facts["x_after"].spoken == "五点零三"


def test_exchange_rate_total_must_be_the_pages_product():
    err = refused(backprop.exchange_rate, "exchange_rate", links=(2.0, 0.5, 4.0))
    assert err.fact == "total"
    assert "expected 3.0" in str(err)


def test_exchange_rate_needs_a_shrinking_link():
    # 2 × 1.5 × 1 is still 3, but nothing shrinks: the page's second assert.
    err = refused(backprop.exchange_rate, "exchange_rate", links=(2.0, 1.5, 1.0))
    assert err.fact == "one link shrinks"


# -- finite_differences ----------------------------------------------------------


def test_brute_force_takes_nearly_ten_thousand_years():
    facts = catalogue.facts("finite_differences")
    years = 3e11 / (365.25 * 24 * 3600)
    assert facts["years"].value == pytest.approx(years)
    assert 9_000 < facts["years"].value < 10_000
    assert (facts["years"].text, facts["years"].spoken) == ("9,506 年", "九千五百零六年")
    assert (facts["parameters"].text, facts["parameters"].spoken) == ("三千亿", "三千亿")
    assert facts["seconds"].text == "3×10¹¹"
    assert facts["year_seconds"].text == "31,557,600 秒"
    assert facts["nearly"].text == "将近一万年"


def test_the_counter_races_to_every_parameter_and_the_same_total():
    counter = catalogue.facts("finite_differences")["counter"].value
    assert counter[0] == {"parameters": "1", "elapsed": "1 秒", "share": pytest.approx(1 / 3e11)}
    assert counter[-1]["parameters"] == "300,000,000,000"
    assert counter[-1]["elapsed"] == "9,506 年"
    assert counter[-1]["share"] == 1.0
    by_count = {row["parameters"]: row["elapsed"] for row in counter}
    assert by_count["10,000"] == "2.8 小时"
    assert by_count["1,000,000"] == "11.6 天"
    assert by_count["10,000,000,000"] == "317 年"
    shares = [row["share"] for row in counter]
    assert shares == sorted(shares)


def test_calendar_count_agrees_with_the_julian_year():
    assert timespan.calendar_years(365 * timespan.DAY) == pytest.approx(1.0)  # year 1 is not a leap year
    assert timespan.calendar_years(3e11) == pytest.approx(timespan.years(3e11), abs=0.5)


def test_a_second_model_scale_is_refused():
    # figures.md D14: 671B parameters would be 21,263 years, not 将近一万年.
    err = refused(backprop.finite_differences, "finite_differences", parameters=671_000_000_000)
    assert err.fact == "nearly ten thousand years"
    assert "21262" in str(err)


def test_a_slower_forward_is_refused_against_the_catalogue_value():
    err = refused(backprop.finite_differences, "finite_differences", seconds_per_forward=1.03)
    assert err.fact == "years"


# -- first_gradient --------------------------------------------------------------


def test_first_gradient_is_prediction_minus_truth():
    facts = catalogue.facts("first_gradient")
    assert facts["chars"].value[:2] == ["的", "了"]
    assert [facts[f"p_{i}"].text for i in range(5)] == ["0.3", "0.2", "0.2", "0.2", "0.1"]
    assert [facts[f"y_{i}"].text for i in range(5)] == ["1", "0", "0", "0", "0"]
    assert [facts[f"seed_{i}"].text for i in range(5)] == [f"{MINUS}0.7", "+0.2", "+0.2", "+0.2", "+0.1"]
    assert (facts["seed_0"].spoken, facts["seed_1"].spoken) == ("负零点七", "正零点二")
    p = gradients.softmax(np.array(backprop.NEXT_LOGITS))
    assert facts["seed_values"].value == pytest.approx((p - np.eye(5)[0]).tolist())
    assert sum(facts["seed_values"].value) == pytest.approx(0.0, abs=1e-12)
    assert facts["loss"].text == "1.21"
    assert facts["loss"].value == pytest.approx(-math.log(p[0]))


def test_seed_agrees_with_finite_differences_on_the_logits():
    facts = catalogue.facts("first_gradient")
    # The bound the check asserts, not the residual itself, which is float noise.
    assert (facts["fd_error"].text, facts["fd_error"].spoken) == ("< 10⁻⁸", "小于十的负八次方")
    z = np.array(backprop.NEXT_LOGITS)
    numeric = gradients.numeric_gradient(lambda v: gradients.cross_entropy(v, 0), z)
    assert numeric == pytest.approx(gradients.cross_entropy_logit_gradient(z, 0), abs=1e-8)


def test_the_seed_is_not_the_derivative_with_respect_to_the_probabilities():
    # ∂(−ln p₀)/∂p₀ = −1/p₀ ≈ −3.3 and 0 elsewhere: not p − y.
    p = gradients.softmax(np.array(backprop.NEXT_LOGITS))
    by_probability = gradients.numeric_gradient(lambda q: float(-np.log(q[0])), p)
    assert by_probability[0] == pytest.approx(-1 / p[0], rel=1e-6)
    assert not np.allclose(by_probability, p - np.eye(5)[0], atol=0.1)


def test_logits_that_break_the_pages_probabilities_are_refused():
    err = refused(backprop.first_gradient, "first_gradient", logits=(2.0, 2.0, 1.6, 1.6, 0.9))
    assert err.fact == "p(了)"
    assert "expected 0.2" in str(err)
    assert "computed 0.3" in str(err)
    assert refused(backprop.first_gradient, "first_gradient", logits=(3.0, 1.6, 1.6, 1.6, 0.9)).fact == "p(的)"


# -- backprop_nudge_3b1b ---------------------------------------------------------


def test_nudge_figure_is_number_free():
    facts = catalogue.facts("backprop_nudge_3b1b")
    assert all(not fact.text for fact in facts.values())
    assert all(
        "{" not in cue.caption and not any(ch.isdigit() for ch in cue.caption)
        for cue in cues.figure_cues("backprop_nudge_3b1b")
    )
    assert all(
        "赫布" not in cue.caption and "Hebb" not in cue.caption for cue in cues.figure_cues("backprop_nudge_3b1b")
    )


def test_nudges_follow_how_far_off_and_upstream_brightness():
    facts = catalogue.facts("backprop_nudge_3b1b")
    wish, p = np.array(facts["wish"].value), np.array(facts["brightness"].value)
    assert wish == pytest.approx(np.eye(5)[0] - p)  # pushed by truth minus prediction
    assert p == pytest.approx(gradients.softmax(np.array(backprop.NEXT_LOGITS)))  # first_gradient's prediction
    weights_in = np.array(facts["weight_nudge"].value)
    upstream = np.array(facts["upstream"].value)
    assert weights_in / upstream == pytest.approx(np.full(4, wish[0]))  # ∝ upstream activation
    assert np.argmax(weights_in) == np.argmax(upstream)


def test_the_layer_below_gets_every_outputs_request_added_up():
    facts = catalogue.facts("backprop_nudge_3b1b")
    w = np.array(backprop.NUDGE_WEIGHTS)
    wish = np.array(facts["wish"].value)
    assert facts["target_request"].value == pytest.approx((w[0] * wish[0]).tolist())
    assert facts["previous_nudge"].value == pytest.approx((w.T @ wish).tolist())
    assert not np.allclose(facts["previous_nudge"].value, facts["target_request"].value)


def test_the_average_pleases_no_single_example():
    facts = catalogue.facts("backprop_nudge_3b1b")
    wishes, average = np.array(facts["wishes"].value), np.array(facts["average"].value)
    assert average == pytest.approx(wishes.mean(axis=0))
    for row, (_context, char) in zip(wishes, backprop.NUDGE_CONTEXTS):
        i = backprop.NEXT_CHARS.index(char)
        assert average[i] < row[i]


def test_contexts_that_all_want_the_same_character_are_refused():
    same = (("这是我", "的"), ("他说的", "的"), ("好", "的"))
    err = refused(backprop.backprop_nudge_3b1b, "backprop_nudge_3b1b", contexts=same)
    assert err.fact == "average does not please 这是我"


# -- layer_two_matmuls -----------------------------------------------------------


def test_layer_shapes_on_screen_are_the_real_ones():
    facts = catalogue.facts("layer_two_matmuls")
    shapes = {
        k: facts[k].text
        for k in (
            "x_shape",
            "w_shape",
            "y_shape",
            "upstream_shape",
            "wt_shape",
            "xt_shape",
            "grad_input_shape",
            "grad_weight_shape",
        )
    }
    assert shapes == {
        "x_shape": "4×3",
        "w_shape": "3×2",
        "y_shape": "4×2",
        "upstream_shape": "4×2",
        "wt_shape": "2×3",
        "xt_shape": "3×4",
        "grad_input_shape": "4×3",
        "grad_weight_shape": "3×2",
    }
    assert np.shape(facts["upstream"].value) == np.shape(facts["y"].value)  # not a single number
    assert np.shape(facts["grad_input"].value) == np.shape(facts["x"].value)
    assert np.shape(facts["grad_weight"].value) == np.shape(facts["w"].value)
    assert facts["upstream_shape"].spoken == "四乘二"


def test_both_backward_matmuls_match_finite_differences():
    facts = catalogue.facts("layer_two_matmuls")
    x, w, y = (np.array(facts[k].value) for k in ("x", "w", "y"))
    truth = y - np.array(facts["upstream"].value)  # upstream = Y − T
    numeric_x = gradients.numeric_gradient(lambda v: gradients.squared_error(v @ w, truth), x)
    numeric_w = gradients.numeric_gradient(lambda v: gradients.squared_error(x @ v, truth), w)
    assert np.array(facts["grad_input"].value) == pytest.approx(numeric_x, abs=1e-6)
    assert np.array(facts["grad_weight"].value) == pytest.approx(numeric_w, abs=1e-6)


def test_forward_one_plus_backward_two_is_three():
    facts = catalogue.facts("layer_two_matmuls")
    assert (facts["forward_matmuls"].value, facts["backward_matmuls"].value, facts["ratio"].value) == (1, 2, 3)
    assert facts["backward_matmuls"].spoken == "两"
    assert facts["flops_each"].value == 2 * 4 * 3 * 2
    tape = gradients.Tape()
    gradients.linear_backward(np.ones((4, 2)), np.ones((4, 3)), np.ones((3, 2)), tape)
    assert (tape.matmuls, tape.flops) == (2, 2 * 48)


def test_throwing_the_forward_input_away_breaks_the_weight_gradient():
    err = refused(backprop.layer_two_matmuls, "layer_two_matmuls", keep_input=False)
    assert err.fact == "② weight gradient (finite differences)"


def test_the_ratio_is_three_at_any_layer_size():
    facts = backprop.layer_two_matmuls(Check("layer_two_matmuls"), shape={"tokens": 7, "inputs": 5, "outputs": 3})
    assert facts["ratio"].value == 3
    assert facts["flops_each"].value == 2 * 7 * 5 * 3


# -- the chapter -----------------------------------------------------------------


def test_figures_play_before_gates_circuit_in_the_issues_order():
    head = [
        "exchange_rate",
        "finite_differences",
        "first_gradient",
        "backprop_nudge_3b1b",
        "layer_two_matmuls",
        "gates_circuit",
    ]
    assert in_play_order("backprop", head) == head
