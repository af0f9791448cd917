"""The μP chapter's engines against closed forms: the MLP in SP and μP (tools/models/mup_mlp.py) and the
random-matrix experiments (tools/models/wide_init.py)."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from tools.models import mup_mlp as mlp
from tools.models import wide_init as wi


@pytest.fixture(autouse=True)
def one_blas_thread():
    with threadpool_limits(1):
        yield


# -- the MLP -------------------------------------------------------------------------------------


def test_at_the_base_width_sp_and_mup_are_the_same_model():
    sp, mu = mlp.init(mlp.N0, "sp"), mlp.init(mlp.N0, "mup")
    assert (sp.multiplier, mu.multiplier) == (1.0, 1.0)
    assert sp.lr_factors == mu.lr_factors == (1.0, 1.0, 1.0)
    for a, b in zip(sp.weights, mu.weights):
        np.testing.assert_array_equal(a, b)
    lrs = [2.0**-8, 2.0**-5, 2.0**-2]
    np.testing.assert_array_equal(mlp.train(mlp.N0, "sp", lrs, 5).mse, mlp.train(mlp.N0, "mup", lrs, 5).mse)


def test_away_from_the_base_width_the_rules_are_the_packages():
    n = 4 * mlp.N0
    mu = mlp.init(n, "mup")
    assert mu.multiplier == mlp.N0 / n  # MuReadout: input × 1/width_mult
    assert mu.lr_factors == (1.0, mlp.N0 / n, 1.0)  # MuAdam: matrix-like lr / width_mult, vector-like kept
    assert mlp.init(n, "sp").lr_factors == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("n", [32, 256, 1024])
def test_mups_effective_readout_has_variance_n0_over_n_squared(n):
    draws = np.concatenate([mlp.init(n, "mup", seed).weights[2].ravel() for seed in range(40)])
    effective = draws * mlp.N0 / n
    assert effective.var() == pytest.approx(mlp.N0 / n**2, rel=0.1)


def test_gradients_match_central_differences():
    x, t = mlp.task()
    model = mlp.init(8, "mup", seed=3)
    _, grads = mlp.gradients(model, x, t)
    h = 1e-6
    for i, w in enumerate(model.weights):
        for index in [(0, 0, 0), (0, w.shape[1] - 1, w.shape[2] - 1), (0, 1, 0)]:
            bumped = [v.copy() for v in model.weights]
            bumped[i][index] += h
            up = mlp.loss(mlp.Model(tuple(bumped), model.multiplier, model.lr_factors), x, t)[0]
            bumped[i][index] -= 2 * h
            down = mlp.loss(mlp.Model(tuple(bumped), model.multiplier, model.lr_factors), x, t)[0]
            assert grads[i][index] == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-9)


def test_one_adam_step_is_the_textbook_formula():
    x, t = mlp.task()
    model = mlp.init(16, "mup")
    lr = 2.0**-5
    _, grads = mlp.gradients(model, x, t)
    after = mlp.adam(model, np.array([lr]), 1, keep_passes=True).passes[-1]
    weights = []
    for w, g, factor in zip(model.weights, grads, model.lr_factors):
        m_hat = 0.1 * g / (1 - 0.9)
        v_hat = 0.001 * g * g / (1 - 0.999)
        weights.append(w - lr * factor * m_hat / (np.sqrt(v_hat) + 1e-8))
    expected = mlp.forward(mlp.Model(tuple(weights), model.multiplier, model.lr_factors), x)
    np.testing.assert_allclose(after.y, expected.y, rtol=1e-12, atol=1e-14)


def test_a_sweep_trains_each_learning_rate_as_its_own_run():
    lrs = [2.0**-9, 2.0**-4]
    together = mlp.train(64, "sp", lrs, 4).mse
    alone = [mlp.train(64, "sp", [lr], 4).mse[0] for lr in lrs]
    np.testing.assert_allclose(together, alone, rtol=1e-12)


def test_the_teacher_sets_the_dead_networks_loss():
    _, t = mlp.task()
    # a network whose ReLUs all died outputs 0: its MSE is mean(t²), the plateau of the widest rates
    assert np.log10(np.mean(t**2)) == pytest.approx(0.1368, abs=1e-4)


def test_the_readout_in_table_3_form_trains_the_same_function():
    assert mlp.equivalent_readout(128, 2.0**-5, 3) < 1e-4


def test_the_first_order_term_is_the_loss_change_of_a_tiny_sign_step():
    for parametrization in mlp.PARAMETRIZATIONS:
        ((first, actual),) = mlp.first_order_loss_change(64, parametrization, [1e-7])
        assert actual == pytest.approx(first, rel=1e-3)


# -- random matrices -------------------------------------------------------------------------------


def test_variance_one_grows_the_rms_by_20_log10_sqrt_n_over_20_layers():
    n, layers = 512, 20
    kept = np.log10(wi.depth_walk(1 / n, layers, n))
    grown = np.log10(wi.depth_walk(1.0, layers, n))
    shrunk = np.log10(wi.depth_walk(1 / n**2, layers, n))
    closed = layers * np.log10(np.sqrt(n))  # 27.09
    assert closed == pytest.approx(27.093, abs=1e-3)
    # the walks share their draws: the scale is the only difference, exactly √(n·var) per layer
    np.testing.assert_allclose(grown - kept, np.arange(layers + 1) * np.log10(np.sqrt(n)), atol=1e-9)
    np.testing.assert_allclose(kept - shrunk, np.arange(layers + 1) * np.log10(np.sqrt(n)), atol=1e-9)
    assert grown[-1] == pytest.approx(grown[0] + closed, abs=0.1)


def test_relu_halves_the_square_and_he_restores_it():
    n = 512
    plain, he = wi.depth_walk(1 / n, 20, n, relu=True), wi.depth_walk(2 / n, 20, n, relu=True)
    np.testing.assert_allclose(he / plain, 2.0 ** (np.arange(21) / 2), rtol=1e-9)  # ReLU is homogeneous


@pytest.mark.parametrize(("variance", "forward", "backward"), [(1 / 512, 1.0, 2.0), (1 / 2048, 0.5, 1.0)])
def test_a_rectangular_layer_scales_forward_by_fan_in_and_backward_by_fan_out(variance, forward, backward):
    ratios = wi.rectangular(variance)
    assert ratios == pytest.approx((forward, backward), rel=0.03)


def test_an_orthogonal_matrix_keeps_every_singular_value_at_1_and_a_gaussian_one_does_not():
    assert wi.orthogonal_deviation(64) < 1e-14
    stats = wi.matrix_stats(64, vectors=200)
    assert stats.singular_values[0] > 1.8
    assert stats.singular_values[-1] < 0.1
    np.testing.assert_allclose(
        np.sort(stats.singular_values) ** 2, np.linalg.eigvalsh(wi.gaussian(64).T @ wi.gaussian(64)), rtol=1e-9
    )


def test_adams_first_step_moves_every_coordinate_by_eta_times_the_l1_norm():
    step = wi.adam_step(128, 2.0**-5)
    x, _ = wi.step_vectors(128)
    assert step.l1_term == pytest.approx(2.0**-5 * np.abs(x).sum(), rel=1e-15)
    assert step.update == pytest.approx(step.l1_term, rel=1e-12)
    assert wi.adam_sign_gap(64) < 1e-3


def test_blocked_draws_are_the_whole_matrix_draws():
    n = 96
    x, _ = wi.step_vectors(n)
    w = np.random.default_rng(wi.STEP_W_SEED).standard_normal((n, n)) / np.sqrt(n)
    assert wi.adam_step(n, 1.0, block=32).init == pytest.approx(wi.rms(w @ x), rel=1e-12)
