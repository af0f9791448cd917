"""Chapter 11 in play order (专题八), mup: why the learning rate must follow the width, and how μP makes it stay.

Every number comes from seeded numpy (``tools.models.wide_init``) or from one engine, a 3-layer ReLU MLP
trained with Adam in SP or in μP (``tools.models.mup_mlp``), each run with one BLAS thread. Each value is
checked against its closed form where it has one, and against the values an independent numpy script got
from the same seeds and conventions (``INDEPENDENT_*`` below, docs/figures.md lists them per figure).

The μP rules are the official `mup` package's (github.com/microsoft/mup: README, ``MuAdam`` in optim.py,
``MuReadout`` in layer.py), base width 32. Tensor Programs V (arXiv 2203.03466) states the readout's rule
in its Table 3 without a multiplier (init var 1/fan_in², Adam lr 1/fan_in); the package's form (its
Table 8, as the maintainers say in microsoft/mup issue 7) trains the same function, which
``mup_coord_check`` checks. The figures show the package's form.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
from threadpoolctl import threadpool_limits

from tools.course import catalogue, numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, data, number, percent, power
from tools.models import mup_mlp as mlp
from tools.models import wide_init as wi

CHAPTER = Chapter(
    "mup",
    "μP：换了宽度，不用重调学习率",
    summary=(
        "random N(0, 1/n) matrices (nearly orthogonal columns, not an orthogonal matrix), RMS through 20 layers, "
        "Adam's first step growing with width, the coordinate check, the learning rate that transfers; "
        "one numpy MLP in SP and μP"
    ),
)

MATRIX_WIDTHS, MATRIX_VECTORS = (16, 64, 256, 1024), 1000  # the widths, and how many random x per width
DEPTH_WIDTH, DEPTH_LAYERS = 512, 20
FAN_IN, FAN_OUT = 512, 2048
STEP_WIDTHS = (64, 256, 1024, 4096)
COORD_WIDTHS = (32, 64, 128, 256, 512, 1024)
COORD_STEPS, COORD_SEEDS = 3, (0, 1)
SWEEP_WIDTHS = (32, 64, 128, 256)
SWEEP_EXPONENTS = tuple(range(-12, 0))  # lr = 2⁻¹² … 2⁻¹
SWEEP_STEPS = 50
RECT_VARIANCES = {"fan_in": 1 / FAN_IN, "fan_out": 1 / FAN_OUT, "xavier": 2 / (FAN_IN + FAN_OUT)}
STEP_LR_EXPONENT = -5  # η = 2⁻⁵: μP's best learning rate (mup_lr_transfer)

TOY = "玩具模型，自设任务"
PARAMETRIZATIONS_SHOWN = {"sp": "SP", "mup": "μP"}
NOTES = "学习笔记「MuP」"
MUP_PACKAGE = "Tensor Programs V（arXiv 2203.03466），按官方 mup 包（github.com/microsoft/mup）的实现"

# What an independent numpy script got from the same seeds and conventions, to the digits it printed.
INDEPENDENT_MATRIX = {
    "cosine": (1.055, 0.995, 0.991, 0.999),
    "length": (0.776, 0.961, 1.015, 1.000),
    "gain": (0.960, 0.921, 0.976, 0.951),
    "sigma_max": (1.861, 1.939, 1.946, 1.990),
    "sigma_min": (0.0632, 0.0013, 0.0012, 0.0008),
    "near_one": (0.125, 0.109, 0.117, 0.111),
}
INDEPENDENT_DEPTH = {"log_rms": (0.059, 27.152, -27.033), "relu": (0.000891, 0.913)}
INDEPENDENT_RECT = ((0.995, 2.039), (0.497, 1.019), (0.629, 1.290))
INDEPENDENT_STEP = {
    "init": (0.971, 0.940, 1.065, 0.984),
    "update": (1.452, 6.307, 25.963, 101.493),
    "random": (0.186, 0.462, 1.031, 2.013),
    "slopes": (0.01, 1.02, 0.57),
    "loss_sp": (0.4589, 2.4046, 2.6834, 9.2460, 33.0524, 153.4871),
    "loss_mup": (0.4589, 0.6731, 0.3373, 0.3228, 0.3772, 0.3893),
    "loss_slopes": (1.57, -0.11),
}
INDEPENDENT_COORD = {
    "sp_h2_t3": (0.669, 0.870, 1.376, 3.155, 5.766, 12.067),
    "mup_h2_t3": (0.669, 0.644, 0.685, 0.721, 0.694, 0.694),
    "sp_y_t1": (0.402, 2.229, 2.944, 9.075, 57.875, 178.521),
    "mup_y_t1": (0.402, 0.614, 0.567, 0.455, 0.608, 0.568),
    "sp_h2_slopes": (0.01, 0.79, 0.80, 0.86),
    "mup_h2_slopes": (0.01, 0.01, 0.01, 0.02),
    "sp_y_slopes": (0.03, 1.71, 1.39, 1.21),
    "mup_y_slopes": (-0.47, 0.06, 0.06, 0.11),
}
INDEPENDENT_SWEEP = {
    ("sp", 32): (0.11, -0.00, -0.26, -0.69, -1.13, -1.65, -2.25, -2.56, -1.73, -1.36, -0.05, 0.14),
    ("sp", 64): (0.06, -0.20, -0.65, -1.06, -1.55, -2.00, -2.16, -1.30, -0.74, 0.08, 0.14, 0.14),
    ("sp", 128): (-0.64, -1.02, -1.59, -2.48, -2.99, -3.06, -1.58, -1.18, -1.07, -0.34, 0.18, 0.96),
    ("sp", 256): (-1.15, -1.75, -2.39, -2.70, -2.52, -1.41, -0.58, -0.53, -0.57, -0.21, 0.90, 3.40),
    ("mup", 32): (0.11, -0.00, -0.26, -0.69, -1.13, -1.65, -2.25, -2.56, -1.73, -1.36, -0.05, 0.14),
    ("mup", 64): (0.14, 0.00, -0.28, -0.80, -1.28, -1.84, -2.25, -2.54, -1.56, -1.28, -0.48, 0.23),
    ("mup", 128): (-0.02, -0.20, -0.64, -1.05, -1.65, -2.66, -3.11, -3.30, -2.47, -1.13, -0.23, 0.06),
    ("mup", 256): (0.00, -0.18, -0.69, -1.14, -1.74, -2.55, -3.13, -3.17, -2.28, -2.05, -0.75, 0.06),
}
INDEPENDENT_BEST = {"sp": (-5, -6, -7, -9), "mup": (-5, -5, -5, -5)}


def _close_all(check: Check, name: str, computed, expected, digits: int) -> None:
    """Each computed value rounds to the independent script's printed digits (half a unit of the last)."""
    for i, (c, e) in enumerate(zip(computed, expected, strict=True)):
        check.close(f"{name} [{i}] (independent run)", float(c), float(e), rel=0.0, abs=0.5 * 10**-digits + 1e-12)


def _count(n: int) -> Fact:
    """A count before a measure word: 2 个 is said 两个."""
    text = numbers.signed(n)
    return Fact(n, text, numbers.zh_quantity(text))


def _series(values, digits: int) -> list[str]:
    return [number(float(v), digits).text for v in values]


# -- mup_random_matrix ---------------------------------------------------------------------------


@cache
def _matrix_stats() -> tuple[wi.MatrixStats, ...]:
    with threadpool_limits(1):
        return tuple(wi.matrix_stats(n, MATRIX_VECTORS) for n in MATRIX_WIDTHS)


def _histogram(values: np.ndarray, edges: np.ndarray) -> list[float]:
    """Counts per bin as a share of all values, per unit of the axis (a density the scene draws)."""
    counts, _ = np.histogram(values, edges)
    return (counts / (len(values) * np.diff(edges))).round(4).tolist()


@CHAPTER.figure(
    "mup_random_matrix",
    "随机矩阵：各列近乎垂直，却不是正交矩阵",
    source=f"{NOTES}（苏剑林《初探MuP》kexue.fm/archives/10770 的推论）；矩阵与向量是本课的种子随机数（自设参数）",
)
def mup_random_matrix(check: Check, widths: tuple[int, ...] = MATRIX_WIDTHS, stats=None) -> dict:
    stats = stats if stats is not None else _matrix_stats()
    check.equal("widths", [s.n for s in stats], list(widths))
    for s in stats:
        for name, value in (("cosine", s.cosine_spread), ("length", s.length_spread), ("gain", s.gain_spread)):
            check.that(
                f"{name} spread × scale, n = {s.n}",
                0.75 <= value <= 1.1,
                "within [0.75, 1.1]: cosines shrink like 1/√n, lengths like 1/√(2n)",
                value,
            )
        check.that(f"σ_max near 2, n = {s.n}", 1.8 < s.singular_values[0] <= 2.1, "in (1.8, 2.1]", s.singular_values[0])
        check.that(f"σ_min near 0, n = {s.n}", s.singular_values[-1] < 0.1, "below 0.1", s.singular_values[-1])
        if s.n <= 256:  # a second route to σ: the square roots of WᵀW's eigenvalues (at 1024 it costs 1 s)
            w = wi.gaussian(s.n)
            eig = np.sqrt(np.clip(np.linalg.eigvalsh(w.T @ w), 0, None))[::-1]
            check.close(f"σ_max by eigenvalues of WᵀW, n = {s.n}", float(eig[0]), float(s.singular_values[0]), rel=1e-9)
    _close_all(check, "cosine spread", [s.cosine_spread for s in stats], INDEPENDENT_MATRIX["cosine"], 3)
    _close_all(check, "length spread", [s.length_spread for s in stats], INDEPENDENT_MATRIX["length"], 3)
    _close_all(check, "gain spread", [s.gain_spread for s in stats], INDEPENDENT_MATRIX["gain"], 3)
    _close_all(check, "σ_max", [s.singular_values[0] for s in stats], INDEPENDENT_MATRIX["sigma_max"], 3)
    _close_all(check, "σ_min", [s.singular_values[-1] for s in stats], INDEPENDENT_MATRIX["sigma_min"], 4)
    _close_all(check, "share of σ in [0.9, 1.1]", [s.near_one for s in stats], INDEPENDENT_MATRIX["near_one"], 3)
    check.that(
        "the spectrum does not close in on 1",
        stats[-1].singular_values[0] >= stats[0].singular_values[0] and stats[-1].near_one < 0.15,
        "σ_max grows towards 2 and under 15% of σ lie in 1 ± 0.1 at the widest",
        (stats[-1].singular_values[0], stats[-1].near_one),
    )
    qr_n = 256
    with threadpool_limits(1):
        qr = check.residual("orthogonal matrix (QR): max |σ − 1|, n = 256", wi.orthogonal_deviation(qr_n), 1e-14)
    cos_edges = np.linspace(-0.6, 0.6, 49)
    sigma_edges = np.linspace(0, 2.1, 43)
    vectors, one, band = number(MATRIX_VECTORS), number(1), number(0.1, 1)
    facts = {
        "widths": data(list(widths)),
        "width_count": number(len(widths)).via(f"输入：本课取的宽度 {', '.join(map(str, widths))}"),
        "qr": qr,
        "qr_n": number(qr_n).via("输入：QR 分解对照时取的宽度"),
        "vectors": vectors.via("输入：每个宽度乘上去的随机向量个数"),
        "cos_edges": data(cos_edges.tolist()),
        "one": one.via("输入：正交矩阵保持的长度比，也是它的奇异值"),
        "band": band.via(f"输入：数奇异值时，{one} 两边的半宽"),
        "sigma_ticks": data([(v, number(v).text) for v in (0, 1, 2)]),
        "sigma_edges": data(sigma_edges.tolist()),
    }
    for s in stats:
        n = s.n
        facts |= {
            f"n_{n}": number(n).via("输入：本课取的宽度"),
            f"cosine_{n}": number(s.cosine_spread, 3).via(f"std（各列两两夹角的余弦）× √n，n = {n:,}"),
            f"length_{n}": number(s.length_spread, 3).via(f"std（各列长度的平方）÷ √(2/n)，n = {n:,}"),
            f"gain_{n}": number(s.gain_spread, 3).via(f"std（‖Wx‖ ÷ ‖x‖，{vectors} 个随机 x）× √(2n)，n = {n:,}"),
            f"sigma_max_{n}": number(float(s.singular_values[0]), 2).via(f"W 的最大奇异值（SVD），n = {n:,}"),
            f"sigma_min_{n}": number(float(s.singular_values[-1]), 4).via(f"W 的最小奇异值（SVD），n = {n:,}"),
            f"near_one_{n}": percent(s.near_one, 1).via(f"{n:,} 个奇异值里落在 {one} ± {band} 内的比例"),
            f"cos_hist_{n}": data(_histogram(s.cosines, cos_edges)),
            f"sigmas_{n}": data(s.singular_values.round(4).tolist()),
        }
    return facts


# -- mup_rms_through_depth -----------------------------------------------------------------------


@CHAPTER.figure(
    "mup_rms_through_depth",
    "初始化保 RMS：前向和反向不能两全",
    source=f"{NOTES}（保 RMS 的初始化；加激活函数；前传与反传不能兼容）；He 等 2015（arXiv 1502.01852）；"
    "Glorot & Bengio 2010；向量与矩阵是本课的种子随机数（自设参数）",
)
def mup_rms_through_depth(check: Check, width: int = DEPTH_WIDTH, layers: int = DEPTH_LAYERS) -> dict:
    variances = {"one_over_n": 1 / width, "one": 1.0, "one_over_n2": 1 / width**2}
    with threadpool_limits(1):
        walks = {name: wi.depth_walk(v, layers, width) for name, v in variances.items()}
        relu = {"one_over_n": wi.depth_walk(1 / width, layers, width, relu=True)}
        relu["he"] = wi.depth_walk(2 / width, layers, width, relu=True)
        rect = {name: wi.rectangular(var, FAN_IN, FAN_OUT) for name, var in RECT_VARIANCES.items()}
    closed = layers * np.log10(np.sqrt(width))  # each layer multiplies the RMS by √(n·var)
    start = np.log10(walks["one"][0])
    logs = {name: np.log10(w) for name, w in walks.items()}
    check.close("log₁₀ RMS, var 1/n (closed form: unchanged)", float(logs["one_over_n"][-1]), float(start), abs=0.1)
    check.close("log₁₀ RMS, var 1 (closed form: +20·log₁₀√n)", float(logs["one"][-1]), float(start + closed), abs=0.1)
    check.close(
        "log₁₀ RMS, var 1/n² (closed form: −20·log₁₀√n)", float(logs["one_over_n2"][-1]), float(start - closed), abs=0.1
    )
    # the three walks share their draws: only the scale differs, by exactly √(n·var) per layer
    check.close(
        "var 1 walk = var 1/n walk × √n per layer",
        float(logs["one"][-1] - logs["one_over_n"][-1]),
        float(closed),
        rel=1e-9,
    )
    _close_all(check, "log₁₀ RMS after 20 layers", [logs[n][-1] for n in variances], INDEPENDENT_DEPTH["log_rms"], 3)
    relu_closed = 2.0 ** (-layers / 2) * walks["one"][0]
    check.close("ReLU, var 1/n: halves in square per layer (2⁻¹⁰)", float(relu["one_over_n"][-1]), relu_closed, rel=0.1)
    check.close("ReLU, var 2/n: kept (He)", float(relu["he"][-1]), float(walks["one"][0]), rel=0.1)
    _close_all(check, "RMS after 20 ReLU layers, var 1/n", [relu["one_over_n"][-1]], INDEPENDENT_DEPTH["relu"][:1], 6)
    _close_all(check, "RMS after 20 ReLU layers, var 2/n", [relu["he"][-1]], INDEPENDENT_DEPTH["relu"][1:], 3)
    # forward RMS(W·x)/RMS(x) = √(fan_in·var); backward RMS(Wᵀ·g)/RMS(g) = √(fan_out·var)
    for name, (forward, backward) in rect.items():
        var = RECT_VARIANCES[name]
        check.close(f"{name} forward (closed form √(fan_in·var))", forward, float(np.sqrt(FAN_IN * var)), rel=0.03)
        check.close(f"{name} backward (closed form √(fan_out·var))", backward, float(np.sqrt(FAN_OUT * var)), rel=0.03)
    for (name, (forward, backward)), expected in zip(rect.items(), INDEPENDENT_RECT, strict=True):
        _close_all(check, f"{name} forward, backward", (forward, backward), expected, 3)
    check.that(
        "no single variance keeps both directions",
        all(abs(f - 1) > 0.2 or abs(b - 1) > 0.2 for f, b in rect.values()),
        "each variance misses 1 by more than 20% in one direction",
        rect,
    )

    def closed_text(name: str, side: int) -> str:
        value = float(np.sqrt((FAN_IN, FAN_OUT)[side] * RECT_VARIANCES[name]))
        digits = 0 if value.is_integer() else 1 if (10 * value).is_integer() else 3
        return number(value, digits).text

    labels = {"fan_in": "1/fan_in", "fan_out": "1/fan_out", "xavier": "2/(fan_in+fan_out)"}
    rows = [
        {
            "name": label,
            "forward": number(rect[name][0], 2).text,
            "backward": number(rect[name][1], 2).text,
            "forward_closed": closed_text(name, 0),
            "backward_closed": closed_text(name, 1),
            "forward_value": rect[name][0],
            "backward_value": rect[name][1],
        }
        for name, label in labels.items()
    ]
    n, depth, fan_in, fan_out = number(width), number(layers), number(FAN_IN), number(FAN_OUT)
    input_rms = number(float(walks["one"][0]), 2)
    walk = f"穿过 {layers} 层 {width} × {width} 的 W 后 RMS 的 log₁₀（模拟），W ~ N(0, "
    relu_walk = f"{layers} 层「ReLU 再乘 W」后的 RMS（模拟），W ~ N(0, "
    per_layer = f"每层乘 √(n·方差) = √{width}"

    def rectangular(name: str, side: int) -> str:
        ratio = ("RMS(W·x) ÷ RMS(x)", "RMS(Wᵀ·g) ÷ RMS(g)")[side]
        return f"{ratio}，{fan_in} → {fan_out} 的一层，方差 {labels[name]}（模拟）"

    return {
        "width": n.via("输入：本课取的宽度"),
        "layers": depth.via("输入：本课取的层数"),
        "unit": number(1).via("输入：一层前向、反向都该保持的 RMS 比"),
        "gain": number(float(np.sqrt(width)), 1).via(f"√n = √{width}"),
        "log_one_over_n": number(float(logs["one_over_n"][-1]), 2).via(f"{walk}1/n)"),
        "log_one": number(float(logs["one"][-1]), 2).via(f"{walk}1)"),
        "log_one_over_n2": number(float(logs["one_over_n2"][-1]), 2).via(f"{walk}1/n²)"),
        "closed": number(float(closed), 2).via(f"{per_layer}：{layers} × log₁₀ √{width}"),
        "input_rms": input_rms.via(f"宽 {width} 的输入向量 x 的 RMS（种子随机数）"),
        "relu_one_over_n": number(float(relu["one_over_n"][-1]), 5).via(f"{relu_walk}1/n)"),
        "relu_closed": number(float(relu_closed), 5).via(
            f"ReLU 每层让平方的平均减半：(√½){numbers.superscript(layers)} × {input_rms}"
        ),
        "relu_he": number(float(relu["he"][-1]), 2).via(f"{relu_walk}2/n)，He 初始化"),
        "halving": power(2, -layers // 2).via(f"每层平方减半，{layers} 层：RMS 乘 (√½){numbers.superscript(layers)}"),
        "fan_in": fan_in.via("输入：本课取的输入宽度"),
        "fan_out": fan_out.via("输入：本课取的输出宽度"),
        "walks": data({name: w.tolist() for name, w in logs.items()}),
        "x_ticks": data([(0, number(0).text), (layers, number(layers).text)]),
        "relu_walks": data({name: np.log10(w).tolist() for name, w in relu.items()}),
        "rect": data(rows),
        "fan_in_forward": number(rect["fan_in"][0], 2).via(rectangular("fan_in", 0)),
        "fan_in_backward": number(rect["fan_in"][1], 2).via(rectangular("fan_in", 1)),
        "fan_out_forward": number(rect["fan_out"][0], 2).via(rectangular("fan_out", 0)),
        "fan_out_backward": number(rect["fan_out"][1], 2).via(rectangular("fan_out", 1)),
    }


# -- mup_adam_update_scale -----------------------------------------------------------------------


@cache
def _steps(lr: float) -> tuple[wi.AdamStep, ...]:
    with threadpool_limits(1):
        return tuple(wi.adam_step(n, lr) for n in STEP_WIDTHS)


@cache
def _loss_changes(lr: float, tiny: float = 1e-6) -> dict[str, tuple[tuple[tuple[float, float], ...], ...]]:
    """Per parametrization and width: (Taylor term, measured ΔL) at η = lr and at a tiny η."""
    with threadpool_limits(1):
        return {
            p: tuple(tuple(mlp.first_order_loss_change(n, p, (lr, tiny))) for n in COORD_WIDTHS)
            for p in mlp.PARAMETRIZATIONS
        }


@CHAPTER.figure(
    "mup_adam_update_scale",
    "Adam 的一步为什么随宽度变大",
    source=f"{NOTES}（损失增量的一阶泰勒展开）；mup README 的表：外积 Θ(n)、独立 Θ(√n)，"
    f"隐藏层 Adam 学习率 ÷ width_mult；{TOY}",
)
def mup_adam_update_scale(check: Check, lr_exponent: int = STEP_LR_EXPONENT, steps=None, losses=None) -> dict:
    lr = 2.0**lr_exponent
    steps = steps if steps is not None else _steps(lr)
    losses = losses if losses is not None else _loss_changes(lr)
    ns = [s.n for s in steps]
    for s in steps:
        check.close(f"every coordinate of ΔW·x is η‖x‖₁, n = {s.n}", s.coordinate_gap, 0.0, abs=1e-9)
        check.close(f"RMS(ΔW·x) = η‖x‖₁, n = {s.n}", s.update, s.l1_term, rel=1e-9)
    with threadpool_limits(1):
        sign_gap = check.residual(
            "Adam's first step = sign(G) where |G| > 10⁻⁶, n = 64", wi.adam_sign_gap(STEP_WIDTHS[0]), 1e-3
        )
    init, update, random = ([getattr(s, k) for s in steps] for k in ("init", "update", "random"))
    slopes = [wi.loglog_slope(ns, v) for v in (init, update, random)]
    check.that("init stays flat", abs(slopes[0]) < 0.1, "|slope| < 0.1", slopes[0])
    check.close("Adam's step grows like n", slopes[1], 1.0, abs=0.1)
    check.close("a random ±η matrix grows like √n", slopes[2], 0.5, abs=0.1)
    _close_all(check, "RMS(W·x) at init", init, INDEPENDENT_STEP["init"], 3)
    _close_all(check, "RMS(ΔW·x)", update, INDEPENDENT_STEP["update"], 3)
    _close_all(check, "RMS(R·x)", random, INDEPENDENT_STEP["random"], 3)
    _close_all(check, "slopes (init, Adam, random)", slopes, INDEPENDENT_STEP["slopes"], 2)
    sp = [pairs[0][0] for pairs in losses["sp"]]
    mu = [pairs[0][0] for pairs in losses["mup"]]
    check.close("width 32: SP and μP the same model", sp[0], mu[0], rel=1e-12)
    loss_slopes = (wi.loglog_slope(COORD_WIDTHS, sp), wi.loglog_slope(COORD_WIDTHS, mu))
    check.that("SP's first-order ΔL grows faster than n", loss_slopes[0] > 1, "slope > 1", loss_slopes[0])
    check.that("μP's first-order ΔL stays put", abs(loss_slopes[1]) < 0.2, "|slope| < 0.2", loss_slopes[1])
    _close_all(check, "first-order ΔL, SP", sp, INDEPENDENT_STEP["loss_sp"], 4)
    _close_all(check, "first-order ΔL, μP", mu, INDEPENDENT_STEP["loss_mup"], 4)
    _close_all(check, "ΔL slopes", loss_slopes, INDEPENDENT_STEP["loss_slopes"], 2)
    # at a tiny step the measured loss change is the Taylor term: the first order is the whole story
    taylor = {p: max(abs(actual - first) / first for (_, (first, actual)) in losses[p]) for p in losses}
    taylor_sp = check.residual("Taylor term vs measured ΔL at η = 10⁻⁶, SP", taylor["sp"], 1e-2)
    taylor_mup = check.residual("Taylor term vs measured ΔL at η = 10⁻⁶, μP", taylor["mup"], 1e-4)
    ratios = {b / a for a, b in itertools.pairwise(ns)}
    check.that("the widths grow by one factor", len(ratios) == 1, "one ratio between neighbours", ratios)
    lr_fact, span = power(2, lr_exponent), f"n = {ns[0]} … {ns[-1]:,}"
    loglog = "log 对 log n 的最小二乘斜率，"
    loss_span = f"宽度 {COORD_WIDTHS[0]} … {COORD_WIDTHS[-1]:,}"
    first_order = "走一步 Adam 的一阶项 η'·‖∇W₂ L‖₁"
    sp_rate, mup_rate = f"η' = η = {lr_fact}", f"η' = {lr_fact} × {mlp.N0}/n"
    facts = {
        "lr": lr_fact.via("输入：本课取的学习率，即 mup_lr_transfer 里 μP 的最优值"),
        "widths": data(ns),
        "width_step": number(ratios.pop()).via(f"相邻宽度之比：{ns[1]} ÷ {ns[0]}"),
        "x_ticks": data([(float(np.log2(n)), number(n).text) for n in ns]),
        "loss_widths": data(list(COORD_WIDTHS)),
        "loss_ticks": data([(float(np.log2(n)), number(n).text) for n in COORD_WIDTHS]),
        "init": data(init),
        "update": data(update),
        "random": data(random),
        "loss_sp": data(sp),
        "loss_mup": data(mu),
        "slope_init": number(slopes[0], 2).via(f"RMS(W·x) 的 {loglog}{span}"),
        "slope_update": number(slopes[1], 2).via(f"RMS(ΔW·x) 的 {loglog}{span}"),
        "slope_random": number(slopes[2], 2).via(f"RMS(R·x) 的 {loglog}{span}"),
        "loss_slope_sp": number(loss_slopes[0], 2).via(f"SP 一阶 ΔL 的 {loglog}{loss_span}"),
        "loss_slope_mup": number(loss_slopes[1], 2).via(f"μP 一阶 ΔL 的 {loglog}{loss_span}"),
        "sign_gap": sign_gap,
        "taylor_sp": taylor_sp,
        "taylor_mup": taylor_mup,
        "base": number(mlp.N0).via("输入：基准宽度（mup 包的 base shape），SP 与 μP 在此相同"),
        "widest": number(COORD_WIDTHS[-1]).via("输入：本课取的最大宽度"),
    }
    for s in steps:
        facts |= {
            f"n_{s.n}": number(s.n).via("输入：本课取的宽度"),
            f"init_{s.n}": number(s.init, 2).via(f"初始化时 RMS(W·x)，W ~ N(0, 1/n)，n = {s.n:,}（模拟）"),
            f"update_{s.n}": number(s.update, 1 if s.update >= 10 else 2).via(
                f"Adam 第一步后 RMS(ΔW·x) = η‖x‖₁，η = {lr_fact}，n = {s.n:,}"
            ),
            f"random_{s.n}": number(s.random, 2).via(f"RMS(R·x)，R 是随机 ±η 矩阵，η = {lr_fact}，n = {s.n:,}（模拟）"),
        }
    facts |= {
        "loss_sp_first": number(sp[0], 2).via(f"SP，宽度 {COORD_WIDTHS[0]}：{first_order}，{sp_rate}"),
        "loss_sp_last": number(sp[-1], 0).via(f"SP，宽度 {COORD_WIDTHS[-1]:,}：{first_order}，{sp_rate}"),
        "loss_mup_low": number(min(mu), 2).via(f"μP，{loss_span}：{first_order} 的最小值，{mup_rate}"),
        "loss_mup_high": number(max(mu), 2).via(f"μP，{loss_span}：{first_order} 的最大值，{mup_rate}"),
    }
    return facts


# -- mup_coord_check -----------------------------------------------------------------------------


@cache
def _coord_runs(lr: float) -> dict[str, dict[str, np.ndarray]]:
    """l1 of h1, h2 and the output at t = 0 … 3, per width, averaged over the seeds: [layer][t, width]."""
    sizes: dict[str, dict[str, np.ndarray]] = {}
    with threadpool_limits(1):
        for p in mlp.PARAMETRIZATIONS:
            table = {name: np.zeros((COORD_STEPS + 1, len(COORD_WIDTHS))) for name in ("h1", "h2", "y")}
            for j, n in enumerate(COORD_WIDTHS):
                for seed in COORD_SEEDS:
                    run = mlp.train(n, p, [lr], COORD_STEPS, seed, keep_passes=True)
                    for t, layer in enumerate(run.passes):
                        for name in table:
                            table[name][t, j] += mlp.l1(getattr(layer, name))[0] / len(COORD_SEEDS)
            sizes[p] = table
    return sizes


@CHAPTER.figure(
    "mup_coord_check",
    "坐标检查：SP 随宽度炸开，μP 一条平线",
    source=f"mup README「Checking Correctness of Parametrization」（l1 = x.abs().mean()）；{MUP_PACKAGE}；{TOY}",
)
def mup_coord_check(check: Check, cite=catalogue.cite, runs=None) -> dict:
    best = cite("mup_lr_transfer.best_mup")
    lr = float(best.value)
    runs = runs if runs is not None else _coord_runs(lr)
    slopes = {
        p: {name: [mlp.slope(COORD_WIDTHS, runs[p][name][t]) for t in range(COORD_STEPS + 1)] for name in runs[p]}
        for p in runs
    }
    for t in range(COORD_STEPS + 1):
        for p in runs:
            check.that(f"{p} h1 flat at t = {t}", abs(slopes[p]["h1"][t]) < 0.05, "|slope| < 0.05", slopes[p]["h1"][t])
        check.that(
            f"μP h2 flat at t = {t}", abs(slopes["mup"]["h2"][t]) < 0.05, "|slope| < 0.05", slopes["mup"]["h2"][t]
        )
        if t >= 1:
            check.that(f"SP h2 grows at t = {t}", slopes["sp"]["h2"][t] > 0.5, "slope > 0.5", slopes["sp"]["h2"][t])
    for p in runs:
        for name in runs[p]:
            check.close(
                f"{p} {name} at width 32 is μP's (the same model)", runs[p][name][1, 0], runs["mup"][name][1, 0]
            )
    with threadpool_limits(1):
        gap = mlp.equivalent_readout(256, lr, COORD_STEPS)
    readout = check.residual(
        "μP readout: the package's form = Table 3's form (outputs after 3 steps, relative)", gap, 1e-4
    )
    _close_all(check, "SP mean|h2| at t = 3", runs["sp"]["h2"][3], INDEPENDENT_COORD["sp_h2_t3"], 3)
    _close_all(check, "μP mean|h2| at t = 3", runs["mup"]["h2"][3], INDEPENDENT_COORD["mup_h2_t3"], 3)
    _close_all(check, "SP mean|y| at t = 1", runs["sp"]["y"][1], INDEPENDENT_COORD["sp_y_t1"], 3)
    _close_all(check, "μP mean|y| at t = 1", runs["mup"]["y"][1], INDEPENDENT_COORD["mup_y_t1"], 3)
    for p in runs:
        _close_all(check, f"{p} h2 slopes", slopes[p]["h2"], INDEPENDENT_COORD[f"{p}_h2_slopes"], 2)
        _close_all(check, f"{p} output slopes", slopes[p]["y"], INDEPENDENT_COORD[f"{p}_y_slopes"], 2)
    seeds, narrow, wide = number(len(COORD_SEEDS)), number(COORD_WIDTHS[0]), number(COORD_WIDTHS[-1])
    mean = f"{seeds} 个种子的平均（模拟）"
    last = COORD_STEPS

    def size(p: str, name: str, t: int, width: str) -> str:
        return f"{PARAMETRIZATIONS_SHOWN[p]}，第 {t} 步后 mean|{name}|，宽度 {width}，{mean}"

    def spread(name: str, t: int, which: str) -> str:
        return f"μP，第 {t} 步后 mean|{name}|，宽度 {narrow} … {wide} 中的{which}，{mean}"

    facts = {
        "lr": best,
        "steps": number(COORD_STEPS).via("输入：坐标检查走的 Adam 步数"),
        "seeds": seeds.via("输入：取平均的随机种子个数"),
        "seed_count": _count(len(COORD_SEEDS)).via("输入：取平均的随机种子个数"),
        "widths": data(list(COORD_WIDTHS)),
        "narrow": narrow.via("输入：本课取的最小宽度"),
        "wide": wide.via("输入：本课取的最大宽度"),
        "readout": readout,
        "l1": data({p: {name: np.log2(v).tolist() for name, v in runs[p].items()} for p in runs}),
        "x_ticks": data([(float(np.log2(n)), number(n).text) for n in COORD_WIDTHS]),
        "sp_y_narrow": number(runs["sp"]["y"][1, 0], 2).via(size("sp", "y", 1, narrow.text)),
        "sp_y_wide": number(runs["sp"]["y"][1, -1], 0).via(size("sp", "y", 1, wide.text)),
        "sp_h2_narrow": number(runs["sp"]["h2"][last, 0], 2).via(size("sp", "h2", last, narrow.text)),
        "sp_h2_wide": number(runs["sp"]["h2"][last, -1], 1).via(size("sp", "h2", last, wide.text)),
        "mup_h2_low": number(runs["mup"]["h2"][last].min(), 2).via(spread("h2", last, "最小值")),
        "mup_h2_high": number(runs["mup"]["h2"][last].max(), 2).via(spread("h2", last, "最大值")),
    }
    for p in runs:
        for name in ("h2", "y"):
            for t in range(COORD_STEPS + 1):
                facts[f"{p}_{name}_slope_{t}"] = number(slopes[p][name][t], 2).via(
                    f"{PARAMETRIZATIONS_SHOWN[p]}，第 {t} 步后：log₂ mean|{name}| 对 log₂ 宽度的最小二乘斜率"
                )
    return facts


# -- mup_lr_transfer -----------------------------------------------------------------------------


@cache
def _sweep() -> dict[tuple[str, int], np.ndarray]:
    """log₁₀ of the final MSE per learning rate, for each parametrization and width."""
    lrs = 2.0 ** np.array(SWEEP_EXPONENTS, dtype=float)
    with threadpool_limits(1):
        return {
            (p, n): np.log10(mlp.train(n, p, lrs, SWEEP_STEPS).mse) for p in mlp.PARAMETRIZATIONS for n in SWEEP_WIDTHS
        }


@CHAPTER.figure(
    "mup_lr_transfer",
    "最优学习率：SP 跟着宽度跑，μP 站着不动",
    source=f"{NOTES}（在小模型上调参，迁移到大模型）；{MUP_PACKAGE}，README 的「loss 对学习率」图（只描述，未复制）；"
    f"{TOY}，四个宽度、50 步",
)
def mup_lr_transfer(check: Check, sweep=None) -> dict:
    sweep = sweep if sweep is not None else _sweep()
    exponents = list(SWEEP_EXPONENTS)
    steps_up = {b - a for a, b in itertools.pairwise(exponents)}
    check.that("each learning rate doubles the one before", steps_up == {1}, "exponents step by 1", steps_up)
    for key, curve in sweep.items():
        check.that(f"{key} every loss finite", bool(np.isfinite(curve).all()), "no run diverged", curve)
        _close_all(check, f"log₁₀ MSE {key}", curve, INDEPENDENT_SWEEP[key], 2)
    check.close(
        "width 32: SP and μP the same curve",
        float(np.abs(sweep["sp", 32] - sweep["mup", 32]).max()),
        0.0,
        abs=1e-12,
    )
    best = {p: [exponents[int(np.argmin(sweep[p, n]))] for n in SWEEP_WIDTHS] for p in mlp.PARAMETRIZATIONS}
    for p in best:
        check.equal(f"best log₂ lr, {p}", best[p], list(INDEPENDENT_BEST[p]))
    at = exponents.index(best["mup"][0])
    sp_at = [float(sweep["sp", n][at]) for n in SWEEP_WIDTHS]
    mu_at = [float(sweep["mup", n][at]) for n in SWEEP_WIDTHS]
    check.that(
        "at μP's lr the two wider models beat the two narrower",
        min(mu_at[2:]) < min(mu_at[:2]),
        "width 128 and 256 below width 32 and 64",
        mu_at,
    )
    steps = number(SWEEP_STEPS)
    curve = f"{steps} 步 Adam 后的 log₁₀ MSE（模拟）"
    lowest = f"{power(2, exponents[0])} … {power(2, exponents[-1])} 中使 {steps} 步后 log₁₀ MSE 最低的学习率（模拟）"
    at_lr = power(2, exponents[at])
    facts = {
        "exponents": data(exponents),
        "lr_low": power(2, exponents[0]).via("输入：扫描的最小学习率"),
        "lr_count": number(len(exponents)).via(
            f"{power(2, exponents[0])} … {power(2, exponents[-1])}，每个是前一个的 2 倍"
        ),
        "width_count": number(len(SWEEP_WIDTHS)).via(f"输入：本课取的宽度 {', '.join(map(str, SWEEP_WIDTHS))}"),
        "x_ticks": data([(e, power(2, e).text) for e in (exponents[0], -9, -5, exponents[-1])]),
        "y_ticks": data([(v, number(v).text) for v in (-3, 0, 3)]),
        "widths": data(list(SWEEP_WIDTHS)),
        "curves": data({f"{p}_{n}": sweep[p, n].tolist() for p in mlp.PARAMETRIZATIONS for n in SWEEP_WIDTHS}),
        "best_mup": power(2, best["mup"][0]).via(f"μP，{len(SWEEP_WIDTHS)} 个宽度都一样：{lowest}"),
        "steps": steps.via("输入：每个学习率训练的步数"),
        "sp_wide_own": number(float(sweep["sp", SWEEP_WIDTHS[-1]].min()), 2).via(
            f"SP，宽度 {SWEEP_WIDTHS[-1]}：{len(exponents)} 个学习率里最低的 {curve}"
        ),
        "sp_wide_copied": number(sp_at[-1], 2).via(f"SP，宽度 {SWEEP_WIDTHS[-1]}，η = {at_lr}：{curve}"),
        "mup_wide_at": number(mu_at[-1], 2).via(f"μP，宽度 {SWEEP_WIDTHS[-1]}，η = {at_lr}：{curve}"),
    }
    for n, sp_best, mu_best, sp_value, mu_value in zip(SWEEP_WIDTHS, best["sp"], best["mup"], sp_at, mu_at):
        facts |= {
            f"n_{n}": number(n).via("输入：本课取的宽度"),
            f"best_sp_{n}": power(2, sp_best).via(f"SP，宽度 {n}：{lowest}"),
            f"best_mup_{n}": power(2, mu_best).via(f"μP，宽度 {n}：{lowest}"),
            f"sp_at_{n}": number(sp_value, 2).via(f"SP，宽度 {n}，η = {at_lr}：{curve}"),
            f"mup_at_{n}": number(mu_value, 2).via(f"μP，宽度 {n}，η = {at_lr}：{curve}"),
        }
    return facts
