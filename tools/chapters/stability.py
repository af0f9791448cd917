"""Chapter 6 in play order (专题四's last), stability: when training blows up, and the course's own derived
numbers (derived_numbers_appendix).

The page's stability section holds no measurement of the course's own: the numbers on its figures are
quoted from the papers and labelled as such, or computed here by doing the
thing (a softmax, a Norm(x + F(x)) run, fp16 rounding). The appendix's table shows
other figures' facts through ``catalogue.cite``, so each is computed and
checked once, by the figure it belongs to.
"""

from __future__ import annotations

import math

import numpy as np

from tools.course import catalogue, numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, approx, data, myriad, number, percent, power, scientific, times
from tools.models import attention_collapse, half, residual_norm, spikes

CHAPTER = Chapter(
    "stability",
    "训练为什么会飞：稳定性，与本课自推的数",
    summary=(
        "four tools from four papers (PaLM, ST-MoE's Table 4, QK-norm, LN placement), "
        "PaLM's loss spikes, Post-LN's fading direct path, where fp16 underflows, "
        "the course's self-derived numbers"
    ),
)


def _quote(value, text: str, spoken: str) -> Fact:
    """A number copied from a paper, as the paper gives it."""
    return Fact(value, text, spoken)


def _count(n: int, unit: str) -> Fact:
    """A count before a measure word: 2 次 is said 两次."""
    return number(n, unit=unit, unit_spoken=unit)


# -- stability_overview -------------------------------------------------------------------

# PaLM, arXiv 2204.02311 §5.1: the paper's own words, "roughly 20 times",
# rollback "roughly 100 steps", skip "roughly 200–500 data batches".
PALM = {"params": 540e9, "spikes": 20, "rollback": 100, "skip": (200, 500)}
# ViT-22B, arXiv 2302.05442 §2: divergence "after a few thousand steps" at about 8B parameters.
VIT_DIVERGED_AT = 8e9
# ST-MoE, arXiv 2202.08906 Table 4, copied: (stable runs, runs, quality = neg. log perplexity, higher is better).
ST_MOE_TABLE4 = {
    "baseline": (4, 6, -1.755),
    "clipping": (3, 3, -4.206),  # update clipping tightened to 0.1
    "z_loss": (3, 3, -1.741),  # router z-loss
}
ST_MOE_PAGE = {"baseline": "−1.755", "clipping": "−4.206", "z_loss": "−1.741"}  # as the course page prints them
ST_MOE_PAGE_DIVERGED = 2  # 「六次里两次训崩」
ST_MOE_CLIP = 0.1  # the tightened update-clipping threshold of Table 4's middle row
# One attention head: a query over a few keys, its projections scaled up by s.
HEAD = {"keys": 8, "dim": 64, "seed": 0}
HEAD_SCALES = np.linspace(1.0, 4.0, 61)  # the logits grow as s², to 16×


def _ratio(stable: int, runs: int) -> Fact:
    """A stability count as the table prints it, '4 / 6', said 六次里四次."""
    return Fact((stable, runs), f"{stable} / {runs}", f"{numbers.zh_int(runs)}次里{numbers.zh_int(stable)}次")


@CHAPTER.figure(
    "stability_overview",
    "让训练别飞：四条工具，四篇论文",
    source="PaLM arXiv 2204.02311 §5.1；ST-MoE arXiv 2202.08906 Table 4（三个数照抄）\n"
    "ViT-22B arXiv 2302.05442 §2（QK-norm 沿用 Gilmer 等 2023）；Xiong 等 arXiv 2002.04745；无本课实测",
)
def stability_overview(check: Check, table: dict = ST_MOE_TABLE4, head: dict = HEAD, scales: np.ndarray = HEAD_SCALES):
    # Ⓒ the table as copied, and what the page reads off it.
    for name, page in ST_MOE_PAGE.items():
        check.equal(f"{name}_quality (copied from Table 4)", numbers.signed(table[name][2], 3), page)
    stable, runs, _ = table["baseline"]
    diverged = runs - stable
    check.equal("diverged (六次里两次训崩)", diverged, ST_MOE_PAGE_DIVERGED)
    for name in ("clipping", "z_loss"):
        check.that(f"{name} stable", table[name][0] == table[name][1], "every run finished", table[name][:2])
    quality = {name: row[2] for name, row in table.items()}
    check.that(
        "clipping costs quality",
        quality["clipping"] < quality["baseline"] - 1,
        "tight clipping far below the baseline",
        quality,
    )
    check.that(
        "z_loss keeps quality",
        0 < quality["z_loss"] - quality["baseline"] < 0.05,
        "z-loss slightly better than the baseline",
        quality,
    )

    # QK-norm: a real softmax over growing logits, with and without the norm.
    attention = attention_collapse.Head.random(head["keys"], head["dim"], head["seed"])
    raw = [attention.weights(s) for s in scales]
    normed = [attention.weights(s, qk_norm=True) for s in scales]
    entropy = [attention_collapse.entropy_bits(w) for w in raw]
    entropy_normed = [attention_collapse.entropy_bits(w) for w in normed]
    check.that("entropy falls", bool(np.all(np.diff(entropy) < 0)), "entropy falls as the logits grow", entropy)
    check.that("entropy_end (≈ 0)", entropy[-1] < 0.01, "< 0.01 bit: one-hot", entropy[-1])
    check.that("top_weight_end (one-hot)", raw[-1].max() > 0.999, "> 99.9% on one key", raw[-1].max())
    check.that(
        "entropy_start (spread)", entropy[0] > 0.8 * math.log2(head["keys"]), "near the uniform's log₂ n", entropy[0]
    )
    # Second route: the uniform weights' entropy is exactly log₂ n.
    uniform = attention_collapse.entropy_bits(np.full(head["keys"], 1 / head["keys"]))
    check.close("entropy of uniform weights", uniform, math.log2(head["keys"]))
    growth = float(np.std(attention.logits(scales[-1], False)) / np.std(attention.logits(scales[0], False)))
    check.close("logit_growth", growth, (scales[-1] / scales[0]) ** 2)
    spread = max(entropy_normed) - min(entropy_normed)
    check.close("entropy_normed (QK-norm ignores the scale)", spread, 0.0, abs=1e-9)
    bits = {"unit": "bit", "unit_spoken": "比特"}
    palm = "输入：PaLM §5.1"
    table4 = "输入：ST-MoE Table 4"
    head_at = f"随机注意力头（{head['keys']} 个 key，种子 {head['seed']}）"
    entropy_how = "softmax 权重的熵 −Σ w log₂ w"
    return {
        "palm_params": myriad(PALM["params"], "亿").via(f"{palm}，所训模型的参数量"),
        "palm_spikes": approx(_count(PALM["spikes"], "次")).via(f"{palm}，原话 roughly {PALM['spikes']} times"),
        "rollback": approx(_count(PALM["rollback"], "步")).via(f"{palm}，原话 roughly {PALM['rollback']} steps"),
        "skip": _quote(
            PALM["skip"],
            f"{PALM['skip'][0]}–{PALM['skip'][1]} 批",
            f"{numbers.zh_int(PALM['skip'][0])}到{numbers.zh_int(PALM['skip'][1])}批",
        ).via(f"{palm}，原话 roughly {PALM['skip'][0]}–{PALM['skip'][1]} data batches"),
        "vit_diverged_at": approx(myriad(VIT_DIVERGED_AT, "亿")).via(
            f"输入：ViT-22B §2，约 {VIT_DIVERGED_AT / 1e9:g}B 参数时发散"
        ),
        **{f"{name}_stable": _ratio(*row[:2]).via(f"{table4}，稳定的次数 / 跑的次数") for name, row in table.items()},
        **{
            f"{name}_quality": number(row[2], 3).via(f"{table4}，负对数困惑度（越高越好）")
            for name, row in table.items()
        },
        "diverged": _count(diverged, "次").via(f"基线跑的次数 − 稳定的次数 = {runs} − {stable}"),
        "clip_threshold": number(ST_MOE_CLIP, 1).via(f"{table4}，中间一行收紧的 update clipping 阈值"),
        **{f"{name}_runs": _count(row[1], "次").via(f"{table4}，跑的次数") for name, row in table.items()},
        "copied": _count(len(table), "个").via(f"Table 4 的质量列照抄：{len(table)} 行各一个"),
        "attention": data(
            {
                "scales": scales.tolist(),
                "raw": [w.tolist() for w in raw],
                "normed": [w.tolist() for w in normed],
                "entropy": entropy,
                "entropy_normed": entropy_normed,
            }
        ),
        "entropy_start": number(entropy[0], 2, **bits).via(f"{entropy_how}，{head_at}，放大 s = {scales[0]:g}"),
        "entropy_end": number(entropy[-1], 3, **bits).via(f"{entropy_how}，{head_at}，放大 s = {scales[-1]:g}"),
        "entropy_normed": number(entropy_normed[0], 2, **bits).via(
            f"{entropy_how}，同一个头，Q、K 先各自归一化（s 取多少都一样）"
        ),
        "logit_growth": times(growth).via(
            f"logits 标准差之比，s = {scales[-1]:g} 对 s = {scales[0]:g}：({scales[-1]:g} ÷ {scales[0]:g})²"
        ),
    }


# -- loss_spikes --------------------------------------------------------------------------

SPIKE_RUN = {"count": PALM["spikes"], "steps": 1000, "seed": 0, "margin": 12}
REFEED_SPIKE = 14  # which spike the re-feed experiment zooms into
REFEED_WINDOW = 40  # steps either side of it
REFEED_EARLIER = 150  # the earlier checkpoint, steps before the spike


@CHAPTER.figure(
    "loss_spikes",
    "PaLM 的 loss 尖峰：开着裁剪照样飞",
    source="PaLM，arXiv 2204.02311 §5.1（约 20 次、开着裁剪、小模型上未见、换时刻重喂不飞）\n"
    "曲线为示意：位置只按「看不出规律」挑，高度与宽度论文未给，纵轴不设刻度",
)
def loss_spikes(check: Check, run: dict = SPIKE_RUN, y_ticks: tuple = (), cite=catalogue.cite):
    drawn = spikes.spikes(**run)
    at = [s.at for s in drawn]
    gaps = np.diff(at).tolist()
    check.equal("spikes (PaLM: roughly 20)", len(drawn), PALM["spikes"])
    check.that("gaps all different", len(set(gaps)) == len(gaps), "no two gaps between spikes equal", gaps)
    spread = float(np.std(gaps) / np.mean(gaps))
    check.that("gaps irregular", spread > 0.25, "gaps vary by more than a quarter of their mean", spread)
    check.that("late spike", at[-1] > 0.85 * run["steps"], "a spike in the last 15% of the run", at[-1])
    check.that("y ticks", len(y_ticks) == 0, "no scale on a schematic curve's y axis (没有刻度的曲线是示意)", y_ticks)
    base = spikes.baseline(run["steps"])
    loss = spikes.with_spikes(base, drawn)
    # The re-feed: the batches around one spike, fed from an earlier checkpoint, do not spike.
    spike = drawn[REFEED_SPIKE]
    window = (spike.at - REFEED_WINDOW, spike.at + REFEED_WINDOW)
    earlier = (window[0] - REFEED_EARLIER, window[1] - REFEED_EARLIER)
    refed = base[earlier[0] : earlier[1] + 1]
    check.that(
        "refeed is flat",
        bool(np.all(np.diff(refed) <= 0)),
        "no rise where the same batches go in",
        float(np.max(np.diff(refed))),
    )
    check.that(
        "refeed window holds one spike",
        sum(window[0] < a < window[1] for a in at) == 1,
        "exactly the chosen spike inside the zoom",
        [a for a in at if window[0] < a < window[1]],
    )
    overview = {name: cite(f"stability_overview.{name}") for name in ("palm_spikes", "rollback", "skip")}
    return overview | {
        "curve": data({"loss": loss.tolist(), "spikes": at}),
        "baseline": data(base.tolist()),
        "refeed": data(
            {
                "spike": spike.at,
                "batches": (spike.at - 3, spike.at + 1),
                "window": window,
                "spiked": loss[window[0] : window[1] + 1].tolist(),
                "refed": refed.tolist(),
                "base": base[window[0] : window[1] + 1].tolist(),
            }
        ),
        "y_ticks": data(list(y_ticks)),
    }


# -- post_ln_decay ------------------------------------------------------------------------

POST_LN_RUN = {"dim": 4096, "layers": 24, "runs": 64, "seed": 0}
POST_LN_PAGE = {1: 0.7071, 2: 0.5, 6: 0.125, 12: 0.015625, 24: 2.44e-4, 48: 5.96e-8}  # the page's table
NOISE_SIGMAS = 3


@CHAPTER.figure(
    "post_ln_decay",
    "Post-LN：残差直通路一层层变细",
    source="苏剑林《模型优化漫谈：BERT 的初始标准差为什么是 0.02？》kexue.fm/archives/8747（作者分析，非同行评议）\n"
    "Xiong 等 arXiv 2002.04745；蒙特卡洛为本课当场跑：d ＝ 4096，固定种子",
)
def post_ln_decay(check: Check, run: dict = POST_LN_RUN, sigmas: float = NOISE_SIGMAS):
    layers = np.arange(run["layers"] + 1)
    closed = residual_norm.closed_form(layers)
    for layer, page in POST_LN_PAGE.items():
        check.close(f"closed form at l = {layer}", float(residual_norm.closed_form(layer)), page, rel=1e-3)
    post = residual_norm.run("post", **run)
    measured = post.geometric_mean()
    deviation = np.log2(measured) - np.log2(closed)
    noise = residual_norm.predicted_log2_noise(run["dim"], layers, run["runs"])
    worst = float(np.max(np.abs(deviation[1:]) / noise[1:]))
    check.that("monte_carlo within the noise", worst <= sigmas, f"every layer within {sigmas}σ of 2^(−l/2)", worst)
    # The stated noise is the run's own: the spread across runs agrees with the prediction.
    observed = post.log2_spread()[1:] / np.sqrt(run["runs"])
    ratio = float(np.median(observed / noise[1:]))
    check.that("noise as stated", 0.75 <= ratio <= 1.33, "the runs' spread matches the predicted noise", ratio)
    pre = residual_norm.run("pre", **run)
    check.that(
        "pre_ln direct path",
        bool(np.all(pre.coefficient == 1.0)),
        "x₀'s coefficient stays 1",
        float(pre.coefficient.min()),
    )
    stream = pre.variance.mean(axis=1)
    check.close("pre_ln stream variance (l + 1)", float(stream[-1]), run["layers"] + 1, rel=0.05)
    check.close("unit_variance (after each Norm)", float(post.variance.mean()), 1.0, rel=1e-6)
    summed = float(np.nanmean(post.sum_variance))
    check.close("sum_variance (x + F before Norm)", summed, 2.0, rel=0.01)
    check.close(
        "sqrt_two (what Norm divides by)", float(np.nanmean(np.sqrt(post.sum_variance))), math.sqrt(2), rel=0.01
    )
    worst_relative = float(np.max(np.abs(measured / closed - 1)))
    band = float(2 ** (sigmas * noise[-1]) - 1)
    ticks = list(range(0, run["layers"] + 1, 6))
    y_ticks = list(range(0, -run["layers"] // 2 - 1, -4))
    own = "输入：本课自设的蒙特卡洛"
    variance = 1  # of x and of F(x) at initialization, and of every Norm's output (checked above)
    return {
        "dim": number(run["dim"]).via(f"{own}，向量宽度 d"),
        "layers": number(run["layers"]).via(f"{own}，层数"),
        "runs": number(run["runs"]).via(f"{own}，重复次数"),
        "seed": number(run["seed"]).via(f"{own}，随机种子"),
        "closed": data(closed.tolist()),
        "measured": data(measured.tolist()),
        "deviation": percent(worst_relative, 1).via(
            f"max |实测 ÷ 2^(−l/2) − 1|，l = 0…{run['layers']}，实测为 {run['runs']} 次的几何均值"
        ),
        "noise_band": percent(band, 1).via(
            f"2^({sigmas}σ) − 1，σ = √(6/d) ÷ (4 ln 2) × √(l / runs)，l = {run['layers']}"
        ),
        "sigmas": number(sigmas).via("输入：本课自设的容差，几倍噪声 σ"),
        "end": power(2, -run["layers"] // 2).via(
            f"(1/√2){numbers.superscript(run['layers'])} = 2^(−{run['layers']}/2)"
        ),
        "unit_variance": number(variance).via(f"Norm 之后方差为 {variance}；初始化时 F(x) 也是（蒙特卡洛核过）"),
        "sum_variance": number(2 * variance).via(f"{variance} + {variance}：x 与 F(x) 独立，方差相加"),
        "one": number(1).via("Pre-LN 的直通路一次也不除：x₀ 的系数不变（模拟核过）"),
        "sqrt_two": Fact(math.sqrt(2 * variance), "√2", "根号二").via(
            f"√({variance} + {variance})：Norm 除以和的标准差"
        ),
        "half_root": Fact(1 / math.sqrt(2 * variance), "1/√2", "根号二分之一").via("1 ÷ √2：每过一层，x₀ 的系数乘一次"),
        "x_ticks": data([{"layer": t, "text": number(t).text} for t in ticks]),
        "y_ticks": data([{"log2": e, "text": power(2, e).text} for e in y_ticks]),
    }


# -- fp16_vs_bf16 -------------------------------------------------------------------------

FP16_MIN_NORMAL, FP16_MIN_SUBNORMAL, FP16_MAX = 0x0400, 0x0001, 0x7BFF
BF16_MIN_NORMAL = 0x0080  # the 8-bit exponent's smallest normal, as fp32's
# Values put through real rounding on screen: a tiny gradient, and three around the cut.
TINY_GRADIENT = 1e-8
CUT_PROBES = (0.5, 1.0, 1.5)  # × 2⁻²⁵: under the red line, on it (a tie), over it


@CHAPTER.figure(
    "fp16_vs_bf16",
    "fp16 在哪儿下溢：一条真边界的数轴",
    source="边界取自 numpy.float16 的位模式，舍入为 np.float16 真舍；bf16 为 float32 高 16 位\n"
    "讲法取自 Micikevicius、Narang 等 2018（arXiv 1710.03740）；无梯度直方图：那份数据我们没有",
)
def fp16_vs_bf16(
    check: Check, tiny: float = TINY_GRADIENT, probes: tuple[float, ...] = CUT_PROBES, cite=catalogue.cite
):
    bounds = {
        "fp16_min_normal": half.fp16_from_bits(FP16_MIN_NORMAL),
        "fp16_min_subnormal": half.fp16_from_bits(FP16_MIN_SUBNORMAL),
        "bf16_min_normal": half.bf16_from_bits(BF16_MIN_NORMAL),
    }
    exponents = {name: half.exponent(value) for name, value in bounds.items()}
    check.equal("fp16_min_normal (0x0400)", exponents["fp16_min_normal"], -14)
    check.equal("fp16_min_subnormal (0x0001)", exponents["fp16_min_subnormal"], -24)
    check.equal("bf16_min_normal (0x0080)", exponents["bf16_min_normal"], -126)
    check.equal("fp16_min_normal (numpy finfo)", bounds["fp16_min_normal"], float(np.finfo(np.float16).smallest_normal))
    check.equal(
        "fp16_min_subnormal (numpy finfo)", bounds["fp16_min_subnormal"], float(np.finfo(np.float16).smallest_subnormal)
    )
    check.equal("bf16_min_normal (float32 tiny)", bounds["bf16_min_normal"], float(np.finfo(np.float32).tiny))
    fp16_max = half.fp16_from_bits(FP16_MAX)
    check.equal("fp16_max (0x7BFF)", fp16_max, float(np.finfo(np.float16).max))
    # The red line. fp16 rounds to 0 only at or below half its least subnormal; found by bisection.
    cut = half.zero_cut()
    check.equal("cut (bisection = half the least subnormal)", cut, bounds["fp16_min_subnormal"] / 2)
    sweep = 2.0 ** np.linspace(-30, -20, 2001)
    zeroed = np.array([half.to_fp16(v) == 0.0 for v in sweep])
    check.equal("below the red line rounds to 0 (sweep)", zeroed.tolist(), (sweep <= cut).tolist())
    rounded = [{"x": p * cut, "fp16": half.to_fp16(p * cut)} for p in probes]
    check.equal("cut probes (under, tie, over)", [r["fp16"] for r in rounded], [0.0, 0.0, bounds["fp16_min_subnormal"]])
    # The page's own probes: just either side of the cut go opposite ways.
    check.equal(
        "probes at 0.9 and 1.1 of the cut",
        [half.to_fp16(0.9 * cut), half.to_fp16(1.1 * cut)],
        [0.0, bounds["fp16_min_subnormal"]],
    )
    fp16_tiny, bf16_tiny = half.to_fp16(tiny), half.to_bf16(tiny)
    check.equal("tiny in fp16", fp16_tiny, 0.0)
    check.close("tiny in bf16", bf16_tiny, tiny, rel=2**-8)
    check.that("tiny in bf16 is not 0", bf16_tiny != 0.0, "bf16 keeps 1e-8", bf16_tiny)
    ledger = {
        name: cite(f"why_fp32_bf16.{name}")
        for name in ("fp16_exp", "bf16_exp", "binades_lost", "repeat_step", "repeats", "bf16_sum")
    }
    check.equal(
        "binades_lost (from this line's bounds; why_fp32_bf16)",
        exponents["fp16_min_normal"] - exponents["bf16_min_normal"],
        ledger["binades_lost"].value,
    )
    bits = {
        "fp16_min_normal": (FP16_MIN_NORMAL, "fp16", "最小正规数"),
        "fp16_min_subnormal": (FP16_MIN_SUBNORMAL, "fp16", "最小次正规数"),
        "bf16_min_normal": (BF16_MIN_NORMAL, "bf16", "最小正规数"),
    }
    return ledger | {
        **{
            name: power(2, e).via(f"{bits[name][1]} 位模式 0x{bits[name][0]:04X} 读出的{bits[name][2]}（numpy 核过）")
            for name, e in exponents.items()
        },
        "cut": power(2, half.exponent(cut)).via("fp16 最小次正规数 ÷ 2：二分法找到的舍零边界"),
        **{
            f"{name}_bits": Fact(pattern, f"0x{pattern:04X}").via(f"输入：{kind} {what}的位模式")
            for name, (pattern, kind, what) in bits.items()
        },
        "fp16_max_log2": data(math.log2(fp16_max)),
        "probes": data(rounded),
        "tiny": scientific(tiny, 0).via("输入：本课自设的一个小梯度"),
        "tiny_fp16": number(fp16_tiny).via(f"{numbers.scientific(tiny, 0)[0]} 用 np.float16 真舍"),
        "tiny_bf16": scientific(bf16_tiny, 4).via(f"{numbers.scientific(tiny, 0)[0]} 舍成 bf16（float32 的高 16 位）"),
    }


# -- derived_numbers_appendix -------------------------------------------------------------

# The page's table of derived numbers, as it prints each number; every row comes from the figure that computes it.
APPENDIX_PAGE = {
    "keep_all": "4.15 TiB",
    "full_recompute": "106.75 GiB",
    "attention_share": "82.1%",
    "crossover": "5,734",
    "resident_tib": "9.76 TiB",
    "sequences_round": "≈ 94 条",
    "cards": "125 张",
}
CARD_GIB = 80  # the page's conversion base , not a particular card
D9_PAGE = {
    "working_set_gib": 177.9,
    "sequences": 56,
}  # the page's footnote: one recomputed MoE layer's working set added


@CHAPTER.figure(
    "derived_numbers_appendix",
    "本课自推的数：每一个都连着推导",
    source="课程页 §7.2 自推数字表，逐行核过；每行取自算它的那张图，不另算\n"
    "激活与算力为本课按算子自推（DeepSeek-V3 配置，arXiv 2412.19437）；80 GiB 是换算基准，不是某款卡",
)
def derived_numbers_appendix(check: Check, cite=catalogue.cite, card_gib: float = CARD_GIB):
    mountain = {
        name: cite(f"activation_mountain.{name}")
        for name in ("keep_all", "full_recompute", "moe_layer_exact", "copies")
    }
    share = {name: cite(f"six_nd_underestimate.{name}") for name in ("attention_share", "weight_share", "multiplier")}
    crossing = {name: cite(f"attention_crossover.{name}") for name in ("crossover", "v3_slope", "hidden")}
    step = {
        name: cite(f"peak_memory_timeline.{name}")
        for name in ("resident_tib", "sequences_round", "recompute_gib", "params", "bytes", "tib", "kib")
    }
    cited = mountain | share | crossing | step
    for name, page in APPENDIX_PAGE.items():
        if name in cited:
            check.equal(name, cited[name].text, page)
    multiplier = share["multiplier"].value
    check.that("multiplier (五到六倍)", 5 <= multiplier <= 6, "between 5 and 6", multiplier)
    # The rows lean on each other: one 106.75 GiB, one 82.1%, read the same in every figure.
    check.equal(
        "recompute_gib (ledger) = full_recompute (backprop)",
        step["recompute_gib"].value,
        mountain["full_recompute"].value,
    )
    check.close("attention_share + weight_share", share["attention_share"].value + share["weight_share"].value, 1.0)
    check.close("multiplier = 1 ÷ weight_share", share["multiplier"].value, 1 / share["weight_share"].value)
    check.close(
        "crossover = hidden ÷ v3_slope",
        crossing["crossover"].value,
        crossing["hidden"].value / crossing["v3_slope"].value,
    )
    # Derived live from the cited facts: the card count, and the page's footnote.
    tib_in_gib = step["kib"].value
    cards = step["resident_tib"].value * tib_in_gib / card_gib
    check.close("cards (9.76 TiB ÷ 80 GiB)", cards, 125, abs=0.05)
    card_count = number(round(cards), unit="张")
    check.equal("cards", card_count.text, APPENDIX_PAGE["cards"])
    working_set = mountain["full_recompute"].value + mountain["moe_layer_exact"].value
    check.close("working_set (the page's footnote)", working_set, D9_PAGE["working_set_gib"], abs=0.05)
    sequences_d9 = step["resident_tib"].value * tib_in_gib / working_set
    check.equal("sequences with the working set (the page's footnote)", round(sequences_d9), D9_PAGE["sequences"])
    gib = {"unit": "GiB", "unit_spoken": "吉字节"}
    resident = f"{step['resident_tib'].text} × {tib_in_gib:,}"
    derived = {
        "card_gib": number(card_gib, unit="GiB", unit_spoken="吉字节").via("输入：本课自设的换算基准，不是某款卡"),
        "cards": card_count.via(f"{resident} ÷ {card_gib:g} GiB，取整"),
        "one_minus_share": number(share["weight_share"].value, 3).via(
            f"1 − {share['attention_share'].text}：线性层占一层算力的份额"
        ),
        "working_set": approx(number(working_set, 1, **gib)).via(
            f"{mountain['full_recompute'].text} + {mountain['moe_layer_exact'].text}（反向时展开的那一层）"
        ),
        "sequences_d9": approx(number(round(sequences_d9), unit="条")).via(f"{resident} ÷ {working_set:.1f} GiB，取整"),
    }
    facts = cited | derived
    t = {name: fact.text for name, fact in facts.items()}
    title = {
        figure_id: catalogue.figure(figure_id).title
        for figure_id in ("activation_mountain", "attention_crossover", "six_nd_underestimate", "peak_memory_timeline")
    }
    rows = [
        {
            "id": "activations",
            "what": "激活",
            "number": f"{t['keep_all']} / {t['full_recompute']}",
            "chain": ["按算子逐项推（1.7 两张表）"],
            "risk": f"算子融合程度；{t['copies']} 份是否真存",
            "source": title["activation_mountain"],
        },
        {
            "id": "attention",
            "what": "注意力占一层算力",
            "number": t["attention_share"],
            "chain": ["causal 折半口径"],
            "risk": "口径；换头维度就变",
            "source": title["six_nd_underestimate"],
        },
        {
            "id": "crossing",
            "what": "attention 与线性层交点",
            "number": f"S ≈ {t['crossover']}",
            "chain": [f"{t['v3_slope']} · S = {t['hidden']}"],
            "risk": "粗略交点；随对照线而挪",
            "source": title["attention_crossover"],
        },
        {
            "id": "six_nd",
            "what": "6ND 低估",
            "number": t["multiplier"],
            "chain": [f"1 ÷ {t['one_minus_share']}"],
            "risk": f"继承 {t['attention_share']} 的全部不确定",
            "source": title["six_nd_underestimate"],
        },
        {
            "id": "resident",
            "what": "常驻 · 分水岭",
            "number": f"{t['resident_tib']} · {t['sequences_round']}",
            "chain": [f"{t['params']} × {t['bytes']} ÷ {t['tib']}", f"÷ {t['recompute_gib']}"],
            "risk": f"{t['bytes']} 是经典口径",
            "source": title["peak_memory_timeline"],
        },
        {
            "id": "cards",
            "what": f"折合 {t['card_gib']} 的卡",
            "number": t["cards"],
            "chain": [f"{t['resident_tib']} ÷ {t['card_gib']}"],
            "risk": f"{t['card_gib']} 是随手设的基准",
            "source": title["peak_memory_timeline"],
        },
    ]
    return facts | {"rows": data(rows)}
