"""The moe chapter (专家混合：路由、派发、计算、合并): staging only; every number comes from tools.chapters.moe.

One token, 「词」, is followed through one seeded router: its scores turn into a soft max, its two
experts are picked, its picks are sorted into the experts' buffer and sent across cards, seated
or dropped by capacity, and its gradient walks back along the two paths it took. The last figure
plays V3's bias balancing step by step on a larger router.

The 8 experts are a series, told apart by a ramp from SERIES_A to SERIES_B (their numbers are on
screen wherever the colour matters).
"""

from __future__ import annotations

import itertools

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Arrow,
    Create,
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    ManimColor,
    Rectangle,
    ReplacementTransform,
    Transform,
    UpdateFromAlphaFunc,
    VGroup,
    VMobject,
    interpolate_color,
    linear,
    np,
)

from scenes import style, widgets
from scenes.base import LectureScene
from scenes.widgets import sketch_axes

CHIP = 0.36  # a pick's square: one character on its expert's colour
GRID_STROKE = 1.0  # the thin lines of a heatmap cell or a seat
CLEAR_SECONDS = 0.5  # clearing the stage between two parts of a figure


def expert_color(e: int, experts: int = 8) -> str:
    """Expert e's colour on the ramp SERIES_A → SERIES_B (a series, not a role of its own)."""
    return interpolate_color(ManimColor(style.SERIES_A), ManimColor(style.SERIES_B), e / max(experts - 1, 1)).to_hex()


def chip(ch: str, color: str, size: float = CHIP) -> VGroup:
    """One pick (or one token): its character on a small square of its expert's colour."""
    return widgets.block(size, size, color, ch, size=style.SMALL_SIZE, opacity=style.FILL_SOFT)


def bar_row(values, unit: float, width: float, gap: float, color, *, base_y: float, left_x: float) -> VGroup:
    """Bars standing on one base line, left to right, each `unit` tall per unit of value (a colour per bar or one)."""
    bars = VGroup()
    for i, v in enumerate(values):
        c = color(i) if callable(color) else color
        b = widgets.bar(width, max(v * unit, 1e-3), c)
        b.move_to((left_x + i * (width + gap) + width / 2, base_y, 0), aligned_edge=DOWN)
        bars.add(b)
    return bars


def reshaped(bars: VGroup, values, unit: float) -> VGroup:
    """A copy of `bars` with each bar's height set to its new value, still standing on its base."""
    target = bars.copy()
    for b, v in zip(target, values):
        b.stretch_to_fit_height(max(v * unit, 1e-3), about_edge=DOWN)
    return target


def labels_under(bars: VGroup, texts, size: float = style.SMALL_SIZE, color: str = style.MUTED) -> VGroup:
    """A small label under each bar."""
    return VGroup(
        *(
            style.zh(t, size=size, color=color).next_to(b, DOWN, buff=style.GAP_S).set_y(bars.get_bottom()[1] - 0.22)
            for b, t in zip(bars, texts)
        )
    )


def labels_over(bars: VGroup, texts, size: float = style.SMALL_SIZE, color: str = style.TEXT) -> VGroup:
    """A small value label on top of each bar."""
    return VGroup(*(style.zh(t, size=size, color=color).next_to(b, UP, buff=style.GAP_XS) for b, t in zip(bars, texts)))


# -- moe_softmax_as_soft_max ---------------------------------------------------------------
class MoeSoftmaxAsSoftMax(LectureScene):
    """Equal steps become equal ratios; a shift changes nothing; temperature sharpens the soft max;
    the two-way case is the sigmoid; and weights summing to 1 keep a product of 30 layers level."""

    STEP_LEFT, STEP_BASE = -6.4, 0.2  # the four logits' bars
    STEP_UNIT, STEP_WIDTH, STEP_GAP = 0.35, 0.32, 0.14
    EXP_X = -3.6  # the exp box
    OUT_LEFT, OUT_UNIT = -2.9, 0.1  # exp's outputs, then the probabilities
    PROB_UNIT = 2.6
    DIAL_AT = 3.55 * RIGHT + 0.9 * UP  # the temperature dial, over the low bars of experts 5 to 7
    ROW_LEFT, ROW_BASE, ROW_WIDTH, ROW_GAP = 0.9, -1.7, 0.36, 0.18  # 「词」's eight probabilities
    ROW_UNIT = 3.2
    SIG_CENTRE = 3.4 * LEFT + 0.4 * DOWN
    LANES_LEFT, LANES_TOP, LANE_PITCH, LANE_WIDTH = 0.6, 1.9, 1.05, 4.0

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        steps = facts["steps"].value
        probs = facts["step_probs"].value
        z_bars = bar_row(
            steps,
            self.STEP_UNIT,
            self.STEP_WIDTH,
            self.STEP_GAP,
            style.SERIES_A,
            base_y=self.STEP_BASE,
            left_x=self.STEP_LEFT,
        )
        z_base = Line(
            z_bars.get_corner(DOWN + LEFT) + 0.1 * LEFT,
            z_bars.get_corner(DOWN + RIGHT) + 0.1 * RIGHT,
            color=style.MUTED,
            stroke_width=2,
        )
        z_names = labels_under(z_bars, facts["steps"].text.split(" "))
        z_head = style.zh("分数", size=style.SMALL_SIZE, color=style.MUTED).next_to(z_bars, UP, buff=style.GAP_L)
        z_head.set_y(self.STEP_BASE + 1.6)
        exp_box = widgets.block(0.9, 0.6, style.COMPUTE, "exp", size=style.LABEL_SIZE).move_to((self.EXP_X, 0.8, 0))
        exps = [float(np.exp(z)) for z in steps]
        out_bars = bar_row(
            exps, self.OUT_UNIT, self.STEP_WIDTH + 0.1, 0.5, style.SERIES_B, base_y=self.STEP_BASE, left_x=self.OUT_LEFT
        )
        ratios = VGroup(
            *(
                style.zh("×e", size=style.SMALL_SIZE, color=style.HIGHLIGHT).move_to(
                    ((a.get_x() + b.get_x()) / 2, b.get_top()[1] + 0.25, 0)
                )
                for a, b in itertools.pairwise(out_bars)
            )
        )
        e_note = style.zh(f"e ≈ {facts['e'].text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        e_note.next_to(out_bars, RIGHT, buff=style.GAP_M).align_to(out_bars, UP)
        p_bars = reshaped(out_bars, [p * self.PROB_UNIT / self.OUT_UNIT for p in probs], self.OUT_UNIT)
        p_names = labels_under(p_bars, facts["step_probs"].text.split(" "), color=style.TEXT)
        sum_note = style.zh("加起来 = 1", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        sum_note.next_to(p_names, DOWN, buff=style.GAP_S)
        with self.narrate("soft_exp") as beat:
            self.play(
                FadeIn(z_base),
                LaggedStart(*(GrowFromEdge(b, DOWN) for b in z_bars), lag_ratio=0.2),
                FadeIn(z_names),
                FadeIn(z_head),
                run_time=beat.share(0.15),
            )
            self.play(FadeIn(exp_box), run_time=beat.share(0.05))
            through_exp = VGroup(*(z.copy() for z in z_bars))
            self.play(
                LaggedStart(*(ReplacementTransform(z, o) for z, o in zip(through_exp, out_bars)), lag_ratio=0.25),
                run_time=beat.share(0.2),
            )
            self.play(
                LaggedStart(*(FadeIn(r, scale=1.5) for r in ratios), lag_ratio=0.4),
                FadeIn(e_note),
                run_time=beat.share(0.2),
            )
            self.play(Transform(out_bars, p_bars), FadeOut(ratios), FadeOut(e_note), run_time=beat.share(0.15))
            self.play(FadeIn(p_names), FadeIn(sum_note), run_time=beat.share(0.1))
        # the copies that flew through exp are left under out_bars: clear them with the rest later
        lift = 0.6
        plus = style.zh(f"+{facts['shift_by'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT).next_to(
            z_head, RIGHT, buff=style.GAP_M
        )
        same = style.caption_stack("整体加常数，结果不变", size=style.LABEL_SIZE)
        same.next_to(VGroup(z_bars, p_bars), UP, buff=style.GAP_XL).set_x(-3.8)
        shift_note = style.zh(f"最大差 {facts['shift'].text}", size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
        shift_note.next_to(same, DOWN, buff=style.GAP_S, aligned_edge=LEFT)
        with self.narrate("soft_shift") as beat:
            self.play(FadeIn(plus), VGroup(z_bars, z_base, z_names).animate.shift(lift * UP), run_time=beat.share(0.3))
            self.play(
                Indicate(out_bars, color=style.HIGHLIGHT, scale_factor=1.05), FadeIn(same), run_time=beat.share(0.3)
            )
            self.play(FadeIn(shift_note), run_time=beat.share(0.15))
            self.play(
                VGroup(z_bars, z_base, z_names).animate.shift(lift * DOWN), FadeOut(plus), run_time=beat.share(0.15)
            )

        tempered = facts["tempered"].value
        taus = facts["temperatures"].text.split(" ")
        p_max = facts["p_max"].text.split(" ")
        row_bars = bar_row(
            tempered[0],
            self.ROW_UNIT,
            self.ROW_WIDTH,
            self.ROW_GAP,
            expert_color,
            base_y=self.ROW_BASE,
            left_x=self.ROW_LEFT,
        )
        row_base = Line(
            row_bars.get_corner(DOWN + LEFT) + 0.1 * LEFT,
            row_bars.get_corner(DOWN + RIGHT) + 0.1 * RIGHT,
            color=style.MUTED,
            stroke_width=2,
        )
        row_names = labels_under(row_bars, [str(e) for e in range(len(row_bars))])
        row_head = style.zh("「词」对 8 位专家：softmax(z / τ)", size=style.SMALL_SIZE, color=style.MUTED)
        row_head.move_to((self.ROW_LEFT, self.ROW_BASE + self.ROW_UNIT + 0.55, 0), aligned_edge=LEFT)
        logit_text = style.zh(f"z = {facts['logits'].text}", size=style.SMALL_SIZE - 4, color=style.MUTED)
        logit_text.next_to(row_head, DOWN, buff=style.GAP_S, aligned_edge=LEFT)

        def dial(k: int) -> VGroup:
            return (
                VGroup(
                    style.zh(f"τ = {taus[k]}", size=style.SMALL_SIZE, color=style.HIGHLIGHT),
                    style.zh(f"p_max = {p_max[k]}", size=style.SMALL_SIZE),
                )
                .arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
                .move_to(self.DIAL_AT, aligned_edge=LEFT)
            )

        readout = dial(0)
        soft_max = style.zh(f"最大始终是 {facts['argmax'].text}", size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
        soft_max.next_to(readout, DOWN, buff=style.GAP_M, aligned_edge=LEFT)
        with self.narrate("soft_temperature") as beat:
            self.play(
                FadeIn(row_head),
                FadeIn(logit_text),
                FadeIn(row_base),
                FadeIn(row_names),
                LaggedStart(*(GrowFromEdge(b, DOWN) for b in row_bars), lag_ratio=0.1),
                FadeIn(readout),
                run_time=beat.share(0.2),
            )
            for k in range(1, len(tempered)):
                self.play(
                    Transform(row_bars, reshaped(row_bars, tempered[k], self.ROW_UNIT)),
                    Transform(readout, dial(k)),
                    run_time=beat.share(0.15),
                )
            self.play(FadeIn(soft_max), Indicate(row_bars[3], color=style.HIGHLIGHT), run_time=beat.share(0.15))

        # the sigmoid, traced by the two-way softmax
        self.play(*(FadeOut(m) for m in self.mobjects if m is not heading), run_time=CLEAR_SECONDS)
        axes = sketch_axes([-5, 5, 1], [0, 1, 0.5], 5.6, 3.2).move_to(self.SIG_CENTRE)
        curve = axes.plot(lambda v: 1 / (1 + np.exp(-v)), x_range=[-5, 5], color=style.SCHEMATIC, stroke_width=3)
        z3 = facts["z3"].value
        tracer = Dot(axes.c2p(-5, 1 / (1 + np.exp(5))), color=style.HIGHLIGHT, radius=0.07)
        trace = VMobject(stroke_color=style.HIGHLIGHT, stroke_width=5)
        trace.set_points_as_corners([tracer.get_center(), tracer.get_center()])
        zs = np.linspace(-5, z3, 60)

        def follow(mob, alpha) -> None:
            upto = max(int(alpha * (len(zs) - 1)), 1)
            pts = [axes.c2p(v, float(np.exp(v) / (np.exp(v) + 1.0))) for v in zs[: upto + 1]]  # softmax([v, 0])[0]
            mob.set_points_as_corners(pts)
            tracer.move_to(pts[-1])

        formula = style.math('sigma(z) = op("softmax")([z, 0])_0', size=style.MATH_LABEL_SIZE)
        formula.next_to(axes, UP, buff=style.GAP_M)
        point = style.zh(
            f"σ({facts['z3'].text}) = {facts['sigmoid'].text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT
        )
        point.move_to(axes.c2p(z3 - 0.3, 0.62), aligned_edge=LEFT)
        gap = style.zh(f"两条路相差 {facts['two_way'].text}", size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
        gap.next_to(axes, DOWN, buff=style.GAP_M)
        with self.narrate("soft_sigmoid") as beat:
            self.play(Create(axes), FadeIn(formula), run_time=beat.share(0.15))
            self.play(Create(curve), run_time=beat.share(0.15))
            self.add(trace, tracer)
            self.play(UpdateFromAlphaFunc(trace, follow, rate_func=linear), run_time=beat.share(0.35))
            self.play(FadeIn(point), FadeIn(gap), run_time=beat.share(0.15))

        sums = facts["sums"].text.split(" ")
        lanes = facts["lanes"].value
        finals = (facts["shrunk"].text, "1", facts["grown"].text)
        colors = (style.VERDICT_BAD, style.VERDICT_GOOD, style.VERDICT_BAD)
        lane_lines, balls, names, ends = VGroup(), VGroup(), VGroup(), VGroup()
        for i, s in enumerate(sums):
            y = self.LANES_TOP - i * self.LANE_PITCH
            lane_lines.add(
                Line(
                    (self.LANES_LEFT, y, 0),
                    (self.LANES_LEFT + self.LANE_WIDTH, y, 0),
                    color=style.MUTED,
                    stroke_width=2,
                )
            )
            names.add(
                style.zh(f"和 = {s}", size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    lane_lines[-1], UP, buff=style.GAP_M, aligned_edge=LEFT
                )
            )
            balls.add(widgets.ball(style.FORWARD).move_to((self.LANES_LEFT, y, 0)))
            ends.add(
                style.zh(f"长度 {finals[i]}", size=style.SMALL_SIZE, color=colors[i]).next_to(
                    (self.LANES_LEFT + self.LANE_WIDTH, y, 0), RIGHT, buff=style.GAP_L
                )
            )
        layers = facts["layers"].value
        ticks = VGroup(
            *(
                Line(UP * 0.06, DOWN * 0.06, color=style.MUTED, stroke_width=1).move_to(
                    (self.LANES_LEFT + self.LANE_WIDTH * n / layers, ln.get_y(), 0)
                )
                for ln in lane_lines
                for n in range(0, layers + 1, 5)
            )
        )
        schematic = style.zh(f"示意：{facts['layers'].text} 个因子连乘", size=style.SMALL_SIZE, color=style.MUTED)
        schematic.next_to(lane_lines, DOWN, buff=style.GAP_M, aligned_edge=LEFT)
        convex = style.caption_stack(
            "权重和为 1：加权平均不比最长的那个长",
            f"{facts['draws'].text} 次抽样，最大比值 {facts['convex'].text} ≤ 1",
            size=style.SMALL_SIZE,
            color=style.VERDICT_GOOD,
        )
        convex.next_to(schematic, DOWN, buff=style.GAP_S, aligned_edge=LEFT)
        radius = widgets.BALL_RADIUS

        def travel(group, alpha) -> None:
            n = alpha * layers
            for ball, lane, line in zip(group, lanes, lane_lines):
                k = min(int(n), layers - 1)
                size = lane[k] + (n - k) * (lane[k + 1] - lane[k])
                ball.scale_to_fit_width(2 * radius * min(max(size, 0.15) ** 0.5, 2.2))
                ball.move_to((self.LANES_LEFT + self.LANE_WIDTH * alpha, line.get_y(), 0))

        with self.narrate("soft_norm") as beat:
            self.play(
                FadeIn(lane_lines),
                FadeIn(ticks),
                FadeIn(names),
                FadeIn(balls),
                FadeIn(schematic),
                run_time=beat.share(0.15),
            )
            self.play(UpdateFromAlphaFunc(balls, travel, rate_func=linear), run_time=beat.share(0.4))
            self.play(LaggedStart(*(FadeIn(e) for e in ends), lag_ratio=0.3), run_time=beat.share(0.15))
            self.play(FadeIn(convex), run_time=beat.share(0.1))
        self.finish()


# -- moe_router_topk -----------------------------------------------------------------------
def heat_color(v: float, scale: float) -> tuple[str, float]:
    """A heatmap cell: SERIES_B for a positive value, SERIES_A for a negative one, opacity by size."""
    return (style.SERIES_B if v > 0 else style.SERIES_A), min(abs(v) / scale, 1.0) * style.FILL_SOLID


class MoeRouterTopk(LectureScene):
    """16 characters times the router matrix give a 16 × 8 heatmap; 「词」 keeps its top 2, renormalised
    (softmax) or V3's way (sigmoid); all 32 picks land on the experts, unevenly."""

    ROWS_TOP, ROW_PITCH = 2.55, 0.29
    CHAR_X = -6.5
    STRIP_LEFT, STRIP_CELL = -6.2, 0.04  # 32 numbers per character
    W_X = -3.85
    HEAT_LEFT, CELL = -3.1, 0.29
    PROB_LEFT, PROB_BASE, PROB_UNIT, PROB_WIDTH, PROB_GAP = 0.9, 0.75, 2.6, 0.42, 0.24
    GATES_LEFT, GATES_WIDTH, GATE_HEIGHT = 2.9, 3.6, 0.36
    BOX_LEFT, BOX_Y, BOX_SIZE, BOX_GAP = 0.9, -1.75, 0.5, 0.18
    LOAD_UNIT = 0.3

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        text = facts["text"].value
        ys = [self.ROWS_TOP - self.ROW_PITCH * t for t in range(len(text))]
        chars = VGroup(*(style.zh(ch, size=style.SMALL_SIZE).move_to((self.CHAR_X, y, 0)) for ch, y in zip(text, ys)))
        strips = VGroup()
        for row, y in zip(facts["embeddings"].value, ys):
            cells = VGroup()
            for i, v in enumerate(row):
                color, opacity = heat_color(v, 2.0)
                cells.add(
                    widgets.bar(self.STRIP_CELL, self.ROW_PITCH * 0.7, color, opacity=opacity).move_to(
                        (self.STRIP_LEFT + self.STRIP_CELL * (i + 0.5), y, 0)
                    )
                )
            strips.add(cells)
        w_block = widgets.block(0.7, 1.9, style.COMPUTE, "W", size=style.LABEL_SIZE)
        w_block.move_to((self.W_X, (ys[0] + ys[-1]) / 2, 0))
        w_size = style.zh(f"{facts['dim'].text}×{facts['experts'].text}", size=style.SMALL_SIZE, color=style.MUTED)
        w_block.add(w_size.next_to(w_block, DOWN, buff=style.GAP_S))
        logits = facts["logits"].value
        experts = len(logits[0])
        heat = VGroup()
        for row, y in zip(logits, ys):
            cells = VGroup()
            for e, v in enumerate(row):
                color, opacity = heat_color(v, 3.0)
                cells.add(
                    widgets.bar(
                        self.CELL, self.CELL, color, opacity=opacity, stroke_color=style.MUTED, stroke_width=GRID_STROKE
                    ).move_to((self.HEAT_LEFT + self.CELL * (e + 0.5), y, 0))
                )
            heat.add(cells)
        heat_head = VGroup(
            *(
                style.zh(str(e), size=style.SMALL_SIZE - 4, color=style.MUTED).next_to(cell, UP, buff=style.GAP_S)
                for e, cell in enumerate(heat[0])
            )
        )
        with self.narrate("topk_matrix") as beat:
            self.play(LaggedStart(*(FadeIn(c) for c in chars), lag_ratio=0.05), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(s, shift=0.1 * RIGHT) for s in strips), lag_ratio=0.05), run_time=beat.share(0.2)
            )
            self.play(FadeIn(w_block), FadeIn(heat_head), run_time=beat.share(0.1))
            self.play(
                LaggedStart(*(FadeIn(r, shift=0.15 * RIGHT) for r in heat), lag_ratio=0.15), run_time=beat.share(0.4)
            )

        token = 2
        focus = Rectangle(
            width=heat.width + 0.12, height=self.CELL + 0.08, stroke_color=style.HIGHLIGHT, stroke_width=3
        ).move_to(heat[token])
        char_focus = Rectangle(
            width=0.4, height=self.CELL + 0.08, stroke_color=style.HIGHLIGHT, stroke_width=3
        ).move_to(chars[token])
        probs = [float(p) for p in facts["row_probs"].value]
        prob_bars = bar_row(
            probs,
            self.PROB_UNIT,
            self.PROB_WIDTH,
            self.PROB_GAP,
            expert_color,
            base_y=self.PROB_BASE,
            left_x=self.PROB_LEFT,
        )
        prob_values = labels_over(prob_bars, facts["row_probs"].text.split(" "), size=style.SMALL_SIZE - 4)
        prob_names = labels_under(prob_bars, [str(e) for e in range(experts)])
        prob_head = style.zh("「词」的 softmax", size=style.SMALL_SIZE, color=style.MUTED)
        prob_head.next_to(prob_bars, UP, buff=style.GAP_L).align_to(prob_bars, LEFT)
        first, second = facts["first"].value, facts["second"].value
        losers = VGroup(*(b for e, b in enumerate(prob_bars) if e not in (first, second)))
        loser_values = VGroup(*(v for e, v in enumerate(prob_values) if e not in (first, second)))

        def gate_bar(values, label: str, y: float) -> VGroup:
            texts = values.text.split(" ")
            parts = VGroup()
            x = self.GATES_LEFT
            for i, (g, t) in enumerate(zip(values.value, texts)):
                color = expert_color((first, second)[i], experts)
                piece = widgets.block(
                    g * self.GATES_WIDTH,
                    self.GATE_HEIGHT,
                    color,
                    t,
                    size=style.SMALL_SIZE - 2,
                    opacity=style.FILL_SOLID,
                    label_color=style.BACKGROUND,
                )
                piece.move_to((x + g * self.GATES_WIDTH / 2, y, 0))
                x += g * self.GATES_WIDTH
                parts.add(piece)
            name = style.zh(label, size=style.SMALL_SIZE, color=style.MUTED)
            name.next_to(parts, LEFT, buff=style.GAP_M)
            return VGroup(parts, name)

        soft = gate_bar(facts["soft_gates"], "softmax", -0.55)
        pair_note = style.zh(
            f"选 {facts['first'].text}与 {facts['second'].text}，两位再归一",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        pair_note.next_to(soft, UP, buff=style.GAP_S).align_to(soft[0], LEFT)
        with self.narrate("topk_pick") as beat:
            self.play(Create(focus), Create(char_focus), run_time=beat.share(0.1))
            self.play(
                LaggedStart(*(GrowFromEdge(b, DOWN) for b in prob_bars), lag_ratio=0.08),
                FadeIn(prob_names),
                FadeIn(prob_head),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(prob_values), run_time=beat.share(0.1))
            self.play(
                losers.animate.set_fill(opacity=style.FILL_FAINT),
                loser_values.animate.set_opacity(0.4),
                Indicate(VGroup(prob_bars[first], prob_bars[second]), color=style.HIGHLIGHT),
                run_time=beat.share(0.2),
            )
            self.play(FadeIn(pair_note), FadeIn(soft), run_time=beat.share(0.2))

        sig = gate_bar(facts["sig_gates"], "V3 sigmoid", -1.3)
        same = style.caption_stack(
            f"选中的两位：{facts['same_sets'].text} 个字相同",
            f"权重最大差 {facts['gap'].text}",
            size=style.SMALL_SIZE,
            color=style.TEXT,
        )
        same.next_to(sig, DOWN, buff=style.GAP_M).align_to(sig, LEFT)
        with self.narrate("topk_sigmoid") as beat:
            self.play(FadeIn(sig, shift=0.2 * DOWN), run_time=beat.share(0.35))
            self.play(FadeIn(same), run_time=beat.share(0.2))

        chosen = facts["chosen"].value
        picked = VGroup(
            *(
                Rectangle(width=self.CELL, height=self.CELL, stroke_color=style.HIGHLIGHT, stroke_width=2.5).move_to(
                    heat[t][e]
                )
                for t, row in enumerate(chosen)
                for e in row
            )
        )
        boxes = VGroup(
            *(
                widgets.block(
                    self.BOX_SIZE, self.BOX_SIZE, expert_color(e, experts), str(e), size=style.SMALL_SIZE
                ).move_to((self.BOX_LEFT + e * (self.BOX_SIZE + self.BOX_GAP) + self.BOX_SIZE / 2, self.BOX_Y, 0))
                for e in range(experts)
            )
        )
        loads = [int(v) for v in facts["loads"].value]
        load_texts = facts["loads"].text.split(" ")
        load_bars = VGroup(
            *(
                widgets.bar(self.BOX_SIZE * 0.6, n * self.LOAD_UNIT, expert_color(e, experts)).next_to(
                    boxes[e], UP, buff=style.FLUSH
                )
                for e, n in enumerate(loads)
            )
        )
        counts = VGroup(
            *(
                style.zh(t, size=style.SMALL_SIZE).next_to(b, UP, buff=style.GAP_XS)
                for t, b in zip(load_texts, load_bars)
            )
        )
        mean_y = boxes.get_top()[1] + facts["mean"].value * self.LOAD_UNIT
        mean_line = DashedLine(
            (boxes.get_left()[0] - 0.1, mean_y, 0),
            (boxes.get_right()[0] + 0.1, mean_y, 0),
            color=style.MUTED,
            stroke_width=2,
        )
        mean_name = style.zh(f"平均 {facts['mean'].text}", size=style.SMALL_SIZE, color=style.MUTED)
        mean_name.next_to(mean_line, UP, buff=style.GAP_XS).align_to(mean_line, RIGHT)
        ratio = style.zh(f"最忙 / 平均 = {facts['busiest_ratio'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        ratio.move_to((self.BOX_LEFT, 1.3, 0), aligned_edge=LEFT)
        flyers = VGroup(
            *(
                Dot(heat[t][e].get_center(), radius=0.05, color=expert_color(e, experts))
                for t, row in enumerate(chosen)
                for e in row
            )
        )
        targets = [boxes[e].get_center() for row in chosen for e in row]
        with self.narrate("topk_loads") as beat:
            self.play(
                *(FadeOut(m) for m in (prob_bars, prob_values, prob_names, prob_head, soft, sig, same, pair_note)),
                FadeOut(focus),
                FadeOut(char_focus),
                run_time=beat.share(0.1),
            )
            self.play(
                FadeIn(boxes), LaggedStart(*(Create(p) for p in picked), lag_ratio=0.02), run_time=beat.share(0.2)
            )
            self.add(flyers)
            self.play(
                LaggedStart(*(f.animate.move_to(p) for f, p in zip(flyers, targets)), lag_ratio=0.03),
                run_time=beat.share(0.3),
            )
            self.play(
                FadeOut(flyers),
                LaggedStart(*(GrowFromEdge(b, DOWN) for b in load_bars), lag_ratio=0.1),
                FadeIn(counts),
                Create(mean_line),
                FadeIn(mean_name),
                run_time=beat.share(0.2),
            )
            self.play(FadeIn(ratio), run_time=beat.share(0.1))

        v3 = style.caption_stack(
            f"V3：{facts['v3_routed'].text} 位路由专家选 {facts['v3_top_k'].text} 位"
            f" + {facts['v3_shared'].text} 位共享",
            f"每个 token 用到专家参数的 {facts['v3_used'].text} = {facts['v3_used_pct'].text}",
            size=style.SMALL_SIZE,
        )
        v3.move_to((self.BOX_LEFT, 2.45, 0), aligned_edge=LEFT)
        with self.narrate("topk_v3") as beat:
            self.play(FadeIn(v3, shift=0.2 * DOWN), run_time=beat.share(0.3))
        self.finish()


# -- moe_dispatch_permute ------------------------------------------------------------------
class MoeDispatchPermute(LectureScene):
    """The 32 picks, sorted by expert into one buffer (offsets by a prefix sum); across 4 cards that sort is
    the all-to-all; combine runs it backwards and adds each token's two outputs."""

    PICK_Y, BUFFER_Y = 2.45, 1.35
    PITCH, GROUP_GAP = 0.38, 0.12
    MATRIX_LEFT, MATRIX_TOP, MATRIX_CELL = -5.6, -0.15, 0.5
    SEND_X, RECV_X, CARDS_TOP, CARD_PITCH = 0.9, 5.6, -0.2, 0.62
    MERGED_PITCH = 0.76

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        text = facts["text"].value
        picks = facts["picks"].value
        order = facts["order"].value
        experts = 8
        left = -self.PITCH * (len(picks) - 1) / 2
        chips = VGroup(
            *(
                chip(text[t], expert_color(e, experts), CHIP - 0.02).move_to((left + self.PITCH * j, self.PICK_Y, 0))
                for j, (t, e) in enumerate(picks)
            )
        )
        head = style.zh("按字的顺序：每个字两份，颜色是它去的专家", size=style.SMALL_SIZE, color=style.MUTED)
        head.next_to(chips, DOWN, buff=style.GAP_S).align_to(chips, LEFT)
        # buffer positions: sorted by expert, a small gap between two experts' groups
        slots = []
        x = -(self.PITCH * (len(picks) - 1) + self.GROUP_GAP * (experts - 1)) / 2
        previous = None
        for j in order:
            e = picks[j][1]
            if previous is not None and e != previous:
                x += self.GROUP_GAP
            slots.append(x)
            x += self.PITCH
            previous = e
        target = {j: slots[k] for k, j in enumerate(order)}
        loads = [int(v) for v in facts["loads"].value]
        offsets = facts["offsets"].text.split(" ")
        starts = [sum(loads[:e]) for e in range(experts)]
        group_names = VGroup(
            *(
                style.zh(f"专家 {e}", size=style.SMALL_SIZE - 4, color=expert_color(e, experts)).move_to(
                    ((slots[starts[e]] + slots[starts[e] + loads[e] - 1]) / 2, self.BUFFER_Y - 0.38, 0)
                )
                for e in range(experts)
            )
        )
        with self.narrate("dispatch_sort") as beat:
            self.play(
                LaggedStart(*(FadeIn(c, shift=0.1 * DOWN) for c in chips), lag_ratio=0.03),
                FadeIn(head),
                run_time=beat.share(0.3),
            )
            self.play(FadeOut(head), run_time=beat.share(0.05))
            self.play(
                LaggedStart(*(chips[j].animate.move_to((target[j], self.BUFFER_Y, 0)) for j in order), lag_ratio=0.04),
                run_time=beat.share(0.4),
            )
            self.play(FadeIn(group_names), run_time=beat.share(0.15))

        marks = VGroup(
            *(
                VGroup(
                    Line(UP * 0.14, DOWN * 0.14, color=style.HIGHLIGHT, stroke_width=3).move_to(
                        (slots[starts[e]] - self.PITCH / 2 - self.GROUP_GAP / 4, self.BUFFER_Y + 0.3, 0)
                    ),
                    style.zh(offsets[e], size=style.SMALL_SIZE, color=style.HIGHLIGHT),
                )
                for e in range(experts)
            )
        )
        for mark in marks:
            mark[1].next_to(mark[0], UP, buff=style.GAP_XS)
        offset_head = style.zh("起点 = 前面负载之和", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        offset_head.move_to((chips.get_left()[0], self.PICK_Y + 0.05, 0), aligned_edge=LEFT)
        with self.narrate("dispatch_offsets") as beat:
            self.play(FadeIn(offset_head), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(FadeIn(m, shift=0.1 * DOWN) for m in marks), lag_ratio=0.3), run_time=beat.share(0.6)
            )

        sends = facts["sends"].value
        sends_text = facts["sends_text"].value
        cards = len(sends)
        cell = self.MATRIX_CELL
        matrix = VGroup()
        for i, row in enumerate(sends_text):
            for j, t in enumerate(row):
                box = Rectangle(
                    width=cell,
                    height=cell,
                    stroke_color=style.MUTED,
                    stroke_width=GRID_STROKE,
                    fill_color=style.COMM,
                    fill_opacity=sends[i][j] / 4 * style.FILL_SOFT,
                )
                box.move_to((self.MATRIX_LEFT + cell * (j + 0.5), self.MATRIX_TOP - cell * (i + 0.5), 0))
                matrix.add(VGroup(box, style.zh(t, size=style.SMALL_SIZE).move_to(box)))
        row_names = VGroup(
            *(
                style.zh(f"发 {i}", size=style.SMALL_SIZE - 4, color=style.MUTED).next_to(
                    matrix[i * cards], LEFT, buff=style.GAP_S
                )
                for i in range(cards)
            )
        )
        col_names = VGroup(
            *(
                style.zh(f"收 {j}", size=style.SMALL_SIZE - 4, color=style.MUTED).next_to(
                    matrix[j], UP, buff=style.GAP_S
                )
                for j in range(cards)
            )
        )
        row_sums = VGroup(
            *(
                style.zh(t, size=style.SMALL_SIZE, color=style.VERDICT_GOOD).next_to(
                    matrix[i * cards + cards - 1], RIGHT, buff=style.GAP_M
                )
                for i, t in enumerate(facts["row_sums"].text.split(" "))
            )
        )
        col_sums = VGroup(
            *(
                style.zh(t, size=style.SMALL_SIZE, color=style.VERDICT_BAD).next_to(
                    matrix[(cards - 1) * cards + j], DOWN, buff=style.GAP_S
                )
                for j, t in enumerate(facts["col_sums"].text.split(" "))
            )
        )
        senders, receivers = VGroup(), VGroup()
        for i in range(cards):
            y = self.CARDS_TOP - self.CARD_PITCH * i
            senders.add(
                widgets.block(0.9, 0.42, style.MUTED, f"卡 {i}", opacity=style.FILL_FAINT).move_to((self.SEND_X, y, 0))
            )
            receivers.add(
                widgets.block(0.9, 0.42, style.MUTED, f"卡 {i}", opacity=style.FILL_FAINT).move_to((self.RECV_X, y, 0))
            )
        arrows = VGroup(
            *(
                Line(
                    senders[i].get_right(),
                    receivers[j].get_left(),
                    color=style.COMM,
                    stroke_width=1.6 * sends[i][j],
                    stroke_opacity=0.8,
                )
                for i in range(cards)
                for j in range(cards)
                if sends[i][j]
            )
        )
        side = style.zh(
            f"每卡 {facts['experts_per_card'].text} 位专家、{facts['tokens_per_card'].text} 个字",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        side.next_to(VGroup(senders, receivers), UP, buff=style.GAP_M)
        with self.narrate("dispatch_all_to_all") as beat:
            self.play(FadeOut(offset_head), FadeIn(senders), FadeIn(receivers), FadeIn(side), run_time=beat.share(0.1))
            self.play(
                FadeIn(row_names),
                FadeIn(col_names),
                LaggedStart(*(FadeIn(c) for c in matrix), lag_ratio=0.05),
                run_time=beat.share(0.25),
            )
            self.play(LaggedStart(*(Create(a) for a in arrows), lag_ratio=0.05), run_time=beat.share(0.25))
            self.play(FadeIn(row_sums), run_time=beat.share(0.1))
            self.play(FadeIn(col_sums), Indicate(receivers, color=style.VERDICT_BAD), run_time=beat.share(0.15))

        lefts = -self.MERGED_PITCH * (len(text) - 1) / 2
        merged = VGroup(
            *(
                chip(ch, style.FORWARD, CHIP).move_to((lefts + self.MERGED_PITCH * t, self.PICK_Y, 0))
                for t, ch in enumerate(text)
            )
        )
        weights = style.zh("每个字：两份输出按门控权重相加", size=style.SMALL_SIZE)
        weights.move_to((0, self.BUFFER_Y + 0.2, 0))
        trip = style.zh(
            f"恒等专家：合并后与输入相差 {facts['round_trip'].text}", size=style.SMALL_SIZE, color=style.VERDICT_GOOD
        )
        trip.next_to(weights, DOWN, buff=style.GAP_SM)
        with self.narrate("dispatch_combine") as beat:
            self.play(
                FadeOut(marks),
                FadeOut(group_names),
                Indicate(chips, color=style.HIGHLIGHT, scale_factor=1.1),
                run_time=beat.share(0.15),
            )
            self.play(
                LaggedStart(
                    *(chips[j].animate.move_to((left + self.PITCH * j, self.PICK_Y, 0)) for j in order), lag_ratio=0.03
                ),
                run_time=beat.share(0.3),
            )
            self.play(
                *(Transform(VGroup(chips[2 * t], chips[2 * t + 1]), merged[t]) for t in range(len(text))),
                run_time=beat.share(0.2),
            )
            self.play(FadeIn(weights), FadeIn(trip), run_time=beat.share(0.15))
        self.finish()


# -- moe_capacity_drop ---------------------------------------------------------------------
class MoeCapacityDrop(LectureScene):
    """Each expert a column of seats: the picks queue in (first choices first), a full column sends a pick
    down the residual; more seats drop less and pad more."""

    QUEUE_Y, PITCH = 2.45, 0.38
    COLUMN_LEFT, COLUMN_PITCH, SEAT_W, SEAT_H, BASE_Y = -5.9, 0.72, 0.5, 0.34, -2.05
    LANE_LEFT, LANE_Y, LANE_WIDTH = 0.4, -2.05, 4.2
    TABLE = (
        widgets.Column(1.3, np.array((0.0, 0.0, 0.0))),
        widgets.Column(2.7, np.array((0.0, 0.0, 0.0))),
        widgets.Column(4.0, np.array((0.0, 0.0, 0.0))),
        widgets.Column(5.3, np.array((0.0, 0.0, 0.0))),
    )
    TABLE_TOP, TABLE_PITCH = 1.45, 0.46

    def seat_at(self, e: int, i: int) -> np.ndarray:
        return np.array((self.COLUMN_LEFT + self.COLUMN_PITCH * e, self.BASE_Y + self.SEAT_H * (i + 0.5) + 0.02 * i, 0))

    def seats(self, cap: int, experts: int) -> VGroup:
        return VGroup(
            *(
                VGroup(
                    *(
                        Rectangle(
                            width=self.SEAT_W, height=self.SEAT_H, stroke_color=style.MUTED, stroke_width=GRID_STROKE
                        ).move_to(self.seat_at(e, i))
                        for i in range(cap)
                    )
                )
                for e in range(experts)
            )
        )

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        text = facts["text"].value
        chosen = facts["chosen"].value
        experts = 8
        caps = [int(c) for c in facts["capacities"].value]
        kept = facts["kept"].value
        queue = [(t, r) for r in range(len(chosen[0])) for t in range(len(chosen))]
        left = -self.PITCH * (len(queue) - 1) / 2
        chips = VGroup(
            *(
                chip(text[t], expert_color(chosen[t][r], experts), CHIP - 0.04).move_to(
                    (left + self.PITCH * q, self.QUEUE_Y, 0)
                )
                for q, (t, r) in enumerate(queue)
            )
        )
        queue_note = style.zh("先排第一志愿，再排第二志愿", size=style.SMALL_SIZE, color=style.MUTED)
        queue_note.next_to(chips, DOWN, buff=style.GAP_S).align_to(chips, LEFT)
        names = VGroup(
            *(
                style.zh(str(e), size=style.SMALL_SIZE, color=expert_color(e, experts)).move_to(
                    (self.COLUMN_LEFT + self.COLUMN_PITCH * e, self.BASE_Y - 0.25, 0)
                )
                for e in range(experts)
            )
        )
        seats = self.seats(caps[0], experts)
        factors = facts["factors"].text.split(" ")
        drops = facts["drops"].text.split(" ")
        empties = facts["empty"].text.split(" ")
        capacities = facts["capacities"].text.split(" ")
        header = widgets.text_row(
            ("容量因子", "座位", "丢弃", "空座"), self.TABLE, self.TABLE_TOP, size=style.SMALL_SIZE, color=style.MUTED
        )
        rows = [
            widgets.text_row(
                (factors[k], capacities[k], drops[k], empties[k]),
                self.TABLE,
                self.TABLE_TOP - self.TABLE_PITCH * (k + 1),
                size=style.LABEL_SIZE,
            )
            for k in range(len(caps))
        ]
        for row in rows:
            row[2].set_color(style.VERDICT_BAD)
            row[3].set_color(style.MUTED)
        lane = DashedLine(
            (self.LANE_LEFT, self.LANE_Y, 0),
            (self.LANE_LEFT + self.LANE_WIDTH, self.LANE_Y, 0),
            color=style.VERDICT_BAD,
            stroke_width=2,
        )
        lane_name = style.zh("残差：跳过专家，直接到下一层", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        lane_name.next_to(lane, DOWN, buff=style.GAP_S).align_to(lane, LEFT)
        seat_note = style.zh(
            f"容量 = ⌈容量因子 × 平均负载⌉，平均 {facts['mean'].text}", size=style.SMALL_SIZE, color=style.MUTED
        )
        seat_note.next_to(header, UP, buff=style.GAP_M).align_to(header, LEFT)
        with self.narrate("capacity_seats") as beat:
            self.play(
                LaggedStart(*(FadeIn(c) for c in chips), lag_ratio=0.02), FadeIn(queue_note), run_time=beat.share(0.25)
            )
            self.play(
                FadeIn(names), LaggedStart(*(Create(col) for col in seats), lag_ratio=0.08), run_time=beat.share(0.3)
            )
            self.play(FadeIn(header), FadeIn(seat_note), FadeIn(rows[0][:2]), run_time=beat.share(0.2))

        def places(k: int) -> tuple[dict, list]:
            """Where each queued pick sits at CF k: a seat, or (dropped) a spot on the residual lane."""
            filled = [0] * experts
            seat, dropped = {}, []
            for q, (t, r) in enumerate(queue):
                e = chosen[t][r]
                if kept[k][t][r]:
                    seat[q] = self.seat_at(e, filled[e])
                    filled[e] += 1
                else:
                    dropped.append(q)
            return seat, dropped

        def lane_spot(i: int) -> np.ndarray:
            return np.array((self.LANE_LEFT + 0.3 + 0.45 * i, self.LANE_Y + 0.28, 0))

        def padding(k: int) -> VGroup:
            seat, _ = places(k)
            taken = {tuple(np.round(p, 6)) for p in seat.values()}
            return VGroup(
                *(
                    widgets.bar(self.SEAT_W, self.SEAT_H, style.MUTED, opacity=style.FILL_FAINT).move_to(
                        self.seat_at(e, i)
                    )
                    for e in range(experts)
                    for i in range(caps[k])
                    if tuple(np.round(self.seat_at(e, i), 6)) not in taken
                )
            )

        seat0, dropped0 = places(0)
        dropped_note = style.caption_stack(
            f"丢掉：{facts['dropped_text'].text}",
            f"两位专家都丢的字：{facts['lost_both'].text}",
            size=style.SMALL_SIZE,
            color=style.VERDICT_BAD,
        )
        dropped_note.move_to((self.LANE_LEFT, self.LANE_Y + 0.6, 0), aligned_edge=LEFT + DOWN)
        spot = {q: lane_spot(i) for i, q in enumerate(dropped0)}
        pad = padding(0)
        with self.narrate("capacity_drop") as beat:
            self.play(FadeOut(queue_note), run_time=beat.share(0.05))
            self.play(
                LaggedStart(
                    *(chips[q].animate.move_to(seat0[q] if q in seat0 else spot[q]) for q in range(len(queue))),
                    lag_ratio=0.06,
                ),
                run_time=beat.share(0.5),
            )
            self.play(
                FadeIn(lane),
                FadeIn(lane_name),
                *(chips[q][0].animate.set_stroke(style.VERDICT_BAD, width=3) for q in dropped0),
                run_time=beat.share(0.15),
            )
            self.play(FadeIn(rows[0][2:]), FadeIn(pad), FadeIn(dropped_note), run_time=beat.share(0.15))

        with self.narrate("capacity_more") as beat:
            for k in range(1, len(caps)):
                seat_k, dropped_k = places(k)
                spots = {q: lane_spot(i) for i, q in enumerate(dropped_k)}
                new_seats = self.seats(caps[k], experts)
                new_pad = padding(k)
                self.play(
                    Transform(seats, new_seats),
                    FadeOut(pad),
                    FadeIn(rows[k]),
                    *([FadeOut(dropped_note)] if k == 1 else []),
                    run_time=beat.share(0.09),
                )
                for q in seat_k:
                    if q not in seat0:  # seated now: its red outline goes
                        chips[q][0].set_stroke(expert_color(chosen[queue[q][0]][queue[q][1]], experts), width=2)
                self.play(
                    *(chips[q].animate.move_to(seat_k[q] if q in seat_k else spots[q]) for q in range(len(queue))),
                    run_time=beat.share(0.09),
                )
                self.play(FadeIn(new_pad), run_time=beat.share(0.07))
                pad, seat0 = new_pad, seat_k
            self.play(Indicate(rows[-1][3], color=style.HIGHLIGHT), run_time=beat.share(0.1))

        verdict = style.caption_stack("丢词 ↔ 空转", "V3：训练和推理都不丢 token", size=style.LABEL_SIZE)
        verdict[1].set_color(style.VERDICT_GOOD)
        verdict.move_to((self.COLUMN_LEFT - 0.3, self.QUEUE_Y - 0.2, 0), aligned_edge=LEFT)
        with self.narrate("capacity_v3") as beat:
            self.play(FadeIn(verdict, shift=0.2 * DOWN), run_time=beat.share(0.3))
        self.finish()


# -- moe_gate_gradient ---------------------------------------------------------------------
class MoeGateGradient(LectureScene):
    """「词」's forward through its two experts, the gradient back along the same two paths only, then the
    router's logit gradients: two equal and opposite (renormalised) against all eight (plain softmax)."""

    TOKEN_X, EXPERT_X, OUT_X, MID_Y = -6.4, -3.5, -0.9, 0.3
    EXPERT_TOP, EXPERT_PITCH, EXPERT_W, EXPERT_H = 2.45, 0.6, 2.6, 0.42
    IDLE_Y = -2.5  # under the expert boxes
    GATE_INSET = 0.45  # a chosen expert's gate, inside its box at the right
    NAMES_Y = -1.45  # the experts' numbers, under the lowest bar and its label
    BARS_LEFT, ZERO_Y, BAR_W, BAR_GAP, GRAD_UNIT = 1.0, 0.4, 0.42, 0.25, 0.2

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        experts = 8
        first, second = facts["chosen"].value
        token = chip("词", style.FORWARD, 0.5).move_to((self.TOKEN_X, self.MID_Y, 0))
        boxes = VGroup(
            *(
                widgets.block(
                    self.EXPERT_W, self.EXPERT_H, expert_color(e, experts), f"专家 {e}", opacity=style.FILL_FAINT
                ).move_to((self.EXPERT_X, self.EXPERT_TOP - self.EXPERT_PITCH * e, 0))
                for e in range(experts)
            )
        )
        out = widgets.block(0.6, 0.5, style.FORWARD, "y", size=style.LABEL_SIZE).move_to((self.OUT_X, self.MID_Y, 0))
        used = (first, second)
        gates = facts["gates"].text.split(" ")
        ins = VGroup(
            *(
                Arrow(token.get_right(), boxes[e].get_left(), buff=style.GAP_S, color=style.FORWARD, stroke_width=4)
                for e in used
            )
        )
        outs = VGroup(
            *(
                Arrow(boxes[e].get_right(), out.get_left(), buff=style.GAP_S, color=style.FORWARD, stroke_width=4)
                for e in used
            )
        )
        gate_names = VGroup(
            *(
                style.zh(f"g = {g}", size=style.SMALL_SIZE - 4, color=style.HIGHLIGHT).move_to(
                    boxes[e].get_right() + self.GATE_INSET * LEFT
                )
                for e, g in zip(used, gates)
            )
        )
        idle = VGroup(*(b for e, b in enumerate(boxes) if e not in used))
        with self.narrate("grad_forward") as beat:
            self.play(FadeIn(token), FadeIn(boxes), FadeIn(out), run_time=beat.share(0.2))
            self.play(LaggedStart(*(Create(a) for a in ins), lag_ratio=0.3), run_time=beat.share(0.2))
            self.play(
                boxes[first][0].animate.set_fill(opacity=style.FILL_SOFT),
                boxes[second][0].animate.set_fill(opacity=style.FILL_SOFT),
                idle.animate.set_opacity(0.35),
                run_time=beat.share(0.15),
            )
            self.play(
                LaggedStart(*(Create(a) for a in outs), lag_ratio=0.3), FadeIn(gate_names), run_time=beat.share(0.25)
            )

        backs = VGroup(
            *(
                Arrow(
                    out.get_left(), boxes[e].get_right(), buff=style.GAP_S, color=style.BACKWARD, stroke_width=4
                ).shift(0.12 * DOWN)
                for e in used
            )
        )
        pulses = VGroup(*(Dot(out.get_left(), radius=0.08, color=style.BACKWARD) for _ in used))
        grad_marks = VGroup()
        for e, b in enumerate(boxes):
            if e in used:
                mark = style.zh("∇W ≠ 0", size=style.SMALL_SIZE - 2, color=style.BACKWARD)
            else:
                mark = style.zh("∇W = 0", size=style.SMALL_SIZE - 2, color=style.MUTED)
            grad_marks.add(mark.next_to(b, LEFT, buff=style.GAP_S))
        idle_note = style.zh(f"{facts['idle'].text} 位专家学不到「词」", size=style.SMALL_SIZE, color=style.MUTED)
        idle_note.move_to((self.EXPERT_X, self.IDLE_Y, 0))
        with self.narrate("grad_backward") as beat:
            self.play(FadeOut(ins), FadeOut(token), run_time=beat.share(0.1))
            self.add(pulses)
            self.play(
                *(p.animate.move_to(boxes[e].get_right()) for p, e in zip(pulses, used)),
                LaggedStart(*(Create(a) for a in backs), lag_ratio=0.2),
                run_time=beat.share(0.3),
            )
            self.play(
                FadeOut(pulses),
                LaggedStart(*(FadeIn(m) for m in grad_marks), lag_ratio=0.05),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(idle_note), run_time=beat.share(0.1))

        renorm = facts["renorm"].value
        full = facts["full"].value
        full_texts = facts["full"].text.split(" ")

        def grad_bars(values) -> VGroup:
            bars = VGroup()
            for e, v in enumerate(values):
                b = widgets.bar(self.BAR_W, max(abs(v) * self.GRAD_UNIT, 1e-3), expert_color(e, experts))
                x = self.BARS_LEFT + e * (self.BAR_W + self.BAR_GAP) + self.BAR_W / 2
                b.move_to((x, self.ZERO_Y, 0), aligned_edge=DOWN if v >= 0 else UP)
                bars.add(b)
            return bars

        zero = Line(
            (self.BARS_LEFT - 0.15, self.ZERO_Y, 0),
            (self.BARS_LEFT + experts * (self.BAR_W + self.BAR_GAP), self.ZERO_Y, 0),
            color=style.MUTED,
            stroke_width=2,
        )
        bars = grad_bars(renorm)
        names = VGroup(
            *(
                style.zh(str(e), size=style.SMALL_SIZE, color=style.MUTED).move_to((b.get_x(), self.NAMES_Y, 0))
                for e, b in enumerate(bars)
            )
        )
        head = style.zh("路由器分数的梯度 dL/dz", size=style.SMALL_SIZE, color=style.MUTED)
        head.move_to((self.BARS_LEFT, 2.75, 0), aligned_edge=LEFT)

        def value_labels(values, texts) -> VGroup:
            labels = VGroup()
            for b, v, t in zip(grad_bars(values), values, texts):
                if t is None:
                    continue
                label = style.zh(t, size=style.SMALL_SIZE - 4)
                label.next_to(b, UP if v >= 0 else DOWN, buff=style.GAP_XS)
                labels.add(label)
            return labels

        renorm_texts = [
            facts["renorm_up"].text if e == first else facts["renorm_down"].text if e == second else None
            for e in range(experts)
        ]
        renorm_labels = value_labels(renorm, renorm_texts)
        renorm_note = style.caption_stack(
            f"选中的两位里归一：{facts['moved_renorm'].text} 个分数有梯度，一正一负",
            f"中心差分核对：相差 {facts['fd_renorm'].text}",
            size=style.SMALL_SIZE,
        )
        renorm_note.move_to((self.BARS_LEFT, -2.45, 0), aligned_edge=LEFT + DOWN)
        with self.narrate("grad_renorm") as beat:
            self.play(FadeIn(head), Create(zero), FadeIn(names), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(GrowFromEdge(b, DOWN if v >= 0 else UP) for b, v in zip(bars, renorm)), lag_ratio=0.05),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(renorm_labels), FadeIn(renorm_note), run_time=beat.share(0.2))

        full_labels = value_labels(full, full_texts)
        full_note = style.caption_stack(
            f"八位一起 softmax、不归一：{facts['moved_full'].text} 个分数都有梯度",
            f"中心差分核对：相差 {facts['fd_full'].text}",
            size=style.SMALL_SIZE,
        )
        full_note.move_to(renorm_note, aligned_edge=LEFT)
        with self.narrate("grad_full") as beat:
            self.play(FadeOut(renorm_labels), FadeOut(renorm_note), run_time=beat.share(0.1))
            self.play(Transform(bars, grad_bars(full)), run_time=beat.share(0.35))
            self.play(FadeIn(full_labels), FadeIn(full_note), run_time=beat.share(0.2))
        self.finish()


# -- moe_bias_balancing --------------------------------------------------------------------
class MoeBiasBalancing(LectureScene):
    """16 load bars against the mean, played step by step while each expert's bias is nudged by γ; the
    busiest / mean ratio traced beside them; the bias chooses, the gates stay the affinities."""

    BARS_LEFT, BASE_Y, BAR_W, BAR_GAP, LOAD_UNIT = -6.5, -1.55, 0.3, 0.1, 0.0145
    KNOB_Y, BIAS_UNIT = -2.3, 2.0
    PLOT_CENTRE = 3.75 * RIGHT + 0.15 * DOWN
    PLOT_W, PLOT_H = 5.2, 2.6
    NOTE_Y = 2.55
    BELOW_LABEL_STEP = 150  # where the "first below" label sits on the plot, clear of the trace

    @staticmethod
    def add_mark(dots: VGroup, marks, step: int) -> FadeIn:
        """The dot of the marked step the trace is leaving."""
        return FadeIn(dots[list(marks).index(step)], scale=2)

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        loads = facts["loads"].value
        steps = len(loads)
        mean = facts["mean"].value
        bars = bar_row(
            loads[0],
            self.LOAD_UNIT,
            self.BAR_W,
            self.BAR_GAP,
            lambda e: style.COMPUTE,
            base_y=self.BASE_Y,
            left_x=self.BARS_LEFT,
        )
        base = Line(
            bars.get_corner(DOWN + LEFT) + 0.1 * LEFT,
            bars.get_corner(DOWN + RIGHT) + 0.1 * RIGHT,
            color=style.MUTED,
            stroke_width=2,
        )
        mean_y = self.BASE_Y + mean * self.LOAD_UNIT
        mean_line = DashedLine(
            (base.get_left()[0], mean_y, 0), (base.get_right()[0], mean_y, 0), color=style.HIGHLIGHT, stroke_width=2
        )
        mean_name = style.zh(f"平均 {facts['mean'].text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        mean_name.next_to(mean_line, RIGHT, buff=style.GAP_S)
        values = labels_over(bars, facts["step0"].text.split(" "), size=style.SMALL_SIZE - 6)
        setup = style.zh(
            f"{facts['experts'].text} 位专家 · 每步 {facts['tokens'].text} 个 token · 选 2 位",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        setup.move_to((self.BARS_LEFT, self.NOTE_Y, 0), aligned_edge=LEFT)
        start = style.zh(
            f"第 0 步：最忙 / 平均 = {facts['start_ratio'].text}", size=style.LABEL_SIZE, color=style.VERDICT_BAD
        )
        start.next_to(setup, DOWN, buff=style.GAP_SM, aligned_edge=LEFT)
        with self.narrate("bias_start") as beat:
            self.play(
                FadeIn(setup),
                Create(base),
                LaggedStart(*(GrowFromEdge(b, DOWN) for b in bars), lag_ratio=0.05),
                run_time=beat.share(0.3),
            )
            self.play(Create(mean_line), FadeIn(mean_name), FadeIn(values), run_time=beat.share(0.2))
            self.play(
                FadeIn(start), Indicate(bars[int(np.argmax(loads[0]))], color=style.HIGHLIGHT), run_time=beat.share(0.2)
            )

        aux = style.zh("常见做法：加辅助损失 α·Σ fᵢPᵢ，梯度也拉偏模型", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        aux.move_to((0.4, self.NOTE_Y, 0), aligned_edge=LEFT)
        with self.narrate("bias_aux") as beat:
            self.play(FadeIn(aux), run_time=beat.share(0.3))

        axes = sketch_axes([0, steps, 100], [1, 3.6, 0.5], self.PLOT_W, self.PLOT_H, corner=True)
        axes.move_to(self.PLOT_CENTRE)
        ratios = facts["ratios"].value
        threshold = float(facts["threshold"].value)
        limit = DashedLine(axes.c2p(0, threshold), axes.c2p(steps, threshold), color=style.VERDICT_GOOD, stroke_width=2)
        limit_name = style.zh(facts["threshold"].text, size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
        limit_name.next_to(limit, LEFT, buff=style.GAP_S)
        plot_head = style.zh("最忙 / 平均，随步数", size=style.SMALL_SIZE, color=style.MUTED)
        plot_head.next_to(axes, UP, buff=style.GAP_L).align_to(axes, LEFT)
        step_names = widgets.tick_labels(axes, x=((0, "0"), (steps, facts["steps"].text)))
        trace = VMobject(stroke_color=style.COMPUTE, stroke_width=3)
        trace.set_points_as_corners([axes.c2p(0, ratios[0]), axes.c2p(0, ratios[0])])
        bias = facts["bias"].value  # every 4th step
        knob_base = Line(
            base.get_left() * RIGHT + self.KNOB_Y * UP,
            base.get_right() * RIGHT + self.KNOB_Y * UP,
            color=style.MUTED,
            stroke_width=1,
        )
        knobs = VGroup(
            *(widgets.bar(self.BAR_W, 1e-3, style.SERIES_B).move_to((b.get_x(), self.KNOB_Y, 0)) for b in bars)
        )
        knob_name = style.zh("偏置 b", size=style.SMALL_SIZE - 4, color=style.SERIES_B)
        knob_name.next_to(knob_base, RIGHT, buff=style.GAP_S)
        marks = facts["marks"].value
        mark_texts = facts["mark_ratios"].text.split(" ")
        mark_dots = VGroup(*(Dot(axes.c2p(m, ratios[int(m)]), radius=0.05, color=style.HIGHLIGHT) for m in marks))
        below = int(facts["below"].value)
        below_dot = Dot(axes.c2p(below, ratios[below]), radius=0.06, color=style.VERDICT_GOOD)
        below_name = style.zh(f"第 {facts['below'].text} 步", size=style.SMALL_SIZE - 2, color=style.VERDICT_GOOD)
        below_name.move_to(axes.c2p(self.BELOW_LABEL_STEP, 2.1), aligned_edge=LEFT)  # above the flat tail
        readout = style.zh(
            "步 "
            + " / ".join(f"{step}" for step in facts["marks"].text.split(" "))
            + "："
            + " · ".join(f"{r}" for r in mark_texts),
            size=style.SMALL_SIZE - 4,
            color=style.HIGHLIGHT,
        )
        readout.next_to(step_names, DOWN, buff=style.GAP_S).align_to(axes, LEFT)
        nudge = style.zh(
            f"V3：每位专家一个偏置，每步 ±{facts['gamma'].text}", size=style.SMALL_SIZE, color=style.VERDICT_GOOD
        )
        nudge.move_to(aux, aligned_edge=LEFT)

        def run_steps(a: int, b: int) -> UpdateFromAlphaFunc:
            """Play steps a … b: the bars take each step's loads, the knobs its bias, the trace grows."""

            def advance(group, alpha) -> None:
                s = min(int(a + alpha * (b - a)), steps - 1)
                for bar, n in zip(bars, loads[s]):
                    bar.stretch_to_fit_height(max(n * self.LOAD_UNIT, 1e-3), about_edge=DOWN)
                for knob, v in zip(knobs, bias[min(s // 4, len(bias) - 1)]):
                    knob.stretch_to_fit_height(max(abs(v) * self.BIAS_UNIT, 1e-3))
                    knob.move_to((knob.get_x(), self.KNOB_Y, 0), aligned_edge=DOWN if v >= 0 else UP)
                trace.set_points_as_corners([axes.c2p(i, ratios[i]) for i in range(s + 1)] + [axes.c2p(s, ratios[s])])

            return UpdateFromAlphaFunc(VGroup(bars, knobs, trace), advance, rate_func=linear)

        with self.narrate("bias_nudge") as beat:
            self.play(
                FadeOut(values),
                FadeOut(start),
                Transform(aux, nudge),
                Create(axes),
                FadeIn(plot_head),
                FadeIn(step_names),
                Create(limit),
                FadeIn(limit_name),
                FadeIn(knob_base),
                FadeIn(knob_name),
                FadeIn(knobs),
                run_time=beat.share(0.15),
            )
            self.add(trace)
            for a, b in itertools.pairwise((0, *(int(m) for m in marks[1:3]), below)):
                self.play(run_steps(a, b), self.add_mark(mark_dots, marks, a), run_time=beat.share(0.13))
            self.play(FadeIn(below_dot, scale=2), FadeIn(below_name), run_time=beat.share(0.1))

        ledger = style.caption_stack(
            "偏置只进 top-k，不进门控",
            f"{facts['changed'].text} 换了专家；其余 {facts['kept'].text} 个，门控一点没变",
            size=style.SMALL_SIZE,
        )
        ledger[0].set_color(style.HIGHLIGHT)
        ledger.move_to((self.BARS_LEFT, self.NOTE_Y + 0.15, 0), aligned_edge=LEFT + UP)
        with self.narrate("bias_gates") as beat:
            self.play(run_steps(below, steps - 1), FadeIn(mark_dots[-1]), run_time=beat.share(0.35))
            self.play(FadeOut(setup), FadeIn(ledger), FadeIn(readout), run_time=beat.share(0.2))

        result = style.caption_stack(
            f"最忙 / 平均：{facts['start_ratio'].text} → 约 {facts['late'].text}",
            f"V3 的均衡统计 Σ fᵢPᵢ：{facts['stat_start'].text} → {facts['stat_end'].text}"
            f"（α = {facts['alpha'].text} 兜底）",
            size=style.SMALL_SIZE,
        )
        result.move_to(ledger, aligned_edge=LEFT + UP)
        bias_range = style.zh(
            f"偏置 b：{facts['bias_low'].text} … {facts['bias_high'].text}",
            size=style.SMALL_SIZE - 4,
            color=style.SERIES_B,
        )
        bias_range.move_to(knob_name, aligned_edge=LEFT)
        with self.narrate("bias_result") as beat:
            self.play(
                FadeOut(ledger),
                FadeIn(result),
                Indicate(mark_dots[-1]),
                Transform(knob_name, bias_range),
                run_time=beat.share(0.3),
            )
        self.finish()
