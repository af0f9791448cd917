"""Stability chapter: the models (softmax collapse, Post-LN runs, fp16 bits, spike positions), each figure's
stated assertions, a tamper per figure, and the appendix's cross-figure facts."""

from dataclasses import replace

import numpy as np
import pytest
from helpers import refused

from tools.chapters import stability as chapter
from tools.course import catalogue
from tools.course.facts import Fact, FactError
from tools.models import attention_collapse, half, residual_norm, spikes, v3
from tools.voice import cues


def facts(figure):
    return catalogue.facts(figure)


def texts(figure, *names):
    return tuple(facts(figure)[name].text for name in names)


# -- models --------------------------------------------------------------------------------------------------


def test_softmax_entropy_has_its_closed_forms():
    assert attention_collapse.entropy_bits(np.full(8, 1 / 8)) == pytest.approx(3.0)
    assert attention_collapse.entropy_bits(np.array([1.0, 0.0, 0.0])) == 0.0


def test_qk_norm_ignores_the_scale_and_plain_logits_grow_as_its_square():
    head = attention_collapse.Head.random(keys=8, dim=64, seed=3)
    assert np.allclose(head.logits(1.0, qk_norm=True), head.logits(10.0, qk_norm=True))
    assert np.allclose(head.logits(3.0, qk_norm=False), 9 * head.logits(1.0, qk_norm=False))


def test_post_ln_run_follows_the_closed_form_within_its_stated_noise():
    layers = np.arange(13)
    run = residual_norm.run("post", dim=1024, layers=12, runs=32, seed=5)
    deviation = np.log2(run.geometric_mean()) - np.log2(residual_norm.closed_form(layers))
    noise = residual_norm.predicted_log2_noise(1024, layers, 32)
    assert np.all(np.abs(deviation[1:]) <= 4 * noise[1:])
    # The stated noise is the run's own spread, not a loose bound.
    assert np.median(run.log2_spread()[1:] / np.sqrt(32) / noise[1:]) == pytest.approx(1, abs=0.3)


def test_pre_ln_never_divides_the_stream():
    run = residual_norm.run("pre", dim=1024, layers=8, runs=16, seed=1)
    assert np.all(run.coefficient == 1.0)
    assert run.variance.mean(axis=1)[-1] == pytest.approx(9, rel=0.05)  # l + 1
    with pytest.raises(ValueError, match="placement"):
        residual_norm.run("middle", dim=8, layers=1, runs=1, seed=0)


def test_fp16_and_bf16_boundaries_come_from_bit_patterns():
    assert half.fp16_from_bits(0x0400) == 2.0**-14
    assert half.fp16_from_bits(0x0001) == 2.0**-24
    assert half.fp16_from_bits(0x7BFF) == 65504.0
    assert half.bf16_from_bits(0x3F80) == 1.0
    assert half.bf16_from_bits(0x0080) == 2.0**-126


def test_the_zero_cut_found_by_rounding_is_half_the_least_subnormal():
    cut = half.zero_cut()
    assert cut == 2.0**-25
    assert half.to_fp16(cut) == 0.0
    assert half.to_fp16(np.nextafter(cut, 1.0)) == 2.0**-24
    with pytest.raises(ValueError, match="power of two"):
        half.exponent(3.0)


def test_spike_positions_keep_their_margin_and_never_repeat_a_gap():
    at = spikes.positions(count=20, steps=1000, seed=7, margin=12)
    gaps = np.diff(at)
    assert len(at) == 20
    assert at[0] >= 12
    assert at[-1] <= 1000 - 12
    assert gaps.min() >= 12
    assert len(set(gaps.tolist())) == len(gaps)
    with pytest.raises(ValueError, match="distinct gaps"):
        spikes.positions(count=20, steps=250, seed=0, margin=12)


def test_a_spike_lifts_the_curve_only_from_its_step_on():
    base = spikes.baseline(100)
    loss = spikes.with_spikes(base, [spikes.Spike(at=40, height=0.5, width=6)])
    assert np.array_equal(loss[:40], base[:40])
    assert loss[40] == pytest.approx(base[40] + 0.5 * base[0])


# -- stability_overview (A27) -------------------------------------------------------------------------------


def test_table_4_is_copied_and_two_of_six_runs_diverged():
    assert texts("stability_overview", "baseline_quality", "clipping_quality", "z_loss_quality") == (
        "−1.755",
        "−4.206",
        "−1.741",
    )
    assert texts("stability_overview", "baseline_stable", "clipping_stable", "z_loss_stable") == (
        "4 / 6",
        "3 / 3",
        "3 / 3",
    )
    diverged = facts("stability_overview")["diverged"]
    assert (diverged.value, diverged.spoken) == (2, "两次")


def test_attention_collapses_to_one_hot_and_qk_norm_holds_its_entropy():
    f = facts("stability_overview")
    curve = f["attention"].value
    assert np.all(np.diff(curve["entropy"]) < 0)
    assert curve["entropy"][-1] < 0.01
    assert max(curve["raw"][-1]) > 0.999
    assert np.ptp(curve["entropy_normed"]) < 1e-9
    assert texts("stability_overview", "logit_growth", "entropy_start", "entropy_end") == (
        "16×",
        "2.62 bit",
        "0.004 bit",
    )


def test_overview_tampered_table_is_refused():
    table = {**chapter.ST_MOE_TABLE4, "baseline": (4, 6, -1.7)}
    assert refused(chapter.stability_overview, "stability_overview", table).fact.startswith("baseline_quality")
    table = {**chapter.ST_MOE_TABLE4, "baseline": (5, 6, -1.755)}
    assert refused(chapter.stability_overview, "stability_overview", table).fact == "diverged (六次里两次训崩)"


def test_overview_logits_that_do_not_grow_enough_are_refused():
    err = refused(chapter.stability_overview, "stability_overview", scales=np.linspace(1.0, 2.0, 11))
    assert err.fact == "entropy_end (≈ 0)"


# -- loss_spikes (A28) --------------------------------------------------------------------------------------


def test_loss_spikes_has_twenty_irregular_spikes_one_of_them_late():
    curve = facts("loss_spikes")["curve"].value
    gaps = np.diff(curve["spikes"]).tolist()
    assert len(curve["spikes"]) == 20
    assert len(set(gaps)) == len(gaps)
    assert curve["spikes"][-1] > 0.85 * (len(curve["loss"]) - 1)


def test_loss_spikes_is_a_sketch_without_y_ticks():
    from manim import VGroup

    from scenes.stability import LossSpikes
    from scenes.widgets import sketch_axes

    axes = LossSpikes.run_axes()
    assert len(getattr(axes.y_axis, "ticks", VGroup())) == 0
    assert len(getattr(axes.x_axis, "ticks", VGroup())) == 0
    assert len(sketch_axes((0, 1, 0.25), (0, 1, 0.25), 3, 3, ticks=True).y_axis.ticks) > 0  # the check can fail
    assert facts("loss_spikes")["y_ticks"].value == []
    assert refused(chapter.loss_spikes, "loss_spikes", y_ticks=(0.5, 1.0)).fact == "y ticks"


def test_refeed_fed_from_earlier_does_not_spike():
    refeed = facts("loss_spikes")["refeed"].value
    assert max(refeed["spiked"]) > max(refeed["refed"]) + 0.2
    assert np.all(np.diff(refeed["refed"]) <= 0)


def test_evenly_spaced_spikes_are_refused(monkeypatch):
    monkeypatch.setattr(spikes, "positions", lambda count, steps, seed, margin: list(range(40, 40 + 45 * count, 45)))
    assert refused(chapter.loss_spikes, "loss_spikes").fact == "gaps all different"


def test_loss_spikes_quotes_the_overview_not_a_copy():
    for name in ("palm_spikes", "rollback", "skip"):
        assert facts("loss_spikes")[name] is facts("stability_overview")[name]


# -- post_ln_decay (A29) ------------------------------------------------------------------------------------


def test_post_ln_monte_carlo_agrees_with_two_to_the_minus_l_over_two():
    f = facts("post_ln_decay")
    closed, measured = np.array(f["closed"].value), np.array(f["measured"].value)
    assert closed[[1, 2, 6, 12, 24]] == pytest.approx([2**-0.5, 0.5, 0.125, 0.015625, 2**-12])
    assert np.max(np.abs(measured / closed - 1)) == pytest.approx(f["deviation"].value)
    assert f["deviation"].value < f["noise_band"].value
    assert texts("post_ln_decay", "dim", "layers", "end") == ("4,096", "24", "2⁻¹²")


def test_post_ln_says_it_plots_the_forward_term_not_a_gradient_multiplier():
    captions = [cue.caption for cue in cues.figure_cues("post_ln_decay")]
    assert any("不是梯度倍率" in caption for caption in captions)


def test_post_ln_tampered_noise_or_closed_form_is_refused(monkeypatch):
    assert refused(chapter.post_ln_decay, "post_ln_decay", sigmas=0.05).fact == "monte_carlo within the noise"
    monkeypatch.setattr(residual_norm, "closed_form", lambda layers: 2.0 ** (-np.asarray(layers, float) / 3))
    assert refused(chapter.post_ln_decay, "post_ln_decay").fact == "closed form at l = 1"


# -- fp16_vs_bf16 (A30) -------------------------------------------------------------------------------------


def test_fp16_line_shows_real_boundaries_and_the_d15_cut():
    assert texts("fp16_vs_bf16", "fp16_min_normal", "fp16_min_subnormal", "bf16_min_normal", "cut") == (
        "2⁻¹⁴",
        "2⁻²⁴",
        "2⁻¹²⁶",
        "2⁻²⁵",
    )
    assert texts("fp16_vs_bf16", "fp16_min_normal_bits", "fp16_min_subnormal_bits", "bf16_min_normal_bits") == (
        "0x0400",
        "0x0001",
        "0x0080",
    )
    assert [p["fp16"] for p in facts("fp16_vs_bf16")["probes"].value] == [0.0, 0.0, 2.0**-24]


def test_bf16_keeps_what_fp16_rounds_to_zero():
    assert texts("fp16_vs_bf16", "tiny", "tiny_fp16", "tiny_bf16") == ("1×10⁻⁸", "0", "1.0012×10⁻⁸")


def test_fp16_line_cites_the_ledger_for_exponents_and_accumulation():
    for name in ("fp16_exp", "bf16_exp", "binades_lost", "bf16_sum"):
        assert facts("fp16_vs_bf16")[name] is facts("why_fp32_bf16")[name]


def test_fp16_tampered_probe_or_value_is_refused():
    err = refused(chapter.fp16_vs_bf16, "fp16_vs_bf16", probes=(0.5, 1.2, 1.5))
    assert err.fact == "cut probes (under, tie, over)"
    assert refused(chapter.fp16_vs_bf16, "fp16_vs_bf16", tiny=1e-6).fact == "tiny in fp16"

    def other_ledger(ref):
        fact = catalogue.cite(ref)
        return replace(fact, value=111) if ref.endswith("binades_lost") else fact

    assert refused(chapter.fp16_vs_bf16, "fp16_vs_bf16", cite=other_ledger).fact.startswith("binades_lost")


# -- derived_numbers_appendix (B14) ---------------------------------------------------------------------------

APPENDIX_SOURCES = {
    "activation_mountain": ("keep_all", "full_recompute"),
    "attention_crossover": ("crossover",),
    "six_nd_underestimate": ("attention_share", "multiplier"),
    "peak_memory_timeline": ("resident_tib", "sequences_round", "recompute_gib"),
}


def test_appendix_rows_are_the_source_figures_own_facts():
    appendix = facts("derived_numbers_appendix")
    for figure, names in APPENDIX_SOURCES.items():
        for name in names:
            assert appendix[name] is facts(figure)[name], (figure, name)


def test_appendix_numbers_are_the_pages():
    assert texts(
        "derived_numbers_appendix",
        "keep_all",
        "full_recompute",
        "attention_share",
        "multiplier",
        "resident_tib",
        "sequences_round",
        "cards",
    ) == ("4.15 TiB", "106.75 GiB", "82.1%", "5.6×", "9.76 TiB", "≈ 94 条", "125 张")
    rows = facts("derived_numbers_appendix")["rows"].value
    assert [r["number"] for r in rows][:3] == ["4.15 TiB / 106.75 GiB", "82.1%", "S ≈ 5,734"]


def test_appendix_footnotes_d9():
    assert texts("derived_numbers_appendix", "working_set", "sequences_d9") == ("≈ 177.9 GiB", "≈ 56 条")


def _cite_with(figure_fact: str, fact: Fact):
    def cite(ref):
        return fact if ref == figure_fact else catalogue.cite(ref)

    return cite


def test_appendix_refuses_a_cited_number_that_is_not_the_pages():
    wrong = Fact(4.2, "4.20 TiB", "四点二T")
    err = refused(
        chapter.derived_numbers_appendix,
        "derived_numbers_appendix",
        cite=_cite_with("activation_mountain.keep_all", wrong),
    )
    assert err.fact == "keep_all"


def test_appendix_refuses_two_figures_that_disagree():
    drifted = Fact(106.8, "106.75 GiB", "一百零六点七五吉字节")
    err = refused(
        chapter.derived_numbers_appendix,
        "derived_numbers_appendix",
        cite=_cite_with("peak_memory_timeline.recompute_gib", drifted),
    )
    assert err.fact == "recompute_gib (ledger) = full_recompute (backprop)"
    assert refused(chapter.derived_numbers_appendix, "derived_numbers_appendix", card_gib=64).fact.startswith("cards")


def test_a_wrong_number_is_caught_by_the_figure_that_computes_it(monkeypatch):
    """Changed at its source, a number fails its own figure's check, even when only the appendix is asked for."""
    catalogue.facts.cache_clear()
    monkeypatch.setattr(v3, "layer_entry_gib", lambda: 1.8)
    try:
        with pytest.raises(FactError) as err:
            catalogue.facts("derived_numbers_appendix")
        assert err.value.figure == "activation_mountain"
    finally:
        monkeypatch.undo()
        catalogue.facts.cache_clear()
