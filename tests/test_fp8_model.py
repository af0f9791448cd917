"""The low-precision format engine (tools.models.lowp) against closed forms and against ml_dtypes: every code of
every table, round-to-nearest-even on 200,000 draws and on every exact tie, where ml_dtypes and our quantizer part
ways (beyond the range, E8M0's ties), the scalings, the delayed-scaling loop and the accumulator."""

import math

import ml_dtypes
import numpy as np
import pytest

from tools.models import lowp
from tools.models.lowp import E2M1, E4M3, E4M3_IEEE, E5M2, E8M0

# -- the tables ----------------------------------------------------------------------------


def test_maxima_are_the_closed_forms():
    assert E4M3.max == 1.75 * 2**8 == 448
    assert E5M2.max == 1.75 * 2**15 == 57344
    assert E2M1.max == 1.5 * 2**2 == 6
    assert E8M0.max == 2.0**127


def test_positive_value_counts():
    assert [len(f.positive) for f in (E4M3, E5M2, E2M1)] == [126, 123, 7]
    assert E2M1.positive.tolist() == [0.5, 1, 1.5, 2, 3, 4, 6]
    assert len(E8M0.positive) == 255  # 2⁻¹²⁷ … 2¹²⁷; 0xFF is NaN


def test_least_values_binades_and_spacing():
    assert (E4M3.min_normal, E4M3.min_subnormal) == (2.0**-6, 2.0**-9)
    assert (E5M2.min_normal, E5M2.min_subnormal) == (2.0**-14, 2.0**-16)
    assert (E2M1.min_normal, E2M1.min_subnormal) == (1.0, 0.5)
    assert [f.binades for f in (E4M3, E5M2, E2M1)] == [18, 32, 4]
    assert [f.next_after_one() for f in (E4M3, E5M2, E2M1)] == [1.125, 1.25, 1.5]


def test_specials_of_each_format():
    assert np.isnan(E4M3.codes).sum() == 2  # S.1111.111 only; no infinity
    assert not np.isinf(E4M3.codes).any()
    assert np.isinf(E5M2.codes).sum() == 2  # IEEE: ±inf …
    assert np.isnan(E5M2.codes).sum() == 6  # … and 3 NaN codes of each sign
    assert np.isfinite(E2M1.codes).all()
    assert np.isnan(E8M0.codes).tolist().index(True) == 255


def test_ieee_style_e4m3_stops_at_240():
    assert E4M3_IEEE.max == 240
    assert E4M3_IEEE.binades == 17
    assert len(E4M3.positive) - len(E4M3_IEEE.positive) == 7


@pytest.mark.parametrize("fmt", lowp.FORMATS, ids=lambda f: f.name)
def test_every_code_decodes_as_ml_dtypes_decodes_it(fmt):
    ours, theirs = fmt.codes, lowp.ml_dtypes_codes(fmt)
    assert np.array_equal(ours, theirs, equal_nan=True)


# -- rounding ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", lowp.FORMATS, ids=lambda f: f.name)
def test_quantizer_agrees_with_ml_dtypes_on_200000_draws(fmt):
    x = lowp.log_spread(200_000, fmt, seed=5)
    assert np.array_equal(lowp.quantize(x, fmt), lowp.quantize_ml_dtypes(x, fmt))


@pytest.mark.parametrize("fmt", [E4M3, E5M2, E2M1], ids=lambda f: f.name)
def test_quantizer_agrees_with_the_step_formula(fmt):
    x = lowp.log_spread(200_000, fmt, seed=6)
    assert np.array_equal(lowp.quantize(x, fmt), lowp.quantize_by_formula(x, fmt))


@pytest.mark.parametrize("fmt", [E4M3, E5M2, E2M1], ids=lambda f: f.name)
def test_every_tie_goes_to_the_even_code_as_in_ml_dtypes(fmt):
    ties = np.concatenate([fmt.midpoints, -fmt.midpoints])
    ours = lowp.quantize(ties, fmt)
    assert np.array_equal(ours, lowp.quantize_ml_dtypes(ties, fmt))
    codes = np.searchsorted(fmt.grid, np.abs(ours))  # a non-negative value's code is its index in the grid
    assert (codes % 2 == 0).all()


def test_e8m0_ties_are_where_ml_dtypes_differs():
    """ml_dtypes rounds an exact E8M0 halfway value up (0.75 → 1, 3 → 4); ties-to-even on the code sends every
    other one down. No figure rounds to E8M0 (an MX scale is the floor rule), so no number on screen moves."""
    ties = E8M0.midpoints
    differ = lowp.quantize(ties, E8M0) != lowp.quantize_ml_dtypes(ties, E8M0)
    assert differ.sum() == 127  # every other tie
    assert float(lowp.quantize_ml_dtypes(0.75, E8M0)) == 1.0
    assert float(lowp.quantize(0.75, E8M0)) == 0.5


def test_beyond_the_range_we_clip_and_ml_dtypes_does_not():
    """Transformer Engine clips what exceeds the range, so our quantizer saturates; ml_dtypes' E4M3 gives NaN
    (it has no infinity), E5M2 ±inf, and E2M1 (no specials) saturates as we do."""
    big = np.array([500.0, -1e6])
    assert lowp.quantize(big, E4M3).tolist() == [448.0, -448.0]
    assert np.isnan(lowp.quantize_ml_dtypes(big, E4M3)).all()
    assert lowp.quantize(np.array([1e6]), E5M2).tolist() == [57344.0]
    assert np.isinf(lowp.quantize_ml_dtypes(np.array([1e6]), E5M2)).all()
    assert lowp.quantize(np.array([7.0]), E2M1).tolist() == lowp.quantize_ml_dtypes(np.array([7.0]), E2M1).tolist()
    assert (
        float(lowp.quantize(456.0, E4M3)) == float(lowp.quantize_ml_dtypes(456.0, E4M3)) == 448.0
    )  # rounds, not clips


def test_nan_and_signs():
    q = lowp.quantize(np.array([np.nan, -0.3952, 0.3952]), E4M3)
    assert np.isnan(q[0])
    assert q[1:].tolist() == [-0.40625, 0.40625]


def test_ml_dtypes_names_are_the_installed_ones():
    assert {
        "E4M3": ml_dtypes.float8_e4m3fn,
        "E5M2": ml_dtypes.float8_e5m2,
        "E2M1": ml_dtypes.float4_e2m1fn,
        "E8M0": ml_dtypes.float8_e8m0fnu,
    } == lowp.ml_dtypes_types()


# -- scaling -------------------------------------------------------------------------------


def test_per_tensor_puts_the_max_on_the_max():
    x = np.array([[0.1, -3.0, 2.0]])
    assert lowp.per_tensor(x, E4M3)[0, 1] == -3.0


def test_mx_exponent_is_the_floor_rule_and_can_saturate():
    assert float(lowp.mx_exponent(np.array(26.64), E2M1)) == 2  # ⌊log₂ 26.64⌋ − ⌊log₂ 6⌋ = 4 − 2
    x = np.zeros((1, 32))
    x[0, -1] = -26.64
    assert lowp.mx_blocks(x, E2M1)[0, -1] == -24.0  # 26.64 / 4 > 6: the block's max saturates


def test_bits_per_element():
    assert [lowp.bits_per_element(*a) for a in ((8, 128, 32), (8, 32, 8), (4, 32, 8), (4, 16, 8))] == [
        8.25,
        8.25,
        4.25,
        4.5,
    ]


def test_outlier_tensor_channels():
    x, chosen = lowp.outlier_tensor(100)
    assert x.shape == (64, 1024)
    assert chosen.tolist() == [127, 188, 454, 709]
    assert x[0, 127] == pytest.approx(-26.64, abs=5e-3)


# -- delayed scaling and accumulation ------------------------------------------------------


def test_delayed_scaling_follows_tes_formula():
    z, amax = lowp.amax_trace()
    run = lowp.delayed_scaling(z, amax, history=16, margin=1)
    for t in (1, 30, 100):
        assert run.scale[t] == pytest.approx(448 / amax[max(0, t - 16) : t].max() / 2)
    assert run.scale[0] == pytest.approx(448 / amax[0] / 2)


def test_current_scaling_never_clips():
    z, amax = lowp.amax_trace()
    assert lowp.delayed_scaling(z, amax, algo="current").clipped_steps.tolist() == []


def test_keep_bits_two_routes():
    x = np.random.default_rng(0).uniform(-1e4, 1e4, 10_000)
    assert np.array_equal(lowp.keep_bits(x, 14), lowp.keep_bits_by_frexp(x, 14))
    assert lowp.keep_bits(np.array([1 + 2.0**-13 + 2.0**-14]), 14)[0] == 1 + 2.0**-13  # truncated, not rounded


def test_promotion_sums_runs_of_128_in_float32():
    products = np.full((1, 256), 2.0**-8)
    assert lowp.accumulate_promoted(products, 14, 128)[0] == 1.0
    big = np.concatenate([[2.0**14], np.full(64, 0.25)])[None, :]
    assert lowp.accumulate(big, 14)[0] == 2.0**14  # each 0.25 falls below the 14-bit step of 2¹⁴
    assert math.isclose(lowp.accumulate_promoted(big, 14, 1)[0], 2.0**14 + 16)
