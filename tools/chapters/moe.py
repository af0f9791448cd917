"""Chapter 8 in play order (专题五's second), moe: one token, 「词」, through one seeded router.

Every number comes from ``tools.models.router``: 16 real characters, 8 experts, top 2, seeded
embeddings and router matrix (our own inputs, 示意参数). Each station of an MoE layer gets a figure:
softmax as a soft max, the router's top 2 (softmax against DeepSeek-V3's sigmoid), dispatch as a sort
and the all-to-all, the capacity queue, the gates' gradient, and V3's auxiliary-loss-free balancing on
a larger router (16 experts, 512 tokens a step). Each builder checks its numbers by a second route (a
closed form, finite differences, the permutation's inverse, Σ max(0, load − capacity)) and against the
values docs/figures.md lists for it.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from tools.course import numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, data, number, percent, times
from tools.models import router, v3

CHAPTER = Chapter(
    "moe",
    "专家混合：路由、派发、计算、合并",
    summary=(
        "softmax as a soft max, the router's top 2 (softmax vs V3's sigmoid), dispatch as a sort and the "
        "all-to-all, capacity and dropped tokens, the gates' gradient, V3's bias balancing; one seeded router"
    ),
)

TOKEN = 2  # 「词」, the token every figure follows
SEEDED = "示意参数：16 个字、8 位专家、选 2 位，嵌入与路由矩阵为固定种子的随机数"


# -- shared pieces -------------------------------------------------------------------------


def _series(values, digits: int = 0) -> Fact:
    """A row of numbers shown together: the texts joined by spaces (a scene splits them), read one after another."""
    shown = [number(float(v), digits) for v in values]
    return Fact([float(v) for v in values], " ".join(f.text for f in shown), "，".join(f.spoken for f in shown))


def _count(n: int) -> Fact:
    """A count before a measure word: 2 is 两."""
    text = numbers.signed(n)
    return Fact(n, text, numbers.zh_quantity(text))


def _fraction(part: int, whole: int) -> Fact:
    """341/512 / 五百一十二分之三百四十一."""
    return Fact(part / whole, f"{part}/{whole}", f"{numbers.zh_int(whole)}分之{numbers.zh_int(part)}")


def _expert(e: int) -> Fact:
    """An expert by its number: 3 号 / 三号."""
    return Fact(e, f"{e} 号", f"{numbers.zh_int(e)}号")


def _token_row(engine: router.Router) -> np.ndarray:
    return engine.logits[TOKEN]


# -- moe_softmax_as_soft_max ---------------------------------------------------------------

EQUAL_STEPS = (0.0, 1.0, 2.0, 3.0)
SPEC_STEP_PROBS = (0.0321, 0.0871, 0.2369, 0.6439)
SPEC_LOGITS = (1.098, 0.763, -1.150, 2.805, 0.893, 0.059, -1.325, 1.001)
TEMPERATURES = (4.0, 1.0, 0.5, 0.1)
SPEC_P_MAX = (0.2109, 0.5803, 0.9062, 1.0000)
LAYERS = 30
SUMS = (0.9, 1.0, 1.1)
CONVEX_DRAWS, CONVEX_SEED = 1000, 5
# The draws of the convex bound: 16 vectors in 3-D, logits N(0, 3²) (the one shape that gives
# docs/figures.md's 0.9816; the bound ≤ 1 holds for any shape).
CONVEX_VECTORS, CONVEX_DIM, CONVEX_SCALE = 16, 3, 3.0


@CHAPTER.figure(
    "moe_softmax_as_soft_max",
    "软的最大值：softmax 把差值变成比例",
    source="学习笔记「moe f&b 计算流程」（正数、和为 1、尺度一致）与「softmax 的好处」"
    "（可微的 max、差值相等变比例相等、sigmoid 是二分类）；「词」的 8 个分数为示意参数；30 层连乘是示意",
)
def moe_softmax_as_soft_max(
    check: Check,
    steps: tuple = EQUAL_STEPS,
    temperatures: tuple = TEMPERATURES,
    layers: int = LAYERS,
    sums: tuple = SUMS,
    shift_by: float = 100,
    engine: router.Router | None = None,
) -> dict:
    engine = engine or router.make()
    z = np.array(steps)
    p = router.softmax(z)
    for i, (got, page) in enumerate(zip(p, SPEC_STEP_PROBS)):
        check.close(f"softmax([0,1,2,3])[{i}]", float(got), page, abs=5e-5)
    ratios = p[1:] / p[:-1]
    for i, r in enumerate(ratios):
        check.close(f"neighbour ratio {i + 1}/{i} = e", float(r), math.e, rel=1e-12)
    row = _token_row(engine)
    for e, (got, page) in enumerate(zip(row, SPEC_LOGITS)):
        check.close(f"logit of 「词」 for expert {e}", float(got), page, abs=5e-4)
    shift = check.residual(
        f"max |softmax(z + {shift_by:g}) − softmax(z)|, 「词」",
        float(np.abs(router.softmax(row + shift_by) - router.softmax(row)).max()),
        1e-15,
    )
    p_max = [float(router.softmax(row / tau).max()) for tau in temperatures]
    argmax = [int(router.softmax(row / tau).argmax()) for tau in temperatures]
    for tau, got, page in zip(temperatures, p_max, SPEC_P_MAX):
        check.close(f"p_max at τ = {tau:g}", got, page, abs=5e-5)
    check.that("p_max rises as τ falls", all(a < b for a, b in itertools.pairwise(p_max)), "strictly increasing", p_max)
    check.equal("argmax at every τ", argmax, [3] * len(temperatures))
    z3 = float(row[3])
    sig = float(router.sigmoid(np.array(z3)))
    check.close("σ(z₃)", sig, 0.9429, abs=5e-5)
    two_way = check.residual("σ(z) − softmax([z, 0])₀", sig - float(router.softmax(np.array([z3, 0.0]))[0]), 1e-15)
    products = [s**layers for s in sums]
    check.close("0.9³⁰", products[0], 0.04239, abs=5e-6)
    check.close("1.1³⁰", products[2], 17.449, abs=5e-4)
    check.equal("1.0³⁰", products[1], 1.0)
    rng = np.random.default_rng(CONVEX_SEED)
    weights = router.softmax(CONVEX_SCALE * rng.standard_normal((CONVEX_DRAWS, CONVEX_VECTORS)))
    vectors = rng.standard_normal((CONVEX_DRAWS, CONVEX_VECTORS, CONVEX_DIM))
    mixed = np.linalg.norm(np.einsum("bn,bnd->bd", weights, vectors), axis=1)
    bound = mixed / np.linalg.norm(vectors, axis=2).max(axis=1)
    check.that("‖Σ wᵢvᵢ‖ ≤ maxᵢ‖vᵢ‖ on every draw", bool((bound <= 1 + 1e-12).all()), "≤ 1", float(bound.max()))
    check.close("largest ratio over the draws", float(bound.max()), 0.9816, abs=5e-5)
    # The lanes: ‖h‖ after each of the 30 layers, for each sum of the weights.
    lanes = [[s**n for n in range(layers + 1)] for s in sums]
    gap = float(z[1] - z[0])
    check.that(
        "the scores step up evenly (the cue: each is one more)",
        bool(np.allclose(np.diff(z), gap)),
        f"steps of {gap:g}",
        z,
    )
    z_text = _series(steps).text
    return {
        "steps": _series(steps).via("输入：本课自设，等差的分数"),
        "step_gap": number(gap).via(f"{steps[1]:g} − {steps[0]:g}"),
        "step_count": _count(len(steps)).via("z 的项数"),
        "step_probs": _series(p, 4).via(f"softmax(z) = exp(zᵢ) / Σ exp(zⱼ)，z = {z_text}"),
        "e": number(math.e, 5).via(f"相邻两项之比 exp(zᵢ₊₁ − zᵢ) = exp({gap:g})"),
        "shift_by": number(shift_by).via("输入：本课自设的平移量"),
        "shift": shift,
        "logits": _series(row, 3).via("「词」的一行 z = x W：固定种子的嵌入 x 与路由矩阵 W", schematic=True),
        "experts": _count(row.size).via("「词」一行的分数个数，一位专家一个", schematic=True),
        "probs": data(router.softmax(row).tolist()),
        "temperatures": _series(temperatures, 1).via("输入：本课自设的温度"),
        "tau_high": number(temperatures[0]).via("输入：本课自设的最高温度"),
        "tau_low": number(temperatures[-1], 1).via("输入：本课自设的最低温度"),
        "tempered": data([router.softmax(row / tau).tolist() for tau in temperatures]),
        "p_max": _series(p_max, 2).via(f"max softmax(z / τ)，τ = {_series(temperatures, 1).text}"),
        "p_max_first": number(p_max[0], 2).via(f"max softmax(z / {temperatures[0]:g})"),
        "p_max_last": number(p_max[-1], 2).via(f"max softmax(z / {temperatures[-1]:g})"),
        "argmax": _expert(argmax[0]).via("argmax softmax(z / τ)，每个温度下都是它"),
        "z3": number(z3, 3).via(f"z 的第 {argmax[0]} 项（编号从 0 起）"),
        "sigmoid": number(sig, 4).via(f"σ(z) = 1 / (1 + exp(−z))，z = {z3:.3f}"),
        "two_way": two_way,
        "layers": number(layers).via("输入：示意的层数", schematic=True),
        "sums": _series(sums, 1).via("输入：示意的权重之和", schematic=True),
        "sum_low": number(sums[0], 1).via("输入：示意的权重之和", schematic=True),
        "sum_high": number(sums[-1], 1).via("输入：示意的权重之和", schematic=True),
        "lanes": data(lanes),
        "shrunk": number(products[0], 3).via(f"{sums[0]:g}{numbers.superscript(layers)}"),
        "grown": number(products[2], 1).via(f"{sums[2]:g}{numbers.superscript(layers)}"),
        "draws": number(CONVEX_DRAWS).via("输入：本课自设的抽样次数"),
        "convex": number(float(bound.max()), 4).via(
            f"max ‖Σ wᵢvᵢ‖ / maxᵢ‖vᵢ‖，{CONVEX_DRAWS:,} 次抽样，每次 {CONVEX_VECTORS} 个 {CONVEX_DIM} 维向量"
        ),
    }


# -- moe_router_topk -----------------------------------------------------------------------

SPEC_ROW_PROBS = (0.105, 0.075, 0.011, 0.580, 0.086, 0.037, 0.009, 0.096)
SPEC_LOADS = (3, 4, 6, 4, 4, 6, 3, 2)


@CHAPTER.figure(
    "moe_router_topk",
    "路由器：16 个字、8 位专家、各挑两位",
    source="DeepSeek-V3 技术报告 §2.1.2，式 12–15（arXiv 2412.19437）：sigmoid 打分、在选中的专家里归一；"
    "§4.2：每层 1 位共享 + 256 位路由专家，每个 token 选 8 位；" + SEEDED,
)
def moe_router_topk(check: Check, engine: router.Router | None = None) -> dict:
    engine = engine or router.make()
    probs = router.softmax(engine.logits)
    check.close("rows of the softmax sum to 1", float(np.abs(probs.sum(axis=1) - 1).max()), 0.0, abs=1e-14)
    row = probs[TOKEN]
    for e, (got, page) in enumerate(zip(row, SPEC_ROW_PROBS)):
        check.close(f"softmax of 「词」, expert {e}", float(got), page, abs=5e-4)
    chosen = router.top_k(engine.logits, engine.top_k)
    check.equal("top 2 of 「词」", chosen[TOKEN].tolist(), [3, 0])
    soft = router.gates(probs, chosen)
    sig_scores = router.sigmoid(engine.logits)
    sig_chosen = router.top_k(sig_scores, engine.top_k)
    check.equal(
        "same top 2 under softmax and sigmoid, every token",
        sum(set(a) == set(b) for a, b in zip(chosen.tolist(), sig_chosen.tolist())),
        engine.tokens,
    )
    sig = router.gates(sig_scores, chosen)
    for name, g in (("softmax", soft), ("sigmoid", sig)):
        check.close(f"{name} gates sum to 1, every token", float(np.abs(g.sum(axis=1) - 1).max()), 0.0, abs=1e-14)
    check.close("softmax gates of 「词」", float(soft[TOKEN, 0]), 0.846, abs=5e-4)
    check.close("sigmoid gates of 「词」", float(sig[TOKEN, 0]), 0.557, abs=5e-4)
    gap = float(np.abs(soft - sig).max())
    check.close("largest gate difference over the tokens", gap, 0.289, abs=5e-4)
    load = router.loads(chosen, engine.experts)
    check.equal("loads", load.tolist(), list(SPEC_LOADS))
    check.equal("loads add up to T·k", int(load.sum()), engine.tokens * engine.top_k)
    mean = engine.tokens * engine.top_k / engine.experts
    # DeepSeek-V3's experts in numbers (§4.2; an expert is SwiGLU's three matrices, 7168 × 2048 each).
    per_expert = 3 * v3.HIDDEN * v3.EXPERT_FFN
    check.equal("parameters per V3 expert", per_expert, 44_040_192)
    used = Fraction(v3.TOP_K + v3.SHARED_EXPERTS, v3.ROUTED_EXPERTS + v3.SHARED_EXPERTS)
    check.close("share of V3's expert parameters a token uses", float(used), 0.0350, abs=5e-5)
    check.close(
        "expert parameters a V3 token uses",
        v3.MOE_LAYERS * (v3.TOP_K + v3.SHARED_EXPERTS) * per_expert / 1e9,
        22.99,
        abs=5e-3,
    )
    check.close(
        "all V3 expert parameters",
        v3.MOE_LAYERS * (v3.ROUTED_EXPERTS + v3.SHARED_EXPERTS) * per_expert / 1e9,
        656.46,
        abs=5e-3,
    )
    a, b = (int(e) for e in chosen[TOKEN])
    picks = f"{engine.tokens} × {engine.top_k}"
    v3_used = f"({v3.TOP_K} + {v3.SHARED_EXPERTS}) / ({v3.ROUTED_EXPERTS} + {v3.SHARED_EXPERTS})"
    return {
        "tokens": number(engine.tokens).via("输入：示意句子的字数", schematic=True),
        "experts": number(engine.experts).via("输入：示意参数", schematic=True),
        "top_k": _count(engine.top_k).via("输入：示意参数，每个字选几位专家", schematic=True),
        "dim": number(engine.x.shape[1]).via("输入：示意参数，嵌入的维数", schematic=True),
        "text": Fact(engine.text, engine.text, engine.text).via("输入：示意句子", schematic=True),
        "embeddings": data(engine.x.tolist()),
        "logits": data(engine.logits.tolist()),
        "row_probs": _series(row, 3).via("softmax(x W)，「词」的一行"),
        "first": _expert(a).via("「词」的 softmax 里最大的一项"),
        "second": _expert(b).via("「词」的 softmax 里次大的一项"),
        "soft_gates": _series(soft[TOKEN], 3).via(f"选中的 {engine.top_k} 项 softmax 概率，除以它们的和"),
        "soft_first": number(float(soft[TOKEN, 0]), 2).via(f"p{a} / (p{a} + p{b})，p = softmax(z)"),
        "soft_second": number(float(soft[TOKEN, 1]), 2).via(f"p{b} / (p{a} + p{b})，p = softmax(z)"),
        "sig_gates": _series(sig[TOKEN], 3).via(f"选中的 {engine.top_k} 项 σ(z)，除以它们的和"),
        "sig_first": number(float(sig[TOKEN, 0]), 2).via(f"σ(z{a}) / (σ(z{a}) + σ(z{b}))"),
        "sig_second": number(float(sig[TOKEN, 1]), 2).via(f"σ(z{b}) / (σ(z{a}) + σ(z{b}))"),
        "sig_scores": data(sig_scores[TOKEN].tolist()),
        "same_sets": _fraction(engine.tokens, engine.tokens).via(
            f"softmax 与 sigmoid 选出同一组 {engine.top_k} 位的字数 / 字数"
        ),
        "gap": number(gap, 3).via("max |softmax 门控 − sigmoid 门控|，所有字"),
        "chosen": data(chosen.tolist()),
        "loads": _series(load).via(f"每位专家被选的次数，{picks} 次选择"),
        "busiest": _count(int(load.max())).via("负载的最大值"),
        "idlest": _count(int(load.min())).via("负载的最小值"),
        "mean": number(mean).via(f"{picks} / {engine.experts}"),
        "busiest_ratio": times(load.max() / mean, 2).via(f"{int(load.max())} / {mean:g}"),
        "v3_routed": number(v3.ROUTED_EXPERTS).via("输入：V3 技术报告 §4.2"),
        "v3_top_k": number(v3.TOP_K).via("输入：V3 技术报告 §4.2"),
        "v3_shared": number(v3.SHARED_EXPERTS).via("输入：V3 技术报告 §4.2"),
        "v3_used": Fact(
            float(used),
            f"{used.numerator}/{used.denominator}",
            f"{numbers.zh_int(used.denominator)}分之{numbers.zh_int(used.numerator)}",
        ).via(f"{v3_used}，约分"),
        "v3_used_pct": percent(float(used), 2).via(v3_used),
    }


# -- moe_dispatch_permute ------------------------------------------------------------------

CARDS = 4  # expert parallelism over 4 cards, 2 experts and 4 tokens each (our layout)
SPEC_BUFFER = "词元计个两位做每个去两专算词家里算每只里计只去位专家。元那。那做"
SPEC_OFFSETS = (0, 3, 7, 13, 17, 21, 27, 30)
SPEC_SENDS = ((3, 3, 1, 1), (2, 2, 4, 0), (0, 3, 3, 2), (2, 2, 2, 2))


@CHAPTER.figure(
    "moe_dispatch_permute",
    "派发就是一次排序，合并就是把它排回去",
    source="学习笔记「moe f&b 计算流程」：Dispatch 放进各专家的输入 buffer，Combine 按路由权重聚合并还原到 token 维度；"
    "DeepSeek-V3 技术报告 §3.2（64 路专家并行，跨节点 all-to-all）；4 张卡的摆法为示意参数",
)
def moe_dispatch_permute(check: Check, cards: int = CARDS, engine: router.Router | None = None) -> dict:
    engine = engine or router.make()
    chosen = router.top_k(engine.logits, engine.top_k)
    plan = router.dispatch(chosen, engine.experts)
    buffer = "".join(engine.text[plan.token[j]] for j in plan.order)
    check.equal("buffer order", buffer, SPEC_BUFFER)
    check.equal("offsets", plan.offsets.tolist(), list(SPEC_OFFSETS))
    load = router.loads(chosen, engine.experts)
    check.equal(
        "offsets = exclusive prefix sum of the loads", plan.offsets.tolist(), [0, *np.cumsum(load)[:-1].tolist()]
    )
    check.that(
        "the buffer is grouped by expert",
        bool((np.diff(plan.expert[plan.order]) >= 0).all()),
        "expert ids non-decreasing",
        plan.expert[plan.order].tolist(),
    )
    check.equal("the inverse restores token order", plan.order[plan.inverse].tolist(), list(range(plan.order.size)))
    sends = router.send_counts(chosen, cards, engine.experts)
    check.equal("send counts", sends.tolist(), [list(r) for r in SPEC_SENDS])
    per_card = engine.tokens // cards * engine.top_k
    check.equal("every card sends 4 tokens × k", sends.sum(axis=1).tolist(), [per_card] * cards)
    per_card_load = load.reshape(cards, -1).sum(axis=1)
    check.equal("what a card receives = its experts' loads", sends.sum(axis=0).tolist(), per_card_load.tolist())
    soft = router.gates(router.softmax(engine.logits), chosen)
    buffer_in = engine.x[plan.token[plan.order]]
    y = router.combine(buffer_in, plan, soft)  # identity experts: each returns its input
    trip = check.residual("round trip with identity experts, max |y − x|", float(np.abs(y - engine.x).max()), 1e-12)
    groups = []
    for e in range(engine.experts):
        start, stop = plan.offsets[e], plan.offsets[e] + load[e]
        groups.append("".join(engine.text[plan.token[j]] for j in plan.order[start:stop]))
    return {
        "text": Fact(engine.text, engine.text, engine.text).via("输入：示意句子", schematic=True),
        "picks": data([[int(t), int(e)] for t, e in zip(plan.token, plan.expert)]),
        "order": data(plan.order.tolist()),
        "groups": data(groups),
        "buffer": Fact(buffer, buffer, buffer).via("各次选择的字，按专家编号稳定排序"),
        "loads": _series(load).via("每位专家被选的次数"),
        "offsets": _series(plan.offsets).via("负载的前缀和，不含自己：offsetₑ = Σ_{i<e} loadᵢ"),
        "picks_count": number(plan.order.size).via(f"{engine.tokens} 个字 × 每字 {engine.top_k} 位"),
        "cards": _count(cards).via("输入：示意参数", schematic=True),
        "experts_per_card": _count(engine.experts // cards).via(f"{engine.experts} / {cards}"),
        "tokens_per_card": _count(engine.tokens // cards).via(f"{engine.tokens} / {cards}"),
        "sends": data(sends.tolist()),
        "sends_text": data([[numbers.signed(int(v)) for v in r] for r in sends.tolist()]),
        "row_sums": _series(sends.sum(axis=1)).via("每张卡发出的份数：all-to-all 矩阵的行和"),
        "col_sums": _series(sends.sum(axis=0)).via("每张卡收到的份数：列和（它那几位专家的负载之和）"),
        "sent": number(per_card).via(f"{engine.tokens} / {cards} × {engine.top_k}"),
        "most_received": number(int(sends.sum(axis=0).max())).via("列和的最大值"),
        "least_received": number(int(sends.sum(axis=0).min())).via("列和的最小值"),
        "gates": data(soft.tolist()),
        "round_trip": trip,
    }


# -- moe_capacity_drop ---------------------------------------------------------------------

FACTORS = (1.0, 1.25, 1.5, 2.0)
SPEC_CAPACITY = (4, 5, 6, 8)
SPEC_DROPS = (4, 2, 0, 0)
SPEC_EMPTY = (4, 10, 16, 32)
SPEC_DROPPED_AT_1 = (("位", 5), ("专", 2), ("家", 5), ("算", 2))


@CHAPTER.figure(
    "moe_capacity_drop",
    "容量因子：要么丢词，要么空转",
    source="Switch Transformer §2.2（arXiv 2101.03961，据二手转述）：容量 = 每批 token 数 / 专家数 × 容量因子，"
    "超出的 token 只走残差；DeepSeek-V3 技术报告 §2.1.2「No Token-Dropping」；先排第一志愿是本课的约定；" + SEEDED,
)
def moe_capacity_drop(check: Check, factors: tuple = FACTORS, engine: router.Router | None = None) -> dict:
    engine = engine or router.make()
    chosen = router.top_k(engine.logits, engine.top_k)
    load = router.loads(chosen, engine.experts)
    caps, drops, empty, seatings = [], [], [], []
    for cf in factors:
        cap = router.capacity(cf, engine.tokens, engine.top_k, engine.experts)
        seating = router.seat(chosen, cap, engine.experts)
        caps.append(cap)
        drops.append(len(seating.dropped))
        empty.append(seating.empty)
        seatings.append(seating)
    check.equal("capacity per expert", caps, list(SPEC_CAPACITY))
    check.equal("dropped picks", drops, list(SPEC_DROPS))
    check.equal("empty (padded) seats", empty, list(SPEC_EMPTY))
    first = seatings[0]
    check.that(
        "every first choice fits at CF 1.0", bool(first.kept[:, 0].all()), "no first choice dropped", first.dropped
    )
    check.equal("drops at CF 1.0 = Σ max(0, load − capacity)", drops[0], int(np.maximum(load - caps[0], 0).sum()))
    check.that("drops never rise with CF", all(a >= b for a, b in itertools.pairwise(drops)), "non-increasing", drops)
    check.that(
        "padding never falls with CF", all(a <= b for a, b in itertools.pairwise(empty)), "non-decreasing", empty
    )
    dropped = [(engine.text[t], e) for t, e, _ in first.dropped]
    check.equal("dropped at CF 1.0", dropped, list(SPEC_DROPPED_AT_1))
    check.equal("all dropped picks are second choices", [r for _, _, r in first.dropped], [1] * len(first.dropped))
    lost_both = int((~first.kept).all(axis=1).sum())
    check.equal("tokens losing both experts", lost_both, 0)
    # A dropped pick adds nothing at combine; the token keeps its residual (identity experts, weights renormalised
    # over what was kept would be another convention: here the kept gate keeps its own weight).
    soft = router.gates(router.softmax(engine.logits), chosen)
    out = engine.x + np.einsum("tk,tk,td->td", soft, first.kept.astype(float), engine.x)
    for t, _e, r in first.dropped:
        check.close(
            f"「{engine.text[t]}」 keeps its residual and its kept expert's share",
            float(np.abs(out[t] - engine.x[t] * (1 + soft[t, 1 - r])).max()),
            0.0,
            abs=1e-12,
        )
    padded = empty[-1] / (caps[-1] * engine.experts)
    check.equal("padded share at CF 2.0", padded, 0.5)
    n_tokens, k, n_experts = engine.tokens, engine.top_k, engine.experts
    last_seats = f"{caps[-1]} × {n_experts} − {int(seatings[-1].filled.sum())}"
    return {
        "factors": _series(factors, 2).via("输入：本课自设的容量因子"),
        "capacities": _series(caps).via(f"⌈容量因子 × {n_tokens} × {k} / {n_experts}⌉"),
        "cap_first": number(caps[0]).via(f"⌈{factors[0]:g} × {n_tokens} × {k} / {n_experts}⌉"),
        "zero_factor": number(factors[drops.index(0)], 1).via("一个也不丢的最小容量因子"),
        "drops": _series(drops).via("先排第一志愿再排第二，坐不下的选择数"),
        "empty": _series(empty).via(f"容量 × {n_experts} − 坐下的选择数"),
        "mean": number(n_tokens * k / n_experts).via(f"{n_tokens} × {k} / {n_experts}"),
        "chosen": data(chosen.tolist()),
        "kept": data([s.kept.tolist() for s in seatings]),
        "dropped": data([[int(t), int(e)] for t, e, _ in first.dropped]),
        "dropped_count": _count(drops[0]).via(f"Σ max(0, 负载 − {caps[0]})，容量因子 {factors[0]:g}"),
        "dropped_text": Fact(
            dropped,
            "、".join(f"{c}→{e}" for c, e in dropped),
            "，".join(f"{c}去{numbers.zh_int(e)}号" for c, e in dropped),
        ).via(f"容量因子 {factors[0]:g} 时坐不下的选择：字→专家"),
        "lost_both": number(lost_both).via(f"{k} 个志愿都被丢掉的字数"),
        "padded": percent(padded, 0).via(f"({last_seats}) / ({caps[-1]} × {n_experts})"),
        "first_factor": number(factors[0], 1).via("输入：本课自设的容量因子"),
        "last_factor": number(factors[-1], 1).via("输入：本课自设的容量因子"),
        "last_empty": number(empty[-1]).via(last_seats),
        "text": Fact(engine.text, engine.text, engine.text).via("输入：示意句子", schematic=True),
    }


# -- moe_gate_gradient ---------------------------------------------------------------------

EXPERT_SEED, TARGET_SEED = 77, 78
FD_STEP = 1e-6
NONZERO = 1e-12  # a logit's gradient above this counts as moved (float noise is far below)
SPEC_RENORM = {0: -5.52, 3: 5.52}
SPEC_SOFTMAX = (-1.9712, -1.5304, -0.2259, 8.3587, -1.7435, -0.7570, -0.1897, -1.9411)


@CHAPTER.figure(
    "moe_gate_gradient",
    "反向：梯度只回到被选中的专家",
    source="学习笔记「moe f&b 计算流程」（前向与反向）；梯度为解析式，用中心差分核对；"
    "专家取 32×32 的随机线性映射、目标为随机向量：示意参数",
)
def moe_gate_gradient(check: Check, eps: float = FD_STEP, engine: router.Router | None = None) -> dict:
    engine = engine or router.make()
    d = engine.x.shape[1]
    maps = np.random.default_rng(EXPERT_SEED).standard_normal((engine.experts, d, d)) / math.sqrt(d)
    target = np.random.default_rng(TARGET_SEED).standard_normal(d)
    x, z = engine.x[TOKEN], _token_row(engine)
    chosen = router.top_k(z[None, :], engine.top_k)[0]
    outs = np.array([maps[e] @ x for e in chosen])  # each chosen expert's output for 「词」

    def loss(g: np.ndarray) -> float:
        y = g @ outs
        return 0.5 * float((y - target) @ (y - target))

    def renormalised(zz: np.ndarray) -> float:
        return loss(router.softmax(zz[chosen]))

    def unnormalised(zz: np.ndarray) -> float:
        return loss(router.softmax(zz)[chosen])

    def dl_dg(g: np.ndarray) -> np.ndarray:
        return outs @ (g @ outs - target)

    g_renorm = router.softmax(z[chosen])
    renorm = router.logit_grad_renormalised(z, chosen, dl_dg(g_renorm))
    g_full = router.softmax(z)[chosen]
    full = router.logit_grad_softmax(z, chosen, dl_dg(g_full))
    fd_renorm = check.residual(
        "renormalised: analytic − finite differences",
        float(np.abs(renorm - router.central_difference(renormalised, z, eps)).max()),
        1e-8,
    )
    fd_full = check.residual(
        "softmax over 8: analytic − finite differences",
        float(np.abs(full - router.central_difference(unnormalised, z, eps)).max()),
        1e-8,
    )
    for e, page in SPEC_RENORM.items():
        check.close(f"renormalised dL/dz, expert {e}", float(renorm[e]), page, abs=5e-4)
    for e, page in enumerate(SPEC_SOFTMAX):
        check.close(f"softmax dL/dz, expert {e}", float(full[e]), page, abs=5e-5)
    moved_renorm = int((np.abs(renorm) > NONZERO).sum())
    moved_full = int((np.abs(full) > NONZERO).sum())
    check.equal("logits with a gradient, renormalised", moved_renorm, engine.top_k)
    check.equal("logits with a gradient, softmax over 8", moved_full, engine.experts)
    check.close("the renormalised pair sums to 0", float(renorm.sum()), 0.0, abs=1e-12)
    # Each expert's weight gradient: dL/dA_e = g_e (y − t) xᵀ for a chosen expert, nothing for the rest.
    residual = g_renorm @ outs - target
    weight_grads = np.zeros(engine.experts)
    for g, e in zip(g_renorm, chosen):
        weight_grads[e] = float(np.linalg.norm(g * np.outer(residual, x)))
    idle = int((weight_grads == 0).sum())
    check.equal("experts with zero weight gradient", idle, engine.experts - engine.top_k)
    a, b = (int(e) for e in chosen)
    renorm_how = "gⱼ(∂L/∂gⱼ − Σᵢ gᵢ ∂L/∂gᵢ)，g = softmax(z{a}, z{b})，j = {j}"
    full_how = "Σᵢ ∂L/∂gᵢ · pᵢ(δᵢⱼ − pⱼ)，i ∈ {{{a}, {b}}}，p = softmax(z)"
    moved = f"|dL/dz| > {numbers.power(10, round(math.log10(NONZERO)))[0]} 的分数个数"
    return {
        "first": _expert(a).via("「词」的分数里最大的一项"),
        "second": _expert(b).via("「词」的分数里次大的一项"),
        "experts": _count(engine.experts).via("输入：示意参数", schematic=True),
        "chosen": data(chosen.tolist()),
        "gates": _series(g_renorm, 2).via(f"softmax(z{a}, z{b})：在选中的 {engine.top_k} 位里归一"),
        "renorm": data(renorm.tolist()),
        "renorm_up": number(float(renorm[a]), 2).via(renorm_how.format(a=a, b=b, j=a)),
        "renorm_down": number(float(renorm[b]), 2).via(renorm_how.format(a=a, b=b, j=b)),
        "renorm_size": number(float(abs(renorm[a])), 2).via(f"|dL/dz{a}|，一对之和为 0，两者大小相同"),
        "full": _series(full, 2).via(full_how.format(a=a, b=b) + "，j 取每一位"),
        "full_top": number(float(full[a]), 2).via(full_how.format(a=a, b=b) + f"，j = {a}"),
        "full_second": number(float(full[b]), 2).via(full_how.format(a=a, b=b) + f"，j = {b}"),
        "moved_renorm": _count(moved_renorm).via(f"{moved}，在选中的里归一"),
        "moved_full": _count(moved_full).via(f"{moved}，{engine.experts} 位一起 softmax"),
        "idle": _count(idle).via(f"{engine.experts} − {engine.top_k}：没被选中的专家，权重梯度为 0"),
        "weight_grads": data(weight_grads.tolist()),
        "fd_renorm": fd_renorm,
        "fd_full": fd_full,
        "eps": Fact(eps, "10⁻⁶", "十的负六次方").via("输入：本课自设的差分步长"),
    }


# -- moe_bias_balancing --------------------------------------------------------------------

GAMMA = 0.001  # V3 §4.2, the first 14.3T tokens
ALPHA = 0.0001  # V3 §4.2, the sequence-wise balance loss
MARKS = (0, 50, 100, 200)
SPEC_STEP0 = (64, 57, 6, 64, 139, 2, 76, 71, 6, 42, 10, 11, 39, 95, 117, 225)
SPEC_RATIOS = (3.5156, 2.7969, 1.7969, 1.2344)
LATE = 50
THRESHOLD = 1.5  # busiest / mean that counts as balanced enough, for the figure's marker


@CHAPTER.figure(
    "moe_bias_balancing",
    "不加损失的负载均衡：只改“选谁”，不改“权重”",
    source="DeepSeek-V3 技术报告 §2.1.2「Auxiliary-Loss-Free Load Balancing」式 16 与式 17–20；"
    "§4.2：γ = 0.001、α = 0.0001；"
    "示意参数：16 位专家、每步 512 个 token、400 步，token 分布故意偏斜，γ 取 V3 的 0.001",
)
def moe_bias_balancing(check: Check, gamma: float = GAMMA, steps: int = 400, tokens: int = 512) -> dict:
    run = router.balancing(gamma=gamma, steps=steps, tokens=tokens)
    mean = run.tokens * run.top_k / run.experts
    check.equal("mean load T·k/E", mean, 64.0)
    check.equal("loads add up to T·k every step", set(run.loads.sum(axis=1).tolist()), {run.tokens * run.top_k})
    check.equal("step-0 loads", run.loads[0].tolist(), list(SPEC_STEP0))
    ratios = run.loads.max(axis=1) / mean
    for step, page in zip(MARKS, SPEC_RATIOS):
        check.close(f"busiest / mean at step {step}", float(ratios[step]), page, abs=5e-5)
    late = float(ratios[-LATE:].mean())
    check.close(f"mean busiest / mean, last {LATE} steps", late, 1.2494, abs=5e-5)
    below = int(np.argmax(ratios < THRESHOLD))
    check.equal(f"first step below {THRESHOLD}", below, 106)
    check.that(
        f"late busiest / mean stays below {THRESHOLD}",
        bool((ratios[-LATE:] < THRESHOLD).all()),
        f"< {THRESHOLD}",
        float(ratios[-LATE:].max()),
    )
    bias = run.bias[-1]
    check.close("lowest bias after the run", float(bias.min()), -0.147, abs=5e-4)
    check.close("highest bias after the run", float(bias.max()), 0.197, abs=5e-4)
    # The last batch, routed with the bias the run ended with and without it.
    last = run.steps - 1
    aff = run.affinities(last)
    with_bias = router.top_k(aff + bias, run.top_k)
    without = router.top_k(aff, run.top_k)
    same = [set(a) == set(b) for a, b in zip(with_bias.tolist(), without.tolist())]
    changed = run.tokens - sum(same)
    check.equal("tokens whose pair the bias changed", changed, 341)
    g_with, g_without = router.gates(aff, with_bias), router.gates(aff, without)
    identical = all(
        dict(zip(with_bias[t].tolist(), g_with[t].tolist())) == dict(zip(without[t].tolist(), g_without[t].tolist()))
        for t in range(run.tokens)
        if same[t]
    )
    check.that(
        "gates of unchanged pairs are bit-identical", identical, "the bias is not in the gate formula", sum(same)
    )
    stat0 = router.balance_statistic(run.affinities(0), router.top_k(run.affinities(0), run.top_k))
    stat_end = router.balance_statistic(aff, with_bias)
    check.close("Σ fᵢPᵢ at step 0", stat0, 1.1715, abs=5e-5)
    check.close("Σ fᵢPᵢ at the end", stat_end, 1.0072, abs=5e-5)
    start_max = int(run.loads[0].max())
    changed_how = f"最后一批里，加偏置与不加时选出的 {run.top_k} 位不同的 token 数"
    return {
        "experts": number(run.experts).via("输入：示意参数", schematic=True),
        "tokens": number(run.tokens).via("输入：示意参数，每步的 token 数", schematic=True),
        "steps": number(run.steps).via("输入：示意参数，模拟的步数", schematic=True),
        "mean": number(mean).via(f"{run.tokens} × {run.top_k} / {run.experts}"),
        "gamma": number(gamma, 3).via("输入：V3 技术报告 §4.2 的偏置步长"),
        "alpha": number(ALPHA, 4).via("输入：V3 技术报告 §4.2 的序列级均衡系数"),
        "loads": data(run.loads.tolist()),
        "ratios": data(ratios.tolist()),
        "step0": _series(run.loads[0]).via("第一批（偏置全为零）每位专家被选的次数"),
        "start_max": number(start_max).via("第一批负载的最大值"),
        "start_min": _count(int(run.loads[0].min())).via("第一批负载的最小值"),
        "start_ratio": times(float(ratios[0]), 2).via(f"{start_max} / {mean:g}"),
        "marks": _series(MARKS).via("输入：本课挑出来看的几步"),
        "mark_ratios": _series([ratios[s] for s in MARKS], 2).via(f"这几步的最忙负载 / {mean:g}"),
        "late": times(late, 2).via(f"最后 {LATE} 步里，最忙负载 / {mean:g} 的平均"),
        "below": number(below).via(f"最忙负载 / {mean:g} 第一次低于 {THRESHOLD:g} 的那一步"),
        "bias_low": number(float(bias.min()), 3).via(f"{run.steps} 步后偏置的最小值；每步 b ± {gamma:g}"),
        "bias_high": number(float(bias.max()), 3).via(f"{run.steps} 步后偏置的最大值；每步 b ± {gamma:g}"),
        "bias": data(run.bias[::4].tolist()),
        "changed": _fraction(changed, run.tokens).via(f"{changed_how} / {run.tokens}"),
        "changed_count": number(changed).via(changed_how),
        "threshold": times(THRESHOLD, 1).via("输入：本课自设的门槛"),
        "kept": number(run.tokens - changed).via(f"{run.tokens} − {changed}"),
        "stat_start": number(stat0, 2).via("Σ fᵢPᵢ（V3 式 17–20，不乘 α），第一批"),
        "stat_end": number(stat_end, 2).via("Σ fᵢPᵢ（V3 式 17–20，不乘 α），最后一批、带偏置"),
    }
