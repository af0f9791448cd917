"""Ledger chapter, figures 6–10: LoRA, ZeRO, the whole step of V3, 6ND, the 125M worked example."""

from dataclasses import replace

import pytest
from helpers import in_play_order

from tools.chapters import ledger as chapter
from tools.course import catalogue
from tools.course.facts import Check, FactError, approx, myriad, percent, times
from tools.models import byte_ledger, gpt, lora, step_memory, v3, zero

FIGURES = ("lora_ledger", "zero_stages", "peak_memory_timeline", "six_nd_underestimate", "worked_125m")


def facts(figure):
    return catalogue.facts(figure)


def texts(figure, *names):
    return tuple(facts(figure)[name].text for name in names)


# -- shared helpers these figures added ---------------------------------------------------


def test_fact_helpers_show_and_say_percent_multiples_and_myriads():
    assert (percent(0.821).text, percent(0.821).spoken) == ("82.1%", "百分之八十二点一")
    assert percent(1 / 3, 0, plus=True).text == "+33%"
    assert (times(7.92, 1).text, times(7.92, 1).spoken) == ("7.9×", "七点九倍")
    assert times(2).spoken == "两倍"  # 两, not 二, before a unit
    assert (myriad(8_388_608).text, myriad(8_388_608).spoken) == ("839 万", "八百三十九万")
    assert myriad(12_276_416, significant=3).text == "1,230 万"
    assert (myriad(125_104_896, "亿", 2).text, myriad(125_104_896, "亿", 2).spoken) == ("1.25 亿", "一点二五亿")
    assert (approx(times(2)).text, approx(times(2)).spoken) == ("≈ 2×", "约两倍")


def test_ledger_freezes_and_shards_cells():
    assert [c.key for c in byte_ledger.frozen(byte_ledger.MIXED_ADAMW)] == ["weight"]
    assert byte_ledger.sharded_total(byte_ledger.MIXED_ADAMW, 64, ()) == 16
    assert byte_ledger.sharded_total(byte_ledger.MIXED_ADAMW, 64, byte_ledger.OPTIMIZER_SIDE) == 2 + 2 + 12 / 64
    assert chapter.row_fact(byte_ledger.frozen(byte_ledger.MIXED_ADAMW)).spoken == "两字节"


def test_v3_weights_from_the_config_add_up_to_671b():
    assert v3.moe_layer_weights() == 11_507_269_632
    assert v3.total_weights() == pytest.approx(671e9, rel=1e-4)


# -- lora_ledger (B10) -------------------------------------------------------------------


def test_lora_parameter_counts_are_llama_7b_and_the_pages():
    assert lora.LLAMA_7B.params() == 6_738_415_616  # LLaMA-7B's published count
    adapters = lora.adapter_pair(4096, 16) * 2 * 32
    assert adapters == 8_388_608
    assert texts("lora_ledger", "matrix_share", "adapters", "adapter_share", "params") == (
        "0.8%",
        "839 万",
        "0.124%",
        "67.4 亿",
    )


def test_lora_resident_ratio_and_compute():
    f = facts("lora_ledger")
    assert f["full_gib"].value == pytest.approx(16 * 6_738_415_616 / 2**30)
    assert f["lora_gib"].value == pytest.approx((2 * 6_738_415_616 + 16 * 8_388_608) / 2**30)
    assert texts("lora_ledger", "full_gib", "lora_gib", "ratio") == ("100.4 GiB", "12.7 GiB", "7.9×")
    assert (f["full_passes"].value, f["lora_passes"].text) == (3.0, "≈ 2×")
    assert f["saved_compute"].value == pytest.approx(1 / 3, abs=0.001)
    assert [c["key"] for c in f["frozen_row"].value] == ["weight"]
    assert f["dropped"].text == "14 B"


def test_lora_share_pins_the_model_size():
    # D19: 0.124% needs LLaMA-7B's 6.738B; a 6.84B variant of the same shape is refused.
    seven_b = replace(lora.LLAMA_7B, ffn=11_264)
    with pytest.raises(FactError) as err:
        chapter.lora_ledger(Check("lora_ledger"), model=seven_b)
    assert (err.value.figure, err.value.fact) == ("lora_ledger", "adapter_share")


def test_lora_tampered_rank_is_refused():
    with pytest.raises(FactError) as err:
        chapter.lora_ledger(Check("lora_ledger"), rank=8)
    assert (err.value.figure, err.value.fact) == ("lora_ledger", "matrix_share")


def test_lora_adapters_on_all_four_attention_matrices_are_refused():
    with pytest.raises(FactError) as err:
        chapter.lora_ledger(Check("lora_ledger"), matrices=("q", "k", "v", "o"))
    assert (err.value.figure, err.value.fact) == ("lora_ledger", "adapters")


# -- zero_stages (A25) -------------------------------------------------------------------


def test_zero_four_numbers_match_the_papers_figure_1():
    assert texts("zero_stages", "baseline", "p_os", "p_os_g", "p_os_g_p") == ("120 GB", "31.4 GB", "16.6 GB", "1.9 GB")
    values = [facts("zero_stages")[n].value for n in ("baseline", "p_os", "p_os_g", "p_os_g_p")]
    assert values == pytest.approx([120.0, 31.40625, 16.640625, 1.875])


def test_zero_order_follows_from_size_then_use():
    assert [g.label for g in zero.cut_order(byte_ledger.MIXED_ADAMW)] == ["优化器状态", "梯度", "参数"]
    assert zero.stages(byte_ledger.MIXED_ADAMW)[1] == byte_ledger.OPTIMIZER_SIDE


def test_zero_communication_is_2_2_2_3_psi():
    assert [zero.communication(s) for s in zero.stages(byte_ledger.MIXED_ADAMW)] == [2, 2, 2, 3]
    assert texts("zero_stages", "comm_p_os", "comm_p_os_g_p") == ("2Ψ", "3Ψ")


def test_zero_tampered_gpu_count_is_refused():
    with pytest.raises(FactError) as err:
        chapter.zero_stages(Check("zero_stages"), gpus=32)
    assert (err.value.figure, err.value.fact) == ("zero_stages", "p_os")


def test_zero_with_bf16_moments_no_longer_matches_the_paper():
    cells = tuple(replace(c, precision="bf16") if c.key in ("m", "v") else c for c in byte_ledger.MIXED_ADAMW)
    with pytest.raises(FactError) as err:
        chapter.zero_stages(Check("zero_stages"), cells=cells)
    assert err.value.fact == "baseline"


# -- peak_memory_timeline (A26) ----------------------------------------------------------


def test_step_rows_are_the_pages():
    assert texts("peak_memory_timeline", "resident_tib", "sequences", "tokens") == ("9.76 TiB", "93.7 条", "≈ 1,230 万")
    f = facts("peak_memory_timeline")
    assert f["resident_tib"].value == pytest.approx(671e9 * 16 / 1024**4)
    assert f["sequences"].value == pytest.approx(671e9 * 16 / 1024**4 * 1024 / 106.75)
    assert f["tokens"].value == pytest.approx(f["sequences"].value * 131_072)
    assert texts("peak_memory_timeline", "weights_tib", "grads_tib", "optimizer_tib", "activations_tib") == (
        "1.22 TiB",
        "1.22 TiB",
        "7.32 TiB",
        "4.15 TiB",
    )


def test_timeline_items_peak_at_different_times():
    line = step_memory.step()
    assert line.peak_time(line.activations) == line.forward_end
    assert line.peak_time(line.grads) == line.backward_end
    assert max(line.grads) == pytest.approx(v3.total_weights() * 2 / v3.TIB)
    assert line.activations[-1] == pytest.approx(0, abs=1e-9)
    assert line.grads[-1] == 0
    assert facts("peak_memory_timeline")["largest_at_peak"].value == "optimizer"


def test_step_tampered_recompute_bytes_are_refused():
    with pytest.raises(FactError) as err:
        chapter.peak_memory_timeline(Check("peak_memory_timeline"), recompute_gib=177.9)  # D9's working-set rule
    assert (err.value.figure, err.value.fact) == ("peak_memory_timeline", "recompute_gib")


def test_step_tampered_parameter_count_is_refused():
    with pytest.raises(FactError) as err:
        chapter.peak_memory_timeline(Check("peak_memory_timeline"), params=685e9)
    assert (err.value.figure, err.value.fact) == ("peak_memory_timeline", "params (from the config)")


# -- six_nd_underestimate (B11) -----------------------------------------------------------


def test_six_nd_and_the_two_routes_agree():
    f = facts("six_nd_underestimate")
    assert f["six_nd"].text == "29.1 PFLOP"
    assert f["six_nd"].value == pytest.approx(6 * 37e9 * 131_072 / 1e15)
    assert (f["attention_share"].text, f["weight_share"].text) == ("82.1%", "17.9%")
    assert f["corrected"].value == pytest.approx(29.1 / 0.179)
    assert f["corrected"].text == "≈ 162.6 PFLOP"
    assert f["per_operator"].text == "157.6 PFLOP"
    assert abs(f["corrected"].value - f["per_operator"].value) / f["per_operator"].value < 0.05
    assert 5 <= f["multiplier"].value <= 6


def test_gpt3_attention_share_at_2048_is_1_37_percent():
    assert gpt.GPT3_175B.attention_share(2048) == pytest.approx(2048 / (2048 + 12 * 12_288))
    assert facts("six_nd_underestimate")["gpt3_share"].text == "1.37%"


def test_six_nd_tampered_active_parameters_are_refused():
    with pytest.raises(FactError) as err:
        chapter.six_nd_underestimate(Check("six_nd_underestimate"), active=671e9)  # total, not active
    assert (err.value.figure, err.value.fact) == ("six_nd_underestimate", "six_nd")


def test_six_nd_at_a_short_sequence_no_longer_matches_the_page():
    with pytest.raises(FactError) as err:
        chapter.six_nd_underestimate(Check("six_nd_underestimate"), seq=65_536)
    assert err.value.figure == "six_nd_underestimate"
    assert err.value.fact == "six_nd"


# -- worked_125m (B12) --------------------------------------------------------------------


def test_125m_parameters_from_the_architecture():
    assert gpt.GPT3_SMALL.params() == 12 * 12 * 768**2 + 50_257 * 768 + 2_048 * 768 == 125_104_896
    assert texts("worked_125m", "params_exact", "params") == ("125,104,896", "1.25 亿")


def test_125m_resident_table():
    assert texts("worked_125m", "weights_gib", "grads_gib", "optimizer_gib", "resident_gib", "resident_ratio") == (
        "0.23 GiB",
        "0.23 GiB",
        "1.40 GiB",
        "1.86 GiB",
        "8×",
    )


def test_125m_activation_table_and_recompute():
    assert [w for _label, w in gpt.GPT3_SMALL.kept_widths()] == [1536, 2304, 768, 3072, 3072, 768]
    assert texts("worked_125m", "kept_per_layer", "layer_kib", "token_kib", "activations_gib") == (
        "11,520",
        "22.5 KiB",
        "270 KiB",
        "2.11 GiB",
    )
    f = facts("worked_125m")
    assert f["activations_gib"].value > f["resident_gib"].value
    assert f["recompute_gib"].value == pytest.approx((12 * 768 + 11_520) * 2 * 8192 / 2**30)
    assert texts("worked_125m", "recompute_gib", "saving", "total_keep", "total_recompute", "extra_compute") == (
        "0.32 GiB",
        "6.7×",
        "3.97 GiB",
        "2.18 GiB",
        "+33%",
    )


def test_125m_tampered_batch_is_refused():
    with pytest.raises(FactError) as err:
        chapter.worked_125m(Check("worked_125m"), batch=4)
    assert (err.value.figure, err.value.fact) == ("worked_125m", "activations_gib")


def test_125m_tampered_width_is_refused():
    with pytest.raises(FactError) as err:
        chapter.worked_125m(Check("worked_125m"), model=gpt.Gpt(layers=12, width=1024))
    assert (err.value.figure, err.value.fact) == ("worked_125m", "params")


# -- narration -----------------------------------------------------------------------------


def test_figures_play_in_the_order_of_the_issue():
    assert in_play_order("ledger", FIGURES) == list(FIGURES)
