"""Chapter 1, backprop: why a backward pass costs 3x and keeps activations."""

from __future__ import annotations

import numpy as np

from tools import circuit, gradients, numbers, timespan
from tools.catalogue import Chapter
from tools.facts import Check, Fact, data, number, scientific

CHAPTER = Chapter("backprop", "反向传播：三倍算力与扔不掉的激活")

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


# exchange_rate: the page's made-up numbers (示意数, L11): a nudge 5.00 -> 5.03
# and a chain of three links. Panel A's function is the chain's first link.
EXCHANGE_NUDGE = (5.00, 5.03)
EXCHANGE_LINKS = (2.0, 0.5, 3.0)
EXCHANGE_PAGE_TOTAL = 3.0


@CHAPTER.figure(
    "exchange_rate",
    "三个词：导数是兑换率",
    source="课程页 §1 开篇「三个词、一张图」；本课自拟示意图，数字为编出来的示意数",
)
def exchange_rate(check: Check, nudge: tuple[float, float] = EXCHANGE_NUDGE,
                  links: tuple[float, ...] = EXCHANGE_LINKS):
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
    check.that("one link shrinks", any(f < 1 for f in links),
               "at least one link below 1, so multiplying is not read as growing", links)
    facts = {
        "x_before": number(before[0], 2), "x_after": number(after[0], 2),
        "y_before": number(before[1], 2), "y_after": number(after[1], 2),
        "rate_a": number(rates[0], _decimals(links[0])),
        "total": number(total, _decimals(EXCHANGE_PAGE_TOTAL)),
    }
    facts |= {f"moved_{i}": number(m, 2) for i, m in enumerate(moved)}
    facts |= {f"link_{i}": number(f, _decimals(f)) for i, f in enumerate(links, 1)}
    facts["shrinking_link"] = data([i for i, f in enumerate(links, 1) if f < 1])
    return facts


# finite_differences: 三千亿 parameters is the model scale the page carries over
# from topic 1 (L9, L16; see figures.md D14: no second scale on screen).
FD_PARAMETERS = 300_000_000_000
FD_SECONDS_PER_FORWARD = 1.0
FD_PAGE_YEARS = 9506  # figures.md B15, CALC
FD_COUNTER = (1, 2, 3, *(10**k for k in range(1, 12)))  # the counter's stops before the last


def _span(seconds: float) -> Fact:
    size, shown, spoken = timespan.unit_for(seconds)
    amount = seconds / size
    return number(amount, 1 if amount < 100 and not amount.is_integer() else 0, shown, spoken)


@CHAPTER.figure(
    "finite_differences",
    "笨办法：一个参数，重跑一遍前向",
    source="课程页 §1.1；三千亿为专题一定下的模型规模，一次前向按一秒算",
)
def finite_differences(check: Check, parameters: int = FD_PARAMETERS,
                       seconds_per_forward: float = FD_SECONDS_PER_FORWARD):
    seconds = parameters * seconds_per_forward  # one forward per nudged parameter
    years = timespan.years(seconds)
    check.that("nearly ten thousand years", 9_000 < years < 10_000,
               "将近一万年: between 9,000 and 10,000 years", years)
    check.close("years", years, FD_PAGE_YEARS, abs=0.5)
    check.close("years (calendar count)", timespan.calendar_years(seconds), years, abs=1.0)
    stops = [n for n in FD_COUNTER if n < parameters] + [parameters]
    counter = [{"parameters": numbers.signed(n), "elapsed": _span(n * seconds_per_forward).text,
                "share": n / parameters} for n in stops]
    return {
        "parameters": Fact(parameters, numbers.zh_large(parameters), numbers.zh_large(parameters)),
        "seconds_per_forward": number(seconds_per_forward, 0, "秒"),
        "seconds": scientific(seconds, 0),
        "year_seconds": number(timespan.JULIAN_YEAR, 0, "秒"),
        "years": number(years, 0, "年"),
        "nearly": Fact(10_000, "将近一万年", "将近一万年"),
        "counter": data(counter),
    }


# first_gradient: the page's example (L21): 「的」 0.3, 「了」 0.2 …; which
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
    error = float(np.max(np.abs(numeric - seed)))
    check.close("p − y (finite differences on the logits)", error, 0.0, abs=1e-8)
    check.close("p − y", float(np.max(np.abs(seed - (p - y)))), 0.0, abs=1e-15)
    check.close("seed sums to zero", float(seed.sum()), 0.0, abs=1e-12)
    p_text = [number(v, 1).text for v in p]
    for char, page in NEXT_PAGE_P.items():
        check.equal(f"p({char})", p_text[NEXT_CHARS.index(char)], page)
    check.that("truth is pushed up, the rest down", seed[target] < 0 and all(
        g > 0 for i, g in enumerate(seed) if i != target),
        "p − y negative on the truth, positive elsewhere", seed.tolist())
    facts = {
        "chars": data(list(NEXT_CHARS)),
        "target_char": Fact(NEXT_CHARS[target], NEXT_CHARS[target], NEXT_CHARS[target]),
        "loss": number(gradients.cross_entropy(z, target), 2),
        "fd_error": scientific(error, 1),
        "logit_values": data(z.tolist()),
        "seed_values": data(seed.tolist()),
    }
    for i in range(len(z)):
        facts |= {f"logit_{i}": number(z[i], 1), f"p_{i}": number(p[i], 1),
                  f"y_{i}": number(y[i]), f"seed_{i}": _plus(seed[i], 1)}
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
def backprop_nudge_3b1b(check: Check, upstream: tuple[float, ...] = NUDGE_UPSTREAM,
                        weights: tuple[tuple[float, ...], ...] = NUDGE_WEIGHTS,
                        contexts: tuple[tuple[str, str], ...] = NUDGE_CONTEXTS):
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
            ("nudge ∝ how far off (bias, finite differences)", wish,
             -gradients.numeric_gradient(lambda v: loss(w, v, a), bias)),
            ("weights (finite differences)", weight_wish, -gradients.numeric_gradient(lambda v: loss(v, bias, a), w)),
            ("previous activations (finite differences)", previous_wish,
             -gradients.numeric_gradient(lambda v: loss(w, bias, v), a))):
        check.close(name, float(np.max(np.abs(analytic - numeric))), 0.0, abs=1e-8)
    p = gradients.softmax(w @ a + bias)
    check.that("the truth is pushed up, the rest down", wish[target] > 0 and (np.delete(wish, target) < 0).all(),
               "a positive push on the truth, negative on every other character", wish.tolist())
    into_target = weight_wish[target]
    check.that("weight change ∝ upstream activation",
               np.argmax(into_target) == np.argmax(a) and np.allclose(into_target, wish[target] * a),
               "the weight from the brightest upstream neuron changes most, in proportion", into_target.tolist())
    wishes = [-gradients.cross_entropy_logit_gradient(w @ a + bias, NEXT_CHARS.index(char)) for _c, char in contexts]
    average = np.mean(wishes, axis=0)
    for (context, char), own in zip(contexts, wishes):
        i = NEXT_CHARS.index(char)
        check.that(f"average does not please {context}", average[i] < own[i],
                   "the averaged push on each example's truth is smaller than its own", (average[i], own[i]))
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
def layer_two_matmuls(check: Check, shape: dict[str, int] = LAYER_SHAPE, seed: int = LAYER_SEED,
                      keep_input: bool = True):
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
            ("② weight gradient (finite differences)", grad_weight, gradients.numeric_gradient(loss_of_w, w))):
        check.close(name, float(np.max(np.abs(analytic - numeric))), 0.0, abs=1e-6)
    check.equal("forward matmuls", forward.matmuls, 1)
    check.equal("backward matmuls", backward.matmuls, 2)
    check.equal("② multiplies the stored input", backward.log[1][0], x.T.shape)
    ratio = (forward.flops + backward.flops) / forward.flops
    check.close("forward + backward = 3× forward (matmul FLOPs)", ratio, 3.0)
    return {
        "x_shape": _shape(x), "w_shape": _shape(w), "y_shape": _shape(y), "upstream_shape": _shape(upstream),
        "wt_shape": _shape(w.T), "xt_shape": _shape(x.T),
        "grad_input_shape": _shape(grad_input), "grad_weight_shape": _shape(grad_weight),
        "x": data(x.tolist()), "w": data(w.tolist()), "y": data(y.tolist()), "upstream": data(upstream.tolist()),
        "grad_input": data(grad_input.tolist()), "grad_weight": data(grad_weight.tolist()),
        "forward_matmuls": _count(forward.matmuls), "backward_matmuls": _count(backward.matmuls),
        "ratio": number(ratio), "flops_each": number(forward.flops),
    }


# gates_circuit: f = max(a + b, d) * c. The page fixes only the three
# gradients (L39); these inputs are ours, chosen so that every gate acts.
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
    check.that("max gate routes", grads["d"] == 0 and grads["q"] != 0,
               "the losing input of max gets 0, the winner the whole gradient",
               f"winner {grads['q']}, loser {grads['d']}")
    facts = {name: number(value) for name, value in values.items()}
    facts |= {f"grad_{name}": number(value) for name, value in grads.items()}
    return facts
