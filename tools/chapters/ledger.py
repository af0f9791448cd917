"""Chapter 3b–5, ledger: the 16 bytes per parameter and what grows out of them."""

from __future__ import annotations

import numpy as np

from tools import bf16, ledger, numbers, v3
from tools.catalogue import Chapter
from tools.facts import Check, Fact, data, number, power, year

CHAPTER = Chapter("ledger", "每参数 16 字节：训练一步的显存账")

# -- §3.1–§3.4 and the checkpoint: the ledger row and its variants ----------------


def _bytes(n: int) -> Fact:
    """A byte count: 2 B / 两字节."""
    return Fact(n, f"{n} B", ("两" if n == 2 else numbers.zh_int(n)) + "字节")


def _keys(cells: tuple[ledger.Cell, ...], precision: str) -> set[str]:
    return {c.key for c in cells if c.precision == precision and not c.factored}


# ledger_16_bytes: the optimizers in history and the state cells each keeps
# (the page's band Ⓐ, L235–238). Years are those of the first paper or
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
    source="16 B 口径：ZeRO，arXiv 1910.02054 §3；Adam arXiv 1412.6980；AdamW arXiv 1711.05101\n"
           "Muon：Keller Jordan 2024；动量：Polyak 1964；AdaGrad：Duchi 等 JMLR 2011；RMSProp：Hinton 2012 Coursera 第 6 讲",
)
def ledger_16_bytes(check: Check, cells: tuple[ledger.Cell, ...] = ledger.MIXED_ADAMW, band: tuple = BAND):
    check.equal("total", ledger.total(cells), 16)
    check.equal("optimizer_side", ledger.optimizer_bytes(cells), 12)
    check.equal("weight", next(c.nbytes for c in cells if c.key == "weight"), 2)
    # ZeRO's own route: (2 + 2 + K)Ψ with K = 12 gives Figure 1's 120 GB baseline for 7.5B.
    check.close("total (ZeRO Figure 1 baseline, GB)", ledger.total(cells) * ZERO_FIGURE1_PARAMS / 1e9,
                ZERO_FIGURE1_BASELINE_GB)
    check.equal("fp32 cells", _keys(cells, "fp32"), set(ledger.OPTIMIZER_SIDE))
    check.equal("bf16 cells", _keys(cells, "bf16"), {"weight", "grad"})
    years = [entry["year"] for entry in band if entry["year"] is not None]
    check.that("band in order of history", years == sorted(years), "years increase along the band", years)
    by_key = {c.key: c for c in cells}
    rows = []
    for entry in band:
        check.that(f"state of {entry['name']}", set(entry["state"]) <= {"m", "v"},
                   "optimizer state is made of m and v cells", entry["state"])
        state = tuple(by_key[key] for key in entry["state"])
        rows.append({"name": entry["name"], "note": entry["note"], "state": ledger.as_fact(state).value,
                     "year": None if entry["year"] is None else str(entry["year"])})
    states = {entry["id"]: entry["state"] for entry in band}
    check.equal("Adam and AdamW keep the same state", states["adam"], states["adamw"])
    facts = {
        "ledger": ledger.as_fact(cells),
        "sum": ledger.sum_fact(cells),
        "weight": _bytes(by_key["weight"].nbytes),
        "grad": _bytes(by_key["grad"].nbytes),
        "fp32_cell": _bytes(by_key["m"].nbytes),
        "optimizer": _bytes(ledger.optimizer_bytes(cells)),
        "band": data(rows),
    }
    facts |= {f"year_{entry['id']}": year(entry["year"]) for entry in band if entry["year"] is not None}
    return facts


@CHAPTER.figure(
    "mixed_precision_same_16",
    "混合精度省一半显存？常驻的一个字节都没省",
    source="ZeRO，arXiv 1910.02054 §3（2Ψ＋2Ψ＋12Ψ；原文用 fp16，字节数相同）；累加器那一行按同一口径推算",
)
def mixed_precision_same_16(check: Check, pure: tuple[ledger.Cell, ...] = ledger.PURE_FP32,
                            mixed: tuple[ledger.Cell, ...] = ledger.MIXED_ADAMW):
    accumulate = ledger.store_as(mixed, ("grad",), "fp32")
    check.equal("pure", ledger.total(pure), 16)
    check.equal("mixed", ledger.total(mixed), 16)
    check.equal("accumulate", ledger.total(accumulate), 18)
    before = {c.key: c.nbytes for c in pure}
    after = {c.key: c.nbytes for c in mixed}
    saved = {key: before[key] - after[key] for key in before}
    check.equal("weight_saved", saved["weight"], 2)
    check.equal("grad_saved", saved["grad"], 2)
    check.equal("master (what mixed precision adds)", set(after) - set(before), {"master"})
    # Column by column: the 2 + 2 saved is exactly the new master copy.
    check.equal("saved = master", sum(saved.values()), after["master"])
    return {
        "pure": ledger.as_fact(pure), "pure_sum": ledger.sum_fact(pure),
        "mixed": ledger.as_fact(mixed), "mixed_sum": ledger.sum_fact(mixed),
        "accumulate": ledger.as_fact(accumulate), "accumulate_sum": ledger.sum_fact(accumulate),
        "weight_saved": _bytes(saved["weight"]), "grad_saved": _bytes(saved["grad"]),
        "master": _bytes(after["master"]),
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
def why_fp32_bf16(check: Check, rounding=bf16.round_bf16, small_step: float = 0.003,
                  repeat_step: float = 1e-3, repeats: int = 1000, samples: int = 2000):
    # Ⓐ bit layouts: fp32 and fp16 from numpy, bf16 from the rounding itself.
    mantissa = bf16.mantissa_bits(rounding)
    layouts = [
        {"name": "fp32", "sign": 1, "exponent": int(np.finfo(np.float32).nexp), "mantissa": int(np.finfo(np.float32).nmant)},
        {"name": "bf16", "sign": 1, "exponent": 16 - 1 - mantissa, "mantissa": mantissa},
        {"name": "fp16", "sign": 1, "exponent": int(np.finfo(np.float16).nexp), "mantissa": int(np.finfo(np.float16).nmant)},
    ]
    for layout, bits, page in zip(layouts, (32, 16, 16), ((1, 8, 23), (1, 8, 7), (1, 5, 10))):
        check.equal(f"{layout['name']} layout", (layout["sign"], layout["exponent"], layout["mantissa"]), page)
        check.equal(f"{layout['name']} bits", layout["sign"] + layout["exponent"] + layout["mantissa"], bits)
    # D7: three exponent bits fewer cost fp16 112 binades at the small end, not 3.
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
    check.that("fp32_sum is not exact", fp32_path[-1] != 1.0 + repeats * repeat_step,
               "float32 rounding leaves a trace", fp32_path[-1])
    # The rounding against two other routes, on random float32 values and exact ties.
    values = bf16.random_float32(samples)
    struct_route = np.array([rounding(float(x)) for x in values], dtype=np.float32)
    numpy_route = bf16.round_bf16_numpy(values)
    nearest_route = np.array([bf16.nearest_bf16(float(x)) for x in values], dtype=np.float32)
    check.equal("RNE cross-check (numpy, mismatches)", int(np.sum(struct_route != numpy_route)), 0)
    check.equal("RNE cross-check (nearest neighbour, mismatches)", int(np.sum(struct_route != nearest_route)), 0)
    # Ⓒ the line the criterion draws: what never forgets is fp32, the rest bf16.
    check.equal("fp32 cells", _keys(ledger.MIXED_ADAMW, "fp32"), {"m", "v", "master"})
    check.equal("bf16 cells", _keys(ledger.MIXED_ADAMW, "bf16"), {"weight", "grad"})
    return {
        "layouts": data(layouts),
        **{f"{f['name']}_{part[:3]}": number(f[part]) for f in layouts for part in ("exponent", "mantissa")},
        "fp16_min_normal": power(2, -14), "bf16_min_normal": power(2, -126),
        "binades_lost": number(lost),
        "cell": power(2, round(np.log2(cell))), "cell_decimal": number(cell, 7),
        "half_cell": power(2, round(np.log2(cell / 2))),
        "one": number(1.0, 1),
        "small_step": number(small_step, 3), "small_result": number(small, 1),
        "full_result": number(full, 7),
        "repeat_step": number(repeat_step, 3), "repeats": number(repeats),
        "bf16_sum": number(path[-1], 1), "fp32_sum": number(fp32_path[-1], 6),
        "exact_sum": number(1.0 + repeats * repeat_step, 1),
        "fp32_path": data(fp32_path),
        "ledger": ledger.as_fact(ledger.MIXED_ADAMW),
        "v3_moments": ledger.as_fact(ledger.store_as(ledger.MIXED_ADAMW, ("m", "v"), "bf16")),
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
def optimizer_bytes_table(check: Check, base: tuple[ledger.Cell, ...] = ledger.MIXED_ADAMW,
                          matrix: tuple[int, int] = ADAFACTOR_MATRIX):
    rows = {
        "AdamW": base,
        "Muon": ledger.drop(base, "v"),  # orthogonalised momentum: no second moment
        "Lion": ledger.drop(base, "v"),  # one momentum, the update is its sign
        "Adafactor": ledger.factor(ledger.drop(base, "m"), "v"),  # no momentum, v as a row + a column
        "8-bit Adam": ledger.store_as(base, ("m", "v"), "int8"),
    }
    for name, cells in rows.items():
        check.equal(f"{name} bytes", ledger.total(cells), PAGE_BYTES[name])
    # Which cell each variant changed, against the page's 「动了哪一格」.
    base_cells = {c.key: c for c in base}
    changed = {name: {k for k in base_cells if base_cells[k] not in cells} for name, cells in rows.items()}
    for name, page in (("Muon", {"v"}), ("Lion", {"v"}), ("Adafactor", {"m", "v"}), ("8-bit Adam", {"m", "v"})):
        check.equal(f"{name} changes", changed[name], page)
    per_param = ledger.factored_bytes(*matrix)
    check.that("adafactor_v (≈ 0)", per_param < 0.01, "a row + a column costs < 0.01 B per parameter", per_param)
    # Which ideas stack: 8-bit stores what is left of a dropped row; dropping and factoring v exclude each other.
    lion_8bit = ledger.store_as(rows["Lion"], ("m",), "int8")
    check.equal("lion_8bit bytes", ledger.total(lion_8bit), 9)
    try:
        ledger.factor(rows["Muon"], "v")
        exclusive = False
    except ledger.LedgerError:
        exclusive = True
    check.that("drop and factor exclude each other", exclusive, "factoring a dropped v is impossible", exclusive)
    facts = {}
    for name, cells in rows.items():
        slug = name.lower().replace("-", "").replace(" ", "_")
        facts[slug] = ledger.as_fact(cells)
        facts[f"{slug}_sum"] = ledger.sum_fact(cells)
    facts["lion_8bit"] = ledger.as_fact(lion_8bit)
    facts["lion_8bit_sum"] = ledger.sum_fact(lion_8bit)
    facts["adafactor_v"] = number(per_param, 4, "B", "字节")
    facts["matrix"] = Fact(matrix, f"{matrix[0]:,}×{matrix[1]:,}",
                           f"{numbers.zh_int(matrix[0])}乘{numbers.zh_int(matrix[1])}")
    return facts


@CHAPTER.figure(
    "checkpoint_size",
    "检查点里必须存哪几格",
    source="671B × 12 B 与 × 8 B 为本课推算（TiB ＝ 2⁴⁰ B）；bf16 一二阶矩：DeepSeek-V3，arXiv 2412.19437 §3.3.3",
)
def checkpoint_size(check: Check, cells: tuple[ledger.Cell, ...] = ledger.MIXED_ADAMW,
                    params: float = v3.TOTAL_PARAMS):
    saved = ledger.must_save(cells)
    check.equal("saved cells", {c.key for c in saved}, {"m", "v", "master"})
    check.equal("classic_bytes", ledger.total(saved), 12)
    check.equal("classic_bytes (pure fp32 saves the same)", ledger.total(ledger.must_save(ledger.PURE_FP32)), 12)
    v3_cells = ledger.store_as(cells, ("m", "v"), "bf16")
    v3_saved = ledger.must_save(v3_cells)
    check.equal("v3_bytes", ledger.total(v3_saved), 8)
    classic_tib = ledger.total(saved) * params / v3.TIB
    v3_tib = ledger.total(v3_saved) * params / v3.TIB
    check.close("classic_tib", classic_tib, 7.3, abs=0.05)
    check.close("classic_tib (cell by cell)", sum(c.nbytes * params / v3.TIB for c in saved), classic_tib)
    check.close("v3_tib", v3_tib, 4.9, abs=0.05)
    smaller = 1 - v3_tib / classic_tib
    check.close("smaller (one third)", smaller, 1 / 3)
    return {
        "ledger": ledger.as_fact(cells),
        "saved": ledger.as_fact(saved), "classic_sum": ledger.sum_fact(saved),
        "v3_saved": ledger.as_fact(v3_saved), "v3_sum": ledger.sum_fact(v3_saved),
        "classic_bytes": _bytes(ledger.total(saved)), "v3_bytes": _bytes(ledger.total(v3_saved)),
        "params": Fact(params, "671B", numbers.zh_large(params)),
        "classic_tib": number(classic_tib, 1, "TiB", " TiB"),
        "v3_tib": number(v3_tib, 1, "TiB", " TiB"),
        "smaller": Fact(smaller, "⅓", "三分之一"),
    }


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------
