"""Chapter 5 in play order (专题四), ledger: the 16 bytes per parameter and what grows out of them."""

from __future__ import annotations

import numpy as np

from tools.course import numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, approx, data, myriad, number, percent, power, times, year
from tools.models import bf16, byte_ledger, gpt, lora, step_memory, v3, zero


def _term(cell: byte_ledger.Cell) -> tuple[str, str]:
    return ("≈0", "几乎为零") if cell.factored else (str(cell.nbytes), numbers.zh_int(cell.nbytes))


def _terms_how(cells: tuple[byte_ledger.Cell, ...]) -> str:
    """Each cell's bytes by its precision, as a sum: 权重 bf16 2 ＋ 梯度 bf16 2 ＋ m fp32 4 …"""
    return " ＋ ".join(f"{c.short or c.label} {'分解' if c.factored else c.precision} {_term(c)[0]}" for c in cells)


def row_fact(cells: tuple[byte_ledger.Cell, ...]) -> Fact:
    """The row as drawable data: per cell key, label, precision, bytes and its text."""
    rows = [
        {
            "key": c.key,
            "label": c.label,
            "short": c.short or c.label,
            "precision": c.precision,
            "bytes": c.nbytes,
            "factored": c.factored,
            "text": f"{_term(c)[0]} B",
        }
        for c in cells
    ]
    total = byte_ledger.total(cells)
    return Fact(rows, f"{total} B", f"{numbers.zh_quantity(str(total))}字节", how=f"每格字节相加：{_terms_how(cells)}")


def sum_fact(cells: tuple[byte_ledger.Cell, ...]) -> Fact:
    """The row's bytes as a sum, e.g. 2＋2＋4＋4＋4 ＝ 16 / 二加二加四加四加四，等于十六."""
    terms = [_term(c) for c in cells]
    approx = any(c.factored for c in cells)
    text = "＋".join(t for t, _ in terms) + (" ≈ " if approx else " ＝ ") + str(byte_ledger.total(cells))
    spoken = (
        "加".join(s for _, s in terms) + ("，约等于" if approx else "，等于") + numbers.zh_int(byte_ledger.total(cells))
    )
    return Fact(byte_ledger.total(cells), text, spoken, how=f"每格按精度的字节：{_terms_how(cells)}")


GIB = 2**30

CHAPTER = Chapter(
    "ledger",
    "每参数 16 字节：训练一步的显存账",
    summary=(
        "the 16-byte ledger, mixed precision, why fp32/bf16, optimizer variants, checkpoints, LoRA, "
        "ZeRO, the peak timeline, 6ND, the 125M worked example"
    ),
)

# -- ledger_16_bytes to checkpoint_size: the ledger row and its variants ----------------


def _bytes(n: int) -> Fact:
    """A byte count: 2 B / 两字节."""
    return Fact(n, f"{n} B", ("两" if n == 2 else numbers.zh_int(n)) + "字节")


def _cell_bytes(cell: byte_ledger.Cell) -> Fact:
    """One cell's bytes, from its precision."""
    return _bytes(cell.nbytes).via(f"{cell.label}，{cell.precision}：每个数 {cell.nbytes} 字节")


def _sum_bytes(cells: tuple[byte_ledger.Cell, ...], what: str, fact=None) -> Fact:
    """The bytes of some cells (`what` names them), with the sum that gives them."""
    fact = fact or _bytes
    terms = " + ".join(f"{c.short or c.label} {c.nbytes}" for c in cells)
    return fact(byte_ledger.total(cells)).via(f"{what}：{terms}")


def _optimizer_cells(cells: tuple[byte_ledger.Cell, ...]) -> tuple[byte_ledger.Cell, ...]:
    return tuple(c for c in cells if c.key in byte_ledger.OPTIMIZER_SIDE)


def _e9(n: float) -> str:
    """A parameter count for a formula, in the screen's 671e9 style."""
    return f"{n / 1e9:g}e9"


def _count(n: int) -> Fact:
    """A small count said as one counts things: 2 → 两 (两次), 5 → 五."""
    text = numbers.signed(n)
    return Fact(n, text, numbers.zh_quantity(text))


def _keys(cells: tuple[byte_ledger.Cell, ...], precision: str) -> set[str]:
    return {c.key for c in cells if c.precision == precision and not c.factored}


# ledger_16_bytes: the optimizers in history and the state cells each keeps
# (the page's band Ⓐ). Years are those of the first paper or
# lecture; the notes paraphrase each one's own positioning.
BAND = (
    {"id": "sgd", "name": "SGD", "year": None, "state": (), "note": "只看这一步的梯度"},
    {"id": "momentum", "name": "动量", "year": 1964, "state": ("m",), "note": "小重球：带着惯性走"},
    {"id": "adagrad", "name": "AdaGrad", "year": 2011, "state": ("v",), "note": "除以历来梯度平方和"},
    {"id": "rmsprop", "name": "RMSProp", "year": 2012, "state": ("v",), "note": "除以近期幅度的滑动平均"},
    {"id": "adam", "name": "Adam", "year": 2014, "state": ("m", "v"), "note": "合 AdaGrad 与 RMSProp 之长"},
    {"id": "adamw", "name": "AdamW", "year": 2017, "state": ("m", "v"), "note": "权重衰减与更新解耦"},
    {"id": "muon", "name": "Muon", "year": 2024, "state": ("m",), "note": "动量正交化，只管二维参数"},
)
ZERO_FIGURE1_PARAMS, ZERO_FIGURE1_BASELINE_GB = 7.5e9, 120  # arXiv 1910.02054 Figure 1, K = 12


@CHAPTER.figure(
    "ledger_16_bytes",
    "每个参数身上挂着五样东西",
    source="16 B 口径：ZeRO arXiv 1910.02054 §3；Adam 1412.6980；AdamW 1711.05101\n"
    "Muon：Keller Jordan 2024；Polyak 1964；AdaGrad：Duchi 等 2011；RMSProp：Hinton 2012 讲义",
)
def ledger_16_bytes(check: Check, cells: tuple[byte_ledger.Cell, ...] = byte_ledger.MIXED_ADAMW, band: tuple = BAND):
    check.equal("total", byte_ledger.total(cells), 16)
    check.equal("optimizer_side", byte_ledger.optimizer_bytes(cells), 12)
    check.equal("weight", next(c.nbytes for c in cells if c.key == "weight"), 2)
    # ZeRO's own route: (2 + 2 + K)Ψ with K = 12 gives Figure 1's 120 GB baseline for 7.5B.
    check.close(
        "total (ZeRO Figure 1 baseline, GB)",
        byte_ledger.total(cells) * ZERO_FIGURE1_PARAMS / 1e9,
        ZERO_FIGURE1_BASELINE_GB,
    )
    check.equal("fp32 cells", _keys(cells, "fp32"), set(byte_ledger.OPTIMIZER_SIDE))
    check.equal("bf16 cells", _keys(cells, "bf16"), {"weight", "grad"})
    years = [entry["year"] for entry in band if entry["year"] is not None]
    check.that("band in order of history", years == sorted(years), "years increase along the band", years)
    by_key = {c.key: c for c in cells}
    rows = []
    for entry in band:
        check.that(
            f"state of {entry['name']}",
            set(entry["state"]) <= {"m", "v"},
            "optimizer state is made of m and v cells",
            entry["state"],
        )
        state = tuple(by_key[key] for key in entry["state"])
        rows.append(
            {
                "id": entry["id"],
                "name": entry["name"],
                "note": entry["note"],
                "state": row_fact(state).value,
                "year": None if entry["year"] is None else str(entry["year"]),
            }
        )
    states = {entry["id"]: entry["state"] for entry in band}
    check.equal("Adam and AdamW keep the same state", states["adam"], states["adamw"])
    facts = {
        "ledger": row_fact(cells),
        "sum": sum_fact(cells),
        "weight": _cell_bytes(by_key["weight"]),
        "grad": _cell_bytes(by_key["grad"]),
        "fp32_cell": _cell_bytes(by_key["m"]),
        "optimizer": _sum_bytes(_optimizer_cells(cells), "优化器那边的格"),
        "cells": _count(len(cells)).via("这一行的格数"),
        "band": data(rows),
    }
    facts |= {
        f"year_{entry['id']}": year(entry["year"]).via(f"输入：{entry['name']}（首篇论文或讲义）的年份")
        for entry in band
        if entry["year"] is not None
    }
    return facts


@CHAPTER.figure(
    "mixed_precision_same_16",
    "混合精度省一半显存？常驻的一个字节都没省",
    source="ZeRO，arXiv 1910.02054 §3（2Ψ＋2Ψ＋12Ψ；原文用 fp16，字节数相同）；累加器那一行按同一口径推算",
)
def mixed_precision_same_16(
    check: Check,
    pure: tuple[byte_ledger.Cell, ...] = byte_ledger.PURE_FP32,
    mixed: tuple[byte_ledger.Cell, ...] = byte_ledger.MIXED_ADAMW,
):
    accumulate = byte_ledger.store_as(mixed, ("grad",), "fp32")
    check.equal("pure", byte_ledger.total(pure), 16)
    check.equal("mixed", byte_ledger.total(mixed), 16)
    check.equal("accumulate", byte_ledger.total(accumulate), 18)
    before = {c.key: c.nbytes for c in pure}
    after = {c.key: c.nbytes for c in mixed}
    saved = {key: before[key] - after[key] for key in before}
    check.equal("weight_saved", saved["weight"], 2)
    check.equal("grad_saved", saved["grad"], 2)
    check.equal("master (what mixed precision adds)", set(after) - set(before), {"master"})
    # Column by column: the 2 + 2 saved is exactly the new master copy.
    check.equal("saved = master", sum(saved.values()), after["master"])
    precision = {(c.key, row): c.precision for row, cells in (("pure", pure), ("mixed", mixed)) for c in cells}

    def saved_fact(key: str) -> Fact:
        how = f"{precision[key, 'pure']} {before[key]} B − {precision[key, 'mixed']} {after[key]} B"
        return _bytes(saved[key]).via(how)

    return {
        "pure": row_fact(pure),
        "pure_sum": sum_fact(pure),
        "mixed": row_fact(mixed),
        "mixed_sum": sum_fact(mixed),
        "accumulate": row_fact(accumulate),
        "accumulate_sum": sum_fact(accumulate),
        "weight_saved": saved_fact("weight"),
        "grad_saved": saved_fact("grad"),
        "master": _cell_bytes(next(c for c in mixed if c.key == "master")),
    }


# why_fp32_bf16: the increments are ours (the page fixes only the three
# behaviours); 0.003 is less than half a cell, 1e-3 is added 1,000 times.
FP16_MIN_NORMAL_BITS = 0x0400
FP32_MIN_NORMAL_BITS = 0x00800000  # also bf16's: the same 8-bit exponent


@CHAPTER.figure(
    "why_fp32_bf16",
    "为什么三格 fp32、两格 bf16",
    source="bf16 舍入：float32 高 16 位、就近取偶，另两路对拍；DeepSeek-V3，arXiv 2412.19437 §3.3.3",
)
def why_fp32_bf16(
    check: Check,
    rounding=bf16.round_bf16,
    small_step: float = 0.003,
    repeat_step: float = 1e-3,
    repeats: int = 1000,
    samples: int = 2000,
):
    # Ⓐ bit layouts: fp32 and fp16 from numpy, bf16 from the rounding itself.
    mantissa = bf16.mantissa_bits(rounding)
    layouts = [
        {
            "name": "fp32",
            "sign": 1,
            "exponent": int(np.finfo(np.float32).nexp),
            "mantissa": int(np.finfo(np.float32).nmant),
        },
        {"name": "bf16", "sign": 1, "exponent": 16 - 1 - mantissa, "mantissa": mantissa},
        {
            "name": "fp16",
            "sign": 1,
            "exponent": int(np.finfo(np.float16).nexp),
            "mantissa": int(np.finfo(np.float16).nmant),
        },
    ]
    for layout, bits, page in zip(layouts, (32, 16, 16), ((1, 8, 23), (1, 8, 7), (1, 5, 10))):
        check.equal(f"{layout['name']} layout", (layout["sign"], layout["exponent"], layout["mantissa"]), page)
        check.equal(f"{layout['name']} bits", layout["sign"] + layout["exponent"] + layout["mantissa"], bits)
    # Three exponent bits fewer cost fp16 112 binades at the small end, not 3.
    fp16_min = float(np.array([FP16_MIN_NORMAL_BITS], dtype=np.uint16).view(np.float16)[0])
    bf16_min = bf16.from_bits(FP32_MIN_NORMAL_BITS)
    check.equal("fp16_min_normal", fp16_min, 2.0**-14)
    check.equal("bf16_min_normal", bf16_min, 2.0**-126)
    check.equal("bf16_min_normal is a bf16 value", rounding(bf16_min), bf16_min)
    check.equal("bf16_min_normal (numpy float32 tiny)", bf16_min, float(np.finfo(np.float32).tiny))
    lost = round(np.log2(fp16_min / bf16_min))
    check.equal("binades_lost", lost, 112)

    # Ⓑ real bf16 arithmetic at 1.0.
    cell = bf16.spacing_at(1.0, rounding)
    check.equal("cell", cell, 2.0**-7)
    check.that("small_step is less than half a cell", small_step < cell / 2, f"< {cell / 2}", small_step)
    small = rounding(1.0 + small_step)
    check.equal("small_result (less than half a cell rounds back)", small, 1.0)
    check.equal("tie (exactly half a cell, to even)", rounding(1.0 + cell / 2), 1.0)
    full = rounding(1.0 + cell)
    check.that("full_result (a full cell sticks)", full == 1.0 + cell and full != 1.0, f"{1.0 + cell}", full)
    path = bf16.accumulate(1.0, repeat_step, repeats, rounding)
    check.equal("bf16_sum (1,000 additions still 1.0)", path[-1], 1.0)
    fp32_path = bf16.accumulate_fp32(1.0, repeat_step, repeats)
    check.close("fp32_sum", fp32_path[-1], 2.000047, abs=5e-7)
    check.that(
        "fp32_sum is not exact",
        fp32_path[-1] != 1.0 + repeats * repeat_step,
        "float32 rounding leaves a trace",
        fp32_path[-1],
    )
    # The rounding against two other routes, on random float32 values and exact ties.
    values = bf16.random_float32(samples)
    struct_route = np.array([rounding(float(x)) for x in values], dtype=np.float32)
    numpy_route = bf16.round_bf16_numpy(values)
    nearest_route = np.array([bf16.nearest_bf16(float(x)) for x in values], dtype=np.float32)
    check.equal("RNE cross-check (numpy, mismatches)", int(np.sum(struct_route != numpy_route)), 0)
    check.equal("RNE cross-check (nearest neighbour, mismatches)", int(np.sum(struct_route != nearest_route)), 0)
    # Ⓒ the line the criterion draws: what never forgets is fp32, the rest bf16.
    check.equal("fp32 cells", _keys(byte_ledger.MIXED_ADAMW, "fp32"), {"m", "v", "master"})
    check.equal("bf16 cells", _keys(byte_ledger.MIXED_ADAMW, "bf16"), {"weight", "grad"})
    sup = numbers.superscript
    layout_how = {
        ("fp32", "exponent"): "numpy 的 float32 指数位数（finfo.nexp）",
        ("fp32", "mantissa"): "numpy 的 float32 尾数位数（finfo.nmant）",
        ("bf16", "exponent"): f"16 位减 1 位符号、减 {mantissa} 位尾数",
        ("bf16", "mantissa"): "bf16 舍入后 1 + 2⁻ᵏ 仍不等于 1 的最大 k",
        ("fp16", "exponent"): "numpy 的 float16 指数位数（finfo.nexp）",
        ("fp16", "mantissa"): "numpy 的 float16 尾数位数（finfo.nmant）",
    }
    return {
        "layouts": data(layouts),
        **{
            f"{f['name']}_{part[:3]}": number(f[part]).via(layout_how[f["name"], part])
            for f in layouts
            for part in ("exponent", "mantissa")
        },
        "fp16_min_normal": power(2, -14).via(f"fp16 最小正规数：位模式 {FP16_MIN_NORMAL_BITS:#06x} 解码"),
        "bf16_min_normal": power(2, -126).via(
            f"bf16（同 fp32 指数）最小正规数：位模式 {FP32_MIN_NORMAL_BITS:#010x} 解码"
        ),
        "fp32_sign": _count(layouts[0]["sign"]).via("fp32 的符号位数"),
        "fp32_cells": _count(len(_keys(byte_ledger.MIXED_ADAMW, "fp32"))).via("这一行里存 fp32 的格：m、v、主权重"),
        "bf16_cells": _count(len(_keys(byte_ledger.MIXED_ADAMW, "bf16"))).via("这一行里存 bf16 的格：权重、梯度"),
        "binades_lost": number(lost).via(f"log₂(fp16 最小正规数 ÷ bf16 最小正规数) = log₂(2{sup(-14)} ÷ 2{sup(-126)})"),
        "cell": power(2, round(np.log2(cell))).via("1 与它上面那个 bf16 数之差（真的 bf16 舍入找出）"),
        "cell_decimal": number(cell, 7).via(f"2{sup(round(np.log2(cell)))} 写成小数"),
        "half_cell": power(2, round(np.log2(cell / 2))).via(f"一格的一半：2{sup(round(np.log2(cell)))} ÷ 2"),
        "one": number(1.0, 1).via("输入：看 bf16 精度的那个位置"),
        "small_step": number(small_step, 3).via("输入：本课自设的增量，不到半格"),
        "small_result": number(small, 1).via(f"bf16 舍入 1 + {small_step:g}"),
        "full_result": number(full, 7).via(f"bf16 舍入 1 + 2{sup(round(np.log2(cell)))}"),
        "repeat_step": number(repeat_step, 3).via("输入：本课自设的每次增量"),
        "repeats": number(repeats).via("输入：本课自设的次数"),
        "bf16_sum": number(path[-1], 1).via(f"从 1 起，bf16 里加 {repeat_step:g}、每次舍入，共 {repeats:,} 次"),
        "fp32_sum": number(fp32_path[-1], 6).via(f"从 1 起，float32 里加 {repeat_step:g}、每次舍入，共 {repeats:,} 次"),
        "exact_sum": number(1.0 + repeats * repeat_step, 1).via(f"精确值：1 + {repeats:,} × {repeat_step:g}"),
        "fp32_path": data(fp32_path),
        "ledger": row_fact(byte_ledger.MIXED_ADAMW),
        "v3_moments": row_fact(byte_ledger.store_as(byte_ledger.MIXED_ADAMW, ("m", "v"), "bf16")),
    }


# optimizer_bytes_table: a real matrix for Adafactor's "≈ 0": one V3 routed
# expert's up-projection, hidden × expert FFN width.
ADAFACTOR_MATRIX = (v3.HIDDEN, v3.EXPERT_FFN)
PAGE_BYTES = {"AdamW": 16, "Muon": 12, "Lion": 12, "Adafactor": 8, "8-bit Adam": 10}


@CHAPTER.figure(
    "optimizer_bytes_table",
    "省状态的三种思路：拿掉、分解、存小",
    source="Muon：Keller Jordan 2024；Lion arXiv 2302.06675；Adafactor arXiv 1804.04235\n"
    "8-bit Adam：Dettmers 等 arXiv 2110.02861；字节按 ZeRO 16 B 口径当场算",
)
def optimizer_bytes_table(
    check: Check,
    base: tuple[byte_ledger.Cell, ...] = byte_ledger.MIXED_ADAMW,
    matrix: tuple[int, int] = ADAFACTOR_MATRIX,
):
    rows = {
        "AdamW": base,
        "Muon": byte_ledger.drop(base, "v"),  # orthogonalised momentum: no second moment
        "Lion": byte_ledger.drop(base, "v"),  # one momentum, the update is its sign
        "Adafactor": byte_ledger.factor(byte_ledger.drop(base, "m"), "v"),  # no momentum, v as a row + a column
        "8-bit Adam": byte_ledger.store_as(base, ("m", "v"), "int8"),
    }
    for name, cells in rows.items():
        check.equal(f"{name} bytes", byte_ledger.total(cells), PAGE_BYTES[name])
    # Which cell each variant changed, against the page's 「动了哪一格」.
    base_cells = {c.key: c for c in base}
    changed = {name: {k for k in base_cells if base_cells[k] not in cells} for name, cells in rows.items()}
    for name, page in (("Muon", {"v"}), ("Lion", {"v"}), ("Adafactor", {"m", "v"}), ("8-bit Adam", {"m", "v"})):
        check.equal(f"{name} changes", changed[name], page)
    per_param = byte_ledger.factored_bytes(*matrix)
    check.that("adafactor_v (≈ 0)", per_param < 0.01, "a row + a column costs < 0.01 B per parameter", per_param)
    # Which ideas stack: 8-bit stores what is left of a dropped row; dropping and factoring v exclude each other.
    lion_8bit = byte_ledger.store_as(rows["Lion"], ("m",), "int8")
    check.equal("lion_8bit bytes", byte_ledger.total(lion_8bit), 9)
    try:
        byte_ledger.factor(rows["Muon"], "v")
        exclusive = False
    except byte_ledger.LedgerError:
        exclusive = True
    check.that("drop and factor exclude each other", exclusive, "factoring a dropped v is impossible", exclusive)
    facts = {}
    for name, cells in rows.items():
        slug = name.lower().replace("-", "").replace(" ", "_")
        facts[slug] = row_fact(cells)
        facts[f"{slug}_sum"] = sum_fact(cells)
    facts["lion_8bit"] = row_fact(lion_8bit)
    facts["lion_8bit_sum"] = sum_fact(lion_8bit)
    fp32 = byte_ledger.BYTES["fp32"]
    facts["adafactor_v"] = number(per_param, 4, "B", "字节").via(
        f"一行加一列 fp32：{fp32} × ({matrix[0]:,} + {matrix[1]:,}) ÷ ({matrix[0]:,} × {matrix[1]:,})"
    )
    facts["matrix"] = Fact(
        matrix,
        f"{matrix[0]:,}×{matrix[1]:,}",
        f"{numbers.zh_int(matrix[0])}乘{numbers.zh_int(matrix[1])}",
        how="输入：V3 路由专家的 up 投影，隐藏宽 × 专家 FFN 宽",
    )
    return facts


@CHAPTER.figure(
    "checkpoint_size",
    "检查点里必须存哪几格",
    source="671B × 12 B 与 × 8 B 为本课推算（TiB ＝ 2⁴⁰ B）；bf16 一二阶矩：DeepSeek-V3，arXiv 2412.19437 §3.3.3",
)
def checkpoint_size(
    check: Check, cells: tuple[byte_ledger.Cell, ...] = byte_ledger.MIXED_ADAMW, params: float = v3.TOTAL_PARAMS
):
    saved = byte_ledger.must_save(cells)
    check.equal("saved cells", {c.key for c in saved}, {"m", "v", "master"})
    check.equal("classic_bytes", byte_ledger.total(saved), 12)
    check.equal(
        "classic_bytes (pure fp32 saves the same)", byte_ledger.total(byte_ledger.must_save(byte_ledger.PURE_FP32)), 12
    )
    v3_cells = byte_ledger.store_as(cells, ("m", "v"), "bf16")
    v3_saved = byte_ledger.must_save(v3_cells)
    check.equal("v3_bytes", byte_ledger.total(v3_saved), 8)
    classic_tib = byte_ledger.total(saved) * params / v3.TIB
    v3_tib = byte_ledger.total(v3_saved) * params / v3.TIB
    check.close("classic_tib", classic_tib, 7.3, abs=0.05)
    check.close("classic_tib (cell by cell)", sum(c.nbytes * params / v3.TIB for c in saved), classic_tib)
    check.close("v3_tib", v3_tib, 4.9, abs=0.05)
    smaller = 1 - v3_tib / classic_tib
    check.close("smaller (one third)", smaller, 1 / 3)
    return {
        "ledger": row_fact(cells),
        "saved": row_fact(saved),
        "classic_sum": sum_fact(saved),
        "v3_saved": row_fact(v3_saved),
        "v3_sum": sum_fact(v3_saved),
        "classic_bytes": _sum_bytes(saved, "不能重建的格"),
        "v3_bytes": _sum_bytes(v3_saved, "不能重建的格（m、v 为 bf16）"),
        "params": Fact(params, "671B", numbers.zh_large(params), how="输入：DeepSeek-V3 的总参数量"),
        "classic_tib": number(classic_tib, 1, "TiB", " TiB").via(f"{_e9(params)} × {byte_ledger.total(saved)} B ÷ 2⁴⁰"),
        "v3_tib": number(v3_tib, 1, "TiB", " TiB").via(f"{_e9(params)} × {byte_ledger.total(v3_saved)} B ÷ 2⁴⁰"),
        "smaller": Fact(smaller, "⅓", "三分之一").via(
            f"1 − {byte_ledger.total(v3_saved)} B ÷ {byte_ledger.total(saved)} B（同一参数量，只看每参数字节）"
        ),
        "cells": _count(len(cells)).via("这一行的格数"),
    }


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------

# lora_ledger: the page puts 70 亿 into the ledger but its 0.124% needs LLaMA-7B's
# real 6,738,415,616 (six_nd_underestimate); that model is used throughout. The page does
# not say where the adapters hang: q and v in every layer (LoRA's own choice) is
# what reproduces its 839 万 (INFERRED).
LORA_RANK = 16
LORA_MATRICES = ("q", "v")
LORA_PAGE = {"matrix_share": 0.008, "adapters": 839e4, "adapter_share": 0.00124, "ratio": 7.9}


@CHAPTER.figure(
    "lora_ledger",
    "LoRA：同一张账，换个算法再算一遍",
    source="LoRA：Hu 等，arXiv 2106.09685；参数量取 LLaMA-7B 实数（arXiv 2302.13971）；adapter 挂在 q、v 上为本课推定",
)
def lora_ledger(
    check: Check,
    model: lora.Llama = lora.LLAMA_7B,
    rank: int = LORA_RANK,
    matrices: tuple[str, ...] = LORA_MATRICES,
    cells: tuple = byte_ledger.MIXED_ADAMW,
):
    pair = lora.adapter_pair(model.width, rank)
    matrix_share = pair / model.width**2
    check.close("matrix_share", matrix_share, LORA_PAGE["matrix_share"], abs=0.0005)
    adapters = pair * len(matrices) * model.layers
    check.close("adapters", adapters, LORA_PAGE["adapters"], abs=0.5e4)
    params = model.params()
    check.close("adapter_share", adapters / params, LORA_PAGE["adapter_share"], abs=0.000005)
    full = lora.resident_bytes(0, params, cells)
    tuned = lora.resident_bytes(params, adapters, cells)
    check.close("ratio", full / tuned, LORA_PAGE["ratio"], abs=0.05)
    page_n = 7e9  # the ratio is the page's whichever N is put in
    check.close(
        "ratio (N = 70 亿)",
        lora.resident_bytes(0, page_n, cells) / lora.resident_bytes(page_n, adapters, cells),
        LORA_PAGE["ratio"],
        abs=0.05,
    )
    frozen_row = byte_ledger.frozen(cells)
    check.that(
        "frozen_row",
        [c.key for c in frozen_row] == ["weight"],
        "a frozen parameter keeps only its bf16 weight",
        [c.key for c in frozen_row],
    )
    full_passes, lora_passes = lora.passes(0, params), lora.passes(params, adapters)
    check.close("full_passes", full_passes, 3.0)
    check.close("lora_passes", lora_passes, 2.0, abs=0.01)
    d, r, whole, kept = model.width, rank, byte_ledger.total(cells), byte_ledger.total(frozen_row)
    dropped = "、".join(c.label for c in cells if c not in frozen_row)
    return {
        "width": number(model.width).via("输入：LLaMA-7B 的宽度 d"),
        "rank": number(rank).via("输入：LoRA 的秩 r"),
        "layers": number(model.layers).via("输入：LLaMA-7B 的层数"),
        "matrix_share": percent(matrix_share, 1).via(f"2 × d × r ÷ d² = 2 × {d:,} × {r} ÷ {d:,}²"),
        "adapters": myriad(adapters).via(
            f"2 × {d:,} × {r} × {len(matrices)} 个矩阵（{'、'.join(matrices)}）× {model.layers} 层"
        ),
        "params": myriad(params, "亿", 1).via("LLaMA-7B 逐项数：每层 4d² + 3d·ffn + 2d，加嵌入、输出头、末层 norm"),
        "adapter_share": percent(adapters / params, 3).via(f"{adapters:,} ÷ {params:,}"),
        "row": row_fact(cells),
        "frozen_row": row_fact(frozen_row),
        "dropped": number(whole - kept, unit="B", unit_spoken="字节").via(f"{whole} − {kept}：冻住后不要的{dropped}"),
        "full_gib": number(full / GIB, 1, "GiB", "吉字节").via(f"{params:,} × {whole} B ÷ 2³⁰"),
        "lora_gib": number(tuned / GIB, 1, "GiB", "吉字节").via(
            f"({params:,} × {kept} B + {adapters:,} × {whole} B) ÷ 2³⁰"
        ),
        "ratio": times(full / tuned, 1).via("全量微调 ÷ LoRA 的常驻字节"),
        "full_passes": times(full_passes).via("以前向为 1：前向、输入梯度、权重梯度各一份"),
        "lora_passes": approx(times(lora_passes)).via(
            f"(2 × {params:,} + {adapters:,}) ÷ {params:,}：冻住的不算权重梯度"
        ),
        "saved_compute": percent(1 - lora_passes / full_passes, 0).via(f"1 − {lora_passes:.3f} ÷ {full_passes:g}"),
    }


# zero_stages: ZeRO's Figure 1 example, per-GPU model states in decimal GB as the paper prints them.
ZERO_PAPER_GB = (120, 31.4, 16.6, 1.9)
ZERO_STAGE_NAMES = ("baseline", "p_os", "p_os_g", "p_os_g_p")


@CHAPTER.figure(
    "zero_stages",
    "ZeRO 三级：照账单的大小顺序去切",
    source="Rajbhandari 等，ZeRO，arXiv 1910.02054：§3 与 Figure 1（四个 GB 数）、§7.2（通信量）",
)
def zero_stages(check: Check, params: float = 7.5e9, gpus: int = 64, cells: tuple = byte_ledger.MIXED_ADAMW):
    order = zero.cut_order(cells)
    check.equal("cut_order", [g.label for g in order], ["优化器状态", "梯度", "参数"])
    stages = zero.stages(cells)
    per_gpu = [zero.per_gpu_bytes(cells, params, gpus, sharded) / 1e9 for sharded in stages]
    k = byte_ledger.optimizer_bytes(cells)
    closed = (
        (2 + 2 + k) * params,
        (2 + 2) * params + k * params / gpus,
        2 * params + (2 + k) * params / gpus,
        (2 + 2 + k) * params / gpus,
    )
    hows = (
        f"(2 + 2 + {k}) × Ψ",
        f"(2 + 2) × Ψ + {k} × Ψ ÷ {gpus}",
        f"2 × Ψ + (2 + {k}) × Ψ ÷ {gpus}",
        f"(2 + 2 + {k}) × Ψ ÷ {gpus}",
    )
    facts = {}
    for name, computed, formula, paper, how in zip(ZERO_STAGE_NAMES, per_gpu, closed, ZERO_PAPER_GB, hows):
        check.close(f"{name} (closed form)", computed, formula / 1e9)
        check.close(name, computed, paper, abs=0.05)
        facts[name] = number(computed, 0 if paper == int(paper) else 1, "GB", "吉字节").via(
            f"{how} 字节，Ψ = {_e9(params)}，÷ 10⁹"
        )
        check.equal(f"{name} (as printed)", facts[name].text, f"{paper:g} GB")
    comm = [zero.communication(sharded) for sharded in stages]
    check.equal("communication", comm, [2, 2, 2, 3])
    for name, volume in zip(ZERO_STAGE_NAMES, comm):
        facts[f"comm_{name}"] = Fact(volume, f"{volume}Ψ", f"{numbers.zh_quantity(str(volume))}倍参数量").via(
            f"ZeRO §7.2：梯度 reduce-scatter 1Ψ + 权重 all-gather {volume - 1}Ψ"
        )
    groups = [
        {
            "label": g.label,
            "keys": list(g.keys),
            "bytes": g.nbytes(cells),
            "text": f"{g.nbytes(cells)} B",
            "phases": list(g.phases),
        }
        for g in order
    ]
    return facts | {
        "params": myriad(params, "亿").via("输入：ZeRO Figure 1 的模型大小 Ψ"),
        "gpus": number(gpus).via("输入：ZeRO Figure 1 的卡数"),
        "levels": _count(len(order)).via("按大小切的组数：优化器状态、梯度、参数"),
        "row": row_fact(cells),
        "groups": data(groups),
        "optimizer_bytes": _sum_bytes(
            _optimizer_cells(cells), "优化器状态 K", lambda n: number(n, unit="B", unit_spoken="字节")
        ),
        "gb": Fact(10**9, "10⁹", "十的九次方", how="输入：论文的 GB 是十进制"),
    }


# peak_memory_timeline: the page's resident block and break-even, on its own inputs.
STEP_PAGE = {
    "resident_tib": 9.76,
    "sequences": 93.7,
    "tokens": 12.3e6,
    "weights_tib": 1.22,
    "optimizer_tib": 7.32,
    "activations_tib": 4.15,
    "recompute_gib": 106.75,
}


@CHAPTER.figure(
    "peak_memory_timeline",
    "四项叠上时间轴：谁在什么时候最大",
    source="每参数 16 B：ZeRO，arXiv 1910.02054；V3 配置：arXiv 2412.19437；激活为本课按算子自推",
)
def peak_memory_timeline(
    check: Check,
    params: float = v3.TOTAL_PARAMS,
    cells: tuple = byte_ledger.MIXED_ADAMW,
    recompute_gib: float = v3.full_recompute_gib(),
):
    timeline = step_memory.step(cells)
    check.close("params (from the config)", v3.total_weights(), params, rel=1e-3)
    tib = 1 / v3.TIB

    def per_param(key: str) -> int:
        return sum(c.nbytes for c in cells if c.key == key)

    resident = params * byte_ledger.total(cells) * tib
    weights = params * sum(c.nbytes for c in cells if c.key == "weight") * tib
    grads = params * sum(c.nbytes for c in cells if c.key == "grad") * tib
    optimizer = params * byte_ledger.optimizer_bytes(cells) * tib
    check.close("resident_tib", resident, STEP_PAGE["resident_tib"], abs=0.005)
    check.close("weights_tib", weights, STEP_PAGE["weights_tib"], abs=0.005)
    check.close("grads_tib", grads, STEP_PAGE["weights_tib"], abs=0.005)
    check.close("optimizer_tib", optimizer, STEP_PAGE["optimizer_tib"], abs=0.005)
    check.close("resident_tib (weights + grads + optimizer)", weights + grads + optimizer, resident)
    check.close("activations_tib", max(timeline.activations), STEP_PAGE["activations_tib"], abs=0.005)
    check.close("recompute_gib", recompute_gib, STEP_PAGE["recompute_gib"])
    sequences = resident * 1024 / recompute_gib
    check.close("sequences", sequences, STEP_PAGE["sequences"], abs=0.05)
    tokens = sequences * v3.SEQ
    check.close("tokens", tokens, STEP_PAGE["tokens"], rel=0.005)
    peaks = {name: timeline.peak_time(getattr(timeline, name)) for name in ("activations", "grads")}
    check.that(
        "peaks_differ",
        peaks["activations"] == timeline.forward_end and peaks["grads"] == timeline.backward_end,
        "activations peak at the end of forward, gradients at the end of backward",
        peaks,
    )
    # At the moment the sum peaks, which item is largest: that is the one to act on (as activation_mountain shows).
    at_peak = timeline.t.index(timeline.peak_time(timeline.total()))
    items = ("weights", "grads", "optimizer", "activations")
    largest = max(items, key=lambda name: getattr(timeline, name)[at_peak])
    check.equal("largest_at_peak", largest, "optimizer")
    ticks = list(range(0, 13, 4))
    check.that(
        "axis", max(timeline.total()) <= ticks[-1] + 2, "the sum fits under the top tick + 2 TiB", max(timeline.total())
    )
    return {
        "axis": data({"ticks": ticks, "labels": [numbers.signed(t) for t in ticks], "top": ticks[-1] + 2}),
        "largest_at_peak": data(largest),
        "timeline": data(
            {
                "t": timeline.t,
                "weights": timeline.weights,
                "grads": timeline.grads,
                "optimizer": timeline.optimizer,
                "activations": timeline.activations,
                "forward_end": timeline.forward_end,
                "backward_end": timeline.backward_end,
                "update_end": timeline.update_end,
            }
        ),
        "weights_tib": number(weights, 2, "TiB", "太字节").via(f"{_e9(params)} × {per_param('weight')} B ÷ 2⁴⁰"),
        "grads_tib": number(grads, 2, "TiB", "太字节").via(f"{_e9(params)} × {per_param('grad')} B ÷ 2⁴⁰"),
        "optimizer_tib": number(optimizer, 2, "TiB", "太字节").via(
            f"{_e9(params)} × {byte_ledger.optimizer_bytes(cells)} B ÷ 2⁴⁰（m、v、主权重）"
        ),
        "activations_tib": number(max(timeline.activations), 2, "TiB", "太字节").via(
            "时间线上激活的最高点（前向末尾），按算子自推"
        ),
        "params": Fact(params, "671e9", numbers.zh_int(int(params)), how="输入：V3 总参数（与按配置逐项数的对拍）"),
        "bytes": row_fact(cells),
        "tib": Fact(v3.TIB, "1024⁴", "一千零二十四的四次方", how="1 TiB = 2⁴⁰ B"),
        "kib": Fact(1024, "1024", "一千零二十四", how="1 TiB = 1024 GiB"),
        "resident_tib": number(resident, 2, "TiB", "太字节").via(f"{_e9(params)} × {byte_ledger.total(cells)} B ÷ 2⁴⁰"),
        "recompute_gib": number(recompute_gib, 2, "GiB", "吉字节").via(
            f"每层只留入口：{v3.LAYERS} 层 × {v3.HIDDEN:,} × {v3.SEQ:,} × 2 B ÷ 2³⁰（本课自推）"
        ),
        "sequences": number(sequences, 1, "条", "条").via(
            f"常驻 {resident:.2f} TiB × 1024 ÷ 每条 {recompute_gib:.2f} GiB"
        ),
        "sequences_round": approx(number(round(sequences), unit="条")).via(f"{sequences:.1f} 取整"),
        "seq": Fact(v3.SEQ, f"{v3.SEQ // 1024}K", f"{numbers.zh_int(v3.SEQ // 1024)}K", how="输入：V3 的上下文长度"),
        "tokens": approx(myriad(tokens, significant=3)).via(f"{sequences:.2f} 条 × {v3.SEQ:,} token"),
        "items": _count(len(items)).via("画的项数：权重、梯度、优化器状态、激活"),
    }


# six_nd_underestimate: 6ND against attention's weight-free matmuls, one 128K sequence of V3.
SIX_ND_PAGE = {"six_nd_pflop": 29.1, "attention_share": 0.821, "corrected_pflop": 160, "gpt3_share": 0.0137}


@CHAPTER.figure(
    "six_nd_underestimate",
    "长序列上，6ND 严重低估",
    source="注意力占比为本课按算子自推（causal 折半口径）；V3 配置：arXiv 2412.19437；GPT-3：arXiv 2005.14165",
)
def six_nd_underestimate(
    check: Check, active: float = v3.ACTIVE_PARAMS, seq: int = v3.SEQ, gpt3: gpt.Gpt = gpt.GPT3_175B
):
    pflop = 1e-15
    forward = 2  # one multiply and one add per weight per token
    backward = 2 * forward  # two matmuls back, input gradient and weight gradient (layer_two_matmuls)
    check.equal("six", forward + backward, 6)
    six_nd = (forward + backward) * active * seq * pflop
    check.close("six_nd", six_nd, SIX_ND_PAGE["six_nd_pflop"], abs=0.05)
    share = v3.attention_core_flops() / v3.moe_layer_forward_flops()
    check.close("attention_share", share, SIX_ND_PAGE["attention_share"], abs=0.0005)
    # The page's division, on the two numbers as shown (29.1 ÷ 0.179), so a viewer can redo it.
    corrected = round(six_nd, 1) / round(1 - share, 3)
    check.close("corrected (unrounded inputs)", corrected, six_nd / (1 - share), rel=1e-3)
    per_operator = v3.step_flops_per_operator() * pflop
    check.close("corrected (≈ 160)", corrected, SIX_ND_PAGE["corrected_pflop"], rel=0.05)
    check.close("per_operator (second route)", per_operator, corrected, rel=0.05)
    multiplier = 1 / (1 - share)
    check.that("multiplier", 5 <= multiplier <= 6, "五到六倍", multiplier)
    gpt3_share = gpt3.attention_share(gpt3.context)
    check.close("gpt3_share", gpt3_share, SIX_ND_PAGE["gpt3_share"], abs=0.00005)
    return {
        "active": myriad(active, "亿").via("输入：DeepSeek-V3 每个 token 激活的参数量"),
        "tokens": number(seq).via("输入：一条 128K 序列的 token 数"),
        "six": number(forward + backward).via(f"前向 {forward} + 反向 {backward}"),
        "forward_flops": number(forward).via("每个权重、每个 token：一次乘、一次加"),
        "backward_flops": number(backward).via(f"反向两笔矩阵乘（输入梯度、权重梯度），各 {forward}"),
        "forward_count": _count(forward).via("每个权重、每个 token：一次乘、一次加"),
        "backward_count": _count(backward).via(f"反向两笔矩阵乘（输入梯度、权重梯度），各 {forward}"),
        "six_nd": number(six_nd, 1, "PFLOP", " PFLOP").via(f"{forward + backward} × {_e9(active)} × {seq:,} ÷ 10¹⁵"),
        "attention_share": percent(share, 1).via("一层 MoE 前向里 QKᵀ 与 AV（causal 折半）的 FLOP ÷ 全层 FLOP"),
        "weight_share": percent(1 - share, 1).via(f"1 − {share:.3f}"),
        "multiplier": times(multiplier, 1).via(f"1 ÷ (1 − {share:.3f})"),
        "corrected": approx(number(corrected, 1, "PFLOP", " PFLOP")).via(
            f"照屏上两个数相除：{round(six_nd, 1)} ÷ {round(1 - share, 3)}"
        ),
        "per_operator": number(per_operator, 1, "PFLOP", " PFLOP").via(
            f"按算子逐项加一条序列的前向，× {(forward + backward) // forward}（前向 + 反向）"
        ),
        "gap": percent(abs(corrected - per_operator) / per_operator, 0).via(
            f"|{corrected:.1f} − {per_operator:.1f}| ÷ {per_operator:.1f}"
        ),
        "gpt3_seq": number(gpt3.context).via("输入：GPT-3 的上下文长度"),
        "gpt3_share": percent(gpt3_share, 2).via(
            f"2S²d ÷ (2S²d + 2S·{gpt.PER_LAYER}d²)，S = {gpt3.context:,}，d = {gpt3.width:,}"
        ),
        "seq": Fact(seq, f"{seq // 1024}K", f"{numbers.zh_int(seq // 1024)}K", how="输入：V3 的上下文长度"),
    }


# worked_125m: GPT-3 Small (Table 2.1, first row) on one GPU, batch 8 × 1,024 tokens.
WORKED_PAGE = {
    "weights_gib": 0.23,
    "optimizer_gib": 1.40,
    "resident_gib": 1.86,
    "kept_per_layer": 11_520,
    "layer_kib": 22.5,
    "token_kib": 270,
    "activations_gib": 2.11,
    "recompute_gib": 0.32,
    "saving": 6.7,
    "total_keep": 3.97,
    "total_recompute": 2.18,
    "params": 1.25e8,
}


@CHAPTER.figure(
    "worked_125m",
    "同一张账，缩到你能自己跑的小模型",
    source="模型形状取自 GPT-3 论文表 2.1 第一行（arXiv 2005.14165）；各项按本页口径自算",
)
def worked_125m(
    check: Check,
    model: gpt.Gpt = gpt.GPT3_SMALL,
    batch: int = 8,
    seq: int = 1024,
    cells: tuple = byte_ledger.MIXED_ADAMW,
):
    params = model.params()
    check.close("params", params, WORKED_PAGE["params"], rel=0.002)
    bytes_of = {key: sum(c.nbytes for c in cells if c.key == key) for key in ("weight", "grad")}
    weights = params * bytes_of["weight"] / gpt.GIB
    grads = params * bytes_of["grad"] / gpt.GIB
    optimizer = params * byte_ledger.optimizer_bytes(cells) / gpt.GIB
    resident = params * byte_ledger.total(cells) / gpt.GIB
    check.close("weights_gib", weights, WORKED_PAGE["weights_gib"], abs=0.005)
    check.close("optimizer_gib", optimizer, WORKED_PAGE["optimizer_gib"], abs=0.005)
    check.close("resident_gib", resident, WORKED_PAGE["resident_gib"], abs=0.005)
    check.close("resident_gib (sum of rows)", weights + grads + optimizer, resident)
    kept = model.kept_per_layer()
    check.equal("kept_per_layer", kept, WORKED_PAGE["kept_per_layer"])
    layer_kib = kept * gpt.BF16 / gpt.KIB
    check.close("layer_kib", layer_kib, WORKED_PAGE["layer_kib"])
    check.close("token_kib", model.layers * layer_kib, WORKED_PAGE["token_kib"])
    tokens = batch * seq
    activations = model.keep_all_bytes(tokens) / gpt.GIB
    check.close("activations_gib", activations, WORKED_PAGE["activations_gib"], abs=0.005)
    check.that(
        "activations_exceed_resident",
        activations > resident,
        "activations larger than weights + gradients + optimizer state",
        (activations, resident),
    )
    recompute = model.full_recompute_bytes(tokens) / gpt.GIB
    check.close("recompute_gib", recompute, WORKED_PAGE["recompute_gib"], abs=0.005)
    check.close("saving", activations / recompute, WORKED_PAGE["saving"], abs=0.05)
    check.close("total_keep", resident + activations, WORKED_PAGE["total_keep"], abs=0.005)
    check.close("total_recompute", resident + recompute, WORKED_PAGE["total_recompute"], abs=0.005)
    # Step compute in forward passes: forward 1 + backward 2 (layer_two_matmuls); full recompute adds a forward.
    passes_keep = 3
    passes_recompute = passes_keep + 1
    gib = {"unit": "GiB", "unit_spoken": "吉字节"}
    L, d, n = model.layers, model.width, f"{params:,}"
    widths = model.kept_widths()
    facts = {
        f"kept_{i}": number(width).via(f"{label}：{width // d} × d，d = {d}") for i, (label, width) in enumerate(widths)
    }
    return facts | {
        "layers": number(model.layers).via("输入：GPT-3 表 2.1 Small 的层数 L"),
        "width": number(model.width).via("输入：GPT-3 表 2.1 Small 的宽度 d"),
        "vocab": number(model.vocab).via("输入：GPT-3 的词表大小"),
        "per_layer": number(gpt.PER_LAYER).via("每层权重按 d² 计：注意力 q、k、v、o，加 MLP 的升维与降维"),
        "context": number(model.context).via("输入：GPT-3 的上下文长度"),
        "params_exact": number(params).via(
            f"{gpt.PER_LAYER}Ld² + (词表 + 上下文)·d = "
            f"{gpt.PER_LAYER} × {L} × {d}² + ({model.vocab:,} + {model.context:,}) × {d}"
        ),
        "params": myriad(params, "亿", 2).via(f"{n} 折成亿"),
        "batch": number(batch).via("输入：本页设定的 batch"),
        "seq": number(seq).via("输入：本页设定的序列长度"),
        "tokens": number(tokens).via(f"{batch} × {seq:,}"),
        "kept_labels": data([label for label, _w in widths]),
        "kept_kinds": _count(len(widths)).via("一层为反向留下的张量种数"),
        "row": row_fact(cells),
        "optimizer_bytes": _sum_bytes(
            _optimizer_cells(cells), "优化器状态", lambda b: number(b, unit="B", unit_spoken="字节")
        ),
        "weights_gib": number(weights, 2, **gib).via(f"{n} × {bytes_of['weight']} B ÷ 2³⁰"),
        "grads_gib": number(grads, 2, **gib).via(f"{n} × {bytes_of['grad']} B ÷ 2³⁰"),
        "optimizer_gib": number(optimizer, 2, **gib).via(f"{n} × {byte_ledger.optimizer_bytes(cells)} B ÷ 2³⁰"),
        "resident_gib": number(resident, 2, **gib).via(f"{n} × {byte_ledger.total(cells)} B ÷ 2³⁰"),
        "resident_ratio": times(resident / weights).via(f"{byte_ledger.total(cells)} B ÷ {bytes_of['weight']} B"),
        "kept_per_layer": number(kept).via(" + ".join(f"{w:,}" for _label, w in widths)),
        "layer_kib": number(layer_kib, 1, "KiB", "K字节").via(f"{kept:,} × {gpt.BF16} B（bf16）÷ 1024"),
        "token_kib": number(model.layers * layer_kib, 0, "KiB", "K字节").via(f"{L} 层 × {layer_kib:g} KiB"),
        "activations_gib": number(activations, 2, **gib).via(f"{L} × {kept:,} × {gpt.BF16} B × {tokens:,} ÷ 2³⁰"),
        "recompute_gib": number(recompute, 2, **gib).via(
            f"每层入口 + 重算那层：({L} × {d} + {kept:,}) × {gpt.BF16} B × {tokens:,} ÷ 2³⁰"
        ),
        "saving": times(activations / recompute, 1).via(f"{activations:.2f} ÷ {recompute:.2f} GiB"),
        "total_keep": number(resident + activations, 2, **gib).via(f"常驻 {resident:.2f} + 激活 {activations:.2f} GiB"),
        "total_recompute": number(resident + recompute, 2, **gib).via(
            f"常驻 {resident:.2f} + 激活 {recompute:.2f} GiB"
        ),
        "passes_keep": times(passes_keep).via("以前向为 1：前向 1 + 反向两笔矩阵乘 2"),
        "passes_recompute": times(passes_recompute).via(f"{passes_keep} + 重算时再走一遍前向 1"),
        "extra_compute": percent((passes_recompute - passes_keep) / passes_keep, 0, plus=True).via(
            f"({passes_recompute} − {passes_keep}) ÷ {passes_keep}"
        ),
    }
