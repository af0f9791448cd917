"""Chapter 4 in play order (专题四), adaptive: how AdaGrad, RMSProp and Adam guess the denominator, Adam's step size,
Muon's matrix view, a ruler for the update, learning-rate schedules, and how long β remembers.

Every number is run or solved in tools.models and checked here against the page and against a
second route where one exists (docs/figures.md lists each figure's checks). Where the page is wrong or
cannot be reproduced, the figure shows what we compute and says so.
"""

from __future__ import annotations

import itertools
import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from tools.course import catalogue, numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, data, myriad, number, percent, scientific, times, year
from tools.models import learning_rate, moments, msign, tiny_mlp

CHAPTER = Chapter(
    "adaptive",
    "自适应优化器：分母、步长与学习率曲线",
    summary=(
        "AdaGrad → RMSProp → Adam, Adam's update RMS, Muon, the 1e-3 update ruler, "
        "learning-rate schedules, GPT-3's and V3's learning-rate numbers, β's memory window, "
        "three explanations of warmup"
    ),
)

ADAM_BETAS = (0.9, 0.999)  # Adam's defaults, arXiv 1412.6980 Algorithm 1


def _log_ticks(exponents, powers: bool = False, prefix: str = "") -> Fact:
    """Labels of a log axis, placed at e on the axis: 0.1, 1, 10 for (−1, 0, 1), or 10⁻⁵ … with `powers`."""

    def label(e: int) -> str:
        return prefix + (numbers.power(10, e)[0] if powers else numbers.signed(10.0**e, max(0, -e)))

    return data([(e, label(e)) for e in exponents])


def _ticks(values, digits: int = 0, suffix: str = "", scale: float = 1.0) -> Fact:
    """Labels of a linear data axis at `values`: _ticks((0, 0.5, 1), suffix="%", scale=100) → 0%, 50%, 100%."""
    return data([(v, numbers.signed(v * scale, digits) + suffix) for v in values])


def _log_rows(t: np.ndarray, y: np.ndarray, points: int = 160) -> np.ndarray:
    """(log₁₀ t, log₁₀ y) at about `points` steps spread evenly in log t: what a log–log plot draws."""
    picks = np.unique(np.round(np.geomspace(1, len(t), points)).astype(int)) - 1
    return np.column_stack([np.log10(t[picks]), np.log10(y[picks])])


def _trimmed(x: float, significant: int = 3) -> str:
    """A count with `significant` digits and no trailing zeros: 1.25, 3.5, 13, 1,750."""
    digits = max(0, significant - 1 - math.floor(math.log10(abs(x))))
    text = numbers.signed(x, digits)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _yi(count: float) -> Fact:
    """A parameter count in 亿 with three significant digits: 125M → 1.25 亿."""
    text = _trimmed(count / 1e8)
    return Fact(count, f"{text} 亿", numbers.zh_decimal(text) + "亿")


def _count(n: int) -> Fact:
    """A small count said as one counts things: 2 → 两 (两层), 8 → 八."""
    text = numbers.signed(n)
    return Fact(n, text, numbers.zh_quantity(text))


def _short(count: float) -> str:
    """A token count for a formula: 375M, 25.4B, 14.8T."""
    scale, suffix = next((s, x) for s, x in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1, "")) if count >= s)
    return _trimmed(count / scale) + suffix


def _tokens(count: float) -> Fact:
    """A token count the page's way: 3,000 亿 below a trillion, 14.8 万亿 above."""
    if count < 1e12:
        return myriad(count, "亿")
    text = _trimmed(count / 1e12)
    return Fact(count, f"{text} 万亿", numbers.zh_decimal(text) + "万亿")


# -- adagrad_rmsprop_adam_chain -----------------------------------------------------------------
CHAIN_STEPS = 3000  # the plot's horizon: by then uncorrected RMSProp is within 3% of the ideal step
ADAGRAD_CHECKPOINT = 600  # the page's step


@CHAPTER.figure(
    "adagrad_rmsprop_adam_chain",
    "同一个分母，改良三次：AdaGrad → RMSProp → Adam",
    source="Adam：arXiv 1412.6980（偏差校正 §3）；AdaGrad：Duchi 等，JMLR 12(61)，2011；"
    "RMSProp：Tieleman & Hinton 2012，Lecture 6.5；32× 按 β₂ = 0.999 算；曲线为本课当场跑出",
)
def adagrad_rmsprop_adam_chain(
    check: Check,
    beta1: float = ADAM_BETAS[0],
    beta2: float = ADAM_BETAS[1],
    adagrad_form: str = "sum",
    adagrad_until: int = ADAGRAD_CHECKPOINT,
    correct: tuple[str, ...] = ("m", "v"),
    steps: int = CHAIN_STEPS,
    amplified: float = 10.0,
    small: float = 0.05,
):
    # A steady gradient: the ideal step is the same every time, 1 per unit learning rate.
    grads = np.ones(steps)
    t = np.arange(1, steps + 1)
    adagrad = moments.adagrad_steps(grads[:adagrad_until], adagrad_form)
    rmsprop_raw = moments.adam_steps(grads, 0.0, beta2, correct=())  # β₁ = 0: RMSProp
    adam_raw = moments.adam_steps(grads, beta1, beta2, correct=())
    rmsprop_fixed = moments.adam_steps(grads, 0.0, beta2, correct)
    adam_fixed = moments.adam_steps(grads, beta1, beta2, correct)

    # The page's five asserts.
    check.that(
        "AdaGrad decays monotonically",
        bool(np.all(np.diff(adagrad) < 0)),
        "every step smaller than the one before",
        adagrad[:4].round(4).tolist(),
    )
    check.that(
        f"AdaGrad small by step {adagrad_until}",
        adagrad[-1] < small,
        f"under {small:.0%} of step 1",
        float(adagrad[-1]),
    )
    check.that(
        "first step amplified (uncorrected RMSProp)",
        rmsprop_raw[0] > amplified,
        f"more than {amplified:g}× the ideal step",
        float(rmsprop_raw[0]),
    )
    for name, run in (("RMSProp", rmsprop_fixed), ("Adam", adam_fixed)):
        check.close(f"corrected = 1 from step 1 ({name})", float(np.abs(run - 1).max()), 0.0, abs=1e-12)
    peak_rmsprop, peak_adam = float(rmsprop_raw.max()), float(adam_raw.max())
    check.that(
        "Adam's uncorrected peak below RMSProp's",
        peak_adam < peak_rmsprop,
        "the momentum's own bias partly cancels",
        (peak_adam, peak_rmsprop),
    )

    # The runs against their closed forms.
    check.close(
        "AdaGrad run = 1/√t", float(np.abs(adagrad - moments.adagrad_closed(t[:adagrad_until])).max()), 0.0, abs=1e-12
    )
    check.close(
        "RMSProp run = 1/√(1 − β₂ᵗ)",
        float(np.abs(rmsprop_raw - moments.rmsprop_uncorrected_closed(t, beta2)).max()),
        0.0,
        abs=1e-9,
    )
    closed_adam = moments.adam_uncorrected_closed(t, beta1, beta2)
    check.close("Adam run = (1 − β₁ᵗ)/√(1 − β₂ᵗ)", float(np.abs(adam_raw - closed_adam).max()), 0.0, abs=1e-9)
    peak_step = int(np.argmax(adam_raw)) + 1
    check.equal("Adam's peak step (closed form)", int(np.argmax(closed_adam)) + 1, peak_step)

    # The page's numbers.
    check.close("AdaGrad at step 600 (page 4.1%)", float(adagrad[ADAGRAD_CHECKPOINT - 1]), 0.041, abs=5e-4)
    check.close("RMSProp's first step (page 32×)", float(rmsprop_raw[0]), 32, abs=0.5)
    check.close("Adam's uncorrected peak (page 6.6×)", peak_adam, 6.6, abs=0.05)
    check.equal("Adam's uncorrected peak step (the page: t = 12)", peak_step, 12)
    check.close("RMSProp back near the ideal step by the plot's end", float(rmsprop_raw[-1]), 1.0, abs=0.03)

    return {
        "beta1": number(beta1, 1).via("输入：Adam 的默认 β₁"),
        "beta2": number(beta2, 3).via("输入：Adam 的默认 β₂"),
        "adagrad_step": number(ADAGRAD_CHECKPOINT).via("输入：页面看的那一步"),
        "adagrad_share": percent(float(adagrad[-1]), 1).via(
            f"梯度恒定跑 AdaGrad：第 {adagrad_until} 步 ÷ 第 1 步 = 1/√{adagrad_until}"
        ),
        "rmsprop_first": times(float(rmsprop_raw[0])).via(f"不修正的 RMSProp 第 1 步：1/√(1 − β₂)，β₂ = {beta2:g}"),
        "adam_first": times(float(adam_raw[0]), 1).via(f"不修正的 Adam 第 1 步：(1 − β₁)/√(1 − β₂)，β₁ = {beta1:g}"),
        "adam_peak": times(peak_adam, 1).via(f"不修正的 Adam 步长 (1 − β₁ᵗ)/√(1 − β₂ᵗ)，t = 1…{steps} 里的最大值"),
        "adam_peak_step": number(peak_step).via("(1 − β₁ᵗ)/√(1 − β₂ᵗ) 取最大的 t（跑出来，闭式对拍）"),
        "corrected": number(1).via("两个平均各除以 1 − βᵗ 后，梯度恒定时 |m̂|/√v̂ 每步都是 1"),
        "adagrad_curve": data(_log_rows(t[:adagrad_until], adagrad)),
        "rmsprop_curve": data(_log_rows(t, rmsprop_raw)),
        "adam_curve": data(_log_rows(t, adam_raw)),
        "corrected_curve": data(_log_rows(t, adam_fixed)),
        "adam_peak_point": data((math.log10(peak_step), math.log10(peak_adam))),
        "x_ticks": _log_ticks(range(0, 4)),
        "y_ticks": _log_ticks(range(-1, 2)),
        "x_max": data(math.log10(steps)),
    }


# -- adam_update_rms ------------------------------------------------------------------------------
RMS_SIMULATION = {"params": 4096, "steps": 3000, "burn_in": 1000}  # the simulation's size
PAGE_UPDATE_RMS = 0.2294
SU_SIMULATED = 0.225  # Su Jianlin's own Gaussian simulation, as the page quotes it
MEASURED_RANGE = (0.2, 0.3)  # the page: measured on real models, the same across sizes


@CHAPTER.figure(
    "adam_update_rms",
    "Adam 一步迈多大：只看 β₁",
    source="苏剑林《为什么 Adam 的 Update RMS 是 0.2？》kexue.fm/archives/11267；"
    "对齐 update RMS 的做法随 Moonlight（arXiv 2502.16982）发表，K2 沿用；模拟为本课自跑",
)
def adam_update_rms(
    check: Check,
    beta1: float = ADAM_BETAS[0],
    beta2: float = ADAM_BETAS[1],
    mean: float = 0.0,
    tiny_scale: float = 1e-3,
    short_beta2: float = 0.99,
    seed: int = 0,
):
    closed = moments.adam_update_rms_closed(beta1)
    check.close("update RMS closed form (page 0.2294)", closed, PAGE_UPDATE_RMS, abs=5e-5)
    runs = {
        "base": moments.adam_update_rms_run(beta1, beta2, mean=mean, seed=seed, **RMS_SIMULATION),
        "tiny": moments.adam_update_rms_run(beta1, beta2, scale=tiny_scale, mean=mean, seed=seed, **RMS_SIMULATION),
        "short": moments.adam_update_rms_run(beta1, short_beta2, mean=mean, seed=seed, **RMS_SIMULATION),
    }
    simulated = {name: float(run.mean()) for name, run in runs.items()}
    check.close("simulation agrees with the closed form", simulated["base"], closed, abs=0.005)
    check.close("gradient scale drops out", simulated["tiny"], simulated["base"], rel=1e-6)
    check.close("β₂ barely matters", simulated["short"], closed, abs=0.005)
    check.close("same ballpark as Su's simulation (page 0.225)", simulated["base"], SU_SIMULATED, abs=0.006)
    check.that(
        "inside the measured range",
        MEASURED_RANGE[0] < simulated["base"] < MEASURED_RANGE[1],
        f"between {MEASURED_RANGE[0]} and {MEASURED_RANGE[1]}",
        simulated["base"],
    )

    windows = {}
    for beta in (0.9, 0.99, 0.999):
        run = moments.ema_window(np.full(round(30 * moments.window(beta)), beta))
        check.close(f"window of β = {beta} (run vs 1/(1 − β))", run, moments.window(beta), rel=1e-6)
        windows[beta] = moments.window(beta)

    first = RMS_SIMULATION["burn_in"] + 1
    trace_steps = np.arange(first, first + len(runs["base"]))
    thin = slice(None, None, 10)
    return {
        "beta1": number(beta1, 1).via("输入：Adam 的默认 β₁"),
        "beta2": number(beta2, 3).via("输入：Adam 的默认 β₂"),
        "short_beta2": number(short_beta2, 2).via("输入：本课自设的对照 β₂"),
        "one": number(1).via("输入：拿来对照的 1（单位约掉，不等于步长是 1）"),
        "closed": number(closed, 4).via(f"√((1 − β₁)/(1 + β₁))，β₁ = {beta1:g}"),
        "simulated": number(simulated["base"], 3).via(
            f"高斯噪声当梯度跑 Adam：第 {first:,}–{RMS_SIMULATION['steps']:,} 步更新 RMS 的平均"
        ),
        "su_simulated": number(SU_SIMULATED, 3).via("输入：苏剑林文中自己的模拟值"),
        "range_low": number(MEASURED_RANGE[0], 1).via("输入：苏剑林文中真实模型实测范围的下限"),
        "range_high": number(MEASURED_RANGE[1], 1).via("输入：苏剑林文中真实模型实测范围的上限"),
        "step_share": number(closed, 1).via(f"√((1 − β₁)/(1 + β₁))，β₁ = {beta1:g}，取一位小数"),
        "tiny_scale": scientific(tiny_scale, 0).via("输入：本课自设的梯度缩放倍数"),
        "params": number(RMS_SIMULATION["params"]).via("输入：本课模拟的参数个数"),
        "first_step": number(first).via(f"先跑 {RMS_SIMULATION['burn_in']:,} 步不计，之后的第一步"),
        "last_step": number(RMS_SIMULATION["steps"]).via("输入：本课模拟的总步数"),
        "traces": data({name: np.column_stack([trace_steps[thin], run[thin]]) for name, run in runs.items()}),
        "y_ticks": _ticks((0.1, 0.2, 0.3), 1),
        "window_short": _window(windows, 0.9),
        "window_mid": _window(windows, 0.99),
        "window_long": _window(windows, 0.999),
        "beta_short": number(0.9, 1).via("输入：举例的 β"),
        "beta_mid": number(0.99, 2).via("输入：举例的 β"),
        "beta_long": number(0.999, 3).via("输入：举例的 β"),
    }


def _window(windows: dict[float, float], beta: float) -> Fact:
    """A moving average's memory in steps, 1/(1 − β), with its formula."""
    return number(windows[beta]).via(f"1/(1 − β) = 1/(1 − {beta:g})，跑一遍滑动平均对拍")


# -- muon ---------------------------------------------------------------------------------------
MUON_GENERAL = ((2.0, 1.0), (0.5, -1.5))  # Ⓐ's general matrix (RECON: the page gives none)
MUON_DIAGONAL = (2.5, -0.4, 1.2)
MUON_VECTOR = (3.0, -4.0)
TRACE_SHAPE = (6, 4)  # panel Ⓑ: a random 6×4 gradient
NS_SHAPE = (24, 12)
LLAMA_405B = {"width": 16_384, "batch_tokens": 16e6}  # the author's estimate is for this (Keller Jordan 2024)
NANOGPT = {"width": 768, "batch_tokens": 524_288}


def _matrix_texts(m: np.ndarray, digits: int = 2) -> list[list[str]]:
    """Entries as the screen shows them, trailing zeros dropped: 2, 0.5, −1.5, 0.92."""

    def entry(x: float) -> str:
        text = numbers.signed(float(x), digits)
        return text.rstrip("0").rstrip(".") if "." in text else text

    return [["0" if abs(x) < 1e-12 else entry(x) for x in row] for row in np.atleast_2d(m)]


@CHAPTER.figure(
    "muon",
    "Muon：把动量矩阵换成它的「方向」",
    source="苏剑林《Muon 优化器赏析：从向量到矩阵的本质跨越》spaces.ac.cn/archives/10592（Ⓐ–Ⓓ）；"
    "Ⓒ 另见《Old Optimizer, New Norm: An Anthology》；NS 系数与 T·m/B：Keller Jordan 2024；"
    "DeepSeek-V4 用 Muon 一说照页面原话，未核实",
)
def muon(
    check: Check,
    seed: int = 0,
    samples: int = 2000,
    general=MUON_GENERAL,
    diagonal=MUON_DIAGONAL,
    vector=MUON_VECTOR,
    ns_steps: int = msign.NS_STEPS,
):
    rng = np.random.default_rng(seed)
    # Ⓐ three special cases.
    m = np.array(general)
    o = msign.msign(m)
    check.close("msign(M) is orthogonal", float(np.abs(o.T @ o - np.eye(len(o))).max()), 0.0, abs=1e-12)
    w, q = np.linalg.eigh(m.T @ m)
    polar = m @ q @ np.diag(w**-0.5) @ q.T  # second route: M (MᵀM)^(−1/2)
    check.close("msign(M) = M(MᵀM)^(−1/2)", float(np.abs(o - polar).max()), 0.0, abs=1e-12)
    d = np.diag(diagonal)
    check.equal("diagonal → element-wise sign", msign.msign(d).round(12).tolist(), np.diag(np.sign(diagonal)).tolist())
    v = np.array(vector).reshape(-1, 1)
    check.close("column vector → v/‖v‖", float(np.abs(msign.msign(v) - v / np.linalg.norm(v)).max()), 0.0, abs=1e-12)

    # Ⓑ the trace: msign(G) is the best step of spectral norm 1.
    g = rng.standard_normal(TRACE_SHAPE)
    best = msign.msign(g)
    nuclear = msign.nuclear_norm(g)
    check.close("tr(Gᵀ msign(G)) = ‖G‖_*", msign.trace_with(g, best), nuclear, rel=1e-12)
    check.close("‖msign(G)‖₂ = 1", msign.spectral_norm(best), 1.0, rel=1e-12)
    rivals = np.array([msign.trace_with(g, msign.random_semi_orthogonal(*TRACE_SHAPE, rng)) for _ in range(samples)])
    check.that(
        "random semi-orthogonal O never beats msign(G)",
        rivals.max() < nuclear,
        f"all {samples} below ‖G‖_* = {nuclear:.3f}",
        float(rivals.max()),
    )

    # Ⓒ the callback: the circle's and the square's answers are msign of a vector and of a diagonal.
    ball = catalogue.facts("gradient_descent_ball")
    g2 = np.asarray(ball["gradient_2d"].value, dtype=float)
    check.close(
        "circle's step = −msign(g as a column)",
        float(np.abs(-msign.msign(g2.reshape(-1, 1)).ravel() - ball["steepest_circle"].value).max()),
        0.0,
        abs=1e-3,
    )
    check.equal(
        "square's step = −msign(diag g)",
        (-np.diag(msign.msign(np.diag(g2)))).round(12).tolist(),
        np.asarray(ball["steepest_square"].value, dtype=float).tolist(),
    )

    # Ⓓ Newton–Schulz, run for real, and its FLOPs.
    x0 = rng.standard_normal(NS_SHAPE)
    iterates = msign.newton_schulz(x0, ns_steps)
    spectra = [msign.singular_values(x) for x in iterates]
    spread = [float(np.abs(s - 1).max()) for s in spectra]
    check.that(
        "Newton–Schulz pulls every singular value toward 1",
        spread[-1] < 0.4 < spread[0],
        "all within 0.4 of 1 after the last step, not before the first",
        spread,
    )
    check.that(
        "directions kept",
        float(np.abs(msign.msign(iterates[-1]) - msign.msign(x0)).max()) < 1e-9,
        "the iterate's own msign is the input's",
        "changed",
    )
    overheads = {}
    for name, config in (("Llama 405B", LLAMA_405B), ("NanoGPT", NANOGPT)):
        counted = msign.ns_flops(config["width"], ns_steps) / msign.step_flops(config["width"], config["batch_tokens"])
        closed = msign.ns_overhead_closed(config["width"], config["batch_tokens"], ns_steps)
        check.close(f"NS overhead {name}: FLOP count = T·m/B", counted, closed, rel=1e-12)
        check.that(f"NS overhead {name} under 1% of FLOPs (the author's estimate)", closed < 0.01, "< 1%", closed)
        overheads[name] = closed

    counts, edges = np.histogram(rivals, bins=24, range=(float(rivals.min()), nuclear))
    shape, ns_shape = "×".join(map(str, TRACE_SHAPE)), "×".join(map(str, NS_SHAPE))
    ns_rounds = f"Newton–Schulz {ns_steps} 轮后"
    return {
        "general": data(_matrix_texts(m)),
        "general_sign": data(_matrix_texts(o)),
        "diagonal": data(_matrix_texts(d, 1)),
        "diagonal_sign": data(_matrix_texts(msign.msign(d), 0)),
        "vector": data(_matrix_texts(v, 0)),
        "vector_sign": data(_matrix_texts(msign.msign(v), 1)),
        "nuclear": number(nuclear, 2).via(f"‖G‖_*：G（随机 {shape} 高斯矩阵）的奇异值之和"),
        "trace_best": number(msign.trace_with(g, best), 2).via("tr(Gᵀ·msign(G))，应等于 ‖G‖_*"),
        "rival_best": number(float(rivals.max()), 2).via(f"{samples} 个随机半正交 O 里 tr(GᵀO) 的最大值"),
        "samples": number(samples).via("输入：本课自设的随机试验次数"),
        "rival_counts": data(counts),
        "rival_edges": data(edges),
        "gradient_2d": data(g2),
        "steepest_circle": ball["steepest_circle"],
        "steepest_square": ball["steepest_square"],
        "spectra": data(spectra),
        "ns_steps": number(ns_steps).via("输入：Keller Jordan 实现里的迭代轮数"),
        "ns_rounds": data(["输入"] + [f"第 {k} 轮" for k in range(1, ns_steps + 1)]),
        "trace_shape": Fact(
            TRACE_SHAPE, shape, "乘".join(numbers.zh_int(n) for n in TRACE_SHAPE), how="输入：本课自设的梯度形状"
        ),
        "sv_low": number(float(spectra[-1].min()), 2).via(f"{ns_rounds}：随机 {ns_shape} 矩阵最小的奇异值"),
        "sv_high": number(float(spectra[-1].max()), 2).via(f"{ns_rounds}：随机 {ns_shape} 矩阵最大的奇异值"),
        "one": number(1).via("msign 的定义：奇异值全换成 1；谱范数的上限"),
        "model": Fact(LLAMA_405B["width"], "Llama 405B", "Llama 四零五 B", how="输入：作者估算所用的模型"),
        "overhead": percent(overheads["Llama 405B"], 1).via(
            f"T·m/B = {ns_steps} × {LLAMA_405B['width']:,} ÷ {LLAMA_405B['batch_tokens']:,.0f}"
        ),
        "limit": percent(0.01, 0).via("输入：作者估计的上限"),
        "width": number(LLAMA_405B["width"]).via("输入：Llama 405B 的宽度 m"),
        "batch_tokens": myriad(LLAMA_405B["batch_tokens"]).via("输入：Llama 405B 一步的 token 数 B"),
    }


# -- weight_update_ratio ---------------------------------------------------------------------------
RULER = 1e-3  # CS231n: ‖ΔW‖/‖W‖ "somewhere around 1e-3"
SWEEP = np.logspace(-4, 0, 41)  # ten learning rates a decade
PAGE_NAN_MULTIPLIER = 2.1
PAGE_STEPS = 400
STEADY_LAST = 100  # "steady": the geometric mean over the run's last 100 steps
BISECT_TOLERANCE = 0.01  # bisect until the bracket's ends are within 1% of each other


@CHAPTER.figure(
    "weight_update_ratio",
    "一把尺子：每步更新约为权重的千分之一",
    source="CS231n《Neural Networks Part 3》“Ratio of weights:updates”；"
    "网络与数据为本课自设（tanh MLP 8→16→4，numpy 手写，种子 0）；页面的 2.1× 没有数据，无法复现",
)
def weight_update_ratio(
    check: Check,
    lrs: np.ndarray = SWEEP,
    steps: int = PAGE_STEPS,
    seed: int = 0,
    top_multiplier: float = 1000.0,
    tolerance: float = 0.15,
):
    task = tiny_mlp.make_task(seed)
    x, y = task.inputs[:8], task.targets[:8]
    analytic = tiny_mlp.loss_and_grads(task.params, x, y)[1]
    numeric = tiny_mlp.numeric_grads(task.params, x, y)
    check.close(
        "hand-written backward = finite differences",
        max(float(np.abs(a - b).max()) for a, b in zip(analytic, numeric)),
        0.0,
        abs=1e-7,
    )

    runs = tiny_mlp.sweep(task, lrs, steps)
    settled = [(run.lr, tiny_mlp.steady_ratio(run, STEADY_LAST)) for run in runs if run.finite]
    chosen_lr, chosen = min(settled, key=lambda pair: abs(math.log(pair[1] / RULER)))
    check.that(
        "swept lr lands on the ruler",
        abs(math.log(chosen / RULER)) < math.log(1 + tolerance),
        f"steady ratio within {tolerance:.0%} of {RULER:g}",
        chosen,
    )
    near = [ratio for lr, ratio in settled if chosen_lr / 3 <= lr <= chosen_lr * 3]
    check.that(
        "the ratio grows with the lr around the pick",
        bool(np.all(np.diff(near) > 0)),
        "a larger lr, a larger steady ratio",
        near,
    )

    def fails(multiplier: float) -> bool:
        return not tiny_mlp.train(task, chosen_lr * multiplier, steps).finite

    check.that(
        "the bracket straddles NaN",
        not fails(1.0) and fails(top_multiplier),
        f"×1 stays finite and ×{top_multiplier:g} overflows within {steps} steps",
        (fails(1.0), fails(top_multiplier)),
    )
    found = tiny_mlp.bisect_boundary(fails, 1.0, top_multiplier, BISECT_TOLERANCE)
    boundary = found.value
    check.that("bisected multiplier overflows", fails(boundary), "NaN within the steps", boundary)
    check.that("just below it does not", not fails(boundary * 0.99), "finite for every step", boundary * 0.99)
    grid = np.geomspace(boundary / 4, boundary * 4, 13)
    outcomes = [fails(k) for k in grid]
    check.equal("one boundary: fine below, NaN above", outcomes, [k >= boundary for k in grid])
    check.that(
        "the page's ×2.1 does not reproduce here",
        not fails(PAGE_NAN_MULTIPLIER),
        "our run at ×2.1 stays finite",
        PAGE_NAN_MULTIPLIER,
    )

    spread = 10  # the two other curves: the picked lr divided and multiplied by this
    shown = {"small": chosen_lr / spread, "right": chosen_lr, "large": chosen_lr * spread}
    curves = {}
    for name, lr in shown.items():
        run = tiny_mlp.train(task, lr, steps)
        check.that(f"the {name} run stays finite", run.finite, "finite", run.steps)
        curves[name] = run
    check.that(
        "ten times the lr, about ten times the ratio",
        6 < tiny_mlp.steady_ratio(curves["large"], STEADY_LAST) / chosen < 16,
        "between 6× and 16×",
        tiny_mlp.steady_ratio(curves["large"], STEADY_LAST) / chosen,
    )

    failed = [run.lr for run in runs if not run.finite]
    sizes = "→".join(map(str, tiny_mlp.SIZES))

    def ratio_fact(lr: float, run: tiny_mlp.Run | None = None) -> Fact:
        """A steady ‖ΔW‖/‖W‖, with the run it comes from."""
        value = chosen if run is None else tiny_mlp.steady_ratio(run, STEADY_LAST)
        return scientific(value, 1).via(
            f"学习率 {scientific(lr, 1).text} 跑 {steps} 步，末 {STEADY_LAST} 步 ‖ΔW‖/‖W‖ 的几何平均"
        )

    return {
        "ruler": scientific(RULER, 0).via("输入：CS231n 的经验值"),
        "steps": number(steps).via("输入：本课自设的训练步数"),
        "samples": number(len(task.inputs)).via("输入：本课自设的样本数"),
        "layers": _count(len(tiny_mlp.SIZES) - 1).via(f"网络宽度 {sizes} 之间的层数"),
        "n_in": _count(tiny_mlp.SIZES[0]).via("输入：本课自设的输入宽度"),
        "n_hidden": _count(tiny_mlp.SIZES[1]).via("输入：本课自设的隐层宽度"),
        "n_out": _count(tiny_mlp.SIZES[2]).via("输入：本课自设的输出宽度"),
        "bracket_low": times(1).via("二分的下端：选中的学习率本身，跑完不溢出"),
        "bracket_high": times(top_multiplier).via("输入：本课自设的二分上端，跑起来会溢出"),
        "sweep_size": number(len(lrs)).via(f"输入：{lrs[0]:g} 到 {lrs[-1]:g} 对数均匀取点，本课自设"),
        "steady_last": number(STEADY_LAST).via("输入：算稳定比值时取的末段步数"),
        "lr": scientific(chosen_lr, 1).via(f"扫描里稳定比值离 {scientific(RULER, 0).text} 最近（按对数）的学习率"),
        "ratio": ratio_fact(chosen_lr),
        "lr_small": scientific(shown["small"], 1).via(f"选中的学习率 ÷ {spread}"),
        "lr_large": scientific(shown["large"], 1).via(f"选中的学习率 × {spread}"),
        "ratio_small": ratio_fact(shown["small"], curves["small"]),
        "ratio_large": ratio_fact(shown["large"], curves["large"]),
        "curve_count": _count(len(shown)).via(f"画的曲线：选中的学习率，及它 ÷ {spread}、× {spread}"),
        "multiplier": times(boundary, 1).via(
            f"二分：学习率放大几倍，{steps} 步内出 NaN（×1 到 ×{top_multiplier:g} 之间）"
        ),
        "halvings": number(len(found.brackets) - 1).via(f"二分的轮数，直到上下端相差不到 {BISECT_TOLERANCE:.0%}"),
        "page_multiplier": times(PAGE_NAN_MULTIPLIER, 1).via("输入：页面的说法（页面没有数据，无法复现）"),
        "sweep": data(np.log10(np.array(settled))),
        "sweep_failed": data(np.log10(np.array(failed))),
        "chosen": data((math.log10(chosen_lr), math.log10(chosen))),
        "brackets": data(np.log10(np.array(found.brackets))),
        "curves": data(
            {name: np.column_stack([np.arange(1, run.steps + 1), np.log10(run.ratios)]) for name, run in curves.items()}
        ),
        "lr_ticks": _log_ticks(range(-4, 1), powers=True),
        "ratio_ticks": _log_ticks(range(-5, -1), powers=True),
        "step_ticks": _ticks((0, steps // 2, steps)),
        "multiplier_ticks": _log_ticks(range(0, 4), prefix="×"),
    }


# -- lr_schedules --------------------------------------------------------------------------------
GPT3_TOKENS_PER_STEP = 3.2e6  # GPT-3 175B's batch (Table 2.1), for stepping through its schedule


def _v3_schedule(check: Check) -> learning_rate.Schedule:
    """V3's schedule, its warmup in tokens stepped through the batch ramp (and checked in closed form)."""
    seen = learning_rate.tokens_seen(learning_rate.v3_batch_tokens, 1e12)
    warmup = float(seen[learning_rate.V3_WARMUP_STEPS])
    check.close(
        "V3 warmup tokens: steps on the batch ramp = closed form",
        warmup,
        learning_rate.v3_warmup_tokens_closed(),
        rel=1e-3,
    )
    return learning_rate.v3_wsd(warmup)


@CHAPTER.figure(
    "lr_schedules",
    "学习率只有三段：升上去、稳住、降下来",
    source="GPT-3：arXiv 2005.14165 附录 B（页面误标为 §2.3）；DeepSeek-V3：arXiv 2412.19437 §4.2；"
    "V3 末段 3.3% 落在虚线下；V3 warmup 的 token 数按 batch 线性爬升估算；"
    "warmup 机制 arXiv 2406.09405；WSD 形状分析 arXiv 2410.05192",
)
def lr_schedules(check: Check, gpt3: learning_rate.Schedule | None = None, floor: float = 0.1, zoom: float = 0.004):
    gpt3 = gpt3 or learning_rate.gpt3_cosine()
    v3 = _v3_schedule(check)
    for schedule, batch in ((gpt3, lambda _seen: GPT3_TOKENS_PER_STEP), (v3, learning_rate.v3_batch_tokens)):
        seen = learning_rate.tokens_seen(batch, schedule.total)
        found = learning_rate.phase_changes(seen, schedule.at(seen))
        closed = schedule.breakpoints()
        check.equal(f"{schedule.name}: phases found in the run", len(found), len(closed))
        step = float(np.diff(seen).max())
        for k, (run, exact) in enumerate(zip(found, closed)):
            check.close(
                f"{schedule.name}: breakpoint {k + 1} (run vs closed form)",
                run / schedule.total,
                exact,
                abs=2 * step / schedule.total,
            )
    check.close("GPT-3 warmup share (page 0.125%)", gpt3.breakpoints()[0], 0.00125, rel=1e-12)
    check.close("GPT-3 ends at the dashed line", float(gpt3.at(gpt3.total - 1)), floor, rel=1e-12)
    cosine_end = v3.phases[2].end
    check.close("V3's cosine ends at the dashed line", float(v3.at(cosine_end)), floor, rel=1e-9)
    last = float(v3.at(v3.total - 1))
    check.that("V3's last phase dips below the dashed line", last < floor, f"below {floor:.0%} of peak", last)
    check.close("V3's last value (7.3e-6 / 2.2e-4)", last, 7.3e-6 / 2.2e-4, rel=1e-12)
    peak_ratio = v3.peak / gpt3.peak
    check.close("peak ratio V3 / GPT-3 175B (page 3.7×)", peak_ratio, 3.7, abs=0.05)
    check.that(
        "both warmups fit in the zoom",
        max(gpt3.breakpoints()[0], v3.breakpoints()[0]) < zoom,
        f"under {zoom:.1%} of training",
        (gpt3.breakpoints()[0], v3.breakpoints()[0]),
    )

    def share(end: float, schedule: learning_rate.Schedule) -> str:
        return f"{_short(end)} ÷ {_short(schedule.total)}"

    def lr(value: float) -> str:
        return scientific(value, 1).text

    v3_lengths = " + ".join(_short(p.end - p.start) for p in v3.phases[2:])
    whole = np.concatenate([np.linspace(0, 1, 1201), *(np.array(s.breakpoints()) for s in (gpt3, v3))])
    whole = np.unique(np.concatenate([whole, whole - 1e-9]).clip(0, 1))
    near = np.linspace(0, zoom, 241)
    return {
        "gpt3_curve": data(np.column_stack([whole, gpt3.curve(whole)])),
        "v3_curve": data(np.column_stack([whole, v3.curve(whole)])),
        "gpt3_zoom": data(np.column_stack([near, gpt3.curve(near)])),
        "v3_zoom": data(np.column_stack([near, v3.curve(near)])),
        "floor": percent(floor, 0).via(
            f"输入：GPT-3 余弦的终点；V3 的 {lr(v3.phases[2].finish * v3.peak)} ÷ {lr(v3.peak)} 与它相同"
        ),
        "zoom": percent(zoom, 1).via("输入：本课自设的放大窗宽度"),
        "gpt3_warmup": percent(gpt3.breakpoints()[0], 3).via(
            f"warmup 的 token 数 ÷ 总 token 数 = {share(gpt3.phases[0].end, gpt3)}"
        ),
        "v3_warmup": percent(v3.breakpoints()[0], 2).via(
            f"头 {learning_rate.V3_WARMUP_STEPS:,} 步按 batch 爬升折算成 token，÷ 总数：{share(v3.phases[0].end, v3)}"
        ),
        "v3_warmup_steps": number(learning_rate.V3_WARMUP_STEPS).via("输入：DeepSeek-V3 论文 §4.2"),
        "gpt3_decay_end": percent(gpt3.breakpoints()[1], 0).via(
            f"余弦结束处 ÷ 总 token 数 = {share(gpt3.phases[1].end, gpt3)}"
        ),
        "v3_stable_end": percent(v3.breakpoints()[1], 0).via(
            f"稳定段结束处 ÷ 总 token 数 = {share(v3.phases[1].end, v3)}"
        ),
        "v3_last": percent(last, 1).via(
            f"最后一段的学习率 ÷ 峰值 = {lr(v3.phases[-1].finish * v3.peak)} ÷ {lr(v3.peak)}"
        ),
        "peak_ratio": times(peak_ratio, 1).via(f"峰值学习率之比：{lr(v3.peak)} ÷ {lr(gpt3.peak)}"),
        "gpt3_total": _tokens(gpt3.total).via("输入：GPT-3 论文附录 B 的总 token 数"),
        "v3_total": _tokens(v3.total).via(f"V3 §4.2 各段相加：{_short(v3.phases[1].end)} + {v3_lengths}"),
        "progress_ticks": _ticks((0, 0.5, 1), suffix="%", scale=100),
        "zoom_ticks": data([(0, "0"), (zoom, percent(zoom, 1).text)]),
        "level_ticks": data([(floor, percent(floor, 0).text), (1.0, "峰值")]),
    }


# -- lr_numbers -----------------------------------------------------------------------------------
V3_PEAK, V3_ACTIVE, V3_TOTAL = 2.2e-4, 37e9, 671e9
PAGE_INTERPOLATED = 0.8e-4  # the page's 「0.8×10⁻⁴ 上下」, rounded before dividing
PAGE_SEVEN_SIZES = 7  # the page says 「七档」 in three places; the table has eight rows


@CHAPTER.figure(
    "lr_numbers",
    "规模越大，学习率越小、batch 越大",
    source="GPT-3 arXiv 2005.14165 表 2.1、§2.3 与附录 B：八档，页面另几处写「七档」；"
    "表中数值取自论文（页面正文丢失）；DeepSeek-V3 arXiv 2412.19437 §4.2；"
    "η* ≈ η_max/(1 + B_noise/B)：梯度噪声尺度，见苏剑林 kexue.fm/archives/10542",
)
def lr_numbers(check: Check, table: tuple[learning_rate.Gpt3Size, ...] = learning_rate.GPT3_TABLE_2_1):
    check.equal("Table 2.1 rows (page: 八个规模)", len(table), 8)
    small, large = table[0], table[-1]
    check.that(
        "larger model, smaller lr",
        all(a.lr >= b.lr for a, b in itertools.pairwise(table)),
        "lr never rises down the table",
        [row.lr for row in table],
    )
    check.that(
        "larger model, larger batch",
        all(a.batch_tokens <= b.batch_tokens for a, b in itertools.pairwise(table)),
        "batch never shrinks down the table",
        [row.batch_tokens for row in table],
    )
    scale = large.params / small.params
    lr_span = small.lr / large.lr
    check.close("scale span (page 1,400×)", scale, 1400, rel=1e-12)
    check.close("lr span (page 10×)", lr_span, 10, rel=1e-12)
    check.equal("first row = 12 layers, width 768 (the page)", (small.layers, small.width), (12, 768))

    peak_ratio = V3_PEAK / large.lr
    check.close("V3 / GPT-3 175B (page 3.7×)", peak_ratio, 3.7, abs=0.05)
    by_name = {row.name: row for row in table}
    below, above = by_name["13B"], by_name["175B"]
    at_active = learning_rate.log_interpolate(V3_ACTIVE, below.params, below.lr, above.params, above.lr)
    check.close("GPT-3 lr at 37B, log-linear (page ≈ 0.8e-4)", at_active, 0.8e-4, abs=0.05e-4)
    gap = V3_PEAK / at_active
    page_gap = V3_PEAK / PAGE_INTERPOLATED
    # 2.75 is a rounding tie (the page rounds it up): the page's text is shown, checked against the quotient.
    check.close("the gap after the rescue (page 2.8×, from 0.8 rounded)", page_gap, 2.75, rel=1e-12)
    half_up = Decimal(page_gap).quantize(Decimal("0.1"), ROUND_HALF_UP)
    check.equal("2.75 rounded half up (page 2.8×)", str(half_up), "2.8")
    check.that("still far apart", gap > 2, "more than 2×", gap)

    first, last = learning_rate.V3_BATCH
    check.equal("V3 batch ramp ×5", last / first, 5.0)

    ratios = np.array([0.25, 1.0, 4.0, 16.0])
    fractions = learning_rate.best_lr_fraction(ratios)
    for ratio, fraction, page in zip(ratios, fractions, (0.2, 0.5, 0.8, 0.94)):
        check.close(f"η*/η_max at B = {ratio:g}·B_noise", float(fraction), page, abs=0.005)
    sweep = np.logspace(-1.5, 2.5, 161)
    curve = learning_rate.best_lr_fraction(sweep)
    check.that(
        "η* rises with the batch but never past η_max",
        bool(np.all(np.diff(curve) > 0) and curve.max() < 1),
        "monotone and bounded by 1",
        float(curve.max()),
    )

    def lr(value: float) -> str:
        return scientific(value, 1).text

    rows = [
        {
            "name": row.name,
            "params": _yi(row.params).text,
            "batch": myriad(row.batch_tokens).text,
            "lr": scientific(row.lr, 1).text,
            "lr_value": row.lr,
        }
        for row in table
    ]
    return {
        "rows": data(rows),
        "sizes": number(len(table)).via("GPT-3 论文表 2.1 的行数"),
        "page_sizes": number(PAGE_SEVEN_SIZES).via("输入：页面几处的说法（与表不符）"),
        "scale": times(scale).via(f"参数量之比：{_short(large.params)} ÷ {_short(small.params)}（表 2.1 末行 ÷ 首行）"),
        "lr_span": times(lr_span).via(f"学习率之比：{lr(small.lr)} ÷ {lr(large.lr)}（表 2.1 首行 ÷ 末行）"),
        "small_lr": scientific(small.lr, 1).via(f"输入：表 2.1 {small.name} 行"),
        "large_lr": scientific(large.lr, 1).via(f"输入：表 2.1 {large.name} 行"),
        "v3_params": _yi(V3_TOTAL).via("输入：DeepSeek-V3 的总参数量"),
        "v3_active": _yi(V3_ACTIVE).via("输入：DeepSeek-V3 每个 token 激活的参数量"),
        "v3_lr": scientific(V3_PEAK, 1).via("输入：DeepSeek-V3 §4.2 的峰值学习率"),
        "peak_ratio": times(peak_ratio, 1).via(f"{lr(V3_PEAK)} ÷ {lr(large.lr)}（V3 ÷ GPT-3 {large.name}）"),
        "interpolated": scientific(at_active, 1).via(
            f"表中 {below.name}、{above.name} 两行之间，学习率对 log N 线性插值到 {_short(V3_ACTIVE)}"
        ),
        "gap": times(gap, 1).via(f"{lr(V3_PEAK)} ÷ 插值得到的 {lr(at_active)}"),
        "page_gap": Fact(page_gap, "2.8×", "二点八倍").via(
            f"页面的除法 {lr(V3_PEAK)} ÷ {PAGE_INTERPOLATED * 1e4:g}×10⁻⁴ = {page_gap:g}，四舍五入"
        ),
        "page_interpolated": Fact(PAGE_INTERPOLATED, "0.8×10⁻⁴", "零点八乘以十的负四次方").via(
            "输入：页面的插值，已先舍入到一位"
        ),
        "v3_batch_first": number(first).via("输入：DeepSeek-V3 §4.2，batch 起点（条序列）"),
        "v3_batch_last": number(last).via("输入：DeepSeek-V3 §4.2，batch 终点（条序列）"),
        "v3_batch_ratio": times(last / first).via(f"{last:,} ÷ {first:,}"),
        "ceiling_curve": data(np.column_stack([np.log10(sweep), curve])),
        "ceiling_points": data(np.column_stack([np.log10(ratios), fractions])),
        "ceiling_texts": data([number(float(f), 2).text for f in fractions]),
        "batch_ticks": _log_ticks(range(-1, 3)),
    }


# -- beta_windows -----------------------------------------------------------------------------------
PALM_STEPS = (1, 10, 100, 1_000, 10_000, 100_000)  # 「代几个数进去看看」: the page's lost table, regenerated
PALM_DECAY = 0.8
FIXED_BETA2 = 0.99
RARE_PERIOD = 2000  # RECON: a rare token's gradient shows up once every 2,000 steps
RARE_STEPS = 100_000
MEMORY_BETA, MEMORY_BARS = 0.9, 30  # the opening picture: what each of the last 30 inputs still weighs


@CHAPTER.figure(
    "beta_windows",
    "β 决定老的贡献能活多久",
    source="PaLM，arXiv 2204.02311 超参段（β₂ = 1 − k^−0.8）；表为本课代入重算（页面原表丢失）；"
    "生僻 token 每 2,000 步一现为本课示意；「β 不趋于 1 时 bf16 才扛得住」是页面自推的猜想",
)
def beta_windows(
    check: Check,
    decay: float = PALM_DECAY,
    fixed: float = FIXED_BETA2,
    period: int = RARE_PERIOD,
    steps: int = RARE_STEPS,
):
    rows, points = [], []
    for k in PALM_STEPS:
        beta = float(moments.palm_beta2(k, decay))
        window = moments.ema_window(moments.palm_beta2(np.arange(1, k + 1), decay))
        check.close(f"PaLM window at step {k} (run vs k^{decay})", window, k**decay, rel=1e-9)
        rows.append({"k": number(k).text, "beta": number(beta, 5).text, "window": number(window, 1).text})
        points.append((math.log10(k), math.log10(window)))
    check.close("PaLM β₂ at 100,000 (page: 涨到 0.9999)", float(moments.palm_beta2(100_000, decay)), 0.9999, abs=5e-6)
    fixed_window = moments.ema_window(np.full(round(30 * moments.window(fixed)), fixed))
    check.close("fixed β₂ = 0.99 remembers 100 steps (page)", fixed_window, 100, rel=1e-6)
    crossing = fixed_window ** (1 / decay)
    palm_there = float(1 / (1 - moments.palm_beta2(crossing, decay)))
    check.close("PaLM's window passes 100 steps at k = 100^(1/0.8)", palm_there, fixed_window, rel=1e-9)

    # A rare token: its squared gradient is 1 once every `period` steps, else 0.
    g2 = np.zeros(steps)
    g2[period - 1 :: period] = 1.0
    k = np.arange(1, steps + 1)
    v_fixed = moments.ema_run(g2, np.full(steps, fixed))
    v_palm = moments.ema_run(g2, moments.palm_beta2(k, decay))
    # The last whole gap: from one sighting to the step before the next, v only decays.
    seen, before_next = steps - 1 - period, steps - 2
    swing_fixed = float(v_fixed[seen] / v_fixed[before_next])
    swing_palm = float(v_palm[seen] / v_palm[before_next])
    check.close("fixed β₂: swing = β^−(period−1) (closed form)", swing_fixed, fixed ** -(period - 1), rel=1e-6)
    gap = moments.palm_beta2(k[seen + 1 : before_next + 1], decay)
    check.close("PaLM: swing = 1/Π β over the gap (closed form)", swing_palm, float(1 / np.prod(gap)), rel=1e-6)
    check.that("fixed 0.99 forgets the rare token", swing_fixed > 1e6, "v swings by more than a million×", swing_fixed)
    check.that("PaLM's growing window keeps it", swing_palm < 2, "v stays within 2×", swing_palm)

    gaps_shown = 3  # the trace shows the last three gaps between sightings
    shown = np.arange(steps - gaps_shown * period, steps, 5)
    return {
        "rows": data(rows),
        "palm_points": data(points),
        "decay": number(decay, 1).via("输入：PaLM 的 β₂ = 1 − k^(−d) 里的 d"),
        "early_window": number(PALM_STEPS[0] ** decay).via(f"第 k 步的窗口 k^d：{PALM_STEPS[0]}^{decay:g}"),
        "fixed": number(fixed, 2).via("输入：常见的固定 β₂"),
        "fixed_window": number(fixed_window).via(f"1/(1 − β₂) = 1/(1 − {fixed:g})，跑一遍滑动平均对拍"),
        "crossing": number(crossing).via(f"k^{decay:g} = {fixed_window:g} 的解：k = {fixed_window:g}^(1/{decay:g})"),
        "period": number(period).via("输入：本课自设的生僻 token 间隔", schematic=True),
        "late_step": number(steps).via("输入：本课看到的最后一步"),
        "late_window": number(steps**decay).via(f"第 k 步的窗口 k^d：{steps:,}^{decay:g}"),
        "late_beta": number(float(moments.palm_beta2(steps, decay)), 4).via(f"1 − k^(−d) = 1 − {steps:,}^(−{decay:g})"),
        "swing_fixed": scientific(swing_fixed, 0).via(
            f"两次出现之间 v 的最大 ÷ 最小 = β₂^−({period:,} − 1) = {fixed:g}{numbers.superscript(-(period - 1))}"
        ),
        "swing_palm": times(swing_palm, 1).via(f"PaLM 的 v 在最后一个 {period:,} 步间隔里的最大 ÷ 最小 = 1/∏β₂"),
        "fixed_trace": data(np.column_stack([shown, np.log10(v_fixed[shown])])),
        "palm_trace": data(np.column_stack([shown, np.log10(v_palm[shown])])),
        "window_curve": data(np.column_stack([np.linspace(0, 5, 101), decay * np.linspace(0, 5, 101)])),
        "fixed_level": data(math.log10(fixed_window)),
        "step_ticks": _log_ticks(range(0, 6), powers=True),
        "window_ticks": _log_ticks(range(0, 5), powers=True),
        "trace_ticks": _log_ticks(range(-10, -1, 2), powers=True),
        "trace_first": number(int(shown[0])).via(
            f"画出最后 {gaps_shown} 个间隔：{steps:,} − {gaps_shown} × {period:,}"
        ),
        "trace_last": number(steps).via("画出的一段的终点：最后一步"),
        "memory_beta": number(MEMORY_BETA, 1).via("输入：开头那张图举例的 β"),
        "memory_weights": data(moments.ema_weights(np.full(MEMORY_BARS, MEMORY_BETA))),
    }


# -- warmup_explanations ------------------------------------------------------------------------------
WARMUP_STUDY = {"year": 2024, "layers": 4, "context": 64}  # arXiv 2406.09405's Transformer experiments


@CHAPTER.figure(
    "warmup_explanations",
    "warmup 为什么有用：三种说法，各有前提",
    source="Why Warmup the Learning Rate?，arXiv 2406.09405（NeurIPS 2024；局限见其 Limitations）；"
    "苏剑林《模型优化漫谈：BERT 的初始标准差为什么是 0.02？》kexue.fm/archives/8747（作者分析，非同行评议）；"
    "Pre-LN 可去 warmup：arXiv 2002.04745；loss 曲线为示意",
)
def warmup_explanations(check: Check, study: dict = WARMUP_STUDY):
    schedules = catalogue.facts("lr_schedules")
    check.close("GPT-3 warmup share (page 0.125%)", schedules["gpt3_warmup"].value, 0.00125, rel=1e-12)
    check.that(
        "a study far smaller than the models discussed",
        study["layers"] < 10 and study["context"] < 1000,
        "a few layers, a short context",
        study,
    )
    return {
        "year": year(study["year"]).via("输入：arXiv 2406.09405 的发表年份"),
        "layers": number(study["layers"]).via("输入：arXiv 2406.09405 里 Transformer 实验的层数"),
        "context": number(study["context"]).via("输入：arXiv 2406.09405 里 Transformer 实验的上下文长度"),
        "gpt3_warmup": schedules["gpt3_warmup"],
        "v3_warmup_steps": schedules["v3_warmup_steps"],
        "loss_sketch": data(_loss_sketch()),
    }


def _loss_sketch() -> np.ndarray:
    """A schematic loss (no scale): a fast drop to a plateau, a while flat, then a climb (the page's symptom)."""
    t = np.linspace(0, 1, 121)
    plateau = 0.35 + 0.65 * np.exp(-t / 0.08)
    climb = ((t - 0.6).clip(0) / 0.4) ** 2.2 * 0.9
    return np.column_stack([t, plateau + climb])
