"""Chapter 9 in play order (专题六 opens), fp8: low-precision training, FP8 and FP4 as Transformer Engine and
DeepSeek-V3 use them.

Every value on every number line comes from ``tools.models.lowp``: the formats' tables are decoded from their
bit patterns, and one round-to-nearest-even quantizer that saturates (Transformer Engine clips what exceeds the
range) serves every figure. Each table is checked against ``ml_dtypes`` code by code, and the quantizer against
ml_dtypes and against the exponent-and-step formula on 200,000 draws. The tensors, the amax trace and the
accumulator are ours (本课自设); the formats, the block sizes and V3's measurements are the papers'.
"""

from __future__ import annotations

import math

import numpy as np
from threadpoolctl import threadpool_limits

from tools.course import numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, data, number, percent, power, times
from tools.models import bf16, half, lowp
from tools.models.lowp import E2M1, E4M3, E4M3_IEEE, E5M2, E8M0

CHAPTER = Chapter(
    "fp8",
    "低精度训练：FP8 / FP4 与 Transformer Engine",
    summary=(
        "every value of E4M3, E5M2 and FP4, one outlier against per-tensor and 1×128 scales, MXFP8, MXFP4 and "
        "NVFP4 blocks, delayed scaling's amax history, the 14-bit accumulator and V3's promotion every 128, "
        "the three GEMMs of a Linear (schematic); one format engine, checked against ml_dtypes"
    ),
)

# The formats' closed forms (FP8 Formats for Deep Learning, arXiv 2209.05433, Table 1; OCP MX v1.0 for E2M1).
PAPER_MAX = {"E4M3": 1.75 * 2**8, "E5M2": 1.75 * 2**15, "E2M1": 1.5 * 2**2}
PAPER_COUNT = {"E4M3": 126, "E5M2": 123, "E2M1": 7}
DRAWS, DRAW_SEED = 200_000, 27  # the quantizer's cross-check: log-spread draws over each format's range
PROBE = 0.3952  # one number dropped on every line (本课自设)
PROBE_PAGE = {
    "E4M3": 0.40625,
    "E5M2": 0.375,
    "FP16": 0.39526367,
    "BF16": 0.39453125,
}  # as an independent script printed them, 8 decimals
R_SWEEP = (1, 10, 100, 1_000, 10_000, 100_000)  # outlier sizes (本课自设扫描参数)
R_BLOCKS = 100  # the block-format comparison's outlier size
TILE, MX_BLOCK, NV_BLOCK = 128, 32, 16
FP32_BITS = 32


def _count(n: int) -> Fact:
    """A count before a measure word: 2 is 两 (两次, not 二次)."""
    text = numbers.signed(n)
    return Fact(n, text, numbers.zh_quantity(text))


def _closed(x: float) -> str:
    """A format's value as mantissa × power of two, the way the FP8 paper's Table 1 writes it: 448 -> 1.75 × 2⁸."""
    mantissa, exponent = math.frexp(x)
    return f"{2 * mantissa:g} × 2{numbers.superscript(exponent - 1)}"


def _pow2(exponent_text: str) -> str:
    """2 to a formula's exponent, written out: 2^(1 − 7)."""
    return f"2^({exponent_text})"


def _cell(value: float, digits: int) -> str:
    return numbers.signed(value, digits)


def _r_text(r: int) -> str:
    """An outlier size the way the sweep prints it: 1, 10, 100, then 10³ …"""
    return str(r) if r <= 100 else numbers.power(10, round(math.log10(r)))[0]


def _r_fact(r: int) -> Fact:
    k = round(math.log10(r))
    return number(r) if r <= 100 else power(10, k)


# -- fp8_number_line -----------------------------------------------------------------------


def _bits(code: int, fmt: lowp.Format) -> str:
    """A code as its fields, sign.exponent.mantissa: 0.1111.110."""
    s = format(code, f"0{fmt.bits}b")
    return f"{s[0]}.{s[1 : 1 + fmt.exponent_bits]}.{s[1 + fmt.exponent_bits :]}"


def check_format(check: Check, fmt: lowp.Format) -> None:
    """A format's table against the closed forms and, code by code, against ml_dtypes."""
    name = fmt.name
    if name in PAPER_MAX:
        check.equal(f"{name} max (closed form)", fmt.max, PAPER_MAX[name])
        check.equal(f"{name} positive values (count)", len(fmt.positive), PAPER_COUNT[name])
        check.equal(
            f"{name} least subnormal = 2^(1 − bias − m)", fmt.min_subnormal, 2.0 ** (1 - fmt.bias - fmt.mantissa_bits)
        )
        check.equal(f"{name} least normal = 2^(1 − bias)", fmt.min_normal, 2.0 ** (1 - fmt.bias))
        check.equal(f"{name} next after 1 = 1 + 2^−m", fmt.next_after_one(), 1 + 2.0**-fmt.mantissa_bits)
    ours, theirs = fmt.codes, lowp.ml_dtypes_codes(fmt)
    same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
    check.equal(f"{name} codes that decode differently from ml_dtypes", int(np.sum(~same)), 0)


def check_rounding(check: Check, fmt: lowp.Format, draws: int = DRAWS, seed: int = DRAW_SEED) -> None:
    """The table quantizer against the exponent-and-step formula and ml_dtypes, on draws and on every tie."""
    x = lowp.log_spread(draws, fmt, seed)
    q = lowp.quantize(x, fmt)
    check.equal(
        f"{fmt.name}: table vs ml_dtypes, {draws:,} draws", int(np.sum(q != lowp.quantize_ml_dtypes(x, fmt))), 0
    )
    if fmt is not E8M0:  # E8M0 has no mantissa grid to step on, and no figure rounds to it
        check.equal(
            f"{fmt.name}: table vs formula, {draws:,} draws", int(np.sum(q != lowp.quantize_by_formula(x, fmt))), 0
        )
        ties = np.concatenate([fmt.midpoints, -fmt.midpoints])
        check.equal(
            f"{fmt.name}: every exact tie, table vs ml_dtypes (ties to even)",
            int(np.sum(lowp.quantize(ties, fmt) != lowp.quantize_ml_dtypes(ties, fmt))),
            0,
        )


@CHAPTER.figure(
    "fp8_number_line",
    "FP8 的数轴：每一个能表示的数",
    source="Micikevicius et al. 2022（FP8 Formats for Deep Learning，arXiv 2209.05433）表 1、§3.1；"
    "OCP MX v1.0（E2M1）；数值表由本课从位模式解出，并与 ml_dtypes 逐个码值核对",
)
def fp8_number_line(check: Check, formats: tuple[lowp.Format, ...] = (E4M3, E5M2, E2M1, E8M0), probe: float = PROBE):
    with threadpool_limits(1):
        for fmt in formats:
            check_format(check, fmt)
            check_rounding(check, fmt)
    e4, e5, e2 = formats[0], formats[1], formats[2]
    check.equal("E4M3 max is S.1111.110", e4.decode(0b0_1111_110), e4.max)
    check.that("E4M3's only NaN codes are S.1111.111", bool(np.isnan(e4.codes).sum() == 2), "2 codes", e4.codes)
    check.equal("E5M2 max is S.11110.11", e5.decode(0b0_11110_11), e5.max)
    ieee = E4M3_IEEE
    check.equal("E4M3 with IEEE's reserved top exponent: max", ieee.max, 240.0)
    reclaimed = e4.positive[e4.positive > ieee.max]
    check.equal(
        "values reclaimed by giving up only one code (count)", len(reclaimed), len(e4.positive) - len(ieee.positive)
    )
    check.equal(
        "binades E4M3 / E5M2 / E2M1 / IEEE-style E4M3",
        [e4.binades, e5.binades, e2.binades, ieee.binades],
        [18, 32, 4, 17],
    )
    ranges = [math.log2(f.max / f.min_subnormal) for f in (e4, e5)]
    check.close("E4M3 range in binades (max / least subnormal)", ranges[0], 9 + math.log2(448))
    # One number on four lines: FP8 by the quantizer, FP16 by numpy, BF16 by the bf16 chapter's bit rounding.
    on = {
        "E4M3": float(lowp.quantize(probe, e4)),
        "E5M2": float(lowp.quantize(probe, e5)),
        "FP16": half.to_fp16(probe),
        "BF16": bf16.round_bf16(probe),
    }
    for name, page in PROBE_PAGE.items():
        check.close(f"0.3952 on {name} (an independent script, 8 decimals)", on[name], page, abs=5e-9)
    check.equal("0.3952 on E4M3 (formula)", on["E4M3"], float(lowp.quantize_by_formula(probe, e4)))
    check.equal("0.3952 on E5M2 (ml_dtypes)", on["E5M2"], float(lowp.quantize_ml_dtypes(probe, e5)))
    check.equal("0.3952 on BF16 (nearest of two neighbours)", on["BF16"], bf16.nearest_bf16(probe))
    least = 1 - e4.bias - e4.mantissa_bits
    odometer = [
        {"bits": _bits(c, e4), "value": float(e4.codes[c]), "text": f"{c} × {numbers.power(2, least)[0]}"}
        for c in range(2 ** (e4.bits - 1))
    ]
    check.equal("the first codes are k × 2⁻⁹", [o["value"] for o in odometer[:5]], [k * 2.0**least for k in range(5)])
    per_binade = [2**f.mantissa_bits for f in (e4, e5)]
    check.equal(
        "values per binade (E4M3 between 1 and 2, E5M2 between 1 and 2)",
        [int(np.sum((f.positive >= 1) & (f.positive < 2))) for f in (e4, e5)],
        per_binade,
    )
    subnormals = e4.positive[e4.positive < e4.min_normal]
    check.equal("E4M3 subnormals: 1 … 7 × 2⁻⁹, evenly spaced", subnormals.tolist(), [k * 2.0**-9 for k in range(1, 8)])
    fp16_bits = np.finfo(np.float16).bits
    step = 2**e4.mantissa_bits

    def count(f: lowp.Format) -> str:
        return f"{f.name} 的 {2**f.bits} 个码逐个解出，其中正的有限值的个数"

    def least_normal(f: lowp.Format) -> str:
        return f"{_pow2(f'1 − {f.bias}')}：指数字段为 1、尾数全零（bias = {f.bias}）"

    def least_sub(f: lowp.Format) -> str:
        return f"{_pow2(f'1 − {f.bias} − {f.mantissa_bits}')}：指数字段为 0、尾数最末一位为 1"

    def binades(f: lowp.Format) -> str:
        return f"{f.name} 的正数占了几个 [2ᵏ, 2ᵏ⁺¹) 区间"

    def rounded(f: str) -> str:
        return f"{probe:g} 就近舍入到 {f}，平局取偶"

    return {
        "sign_bits": number(1).via("输入：格式定义，一位符号"),
        "fp8_bits": number(e4.bits).via(
            f"{int(e4.signed)} + {e4.exponent_bits} + {e4.mantissa_bits}：符号、指数、尾数"
        ),
        "exponent_bits": number(e4.exponent_bits).via("输入：E4M3 的定义"),
        "mantissa_bits": number(e4.mantissa_bits).via("输入：E4M3 的定义"),
        "e4m3_count": number(len(e4.positive)).via(count(e4)),
        "e5m2_count": number(len(e5.positive)).via(count(e5)),
        "e2m1_count": number(len(e2.positive)).via(count(e2)),
        "e4m3_max": number(e4.max).via(f"{_closed(e4.max)}：全一的码是 NaN，它前一个码"),
        "e5m2_max": number(e5.max).via(f"{_closed(e5.max)}：最高指数留给 inf/NaN，次高指数、尾数全一"),
        "e2m1_max": number(e2.max).via(f"{_closed(e2.max)}：没有特殊值，全一的码"),
        "e4m3_min_normal": power(2, 1 - e4.bias).via(least_normal(e4)),
        "e4m3_min_sub": power(2, 1 - e4.bias - e4.mantissa_bits).via(least_sub(e4)),
        "e5m2_min_normal": power(2, 1 - e5.bias).via(least_normal(e5)),
        "e5m2_min_sub": power(2, 1 - e5.bias - e5.mantissa_bits).via(least_sub(e5)),
        "e4m3_step": power(2, -e4.mantissa_bits).via(f"2^−m，m = {e4.mantissa_bits} 位尾数：1 与下一个数之差"),
        "e4m3_step_fraction": Fact(2.0**-e4.mantissa_bits, f"1/{step}", f"{numbers.zh_int(step)}分之一").via(
            f"2^−{e4.mantissa_bits} = 1/{step}"
        ),
        "e4m3_next": number(e4.next_after_one(), 3).via(f"1 + 2^−{e4.mantissa_bits}"),
        "e5m2_next": number(e5.next_after_one(), 2).via(f"1 + 2^−{e5.mantissa_bits}"),
        "e2m1_next": number(e2.next_after_one(), 1).via(f"1 + 2^−{e2.mantissa_bits}"),
        "e4m3_binades": number(e4.binades).via(binades(e4)),
        "e5m2_binades": number(e5.binades).via(binades(e5)),
        "e2m1_binades": number(e2.binades).via(binades(e2)),
        "more_binades": number(e5.binades - e4.binades).via(f"{e5.binades} − {e4.binades}"),
        "ieee_max": number(ieee.max).via(f"{_closed(ieee.max)}：最高指数整个让给特殊值时的最大值"),
        "ieee_binades": number(ieee.binades).via(binades(ieee)),
        "reclaimed": number(len(reclaimed)).via(f"E4M3 里大于 {ieee.max:g} 的正数个数"),
        "reclaimed_low": number(float(reclaimed[0])).via(f"E4M3 里大于 {ieee.max:g} 的最小正数"),
        "e4m3_range": number(ranges[0], 2).via(
            f"log₂({e4.max:g} / {numbers.power(2, least)[0]})：最大值 / 最小非规格化数"
        ),
        "e5m2_range": number(ranges[1], 2).via(
            f"log₂({e5.max:g} / {numbers.power(2, 1 - e5.bias - e5.mantissa_bits)[0]})：最大值 / 最小非规格化数"
        ),
        "probe": number(probe, 4).via("输入：本课自设"),
        "probe_formats": number(len(on)).via(f"{'、'.join(on)}：这个数落到的格式个数"),
        "on_e4m3": number(on["E4M3"], 5).via(rounded("E4M3")),
        "on_e5m2": number(on["E5M2"], 3).via(rounded("E5M2")),
        "on_fp16": number(on["FP16"], 8).via(rounded("FP16") + "（numpy float16）"),
        "on_bf16": number(on["BF16"], 8).via(rounded("BF16") + "（bf16 章的位舍入）"),
        "per_binade_e4m3": number(per_binade[0]).via(f"2^m = 2{numbers.superscript(e4.mantissa_bits)}：每段的尾数取值"),
        "per_binade_e5m2": number(per_binade[1]).via(f"2^m = 2{numbers.superscript(e5.mantissa_bits)}：每段的尾数取值"),
        "fp16_bits": number(fp16_bits).via("FP16 的位数（numpy float16）"),
        "fp4_bits": number(e2.bits).via(
            f"{int(e2.signed)} + {e2.exponent_bits} + {e2.mantissa_bits}：E2M1 的符号、指数、尾数"
        ),
        "e2m1_min": number(e2.min_subnormal, 1).via(least_sub(e2)),
        "draws": number(DRAWS).via("输入：本课自设的抽样数"),
        "mismatches": number(0).via(f"{DRAWS:,} 次抽样里查表舍入与 ml_dtypes、公式不同的个数：检查保证一个也没有"),
        "e4m3_values": data(e4.positive.tolist()),
        "e5m2_values": data(e5.positive.tolist()),
        "e2m1_values": data(e2.positive.tolist()),
        "odometer": data(odometer),
        "nan_bits": data(_bits(0b0_1111_111, e4)),
    }


# -- fp8_scaling_granularity ---------------------------------------------------------------

# The sweep as an independent numpy script printed it: zeros among the 65,280 body values, per R.
SWEEP_ZEROS = {
    "E4M3 per tensor": (1, 5, 34, 296, 3098, 28629),
    "E4M3 1×128": (1, 1, 3, 39, 421, 4178),
    "E5M2 per tensor": (0, 0, 0, 0, 0, 3),
}
HIST_LOW, HIST_HIGH, HIST_STEP = -12.0, 9.0, 0.5  # the histogram's bins on the log₂ axis of the scaled values


def _body(x: np.ndarray, outliers: np.ndarray) -> np.ndarray:
    keep = np.ones(x.shape[1], dtype=bool)
    keep[outliers] = False
    return keep


def _log_histogram(scaled_body: np.ndarray, flushed: np.ndarray) -> list[int]:
    """Counts of log₂|x·s| over the bins, the values that round to 0 left out (they are counted apart)."""
    logs = np.log2(np.abs(scaled_body[~flushed]))
    edges = np.arange(HIST_LOW, HIST_HIGH + HIST_STEP / 2, HIST_STEP)
    return np.histogram(np.clip(logs, HIST_LOW, HIST_HIGH - 1e-9), edges)[0].tolist()


def scaling_sweep(rs=R_SWEEP) -> list[dict]:
    """Per R: body error and zeros for E4M3 per tensor, E4M3 per 1×128 tile and E5M2 per tensor, with the
    per-tensor and per-tile histograms of the scaled body."""
    rows = []
    with threadpool_limits(1):
        for r in rs:
            x, outliers = lowp.outlier_tensor(r)
            keep = _body(x, outliers)
            xb = x[:, keep]
            row = {"r": r, "outliers": outliers.tolist(), "amax": float(np.abs(x).max())}
            for key, q in (
                ("tensor", lowp.per_tensor(x, E4M3)),
                ("tiles", lowp.tiles(x, E4M3, TILE)),
                ("e5m2", lowp.per_tensor(x, E5M2)),
            ):
                qb = q[:, keep]
                row[key] = {"error": lowp.relative_error(qb, xb), "zeros": int(np.sum((qb == 0) & (xb != 0)))}
            scale = E4M3.max / row["amax"]
            row["tensor"]["hist"] = _log_histogram(xb * scale, lowp.per_tensor(x, E4M3)[:, keep] == 0)
            tile_amax = np.abs(x.reshape(x.shape[0], -1, TILE)).max(axis=2, keepdims=True)
            tile_scaled = (x.reshape(x.shape[0], -1, TILE) * (E4M3.max / tile_amax)).reshape(x.shape)[:, keep]
            row["tiles"]["hist"] = _log_histogram(tile_scaled, lowp.tiles(x, E4M3, TILE)[:, keep] == 0)
            rows.append(row)
    return rows


@CHAPTER.figure(
    "fp8_scaling_granularity",
    "一个离群值，拖垮整张张量",
    source="DeepSeek-V3 技术报告 §3.3.2（arXiv 2412.19437）：按整张张量缩放对激活离群值敏感，改用 1×128 分块；"
    "64 × 1024 的高斯张量与离群值倍数 R 为本课自设参数",
)
def fp8_scaling_granularity(check: Check, rs: tuple[int, ...] = R_SWEEP, zeros: dict = SWEEP_ZEROS):
    rows = scaling_sweep(rs)
    outliers = rows[0]["outliers"]
    tokens, channels = lowp.outlier_tensor(rs[0])[0].shape
    body_size = tokens * (channels - len(outliers))
    check.equal("outlier channels (default_rng(8))", outliers, [127, 188, 454, 709])
    outlier_tiles = sorted({c // TILE for c in outliers})
    check.equal("tiles holding an outlier", outlier_tiles, [0, 1, 3, 5])
    for key, name in (("tensor", "E4M3 per tensor"), ("tiles", "E4M3 1×128"), ("e5m2", "E5M2 per tensor")):
        check.equal(
            f"{name}: zeros per R (an independent script)", tuple(row[key]["zeros"] for row in rows), zeros[name]
        )
    per_tensor = [row["tensor"]["zeros"] for row in rows]
    check.that("per-tensor zeros never fall as R grows", per_tensor == sorted(per_tensor), "non-decreasing", per_tensor)
    check.that(
        "1×128 zeros ≤ per-tensor zeros at every R",
        all(row["tiles"]["zeros"] <= row["tensor"]["zeros"] for row in rows),
        "tiles never lose more",
        [(row["tiles"]["zeros"], row["tensor"]["zeros"]) for row in rows],
    )
    # A second route at R = 10⁴: what rounds to 0 is below half the least subnormal, 2⁻¹⁰, after scaling.
    at = next(row for row in rows if row["r"] == 10_000)
    flush = round(math.log2(E4M3.min_subnormal)) - 1
    threshold = 2.0**flush * at["amax"] / E4M3.max
    gaussian = math.erf(threshold / math.sqrt(2))
    measured = at["tensor"]["zeros"] / body_size
    check.close("R = 10⁴: Gaussian prediction of the zero fraction", gaussian, measured, abs=0.003)
    table = [
        {
            "r": _r_text(row["r"]),
            **{
                key: {"zeros": _cell(row[key]["zeros"], 0), "error": _cell(row[key]["error"], 4)}
                for key in ("tensor", "tiles", "e5m2")
            },
        }
        for row in rows
    ]
    last, first = rows[-1], rows[0]
    r_first, r_last, r_at = (_r_text(row["r"]) for row in (first, last, at))
    body = f"非离群的 {body_size:,} 个数"
    zeros_how = "{how}缩放后存成 0 的非离群值个数，R = {r}"
    error_how = "‖q − x‖ / ‖x‖，{body}，{how}，R = {r}"
    return {
        "tokens": number(tokens).via("输入：本课自设的张量形状（行）"),
        "channels": number(channels).via("输入：本课自设的张量形状（列）"),
        "outlier_count": number(len(outliers)).via("输入：本课自设；哪几列由固定种子抽出"),
        "outlier_tiles": number(len(outlier_tiles)).via(f"离群列 {outliers} 落在的 1×{TILE} 段数"),
        "body_size": number(body_size).via(f"{tokens} × ({channels} − {len(outliers)})"),
        "tile": number(TILE).via("输入：DeepSeek-V3 §3.3.2 的 1×128 分块"),
        "tiles_per_row": number(channels // TILE).via(f"{channels} / {TILE}"),
        "e4m3_max": number(E4M3.max).via(f"E4M3 的最大值 {_closed(E4M3.max)}：最大的 |x| 被放到这里"),
        "r_first": _r_fact(rs[0]).via("输入：本课自设的离群值倍数"),
        "r_last": _r_fact(rs[-1]).via("输入：本课自设的离群值倍数"),
        "r_ten_thousand": _r_fact(10_000).via("输入：本课自设的离群值倍数"),
        "tensor_zeros_last": number(last["tensor"]["zeros"]).via(zeros_how.format(how="E4M3 整张", r=r_last)),
        "tensor_zero_share_at_1e4": percent(measured, 1).via(f"{at['tensor']['zeros']} / {body_size}，R = {r_at}"),
        "tensor_zero_share_last": percent(last["tensor"]["zeros"] / body_size, 0).via(
            f"{last['tensor']['zeros']} / {body_size}，R = {r_last}"
        ),
        "tensor_error_first": number(first["tensor"]["error"], 4).via(
            error_how.format(body=body, how="E4M3 整张", r=r_first)
        ),
        "tensor_error_last": number(last["tensor"]["error"], 4).via(
            error_how.format(body=body, how="E4M3 整张", r=r_last)
        ),
        "tiles_error_last": number(last["tiles"]["error"], 4).via(
            error_how.format(body=body, how=f"E4M3 每 1×{TILE}", r=r_last)
        ),
        "tiles_zeros_last": number(last["tiles"]["zeros"]).via(zeros_how.format(how=f"E4M3 每 1×{TILE} ", r=r_last)),
        "e5m2_error": number(at["e5m2"]["error"], 4).via(error_how.format(body=body, how="E5M2 整张", r=r_at)),
        "e5m2_zeros_last": number(last["e5m2"]["zeros"]).via(zeros_how.format(how="E5M2 整张", r=r_last)),
        "flush_exponent": power(2, flush).via(
            f"E4M3 最小非规格化数 {numbers.power(2, flush + 1)[0]} 的一半：再小就舍入成 0"
        ),
        "threshold": number(threshold, 4).via(
            f"{numbers.power(2, flush)[0]} × amax / {E4M3.max:g}，amax = {at['amax']:.1f}，R = {r_at}"
        ),
        "gaussian": percent(gaussian, 2).via(f"P(|x| < {threshold:.4f}) = erf({threshold:.4f} / √2)，x ~ N(0, 1)"),
        "measured": percent(measured, 2).via(f"{at['tensor']['zeros']} / {body_size}，R = {r_at}"),
        "table": data(table),
        "hist": data({"low": HIST_LOW, "step": HIST_STEP, "rows": [row["tensor"]["hist"] for row in rows]}),
        "tile_hist": data([row["tiles"]["hist"] for row in rows]),
        "zeros": data([row["tensor"]["zeros"] for row in rows]),
        "tile_zeros": data([row["tiles"]["zeros"] for row in rows]),
        "outliers": data(outliers),
        "heat": data(heat_map(rs[2])),
    }


def heat_map(r: float, rows: int = 16, cols: int = 128) -> list[list[float]]:
    """The tensor's log₁₀|x| cut down to rows × cols cells, each the largest |x| it covers, for a picture."""
    x, _ = lowp.outlier_tensor(r)
    cells = np.abs(x).reshape(rows, x.shape[0] // rows, cols, x.shape[1] // cols).max(axis=(1, 3))
    return np.round(np.log10(cells), 3).tolist()


# -- fp8_block_formats ---------------------------------------------------------------------

BLOCK_FORMATS = (  # key, name on screen, element format, how it is scaled
    ("e4m3_tensor", "E4M3 整张", E4M3, "tensor"),
    ("e4m3_tiles", "E4M3 1×128", E4M3, "tiles"),
    ("mxfp8", "MXFP8", E4M3, "mx"),
    ("e2m1_tensor", "FP4 整张", E2M1, "tensor"),
    ("e2m1_tiles", "FP4 1×128", E2M1, "tiles"),
    ("mxfp4", "MXFP4", E2M1, "mx"),
    ("nvfp4", "NVFP4", E2M1, "nv"),
)
# An independent numpy script at R = 100: (body error, zero fraction), 4 decimals.
BLOCK_PAGE = {
    "e4m3_tensor": (0.0262, 0.0005),
    "e4m3_tiles": (0.0261, 0.0000),
    "mxfp8": (0.0291, 0.0000),
    "e2m1_tensor": (1.0000, 1.0000),
    "e2m1_tiles": (0.6121, 0.4673),
    "mxfp4": (0.3198, 0.1817),
    "nvfp4": (0.2268, 0.1139),
}


def _stored(x: np.ndarray, fmt: lowp.Format, how: str) -> np.ndarray:
    if how == "tensor":
        return lowp.per_tensor(x, fmt)
    if how == "tiles":
        return lowp.tiles(x, fmt, TILE)
    if how == "mx":
        return lowp.mx_blocks(x, fmt, MX_BLOCK)
    return lowp.nvfp4(x, NV_BLOCK)


def block_errors(r: float) -> dict[str, tuple[float, float]]:
    """(body error, body zero fraction) of every block format on the outlier tensor at R = r."""
    x, outliers = lowp.outlier_tensor(r)
    keep = _body(x, outliers)
    xb = x[:, keep]
    out = {}
    with threadpool_limits(1):
        for key, _, fmt, how in BLOCK_FORMATS:
            qb = _stored(x, fmt, how)[:, keep]
            out[key] = (lowp.relative_error(qb, xb), float(np.mean((qb == 0) & (xb != 0))))
    return out


def _strip(row: np.ndarray) -> list[float]:
    """One row as log₁₀|x| for a picture; a stored 0 drawn as 10⁻³ (dark)."""
    return np.round(np.log10(np.maximum(np.abs(row), 1e-3)), 3).tolist()


@CHAPTER.figure(
    "fp8_block_formats",
    "块越小，离群值淹没的邻居越少：MXFP8 / MXFP4 / NVFP4",
    source="OCP Microscaling (MX) v1.0（32 个数共用一个 E8M0 刻度；规则据二手资料）；TE MXFP8 文档；"
    "NVFP4（16 个数一个 E4M3 刻度，另加整张张量的 FP32 刻度，按公开参考实现）；DeepSeek-V3 §3.3.2；"
    "张量为本课自设，R = 100",
)
def fp8_block_formats(check: Check, r: float = R_BLOCKS, page: dict = BLOCK_PAGE):
    measured = block_errors(r)
    for key, (error, zeros) in page.items():
        check.close(f"{key}: body error (an independent script, 4 decimals)", measured[key][0], error, abs=5e-5)
        check.close(f"{key}: zero fraction (an independent script, 4 decimals)", measured[key][1], zeros, abs=5e-5)
    fp4 = [measured[k][0] for k in ("e2m1_tensor", "e2m1_tiles", "mxfp4", "nvfp4")]
    check.that("FP4: per tensor > 1×128 > MXFP4 > NVFP4", fp4 == sorted(fp4, reverse=True), "decreasing", fp4)
    # The estimate: a block polluted by an outlier loses all of its body (error 1), a clean one keeps R = 1's error.
    x, outliers = lowp.outlier_tensor(r)
    clean = block_errors(1)
    polluted, estimates, polluted_how = {}, {}, {}
    for key, width in (("e2m1_tiles", TILE), ("mxfp4", MX_BLOCK), ("nvfp4", NV_BLOCK)):
        blocks = 1024 // width
        polluted[key] = len({c // width for c in outliers}) / blocks
        polluted_how[key] = f"含离群值的块 / 每行的块：{len({c // width for c in outliers})} / {blocks}"
        e = clean[key][0]
        estimates[key] = math.sqrt(polluted[key] + (1 - polluted[key]) * e**2)
        check.that(
            f"{key}: measured error below the all-or-nothing estimate",
            measured[key][0] <= estimates[key],
            f"≤ {estimates[key]:.4f}",
            measured[key][0],
        )
    check.equal("polluted share of each row (1×128, 1×32, 1×16)", list(polluted.values()), [0.5, 0.125, 0.0625])
    bits = {
        "v3_act": lowp.bits_per_element(E4M3.bits, TILE, FP32_BITS),
        "v3_weight": lowp.bits_per_element(E4M3.bits, TILE * TILE, FP32_BITS),
        "mxfp8": lowp.bits_per_element(E4M3.bits, MX_BLOCK, E8M0.bits),
        "mxfp4": lowp.bits_per_element(E2M1.bits, MX_BLOCK, E8M0.bits),
        "nvfp4": lowp.bits_per_element(E2M1.bits, NV_BLOCK, E4M3.bits),
    }
    check.equal(
        "bits per element (8 + 32/128, 8 + 32/16384, 8 + 8/32, 4 + 8/32, 4 + 8/16)",
        list(bits.values()),
        [8.25, 8 + 32 / 16384, 8.25, 4.25, 4.5],
    )
    # The worked block: row 0, channels 112–127 (the outlier at 127) under NVFP4, and MXFP4's block 96–127.
    g = lowp.nvfp4_global(x)
    codes = lowp.nvfp4_block_scales(x, NV_BLOCK)
    code, clean_code = float(codes[0, 127 // NV_BLOCK, 0]), float(codes[0, 0, 0])
    check.equal("the worked block's scale is an E4M3 value", float(lowp.quantize(code, E4M3)), code)
    check.equal("the worked block's scale, in units of g", code, 44.0)
    stored = lowp.nvfp4(x, NV_BLOCK)
    block, back = x[0, 112:128], stored[0, 112:128]
    neighbours, kept = back[:-1], back[-1]
    check.close("the outlier comes back as −6 × the block scale", kept, -E2M1.max * code * g)
    nonzero = np.abs(neighbours[neighbours != 0])
    check.that(
        "a neighbour that survives is 0.5 × the block scale",
        bool(np.allclose(nonzero, 0.5 * code * g)),
        "±0.5·s",
        nonzero,
    )
    mx = lowp.mx_blocks(x, E2M1, MX_BLOCK)[0, 96:128]
    mx_scale = float(np.exp2(lowp.mx_exponent(np.abs(x[0, 96:128]).max(), E2M1)))
    check.equal("MXFP4 returns the outlier saturated at −6 × 4", float(mx[-1]), -E2M1.max * mx_scale)
    clean_back = stored[0, :16]
    saturating = {}
    for fmt in (E4M3, E2M1):
        blocks = x.reshape(x.shape[0], -1, MX_BLOCK)
        amax = np.abs(blocks).max(axis=2)
        saturating[fmt.name] = float(np.mean(amax / np.exp2(lowp.mx_exponent(amax, fmt)) > fmt.max))
    check.close("MX blocks whose max saturates (E4M3)", saturating["E4M3"], 0.1772, abs=5e-4)
    check.close("MX blocks whose max saturates (E2M1)", saturating["E2M1"], 0.3228, abs=5e-4)
    bars = [
        {
            "key": key,
            "name": name,
            "error": measured[key][0],
            "error_text": _cell(measured[key][0], 2 if fmt is E2M1 else 3),
            "zeros_text": percent(measured[key][1], 0).text,
            "estimate": estimates.get(key),
            "polluted": polluted.get(key),
        }
        for key, name, fmt, _ in BLOCK_FORMATS
    ]
    names = {key: name for key, name, _, _ in BLOCK_FORMATS}
    emax = math.floor(math.log2(E2M1.max))
    sign = "−" if kept < 0 else ""
    estimate_how = "√(p + (1 − p)·e₁²)，p = {p:g} 的块全丢，e₁ = {e:.4f}（R = 1 的误差）"
    bits_how = "{e} + {s} / {b}：元素位数 + 刻度位数 / 块大小"
    nv_scale = f"amax_b / {E2M1.max:g} / g 存成 E4M3"
    saturating_how = "块最大值 / 2^共享指数 > {m:g} 的块比例（{f} 元素）"
    return {
        "r": number(r).via("输入：本课自设的离群值倍数"),
        "fp4_bits": number(E2M1.bits).via(f"E2M1：{int(E2M1.signed)} + {E2M1.exponent_bits} + {E2M1.mantissa_bits} 位"),
        "fp8_bits": number(E4M3.bits).via(f"E4M3：{int(E4M3.signed)} + {E4M3.exponent_bits} + {E4M3.mantissa_bits} 位"),
        "tile": number(TILE).via("输入：DeepSeek-V3 §3.3.2 的 1×128 激活分块"),
        "mx_block": number(MX_BLOCK).via("输入：OCP MX v1.0 的块大小"),
        "nv_block": number(NV_BLOCK).via("输入：NVFP4 的块大小"),
        "weight_block": Fact(f"{TILE}×{TILE}", f"{TILE}×{TILE}", "一百二十八乘一百二十八").via(
            "输入：DeepSeek-V3 §3.3.2 的权重分块"
        ),
        "row": number(x.shape[1]).via("输入：本课自设的张量每行的数"),
        "bits_v3_act": number(bits["v3_act"], 2).via(bits_how.format(e=E4M3.bits, s=FP32_BITS, b=TILE)),
        "bits_v3_weight": number(bits["v3_weight"], 3).via(bits_how.format(e=E4M3.bits, s=FP32_BITS, b=TILE * TILE)),
        "bits_mxfp8": number(bits["mxfp8"], 2).via(bits_how.format(e=E4M3.bits, s=E8M0.bits, b=MX_BLOCK)),
        "bits_mxfp4": number(bits["mxfp4"], 2).via(bits_how.format(e=E2M1.bits, s=E8M0.bits, b=MX_BLOCK)),
        "bits_nvfp4": number(bits["nvfp4"], 1).via(
            bits_how.format(e=E2M1.bits, s=E4M3.bits, b=NV_BLOCK) + "，不计整张张量的一个 FP32 刻度"
        ),
        **{
            f"err_{key}": number(measured[key][0], 2 if fmt is E2M1 else 3).via(
                f"‖q − x‖ / ‖x‖，非离群值，{name}，R = {r:g}"
            )
            for key, name, fmt, _ in BLOCK_FORMATS
        },
        **{
            f"zeros_{key}": percent(measured[key][1], 0).via(f"非离群值里存成 0 的比例，{name}，R = {r:g}")
            for key, name, fmt, _ in BLOCK_FORMATS
            if fmt is E2M1
        },
        "polluted_tiles": number(polluted["e2m1_tiles"], 1).via(polluted_how["e2m1_tiles"]),
        "polluted_mx": number(polluted["mxfp4"], 3).via(polluted_how["mxfp4"]),
        "polluted_nv": number(polluted["nvfp4"], 4).via(polluted_how["nvfp4"]),
        **{
            f"estimate_{short}": number(estimates[key], 2).via(
                f"{names[key]}：" + estimate_how.format(p=polluted[key], e=clean[key][0])
            )
            for short, key in (("tiles", "e2m1_tiles"), ("mx", "mxfp4"), ("nv", "nvfp4"))
        },
        "g": number(g, 5).via(f"amax / ({E4M3.max:g} × {E2M1.max:g})：NVFP4 整张张量的 FP32 刻度"),
        "scale_code": number(code).via(f"{nv_scale}，离群值所在的块"),
        "block_scale": number(code * g, 3).via(f"{code:g} × g"),
        "clean_code": number(clean_code, 1).via(f"{nv_scale}，第一块（没有离群值）"),
        "outlier": number(float(block[-1]), 2).via("该块最后一个数：离群值"),
        "outlier_back": number(float(kept), 2).via(f"{sign}{E2M1.max:g} × {code:g} × g：E2M1 的最大值乘块刻度"),
        "neighbours": number(len(neighbours)).via(f"{NV_BLOCK} − 1：块里除离群值外的数"),
        "neighbours_zero": number(int(np.sum(neighbours == 0))).via("这些邻居里存回为 0 的个数"),
        "survivor": number(float(0.5 * code * g), 2).via(
            f"{E2M1.min_subnormal:g} × {code:g} × g：E2M1 最小的正数乘块刻度"
        ),
        "clean_zeros": number(int(np.sum(clean_back == 0))).via("第一块（没有离群值）存回为 0 的个数"),
        "clean_error": number(lowp.relative_error(clean_back, x[0, :16]), 3).via("第一块的 ‖q − x‖ / ‖x‖"),
        "mx_scale": number(mx_scale).via(f"2^(⌊log₂ amax_b⌋ − {emax})：E8M0 共享指数，{emax} 是 E2M1 的最大指数"),
        "mx_outlier_back": number(float(mx[-1])).via(
            f"{sign}{E2M1.max:g} × {mx_scale:g}：块最大值被截到 E2M1 的最大值"
        ),
        "mx_neighbours": number(len(mx) - 1).via(f"{MX_BLOCK} − 1"),
        "mx_neighbours_zero": number(int(np.sum(mx[:-1] == 0))).via("MXFP4 这一块里存回为 0 的邻居数"),
        "mx_saturating_e4m3": percent(saturating["E4M3"], 1).via(saturating_how.format(m=E4M3.max, f="E4M3")),
        "mx_saturating_e2m1": percent(saturating["E2M1"], 1).via(saturating_how.format(m=E2M1.max, f="E2M1")),
        "headroom": number(E4M3.max / E2M1.max, 2).via(f"{E4M3.max:g} / {E2M1.max:g}"),
        "bars": data(bars),
        "strips": data(
            {key: _strip(_stored(x, fmt, how)[0]) for key, _, fmt, how in BLOCK_FORMATS} | {"x": _strip(x[0])}
        ),
        "block": data([_cell(v, 1) for v in block]),
        "block_back": data([_cell(v, 1) for v in back]),
        "block_values": data(block.tolist()),
        "block_back_values": data(back.tolist()),
    }


# -- fp8_delayed_scaling -------------------------------------------------------------------

HISTORY = 16  # ours; Transformer Engine 2.x's default amax_history_len is 1024
TE_HISTORY = 1024
AMAX_PAGE = (1.0000, 1.0773, 16.1206, 152.9928, 20.2183)  # an independent script: amax at steps 0, 40, 60, 90, 119
AMAX_STEPS = (0, 40, 60, 90, 119)
RAMP_START, RAMP_END, RAMP_RATE, SPIKE = 40, 60, 1.15, 8  # the made-up trace: a ramp over [40, 60), an 8× spike


def _clipped_steps(run: lowp.ScalingRun) -> list[int]:
    return run.clipped_steps.tolist()


@CHAPTER.figure(
    "fp8_delayed_scaling",
    "延迟缩放：用历史最大值猜今天的刻度",
    source="Transformer Engine 2.x 的 DelayedScaling：默认历史 1024 步、取窗口最大值、余量 0；"
    "scale = (FP8_MAX / amax) / 2^margin；DeepSeek-V3 §3.3.2 在线量化；amax 轨迹为示意，窗口 16 步为本课自设",
)
def fp8_delayed_scaling(check: Check, history: int = HISTORY, spike_at: int = 90):
    ramp_start, ramp_end, ramp_rate, spike_factor = RAMP_START, RAMP_END, RAMP_RATE, SPIKE
    z, amax = lowp.amax_trace(ramp=(ramp_start, ramp_end, ramp_rate), spike=(spike_at, float(spike_factor)))
    margin = 1
    with threadpool_limits(1):
        runs = {
            "m0": lowp.delayed_scaling(z, amax, history, margin=0),
            "m1": lowp.delayed_scaling(z, amax, history, margin=margin),
            "recent": lowp.delayed_scaling(z, amax, history, algo="most_recent"),
            "current": lowp.delayed_scaling(z, amax, history, algo="current"),
        }
    for step, page in zip(AMAX_STEPS, AMAX_PAGE):
        check.close(f"amax at step {step} (an independent script)", float(amax[step]), page, abs=5e-5)
    for t in (1, 45, 100):  # TE's formula, by hand
        guess = amax[max(0, t - history) : t].max()
        check.close(f"scale at step {t} = 448 / window max / 2^margin", float(runs["m1"].scale[t]), 448 / guess / 2)
    m0, m1 = _clipped_steps(runs["m0"]), _clipped_steps(runs["m1"])
    check.equal("margin 0: clipped steps", len(m0), 38)
    check.that(
        "margin 0: every ramp step clips",
        set(range(ramp_start, ramp_end)) <= set(m0),
        f"steps {ramp_start}–{ramp_end - 1} clipped",
        m0,
    )
    check.equal("margin 1: only the spike clips", m1, [spike_at])
    check.equal("most_recent: clipped steps", len(_clipped_steps(runs["recent"])), 66)
    check.equal("current scaling never clips", _clipped_steps(runs["current"]), [])
    after = runs["m1"].error[spike_at + 1 : spike_at + 1 + history]
    current_max = float(runs["current"].error.max())
    check.close("error after the spike, max over 16 steps", float(after.max()), 0.0269, abs=5e-5)
    check.close("current scaling: max error", current_max, 0.0268, abs=5e-5)
    check.close("margin 0 at the spike: clipped share", float(runs["m0"].clipped[spike_at]), 0.6235, abs=5e-5)
    check.close("margin 1 at the spike: clipped share", float(runs["m1"].clipped[spike_at]), 0.3516, abs=5e-5)
    check.close("margin 0 at the spike: error", float(runs["m0"].error[spike_at]), 0.6715, abs=5e-5)
    check.close("margin 1 at the spike: error", float(runs["m1"].error[spike_at]), 0.4233, abs=5e-5)
    ramp = amax[ramp_end] / amax[ramp_start]
    trace = "示意 amax 轨迹（lowp.amax_trace）"
    clipped = "有数被截断（|x·scale| > {m:g}）的步数，{how}"
    window = f"窗口 {history} 步"
    spike_how = "第 {t} 步（尖峰）{what}，{how}"
    return {
        "steps": number(len(amax)).via(f"输入：{trace}的步数", schematic=True),
        "history": number(history).via("输入：本课自设的窗口长度"),
        "te_history": number(TE_HISTORY).via("输入：Transformer Engine 2.x 的默认 amax_history_len"),
        "ramp_steps": number(ramp_end - ramp_start).via(f"输入：{trace}上升段的步数", schematic=True),
        "ramp_rate": number(ramp_rate, 2).via(f"输入：{trace}上升段每步的倍数", schematic=True),
        "spike": times(spike_factor).via(f"输入：{trace}尖峰的倍数", schematic=True),
        "spike_at": number(spike_at).via(f"输入：{trace}尖峰所在的步", schematic=True),
        "amax_0": number(float(amax[0]), 2).via(f"{trace}第 0 步的值", schematic=True),
        "amax_60": number(float(amax[ramp_end]), 1).via(f"{trace}第 {ramp_end} 步的值", schematic=True),
        "amax_spike": number(float(amax[spike_at]), 1).via(f"{trace}第 {spike_at} 步的值", schematic=True),
        "ramp_growth": times(float(ramp), 1).via(
            f"amax[{ramp_end}] / amax[{ramp_start}] = {amax[ramp_end]:.4g} / {amax[ramp_start]:.4g}"
        ),
        "clipped_m0": number(len(m0)).via(clipped.format(m=E4M3.max, how=f"{window}、余量 0")),
        "clipped_m1": number(len(m1)).via(clipped.format(m=E4M3.max, how=f"{window}、余量 {margin}")),
        "clipped_recent": number(len(_clipped_steps(runs["recent"]))).via(
            clipped.format(m=E4M3.max, how="只看上一步的 amax")
        ),
        "clipped_current": number(0).via("当场缩放（用这一步自己的 amax）截断的步数：检查保证一步也没有"),
        "spike_clipped_m0": percent(float(runs["m0"].clipped[spike_at]), 1).via(
            spike_how.format(t=spike_at, what=f"|x·scale| > {E4M3.max:g} 的比例", how="余量 0")
        ),
        "spike_clipped_m1": percent(float(runs["m1"].clipped[spike_at]), 1).via(
            spike_how.format(t=spike_at, what=f"|x·scale| > {E4M3.max:g} 的比例", how=f"余量 {margin}")
        ),
        "spike_error_m0": number(float(runs["m0"].error[spike_at]), 2).via(
            spike_how.format(t=spike_at, what="的 ‖q − x‖ / ‖x‖", how="余量 0")
        ),
        "spike_error_m1": number(float(runs["m1"].error[spike_at]), 2).via(
            spike_how.format(t=spike_at, what="的 ‖q − x‖ / ‖x‖", how=f"余量 {margin}")
        ),
        "after_error": number(float(after.max()), 4).via(
            f"尖峰后 {history} 步里 ‖q − x‖ / ‖x‖ 的最大值，余量 {margin}"
        ),
        "current_error": number(current_max, 4).via("当场缩放：各步 ‖q − x‖ / ‖x‖ 的最大值"),
        "margin_factor": times(2**margin).via(f"2^margin，margin = {margin}"),
        "amax": data(amax.tolist()),
        "guess_m0": data((E4M3.max / runs["m0"].scale).tolist()),
        "guess_m1": data((E4M3.max / runs["m1"].scale).tolist()),
        "clipped_steps_m0": data(m0),
        "clipped_steps_m1": data(m1),
        "clipped_steps_recent": data(_clipped_steps(runs["recent"])),
    }


# -- fp8_accumulation_promotion ------------------------------------------------------------

KS = (512, 1024, 2048, 4096, 8192, 16384)
ACC_DOTS = 128  # dot products per K in the toy, the worst of them is plotted
ACC_BITS, N_C, WGMMA_K = 14, 128, 32  # V3 §3.3.2: ~14 bits kept, promotion every 128 = 4 WGMMAs of K = 32
ACC_PAGE = {  # an independent script: max relative error over 128 dot products, 4 decimals
    "plain": (0.0064, 0.0155, 0.0336, 0.0699, 0.1386, 0.2542),
    "promoted": (0.0009, 0.0008, 0.0008, 0.0007, 0.0007, 0.0007),
}
V3_MEASURED = 0.02  # "a maximum relative error of nearly 2%" at K = 4096 on H800 (V3 §3.3.2)


def _swamp_example(bits: int = ACC_BITS) -> dict:
    """One addition of the toy, read off a real run (K = 4096, dot product 0, product 4000): the partial sum,
    the product, and what of the product the 14-bit sum keeps."""
    rng = np.random.default_rng(12)
    products = lowp.fp8_products(1, 4096, rng)[0]
    partial = 0.0
    for p in products[:4000]:
        partial = float(lowp.keep_bits(np.array(partial + p), bits))
    product = float(products[4000])
    after = float(lowp.keep_bits(np.array(partial + product), bits))
    e_sum = math.floor(math.log2(partial))
    ulp = 2.0 ** (e_sum - bits + 1)
    e_prod = math.floor(math.log2(product))
    p_ulp = 2.0 ** (e_prod - 7)  # an E4M3 × E4M3 product has at most 8 significant bits
    return {
        "sum": partial,
        "product": product,
        "after": after,
        "ulp": ulp,
        "sum_exp": e_sum,
        "product_exp": e_prod,
        "sum_bits": format(round(partial / ulp), f"0{bits}b"),
        "product_bits": format(round(product / p_ulp), "08b"),
        "shift": e_sum - e_prod,  # how many places the product's first bit sits right of the sum's
    }


@CHAPTER.figure(
    "fp8_accumulation_promotion",
    "累加器只有 14 位：每 128 个数搬一次家",
    source="DeepSeek-V3 技术报告 §3.3.2、§3.5.2（arXiv 2412.19437）：H800 上 FP8 矩阵乘约保留 14 位；"
    "K = 4096 时最大相对误差接近 2%；每 128 个元素提升到 CUDA 核心上的 FP32；误差曲线来自本课玩具模型，不是硬件",
)
def fp8_accumulation_promotion(check: Check, bits: int = ACC_BITS, every: int = N_C, ks: tuple[int, ...] = KS):
    with threadpool_limits(1):
        plain, promoted = lowp.accumulation_errors(ks, rows=ACC_DOTS, bits=bits, promote_every=every)
    for name, measured in (("plain", plain), ("promoted", promoted)):
        for k, value, page in zip(ks, measured, ACC_PAGE[name]):
            check.close(f"{name} max relative error at K = {k} (an independent script)", float(value), page, abs=5e-5)
    check.that("14-bit error grows with every doubling of K", bool(np.all(np.diff(plain) > 0)), "increasing", plain)
    check.that(
        "promoted error stays flat (K = 16384 below 2× K = 512)", promoted[-1] < 2 * promoted[0], "< 2×", promoted
    )
    # The reference is exact: float64 sums these few-bit products without rounding (math.fsum agrees).
    rng = np.random.default_rng(12)
    sample = lowp.fp8_products(4, 4096, rng)
    check.equal(
        "float64 sum of the products is exact (math.fsum)", sample.sum(axis=1).tolist(), [math.fsum(r) for r in sample]
    )
    check.equal("N_C in WGMMAs (K = 32 each)", every // WGMMA_K, 4)
    at = ks.index(4096)
    ratio = plain[at] / promoted[at]
    example = _swamp_example(bits)
    lost = example["sum"] + example["product"] - example["after"]
    check.that("the example product loses its low bits", lost > 0, "> 0", lost)
    check.equal("the sum keeps a multiple of its 14-bit step", example["after"] % example["ulp"], 0.0)
    check.equal("the sum is its 14 bits", int(example["sum_bits"], 2) * example["ulp"], example["sum"])
    check.equal(
        "the product is its 8 bits",
        int(example["product_bits"], 2) * 2.0 ** (example["product_exp"] - 7),
        example["product"],
    )
    kept_bits = bits - example["shift"]  # the product's bits that still fall on the sum's grid
    check.close(
        "what is kept is the product's first bits",
        example["product"] - lost,
        int(example["product_bits"][:kept_bits], 2) * example["ulp"],
    )
    curve = [
        {"k": k, "plain": float(p), "promoted": float(q), "plain_text": percent(float(p), 1).text}
        for k, p, q in zip(ks, plain, promoted)
    ]
    step = numbers.power(2, int(math.log2(example["ulp"])))[0]
    worst = f"max |累加结果 − 精确和| / 精确和，{ACC_DOTS} 个点积，{{how}}，K = {{k}}"
    plain_how, promoted_how = f"{bits} 位累加", f"每 {every} 个提升到 FP32"
    return {
        "bits": number(bits).via("输入：DeepSeek-V3 §3.3.2，H800 上 FP8 矩阵乘约保留的位数"),
        "every": number(every).via("输入：DeepSeek-V3 §3.3.2 的提升间隔 N_C"),
        "wgmma": number(every // WGMMA_K).via(f"{every} / {WGMMA_K}"),
        "wgmma_k": number(WGMMA_K).via("输入：一次 WGMMA 的 K（DeepSeek-V3 §3.3.2）"),
        "dots": number(ACC_DOTS).via("输入：本课玩具模型每个 K 算的点积个数"),
        "k_first": number(ks[0]).via("输入：本课自设的 K"),
        "k_v3": number(4096).via("输入：DeepSeek-V3 §3.3.2 报告误差时的 K"),
        "k_last": number(ks[-1]).via("输入：本课自设的 K"),
        "plain_first": percent(float(plain[0]), 1).via(worst.format(how=plain_how, k=ks[0])),
        "plain_v3": percent(float(plain[at]), 1).via(worst.format(how=plain_how, k=ks[at])),
        "plain_last": percent(float(plain[-1]), 0).via(worst.format(how=plain_how, k=ks[-1])),
        "promoted_v3": percent(float(promoted[at]), 2).via(worst.format(how=promoted_how, k=ks[at])),
        "ratio": times(float(ratio), 0).via(f"{plain[at]:.3g} / {promoted[at]:.3g}，K = {ks[at]}"),
        "v3_measured": Fact(V3_MEASURED, "≈ 2%", "接近百分之二").via("输入：DeepSeek-V3 §3.3.2，H800 上的实测"),
        "example_sum": number(example["sum"], 1).via(f"玩具模型里一个点积累加途中的部分和（每加一次截到 {bits} 位）"),
        "example_product": number(example["product"], 4).via("下一个乘积：两个 E4M3 数相乘，精确"),
        "example_step": power(2, int(math.log2(example["ulp"]))).via(
            f"2^(⌊log₂ 部分和⌋ − {bits} + 1) = 2^({example['sum_exp']} − {bits - 1})：部分和的最小刻度"
        ),
        "example_kept": number(example["product"] - lost, 4).via(
            f"乘积二进制的前 {kept_bits} 位 {example['product_bits'][:kept_bits]} × {step}：落在部分和刻度上的部分"
        ),
        "example_lost": number(lost, 4).via("部分和 + 乘积 − 截断后的和"),
        "swamp": data(example),
        "curve": data(curve),
        "y_ticks": data([{"at": v, "text": percent(v, 1 if v < 0.01 else 0).text} for v in (0.001, 0.01, 0.1)]),
        "k_ticks": data([{"at": k, "text": number(k).text} for k in (ks[0], 4096, ks[-1])]),
    }


# -- fp8_linear_three_gemms ----------------------------------------------------------------

H100_FP8_DENSE, H100_BF16_DENSE = 1978.9, 989.4  # TFLOPS, H100 SXM dense peaks, from a public specification table
GEMMS = ("前向", "求输入的梯度", "求权重的梯度")  # a Linear's three matrix products
BF16_BITS = 16


@CHAPTER.figure(
    "fp8_linear_three_gemms",
    "一个 Linear 的三次矩阵乘，谁用 FP8",
    source="学习笔记「Transformer Engine」（TE 位于训练框架与 CUDA/cuBLAS/cuDNN 之间）；DeepSeek-V3 §3.3.1（图 6）、"
    "§3.3.3、§3.5.2；H100 SXM 稠密峰值取自公开规格表，非 NVIDIA 数据手册；示意图",
)
def fp8_linear_three_gemms(check: Check, fp8: float = H100_FP8_DENSE, bf16_peak: float = H100_BF16_DENSE):
    ratio = fp8 / bf16_peak
    check.close("FP8 over BF16 dense peak (theoretically doubles, V3 §3.3.1)", ratio, 2.0, abs=5e-4)
    check.equal("FP8 bytes per value over BF16", E4M3.bits / BF16_BITS, 0.5)
    peak = "输入：H100 SXM 稠密峰值，公开规格表"
    return {
        "gemms": number(len(GEMMS)).via("、".join(GEMMS)),
        "backward_gemms": _count(len(GEMMS[1:])).via("、".join(GEMMS[1:])),
        "tile": Fact("1×128", "1×128", "一乘一百二十八").via("输入：DeepSeek-V3 §3.3.2 的激活分块"),
        "tile_t": Fact("128×1", "128×1", "一百二十八乘一").via("1×128 转置：求权重梯度时沿 token 方向分块"),
        "block": Fact("128×128", "128×128", "一百二十八乘一百二十八").via("输入：DeepSeek-V3 §3.3.2 的权重分块"),
        "fp8_peak": number(fp8, 1, "TFLOPS", "T flops").via(peak),
        "bf16_peak": number(bf16_peak, 1, "TFLOPS", "T flops").via(peak),
        "ratio": times(ratio, 3).via(f"{fp8:g} / {bf16_peak:g}"),
        "cache_share": Fact(0.5, "½", "一半").via(f"{E4M3.bits} 位 / {BF16_BITS} 位"),
    }
