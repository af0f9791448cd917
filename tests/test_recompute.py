"""Chapter 2, recompute: the exchange, √L, the ranking, the crossover and the flip; Part D; tampers."""

import math

import numpy as np
import pytest
from helpers import in_play_order, refused

from tools.chapters import recompute as chapter
from tools.course import catalogue
from tools.course.facts import Check
from tools.models import gradients, v3
from tools.models import recompute as rc
from tools.voice import cues


def texts(figure, *names):
    facts = catalogue.facts(figure)
    return tuple(facts[name].text for name in names)


# -- the models ------------------------------------------------------------------------------------


def test_attention_cost_by_the_shapes_is_the_closed_form_line():
    for attention, slope in ((rc.V3_ATTENTION, 1.25), (rc.GPT3_ATTENTION, 1.00)):
        assert attention.slope() == slope
        for seq in (512, 2048, 131_072):
            assert attention.flops(seq) / attention.output_bytes(seq) == pytest.approx(slope * seq, rel=1e-12)


def test_a_real_causal_mask_keeps_half_the_scores_plus_the_diagonal():
    for seq in (8, 100, 2048):
        assert rc.causal_share(seq) == pytest.approx((seq + 1) / (2 * seq))


def test_a_counted_matmul_costs_its_input_width_per_byte_for_random_shapes():
    rng = np.random.default_rng(2024)
    for _ in range(50):
        s, k, n = (int(v) for v in rng.integers(1, 200, size=3))
        flops, nbytes = rc.counted_linear_cost_per_byte(s, k, n, rng)
        assert (flops, nbytes) == (2 * s * k * n, 2 * s * n)
        assert flops / nbytes == k == rc.linear_cost_per_byte(k)


def test_each_kept_tensor_of_a_layer_is_named_once_and_the_tables_still_add_up():
    tensors = v3.moe_layer_tensors()
    assert len(set(tensors)) == len(tensors) == 18
    assert sum(t.gib for t in tensors) == v3.moe_layer_gib() == pytest.approx(71.140625)
    assert [k.width for k in v3.MOE_KEPT] == [2 * 7168, 256, 9 * 7168, 3 * 9 * 2048, 9 * 7168]


def test_the_save_point_itself_is_not_recomputed():
    with pytest.raises(ValueError, match="starts from"):
        rc.recompute_flops(v3.ATTN_NORM_IN)


def test_present_is_smallest_where_its_two_terms_meet():
    assert [rc.present(64, k) for k in (2, 8, 32)] == [34, 16, 34]
    assert rc.best_integer_k(64) == 8
    assert rc.best_integer_k(61) == 8 == round(math.sqrt(61))
    for layers in (16, 49, 61, 100):
        best = rc.best_integer_k(layers)
        assert abs(best - math.sqrt(layers)) < 1


# -- recompute_tradeoff ------------------------------------------------------------------------------


def test_the_exchange_is_the_pages():
    assert texts("recompute_tradeoff", "keep_all", "full_recompute", "memory_cut", "third") == (
        "4.15 TiB",
        "106.75 GiB",
        "−97.5%",
        "1/3",
    )
    facts = catalogue.facts("recompute_tradeoff")
    assert (facts["passes_before"].value, facts["passes_after"].value) == (3, 4)
    assert facts["asymmetry"].value == pytest.approx(39.77, abs=0.01)


def test_both_percentages_of_every_tier_share_one_denominator():
    facts = catalogue.facts("recompute_tradeoff")
    step = 3 * v3.moe_layer_forward_flops() / 1e12
    assert step == pytest.approx(2571.36, abs=0.01)
    assert facts["selective_compute"].value == pytest.approx(48.948 / step, abs=1e-5)
    assert facts["full_compute"].value == pytest.approx(1 / 3)
    layer = v3.moe_layer_gib()
    assert -facts["selective_memory"].value == pytest.approx(53.5 / layer)
    assert -facts["full_memory"].value == pytest.approx(1 - 1.75 / layer)
    assert texts(
        "recompute_tradeoff",
        "selective_compute",
        "selective_memory",
        "full_compute",
        "full_memory",
        "none_compute",
        "none_memory",
    ) == ("+1.9%", "−75.2%", "+33.3%", "−97.5%", "0%", "0%")


def test_d1_the_pages_77_percent_leaves_the_entry_out_of_the_denominator():
    selective = catalogue.facts("selective_recompute_table")
    assert selective["selective_memory"].text == "75.2%"
    assert selective["page_selective_memory"].text == "77%"
    assert 53.5 / (v3.moe_layer_gib() - v3.layer_entry_gib()) == pytest.approx(0.771, abs=5e-4)
    assert catalogue.facts("recompute_tradeoff")["selective_memory"].text == "−75.2%"


def test_tradeoff_tampered_passes_are_refused():
    error = refused(chapter.recompute_tradeoff, "recompute_tradeoff", passes=2)
    assert (error.fact, error.computed) == ("extra compute (ZeRO's 33%)", "0.5")


def test_tradeoff_tampered_config_is_refused(monkeypatch):
    monkeypatch.setattr(v3, "LAYERS", 62)
    error = refused(chapter.recompute_tradeoff, "recompute_tradeoff")
    assert (error.fact, error.expected, error.computed) == ("full_recompute", "106.75", "108.50")


# -- recompute_sqrt_l ---------------------------------------------------------------------------------


def test_sqrt_l_demo_is_lowest_at_root_l_and_its_ends_are_equally_high():
    assert texts("recompute_sqrt_l", "layers", "sqrt", "k_small", "k_best", "k_large") == ("64", "8", "2", "8", "32")
    assert texts("recompute_sqrt_l", "total_small", "total_best", "total_large") == ("34", "16", "34")
    assert texts("recompute_sqrt_l", "ckpt_small", "ckpt_best", "ckpt_large") == ("32", "8", "2")


def test_v3s_61_layers_best_k_is_nearest_its_root_and_the_ends_differ():
    assert texts("recompute_sqrt_l", "v3_layers", "v3_sqrt", "v3_k_best") == ("61", "≈ 7.81", "8")
    assert texts("recompute_sqrt_l", "v3_total_small", "v3_total_best", "v3_total_large") == ("32.5", "15.6", "32.0")


def test_sqrt_l_sweep_is_the_two_terms():
    sweep = catalogue.facts("recompute_sqrt_l")["sweep"].value
    k = np.array(sweep["k"])
    assert np.allclose(np.array(sweep["checkpoints"]) * k, 64)
    assert np.allclose(sweep["segment"], k)
    total = np.array(sweep["checkpoints"]) + k
    assert k[np.argmin(total)] == pytest.approx(8)


@pytest.mark.parametrize(
    ("demo", "fact"),
    [
        ((64, (2, 8, 30)), "ends equally high"),
        ((63, (2, 8, 32)), "√L is whole"),
        ((64, (2, 7, 32)), "best k (searched)"),
    ],
)
def test_sqrt_l_tampered_inputs_are_refused(demo, fact):
    assert refused(chapter.recompute_sqrt_l, "recompute_sqrt_l", demo=demo).fact == fact


# -- selective_recompute_table --------------------------------------------------------------------------


def test_every_cell_of_the_ranking_is_computed_and_is_the_pages():
    rows = catalogue.facts("selective_recompute_table")["rows"].value
    assert [(r["gib"], r["tflop"], r["per_gib"], r["verdict"]) for r in rows] == list(chapter.TABLE_PAGE)
    assert [r["label"] for r in rows][3:6] == [
        "K/V 解压（输入宽 512）",
        "Q 展开（输入宽 1,536）",
        "专家输出 9 份（输入宽 2,048）",
    ]
    assert [r["selected"] for r in rows] == [True] * 6 + [False] * 2
    assert [r["forward"] for r in rows] != list(range(8))  # built in forward order, then ranked


def test_both_routes_give_every_rows_tflop():
    for row in chapter._candidates(rc.V3_ATTENTION):
        assert row.tflop == pytest.approx(row.tflop_closed_form, rel=1e-12)
    attention = rc.Candidate("a", (v3.ATTN_OUT,))
    assert attention.tflop == pytest.approx(128 * 131_072**2 * 320 / 1e12)
    assert attention.per_gib == pytest.approx(1.25 * 131_072 * 2**30 / 1e12)


def test_the_retracted_cell_and_the_gate_rows_contents():
    facts = catalogue.facts("selective_recompute_table")
    assert (facts["retracted_cell"].text, facts["gate_tflop"].text) == ("39.08", "70.35 TFLOP")
    # figures.md D10: 9.14 GiB is gate + up + one 576-wide tensor; the label's four would be 9.578.
    assert facts["gate_gib"].value == 4.5 + 4.5 + 0.140625
    assert facts["gate_gib_as_labelled"].value == pytest.approx(9.578125)
    assert facts["gate_tflop_as_labelled"].value == pytest.approx(73.72, abs=0.005)


def test_the_selective_tier_sums_and_the_attention_jump():
    assert texts("selective_recompute_table", "saved", "paid", "step_tflop", "selective_compute") == (
        "53.5 GiB",
        "48.9 TFLOP",
        "≈ 2,571 TFLOP",
        "1.9%",
    )
    assert texts("selective_recompute_table", "attention_vs_previous", "unranked_gib") == ("23×", "4.5 GiB")


@pytest.mark.parametrize("cut", [2.5, 5.0])
def test_any_cut_between_2_20_and_7_70_picks_the_same_rows(cut):
    rows = catalogue.facts("selective_recompute_table")["rows"].value
    facts = chapter.selective_recompute_table(Check("selective_recompute_table"), cut=cut)
    assert [r["selected"] for r in facts["rows"].value] == [r["selected"] for r in rows]


@pytest.mark.parametrize(
    "attention", [rc.Attention(128, 128, 128), rc.Attention(128, 192, 128, causal=1.0)], ids=["d_qk", "causal"]
)
def test_table_tampered_attention_is_refused(attention):
    error = refused(chapter.selective_recompute_table, "selective_recompute_table", attention=attention)
    assert error.fact == "rank 8 'attention 输出'"
    assert error.expected == ("4.00", "703.69", "175.92", "绝不")


def test_table_tampered_cut_is_refused():
    error = refused(chapter.selective_recompute_table, "selective_recompute_table", cut=1.0)
    assert error.fact == "cut at 2.5 picks the same rows"


# -- attention_crossover -------------------------------------------------------------------------------


def test_slopes_and_crossings_are_computed():
    assert texts("attention_crossover", "v3_slope", "gpt3_slope") == ("1.25", "1.00")
    crossings = catalogue.facts("attention_crossover")["crossings"].value
    assert [c["k"] for c in crossings] == [512, 1536, 2048, 7168]
    assert [c["s"] for c in crossings] == pytest.approx([409.6, 1228.8, 1638.4, 5734.4])
    assert texts("attention_crossover", "crossover", "crossover_exact") == ("5,734", "5,734.4")


def test_other_figures_can_cite_the_crossover_by_figure_id():
    caption, speech = cues._fill("交点约 {attention_crossover.crossover}。", "exchange_rate", "test")
    assert (caption, speech) == ("交点约 5,734。", "交点约 五千七百三十四。")


def test_the_example_matmul_on_screen_was_counted():
    facts = catalogue.facts("attention_crossover")
    example = facts["example"].value
    tape = gradients.Tape()
    tape.matmul(np.ones((example["s"], example["k"])), np.ones((example["k"], example["n"])))
    assert f"{tape.flops:,}" == example["flops"]
    assert f"{2 * example['s'] * example['n']:,}" == example["bytes"]


@pytest.mark.parametrize(("inputs", "computed"), [({"d_qk": 128}, 1.0), ({"causal": 1.0}, 2.5)], ids=["d_qk", "causal"])
def test_crossover_tampered_attention_is_refused_naming_the_slope(inputs, computed):
    error = refused(chapter.attention_crossover, "attention_crossover", **inputs)
    assert (error.fact, error.computed) == ("v3_slope", repr(computed))
    assert error.expected.startswith("1.25")
    assert "attention_crossover" in str(error)
    assert "v3_slope" in str(error)


def test_crossover_tampered_width_is_refused():
    error = refused(chapter.attention_crossover, "attention_crossover", widths=(512, 1536, 2048, 7000))
    assert error.fact == "crossing at 7000"


# -- seq_len_flip -------------------------------------------------------------------------------------


def test_each_model_with_its_own_constants():
    assert texts("seq_len_flip", "gpt3_slope", "gpt3_seq", "gpt3_width", "gpt3_cost", "gpt3_crossing") == (
        "1.00",
        "2,048",
        "12,288",
        "2,048",
        "12,288",
    )
    assert texts("seq_len_flip", "v3_slope", "v3_seq", "v3_width", "v3_cost", "v3_crossing") == (
        "1.25",
        "131,072",
        "7,168",
        "163,840",
        "5,734",
    )
    assert texts("seq_len_flip", "retracted") == ("2,560",)
    assert texts("seq_len_flip", "gpt3_share", "paper_share") == ("1.37%", "2.7%")


def test_megatrons_default_is_the_row_our_ranking_puts_last():
    modules = catalogue.facts("seq_len_flip")["modules"].value
    assert [(m["module"], m["verdict"], m["default"]) for m in modules] == [
        ("core_attn", "绝不", True),
        ("layernorm", "白捡", False),
        ("moe_act", "白捡", False),
        ("mla_up_proj", "划算", False),
    ]


def test_flip_refuses_v3s_slope_on_gpt3():
    # The page's own retracted error: V3's 1.25 applied to GPT-3 labels 2,560.
    error = refused(chapter.seq_len_flip, "seq_len_flip", gpt3_attention=rc.Attention(96, 192, 128))
    assert (error.fact, error.expected, error.computed) == ("gpt3_cost", "2,048", "2,560")


def test_flip_tampered_v3_causal_halving_is_refused():
    error = refused(chapter.seq_len_flip, "seq_len_flip", v3_attention=rc.Attention(128, 192, 128, causal=1.0))
    assert (error.fact, error.computed) == ("retracted", "5,120")


# -- the chapter ----------------------------------------------------------------------------------------


def test_recompute_plays_second():
    assert catalogue.CHAPTER_ORDER[:2] == ("backprop", "recompute")
    order = [
        "recompute_tradeoff",
        "recompute_sqrt_l",
        "selective_recompute_table",
        "attention_crossover",
        "seq_len_flip",
    ]
    assert in_play_order("recompute", order) == order
    assert catalogue.figure("recompute_sqrt_l").scene_class == "RecomputeSqrtL"


def test_the_chapters_polyphones_are_read_as_meant():
    said = {cue.id: cue.pinyin for fig in cues.chapter_cues("recompute").values() for cue in fig}
    recompute = [cue for cue, pinyin in said.items() if "chong2 suan4" in pinyin]
    assert len(recompute) >= 12
    assert not any("zhong4 suan4" in pinyin for pinyin in said.values())
    assert "hua2 suan4" in said["tb_cheap"]
    assert "hua2 suan4" in said["fl_gpt3_point"]
    assert "chang2" in said["sq_sweep"]
    assert "tou2 wei2 du4" in said["ac_slope"]
    assert not cues.undecided_readings([fig.id for fig in catalogue.chapter("recompute").figures])
