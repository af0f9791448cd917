"""The μP chapter (专题八): each figure's facts against the values docs/figures.md lists for it, and a tamper
test per figure."""

import numpy as np
import pytest
from helpers import in_play_order, refused

from tools.chapters import mup as chapter
from tools.course import catalogue
from tools.course.facts import power

FIGURES = ("mup_random_matrix", "mup_rms_through_depth", "mup_adam_update_scale", "mup_coord_check", "mup_lr_transfer")


def texts(figure, *names):
    facts = catalogue.facts(figure)
    return tuple(facts[name].text for name in names)


def test_the_chapter_opens_topic_8_in_order():
    assert in_play_order("mup", FIGURES) == list(FIGURES)
    assert catalogue.chapter("mup").topic.number == "专题八"


def test_random_matrix_columns_are_nearly_orthogonal_but_the_spectrum_fills_0_to_2():
    widths = (16, 64, 256, 1024)
    assert texts("mup_random_matrix", *(f"cosine_{n}" for n in widths)) == ("1.055", "0.995", "0.991", "0.999")
    assert texts("mup_random_matrix", *(f"gain_{n}" for n in widths)) == ("0.960", "0.921", "0.976", "0.951")
    assert texts("mup_random_matrix", *(f"sigma_max_{n}" for n in widths)) == ("1.86", "1.94", "1.95", "1.99")
    assert texts("mup_random_matrix", *(f"sigma_min_{n}" for n in widths)) == ("0.0632", "0.0013", "0.0012", "0.0008")
    assert texts("mup_random_matrix", *(f"near_one_{n}" for n in widths)) == ("12.5%", "10.9%", "11.7%", "11.1%")
    assert texts("mup_random_matrix", "qr") == ("< 10⁻¹⁴",)


def test_rms_through_depth_and_the_rectangular_layer():
    assert texts("mup_rms_through_depth", "log_one_over_n", "log_one", "log_one_over_n2", "closed") == (
        "0.06",
        "27.15",
        "−27.03",
        "27.09",
    )
    assert texts("mup_rms_through_depth", "relu_one_over_n", "relu_closed", "relu_he", "halving") == (
        "0.00089",
        "0.00098",
        "0.91",
        "2⁻¹⁰",
    )
    rows = catalogue.facts("mup_rms_through_depth")["rect"].value
    assert [(r["forward"], r["backward"], r["forward_closed"], r["backward_closed"]) for r in rows] == [
        ("0.99", "2.04", "1", "2"),
        ("0.50", "1.02", "0.5", "1"),
        ("0.63", "1.29", "0.632", "1.265"),
    ]


def test_adams_step_grows_like_n_and_the_hidden_lr_must_shrink_like_1_over_n():
    assert texts("mup_adam_update_scale", "update_64", "update_256", "update_1024", "update_4096") == (
        "1.45",
        "6.31",
        "26.0",
        "101.5",
    )
    assert texts("mup_adam_update_scale", "slope_init", "slope_update", "slope_random") == ("0.01", "1.02", "0.57")
    assert texts("mup_adam_update_scale", "loss_sp_first", "loss_sp_last", "loss_slope_sp", "loss_slope_mup") == (
        "0.46",
        "153",
        "1.57",
        "−0.11",
    )


def test_coord_check_sp_tilts_and_mup_stays_flat():
    sp = texts("mup_coord_check", *(f"sp_h2_slope_{t}" for t in range(4)))
    mu = texts("mup_coord_check", *(f"mup_h2_slope_{t}" for t in range(4)))
    assert (sp, mu) == (("0.01", "0.79", "0.80", "0.86"), ("0.01", "0.01", "0.01", "0.02"))
    assert texts("mup_coord_check", *(f"mup_y_slope_{t}" for t in range(4))) == ("−0.47", "0.06", "0.06", "0.11")
    assert texts("mup_coord_check", "sp_y_narrow", "sp_y_wide", "lr") == ("0.40", "179", "2⁻⁵")


def test_lr_transfer_best_rates():
    widths = (32, 64, 128, 256)
    assert texts("mup_lr_transfer", *(f"best_sp_{n}" for n in widths)) == ("2⁻⁵", "2⁻⁶", "2⁻⁷", "2⁻⁹")
    assert texts("mup_lr_transfer", *(f"best_mup_{n}" for n in widths)) == ("2⁻⁵",) * 4
    assert texts("mup_lr_transfer", *(f"mup_at_{n}" for n in widths)) == ("−2.56", "−2.54", "−3.30", "−3.17")
    assert texts("mup_lr_transfer", "sp_wide_copied", "sp_wide_own") == ("−0.53", "−2.70")


# -- tamper tests ----------------------------------------------------------------------------------


def test_random_matrix_refuses_other_widths():
    assert refused(chapter.mup_random_matrix, "mup_random_matrix", widths=(16, 64, 256, 512)).fact == "widths"


def test_depth_refuses_ten_layers_read_as_twenty():
    assert refused(chapter.mup_rms_through_depth, "mup_rms_through_depth", layers=10).fact.startswith(
        "log₁₀ RMS after 20 layers"
    )


def test_adam_step_refuses_another_learning_rate():
    fact = refused(chapter.mup_adam_update_scale, "mup_adam_update_scale", lr_exponent=-4).fact
    assert fact.startswith("RMS(ΔW·x) [0]")


def test_coord_check_refuses_a_learning_rate_too_small_to_show_sp_blowing_up():
    fact = refused(chapter.mup_coord_check, "mup_coord_check", cite=lambda ref: power(2, -7)).fact
    assert fact == "SP h2 grows at t = 1"  # at 2⁻⁷ one step does not yet tilt SP


def test_lr_transfer_refuses_a_base_width_where_sp_and_mup_differ():
    sweep = dict(chapter._sweep())
    sweep["mup", 32] = sweep["mup", 32] + np.where(np.arange(12) == 0, 1e-3, 0.0)
    assert refused(chapter.mup_lr_transfer, "mup_lr_transfer", sweep=sweep).fact == "width 32: SP and μP the same curve"


@pytest.mark.parametrize("figure", FIGURES)
def test_every_fact_names_its_source(figure):
    assert "出处待补" not in catalogue.figure(figure).source
