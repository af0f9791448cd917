"""Chapter 2 in play order (专题四), recompute: trade compute for activation memory, and what each byte
costs to make again.

Every number here comes from tools.models.v3 (the same kept tensors the
activation mountain counts) and tools.models.recompute (what making one
again costs). Each TFLOP figure is computed twice, by the matmul shapes and
by cost per byte × bytes, and the two must agree. Where the page is wrong
(the MoE layer's denominator, the gate row's label), the figure shows the
computed value and says why; docs/figures.md lists the checks that apply it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tools.course import numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, approx, data, number, percent, times, year
from tools.models import gpt, v3
from tools.models import recompute as rc

CHAPTER = Chapter(
    "recompute",
    "重算：拿算力换显存",
    summary=(
        "the asymmetric exchange and its three tiers, √L checkpointing, one V3 MoE layer ranked "
        "by TFLOP per GiB, linear layers vs attention per byte saved, the same criterion at 2K "
        "and 128K"
    ),
)


def _gib(value: float, digits: int = 2) -> Fact:
    return number(value, digits, "GiB", "吉字节")


def _tib(value_gib: float) -> Fact:
    return number(value_gib * v3.GIB / v3.TIB, 2, "TiB", "太字节")


def _tflop(value: float, digits: int = 2) -> Fact:
    return number(value, digits, "TFLOP", "万亿次运算")


def _count(n: int) -> Fact:
    """A count before a measure word: 2 is said 两 (两遍), not 二."""
    fact = number(n)
    return Fact(n, fact.text, "两") if n == 2 else fact


KILO = 1024  # the K of 128K


def _seq(tokens: int) -> Fact:
    """A sequence length the page's way: 131,072 -> '128K' / 一百二十八K, 2,048 -> '2K' / 两K."""
    return Fact(tokens, f"{tokens // KILO}K", f"{_count(tokens // KILO).spoken}K").via(
        f"{numbers.signed(tokens)} ÷ {numbers.signed(KILO)}"
    )


def _sum(values: list[float], digits: int = 2) -> str:
    """A sum as a how writes it: '15.75 + 3.50 + 4.50'."""
    return " + ".join(numbers.signed(v, digits) for v in values)


# How the two per-layer numbers are made, shared by recompute_tradeoff and selective_recompute_table.
ENTRY_HOW = f"{numbers.signed(v3.SEQ)} × {numbers.signed(v3.HIDDEN)} × {v3.BF16} B ÷ 2{numbers.superscript(30)}"
MOE_LAYER_HOW = f"注意力 {v3.subtotal(v3.ATTENTION_KEPT):.2f} + MoE {v3.subtotal(v3.MOE_KEPT):.2f} GiB（含入口）"
PAGE_MEMORY_HOW = "输入：页面的数，分母少了每层入口"
PASSES_HOW = f"输入：一步 = 前向 1 遍 + 反向 {rc.STEP_PASSES - 1} 遍（见 layer_two_matmuls）"


def _slope_how(attention: rc.Attention) -> str:
    """Attention's cost per byte over S, the closed form with this model's head sizes."""
    return f"2 × {attention.causal:g} × ({attention.d_qk} + {attention.d_v}) ÷ ({v3.BF16} B × {attention.d_v})"


def _cut(fraction: float) -> Fact:
    """A share of memory removed: '−75.2%' on screen, 百分之七十五点二 in a sentence that says 换掉."""
    shown = percent(fraction, 1)
    return Fact(-fraction, "−" + shown.text, shown.spoken)


def _width(k: int) -> str:
    return numbers.signed(k)


# -- the ranking (selective_recompute_table): one V3 MoE layer at 128K --------------------
# Which of the layer's kept tensors each of the page's rows drops, in the
# order forward makes them (the build-up), with the page's labels; the
# numbers in a label are the config's, formatted here.
NORM_OUTPUTS = (v3.ATTN_NORM_OUT, v3.FFN_NORM_OUT)
TABLE_ROWS = (
    (f"RMSNorm 输出（每层 {len(NORM_OUTPUTS)} 个）", NORM_OUTPUTS),
    (f"Q 展开（输入宽 {_width(v3.Q_UP.k)}）", (v3.Q_UP,)),
    (f"K/V 解压（输入宽 {_width(v3.KV_UP.k)}）", (v3.KV_UP,)),
    ("attention 输出", (v3.ATTN_OUT,)),
    (f"MoE 派发（复制成 {v3.COPIES} 份）", (v3.DISPATCHED,)),
    # The page's 9.14 GiB is gate + up + one 576-wide tensor
    # (KV 降维); its label also names the router and Q 降维, not in the sum.
    (f"gate / up / 路由 / 降维（输入宽 {_width(v3.GATE.k)}）", (v3.GATE, v3.UP, v3.KV_DOWN)),
    (f"SwiGLU 乘积 {v3.COPIES} 份（逐元素）", (v3.SWIGLU_PRODUCT,)),
    (f"专家输出 {v3.COPIES} 份（输入宽 {_width(v3.EXPERT_OUT.k)}）", (v3.EXPERT_OUT,)),
)
# What the label's own words would drop: add the router scores and one Q 降维 copy.
GATE_ROW_AS_LABELLED = (v3.GATE, v3.UP, v3.KV_DOWN, v3.ROUTER, v3.Q_DOWN)
# The page's table, in its (ranked) order: GiB, TFLOP, TFLOP per GiB, verdict.
TABLE_PAGE = (
    ("15.75", "0", "0", "白捡"),
    ("3.50", "0.01", "≈ 0", "白捡"),
    ("4.50", "0.01", "≈ 0", "白捡"),
    ("8.00", "4.40", "0.55", "划算"),
    ("6.00", "9.90", "1.65", "划算"),
    ("15.75", "34.63", "2.20", "划算"),
    ("9.14", "70.35", "7.70", "边际"),
    ("4.00", "703.69", "175.92", "绝不"),
)
RETRACTED_CELL = 39.08  # the page's old hand-filled TFLOP of the gate/up row
CUT = 3.0  # the page's cut, "mine, not computed": anywhere between 2.20 and 7.70
OTHER_CUTS = (2.5, 5.0)  # the page: these pick the same rows
# The verdicts are the page's words; a row is free when it has no matmul (a copy or
# elementwise: near 0 per GiB), worth it under the cut, marginal within ten cuts.
FREE_BELOW, MARGINAL_WITHIN = 0.01, 10
# The page's selective tier; "memory" is the 75.2% over one denominator (recompute_tradeoff), the page's 77%
# is "memory_page".
PAGE_SELECTIVE = {
    "saved": 53.5,
    "paid": 48.9,
    "step": 2571,
    "compute": 0.019,
    "memory": 0.752,
    "memory_page": 0.77,
    "attention_vs_previous": 23,
    "old_compute": 0.06,
}


def _verdict(per_gib: float, cut: float) -> str:
    if per_gib < FREE_BELOW:
        return "白捡"
    if per_gib < cut:
        return "划算"
    return "边际" if per_gib < MARGINAL_WITHIN * cut else "绝不"


def _cell_tflop(value: float) -> str:
    return "0" if value == 0 else numbers.signed(value, 2)


def _cell_ratio(value: float) -> str:
    if value == 0:
        return "0"
    return "≈ 0" if value < FREE_BELOW else numbers.signed(value, 2)


def _candidates(attention: rc.Attention) -> tuple[rc.Candidate, ...]:
    return tuple(rc.Candidate(label, parts, v3.SEQ, attention) for label, parts in TABLE_ROWS)


@dataclass(frozen=True)
class Tier:
    """The ranking and the rows under the cut: what they save, what they cost, over what."""

    rows: tuple[rc.Candidate, ...]  # forward order
    order: list[rc.Candidate]  # ranked
    selected: list[rc.Candidate]
    forward: float  # one MoE layer's forward, TFLOP

    @property
    def saved(self) -> float:
        return sum(r.gib for r in self.selected)

    @property
    def paid(self) -> float:
        return sum(r.tflop for r in self.selected)

    @property
    def step(self) -> float:
        return rc.STEP_PASSES * self.forward

    @property
    def compute(self) -> float:
        """Extra compute over one step (3 passes): the denominator of both tiers' compute column."""
        return self.paid / self.step

    @property
    def memory(self) -> float:
        """Memory removed over the whole MoE layer (71.14 GiB, its entry included), the one denominator."""
        return self.saved / v3.moe_layer_gib()


def _selective(check: Check, attention: rc.Attention, cut: float) -> Tier:
    """The ranking and the selective tier, checked: both routes to every TFLOP, the rows
    drawn from the layer's own tensors, the cut's rows, and the step they are divided by."""
    rows = _candidates(attention)
    for row in rows:
        check.close(
            f"'{row.label}' TFLOP (shapes = cost per byte × bytes)", row.tflop, row.tflop_closed_form, rel=1e-12
        )
    layer = v3.moe_layer_tensors()
    dropped = [t for row in rows for t in row.parts]
    check.that(
        "rows are the layer's own tensors, each once",
        len(set(dropped)) == len(dropped) and set(dropped) <= set(layer),
        "every row's tensors kept by the MoE layer, none twice",
        [t.name for t in dropped],
    )
    order = rc.ranked(rows)
    selected = [row for row in order if row.per_gib < cut]
    for other in OTHER_CUTS:
        check.equal(
            f"cut at {other} picks the same rows",
            [r.label for r in order if r.per_gib < other],
            [r.label for r in selected],
        )
    # The step: 3 passes of the layer's forward, by its weights (v3) and by its tensors' matmuls.
    forward = v3.moe_layer_forward_flops() / 1e12
    by_tensors = (
        sum(rc.recompute_flops(t) for t in layer if t.op == v3.MATMUL)
        + 2.0 * v3.SEQ * math.prod(v3.O_PROJ)
        + rc.V3_ATTENTION.flops(v3.SEQ)
    ) / 1e12
    check.close("layer forward TFLOP (weights = tensors' matmuls + o_proj + attention)", by_tensors, forward, rel=1e-12)
    return Tier(rows, order, selected, forward)


# -- recompute_tradeoff ---------------------------------------------------------------------
TRADEOFF_PAGE = {"keep_all": "4.15", "full_recompute": "106.75", "extra": 1 / 3, "memory_cut": 0.97}


@CHAPTER.figure(
    "recompute_tradeoff",
    "重算：一次不对称的交换",
    source="ZeRO，arXiv 1910.02054 §3.2（33% re-computation overhead）；DeepSeek-V3，arXiv 2412.19437 §3.2.3；"
    f"页面的 {PAGE_SELECTIVE['memory_page']:.0%} 分母少了每层入口，同一分母为 {PAGE_SELECTIVE['memory']:.1%}",
)
def recompute_tradeoff(
    check: Check,
    passes: int = rc.STEP_PASSES,
    replay: int = rc.REPLAY_PASSES,
    attention: rc.Attention = rc.V3_ATTENTION,
    cut: float = CUT,
):
    # Ⓐ the exchange, over the whole model.
    keep_all, full = v3.keep_all_gib(), v3.full_recompute_gib()
    check.close("full_recompute (one entry per layer)", full, v3.LAYERS * v3.layer_entry_gib())
    moe_gib, dense_gib = v3.moe_layer_gib(), v3.dense_layer_gib()
    shown = {
        "keep_all": _tib(keep_all).via(
            f"({v3.MOE_LAYERS} × {moe_gib:.2f} + {v3.DENSE_LAYERS} × {dense_gib:.2f}) GiB ÷ {numbers.signed(KILO)}"
        ),
        "full_recompute": _gib(full).via(f"{v3.LAYERS} 层 × {v3.layer_entry_gib():.2f} GiB（每层只留入口）"),
    }
    for name in shown:
        check.equal(name, shown[name].text.split(" ")[0], TRADEOFF_PAGE[name])
    memory_cut = 1 - full / keep_all
    check.close("memory_cut", memory_cut, TRADEOFF_PAGE["memory_cut"], abs=0.01)
    share = Fraction(replay, passes)  # the replay's share of a step, kept exact for its 1/3 on screen
    extra = float(share)
    check.close("extra compute (ZeRO's 33%)", extra, TRADEOFF_PAGE["extra"])
    asymmetry = keep_all / full
    check.that("asymmetry", 30 < asymmetry < 50, "roughly forty times less memory", asymmetry)

    # Ⓑ three tiers; compute over one step (3 passes), memory over one MoE layer's 71.14 GiB.
    tier = _selective(check, attention, cut)
    layer_gib, entry = v3.moe_layer_gib(), v3.layer_entry_gib()
    full_memory = 1 - entry / layer_gib
    check.close("full_memory (one layer = whole model)", full_memory, memory_cut, abs=0.001)
    check.close("selective_compute", tier.compute, PAGE_SELECTIVE["compute"], abs=0.0005)
    # The page's 77% divides by the layer without its entry; one denominator gives 75.2%.
    check.close("selective_memory", tier.memory, PAGE_SELECTIVE["memory"], abs=0.0005)
    page_denominator = tier.saved / (layer_gib - entry)
    check.close(
        "page's 77% (denominator without the entry)", page_denominator, PAGE_SELECTIVE["memory_page"], abs=0.005
    )
    old = tier.paid / tier.forward  # the page's earlier denominator: one forward
    check.close("old 6% (one forward as the denominator)", old, PAGE_SELECTIVE["old_compute"], abs=0.005)
    value = (tier.memory / tier.compute) / (full_memory / extra)
    check.that("value_ratio", 10 <= value < 100, "selective buys an order of magnitude more per FLOP", value)
    forward_passes = 1
    selective_compute = percent(tier.compute, 1, plus=True).via(
        f"{tier.paid:.1f} ÷ ({passes} × {tier.forward:.1f}) TFLOP"
    )
    selective_memory = _cut(tier.memory).via(f"{tier.saved:.1f} ÷ {layer_gib:.2f} GiB")
    full_compute = percent(extra, 1, plus=True).via(f"补跑 {replay} 遍 ÷ 一步 {passes} 遍")
    full_memory_cut = _cut(full_memory).via(f"1 − {entry:.2f} ÷ {layer_gib:.2f} GiB（只留入口）")
    return shown | {
        "memory_cut": _cut(memory_cut).via(f"1 − {full:.2f} ÷ {numbers.signed(keep_all, 1)} GiB"),
        "asymmetry": approx(times(asymmetry, 0)).via(f"{numbers.signed(keep_all, 1)} ÷ {full:.2f} GiB"),
        "passes_before": _count(passes).via(PASSES_HOW),
        "passes_after": _count(passes + replay).via(f"{passes} + 补跑 {replay}"),
        "replay": _count(replay).via("输入：重算时每层再跑一遍前向"),
        "forward_passes": _count(forward_passes).via("输入：一步里的前向"),
        "backward_passes": _count(passes - forward_passes).via(
            f"一步 {passes} 遍 − 前向 {forward_passes} 遍（反向每层两次矩阵乘）"
        ),
        "third": Fact(
            extra,
            f"{share.numerator}/{share.denominator}",
            f"{numbers.zh_int(share.denominator)}分之{numbers.zh_int(share.numerator)}",
        ).via(f"补跑 {replay} 遍 ÷ 一步 {passes} 遍"),
        "selective_compute": selective_compute,
        "selective_memory": selective_memory,
        "full_compute": full_compute,
        "full_memory": full_memory_cut,
        "none_compute": percent(0, 0).via("不重算：不补跑"),
        "none_memory": percent(0, 0).via("不重算：什么都不扔"),
        "page_selective_memory": percent(PAGE_SELECTIVE["memory_page"], 0).via(PAGE_MEMORY_HOW),
        "moe_layer": _gib(layer_gib).via(MOE_LAYER_HOW),
        "entry": _gib(entry).via(ENTRY_HOW),
        "layers": number(v3.LAYERS).via("输入：V3 config 的层数"),
        "seq": _seq(v3.SEQ),
        "value_ratio": approx(times(value, 0)).via(
            f"({tier.memory:.1%} ÷ {tier.compute:.1%}) ÷ ({full_memory:.1%} ÷ {extra:.1%})"
        ),
        "working_layer": _gib(layer_gib, 0).via(MOE_LAYER_HOW),
    }


# -- recompute_sqrt_l -------------------------------------------------------------------------
# The page gives neither L nor k. L = 64 makes √L whole and the
# ends mirror (k and L/k); V3's 61 layers then show what a non-square L does.
SQRT_DEMO = (64, (2, 8, 32))
SQRT_V3 = (v3.LAYERS, (2, 8, 30))
SWEEP_STEP = 0.05


def _sqrt_panel(check: Check, prefix: str, layers: int, ks: tuple[int, int, int], what: str):
    """One model's three stops and its sweep: (facts named with `prefix`, the three totals, √L).
    `what` says where L comes from, for the reader."""
    small, middle, large = ks
    totals = [rc.present(layers, k) for k in ks]
    best = rc.best_integer_k(layers)
    root = math.sqrt(layers)
    check.equal(f"{prefix}best k (searched)", best, middle)
    check.equal(f"{prefix}best k is the whole number nearest √L", best, round(root))
    check.that(
        f"{prefix}middle is lowest",
        totals[1] < min(totals[0], totals[2]),
        "the middle k keeps the fewest layers present",
        totals,
    )
    k = np.arange(1.0, layers / 2 + SWEEP_STEP / 2, SWEEP_STEP)
    facts = {
        "layers": number(layers).via(f"输入：{what}"),
        "sqrt": number(root, 0 if root.is_integer() else 2).via(f"√{layers}"),
        "k_small": number(small).via("输入：本课取的一个小 k"),
        "seg_small": _count(small).via(f"正在重算的一段：k = {small} 层"),
        "k_best": number(middle).via(f"使 L/k + k 最小的整数 k（搜索 1 到 {layers}）"),
        "k_large": number(large).via("输入：本课取的一个大 k"),
        "ckpt_small": _present(layers / small).via(f"L ÷ k = {layers} ÷ {small}"),
        "ckpt_best": _present(layers / middle).via(f"L ÷ k = {layers} ÷ {middle}"),
        "ckpt_large": _present(layers / large).via(f"L ÷ k = {layers} ÷ {large}"),
        "total_small": _present(totals[0]).via(_total_how(layers, small)),
        "total_best": _present(totals[1]).via(_total_how(layers, middle)),
        "total_large": _present(totals[2]).via(_total_how(layers, large)),
        "sweep": data({"k": k.tolist(), "checkpoints": (layers / k).tolist(), "segment": k.tolist()}),
    }
    return {prefix + name: fact for name, fact in facts.items()}, totals, root


def _total_how(layers: int, k: int) -> str:
    return f"存档点 + 一段 = L/k + k = {layers}/{k} + {k}"


def _present(value: float) -> Fact:
    """A count of layers present: whole as it is (两 for 2), a fraction to one decimal (30.5)."""
    return _count(int(value)) if float(value).is_integer() else number(value, 1)


@CHAPTER.figure(
    "recompute_sqrt_l",
    "每隔 k 层存一个存档点：√L",
    source="√L 检查点：Chen 等 2016，Training Deep Nets with Sublinear Memory Cost，arXiv 1604.06174；"
    f"页面未给 L 与 k：演示取 L ＝ {SQRT_DEMO[0]}，再换成 V3 的 {SQRT_V3[0]} 层",
)
def recompute_sqrt_l(
    check: Check, demo: tuple[int, tuple[int, int, int]] = SQRT_DEMO, model: tuple[int, tuple[int, int, int]] = SQRT_V3
):
    layers, ks = demo
    panel, totals, root = _sqrt_panel(check, "", layers, ks, "演示取的层数，√L 为整数")
    check.that("√L is whole", root.is_integer(), "a demo L whose square root is a whole number", root)
    check.equal("optimum at √L", ks[1], int(root))
    check.close("two terms meet at √L", layers / root, root)
    check.equal("ends equally high", totals[0], totals[2])  # the page's assert: 两头等高
    check.equal("ends mirror (k ↔ L/k)", ks[0] * ks[2], layers)

    v3_layers, v3_ks = model
    v3_panel, v3_totals, v3_root = _sqrt_panel(check, "v3_", v3_layers, v3_ks, "V3 config 的层数")
    check.that("v3 √L is not whole", not v3_root.is_integer(), "V3's 61 layers have no whole square root", v3_root)
    check.that(
        "v3 ends no longer equal", v3_totals[0] != v3_totals[2], "k = 2 and k = 30 keep different counts", v3_totals
    )
    v3_panel["v3_sqrt"] = approx(v3_panel["v3_sqrt"])
    v3_panel["v3_total_large"] = number(v3_totals[2], 1).via(_total_how(v3_layers, v3_ks[2]))  # 32.0, beside 32.5
    return panel | v3_panel


# -- selective_recompute_table ----------------------------------------------------------------


@CHAPTER.figure(
    "selective_recompute_table",
    "一层 V3 MoE，按每 GiB 的代价排名",
    source=f"按 V3 config 与闭式解生成（{v3.SEQ // 1024}K、bf16）；「gate / up / 路由 / 降维」一行沿用页面的 "
    f"{v3.GATE.gib + v3.UP.gib + v3.KV_DOWN.gib:.2f} GiB，"
    "实为 gate、up 与一份 KV 降维；DeepSeek-V3：arXiv 2412.19437 §3.2.3",
)
def selective_recompute_table(check: Check, attention: rc.Attention = rc.V3_ATTENTION, cut: float = CUT):
    tier = _selective(check, attention, cut)
    order = tier.order
    rows = []
    for rank, (row, page) in enumerate(zip(order, TABLE_PAGE, strict=True)):
        gib_text, tflop_text = numbers.signed(row.gib, 2), _cell_tflop(row.tflop)
        ratio_text, verdict = _cell_ratio(row.per_gib), _verdict(row.per_gib, cut)
        check.equal(f"rank {rank + 1} '{row.label}'", (gib_text, tflop_text, ratio_text, verdict), page)
        rows.append(
            {
                "label": row.label,
                "gib": gib_text,
                "tflop": tflop_text,
                "per_gib": ratio_text,
                "verdict": verdict,
                "forward": tier.rows.index(row),
                "selected": row in tier.selected,
            }
        )

    gate = next(r for r in order if v3.GATE in r.parts)
    check.close(
        "9.14 GiB = gate + up + one 576-wide KV 降维",
        gate.gib,
        v3.GATE.gib + v3.UP.gib + v3.SEQ * (v3.KV_LORA + v3.ROPE) * v3.BF16 / v3.GIB,
    )
    labelled = rc.Candidate("as labelled", GATE_ROW_AS_LABELLED, v3.SEQ, attention)
    check.close("gate row as labelled", labelled.gib, 9.578, abs=0.0005)
    check.close("gate row as labelled TFLOP", labelled.tflop, 73.72, abs=0.005)
    check.that(
        "retracted cell",
        abs(RETRACTED_CELL - gate.tflop) > 1,
        "the old hand-filled cell is not the product",
        (RETRACTED_CELL, gate.tflop),
    )
    rounded_product = round(gate.gib, 2) * round(gate.per_gib, 2)  # the page's check: 9.14 × 7.70
    check.close("9.14 × 7.70 (the page's rounded cells)", rounded_product, gate.tflop, abs=0.05)

    attention_row, before = order[-1], order[-2]
    check.that(
        "attention ranks last",
        v3.ATTN_OUT in attention_row.parts,
        "attention output is the dearest per GiB",
        attention_row.label,
    )
    vs_previous = attention_row.per_gib / before.per_gib
    check.close("attention_vs_previous", vs_previous, PAGE_SELECTIVE["attention_vs_previous"], abs=0.5)
    check.close("saved", tier.saved, PAGE_SELECTIVE["saved"])
    check.close("paid", tier.paid, PAGE_SELECTIVE["paid"], abs=0.05)
    check.close("step_tflop", tier.step, PAGE_SELECTIVE["step"], abs=0.5)
    check.close("selective_memory (one denominator)", tier.memory, PAGE_SELECTIVE["memory"], abs=0.0005)
    below = max(r.per_gib for r in tier.selected)
    above = min(r.per_gib for r in order if r not in tier.selected)
    check.that(
        "cut sits in the gap",
        below < cut < above,
        "the cut between the last row taken and the first left",
        (below, cut, above),
    )
    unranked = [t for t in v3.moe_layer_tensors() if not any(t in r.parts for r in order)]
    ranked_gib = sum(r.gib for r in order)
    check.close("ranked + unranked = the MoE layer", ranked_gib + sum(t.gib for t in unranked), v3.moe_layer_gib())
    last_taken = max(tier.selected, key=lambda r: r.per_gib)
    first_left = min((r for r in order if r not in tier.selected), key=lambda r: r.per_gib)
    saved_how = f"线下各行 GiB 之和：{_sum([r.gib for r in tier.selected])}"
    paid_how = f"线下各行 TFLOP 之和：{_sum([r.tflop for r in tier.selected])}"
    gate_sizes = " + ".join(f"{t.name} {t.gib:.2f}" for t in gate.parts)
    gate_widths = " + ".join(numbers.signed(t.width) for t in gate.parts)
    check.equal("gate row: one input width", {t.k for t in gate.parts}, {v3.GATE.k})
    gate_tflop_how = (
        f"2 × {numbers.signed(v3.SEQ)} × {numbers.signed(v3.GATE.k)} × ({gate_widths}) ÷ 10{numbers.superscript(12)}"
    )
    extra = [t for t in GATE_ROW_AS_LABELLED if t not in gate.parts]
    gate_tflop = _tflop(gate.tflop).via(gate_tflop_how)
    gate_gib = _gib(gate.gib).via(f"{gate_sizes} GiB")
    attention_gib = _gib(attention_row.gib).via(
        f"{numbers.signed(v3.SEQ)} × {v3.HEADS} × {v3.V_HEAD} × {v3.BF16} B ÷ 2{numbers.superscript(30)}"
    )
    attention_tflop = _tflop(attention_row.tflop).via(
        f"{v3.HEADS} 头 × 2S²({attention.d_qk} + {attention.d_v}) × {attention.causal:g}（causal），"
        f"S = {numbers.signed(v3.SEQ)}"
    )
    return {
        "rows": data(rows),
        "cut": number(cut).via(f"输入：页面自选的线，{below:.2f} 与 {above:.2f} 之间任取"),
        "seq": _seq(v3.SEQ),
        "hidden": number(v3.HIDDEN).via("输入：V3 config 的 hidden_size"),
        "ratio_last_taken": number(below, 2).via(
            f"线下最贵的一行：{last_taken.tflop:.2f} TFLOP ÷ {last_taken.gib:.2f} GiB"
        ),
        "ratio_first_left": number(above, 2).via(
            f"线上最便宜的一行：{first_left.tflop:.2f} TFLOP ÷ {first_left.gib:.2f} GiB"
        ),
        "saved": _gib(tier.saved, 1).via(saved_how),
        "paid": _tflop(tier.paid, 1).via(paid_how),
        "saved_cell": number(tier.saved, 1).via(saved_how),
        "paid_cell": number(tier.paid, 1).via(paid_how),
        "step_tflop": approx(_tflop(tier.step, 0)).via(f"{rc.STEP_PASSES} 遍 × 一层 MoE 前向 {tier.forward:.1f} TFLOP"),
        "passes": number(rc.STEP_PASSES).via(PASSES_HOW),
        "selective_compute": percent(tier.compute, 1).via(f"{tier.paid:.1f} ÷ {numbers.signed(tier.step)} TFLOP"),
        "selective_memory": percent(tier.memory, 1).via(f"{tier.saved:.1f} ÷ {v3.moe_layer_gib():.2f} GiB"),
        "page_selective_memory": percent(PAGE_SELECTIVE["memory_page"], 0).via(PAGE_MEMORY_HOW),
        "moe_layer": _gib(v3.moe_layer_gib()).via(MOE_LAYER_HOW),
        "entry": _gib(v3.layer_entry_gib()).via(ENTRY_HOW),
        "gate_gib": gate_gib,
        "gate_tflop": gate_tflop,
        "gate_ratio": number(gate.per_gib, 2).via(f"{gate_tflop} ÷ {gate_gib}"),
        "retracted": _tflop(RETRACTED_CELL).via("输入：页面早先手填的格子（不是乘积）"),
        "retracted_cell": number(RETRACTED_CELL, 2).via("输入：页面早先手填的格子（不是乘积）"),
        "kv_down_width": number(v3.KV_DOWN.width).via(f"KV 降维 {v3.KV_LORA} + RoPE {v3.ROPE}"),
        "gate_gib_as_labelled": _gib(labelled.gib, 2).via(
            f"{gate.gib:.2f} + " + " + ".join(f"{t.name} {t.gib:.2f}" for t in extra) + " GiB"
        ),
        "gate_tflop_as_labelled": _tflop(labelled.tflop).via(
            f"{gate.tflop:.2f} + " + " + ".join(f"{t.name} {rc.recompute_flops(t) / 1e12:.2f}" for t in extra)
        ),
        "attention_gib": attention_gib,
        "attention_tflop": attention_tflop,
        "attention_ratio": number(attention_row.per_gib, 2).via(f"{attention_tflop} ÷ {attention_gib}"),
        "attention_vs_previous": times(vs_previous, 0).via(
            f"{attention_row.per_gib:.2f} ÷ {before.per_gib:.2f}（排在它前面的一行）"
        ),
        "unranked_gib": _gib(v3.moe_layer_gib() - ranked_gib, 1).via(
            f"一层 {v3.moe_layer_gib():.2f} − 表中各行 {ranked_gib:.2f} GiB"
        ),
    }


# -- attention_crossover ------------------------------------------------------------------------
CROSSOVER_WIDTHS = (v3.KV_UP.k, v3.Q_UP.k, v3.EXPERT_OUT.k, v3.GATE.k)  # the ranked matmul rows' inputs
CROSSOVER_PAGE = {
    "v3_slope": 1.25,
    "gpt3_slope": 1.00,
    "crossings": (409.6, 1228.8, 1638.4, 5734.4),
    "crossover": "5,734",
}
RANDOM_MATMULS = 24
RANDOM_SEED = 11
AXIS_S = 8192  # the plot's S axis, far enough to show every crossing
MASK_S = 2048  # a real causal mask, counted


def _crossing_by_bisection(attention: rc.Attention, k: int) -> float:
    """Second route to a crossing: walk S until attention's cost per byte reaches k."""
    lo, hi = 0.0, float(AXIS_S) * 16
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rc.cost_per_byte(v3.ATTN_OUT, mid, attention) < k else (lo, mid)
    return (lo + hi) / 2


@CHAPTER.figure(
    "attention_crossover",
    "每省一个字节要付多少：线性层与 attention",
    source="闭式解为本课推导（causal 折半口径）；V3 config：arXiv 2412.19437；GPT-3：arXiv 2005.14165 表 2.1",
)
def attention_crossover(
    check: Check,
    d_qk: int = v3.QK_HEAD,
    causal: float = rc.CAUSAL,
    widths: tuple[int, ...] = CROSSOVER_WIDTHS,
    seed: int = RANDOM_SEED,
):
    # A linear layer: count real matmuls of random shapes; FLOPs per output byte is k every time.
    rng = np.random.default_rng(seed)
    trials = []
    for _ in range(RANDOM_MATMULS):
        s, k, n = (int(v) for v in rng.integers(2, 64, size=3))
        flops, nbytes = rc.counted_linear_cost_per_byte(s, k, n, rng)
        check.equal(f"linear FLOPs per byte = k (S={s}, k={k}, n={n})", flops / nbytes, float(k))
        trials.append((s, k, n, flops, nbytes))
    for k in widths:
        check.equal(f"linear line at {k} (closed form)", rc.linear_cost_per_byte(k), float(k))

    # Attention: its cost per byte by the shapes, divided by S, is the closed-form slope.
    v3_attention = rc.Attention(v3.HEADS, d_qk, v3.V_HEAD, causal)
    v3_slope = v3_attention.slope()
    check.close("v3_slope", v3_slope, CROSSOVER_PAGE["v3_slope"])
    for s in (1024, v3.SEQ):
        check.close(
            f"v3 slope by the shapes at S={s}", v3_attention.flops(s) / v3_attention.output_bytes(s) / s, v3_slope
        )
    check.close("causal halving (a real mask)", rc.causal_share(MASK_S), causal, abs=1 / MASK_S)
    gpt3_slope = rc.GPT3_ATTENTION.slope()
    check.close("gpt3_slope", gpt3_slope, CROSSOVER_PAGE["gpt3_slope"])

    crossings = [k / v3_slope for k in widths]
    for k, crossing, page in zip(widths, crossings, CROSSOVER_PAGE["crossings"], strict=True):
        check.close(f"crossing at {k}", crossing, page)
        check.close(f"crossing at {k} (bisection)", _crossing_by_bisection(v3_attention, k), crossing, rel=1e-9)
    crossover = crossings[widths.index(v3.HIDDEN)]
    check.equal("crossover", numbers.signed(crossover), CROSSOVER_PAGE["crossover"])
    at_128k = v3_slope * v3.SEQ
    check.close(
        "the table's attention row in width units",
        at_128k * v3.GIB / 1e12,
        rc.Candidate("attention", (v3.ATTN_OUT,), v3.SEQ, v3_attention).per_gib,
    )
    s, k, n, flops, nbytes = trials[0]
    mac, per_number = flops / (s * k * n), nbytes / (s * n)  # 2 FLOPs a multiply-add, 2 bytes a bf16 number
    check.equal("FLOPs per multiply-add", mac, 2.0)
    check.equal("bytes per bf16 number", per_number, float(v3.BF16))
    slope = number(v3_slope, 2).via(_slope_how(v3_attention))
    row = {t.k: t.name for t in (v3.KV_UP, v3.Q_UP, v3.EXPERT_OUT, v3.GATE)}
    return {
        "mac": number(mac).via(f"数出来的：{numbers.signed(flops)} FLOPs ÷ ({s} × {k} × {n}) 次乘加"),
        "per_number": number(per_number).via(f"数出来的：{numbers.signed(nbytes)} B ÷ ({s} × {n}) 个数"),
        "d_qk": number(d_qk).via("输入：V3 config 的 QK 头维度"),
        "d_v": number(v3.V_HEAD).via("输入：V3 config 的 V 头维度"),
        "gpt3_d": number(rc.GPT3_HEAD).via("输入：GPT-3 175B 的头维度（表 2.1）"),
        "v3_slope": slope,
        "gpt3_slope": number(gpt3_slope, 2).via(_slope_how(rc.GPT3_ATTENTION)),
        "widths": data([{"k": k, "text": _width(k)} for k in widths]),
        "crossings": data([{"k": k, "s": c, "text": numbers.signed(c, 1)} for k, c in zip(widths, crossings)]),
        **{
            f"k_{i}": number(k).via(f"输入：V3 config 里「{row.get(k, '这一行')}」的输入宽")
            for i, k in enumerate(widths, 1)
        },
        **{
            f"crossing_{i}": number(c, 1).via(f"{numbers.signed(k)} ÷ {slope}")
            for i, (k, c) in enumerate(zip(widths, crossings), 1)
        },
        "crossover": number(crossover).via(f"{numbers.signed(v3.HIDDEN)} ÷ {slope}"),
        "crossover_exact": number(crossover, 1).via(f"{numbers.signed(v3.HIDDEN)} ÷ {slope}"),
        "hidden": number(v3.HIDDEN).via("输入：V3 config 的 hidden_size"),
        "example": data({"s": s, "k": k, "n": n, "flops": numbers.signed(flops), "bytes": numbers.signed(nbytes)}),
        "trials": number(RANDOM_MATMULS).via("输入：随机形状的组数（本课自设）"),
        "bf16_bytes": number(v3.BF16, 0, "B", "字节").via("输入：bf16 一个数的字节数"),
        "axis_s": data({"max": AXIS_S, "ticks": [{"s": t, "text": numbers.signed(t)} for t in (AXIS_S // 2, AXIS_S)]}),
        "at_128k": number(at_128k).via(f"{slope} × {numbers.signed(v3.SEQ)}"),
        "seq": _seq(v3.SEQ),
    }


# -- seq_len_flip -------------------------------------------------------------------------------
FLIP_PAGE = {
    "gpt3_cost": "2,048",
    "retracted": "2,560",
    "gpt3_share": 0.0137,
    "paper_share": 0.027,
    "v3_cost": "163,840",
    "crossover": "5,734",
}
PAPER_YEAR = 2022  # Korthikanti et al., arXiv 2205.05198 (2022-05)
# Megatron-LM's --recompute-modules: the default, and the other candidates the page names,
# with the ranked row each of them drops.
MEGATRON_DEFAULT = "core_attn"
MEGATRON_ROWS = {
    "core_attn": ("attention 输出", (v3.ATTN_OUT,)),
    "layernorm": ("RMSNorm 输出", NORM_OUTPUTS),
    "moe_act": ("SwiGLU 乘积", (v3.SWIGLU_PRODUCT,)),
    "mla_up_proj": ("Q 展开、K/V 解压", (v3.Q_UP, v3.KV_UP)),
}


@CHAPTER.figure(
    "seq_len_flip",
    "同一个判据，相反的结论：2K 与 128K",
    source="Korthikanti 等，Reducing Activation Recomputation in Large Transformer Models，arXiv 2205.05198；"
    "Megatron-LM transformer_config.py 的 recompute_modules（页面记为 2026-09 主干）；"
    f"对照线取各自的模型宽度，不是最宽的线性层；论文的 {FLIP_PAGE['paper_share']:.1%} 未按 causal 折半",
)
def seq_len_flip(
    check: Check,
    gpt3: gpt.Gpt = gpt.GPT3_175B,
    gpt3_attention: rc.Attention = rc.GPT3_ATTENTION,
    v3_attention: rc.Attention = rc.V3_ATTENTION,
    cut: float = CUT,
):
    check.equal("gpt3 heads × head = width", gpt3_attention.heads * gpt3_attention.d_v, gpt3.width)
    # Each model with its own constants: slope, operating length, comparison line (d_model).
    gpt3_slope, v3_slope = gpt3_attention.slope(), v3_attention.slope()
    gpt3_cost = gpt3_slope * gpt3.context
    check.equal("gpt3_cost", numbers.signed(gpt3_cost), FLIP_PAGE["gpt3_cost"])
    retracted = v3_slope * gpt3.context  # the page's old label: V3's slope on GPT-3
    check.equal("retracted", numbers.signed(retracted), FLIP_PAGE["retracted"])
    check.that("gpt3 label is its own", gpt3_cost != retracted, "GPT-3's point uses GPT-3's slope", gpt3_cost)
    gpt3_crossing = gpt3.width / gpt3_slope
    check.that(
        "gpt3 far left", gpt3.context < gpt3_crossing, "2K sits left of GPT-3's crossing", (gpt3.context, gpt3_crossing)
    )
    widest = 4 * gpt3.width  # GPT-3's widest linear input is the MLP down-projection
    check.that("gpt3 left of its widest line too", gpt3_cost < widest, "the verdict holds a fortiori", widest)
    v3_cost = v3_slope * v3.SEQ
    v3_crossing = v3.HIDDEN / v3_slope
    check.equal("v3_cost", numbers.signed(v3_cost), FLIP_PAGE["v3_cost"])
    check.equal("crossover", numbers.signed(v3_crossing), FLIP_PAGE["crossover"])
    check.that("v3 far right", v3_crossing < v3.SEQ, "128K sits right of V3's crossing", (v3.SEQ, v3_crossing))

    # The paper's 2.7% is attention's share of a layer's forward, not halved for causal.
    linear = gpt.PER_LAYER * gpt3.width**2
    share = rc.layer_forward_share(gpt3_attention, gpt3.context, linear)
    check.close("gpt3_share (= the ledger's route)", share, gpt3.attention_share(gpt3.context))
    check.close("gpt3_share", share, FLIP_PAGE["gpt3_share"], abs=0.00005)
    uncausal = rc.Attention(gpt3_attention.heads, gpt3_attention.d_qk, gpt3_attention.d_v, causal=1.0)
    paper = rc.layer_forward_share(uncausal, gpt3.context, linear)
    check.close("paper_share (not halved)", paper, FLIP_PAGE["paper_share"], abs=0.0005)

    # Megatron's default is the row our ranking puts last; its other candidates are the cheap rows.
    rows = {name: rc.Candidate(name, parts, v3.SEQ, v3_attention) for name, (_label, parts) in MEGATRON_ROWS.items()}
    dearest = max(rows.values(), key=lambda r: r.per_gib)
    check.equal("Megatron's default is the dearest row at 128K", dearest.label, MEGATRON_DEFAULT)
    cheap = [name for name, row in rows.items() if row.per_gib < cut]
    check.equal(
        "Megatron's other candidates are all under the cut",
        sorted(cheap),
        sorted(set(MEGATRON_ROWS) - {MEGATRON_DEFAULT}),
    )

    def panel(seq_max: int, y_max: int, ticks_x, ticks_y) -> dict:
        return {
            "x_max": seq_max,
            "y_max": y_max,
            "x_ticks": [{"v": t, "text": numbers.signed(t)} for t in ticks_x],
            "y_ticks": [{"v": t, "text": numbers.signed(t)} for t in ticks_y],
        }

    g_slope = number(gpt3_slope, 2).via(_slope_how(gpt3_attention))
    v_slope = number(v3_slope, 2).via(_slope_how(v3_attention))
    g_seq, v_seq = numbers.signed(gpt3.context), numbers.signed(v3.SEQ)
    g_cost, v_cost = number(gpt3_cost).via(f"{g_slope} × {g_seq}"), number(v3_cost).via(f"{v_slope} × {v_seq}")
    g_cross = number(gpt3_crossing).via(f"{numbers.signed(gpt3.width)} ÷ {g_slope}")
    share_how = "attention 核心 ÷ (核心 + 2S × {per}d²)，S = {s}，d = {d}"
    return {
        "year": year(PAPER_YEAR).via("输入：论文发表年份（arXiv 2205.05198）"),
        "gpt3_slope": g_slope,
        "v3_slope": v_slope,
        "gpt3_seq": number(gpt3.context).via("输入：GPT-3 的上下文长度"),
        "gpt3_seq_k": _seq(gpt3.context),
        "v3_seq": number(v3.SEQ).via("输入：本课取的 V3 序列长度"),
        "v3_seq_k": _seq(v3.SEQ),
        "gpt3_width": number(gpt3.width).via("输入：GPT-3 175B 的模型宽度（表 2.1）"),
        "v3_width": number(v3.HIDDEN).via("输入：V3 config 的 hidden_size"),
        "gpt3_widest": number(widest).via(f"MLP 降维投影的输入：{widest // gpt3.width} × {numbers.signed(gpt3.width)}"),
        "gpt3_cost": g_cost,
        "v3_cost": v_cost,
        "retracted": number(retracted).via(f"V3 的斜率 {v_slope} × GPT-3 的 {g_seq}（套错了）"),
        "gpt3_crossing": g_cross,
        "v3_crossing": number(v3_crossing).via(f"{numbers.signed(v3.HIDDEN)} ÷ {v_slope}"),
        "gpt3_left": times(gpt3_crossing / gpt3.context, 0).via(f"{g_cross} ÷ {g_seq}"),
        "v3_right": times(v3_cost / v3.HIDDEN, 0).via(f"{v_cost} ÷ {numbers.signed(v3.HIDDEN)}"),
        "gpt3_d": number(gpt3_attention.d_qk).via("输入：GPT-3 175B 的头维度（表 2.1）"),
        "v3_d_qk": number(v3_attention.d_qk).via("输入：V3 config 的 QK 头维度"),
        "v3_d_v": number(v3_attention.d_v).via("输入：V3 config 的 V 头维度"),
        "gpt3_share": percent(share, 2).via(
            share_how.format(per=gpt.PER_LAYER, s=g_seq, d=numbers.signed(gpt3.width)) + "，causal 折半"
        ),
        "paper_share": percent(paper, 1).via(
            share_how.format(per=gpt.PER_LAYER, s=g_seq, d=numbers.signed(gpt3.width)) + "，不折半"
        ),
        "gpt3_panel": data(panel(16_384, 16_384, (gpt3.context, gpt3.width), (gpt3.context, gpt3.width))),
        "v3_panel": data(panel(147_456, 184_320, (v3_crossing, v3.SEQ), (v3.HIDDEN, v3_cost))),
        "modules": data(
            [
                {
                    "module": name,
                    "tensors": label,
                    "default": name == MEGATRON_DEFAULT,
                    "verdict": _verdict(rows[name].per_gib, cut),
                }
                for name, (label, _parts) in MEGATRON_ROWS.items()
            ]
        ),
    }
