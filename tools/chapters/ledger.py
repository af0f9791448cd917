"""Chapter 3b–5, ledger: the 16 bytes per parameter and what grows out of them."""

from __future__ import annotations

from tools import gpt, ledger, lora, numbers, step_memory, v3, zero
from tools.catalogue import Chapter
from tools.facts import Check, Fact, approx, data, myriad, number, percent, times

GIB = 2**30

CHAPTER = Chapter("ledger", "每参数 16 字节：训练一步的显存账")

# -- §3.1–§3.4 and the checkpoint: the ledger row and its variants ----------------


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------

# lora_ledger: the page puts 70 亿 into the ledger but its 0.124% needs LLaMA-7B's
# real 6,738,415,616 (figures.md D19); that model is used throughout. The page does
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
def lora_ledger(check: Check, model: lora.Llama = lora.LLAMA_7B, rank: int = LORA_RANK,
                matrices: tuple[str, ...] = LORA_MATRICES, cells: tuple = ledger.MIXED_ADAMW):
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
    page_n = 7e9  # D19: the ratio is the page's whichever N is put in
    check.close("ratio (N = 70 亿)", lora.resident_bytes(0, page_n, cells) / lora.resident_bytes(page_n, adapters, cells),
                LORA_PAGE["ratio"], abs=0.05)
    frozen_row = ledger.frozen(cells)
    check.that("frozen_row", [c.key for c in frozen_row] == ["weight"],
               "a frozen parameter keeps only its bf16 weight", [c.key for c in frozen_row])
    full_passes, lora_passes = lora.passes(0, params), lora.passes(params, adapters)
    check.close("full_passes", full_passes, 3.0)
    check.close("lora_passes", lora_passes, 2.0, abs=0.01)
    return {
        "width": number(model.width), "rank": number(rank), "layers": number(model.layers),
        "matrix_share": percent(matrix_share, 1),
        "adapters": myriad(adapters), "params": myriad(params, "亿", 1),
        "adapter_share": percent(adapters / params, 3),
        "row": ledger.as_fact(cells), "frozen_row": ledger.as_fact(frozen_row),
        "dropped": number(ledger.total(cells) - ledger.total(frozen_row), unit="B", unit_spoken="字节"),
        "full_gib": number(full / GIB, 1, "GiB", "吉字节"), "lora_gib": number(tuned / GIB, 1, "GiB", "吉字节"),
        "ratio": times(full / tuned, 1),
        "full_passes": times(full_passes), "lora_passes": approx(times(lora_passes)),
        "saved_compute": percent(1 - lora_passes / full_passes, 0),
    }


# zero_stages: ZeRO's Figure 1 example, per-GPU model states in decimal GB as the paper prints them.
ZERO_PAPER_GB = (120, 31.4, 16.6, 1.9)
ZERO_STAGE_NAMES = ("baseline", "p_os", "p_os_g", "p_os_g_p")


@CHAPTER.figure(
    "zero_stages",
    "ZeRO 三级：照账单的大小顺序去切",
    source="Rajbhandari 等，ZeRO，arXiv 1910.02054：§3 与 Figure 1（四个 GB 数）、§7.2（通信量）",
)
def zero_stages(check: Check, params: float = 7.5e9, gpus: int = 64, cells: tuple = ledger.MIXED_ADAMW):
    order = zero.cut_order(cells)
    check.equal("cut_order", [g.label for g in order], ["优化器状态", "梯度", "参数"])
    stages = zero.stages(cells)
    per_gpu = [zero.per_gpu_bytes(cells, params, gpus, sharded) / 1e9 for sharded in stages]
    k = ledger.optimizer_bytes(cells)
    closed = ((2 + 2 + k) * params, (2 + 2) * params + k * params / gpus,
              2 * params + (2 + k) * params / gpus, (2 + 2 + k) * params / gpus)
    facts = {}
    for name, computed, formula, paper in zip(ZERO_STAGE_NAMES, per_gpu, closed, ZERO_PAPER_GB):
        check.close(f"{name} (closed form)", computed, formula / 1e9)
        check.close(name, computed, paper, abs=0.05)
        facts[name] = number(computed, 0 if paper == int(paper) else 1, "GB", "吉字节")
        check.equal(f"{name} (as printed)", facts[name].text, f"{paper:g} GB")
    comm = [zero.communication(sharded) for sharded in stages]
    check.equal("communication", comm, [2, 2, 2, 3])
    for name, volume in zip(ZERO_STAGE_NAMES, comm):
        facts[f"comm_{name}"] = Fact(volume, f"{volume}Ψ", f"{numbers.zh_quantity(str(volume))}倍参数量")
    groups = [{"label": g.label, "keys": list(g.keys), "bytes": g.nbytes(cells), "text": f"{g.nbytes(cells)} B",
               "phases": list(g.phases)} for g in order]
    return facts | {
        "params": myriad(params, "亿"), "gpus": number(gpus), "row": ledger.as_fact(cells),
        "groups": data(groups), "optimizer_bytes": number(k, unit="B", unit_spoken="字节"),
        "gb": Fact(10**9, "10⁹", "十的九次方"),  # the paper's GB: decimal
    }


# peak_memory_timeline: the page's resident block and break-even, on its own inputs.
STEP_PAGE = {"resident_tib": 9.76, "sequences": 93.7, "tokens": 12.3e6, "weights_tib": 1.22,
             "optimizer_tib": 7.32, "activations_tib": 4.15, "recompute_gib": 106.75}


@CHAPTER.figure(
    "peak_memory_timeline",
    "四项叠上时间轴：谁在什么时候最大",
    source="每参数 16 B：ZeRO，arXiv 1910.02054；V3 配置：arXiv 2412.19437；激活为本课按算子自推",
)
def peak_memory_timeline(check: Check, params: float = v3.TOTAL_PARAMS, cells: tuple = ledger.MIXED_ADAMW,
                         recompute_gib: float = v3.full_recompute_gib()):
    timeline = step_memory.step(cells)
    check.close("params (from the config)", v3.total_weights(), params, rel=1e-3)
    tib = 1 / v3.TIB
    resident = params * ledger.total(cells) * tib
    weights = params * sum(c.nbytes for c in cells if c.key == "weight") * tib
    grads = params * sum(c.nbytes for c in cells if c.key == "grad") * tib
    optimizer = params * ledger.optimizer_bytes(cells) * tib
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
    check.that("peaks_differ", peaks["activations"] == timeline.forward_end and peaks["grads"] == timeline.backward_end,
               "activations peak at the end of forward, gradients at the end of backward", peaks)
    # At the moment the sum peaks, which item is largest: that is the one to act on (page §5).
    at_peak = timeline.t.index(timeline.peak_time(timeline.total()))
    items = ("weights", "grads", "optimizer", "activations")
    largest = max(items, key=lambda name: getattr(timeline, name)[at_peak])
    check.equal("largest_at_peak", largest, "optimizer")
    ticks = list(range(0, 13, 4))
    check.that("axis", max(timeline.total()) <= ticks[-1] + 2, "the sum fits under the top tick + 2 TiB", max(timeline.total()))
    return {
        "axis": data({"ticks": ticks, "labels": [numbers.signed(t) for t in ticks], "top": ticks[-1] + 2}),
        "largest_at_peak": data(largest),
        "timeline": data({"t": timeline.t, "weights": timeline.weights, "grads": timeline.grads,
                          "optimizer": timeline.optimizer, "activations": timeline.activations,
                          "forward_end": timeline.forward_end, "backward_end": timeline.backward_end,
                          "update_end": timeline.update_end}),
        "weights_tib": number(weights, 2, "TiB", "太字节"), "grads_tib": number(grads, 2, "TiB", "太字节"),
        "optimizer_tib": number(optimizer, 2, "TiB", "太字节"),
        "activations_tib": number(max(timeline.activations), 2, "TiB", "太字节"),
        "params": Fact(params, "671e9", numbers.zh_int(int(params))), "bytes": ledger.as_fact(cells),
        "tib": Fact(v3.TIB, "1024⁴", "一千零二十四的四次方"), "kib": Fact(1024, "1024", "一千零二十四"),
        "resident_tib": number(resident, 2, "TiB", "太字节"),
        "recompute_gib": number(recompute_gib, 2, "GiB", "吉字节"),
        "sequences": number(sequences, 1, "条", "条"), "sequences_round": approx(number(round(sequences), unit="条")),
        "seq": Fact(v3.SEQ, f"{v3.SEQ // 1024}K", f"{numbers.zh_int(v3.SEQ // 1024)}K"), "tokens": approx(myriad(tokens, significant=3)),
    }


# six_nd_underestimate: 6ND against attention's weight-free matmuls, one 128K sequence of V3.
SIX_ND_PAGE = {"six_nd_pflop": 29.1, "attention_share": 0.821, "corrected_pflop": 160, "gpt3_share": 0.0137}


@CHAPTER.figure(
    "six_nd_underestimate",
    "长序列上，6ND 严重低估",
    source="注意力占比为本课按算子自推（causal 折半口径）；V3 配置：arXiv 2412.19437；GPT-3：arXiv 2005.14165",
)
def six_nd_underestimate(check: Check, active: float = v3.ACTIVE_PARAMS, seq: int = v3.SEQ,
                         gpt3: gpt.Gpt = gpt.GPT3_175B):
    pflop = 1e-15
    forward = 2  # one multiply and one add per weight per token
    backward = 2 * forward  # §1.3: two matmuls back, input gradient and weight gradient
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
        "active": myriad(active, "亿"), "tokens": number(seq),
        "six": number(forward + backward), "forward_flops": number(forward), "backward_flops": number(backward),
        "six_nd": number(six_nd, 1, "PFLOP", " PFLOP"),
        "attention_share": percent(share, 1), "weight_share": percent(1 - share, 1),
        "multiplier": times(multiplier, 1),
        "corrected": approx(number(corrected, 1, "PFLOP", " PFLOP")),
        "per_operator": number(per_operator, 1, "PFLOP", " PFLOP"),
        "gap": percent(abs(corrected - per_operator) / per_operator, 0),
        "gpt3_seq": number(gpt3.context), "gpt3_share": percent(gpt3_share, 2),
        "seq": Fact(seq, f"{seq // 1024}K", f"{numbers.zh_int(seq // 1024)}K"),
    }


# worked_125m: GPT-3 Small (Table 2.1, first row) on one GPU, batch 8 × 1,024 tokens.
WORKED_PAGE = {"weights_gib": 0.23, "optimizer_gib": 1.40, "resident_gib": 1.86, "kept_per_layer": 11_520,
               "layer_kib": 22.5, "token_kib": 270, "activations_gib": 2.11, "recompute_gib": 0.32,
               "saving": 6.7, "total_keep": 3.97, "total_recompute": 2.18, "params": 1.25e8}


@CHAPTER.figure(
    "worked_125m",
    "同一张账，缩到你能自己跑的小模型",
    source="模型形状取自 GPT-3 论文表 2.1 第一行（arXiv 2005.14165）；各项按本页口径自算",
)
def worked_125m(check: Check, model: gpt.Gpt = gpt.GPT3_SMALL, batch: int = 8, seq: int = 1024,
                cells: tuple = ledger.MIXED_ADAMW):
    params = model.params()
    check.close("params", params, WORKED_PAGE["params"], rel=0.002)
    bytes_of = {key: sum(c.nbytes for c in cells if c.key == key) for key in ("weight", "grad")}
    weights = params * bytes_of["weight"] / gpt.GIB
    grads = params * bytes_of["grad"] / gpt.GIB
    optimizer = params * ledger.optimizer_bytes(cells) / gpt.GIB
    resident = params * ledger.total(cells) / gpt.GIB
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
    check.that("activations_exceed_resident", activations > resident,
               "activations larger than weights + gradients + optimizer state", (activations, resident))
    recompute = model.full_recompute_bytes(tokens) / gpt.GIB
    check.close("recompute_gib", recompute, WORKED_PAGE["recompute_gib"], abs=0.005)
    check.close("saving", activations / recompute, WORKED_PAGE["saving"], abs=0.05)
    check.close("total_keep", resident + activations, WORKED_PAGE["total_keep"], abs=0.005)
    check.close("total_recompute", resident + recompute, WORKED_PAGE["total_recompute"], abs=0.005)
    gib = {"unit": "GiB", "unit_spoken": "吉字节"}
    facts = {f"kept_{i}": number(width) for i, (_label, width) in enumerate(model.kept_widths())}
    return facts | {
        "layers": number(model.layers), "width": number(model.width), "vocab": number(model.vocab),
        "per_layer": number(gpt.PER_LAYER),
        "context": number(model.context), "params_exact": number(params), "params": myriad(params, "亿", 2),
        "batch": number(batch), "seq": number(seq), "tokens": number(tokens),
        "kept_labels": data([label for label, _w in model.kept_widths()]),
        "row": ledger.as_fact(cells), "optimizer_bytes": number(ledger.optimizer_bytes(cells), unit="B", unit_spoken="字节"),
        "weights_gib": number(weights, 2, **gib), "grads_gib": number(grads, 2, **gib),
        "optimizer_gib": number(optimizer, 2, **gib), "resident_gib": number(resident, 2, **gib),
        "resident_ratio": times(resident / weights),
        "kept_per_layer": number(kept), "layer_kib": number(layer_kib, 1, "KiB", "K字节"),
        "token_kib": number(model.layers * layer_kib, 0, "KiB", "K字节"),
        "activations_gib": number(activations, 2, **gib), "recompute_gib": number(recompute, 2, **gib),
        "saving": times(activations / recompute, 1),
        "total_keep": number(resident + activations, 2, **gib),
        "total_recompute": number(resident + recompute, 2, **gib),
        "passes_keep": times(3), "passes_recompute": times(4), "extra_compute": percent(1 / 3, 0, plus=True),
    }
