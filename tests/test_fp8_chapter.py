"""The fp8 chapter (专题六): each figure's facts as the course shows them, and a tamper test per figure."""

import pytest
from helpers import in_play_order, refused

from tools.chapters import fp8 as chapter
from tools.course import catalogue
from tools.models import lowp

FIGURES = (
    "fp8_number_line",
    "fp8_scaling_granularity",
    "fp8_block_formats",
    "fp8_delayed_scaling",
    "fp8_accumulation_promotion",
    "fp8_linear_three_gemms",
)


def texts(figure, *names):
    facts = catalogue.facts(figure)
    return tuple(facts[name].text for name in names)


def test_the_chapter_opens_topic_6_in_order():
    assert in_play_order("fp8", FIGURES) == list(FIGURES)
    assert catalogue.chapter("fp8").topic.number == "专题六"


# -- the figures' numbers --------------------------------------------------------------------


def test_number_line():
    assert texts("fp8_number_line", "e4m3_count", "e5m2_count", "e2m1_count") == ("126", "123", "7")
    assert texts("fp8_number_line", "e4m3_max", "e5m2_max", "e2m1_max", "ieee_max", "reclaimed") == (
        "448",
        "57,344",
        "6",
        "240",
        "7",
    )
    assert texts("fp8_number_line", "e4m3_min_normal", "e4m3_min_sub", "e5m2_min_normal", "e5m2_min_sub") == (
        "2⁻⁶",
        "2⁻⁹",
        "2⁻¹⁴",
        "2⁻¹⁶",
    )
    assert texts("fp8_number_line", "e4m3_binades", "e5m2_binades", "e2m1_binades", "ieee_binades") == (
        "18",
        "32",
        "4",
        "17",
    )
    assert texts("fp8_number_line", "e4m3_range", "e5m2_range") == ("17.81", "31.81")
    assert texts("fp8_number_line", "on_e4m3", "on_e5m2", "on_fp16", "on_bf16") == (
        "0.40625",
        "0.375",
        "0.39526367",
        "0.39453125",
    )
    assert catalogue.facts("fp8_number_line")["e4m3_step"].spoken == "二的负三次方"


def test_scaling_granularity_sweep():
    table = catalogue.facts("fp8_scaling_granularity")["table"].value
    assert [r["r"] for r in table] == ["1", "10", "100", "10³", "10⁴", "10⁵"]
    assert [r["tensor"]["zeros"] for r in table] == ["1", "5", "34", "296", "3,098", "28,629"]
    assert [r["tiles"]["zeros"] for r in table] == ["1", "1", "3", "39", "421", "4,178"]
    assert [r["e5m2"]["zeros"] for r in table] == ["0", "0", "0", "0", "0", "3"]
    assert [r["tensor"]["error"] for r in table] == ["0.0265", "0.0265", "0.0262", "0.0265", "0.0366", "0.3364"]
    assert [r["tiles"]["error"] for r in table][-1] == "0.0850"
    assert texts("fp8_scaling_granularity", "threshold", "gaussian", "measured", "body_size") == (
        "0.0582",
        "4.64%",
        "4.75%",
        "65,280",
    )


def test_block_formats():
    assert texts("fp8_block_formats", "bits_v3_act", "bits_v3_weight", "bits_mxfp8", "bits_mxfp4", "bits_nvfp4") == (
        "8.25",
        "8.002",
        "8.25",
        "4.25",
        "4.5",
    )
    assert texts("fp8_block_formats", "err_e2m1_tensor", "err_e2m1_tiles", "err_mxfp4", "err_nvfp4") == (
        "1.00",
        "0.61",
        "0.32",
        "0.23",
    )
    assert texts("fp8_block_formats", "estimate_tiles", "estimate_mx", "estimate_nv") == ("0.71", "0.37", "0.27")
    assert texts("fp8_block_formats", "scale_code", "g", "block_scale", "outlier", "outlier_back") == (
        "44",
        "0.09927",
        "4.368",
        "−26.64",
        "−26.21",
    )
    assert texts("fp8_block_formats", "neighbours_zero", "survivor", "mx_outlier_back", "mx_neighbours_zero") == (
        "11",
        "2.18",
        "−24",
        "21",
    )
    assert texts("fp8_block_formats", "mx_saturating_e4m3", "mx_saturating_e2m1", "headroom") == (
        "17.7%",
        "32.3%",
        "74.67",
    )


def test_delayed_scaling():
    assert texts("fp8_delayed_scaling", "clipped_m0", "clipped_m1", "clipped_recent", "clipped_current") == (
        "38",
        "1",
        "66",
        "0",
    )
    assert texts("fp8_delayed_scaling", "spike_clipped_m0", "spike_clipped_m1") == ("62.4%", "35.2%")
    assert texts("fp8_delayed_scaling", "spike_error_m0", "spike_error_m1", "after_error", "current_error") == (
        "0.67",
        "0.42",
        "0.0269",
        "0.0268",
    )
    assert catalogue.facts("fp8_delayed_scaling")["clipped_steps_m1"].value == [90]


def test_accumulation_promotion_and_its_owners():
    curve = catalogue.facts("fp8_accumulation_promotion")["curve"].value
    assert [round(c["plain"], 4) for c in curve] == [0.0064, 0.0155, 0.0336, 0.0699, 0.1386, 0.2542]
    assert [round(c["promoted"], 4) for c in curve] == [0.0009, 0.0008, 0.0008, 0.0007, 0.0007, 0.0007]
    assert texts("fp8_accumulation_promotion", "plain_v3", "ratio", "v3_measured", "wgmma") == (
        "7.0%",
        "94×",
        "≈ 2%",
        "4",
    )


def test_linear_three_gemms_is_number_free_but_its_labels():
    assert texts("fp8_linear_three_gemms", "gemms", "tile", "block", "ratio") == ("3", "1×128", "128×128", "2.000×")


# -- tamper tests ----------------------------------------------------------------------------


def test_number_line_refuses_a_probe_the_quantizer_did_not_round():
    assert refused(chapter.fp8_number_line, "fp8_number_line", probe=0.4).fact.startswith("0.3952")


def test_number_line_refuses_a_format_table_that_is_not_the_papers():
    wide = lowp.Format("E4M3", 4, 3, 6, "fn")  # bias 6: the max would be 896
    assert refused(chapter.fp8_number_line, "fp8_number_line", formats=(wide, lowp.E5M2, lowp.E2M1)).fact == (
        "E4M3 max (closed form)"
    )


def test_scaling_refuses_a_sweep_with_other_zero_counts():
    zeros = dict(chapter.SWEEP_ZEROS, **{"E4M3 1×128": (1, 1, 3, 39, 421, 4177)})
    assert refused(chapter.fp8_scaling_granularity, "fp8_scaling_granularity", zeros=zeros).fact == (
        "E4M3 1×128: zeros per R (an independent script)"
    )


def test_block_formats_refuse_another_outlier_size():
    assert refused(chapter.fp8_block_formats, "fp8_block_formats", r=1000).fact == (
        "e4m3_tensor: body error (an independent script, 4 decimals)"
    )


def test_delayed_scaling_refuses_a_longer_window():
    assert refused(chapter.fp8_delayed_scaling, "fp8_delayed_scaling", history=4).fact == "margin 0: clipped steps"


def test_accumulation_refuses_a_wider_accumulator():
    assert refused(chapter.fp8_accumulation_promotion, "fp8_accumulation_promotion", bits=16).fact == (
        "plain max relative error at K = 512 (an independent script)"
    )


def test_linear_refuses_peaks_that_do_not_double():
    assert refused(chapter.fp8_linear_three_gemms, "fp8_linear_three_gemms", fp8=1513.0).fact.startswith(
        "FP8 over BF16"
    )


@pytest.mark.parametrize("figure", FIGURES)
def test_every_figure_names_its_source(figure):
    assert catalogue.figure(figure).source
