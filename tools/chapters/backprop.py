"""Chapter 1 in play order (专题四), backprop: why a backward pass costs 3x and keeps activations."""

from __future__ import annotations

import math

import numpy as np

from tools.course import numbers
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, data, number, scientific
from tools.models import chain, circuit, grad_path, gradients, timespan, v3

CHAPTER = Chapter(
    "backprop",
    "反向传播：三倍算力与扔不掉的激活",
    summary=(
        "exchange rate, finite differences, the first gradient, 3B1B's nudges, "
        "two matmuls per layer, the gates circuit, vanishing gradients, forward vs reverse mode, "
        "the activation mountain, the gradient's journey, batch vs communication"
    ),
)


def _decimals(value: float) -> int:
    """Digits a made-up factor needs on screen: 2 -> '2', 0.5 -> '0.5'."""
    return 0 if float(value).is_integer() else 1


def _plus(value: float, digits: int) -> Fact:
    """A signed difference, '+0.2' / 正零点二 or '−0.7' / 负零点七."""
    fact = number(value, digits)
    if value <= 0 or float(fact.text.replace(",", "")) == 0:
        return fact
    return Fact(value, "+" + fact.text, "正" + fact.spoken)


def _count(n: int) -> Fact:
    """A count before a measure word: 2 is said 两 (两次), not 二."""
    fact = number(n)
    return Fact(n, fact.text, "两") if n == 2 else fact


def _shape(array: np.ndarray) -> Fact:
    rows, cols = array.shape
    return Fact((rows, cols), f"{rows}×{cols}", f"{numbers.zh_int(rows)}乘{numbers.zh_int(cols)}")


# exchange_rate: the page's made-up numbers (示意数): a nudge 5.00 -> 5.03
# and a chain of three links. Panel A's function is the chain's first link.
EXCHANGE_NUDGE = (5.00, 5.03)
EXCHANGE_LINKS = (2.0, 0.5, 3.0)
EXCHANGE_PAGE_TOTAL = 3.0


@CHAPTER.figure(
    "exchange_rate",
    "三个词：导数是兑换率",
    source="课程页 §1 开篇「三个词、一张图」；本课自拟示意图，数字为编出来的示意数",
)
def exchange_rate(check: Check, nudge: tuple[float, float] = EXCHANGE_NUDGE, links: tuple[float, ...] = EXCHANGE_LINKS):
    before, after = [nudge[0]], [nudge[1]]
    for factor in links:  # push both values through every link of the chain
        before.append(before[-1] * factor)
        after.append(after[-1] * factor)
    moved = [b - a for a, b in zip(before, after)]
    rates = [moved[i + 1] / moved[i] for i in range(len(links))]  # difference quotients
    for i, (rate, factor) in enumerate(zip(rates, links), 1):
        check.close(f"link_{i} (difference quotient)", rate, factor)
    total = moved[-1] / moved[0]
    check.close("total", total, EXCHANGE_PAGE_TOTAL)
    check.close("total is the product of the links", total, float(np.prod(links)))
    check.that(
        "one link shrinks",
        any(f < 1 for f in links),
        "at least one link below 1, so multiplying is not read as growing",
        links,
    )
    made_up = "输入：编出来的示意数"
    link = [
        number(f, _decimals(f)).via(f"{made_up}，第 {i} 环的兑换率", schematic=True) for i, f in enumerate(links, 1)
    ]
    shown = [number(m, 2) for m in moved]
    x_before = number(before[0], 2).via(f"{made_up}，推之前的输入", schematic=True)
    x_after = number(after[0], 2).via(f"{made_up}，推之后的输入", schematic=True)
    facts = {
        "x_before": x_before,
        "x_after": x_after,
        "y_before": number(before[1], 2).via(f"{x_before} × {link[0]}"),
        "y_after": number(after[1], 2).via(f"{x_after} × {link[0]}"),
        "rate_a": number(rates[0], _decimals(links[0])).via(f"差商：{shown[1]} ÷ {shown[0]}"),
        "total": number(total, _decimals(EXCHANGE_PAGE_TOTAL)).via(
            f"{shown[-1]} ÷ {shown[0]} = {' × '.join(f.text for f in link)}"
        ),
        "link_count": _count(len(links)).via(f"链上的环节数：{' × '.join(f.text for f in link)}"),
        "moved_0": shown[0].via(f"{x_after} − {x_before}"),
    }
    facts |= {
        f"moved_{i}": shown[i].via(f"上一级的变化 × 这一环：{shown[i - 1]} × {link[i - 1]}")
        for i in range(1, len(shown))
    }
    facts |= {f"link_{i}": f for i, f in enumerate(link, 1)}
    facts["shrinking_link"] = data([i for i, f in enumerate(links, 1) if f < 1])
    return facts


# finite_differences: 三千亿 parameters is the model scale the page carries over
# from topic 1 (one scale on screen, as in forward_vs_reverse_mode).
FD_PARAMETERS = 300_000_000_000
FD_SECONDS_PER_FORWARD = 1.0
FD_PAGE_YEARS = 9506  # the page's count (docs/figures.md#finite_differences)
FD_COUNTER = (1, 2, 3, *(10**k for k in range(1, 12)))  # the counter's stops before the last
FD_NEARLY = (9_000, 10_000)  # 将近一万年: the count lies between these


def _span(seconds: float) -> Fact:
    size, shown, spoken = timespan.unit_for(seconds)
    amount = seconds / size
    return number(amount, 1 if amount < 100 and not amount.is_integer() else 0, shown, spoken)


@CHAPTER.figure(
    "finite_differences",
    "笨办法：一个参数，重跑一遍前向",
    source="课程页 §1.1；三千亿为专题一定下的模型规模，一次前向按一秒算",
)
def finite_differences(
    check: Check, parameters: int = FD_PARAMETERS, seconds_per_forward: float = FD_SECONDS_PER_FORWARD
):
    seconds = parameters * seconds_per_forward  # one forward per nudged parameter
    years = timespan.years(seconds)
    low, high = FD_NEARLY
    check.that(
        "nearly ten thousand years", low < years < high, f"将近一万年: between {low:,} and {high:,} years", years
    )
    check.close("years", years, FD_PAGE_YEARS, abs=0.5)
    check.close("years (calendar count)", timespan.calendar_years(seconds), years, abs=1.0)
    stops = [n for n in FD_COUNTER if n < parameters] + [parameters]
    counter = [
        {"parameters": numbers.signed(n), "elapsed": _span(n * seconds_per_forward).text, "share": n / parameters}
        for n in stops
    ]
    shown_years = number(years, 0, "年")
    return {
        "parameters": Fact(parameters, numbers.zh_large(parameters), numbers.zh_large(parameters)).via(
            "输入：专题一定下的模型规模"
        ),
        "seconds_per_forward": number(seconds_per_forward, 0, "秒").via("输入：本课设定，一次前向按这么久算"),
        "seconds": scientific(seconds, 0).via(
            f"每个参数一次前向：{numbers.signed(parameters)} × {numbers.signed(seconds_per_forward)} 秒"
        ),
        "year_seconds": number(timespan.JULIAN_YEAR, 0, "秒").via(
            f"儒略年：{numbers.signed(timespan.JULIAN_YEAR / timespan.DAY, 2)} × {numbers.signed(timespan.DAY)} 秒"
        ),
        "years": shown_years.via(f"{scientific(seconds, 0)} 秒 ÷ {numbers.signed(timespan.JULIAN_YEAR)} 秒"),
        "nearly": Fact(high, "将近一万年", "将近一万年").via(f"{shown_years} 落在 {low:,} 与 {high:,} 年之间"),
        "counter": data(counter),
    }


# first_gradient: the page's example: 「的」 0.3, 「了」 0.2 …; which
# character is the truth is ours (RECON), as are the logits that give it.
NEXT_CHARS = ("的", "了", "是", "在", "和")
NEXT_LOGITS = (2.0, 1.6, 1.6, 1.6, 0.9)
NEXT_TARGET = 0  # 「的」
NEXT_PAGE_P = {"的": "0.3", "了": "0.2"}


@CHAPTER.figure(
    "first_gradient",
    "第一个梯度：你猜的，减去正确答案",
    source="课程页 §1.2：softmax ＋ 交叉熵的经典结果；字与概率为示意",
)
def first_gradient(check: Check, logits: tuple[float, ...] = NEXT_LOGITS, target: int = NEXT_TARGET):
    z = np.array(logits, dtype=float)
    p = gradients.softmax(z)
    y = np.eye(len(z))[target]
    seed = gradients.cross_entropy_logit_gradient(z, target)
    numeric = gradients.numeric_gradient(lambda v: gradients.cross_entropy(v, target), z)
    fd_error = check.residual("p − y (finite differences on the logits)", float(np.max(np.abs(numeric - seed))), 1e-8)
    check.close("p − y", float(np.max(np.abs(seed - (p - y)))), 0.0, abs=1e-15)
    check.close("seed sums to zero", float(seed.sum()), 0.0, abs=1e-12)
    p_text = [number(v, 1).text for v in p]
    for char, page in NEXT_PAGE_P.items():
        check.equal(f"p({char})", p_text[NEXT_CHARS.index(char)], page)
    check.that(
        "truth is pushed up, the rest down",
        seed[target] < 0 and all(g > 0 for i, g in enumerate(seed) if i != target),
        "p − y negative on the truth, positive elsewhere",
        seed.tolist(),
    )
    truth = NEXT_CHARS[target]
    facts = {
        "chars": data(list(NEXT_CHARS)),
        "target_char": Fact(truth, truth, truth).via("输入：示意，这一句的下一个字", schematic=True),
        "loss": number(gradients.cross_entropy(z, target), 2).via(f"−ln p（{truth}）= −ln {p[target]:.3f}"),
        "fd_error": fd_error,
        "logit_values": data(z.tolist()),
        "seed_values": data(seed.tolist()),
    }
    for i in range(len(z)):
        logit, p_i, y_i = number(z[i], 1), number(p[i], 1), number(y[i])
        hot = "是" if i == target else "不是"
        facts |= {
            f"logit_{i}": logit.via(f"输入：示意，「{NEXT_CHARS[i]}」的打分", schematic=True),
            f"p_{i}": p_i.via(f"softmax：exp({logit}) ÷ Σ exp(各字打分)"),
            f"y_{i}": y_i.via(f"one-hot：「{NEXT_CHARS[i]}」{hot}正确答案"),
            f"seed_{i}": _plus(seed[i], 1).via(f"p − y = {p[i]:.3f} − {y_i}"),
        }
    return facts


# backprop_nudge_3b1b: number-free. Arrow lengths and line widths are drawn
# from a real output layer z = W a + b: four upstream neurons (brightness and
# weights are ours), the bias set so that z is first_gradient's logits, and
# three contexts that each want their own next character.
NUDGE_UPSTREAM = (0.9, 0.15, 0.55, 0.3)
NUDGE_WEIGHTS = (  # one row per next character, one column per upstream neuron
    (0.8, -0.6, 0.5, -0.4),
    (-0.3, 0.7, 0.2, 0.5),
    (0.4, 0.3, -0.6, 0.2),
    (-0.5, 0.2, 0.4, -0.3),
    (0.1, -0.4, 0.3, 0.6),
)
NUDGE_CONTEXTS = (("这是我", "的"), ("我吃完", "了"), ("他正", "在"))


@CHAPTER.figure(
    "backprop_nudge_3b1b",
    "反向传播到底在干嘛：推一下",
    source="3Blue1Brown《What is backpropagation really doing?》，本课重画；接到 §1.6、§1.8 是本课的引申",
)
def backprop_nudge_3b1b(
    check: Check,
    upstream: tuple[float, ...] = NUDGE_UPSTREAM,
    weights: tuple[tuple[float, ...], ...] = NUDGE_WEIGHTS,
    contexts: tuple[tuple[str, str], ...] = NUDGE_CONTEXTS,
):
    a, w = np.array(upstream), np.array(weights)
    bias = np.array(NEXT_LOGITS) - w @ a  # the prediction of first_gradient
    target = NEXT_CHARS.index(contexts[0][1])

    def loss(w_, b_, a_):
        return gradients.cross_entropy(w_ @ a_ + b_, target)

    # Backprop's answers (minus the gradient: the way each knob wants to move) ...
    wish = -gradients.cross_entropy_logit_gradient(w @ a + bias, target)
    weight_wish = np.outer(wish, a)
    previous_wish = w.T @ wish  # every output's request, added up
    # ... against nudging each knob and rerunning the loss.
    for name, analytic, numeric in (
        (
            "nudge ∝ how far off (bias, finite differences)",
            wish,
            -gradients.numeric_gradient(lambda v: loss(w, v, a), bias),
        ),
        ("weights (finite differences)", weight_wish, -gradients.numeric_gradient(lambda v: loss(v, bias, a), w)),
        (
            "previous activations (finite differences)",
            previous_wish,
            -gradients.numeric_gradient(lambda v: loss(w, bias, v), a),
        ),
    ):
        check.close(name, float(np.max(np.abs(analytic - numeric))), 0.0, abs=1e-8)
    p = gradients.softmax(w @ a + bias)
    check.that(
        "the truth is pushed up, the rest down",
        wish[target] > 0 and (np.delete(wish, target) < 0).all(),
        "a positive push on the truth, negative on every other character",
        wish.tolist(),
    )
    into_target = weight_wish[target]
    check.that(
        "weight change ∝ upstream activation",
        np.argmax(into_target) == np.argmax(a) and np.allclose(into_target, wish[target] * a),
        "the weight from the brightest upstream neuron changes most, in proportion",
        into_target.tolist(),
    )
    wishes = [-gradients.cross_entropy_logit_gradient(w @ a + bias, NEXT_CHARS.index(char)) for _c, char in contexts]
    average = np.mean(wishes, axis=0)
    for (context, char), own in zip(contexts, wishes):
        i = NEXT_CHARS.index(char)
        check.that(
            f"average does not please {context}",
            average[i] < own[i],
            "the averaged push on each example's truth is smaller than its own",
            (average[i], own[i]),
        )
    return {
        "chars": data(list(NEXT_CHARS)),
        "contexts": data([list(c) for c in contexts]),
        "brightness": data(p.tolist()),
        "upstream": data(a.tolist()),
        "wish": data(wish.tolist()),
        "weight_nudge": data(into_target.tolist()),
        "target_request": data((w[target] * wish[target]).tolist()),
        "previous_nudge": data(previous_wish.tolist()),
        "wishes": data([v.tolist() for v in wishes]),
        "average": data(average.tolist()),
    }


# layer_two_matmuls: one linear layer Y = X W on 4 tokens, input width 3,
# output width 2, loss ½‖Y − T‖²; the values are a seeded draw.
LAYER_SHAPE = {"tokens": 4, "inputs": 3, "outputs": 2}
LAYER_SEED = 4


@CHAPTER.figure(
    "layer_two_matmuls",
    "每层往回只做两件事",
    source="课程页 §1.3；①② 编号依 LoRA 一节；小例子的数值随机生成，两个梯度已用有限差分核对",
)
def layer_two_matmuls(
    check: Check, shape: dict[str, int] = LAYER_SHAPE, seed: int = LAYER_SEED, keep_input: bool = True
):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(shape["tokens"], shape["inputs"]))
    w = rng.normal(size=(shape["inputs"], shape["outputs"]))
    truth = rng.normal(size=(shape["tokens"], shape["outputs"]))
    forward, backward = gradients.Tape(), gradients.Tape()
    y = gradients.linear_forward(x, w, forward)
    upstream = gradients.squared_error_gradient(y, truth)
    stored = x if keep_input else np.zeros_like(x)  # what forward left behind for the way back
    grad_input, grad_weight = gradients.linear_backward(upstream, stored, w, backward)

    check.equal("upstream has the output's shape", upstream.shape, y.shape)
    check.equal("① input gradient has the input's shape", grad_input.shape, x.shape)
    check.equal("② weight gradient has the weight's shape", grad_weight.shape, w.shape)

    def loss_of_x(v):
        return gradients.squared_error(gradients.linear_forward(v, w, gradients.Tape()), truth)

    def loss_of_w(v):
        return gradients.squared_error(gradients.linear_forward(x, v, gradients.Tape()), truth)

    for name, analytic, numeric in (
        ("① input gradient (finite differences)", grad_input, gradients.numeric_gradient(loss_of_x, x)),
        ("② weight gradient (finite differences)", grad_weight, gradients.numeric_gradient(loss_of_w, w)),
    ):
        check.close(name, float(np.max(np.abs(analytic - numeric))), 0.0, abs=1e-6)
    check.equal("forward matmuls", forward.matmuls, 1)
    check.equal("backward matmuls", backward.matmuls, 2)
    check.equal("② multiplies the stored input", backward.log[1][0], x.T.shape)
    ratio = (forward.flops + backward.flops) / forward.flops
    check.close("forward + backward = 3× forward (matmul FLOPs)", ratio, 3.0)
    x_shape, w_shape, up_shape = _shape(x), _shape(w), _shape(upstream)
    wt_shape, xt_shape = _shape(w.T), _shape(x.T)
    return {
        "x_shape": x_shape.via("输入：本课自设的小例子，token 数 × 输入宽", schematic=True),
        "w_shape": w_shape.via("输入：本课自设的小例子，输入宽 × 输出宽", schematic=True),
        "y_shape": _shape(y).via(f"Y = X W：({x_shape})({w_shape})"),
        "upstream_shape": up_shape.via("∂L/∂Y = Y − T，与输出 Y 同形"),
        "wt_shape": wt_shape.via(f"Wᵀ：{w_shape} 转置"),
        "xt_shape": xt_shape.via(f"Xᵀ：{x_shape} 转置"),
        "grad_input_shape": _shape(grad_input).via(f"① ∂L/∂Y · Wᵀ：({up_shape})({wt_shape})"),
        "grad_weight_shape": _shape(grad_weight).via(f"② Xᵀ · ∂L/∂Y：({xt_shape})({up_shape})"),
        "x": data(x.tolist()),
        "w": data(w.tolist()),
        "y": data(y.tolist()),
        "upstream": data(upstream.tolist()),
        "grad_input": data(grad_input.tolist()),
        "grad_weight": data(grad_weight.tolist()),
        "forward_matmuls": _count(forward.matmuls).via("构建时数出的矩阵乘：Y = X W"),
        "backward_matmuls": _count(backward.matmuls).via("构建时数出的矩阵乘：① 与 ②"),
        "all_matmuls": _count(forward.matmuls + backward.matmuls).via(
            f"前向 {forward.matmuls} 次 + 反向 {backward.matmuls} 次"
        ),
        "ratio": number(ratio).via(
            f"(前向 + 反向) ÷ 前向 FLOPs = ({forward.flops} + {backward.flops}) ÷ {forward.flops}"
        ),
        "flops_each": number(forward.flops).via(
            f"2 × {shape['tokens']} × {shape['inputs']} × {shape['outputs']}（一次乘加算 2 次）"
        ),
    }


# gates_circuit: f = max(a + b, d) * c. The page fixes only the three
# gradients; these inputs are ours, chosen so that every gate acts.
GATES = [
    circuit.Gate("add", "q", ("a", "b")),
    circuit.Gate("max", "m", ("q", "d")),
    circuit.Gate("mul", "f", ("m", "c")),
]
GATES_INPUTS = {"a": 1.0, "b": -2.0, "c": 4.0, "d": -3.0}
GATES_PAGE_GRADIENTS = {"a": 4.0, "b": 4.0, "c": -1.0}


@CHAPTER.figure(
    "gates_circuit",
    "电路图与三个门：分发、交换、路由",
    source="讲法取自 CS231n《Backpropagation, Intuitions》讲义；电路与数字为本课自拟",
)
def gates_circuit(check: Check, inputs: dict[str, float] = GATES_INPUTS):
    values = circuit.forward(GATES, inputs)
    grads = circuit.backward(GATES, values)
    numeric = circuit.finite_differences(GATES, inputs)
    for name, page_value in GATES_PAGE_GRADIENTS.items():
        check.close(f"grad_{name}", grads[name], page_value)
    for name in inputs:
        check.close(f"grad_{name} (finite differences)", numeric[name], grads[name], abs=1e-6)
    check.that(
        "max gate routes",
        grads["d"] == 0 and grads["q"] != 0,
        "the losing input of max gets 0, the winner the whole gradient",
        f"winner {grads['q']}, loser {grads['d']}",
    )
    facts = {name: number(value) for name, value in values.items()}
    facts |= {f"grad_{name}": number(value) for name, value in grads.items()}
    facts = {name: fact.via(_gate_how(name, facts)) for name, fact in facts.items()}
    facts["input_count"] = number(len(inputs)).via(f"电路的输入：{'、'.join(inputs)}")
    facts["gate_count"] = number(len(GATES)).via(f"电路的门：{'、'.join(_GATE_NAMES[g.kind] for g in GATES)}")
    return facts


_GATE_NAMES = {"add": "加法", "max": "取最大", "mul": "乘法"}


def _gate_how(name: str, facts: dict[str, Fact]) -> str:
    """How gates_circuit's value or gradient `name` comes about, read off the circuit and the shown numbers."""
    if not name.startswith("grad_"):
        gate = next((g for g in GATES if g.output == name), None)
        if gate is None:
            return "输入：本课自拟的电路输入"
        x, y = (facts[i].text for i in gate.inputs)
        return {"add": f"{x} + ({y})", "max": f"max({x}, {y})", "mul": f"{x} × {y}"}[gate.kind]
    node = name.removeprefix("grad_")
    if node == GATES[-1].output:
        return "输出对自己的导数，反向的起点"
    gate = next(g for g in GATES if node in g.inputs)
    upstream = facts[f"grad_{gate.output}"].text
    other = gate.inputs[1 - gate.inputs.index(node)]
    if gate.kind == "add":
        return f"加法门分发：原样拿到 {upstream}"
    if gate.kind == "mul":
        return f"乘法门交换：另一路的值 × 传回的 = {facts[other].text} × {upstream}"
    won = facts[node].value >= facts[other].value
    return f"取最大门路由：{'赢' if won else '输'}了（{facts[node].text} 对 {facts[other].text}），" + (
        f"拿到全部 {upstream}" if won else "拿到 0"
    )


# vanishing_gradients: one factor per layer, multiplied over depth.
# The exponent 59 is the page's (an explicit input). The frame limits
# are ours (RECON): a log axis from 10⁻³ to 10³.
DEPTH_LINKS = 59
DEPTH_FACTORS = (0.8, 1.0, 1.2)
DEPTH_DECADES = (-3, 3)
DEPTH_SAMPLES = 10_000
DEPTH_PAGE = {"shrink_end": "1.9×10⁻⁶", "grow_end": "46,956", "decades": 10, "sigmoid_max": 0.25}
# The history the page tells: found in 1991, "three years later"
# the 1994 paper, "ten years later" the joint chapter of 2001.
DEPTH_YEARS = {"year_thesis": 1991, "year_paper": 1994, "year_joint": 2001}
DEPTH_YEARS_WHAT = {
    "year_thesis": "Hochreiter 硕士论文",
    "year_paper": "Bengio、Simard、Frasconi 论文",
    "year_joint": "四人合写一章",
}


@CHAPTER.figure(
    "vanishing_gradients",
    "梯度消失与爆炸：把一串因子乘起来",
    source="Hochreiter 1991 硕士论文；Bengio, Simard, Frasconi 1994, IEEE TNN 5(2)；Hochreiter、Bengio 等四人 2001",
)
def vanishing_gradients(
    check: Check,
    factors: tuple[float, float, float] = DEPTH_FACTORS,
    links: int = DEPTH_LINKS,
    decades: tuple[int, int] = DEPTH_DECADES,
    samples: int = DEPTH_SAMPLES,
):
    shrink, flat, grow = factors
    check.that("factors", shrink < 1 == flat < grow, "one factor below 1, one equal to 1, one above", factors)
    curves = {f: chain.running_products(f, links) for f in factors}
    for name, f in (("shrink_end", shrink), ("grow_end", grow)):
        check.close(f"{name} (closed form)", curves[f][-1], f**links, rel=1e-12)
    shrink_end, grow_end = scientific(curves[shrink][-1]), number(curves[grow][-1])
    check.equal("shrink_end", shrink_end.text, DEPTH_PAGE["shrink_end"])
    check.equal("grow_end", grow_end.text, DEPTH_PAGE["grow_end"])
    gap = math.log10(curves[grow][-1] / curves[shrink][-1])
    check.that("decades", gap >= DEPTH_PAGE["decades"], f"at least {DEPTH_PAGE['decades']} decades apart", gap)

    floor, ceiling = 10.0 ** decades[0], 10.0 ** decades[1]
    exit_layer = chain.first_above(curves[grow], ceiling)
    vanish_layer = chain.first_below(curves[shrink], floor)
    check.that(
        "exit_layer",
        exit_layer is not None and exit_layer < links,
        f"the growing curve leaves the frame (above {ceiling:g}) before layer {links}",
        exit_layer,
    )
    check.that(
        "vanish_layer",
        vanish_layer is not None and vanish_layer < links,
        f"the shrinking curve falls under the floor ({floor:g}) before layer {links}",
        vanish_layer,
    )
    check.equal("exit_layer (closed form)", chain.crossing_layer(grow, ceiling), exit_layer)
    check.equal("vanish_layer (closed form)", chain.crossing_layer(shrink, floor), vanish_layer)
    check.that("flat curve", all(p == 1.0 for p in curves[flat]), "the factor-1 curve stays at 1", curves[flat][-1])

    peak_x, closed_max = chain.sigmoid_slope_ceiling()
    check.close("sigmoid_max", closed_max, DEPTH_PAGE["sigmoid_max"])
    sample_x, sample_max = chain.sampled_ceiling(samples)
    check.close("sigmoid_max (samples)", sample_max, closed_max, abs=1e-6)
    check.that("sigmoid_max (samples)", sample_max <= closed_max, "no sample above the closed-form maximum", sample_max)
    check.close("sigmoid_argmax (samples)", sample_x, peak_x, abs=20 / samples)
    peak_sigma = float(chain.sigmoid(peak_x))
    curve_x = np.linspace(-6, 6, 121)

    years = DEPTH_YEARS
    check.equal("year_paper (三年后)", years["year_paper"] - years["year_thesis"], 3)
    check.equal("year_joint (十年后)", years["year_joint"] - years["year_thesis"], 10)

    ticks = [Fact(10.0**e, *numbers.power(10, e)) for e in range(decades[0], decades[1] + 1)]
    history = {
        name: Fact(year, f"{year} 年", f"{numbers.zh_digits(str(year))}年").via(f"输入：{DEPTH_YEARS_WHAT[name]}的年份")
        for name, year in years.items()
    }
    tick_ratio = ticks[1].value / ticks[0].value
    factor = [number(f, 1).via("输入：每层的因子（示意）", schematic=True) for f in factors]
    return history | {
        "paper_after": number(years["year_paper"] - years["year_thesis"]).via(
            f"{years['year_paper']} − {years['year_thesis']}"
        ),
        "tick_ratio": number(tick_ratio).via(f"对数轴相邻两格之比：{ticks[1].text} ÷ {ticks[0].text}"),
        "links": number(links).via("输入：页面给的层数"),
        "f_shrink": factor[0],
        "f_flat": factor[1],
        "f_grow": factor[2],
        "curves": data({"shrink": curves[shrink], "flat": curves[flat], "grow": curves[grow]}),
        "decade_ticks": data(
            [{"exponent": e, "text": t.text} for e, t in zip(range(decades[0], decades[1] + 1), ticks)]
        ),
        "layer_ticks": data([{"layer": k, "text": number(k).text} for k in (*range(0, links, 10), links)]),
        "ceiling": ticks[-1].via("输入：画框上沿（本课自设）"),
        "floor": ticks[0].via("输入：画框下沿（本课自设）"),
        "exit_layer": number(exit_layer).via(f"最小的 n，使 {factor[2]}ⁿ > {ticks[-1].text}"),
        "vanish_layer": number(vanish_layer).via(f"最小的 n，使 {factor[0]}ⁿ < {ticks[0].text}"),
        "shrink_end": shrink_end.via(f"{factor[0]}{numbers.superscript(links)}"),
        "grow_end": grow_end.via(f"{factor[2]}{numbers.superscript(links)}"),
        "decades": number(math.floor(gap)).via(f"⌊log₁₀({grow_end} ÷ {shrink_end})⌋"),
        "sigmoid_max": number(closed_max, 2).via(
            f"σ(x)(1 − σ(x)) 在 x = {numbers.signed(peak_x)} 处最大：{peak_sigma:g} × (1 − {peak_sigma:g})"
        ),
        "samples": number(samples).via("输入：复核用的采样点数（本课自设）"),
        "sigmoid_curve": data({"x": curve_x.tolist(), "y": chain.sigmoid_slope(curve_x).tolist()}),
    }


# forward_vs_reverse_mode: the same chain walked from either end.
# Structure, not data: the one quantity shown is the model scale the course
# set earlier, 三千亿 parameters (V3 itself has 671B; finite_differences uses the same scale). The
# small random chain checks the claim itself: both ends give the same
# gradient; passes = inputs from the front, outputs from the back.
MODES_PARAMS = 3 * 10**11
MODES_CHAIN = (6, 5, 4, 3, 1)


@CHAPTER.figure(
    "forward_vs_reverse_mode",
    "从哪一头开始乘：正向模式与反向模式",
    source="「正向模式 / 反向模式」是自动微分的标准术语；反向传播是反向模式用在神经网络上的特例",
)
def forward_vs_reverse_mode(check: Check, params: int = MODES_PARAMS, widths: tuple[int, ...] = MODES_CHAIN):
    jacobians = chain.random_chain(list(widths))
    from_front, front_passes = chain.forward_mode(jacobians)
    from_back, back_passes = chain.reverse_mode(jacobians)
    check.close("same gradient both ways", float(np.max(np.abs(from_front - from_back))), 0.0, abs=1e-12)
    check.equal("forward-mode passes", front_passes, widths[0])
    check.equal("reverse-mode passes", back_passes, widths[-1])
    check.equal("params", numbers.zh_large(params), "三千亿")
    scale = numbers.zh_large(params)
    return {"params": Fact(params, scale, scale).via("输入：专题一定下的模型规模（同 finite_differences）")}


# activation_mountain: activations over one step, then the two cards and
# the per-layer tables behind them, all from tools.models.v3. The mountain is
# schematic: 12 steps drawn, 61 layers real.
MOUNTAIN_STEPS = 12
MOUNTAIN_PAGE = {
    "keep_all_gib": "4,245",
    "keep_all_tib": "4.15",
    "full_recompute": "106.75",
    "attention": "22.6",
    "moe": "48.6",
    "moe_layer": "71",
    "dense_layer": "40",
    "copies_io": "31.5",
    "entry": "1.75",
}
# How the page writes each kept tensor's width: the factors, multiplied
# (or added, for the KV row), must give tools.models.v3's width.
ATTENTION_WIDTHS = (
    ("×", (v3.HIDDEN,)),
    ("×", (v3.HIDDEN,)),
    ("×", (2, v3.Q_LORA)),
    ("+", (v3.KV_LORA + v3.ROPE, v3.KV_LORA)),
    ("×", (v3.HEADS, v3.QK_HEAD)),
    ("×", (v3.HEADS, v3.QK_HEAD - v3.ROPE + v3.V_HEAD)),
    ("×", (v3.HEADS, v3.V_HEAD)),
    ("×", (v3.HEADS,)),
)
ATTENTION_PAGE = ("1.75", "1.75", "0.75", "0.27", "6.00", "8.00", "4.00", "0.06")
MOE_WIDTHS = (
    ("×", (2, v3.HIDDEN)),
    ("×", (v3.ROUTED_EXPERTS,)),
    ("×", (v3.COPIES, v3.HIDDEN)),
    ("×", (3, v3.COPIES, v3.EXPERT_FFN)),
    ("×", (v3.COPIES, v3.HIDDEN)),
)
MOE_PAGE = ("3.50", "0.06", "15.75", "13.50", "15.75")
KILO = 1024  # the K of 128K


def _gib(value: float, digits: int = 2) -> Fact:
    return number(value, digits, "GiB", "G")


def _table(check: Check, name: str, kept: tuple[v3.Kept, ...], widths, page: tuple[str, ...]) -> list[dict]:
    rows = []
    for tensor, (op, parts), page_text in zip(kept, widths, page, strict=True):
        width = math.prod(parts) if op == "×" else sum(parts)
        check.equal(f"{name} row '{tensor.label}' width", width, tensor.width)
        size = _gib(tensor.gib)
        check.equal(f"{name} row '{tensor.label}'", numbers.signed(tensor.gib, 2), page_text)
        label = tensor.label + ("（fp32）" if tensor.nbytes == v3.FP32 else "")
        rows.append({"label": label, "width": f" {op} ".join(numbers.signed(p) for p in parts), "size": size.text})
    return rows


@CHAPTER.figure(
    "activation_mountain",
    "山形图：激活在一步之内涨到多高",
    source="按 DeepSeek-V3 config（arXiv 2412.19437）与官方参考实现的 MLA 前向自推；序列 128K、batch 1、bf16",
)
def activation_mountain(check: Check, steps: int = MOUNTAIN_STEPS):
    # The mountain by doing it: forward pushes each layer's saved tensors,
    # backward pops them in reverse order; memory is what the stack holds.
    saved, memory = [], [0]
    for layer in range(steps):
        saved.append(layer)
        memory.append(len(saved))
    order = [saved.pop() for _ in range(steps)]
    memory += list(range(steps - 1, -1, -1))
    check.equal("peak", memory.index(max(memory)), steps)
    check.equal("backward order", order, list(range(steps - 1, -1, -1)))

    entry, keep_all = v3.layer_entry_gib(), v3.keep_all_gib()
    full = v3.full_recompute_gib()
    check.close("full_recompute", full, v3.LAYERS * entry)
    moe_layer, dense_layer = v3.moe_layer_gib(), v3.dense_layer_gib()
    check.close("keep_all (layer sum)", keep_all, v3.MOE_LAYERS * moe_layer + v3.DENSE_LAYERS * dense_layer)
    attention, moe = v3.subtotal(v3.ATTENTION_KEPT), v3.subtotal(v3.MOE_KEPT)
    dense_ffn = v3.subtotal(v3.DENSE_FFN_KEPT)
    copies_io = [k.gib for k in v3.MOE_KEPT if k.width == v3.COPIES * v3.HIDDEN]
    moe_sum = f"注意力 {attention:.2f} + MoE {moe:.2f} GiB"
    dense_sum = f"注意力 {attention:.2f} + dense FFN {dense_ffn:.2f} GiB"
    shown = {
        "entry": _gib(entry).via(
            f"{numbers.signed(v3.SEQ)} × {numbers.signed(v3.HIDDEN)} × {v3.BF16} B ÷ 2{numbers.superscript(30)}"
        ),
        "full_recompute": _gib(full).via(f"{v3.LAYERS} 层 × {entry:.2f} GiB（每层只留入口）"),
        "keep_all_gib": _gib(keep_all, 0).via(
            f"{v3.MOE_LAYERS} × {moe_layer:.2f} + {v3.DENSE_LAYERS} × {dense_layer:.2f} GiB"
        ),
        "keep_all": number(keep_all * v3.GIB / v3.TIB, 2, "TiB", "T").via(
            f"{numbers.signed(keep_all, 1)} GiB ÷ {numbers.signed(v3.TIB // v3.GIB)}"
        ),
        "attention": _gib(attention, 1).via(f"注意力表 {len(v3.ATTENTION_KEPT)} 行之和"),
        "moe": _gib(moe, 1).via(f"MoE 表 {len(v3.MOE_KEPT)} 行之和"),
        "moe_layer": _gib(moe_layer, 0).via(moe_sum),
        "dense_layer": _gib(dense_layer, 0).via(dense_sum),
        "copies_io": _gib(sum(copies_io), 1).via(
            f"{v3.COPIES} × {numbers.signed(v3.HIDDEN)} 宽的两行：{' + '.join(f'{g:.2f}' for g in copies_io)} GiB"
        ),
    }
    for name, page_text in MOUNTAIN_PAGE.items():
        fact = "keep_all" if name == "keep_all_tib" else name
        check.equal(fact, shown[fact].text.split(" ")[0], page_text)
    check.equal("copies", v3.COPIES, v3.TOP_K + v3.SHARED_EXPERTS)
    check.close("entry (unit)", v3.SEQ * v3.HIDDEN * v3.BF16 / v3.GIB, entry)
    return shown | {
        "tokens": number(v3.SEQ).via("输入：本课取的序列长度"),
        "hidden": number(v3.HIDDEN).via("输入：V3 config 的 hidden_size"),
        "bf16_bytes": number(v3.BF16, unit="B").via("输入：bf16 一个数的字节数"),
        "shared": number(v3.SHARED_EXPERTS).via("输入：V3 config 的共享专家数"),
        "steps": number(steps).via("输入：示意，画出的台阶数", schematic=True),
        "layers": number(v3.LAYERS).via("输入：V3 config 的层数"),
        "mountain": data(memory),
        "seq": Fact(v3.SEQ, f"{v3.SEQ // KILO}K", f"{numbers.zh_int(v3.SEQ // KILO)}K").via(
            f"{numbers.signed(v3.SEQ)} ÷ {numbers.signed(KILO)}"
        ),
        "copies": number(v3.COPIES).via(f"{v3.TOP_K} 个路由专家 + {v3.SHARED_EXPERTS} 个共享专家"),
        "routed": number(v3.TOP_K).via("输入：V3 config 每个 token 的路由专家数"),
        "moe_layers": number(v3.MOE_LAYERS).via(f"{v3.LAYERS} − {v3.DENSE_LAYERS} 个 dense 层"),
        "dense_layers": number(v3.DENSE_LAYERS).via("输入：V3 config 开头的 dense 层数"),
        "moe_layer_exact": _gib(moe_layer).via(moe_sum),
        "dense_layer_exact": _gib(dense_layer).via(dense_sum),
        "attention_kept": number(len(v3.ATTENTION_KEPT)).via("注意力表的行数：留给反向的张量"),
        "attention_rows": data(_table(check, "attention", v3.ATTENTION_KEPT, ATTENTION_WIDTHS, ATTENTION_PAGE)),
        "moe_rows": data(_table(check, "moe", v3.MOE_KEPT, MOE_WIDTHS, MOE_PAGE)),
    }


def _number_free(check: Check, labels: dict[str, str]) -> None:
    """A number-free figure: no digit in any label it puts on screen."""
    for key, label in labels.items():
        check.that(f"label '{key}'", not any(ch.isdigit() for ch in label), "no digits on a number-free figure", label)


# gradient_journey: five stations between "computed" and "used".
# Number-free; the toy timeline (one time unit per layer's backward) and a
# toy linear model check the two claims the stations make.
JOURNEY_TIMELINE = {"layers": 12, "bucket": 3, "comm": 2.0, "clip": 1.0}
JOURNEY_STATIONS = {
    "produce": "逐层产出",
    "reduce": "跨卡平均",
    "clip": "全局范数裁剪",
    "accumulate": "累积",
    "update": "更新",
}


@CHAPTER.figure(
    "gradient_journey",
    "梯度从算出来到被用掉，还隔着几道",
    source="本课自绘示意；框架里的对应：② DDP bucket_cap_mb，③ Megatron --clip-grad，④ ddp.no_sync()",
)
def gradient_journey(
    check: Check, timeline: dict = JOURNEY_TIMELINE, micro: int = 4, stations: dict[str, str] = JOURNEY_STATIONS
):
    plan = grad_path.backward_timeline(**timeline)
    hidden = plan.hidden_share()
    check.that("all-reduce hides", hidden > 0.5, "most of the averaging runs under backward compute", hidden)
    check.that(
        "clip cannot hide",
        plan.clip[0] >= plan.backward_end and plan.clip[0] >= plan.all_reduce[-1][1],
        "clipping starts only after every gradient is averaged",
        plan.clip,
    )
    rng = np.random.default_rng(0)
    x, y, w = rng.standard_normal((16, 5)), rng.standard_normal(16), rng.standard_normal(5)
    whole, pieces = grad_path.mse_gradient(x, y, w), grad_path.accumulated_gradient(x, y, w, micro)
    check.close("accumulation keeps the total", float(np.max(np.abs(whole - pieces))), 0.0, abs=1e-12)
    _number_free(check, stations)
    return {
        "stations": data(stations),
        "timeline": data({"backward": plan.backward, "all_reduce": plan.all_reduce, "clip": plan.clip}),
        "micro": data(micro),
    }


# batch_comm_vs_compute: what a step must send vs what it
# must compute, over batch size. Shapes only: measured on a toy linear layer,
# drawn without a scale; the knee is where the batch fills the hardware.
BATCH_WIDTH = 64
BATCH_KNEE = 32
BATCH_SIZES = tuple(range(4, 129, 4))
BATCH_COMM_ROUNDS = 0.5  # schematic: sending the gradient takes half a compute round
BATCH_LABELS = {
    "x": "batch 大小",
    "y": "一步的时间",
    "comm": "通信",
    "compute": "计算",
    "knee": "拐点",
    "small": "小 batch",
    "large": "大 batch",
}


@CHAPTER.figure(
    "batch_comm_vs_compute",
    "batch 越大，通信摊得越薄",
    source="李宏毅 2021《类神经网络训练不起来怎么办（二）：批次与动量》；图为本课重画，只画形状",
)
def batch_comm_vs_compute(
    check: Check,
    sizes: tuple[int, ...] = BATCH_SIZES,
    knee: int = BATCH_KNEE,
    width: int = BATCH_WIDTH,
    labels: dict[str, str] = BATCH_LABELS,
):
    payload = [grad_path.gradient_payload(b, width) for b in sizes]
    check.that(
        "communication flat", len(set(payload)) == 1, "the same bytes to send at every batch size", sorted(set(payload))
    )
    flops = np.array([grad_path.step_flops(b, width) for b in sizes])
    check.close("compute linear", float(np.ptp(flops / np.array(sizes))), 0.0, abs=1e-9)
    compute = grad_path.compute_time(flops, grad_path.step_flops(knee, width))
    before, after = compute[np.array(sizes) <= knee], compute[np.array(sizes) > knee]
    check.that(
        "two segments",
        bool(np.all(before == 1.0) and np.all(np.diff(after) > 0) and len(after) > 1),
        "flat until the hardware is full, rising after",
        compute.tolist(),
    )
    comm = BATCH_COMM_ROUNDS * np.array(payload, dtype=float) / payload[0]
    share = comm / (comm + compute)
    check.that(
        "share thins",
        bool(np.all(np.diff(share) <= 0) and share[-1] < share[0]),
        "communication's share of a step falls as the batch grows",
        share.tolist(),
    )
    # One epoch (the largest batch's worth of samples) in small steps vs in steps at the knee.
    step = dict(zip(sizes, (comm + compute).tolist()))
    epoch = {name: {"steps": max(sizes) // b, "step": step[b]} for name, b in (("small", knee // 4), ("large", knee))}
    epoch_time = {name: e["steps"] * e["step"] for name, e in epoch.items()}
    check.that(
        "epoch",
        epoch_time["large"] < epoch_time["small"],
        "one epoch takes less time in large batches (until the knee)",
        epoch_time,
    )
    _number_free(check, labels)
    return {
        "curves": data(
            {
                "batch": list(sizes),
                "comm": comm.tolist(),
                "compute": compute.tolist(),
                "knee": knee,
                "share": share.tolist(),
            }
        ),
        "epoch": data(epoch),
        "labels": data(labels),
    }
