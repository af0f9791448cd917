"""Chapter 3a, optimizer: every figure's stated assertions, tampers, and the paths the scenes draw."""

import math
import re

import numpy as np
import pytest
from helpers import in_play_order, refused

from tools.chapters import backprop, optimizer
from tools.course import catalogue
from tools.models import circuit, descent
from tools.voice import cues

ORDER = [
    "gradient_descent_ball",
    "saddle_point",
    "saddle_3d_rotating",
    "momentum_escape",
    "learning_rate_two_paths",
    "optimal_step_parabola",
]
NUMBER_FREE = ["gradient_descent_ball", "saddle_point", "saddle_3d_rotating"]


def facts(figure_id):
    return catalogue.facts(figure_id)


def test_figures_play_in_the_issues_order():
    assert in_play_order("optimizer", ORDER) == ORDER


# -- number-free figures ---------------------------------------------------------------
@pytest.mark.parametrize("figure_id", NUMBER_FREE)
def test_number_free_figures_show_and_say_no_number(figure_id):
    assert all(not fact.text for fact in facts(figure_id).values())
    for cue in cues.figure_cues(figure_id):
        assert not re.search(r"\d", cue.caption), cue.caption


def test_saddle_point_gives_no_probability():
    said = "".join(c.caption for c in cues.figure_cues("saddle_point"))
    assert "2" not in said
    assert "−d" not in said
    assert "%" not in said
    assert "不给" in said  # it says it withholds the number, and why


# -- A15 gradient_descent_ball ----------------------------------------------------------
def test_ball_slows_near_the_bottom_and_never_overshoots():
    loss = optimizer.BALL_LOSS
    left, _hump, right = (p.x for p in descent.critical_points(loss, *optimizer.BALL_RANGE))
    run = descent.heavy_ball(loss.grad, 3.2, 0.1, 0.0, 45)
    steps = np.abs(np.diff(run.xs))
    assert np.all(np.diff(steps) < 0)
    assert np.allclose(steps, 0.1 * np.abs(loss.grad(run.xs[:-1])))  # step ∝ slope
    assert run.xs.min() > right
    assert run.xs[-1] == pytest.approx(right, abs=1e-3)
    assert left < 0 < right


def test_two_starts_two_valleys():
    f = facts("gradient_descent_ball")
    left_end, right_end = f["route_left"].value[-1, 0], f["route_right"].value[-1, 0]
    minima = [p.x for p in descent.critical_points(optimizer.BALL_LOSS, *optimizer.BALL_RANGE) if p.kind == "min"]
    assert left_end == pytest.approx(minima[0], abs=1e-3)
    assert right_end == pytest.approx(minima[1], abs=1e-3)
    assert abs(f["route_left"].value[0, 0] - f["route_right"].value[0, 0]) < 1.01  # the starts were close


def test_the_column_is_one_backward_pass_negated():
    values = circuit.forward(backprop.GATES, backprop.GATES_INPUTS)
    grads = circuit.backward(backprop.GATES, values)
    column = dict(facts("gradient_descent_ball")["column"].value)
    assert column == {name: -grads[name] for name in backprop.GATES_INPUTS}
    assert column["a"] == -catalogue.facts("gates_circuit")["grad_a"].value


def test_fastest_depends_on_the_ruler():
    f = facts("gradient_descent_ball")
    g = f["gradient_2d"].value
    assert np.allclose(f["steepest_circle"].value, -g / np.linalg.norm(g), atol=1e-3)
    assert f["steepest_square"].value.tolist() == (-np.sign(g)).tolist()
    # Each is the best of its own ball: nothing on the boundary descends faster.
    assert f["steepest_circle"].value @ g <= (descent.unit_circle(720) @ g).min() + 1e-9
    assert f["steepest_square"].value @ g <= (descent.unit_square(200) @ g).min() + 1e-9


def test_ball_tamper_a_start_that_does_not_reach_is_refused():
    err = refused(optimizer.gradient_descent_ball, "gradient_descent_ball", steps=5)
    assert err.fact == "one ball lands in the valley below its start"


def test_ball_tamper_a_step_too_large_to_slow_down_is_refused():
    err = refused(optimizer.gradient_descent_ball, "gradient_descent_ball", lr=0.6)
    assert err.fact == "steps shrink with the slope"


# -- A16 saddle_point -----------------------------------------------------------------
def test_the_pass_is_a_saddle_with_one_up_and_one_down_cut():
    f = facts("saddle_point")
    assert sorted(f["hessian_signs"].value.tolist()) == [-1.0, 1.0]
    ridge, trail = f["ridge"].value, f["trail"].value
    mid = len(ridge) // 2
    assert ridge[mid, 0] == trail[mid, 0] == 0.0
    assert ridge[mid - 1, 1] > ridge[mid, 1] < ridge[mid + 1, 1]  # curves up
    assert trail[mid - 1, 1] < trail[mid, 1] > trail[mid + 1, 1]  # curves down
    hessian = descent.hessian_2d(optimizer.PASS_TERRAIN, 0.0, 0.0)
    assert hessian[0, 0] < 0 < hessian[1, 1]
    assert abs(hessian[0, 1]) < 1e-6


def test_saddle_tamper_hills_that_merge_are_refused():
    # Peaks so close they fuse into one hill: the pass becomes a hilltop, not a saddle.
    err = refused(optimizer.saddle_point, "saddle_point", terrain=descent.TwoPeaks(d=0.3, width=1.2))
    assert err.fact == "Hessian at the pass has mixed signs"


# -- A17 saddle_3d_rotating ------------------------------------------------------------
def test_plain_descent_grinds_near_the_pass_then_leaves():
    f = facts("saddle_3d_rotating")
    path = f["path"].value
    assert np.allclose(path[:, 2], path[:, 0] ** 2 - path[:, 1] ** 2)  # on z = x² − y²
    moves = np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1)
    near = np.linalg.norm(path[:-1, :2], axis=1) < f["flat_radius"].value
    assert near.sum() > len(moves) / 2
    assert moves[near].max() < moves[~near].max()
    assert abs(path[-1, 1]) > 1.0


def test_saddle_3d_surface_is_x2_minus_y2():
    grid = facts("saddle_3d_rotating")["surface"].value
    assert np.allclose(grid[..., 2], grid[..., 0] ** 2 - grid[..., 1] ** 2)


def test_saddle_3d_tamper_a_start_on_the_ridge_line_is_refused():
    err = refused(optimizer.saddle_3d_rotating, "saddle_3d_rotating", start=(1.4, 0.0))
    assert err.fact == "plain descent leaves the pass"


# -- A18 momentum_escape --------------------------------------------------------------------
def test_pit_and_valley_are_solved_for_and_match_the_page_table():
    points = descent.critical_points(optimizer.MOMENTUM_LOSS, -14, 14)
    page = {2.7063: "min", 6.0535: "max", 8.1015: "min", 12.1788: "max", 13.4168: "min", 0.0: "max"}
    for x, kind in page.items():
        found = [p for p in points if abs(p.x - x) < 1e-4]
        assert len(found) == 1
        assert found[0].kind == kind
    f = facts("momentum_escape")
    assert (f["pit_x"].text, f["valley_x"].text) == ("8.10", "2.71")


def test_plain_stops_in_the_pit_momentum_lands_in_the_valley():
    loss = optimizer.MOMENTUM_LOSS
    plain = descent.heavy_ball(loss.grad, 11.0, 0.5, 0.0, 400)
    heavy = descent.heavy_ball(loss.grad, 11.0, 0.5, 0.9, 400)
    assert plain.xs[-1] == pytest.approx(8.1014, abs=1e-4)
    assert abs(loss.grad(plain.xs[-1])) < 1e-12
    assert heavy.xs[-1] == pytest.approx(2.7062, abs=1e-4)
    assert plain.xs[-1] - heavy.xs[-1] == pytest.approx(5.395, abs=1e-3)


def test_at_the_crossing_gradient_is_near_zero_and_the_move_large():
    f = facts("momentum_escape")
    assert f["cross_step"].value == 4
    assert (f["inertia"].text, f["pull"].text, f["move"].text) == ("\u22121.0165", "0.0023", "\u22121.0142")
    assert f["inertia"].value + f["pull"].value == pytest.approx(f["move"].value, abs=1e-12)
    assert abs(f["pull"].value) < 0.01 * abs(f["move"].value)
    assert abs(f["cross_grad"].value) < 0.005


def test_bars_are_beta_powers_and_the_move_is_their_weighted_sum():
    f = facts("momentum_escape")
    assert np.allclose(f["weights"].value, 0.9 ** np.arange(10))
    heavy = descent.heavy_ball(optimizer.MOMENTUM_LOSS.grad, 11.0, 0.5, 0.9, 60)
    for t in range(60):
        assert descent.unrolled_move(heavy.grads[: t + 1], 0.5, 0.9) == pytest.approx(heavy.moves[t], abs=1e-12)


def test_every_beta_shown_is_in_polyaks_range_and_the_dates():
    f = facts("momentum_escape")
    low, high = f["polyak_low"].value, f["polyak_high"].value
    assert (low, high) == (0.8, 0.99)
    assert all(low <= f[name].value <= high for name in ("beta", "adam_beta1"))
    assert f["backprop_year"].value - f["polyak_year"].value == f["years_earlier"].value == 22
    assert (f["polyak_year"].text, f["polyak_year"].spoken) == ("1964", "一九六四")


def test_momentum_tamper_beta_zero_never_reaches_the_valley():
    err = refused(optimizer.momentum_escape, "momentum_escape", beta=0.0)
    assert err.fact == "momentum lands in the deep valley"
    assert "momentum_escape" in str(err)
    assert "2.706" in str(err)


def test_momentum_tamper_a_beta_below_polyaks_range_also_stalls():
    err = refused(optimizer.momentum_escape, "momentum_escape", beta=0.7)
    assert err.fact == "momentum lands in the deep valley"
    assert "8.1014" in str(err)


def test_momentum_tamper_an_adam_beta_outside_polyaks_range_is_refused(monkeypatch):
    monkeypatch.setattr(optimizer, "ADAM_BETA1", 0.5)
    err = refused(optimizer.momentum_escape, "momentum_escape")
    assert err.fact == "Adam's β₁ in Polyak's range"


def test_momentum_tamper_a_start_whose_crossing_still_feels_the_slope():
    # From x₀ = 10 the heavy ball still reaches the valley, but at the pit the pull is 3% of the move.
    err = refused(optimizer.momentum_escape, "momentum_escape", start=10.0)
    assert err.fact == "gradient ≈ 0 at the crossing"


def test_momentum_tamper_too_few_steps_leave_plain_gd_short_of_zero_gradient():
    err = refused(optimizer.momentum_escape, "momentum_escape", steps=60)
    assert err.fact == "plain GD's gradient there is zero"


# -- A19 learning_rate_two_paths ----------------------------------------------------------------
def test_steps_to_halfway_closed_form_against_the_run():
    f = facts("learning_rate_two_paths")
    assert f["halfway"].value == pytest.approx(math.log(0.5) / math.log(1 - 1.9 / 25))
    assert (f["halfway"].text, f["halfway_run"].text) == ("8.77", "9")
    assert abs(f["halfway_run"].value - f["halfway"].value) <= 1
    assert f["halfway_far"].text == "364.5"
    assert f["kappa_far"].text == "1,000"


def test_threshold_and_five_percent_either_side():
    f = facts("learning_rate_two_paths")
    assert f["threshold"].value == 2
    assert (f["lr_under"].value, f["lr_over"].value) == pytest.approx((1.9, 2.1))
    start = f["start"].value
    for lr, converges in ((1.9, True), (2.1, False)):
        run = descent.quadratic_descent((1 / 25, 1.0), start, lr, 200)
        assert bool(abs(run[-1, 1]) < abs(start[1])) is converges
    assert (f["shrink"].text, f["grow"].text) == ("7.1×10⁻¹⁰", "1.9×10⁸")


def test_the_one_third_at_the_left_end():
    # Defined here (D25): the share of the flat distance to the bottom covered after 100 small steps.
    f = facts("learning_rate_two_paths")
    path = f["path_small"].value
    covered = 1 - path[-1, 0] / path[0, 0]
    assert len(path) == f["crawl_steps"].value + 1
    assert covered == pytest.approx(1 / 3, abs=0.01)
    assert f["crawl_fraction"].text == "1/3"
    assert path[0, 0] < path[-1, 0] < 0  # it covered the left end only


def test_too_large_zigzags_out_of_the_map():
    f = facts("learning_rate_two_paths")
    path = f["path_over"].value
    assert np.all(np.sign(path[1:, 1]) == -np.sign(path[:-1, 1]))
    assert abs(path[-1, 1]) > f["map_height"].value >= np.abs(path[:-1, 1]).max()


def test_learning_rate_units_are_said():
    said = "".join(c.caption for c in cues.figure_cues("learning_rate_two_paths"))
    assert "参数的平方除以损失" in said


def test_lr_tamper_another_small_rate_is_no_longer_a_third():
    err = refused(optimizer.learning_rate_two_paths, "learning_rate_two_paths", lr_small=0.2)
    assert err.fact == "the one-third at the left end"


def test_lr_tamper_a_wider_margin_breaks_the_page_count():
    # 10% under the threshold instead of 5%: the flat direction would need 9.3 steps, not 8.77.
    err = refused(optimizer.learning_rate_two_paths, "learning_rate_two_paths", margin=0.1)
    assert err.fact == "steps to halfway at κ = 25 (page table)"


# -- A20 optimal_step_parabola -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gentle", "steep"])
def test_ratio_is_the_distance_to_the_bottom(name):
    f = facts("optimal_step_parabola")
    a, x = f[f"{name}_a"].value, f[f"{name}_x"].value
    assert f[f"{name}_slope"].value == 2 * a * x
    assert f[f"{name}_curvature"].value == 2 * a
    assert f[f"{name}_step"].value == abs(x)
    assert x - f[f"{name}_slope"].value / f[f"{name}_curvature"].value == 0


def test_the_four_numbers_are_the_recon_ones():
    f = facts("optimal_step_parabola")
    assert [f[f"gentle_{k}"].text for k in ("a", "x", "slope", "curvature", "step")] == ["0.5", "3", "3", "1", "3"]
    assert [f[f"steep_{k}"].text for k in ("a", "x", "slope", "curvature", "step")] == [
        "2",
        "\u22121.5",
        "\u22126",
        "4",
        "1.5",
    ]


def test_parabola_tamper_points_at_different_heights_are_refused():
    err = refused(
        optimizer.optimal_step_parabola, "optimal_step_parabola", points={"steep": (2.0, -1.5), "gentle": (0.5, 2.0)}
    )
    assert err.fact == "both points at the same height"


# -- the scenes draw the simulated paths -----------------------------------------------------------
@pytest.fixture(scope="module")
def scenes():
    from scenes import optimizer as scene_module

    return scene_module


def _iterate_points(axes, loss, xs):
    return np.array([axes.c2p(x, float(loss(x))) for x in xs])


def _positions_during(points, alphas):
    from manim import Dot

    from scenes import widgets

    dot = Dot()
    animation = widgets.roll(dot, points)
    out = []
    for alpha in alphas:
        animation.interpolate_mobject(alpha)
        out.append(dot.get_center().copy())
    return np.array(out)


def test_momentum_balls_move_through_the_simulated_iterates(scenes):
    f = facts("momentum_escape")
    per_step = f["per_step"].value
    from scenes import widgets

    axes = scenes.MomentumEscape.make_axes()
    loss = optimizer.MOMENTUM_LOSS
    for key, beta in (("route_plain", 0.0), ("route_heavy", 0.9)):
        points = widgets.ball_route(axes, f[key].value)
        steps = (len(points) - 1) // per_step
        run = descent.heavy_ball(loss.grad, 11.0, 0.5, beta, steps)
        expected = _iterate_points(axes, loss, run.xs)
        assert np.allclose(points[::per_step], expected, atol=1e-9)
        # Driving the scene's roll animation: at step k's moment, the ball is at iterate k.
        alphas = np.arange(steps + 1) / steps
        assert np.allclose(_positions_during(points, alphas), expected, atol=1e-9)
        # Between iterates the ball stays on the drawn curve.
        on_curve = np.array([axes.p2c(p) for p in points])
        assert np.allclose(on_curve[:, 1], loss(on_curve[:, 0]), atol=1e-9)


def test_descent_ball_routes_are_the_simulated_ones(scenes):
    f = facts("gradient_descent_ball")
    per_step = f["per_step"].value
    from scenes import widgets

    axes = scenes.GradientDescentBall.make_axes()
    loss = optimizer.BALL_LOSS
    hump = next(p.x for p in descent.critical_points(loss, *optimizer.BALL_RANGE) if p.kind == "max")
    for key, start in (("route_roll", 3.2), ("route_left", hump - 0.5), ("route_right", hump + 0.5)):
        run = descent.heavy_ball(loss.grad, start, 0.1, 0.0, 45)
        points = widgets.ball_route(axes, f[key].value)
        assert np.allclose(points[::per_step], _iterate_points(axes, loss, run.xs), atol=1e-9)


def test_valley_paths_on_screen_are_the_simulated_ones(scenes):
    f = facts("learning_rate_two_paths")
    start = f["start"].value
    for key, lr in (("path_over", 2.1), ("path_small", 0.1), ("path_under", 1.9)):
        shown = f[key].value
        run = descent.quadratic_descent((1 / 25, 1.0), start, lr, len(shown) - 1)
        assert np.allclose(scenes.LearningRateTwoPaths.on_map(shown), scenes.LearningRateTwoPaths.on_map(run))


def test_saddle_path_on_screen_is_the_simulated_one(scenes):
    f = facts("saddle_3d_rotating")
    shown = f["path"].value
    run = descent.quadratic_descent((2.0, -2.0), (1.4, 0.001), 0.1, len(shown) - 1)
    expected = np.column_stack([run, run[:, 0] ** 2 - run[:, 1] ** 2])
    assert np.allclose(scenes.Saddle3dRotating.place(shown), scenes.Saddle3dRotating.place(expected))
