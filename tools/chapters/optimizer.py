"""Chapter 3 in play order (专题四), optimizer: descent, saddle points, the heavy ball, the step size."""

from __future__ import annotations

import math

import numpy as np

from tools.chapters import backprop
from tools.course.catalogue import Chapter
from tools.course.facts import Check, Fact, data, number, scientific, times
from tools.course.numbers import signed, superscript, zh_digits
from tools.models import circuit, descent

CHAPTER = Chapter(
    "optimizer",
    "优化器：下山、鞍点与小重球",
    summary=(
        "the descending ball, saddle cross-sections, the rotating saddle, momentum escaping the "
        "shallow pit, two learning rates, the optimal step"
    ),
)


def _sampled(fn, lo: float, hi: float, samples: int) -> np.ndarray:
    xs = np.linspace(lo, hi, samples)
    return np.stack([xs, fn(xs)], axis=1)


def _term(x: float, digits: int) -> str:
    """A number as a term of a how's formula: a negative one in parentheses, '(−1.5)'."""
    text = signed(x, digits)
    return f"({text})" if x < 0 else text


def _year(y: int) -> Fact:
    """A year, written without a thousands separator and read digit by digit."""
    return Fact(y, str(y), zh_digits(str(y)))


# -- gradient_descent_ball ------------------------------------------------
# A schematic 1-D loss with two valleys of different depth (RECON: the page
# draws none). Number-free on screen; the paths are real runs.
BALL_LOSS = descent.Quartic(p4=0.06, p2=-0.6, p1=0.25)
BALL_RANGE = (-3.45, 3.45)
BALL_PER_STEP = 6


@CHAPTER.figure(
    "gradient_descent_ball",
    "球滚下山：步长跟着坡度走",
    source="讲法：3Blue1Brown《Gradient descent, how neural networks learn》；"
    "苏剑林《为什么我们偏爱各向同性？》；图为本课重画",
)
def gradient_descent_ball(
    check: Check,
    loss: descent.Quartic = BALL_LOSS,
    lr: float = 0.1,
    start: float = 3.2,
    steps: int = 45,
    nudge: float = 0.5,
):
    points = descent.critical_points(loss, *BALL_RANGE)
    check.equal("critical points (min, max, min)", [p.kind for p in points], ["min", "max", "min"])
    left, hump, right = (p.x for p in points)

    roll = descent.heavy_ball(loss.grad, start, lr, 0.0, steps)
    check.close("one ball lands in the valley below its start", roll.xs[-1], right, abs=1e-3)
    check.that(
        "steps shrink with the slope",
        bool(np.all(np.diff(np.abs(roll.moves)) < 0)),
        "every step shorter than the one before",
        np.abs(roll.moves).round(4).tolist(),
    )
    check.that(
        "no overshoot", bool(np.all(roll.xs > right)), "the ball stays on its side of the bottom", float(roll.xs.min())
    )

    ends = {}
    for name, x0 in (("left", hump - nudge), ("right", hump + nudge)):
        run = descent.heavy_ball(loss.grad, x0, lr, 0.0, steps)
        ends[name] = run
    check.close("start left of the hump lands in the left valley", ends["left"].xs[-1], left, abs=1e-3)
    check.close("start right of the hump lands in the right valley", ends["right"].xs[-1], right, abs=1e-3)

    # One backward pass of backprop's circuit (gates_circuit): its negative gradient is the column.
    values = circuit.forward(backprop.GATES, backprop.GATES_INPUTS)
    grads = circuit.backward(backprop.GATES, values)
    numeric = circuit.finite_differences(backprop.GATES, backprop.GATES_INPUTS)
    names = list(backprop.GATES_INPUTS)
    for name in names:
        check.close(f"column entry {name} (finite differences)", numeric[name], grads[name], abs=1e-6)
    column = [(name, -grads[name]) for name in names]

    # Steepest step for two of those parameters, measured by a circle and by a square.
    g2 = np.array([grads["a"], grads["c"]])
    by_circle = descent.steepest_on_boundary(g2, descent.unit_circle(3600))
    by_square = descent.steepest_on_boundary(g2, descent.unit_square(400))
    check.close("circle: steepest = −g/|g| (x)", by_circle[0], -g2[0] / np.linalg.norm(g2), abs=1e-3)
    check.close("circle: steepest = −g/|g| (y)", by_circle[1], -g2[1] / np.linalg.norm(g2), abs=1e-3)
    check.equal("square: steepest = −sign(g)", by_square.tolist(), (-np.sign(g2)).tolist())
    turn = math.degrees(math.acos(by_circle @ by_square / np.linalg.norm(by_square)))
    check.that("the two rulers disagree", turn > 20, "directions at least 20° apart", f"{turn:.1f}°")

    return {
        "curve": data(_sampled(loss, *BALL_RANGE, 240)),
        "per_step": data(BALL_PER_STEP),
        "route_roll": data(descent.route(loss, roll.xs, BALL_PER_STEP)),
        "route_left": data(descent.route(loss, ends["left"].xs, BALL_PER_STEP)),
        "route_right": data(descent.route(loss, ends["right"].xs, BALL_PER_STEP)),
        "column": data(column),
        "gradient_2d": data(g2),
        "steepest_circle": data(by_circle),
        "steepest_square": data(by_square),
    }


# -- saddle_point -----------------------------------------------------------
# Two round hills; the pass (垭口) between them sits at the origin (RECON).
PASS_TERRAIN = descent.TwoPeaks(d=1.2, width=1.2)


@CHAPTER.figure(
    "saddle_point",
    "局部最小还是鞍点：垭口的两个剖面",
    source="讲法取自李宏毅 2021《类神经网络训练不起来怎么办（一）：局部最小值与鞍点》；图为本课重画",
)
def saddle_point(check: Check, terrain: descent.TwoPeaks = PASS_TERRAIN, reach: float = 2.6):
    slope = descent.gradient_2d(terrain, 0.0, 0.0)
    check.close("gradient at the pass is zero", float(np.linalg.norm(slope)), 0.0, abs=1e-9)
    eigen, vectors = np.linalg.eigh(descent.hessian_2d(terrain, 0.0, 0.0))
    check.that(
        "Hessian at the pass has mixed signs",
        eigen[0] < 0 < eigen[1],
        "one negative and one positive eigenvalue (a saddle)",
        eigen.tolist(),
    )
    check.close("down-curving direction is the trail (x)", abs(vectors[0, 0]), 1.0, abs=1e-6)
    check.close("up-curving direction is the ridge (y)", abs(vectors[1, 1]), 1.0, abs=1e-6)

    ridge = np.stack([np.linspace(-reach, reach, 181), terrain(0.0, np.linspace(-reach, reach, 181))], axis=1)
    trail = np.stack([np.linspace(-reach, reach, 181), terrain(np.linspace(-reach, reach, 181), 0.0)], axis=1)
    middle = len(ridge) // 2
    check.that(
        "ridge cut curves up at the pass",
        ridge[middle, 1] == ridge[:, 1][60:121].min(),
        "the pass is the lowest point between the two peaks",
        ridge[middle, 1],
    )
    check.that(
        "trail cut curves down at the pass",
        trail[middle, 1] == trail[:, 1].max(),
        "the pass is the highest point of the trail",
        trail[middle, 1],
    )

    pass_height = float(terrain(0.0, 0.0))
    peak_height = float(terrain(0.0, terrain.d))
    levels = [pass_height + f * (peak_height - pass_height) for f in (0.12, 0.35, 0.6, 0.85)]
    loops = []
    for top in (terrain.d, -terrain.d):
        for level in levels:
            loop = descent.contour_loop(terrain, (0.0, top), level, reach=terrain.d)
            check.close(
                "contour is a level line", float(np.abs(terrain(loop[:, 0], loop[:, 1]) - level).max()), 0.0, abs=1e-6
            )
            loops.append(loop)
    return {
        "ridge": data(ridge),
        "trail": data(trail),
        "contours": data(loops),
        "peaks": data([(0.0, terrain.d), (0.0, -terrain.d)]),
        "hessian_signs": data(np.sign(eigen)),
    }


# -- saddle_3d_rotating -------------------------------------------------------
# z = x² − y² (RECON) = ½(2x² − 2y²); plain descent from near the up-curving cut.
SADDLE_CURVATURES = (2.0, -2.0)
SADDLE_HALF_WIDTH = 1.5


@CHAPTER.figure(
    "saddle_3d_rotating",
    "让鞍点转起来：一个形状，两个方向",
    source="曲面 z = x² − y² 为本课示意；讲法承接李宏毅 2021《局部最小值与鞍点》",
)
def saddle_3d_rotating(
    check: Check, start: tuple[float, float] = (1.4, 0.001), lr: float = 0.1, grid: int = 19, flat: float = 0.25
):
    lam = np.array(SADDLE_CURVATURES)
    run = descent.quadratic_descent(SADDLE_CURVATURES, start, lr, 200)
    inside = np.all(np.abs(run) <= SADDLE_HALF_WIDTH, axis=1)
    leaves = int(np.argmin(inside))
    check.that("plain descent leaves the pass", leaves > 0, "the run leaves the drawn surface", leaves)
    path = run[:leaves]
    check.that(
        "it comes close to the pass",
        float(np.linalg.norm(path, axis=1).min()) < 0.05,
        "within 0.05 of the pass",
        float(np.linalg.norm(path, axis=1).min()),
    )
    slope = np.linalg.norm(path * lam, axis=1)
    grinding = slope < flat * slope[0]
    check.that(
        "it grinds on the flat",
        grinding.sum() > len(path) / 2,
        f"more than half the steps where the slope is under {flat:.0%} of the start's",
        f"{grinding.sum()} of {len(path)}",
    )

    xs = np.linspace(-SADDLE_HALF_WIDTH, SADDLE_HALF_WIDTH, grid)
    gx, gy = np.meshgrid(xs, xs, indexing="ij")
    heights = 0.5 * (lam[0] * gx**2 + lam[1] * gy**2)
    cut = np.linspace(-SADDLE_HALF_WIDTH, SADDLE_HALF_WIDTH, 61)
    zeros = np.zeros_like(cut)
    radius = float(flat * slope[0] / abs(lam[0]))  # |∇z| = 2r on the circle where the slope is `flat` of the start's
    return {
        "surface": data(np.stack([gx, gy, heights], axis=-1)),
        "cut_up": data(np.stack([cut, zeros, 0.5 * lam[0] * cut**2], axis=1)),
        "cut_down": data(np.stack([zeros, cut, 0.5 * lam[1] * cut**2], axis=1)),
        "path": data(np.column_stack([path, 0.5 * (path**2 @ lam)])),
        "flat_radius": data(radius),
    }


# -- momentum_escape ---------------------------------------------------------------
MOMENTUM_LOSS = descent.Bumpy(a=0.015, b=0.45, c=1.1)  # PAGE
POLYAK_RANGE = (0.8, 0.99)  # Polyak 1964's empirical ρ
ADAM_BETA1 = 0.9
POLYAK_YEAR, BACKPROP_YEAR = 1964, 1986  # Polyak's paper; Rumelhart, Hinton and Williams in Nature
MOMENTUM_PLOT = (-1.0, 13.0)
MOMENTUM_PER_STEP = 8


@CHAPTER.figure(
    "momentum_escape",
    "小重球：惯性带它滚过浅坑",
    source="Polyak 1964《Some methods of speeding up the convergence of iteration methods》；"
    "李宏毅《类神经网络训练不起来怎么办（一）》；曲线与数字为本课自跑",
)
def momentum_escape(
    check: Check,
    loss: descent.Bumpy = MOMENTUM_LOSS,
    start: float = 11.0,
    lr: float = 0.5,
    beta: float = 0.9,
    steps: int = 400,
    bars: int = 10,
):
    # The pit and the valley are solved for, not typed.
    points = [p for p in descent.critical_points(loss, 0.0, start) if p.x > 0]
    minima = [p.x for p in points if p.kind == "min"]
    check.equal("minima on the way down", len(minima), 2)
    valley, pit = sorted(minima, key=lambda x: loss(x))
    check.that(
        "one shallow pit, one deep valley",
        loss(pit) > loss(valley) and pit > valley,
        "the pit is higher and nearer the start",
        (pit, valley),
    )
    barrier = next(p.x for p in points if p.kind == "max" and valley < p.x < pit)
    check.close("deep valley (page table)", valley, 2.7063, abs=1e-4)
    check.close("shallow pit (page table)", pit, 8.1015, abs=1e-4)

    plain = descent.heavy_ball(loss.grad, start, lr, 0.0, steps)
    heavy = descent.heavy_ball(loss.grad, start, lr, beta, steps)
    check.close("plain GD stops in the shallow pit", plain.xs[-1], pit, abs=1e-3)
    check.close("plain GD's gradient there is zero", float(loss.grad(plain.xs[-1])), 0.0, abs=1e-9)
    check.close("momentum lands in the deep valley", heavy.xs[-1], valley, abs=1e-3)
    check.that(
        "landing points far apart",
        plain.xs[-1] > barrier > heavy.xs[-1] and plain.xs[-1] - heavy.xs[-1] > 0.99 * (pit - valley),
        "the two balls end on opposite sides of the hump, a pit-to-valley apart",
        (plain.xs[-1], heavy.xs[-1]),
    )

    # The step where the heavy ball passes the bottom of the pit.
    k = int(np.argmin(np.abs(heavy.xs[:-1] - pit)))
    inertia, pull, move = beta * heavy.moves[k - 1], -lr * heavy.grads[k], heavy.moves[k]
    check.close("movement = inertia + pull", inertia + pull, move, abs=1e-12)
    check.that(
        "gradient ≈ 0 at the crossing",
        abs(pull) < 0.01 * abs(move),
        "the gradient's pull is under 1% of the movement",
        (pull, move),
    )
    check.that(
        "movement large at the crossing",
        abs(move) > np.abs(plain.moves).max(),
        "longer than any step plain GD ever takes",
        (move, float(np.abs(plain.moves).max())),
    )
    over = k + int(np.argmax(heavy.xs[k:] < barrier))
    check.that(
        "it rolls through the pit",
        over > k and bool(np.all(heavy.xs[over:] < barrier)),
        "after the crossing it goes over the hump and never comes back",
        over,
    )

    # Li Hongyi's form: the move is the weighted sum of all past gradients.
    for t in (k, steps - 1):
        check.close(
            f"move {t + 1} = −η Σ β^k g",
            descent.unrolled_move(heavy.grads[: t + 1], lr, beta),
            heavy.moves[t],
            rel=1e-9,
            abs=1e-12,
        )
    weights = beta ** np.arange(bars)
    for name, b in (("β of the run", beta), ("Adam's β₁", ADAM_BETA1)):
        check.that(
            f"{name} in Polyak's range",
            POLYAK_RANGE[0] <= b <= POLYAK_RANGE[1],
            f"{POLYAK_RANGE[0]} ≤ β ≤ {POLYAK_RANGE[1]}",
            b,
        )
    check.equal("Polyak predates the backprop Nature paper by", BACKPROP_YEAR - POLYAK_YEAR, 22)

    shown = max(descent.settled_after(plain.xs, 0.02), descent.settled_after(heavy.xs, 0.02))
    check.that("both runs settle on screen", shown < steps, f"settled within {steps} steps", shown)
    solved = "解 f′(x) = 0 的两个极小点里"
    return {
        "a": number(loss.a, 3).via("输入：页面给的损失曲线系数"),
        "b": number(loss.b, 2).via("输入：页面给的损失曲线系数"),
        "c": number(loss.c, 1).via("输入：页面给的损失曲线系数"),
        "curve": data(_sampled(loss, *MOMENTUM_PLOT, 400)),
        "per_step": data(MOMENTUM_PER_STEP),
        "route_plain": data(descent.route(loss, plain.xs[: shown + 1], MOMENTUM_PER_STEP)),
        "route_heavy": data(descent.route(loss, heavy.xs[: shown + 1], MOMENTUM_PER_STEP)),
        "pit_x": number(pit, 2).via(f"{solved}较高、离起点近的那个"),
        "valley_x": number(valley, 2).via(f"{solved}较低的那个"),
        "barrier_x": data(barrier),
        "lr": number(lr, 1).via("输入：本课自设的学习率"),
        "beta": number(beta, 1).via("输入：本课自设的动量系数"),
        "cross_step": data(k),
        "cross_grad": number(float(heavy.grads[k]), 4).via(f"带动量那次跑的第 {k + 1} 步，最靠近坑底处的 f′(x)"),
        "inertia": number(inertia, 4).via(f"β × 上一步的移动 = {signed(beta, 1)} × {_term(heavy.moves[k - 1], 4)}"),
        "pull": number(pull, 4).via(f"−η × f′(x) = −{signed(lr, 1)} × {_term(heavy.grads[k], 4)}"),
        "move": number(move, 4).via(f"惯性 + 拉力 = {signed(inertia, 4)} + {_term(pull, 4)}"),
        "weights": data(weights),
        "polyak_low": number(POLYAK_RANGE[0], 1).via("输入：Polyak 1964 的经验取值下限"),
        "polyak_high": number(POLYAK_RANGE[1], 2).via("输入：Polyak 1964 的经验取值上限"),
        "adam_beta1": number(ADAM_BETA1, 1).via("输入：Adam 的默认 β₁"),
        "polyak_year": _year(POLYAK_YEAR).via("输入：Polyak 论文的年份"),
        "backprop_year": _year(BACKPROP_YEAR).via("输入：反向传播《自然》论文的年份"),
        "years_earlier": number(BACKPROP_YEAR - POLYAK_YEAR).via(f"{BACKPROP_YEAR} − {POLYAK_YEAR}"),
    }


# -- learning_rate_two_paths ------------------------------------------------------------
# f = ½(x²/κ + y²): x is the flat direction, y the steep one (λ_steep = 1,
# so a learning rate is written as η·λ_steep). RECON inputs.
@CHAPTER.figure(
    "learning_rate_two_paths",
    "同一个谷，两个学习率",
    source="两难取自李宏毅《Training Tip》投影片（2025 秋 GenAI-ML）；谷与学习率为本课自选自跑",
)
def learning_rate_two_paths(
    check: Check,
    kappa: float = 25.0,
    start: tuple[float, float] = (-10.0, 0.6),
    lr_small: float = 0.1,
    crawl_steps: int = 100,
    margin: float = 0.05,
    stable_steps: int = 200,
    kappa_far: float = 1000.0,
    map_height: float = 2.4,
):
    curvatures = (1.0 / kappa, 1.0)
    threshold = 2.0 / curvatures[1]
    check.close("stability threshold η·λ_steep", threshold, 2.0)
    lr_over, lr_under = (1 + margin) * threshold, (1 - margin) * threshold

    # Ⓐ too large: 5% over the threshold, zig-zags out of the map.
    over = descent.quadratic_descent(curvatures, start, lr_over, stable_steps)
    out = int(np.argmax(np.abs(over[:, 1]) > map_height))
    check.that(
        "too large zig-zags out",
        out > 0 and bool(np.all(np.diff(np.sign(over[: out + 1, 1])) != 0)),
        "the steep coordinate flips sign every step and leaves the map",
        out,
    )
    # Ⓐ too small: crawls, covering a third of the flat distance.
    crawl = descent.quadratic_descent(curvatures, start, lr_small, crawl_steps)
    covered = 1 - crawl[-1, 0] / start[0]
    check.close("crawl: fraction covered (closed form)", covered, 1 - (1 - lr_small * curvatures[0]) ** crawl_steps)
    check.close("the one-third at the left end", covered, 1 / 3, abs=0.01)

    # Ⓑ just under the threshold: how many steps to halve the flat distance.
    under = descent.quadratic_descent(curvatures, start, lr_under, stable_steps)
    halfway = descent.steps_to_halfway(1 - lr_under / kappa)
    halfway_run = descent.first_step_at_or_below(np.abs(under[:, 0]), abs(start[0]) / 2)
    check.close("steps to halfway at κ = 25 (page table)", halfway, 8.77, abs=0.005)
    check.that("closed form vs real run", abs(halfway_run - halfway) <= 1, "within one step", (halfway_run, halfway))
    halfway_far = descent.steps_to_halfway(1 - lr_under / kappa_far)
    far = descent.quadratic_descent((1.0 / kappa_far, 1.0), start, lr_under, 2 * math.ceil(halfway_far))
    halfway_far_run = descent.first_step_at_or_below(np.abs(far[:, 0]), abs(start[0]) / 2)
    check.close("extrapolation κ = 1000", halfway_far, 364.5, abs=0.05)
    check.that(
        "extrapolation vs real run",
        abs(halfway_far_run - halfway_far) <= 1,
        "within one step",
        (halfway_far_run, halfway_far),
    )

    # ±5% around the threshold, over 200 steps.
    shrink = abs(under[-1, 1] / start[1])
    grow = abs(over[-1, 1] / start[1])
    check.close("−5%: steep factor^200 (closed form)", shrink, abs(1 - lr_under) ** stable_steps, rel=1e-9)
    check.close("+5%: steep factor^200 (closed form)", grow, abs(1 - lr_over) ** stable_steps, rel=1e-9)
    check.that("−5% converges", shrink < 1e-6, "shrinks to nothing", shrink)
    check.that("+5% diverges", grow > 1e6, "blows up", grow)

    good_shown = descent.first_step_at_or_below(np.abs(under[:, 1]), 0.02 * abs(start[1]))
    levels = [0.5 * curvatures[1] * (f * map_height) ** 2 for f in (0.25, 0.5, 0.75, 1.0)]
    ellipses = [(math.sqrt(2 * c / curvatures[0]), math.sqrt(2 * c / curvatures[1])) for c in levels]
    steep = signed(curvatures[1])
    halfway_how = "ln ½ ÷ ln(1 − η/κ)，η = {lr}，κ = {kappa}"
    return {
        "kappa": number(kappa).via("输入：本课自设的陡峭比 κ"),
        "threshold": number(threshold).via(f"|1 − η λ_陡| < 1，即 η < 2 ÷ λ_陡 = 2 ÷ {steep}"),
        "margin": Fact(margin, f"{margin:.0%}", f"百分之{number(margin * 100).spoken}").via(
            "输入：本课自设，门槛上下各偏多少"
        ),
        "lr_over": number(lr_over, 1).via(f"(1 + {margin:.0%}) × {signed(threshold)}"),
        "lr_under": number(lr_under, 1).via(f"(1 − {margin:.0%}) × {signed(threshold)}"),
        "lr_small": number(lr_small, 1).via("输入：本课自设的小学习率"),
        "crawl_steps": number(crawl_steps).via("输入：本课自设的步数"),
        "crawl_fraction": Fact(covered, "1/3", "三分之一").via(
            f"1 − (1 − η/κ)ⁿ = 1 − (1 − {signed(lr_small, 1)}/{signed(kappa)}){superscript(crawl_steps)}"
            f" = {covered:.3f}"
        ),
        "halfway": number(halfway, 2).via(halfway_how.format(lr=signed(lr_under, 1), kappa=signed(kappa))),
        "halfway_run": number(halfway_run).via("真跑一遍：平方向的距离第一次缩到一半的步数"),
        "kappa_far": number(kappa_far).via("输入：外推用的陡峭比（本课自设）"),
        "halfway_far": number(halfway_far, 1).via(halfway_how.format(lr=signed(lr_under, 1), kappa=signed(kappa_far))),
        "stable_steps": number(stable_steps).via("输入：本课自设的步数"),
        "shrink": scientific(shrink).via(f"|1 − {signed(lr_under, 1)} × {steep}|{superscript(stable_steps)}"),
        "grow": scientific(grow).via(f"|1 − {signed(lr_over, 1)} × {steep}|{superscript(stable_steps)}"),
        "start": data(start),
        "map_height": data(map_height),
        "contours": data(ellipses),
        "path_over": data(over[: out + 1]),
        "path_small": data(crawl),
        "path_under": data(under[: max(good_shown, halfway_run) + 1]),
    }


# -- optimal_step_parabola ------------------------------------------------------------------
# Two parabolas f = a·x², a point on each at the same height (RECON inputs).
PARABOLA_POINTS = {"steep": (2.0, -1.5), "gentle": (0.5, 3.0)}


@CHAPTER.figure(
    "optimal_step_parabola",
    "最优步长 = |一阶导| ÷ 二阶导",
    source="讲法取自李宏毅（台大）Gradient Descent 课程投影片；抛物线与数字为本课自选",
)
def optimal_step_parabola(check: Check, points: dict[str, tuple[float, float]] = PARABOLA_POINTS, h: float = 1e-4):
    facts = {}
    for name, (a, x) in points.items():
        f = lambda t, a=a: a * t * t  # noqa: E731
        slope, curvature = 2 * a * x, 2 * a
        check.close(f"{name}: f′ (finite differences)", (f(x + h) - f(x - h)) / (2 * h), slope, rel=1e-6)
        check.close(f"{name}: f″ (finite differences)", (f(x + h) - 2 * f(x) + f(x - h)) / h**2, curvature, rel=1e-5)
        step = abs(slope) / curvature
        check.close(f"{name}: |f′|/f″ = distance to the bottom", step, abs(x))
        check.close(f"{name}: one such step lands at the bottom", x - slope / curvature, 0.0, abs=1e-12)
        shown_a = number(a, 1 if a != int(a) else 0).via("输入：本课自选的抛物线", schematic=True)
        x_digits = 1 if x != int(x) else 0
        shown_x = number(x, x_digits).via("输入：本课自选的点", schematic=True)
        shown_slope = number(slope).via(f"f′ = 2ax = 2 × {shown_a} × {_term(x, x_digits)}")
        shown_curvature = number(curvature).via(f"f″ = 2a = 2 × {shown_a}")
        facts |= {
            f"{name}_a": shown_a,
            f"{name}_x": shown_x,
            f"{name}_slope": shown_slope,
            f"{name}_curvature": shown_curvature,
            f"{name}_step": number(step, 1 if step != int(step) else 0).via(
                f"|f′| ÷ f″ = |{shown_slope}| ÷ {shown_curvature}"
            ),
            f"{name}_curve": data(_sampled(f, -4.0, 4.0, 161)),
        }
    steep, gentle = points["steep"], points["gentle"]
    check.close("both points at the same height", steep[0] * steep[1] ** 2, gentle[0] * gentle[1] ** 2)
    check.that(
        "the slope alone misleads",
        abs(facts["steep_slope"].value) > abs(facts["gentle_slope"].value)
        and facts["steep_step"].value < facts["gentle_step"].value,
        "the steeper point is the nearer one",
        (facts["steep_step"].value, facts["gentle_step"].value),
    )
    steeper = abs(facts["steep_slope"].value) / abs(facts["gentle_slope"].value)
    facts["slope_ratio"] = times(steeper).via(f"|{facts['steep_slope']}| ÷ |{facts['gentle_slope']}|")
    return facts
