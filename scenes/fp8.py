"""The fp8 chapter (低精度训练：FP8 / FP4 与 Transformer Engine): staging only; every value on every number
line and every error comes from tools.chapters.fp8, which takes them from the format engine.

Formats keep one ink through the chapter: E4M3 is SERIES_A and E5M2 SERIES_B (the pair the figures compare),
FP4 plain text ink, FP32/BF16/FP16 their format roles; what is lost (clipped, flushed to zero, cut off) is
VERDICT_BAD.
"""

from __future__ import annotations

import math

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Arrow,
    BraceBetweenPoints,
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
from scenes.widgets import Column

E4M3_INK = style.SERIES_A
E5M2_INK = style.SERIES_B
FP4_INK = style.TEXT
LOST = style.VERDICT_BAD


class LogLine:
    """A number line in log₂: values lo … hi (as exponents) over `width` from `left`, at height y."""

    def __init__(self, lo: float, hi: float, left: float, width: float, y: float) -> None:
        self.lo, self.hi, self.left, self.width, self.y = lo, hi, left, width, y

    def x(self, value: float) -> float:
        return self.left + (math.log2(value) - self.lo) / (self.hi - self.lo) * self.width

    def at(self, value: float, dy: float = 0.0) -> np.ndarray:
        return np.array((self.x(value), self.y + dy, 0.0))

    def axis(self, start: float | None = None, end: float | None = None) -> Line:
        a = self.left if start is None else self.x(start)
        b = self.left + self.width if end is None else self.x(end)
        return Line((a, self.y, 0), (b, self.y, 0), color=style.MUTED, stroke_width=2)

    def ticks(self, exponents, height: float = 0.08) -> VGroup:
        return VGroup(
            *(
                Line(self.at(2.0**e, -height), self.at(2.0**e, height), color=style.MUTED, stroke_width=1.5)
                for e in exponents
            )
        )

    def dots(self, values, color: str, radius: float = 0.035) -> VGroup:
        return VGroup(*(Dot(self.at(v), radius=radius, color=color) for v in values))

    def label(self, value: float, text: str, color: str = style.MUTED, up: bool = False) -> VGroup:
        mark = style.zh(text, size=style.SMALL_SIZE, color=color)
        return mark.next_to(self.at(value), UP if up else DOWN, buff=style.GAP_SM)


def bit_register(bits: str, exponent_bits: int, cell: float = 0.42) -> VGroup:
    """An FP8 register: a box per bit (sign, exponent, mantissa), each box holding a '0' and a '1' of which one
    shows. ``register[i]`` is VGroup(box, zero, one)."""
    fields = bits.replace(".", "")
    cells = VGroup()
    for i, bit in enumerate(fields):
        color = style.MUTED if i == 0 else E4M3_INK if i <= exponent_bits else style.TEXT
        box = Rectangle(width=cell, height=cell, stroke_color=color, stroke_width=2, fill_color=color)
        box.set_fill(opacity=style.FILL_GHOST)
        zero, one = (style.code(d, size=style.LABEL_SIZE) for d in "01")
        zero.move_to(box), one.move_to(box)
        (one if bit == "0" else zero).set_opacity(0)
        cells.add(VGroup(box, zero, one))
    cells.arrange(RIGHT, buff=style.GAP_XS)
    cells[1 : 1 + exponent_bits].shift(style.GAP_S * RIGHT)
    cells[1 + exponent_bits :].shift(2 * style.GAP_S * RIGHT)
    return cells


def set_bits(register: VGroup, bits: str) -> None:
    for cell, bit in zip(register, bits.replace(".", "")):
        cell[1].set_opacity(1 if bit == "0" else 0)
        cell[2].set_opacity(1 if bit == "1" else 0)


# -- fp8_number_line -----------------------------------------------------------------------
class Fp8NumberLine(LectureScene):
    """Every E4M3 code decoded onto a log₂ line; the top (NaN, 448, IEEE's 240), the subnormals, E5M2 under
    it, one number on four formats, and FP4's seven values."""

    LINE_LEFT, WIDTH = -5.2, 11.8  # every line starts here; names sit left of it
    NEAR = (-10.0, 9.5)  # the E4M3 line alone, zoomed: log₂ from 2⁻¹⁰ to 2^9.5
    FAR = (-17.0, 16.5)  # the shared line, E5M2's range
    Y_E4M3, Y_E5M2, Y_FP4 = 0.55, -0.75, -1.95
    REGISTER_AT = (-2.4, 2.25, 0)
    INSET_Y = -1.35  # the linear ruler of beat 2, under the line
    PROBE_TABLE = (Column(2.4, LEFT), Column(5.6, RIGHT))
    CHECKED_AT = (6.7, 2.7, 0)  # the cross-check's note: its top-right corner

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        near = LogLine(*self.NEAR, self.LINE_LEFT, self.WIDTH, self.Y_E4M3)
        e4 = facts["e4m3_values"].value
        odometer = facts["odometer"].value  # codes 0 … 127: 0, then the 126 positive values, then NaN
        register = bit_register(odometer[0]["bits"], facts["exponent_bits"].value).move_to(self.REGISTER_AT)
        fields = VGroup(
            style.zh("符号", size=style.SMALL_SIZE, color=style.MUTED).next_to(register[0], DOWN, buff=style.GAP_S),
            style.zh(f"指数 {facts['exponent_bits'].text} 位", size=style.SMALL_SIZE, color=E4M3_INK).next_to(
                register[1:5], DOWN, buff=style.GAP_S
            ),
            style.zh(f"尾数 {facts['mantissa_bits'].text} 位", size=style.SMALL_SIZE).next_to(
                register[5:], DOWN, buff=style.GAP_S
            ),
        )
        name = style.zh("E4M3", size=style.LABEL_SIZE, color=E4M3_INK)
        name.next_to(near.at(2.0 ** self.NEAR[0]), LEFT, buff=style.GAP_M)
        axis = near.axis()
        ticks = near.ticks(range(-9, 10))
        dots = near.dots(e4, E4M3_INK, radius=0.04)
        for dot in dots:
            dot.set_opacity(0)
        readout = style.zh("= 0", size=style.LABEL_SIZE).next_to(register, RIGHT, buff=style.GAP_L)

        def count_up(group, alpha: float) -> None:
            shown = min(int(alpha * len(e4)), len(e4))
            code = odometer[shown]
            set_bits(register, code["bits"])
            for i, dot in enumerate(dots):
                dot.set_opacity(1 if i < shown else 0)

        with self.narrate("nl_bits") as beat:
            self.play(FadeIn(register), FadeIn(fields), run_time=beat.share(0.15))
            self.play(Create(axis), FadeIn(ticks), FadeIn(name), run_time=beat.share(0.1))
            for code in odometer[1:5]:  # the first few codes one by one, each dot dropping into place
                set_bits(register, code["bits"])
                value = style.zh(f"= {code['text']}", size=style.LABEL_SIZE).next_to(register, RIGHT, buff=style.GAP_L)
                index = odometer.index(code) - 1
                self.play(
                    FadeIn(dots[index].set_opacity(1), shift=0.4 * DOWN),
                    ReplacementTransform(readout, value),
                    run_time=beat.share(0.06),
                )
                readout = value
            self.play(FadeOut(readout), run_time=beat.share(0.03))
            self.play(
                UpdateFromAlphaFunc(
                    VGroup(register, dots),
                    lambda m, a: count_up(m, 4 / len(e4) + a * (1 - 4 / len(e4))),
                    rate_func=linear,
                ),
                run_time=beat.share(0.35),
            )
            count = style.zh(f"{facts['e4m3_count'].text} 个正数", size=style.LABEL_SIZE, color=E4M3_INK)
            count.next_to(register, RIGHT, buff=style.GAP_L)
            checked = style.caption_stack(
                "位模式解出，与 ml_dtypes 逐码一致",
                f"{facts['draws'].text} 次随机舍入，{facts['mismatches'].text} 处不同",
                size=style.SMALL_SIZE,
                color=style.MUTED,
            )
            checked.move_to(self.CHECKED_AT, aligned_edge=UP + RIGHT)
            self.play(FadeIn(count), FadeIn(checked), run_time=beat.share(0.06))

        one, two, four = near.x(1.0), near.x(2.0), near.x(4.0)
        brace = BraceBetweenPoints(near.at(1.0, 0.12), near.at(2.0, 0.12), direction=UP, color=style.HIGHLIGHT)
        eight = style.zh(f"{facts['per_binade_e4m3'].text} 个点", size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(
            brace, UP, buff=style.GAP_XS
        )
        labels = VGroup(near.label(1.0, "1"), near.label(2.0, "2"), near.label(4.0, "4"))
        ruler = Line(
            (self.LINE_LEFT + 3.2, self.INSET_Y, 0), (self.LINE_LEFT + 3.2 + 7.2, self.INSET_Y, 0), color=style.MUTED
        )
        lin = lambda v: self.LINE_LEFT + 3.2 + (v - 1) / 3 * 7.2  # noqa: E731 - the ruler's own x, linear in v
        linear_dots = VGroup(*(Dot((lin(v), self.INSET_Y, 0), radius=0.04, color=E4M3_INK) for v in e4 if 1 <= v <= 4))
        ruler_labels = VGroup(
            *(
                style.zh(t, size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    (lin(v), self.INSET_Y, 0), DOWN, buff=style.GAP_SM
                )
                for v, t in ((1, "1"), (1.125, facts["e4m3_next"].text), (2, "2"), (4, "4"))
            )
        )
        ruler_labels[1].shift(0.25 * RIGHT)
        feet = VGroup(
            DashedLine(near.at(1.0), (lin(1), self.INSET_Y, 0), color=style.MUTED, stroke_width=1.5),
            DashedLine(near.at(2.0), (lin(2), self.INSET_Y, 0), color=style.MUTED, stroke_width=1.5),
            DashedLine(near.at(4.0), (lin(4), self.INSET_Y, 0), color=style.MUTED, stroke_width=1.5),
        )
        step = style.zh(f"间隔 ≈ 数值 × {facts['e4m3_step'].text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        step.next_to(ruler, LEFT, buff=style.GAP_L)
        with self.narrate("nl_binades") as beat:
            self.play(FadeIn(labels), GrowFromEdge(brace, DOWN), FadeIn(eight), run_time=beat.share(0.25))
            self.play(Create(feet), Create(ruler), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(d, scale=2) for d in linear_dots), lag_ratio=0.1),
                FadeIn(ruler_labels),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(step), run_time=beat.share(0.1))
        del one, two, four

        nan_bits = facts["nan_bits"].value
        nan_x = near.x(e4[-1]) + 0.25
        nan_dot = Dot((nan_x, self.Y_E4M3, 0), radius=0.06, color=LOST)
        nan_label = style.zh("NaN", size=style.SMALL_SIZE, color=LOST).next_to(nan_dot, UP, buff=style.GAP_SM)
        top_label = near.label(e4[-1], facts["e4m3_max"].text, color=E4M3_INK, up=True).shift(0.35 * LEFT)
        ghost = DashedLine(near.at(240.0, -0.35), near.at(240.0, 0.5), color=style.MUTED, stroke_width=2)
        ghost_label = style.zh(f"IEEE 式：{facts['ieee_max'].text}", size=style.SMALL_SIZE, color=style.MUTED)
        ghost_label.next_to(ghost, DOWN, buff=style.GAP_XS).shift(0.55 * LEFT)
        reclaimed = VGroup(*(d for d, v in zip(dots, e4) if v > 240))
        gain = style.zh(f"+{facts['reclaimed'].text} 个数", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        gain.next_to(top_label, UP, buff=style.GAP_S)
        with self.narrate("nl_top") as beat:
            self.play(FadeOut(brace), FadeOut(eight), run_time=beat.share(0.05))
            set_bits(register, nan_bits)
            self.play(
                FadeIn(nan_dot, shift=0.4 * DOWN),
                FadeIn(nan_label),
                Indicate(register, color=LOST),
                run_time=beat.share(0.2),
            )
            self.play(FadeIn(top_label), Indicate(dots[-1], scale_factor=2), run_time=beat.share(0.2))
            self.play(Create(ghost), FadeIn(ghost_label), run_time=beat.share(0.2))
            self.play(
                Indicate(reclaimed, color=style.HIGHLIGHT, scale_factor=1.6), FadeIn(gain), run_time=beat.share(0.25)
            )

        subnormal = VGroup(*(d for d, v in zip(dots, e4) if v < 2.0**-6))
        low_labels = VGroup(
            near.label(2.0**-9, facts["e4m3_min_sub"].text, color=style.HIGHLIGHT, up=True),
            near.label(2.0**-6, facts["e4m3_min_normal"].text, color=E4M3_INK, up=True),
        )
        zero_mark = style.zh("再往下：0", size=style.SMALL_SIZE, color=LOST).next_to(
            near.at(2.0 ** self.NEAR[0]), DOWN, buff=style.GAP_SM
        )
        with self.narrate("nl_bottom") as beat:
            self.play(
                FadeOut(feet),
                FadeOut(ruler),
                FadeOut(linear_dots),
                FadeOut(ruler_labels),
                FadeOut(step),
                run_time=beat.share(0.1),
            )
            self.play(
                Indicate(subnormal, color=style.HIGHLIGHT, scale_factor=1.8),
                FadeIn(low_labels[0]),
                run_time=beat.share(0.35),
            )
            self.play(FadeIn(low_labels[1]), run_time=beat.share(0.2))
            self.play(FadeIn(zero_mark), run_time=beat.share(0.2))

        # E5M2 slides in: the E4M3 line shrinks onto the shared log₂ scale, E5M2 under it.
        far4 = LogLine(*self.FAR, self.LINE_LEFT, self.WIDTH, self.Y_E4M3)
        far5 = LogLine(*self.FAR, self.LINE_LEFT, self.WIDTH, self.Y_E5M2)
        e5 = facts["e5m2_values"].value
        axis_far = far4.axis()
        dots_far = far4.dots(e4, E4M3_INK)
        ticks_far = far4.ticks(range(-16, 17, 2), 0.06)
        axis5, dots5, ticks5 = far5.axis(), far5.dots(e5, E5M2_INK), far5.ticks(range(-16, 17, 2), 0.06)
        name5 = style.zh("E5M2", size=style.LABEL_SIZE, color=E5M2_INK).next_to(
            far5.at(2.0 ** self.FAR[0]), LEFT, buff=style.GAP_M
        )
        badges = VGroup(
            style.zh(
                f"{facts['e4m3_count'].text} 个正数 · {facts['e4m3_binades'].text} 段 · 最大 {facts['e4m3_max'].text}",
                size=style.SMALL_SIZE,
                color=E4M3_INK,
            ),
            style.zh(
                f"{facts['e5m2_count'].text} 个正数 · {facts['e5m2_binades'].text} 段 · 最大 {facts['e5m2_max'].text}",
                size=style.SMALL_SIZE,
                color=E5M2_INK,
            ),
        )
        badges[0].next_to(far4.at(2.0**12), UP, buff=style.GAP_SM).align_to(axis_far, RIGHT)
        badges[1].next_to(far5.at(2.0**-8), UP, buff=style.GAP_SM)
        ends5 = VGroup(far5.label(e5[0], facts["e5m2_min_sub"].text), far5.label(e5[-1], facts["e5m2_max"].text))
        ends5[1].shift(0.3 * LEFT)
        with self.narrate("nl_e5m2") as beat:
            self.play(
                FadeOut(VGroup(labels, nan_dot, nan_label, top_label, ghost, ghost_label, gain, low_labels, zero_mark)),
                FadeOut(count),
                run_time=beat.share(0.1),
            )
            self.play(
                ReplacementTransform(axis, axis_far),
                ReplacementTransform(dots, dots_far),
                ReplacementTransform(ticks, ticks_far),
                run_time=beat.share(0.25),
            )
            self.play(Create(axis5), FadeIn(ticks5), FadeIn(name5), run_time=beat.share(0.1))
            self.play(
                LaggedStart(*(FadeIn(d, shift=0.3 * DOWN) for d in dots5), lag_ratio=0.02), run_time=beat.share(0.3)
            )
            self.play(FadeIn(badges), FadeIn(ends5), run_time=beat.share(0.15))

        probe = facts["probe"].value
        drop = DashedLine(far4.at(probe, 0.6), far5.at(probe, -0.3), color=style.HIGHLIGHT, stroke_width=2)
        probe_label = style.zh(facts["probe"].text, size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        probe_label.next_to(drop, UP, buff=style.GAP_XS)
        snaps = VGroup(
            Dot(far4.at(facts["on_e4m3"].value), radius=0.07, color=style.HIGHLIGHT),
            Dot(far5.at(facts["on_e5m2"].value), radius=0.07, color=style.HIGHLIGHT),
        )
        rows = [
            ("E4M3", facts["on_e4m3"].text, E4M3_INK),
            ("E5M2", facts["on_e5m2"].text, E5M2_INK),
            ("FP16", facts["on_fp16"].text, style.FP16),
            ("BF16", facts["on_bf16"].text, style.BF16),
        ]
        table = widgets.table(
            None,
            [[n, v] for n, v, _ in rows],
            self.PROBE_TABLE,
            top=2.45,
            pitch=0.36,
            size=style.SMALL_SIZE,
            colors=[c for _, _, c in rows],
        )
        heading = style.zh(f"{facts['probe'].text} 落到：", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        heading.next_to(table, LEFT, buff=style.GAP_L).align_to(table, UP)
        with self.narrate("nl_probe") as beat:
            self.play(FadeOut(register), FadeOut(fields), FadeOut(checked), run_time=beat.share(0.1))
            self.play(Create(drop), FadeIn(probe_label), run_time=beat.share(0.2))
            self.play(FadeIn(snaps, scale=2), run_time=beat.share(0.15))
            self.play(
                FadeIn(heading),
                LaggedStart(*(FadeIn(r, shift=0.2 * LEFT) for r in table[1]), lag_ratio=0.3),
                run_time=beat.share(0.4),
            )

        far2 = LogLine(*self.FAR, self.LINE_LEFT, self.WIDTH, self.Y_FP4)
        e2 = facts["e2m1_values"].value
        stub = far2.axis(0.35, 8.0)
        dots2 = far2.dots(e2, FP4_INK, radius=0.06)
        name2 = style.zh("FP4", size=style.LABEL_SIZE, color=FP4_INK).next_to(
            far2.at(2.0 ** self.FAR[0]), LEFT, buff=style.GAP_M
        )
        fp4_ends = VGroup(far2.label(e2[0], facts["e2m1_min"].text), far2.label(e2[-1], facts["e2m1_max"].text))
        fp4_badge = style.zh(
            f"{facts['fp4_bits'].text} 位，只剩 {facts['e2m1_count'].text} 个正数",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        fp4_badge.next_to(far2.at(2.0**4), RIGHT, buff=style.GAP_L)
        with self.narrate("nl_fp4") as beat:
            self.play(Create(stub), FadeIn(name2), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(FadeIn(d, shift=0.3 * DOWN) for d in dots2), lag_ratio=0.2), run_time=beat.share(0.3)
            )
            self.play(FadeIn(fp4_ends), FadeIn(fp4_badge), run_time=beat.share(0.2))
        self.finish()


def polyline(points, color: str, width: float = 3) -> VMobject:
    """Straight segments through points on screen (a trace with steps and spikes, which smoothing would round)."""
    return VMobject(stroke_color=color, stroke_width=width).set_points_as_corners(points)


def heat_cells(rows: list[list[float]], width: float, height: float, low: float = -1.5, high: float = 2.5) -> VGroup:
    """A tensor's log₁₀|x| as a grid of cells, grey from the panel's (small) to the text's (large).

    Cells, not a picture: manim 0.22's VGroup cannot be drawn with the locked Pillow, and cells can be
    faded and morphed like anything else. ``cells[i * cols + j]`` is row i, column j.
    """
    values = np.clip((np.array(rows) - low) / (high - low), 0, 1)
    n_rows, n_cols = values.shape
    w, h = width / n_cols, height / n_rows
    dark, bright = ManimColor(style.PANEL), ManimColor(style.TEXT)
    cells = VGroup()
    for i in range(n_rows):
        for j in range(n_cols):
            ink = interpolate_color(dark, bright, float(values[i, j]))
            cell = Rectangle(width=w, height=h, stroke_color=ink, stroke_width=0.6)  # the stroke closes the seams
            cell.set_fill(ink, opacity=1)
            cells.add(cell.move_to(((j + 0.5) * w - width / 2, height / 2 - (i + 0.5) * h, 0)))
    return cells


def histogram(counts: list[int], line: LogLine, low: float, step: float, unit: float, color: str) -> VGroup:
    """Bars over a log₂ line: bin i covers [low + i·step, low + (i + 1)·step) in log₂; height count × unit."""
    bars = VGroup()
    for i, c in enumerate(counts):
        a, b = line.x(2.0 ** (low + i * step)), line.x(2.0 ** (low + (i + 1) * step))
        bar = widgets.bar(b - a, max(c * unit, 1e-3), color, opacity=style.FILL_SOLID if c else 0)
        bars.add(bar.move_to(((a + b) / 2, line.y, 0), aligned_edge=DOWN))
    return bars


# -- fp8_scaling_granularity ---------------------------------------------------------------
class Fp8ScalingGranularity(LectureScene):
    """An outlier of size R against one scale per tensor (the body slides into the subnormals and off to 0)
    and one per 1×128 tile (only the four tiles holding an outlier slide); E5M2 as a third lane."""

    HEAT_AT, HEAT_SIZE = (-4.35, 1.95, 0), (4.6, 1.3)
    LINE = (-12.0, 9.0, -0.9, 7.4, 0.95)  # log₂ range, left, width, y of the histogram's axis
    HIST_HEIGHT = 1.25
    TABLE = (
        Column(-6.1, LEFT),
        Column(-3.0, RIGHT),
        Column(-1.5, RIGHT),
        Column(1.0, RIGHT),
        Column(2.5, RIGHT),
        Column(5.0, RIGHT),
        Column(6.5, RIGHT),
    )
    TABLE_TOP, PITCH = 0.05, 0.33
    NOTE_AT = (6.7, 2.75, 0)  # the top-right note's right end

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        heat = heat_cells(facts["heat"].value, *self.HEAT_SIZE).move_to(self.HEAT_AT)
        frame = Rectangle(width=heat.width, height=heat.height, stroke_color=style.MUTED, stroke_width=1.5).move_to(
            heat
        )
        x_of = lambda channel: heat.get_left()[0] + (channel + 0.5) / 1024 * heat.width  # noqa: E731
        pins = VGroup(
            *(
                Line(
                    (x_of(c), heat.get_top()[1] + 0.05, 0),
                    (x_of(c), heat.get_top()[1] + 0.25, 0),
                    color=style.HIGHLIGHT,
                )
                for c in facts["outliers"].value
            )
        )
        marks = VGroup(
            pins,
            style.zh(f"{facts['outlier_count'].text} 列离群值 ×R", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
            .next_to(pins, UP, buff=style.GAP_XS)
            .align_to(heat, RIGHT),
        )
        shape = style.zh(
            f"{facts['tokens'].text} × {facts['channels'].text}，R 为自设扫描参数",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        shape.next_to(heat, DOWN, buff=style.GAP_S).align_to(heat, LEFT)
        with self.narrate("sg_tensor") as beat:
            self.play(FadeIn(heat), Create(frame), run_time=beat.share(0.35))
            self.play(
                LaggedStart(*(FadeIn(m, shift=0.2 * DOWN) for m in pins), lag_ratio=0.2),
                FadeIn(marks[1]),
                FadeIn(shape),
                run_time=beat.share(0.35),
            )

        lo, hi, left, width, y = self.LINE
        line = LogLine(lo, hi, left, width, y)
        hist = facts["hist"].value
        tallest = max(max(row) for row in hist["rows"] + facts["tile_hist"].value)
        unit = self.HIST_HEIGHT / tallest
        bars_of = lambda counts, color=E4M3_INK: histogram(counts, line, hist["low"], hist["step"], unit, color)  # noqa: E731
        axis = line.axis()
        flush = widgets.bar(line.x(2.0**-10) - left, self.HIST_HEIGHT, LOST, opacity=style.FILL_GHOST)
        flush.move_to((left, y, 0), aligned_edge=DOWN + LEFT)
        sub = widgets.bar(line.x(2.0**-6) - line.x(2.0**-10), self.HIST_HEIGHT, style.MUTED, opacity=style.FILL_GHOST)
        sub.move_to((line.x(2.0**-10), y, 0), aligned_edge=DOWN + LEFT)
        zone_names = VGroup(
            style.zh("变成 0", size=style.SMALL_SIZE, color=LOST).next_to(flush, DOWN, buff=style.GAP_S),
            style.zh("非规格化", size=style.SMALL_SIZE, color=style.MUTED).next_to(sub, DOWN, buff=style.GAP_S),
            style.zh(facts["e4m3_max"].text, size=style.SMALL_SIZE, color=E4M3_INK).next_to(
                line.at(448.0), DOWN, buff=style.GAP_S
            ),
        )
        top = DashedLine(line.at(448.0), line.at(448.0, self.HIST_HEIGHT), color=E4M3_INK, stroke_width=2)
        bars = bars_of(hist["rows"][0])
        table_rows = facts["table"].value
        groups = VGroup(
            style.zh("E4M3 整张", size=style.SMALL_SIZE, color=E4M3_INK),
            style.zh("E4M3 1×128", size=style.SMALL_SIZE, color=E4M3_INK),
            style.zh("E5M2 整张", size=style.SMALL_SIZE, color=E5M2_INK),
        )
        for g, (a, b) in zip(groups, ((1, 2), (3, 4), (5, 6))):
            g.move_to(((self.TABLE[a].x + self.TABLE[b].x) / 2 - 0.4, self.TABLE_TOP, 0))
        header = widgets.text_row(
            ["R", "变零", "误差", "变零", "误差", "变零", "误差"],
            self.TABLE,
            self.TABLE_TOP - self.PITCH,
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        cells = widgets.table(
            None,
            [
                [
                    r["r"],
                    r["tensor"]["zeros"],
                    r["tensor"]["error"],
                    r["tiles"]["zeros"],
                    r["tiles"]["error"],
                    r["e5m2"]["zeros"],
                    r["e5m2"]["error"],
                ]
                for r in table_rows
            ],
            self.TABLE,
            self.TABLE_TOP - 2 * self.PITCH,
            self.PITCH,
            size=style.SMALL_SIZE,
        )[1]
        with self.narrate("sg_scale") as beat:
            self.play(
                Create(axis), FadeIn(flush), FadeIn(sub), FadeIn(zone_names), Create(top), run_time=beat.share(0.25)
            )
            self.play(LaggedStart(*(GrowFromEdge(b, DOWN) for b in bars), lag_ratio=0.02), run_time=beat.share(0.3))
            self.play(FadeIn(groups), FadeIn(header), run_time=beat.share(0.15))

        counter = style.zh(f"变成 0：{table_rows[0]['tensor']['zeros']}", size=style.LABEL_SIZE, color=LOST)
        counter.move_to(self.NOTE_AT, aligned_edge=RIGHT)
        with self.narrate("sg_sweep") as beat:
            self.play(FadeIn(counter), FadeIn(VGroup(*cells[0][:3])), run_time=beat.share(0.1))
            for i in range(1, len(table_rows)):
                new_bars = bars_of(hist["rows"][i])
                new_counter = style.zh(f"变成 0：{table_rows[i]['tensor']['zeros']}", size=style.LABEL_SIZE, color=LOST)
                new_counter.move_to(self.NOTE_AT, aligned_edge=RIGHT)
                self.play(
                    Transform(bars, new_bars),
                    FadeOut(counter),
                    FadeIn(new_counter),
                    FadeIn(VGroup(*cells[i][:3]), shift=0.1 * DOWN),
                    run_time=beat.share(0.14),
                )
                counter = new_counter

        tiles = VGroup(
            *(
                Line(
                    (x_of(k * 128 - 0.5), heat.get_bottom()[1], 0),
                    (x_of(k * 128 - 0.5), heat.get_top()[1], 0),
                    color=style.HIGHLIGHT,
                    stroke_width=2,
                )
                for k in range(1, facts["tiles_per_row"].value)
            )
        )
        polluted = VGroup(
            *(
                Rectangle(width=heat.width / 8, height=heat.height, stroke_color=LOST, stroke_width=3).move_to(
                    (x_of(k * 128 + 63.5), heat.get_center()[1], 0)
                )
                for k in sorted({c // 128 for c in facts["outliers"].value})
            )
        )
        tile_counter = style.zh(f"1×128：变成 0：{table_rows[-1]['tiles']['zeros']}", size=style.LABEL_SIZE, color=LOST)
        tile_counter.move_to(self.NOTE_AT, aligned_edge=RIGHT)
        with self.narrate("sg_tiles") as beat:
            self.play(Create(tiles), run_time=beat.share(0.2))
            self.play(Create(polluted), run_time=beat.share(0.2))
            self.play(
                Transform(bars, bars_of(facts["tile_hist"].value[-1])),
                FadeOut(counter),
                FadeIn(tile_counter),
                run_time=beat.share(0.2),
            )
            self.play(
                LaggedStart(*(FadeIn(VGroup(*row[3:5]), shift=0.1 * DOWN) for row in cells), lag_ratio=0.15),
                run_time=beat.share(0.3),
            )

        card = style.zh("E5M2 用精度换范围；分块把范围还给 E4M3", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        card.move_to(self.NOTE_AT, aligned_edge=RIGHT)
        with self.narrate("sg_e5m2") as beat:
            self.play(
                LaggedStart(*(FadeIn(VGroup(*row[5:7]), shift=0.1 * DOWN) for row in cells), lag_ratio=0.15),
                run_time=beat.share(0.45),
            )
            self.play(FadeOut(tile_counter), FadeIn(card), run_time=beat.share(0.2))

        at = 4  # the R = 10⁴ row
        check_lines = style.caption_stack(
            f"R = {facts['r_ten_thousand'].text}：|x| < {facts['threshold'].text} 变成 0",
            f"正态分布预测 {facts['gaussian'].text} · 实测 {facts['measured'].text}",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        check_lines.move_to(self.NOTE_AT, aligned_edge=RIGHT + UP).shift(0.15 * UP)
        with self.narrate("sg_check") as beat:
            self.play(Transform(bars, bars_of(hist["rows"][at])), FadeOut(card), run_time=beat.share(0.2))
            self.play(
                Indicate(flush, color=LOST, scale_factor=1.0),
                Indicate(cells[at][1], color=LOST),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(check_lines), run_time=beat.share(0.2))
        self.finish()


def strip_cells(values: list[float], width: float, height: float) -> VGroup:
    """One row of a tensor as a strip of grey cells (log₁₀|x|; a stored 0 is dark)."""
    return heat_cells([values], width, height)


def scale_chips(strip: VGroup, block: int, color: str, height: float = 0.16, gap: float = 0.04) -> VGroup:
    """One chip above each block of `block` values of a 1024-wide strip: a block's scale."""
    n = 1024 // block
    unit = strip.width / n
    chips = VGroup(
        *(
            widgets.bar(unit - gap, height, color, opacity=style.FILL_SOFT).move_to(
                (strip.get_left()[0] + (k + 0.5) * unit, strip.get_top()[1] + style.GAP_XS + height / 2, 0)
            )
            for k in range(n)
        )
    )
    return chips


def block_frames(strip: VGroup, block: int) -> VGroup:
    n = 1024 // block
    unit = strip.width / n
    return VGroup(
        *(
            Rectangle(width=unit, height=strip.height, stroke_color=style.HIGHLIGHT, stroke_width=1.2).move_to(
                (strip.get_left()[0] + (k + 0.5) * unit, strip.get_center()[1], 0)
            )
            for k in range(n)
        )
    )


# -- fp8_block_formats ---------------------------------------------------------------------
class Fp8BlockFormats(LectureScene):
    """One row tiled by 128, 32 and 16, each block with its scale; FP4's error as the blocks shrink; one NVFP4
    block zoomed (and the MXFP4 block that saturates); FP8 for contrast."""

    STRIP_Y, STRIP_WIDTH, STRIP_HEIGHT = 2.3, 12.4, 0.32
    TABLE = (Column(-6.2, LEFT), Column(-3.6, LEFT), Column(-1.6, LEFT), Column(0.6, LEFT), Column(6.2, RIGHT))
    TABLE_TOP, PITCH = 1.45, 0.42
    BARS_LEFT, BARS_TOP, BARS_PITCH, BAR_UNIT, BAR_HEIGHT = -3.4, 1.35, 0.52, 5.6, 0.32
    CELL = 0.72  # a worked-block cell's width
    BLOCK_Y = (-0.85, -1.45)  # the worked block's rows: the values, then what NVFP4 stores

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        strips = facts["strips"].value
        strip = strip_cells(strips["x"], self.STRIP_WIDTH, self.STRIP_HEIGHT).move_to((0, self.STRIP_Y, 0))
        row_name = style.zh(f"一行 {facts['row'].text} 个数", size=style.SMALL_SIZE, color=style.MUTED)
        row_name.next_to(strip, DOWN, buff=style.GAP_XS).align_to(strip, LEFT)
        rows = [
            ["DeepSeek-V3 激活", "E4M3", f"1×{facts['tile'].text}", "FP32", facts["bits_v3_act"].text],
            ["MXFP8", "E4M3", f"1×{facts['mx_block'].text}", "E8M0", facts["bits_mxfp8"].text],
            ["MXFP4", "E2M1", f"1×{facts['mx_block'].text}", "E8M0", facts["bits_mxfp4"].text],
            ["NVFP4", "E2M1", f"1×{facts['nv_block'].text}", "E4M3 + 整张 FP32", facts["bits_nvfp4"].text],
            ["DeepSeek-V3 权重", "E4M3", facts["weight_block"].text, "FP32", facts["bits_v3_weight"].text],
        ]
        table = widgets.table(
            ["格式", "元素", "块", "刻度", "位 / 数"],
            rows,
            self.TABLE,
            self.TABLE_TOP,
            self.PITCH,
            size=style.SMALL_SIZE,
        )
        head, body = table
        bits_cells = VGroup(*(row[4] for row in body))
        for cell in bits_cells:
            cell.set_opacity(0)
        tilings = [
            (facts["tile"].value, style.FP32),
            (facts["mx_block"].value, style.MUTED),
            (facts["nv_block"].value, E4M3_INK),
        ]
        with self.narrate("bf_blocks") as beat:
            self.play(FadeIn(strip), FadeIn(row_name), FadeIn(head), run_time=beat.share(0.12))
            frames = chips = None
            for i, ((block, color), body_rows) in enumerate(zip(tilings, ([0, 4], [1, 2], [3]))):
                new_frames, new_chips = block_frames(strip, block), scale_chips(strip, block, color)
                shown = VGroup(*(VGroup(*body[r][:4]) for r in body_rows))
                if frames is None:
                    self.play(
                        Create(new_frames),
                        FadeIn(new_chips, shift=0.1 * DOWN),
                        FadeIn(shown),
                        run_time=beat.share(0.27),
                    )
                else:
                    self.play(
                        ReplacementTransform(frames, new_frames),
                        ReplacementTransform(chips, new_chips),
                        FadeIn(shown),
                        run_time=beat.share(0.27),
                    )
                frames, chips = new_frames, new_chips
                del i

        with self.narrate("bf_cost") as beat:
            for cell in bits_cells:
                cell.set_opacity(1)
            self.play(
                LaggedStart(*(FadeIn(c, shift=0.2 * LEFT) for c in bits_cells), lag_ratio=0.25),
                run_time=beat.share(0.6),
            )
            self.play(Indicate(VGroup(bits_cells[2], bits_cells[3]), color=style.HIGHLIGHT), run_time=beat.share(0.25))

        bars_data = {b["key"]: b for b in facts["bars"].value}
        fp4_keys = ("e2m1_tensor", "e2m1_tiles", "mxfp4", "nvfp4")
        blocks_of = {
            "e2m1_tensor": None,
            "e2m1_tiles": facts["tile"].value,
            "mxfp4": facts["mx_block"].value,
            "nvfp4": facts["nv_block"].value,
        }
        bar_rows = []
        for i, key in enumerate(fp4_keys):
            b = bars_data[key]
            y = self.BARS_TOP - i * self.BARS_PITCH
            bar = widgets.bar(b["error"] * self.BAR_UNIT, self.BAR_HEIGHT, FP4_INK, opacity=style.FILL_SOFT)
            bar.move_to((self.BARS_LEFT, y, 0), aligned_edge=LEFT)
            name = style.zh(b["name"], size=style.SMALL_SIZE, color=FP4_INK).next_to(
                (self.BARS_LEFT, y, 0), LEFT, buff=style.GAP_M
            )
            value = style.zh(f"误差 {b['error_text']} · 变零 {b['zeros_text']}", size=style.SMALL_SIZE)
            estimate = VGroup()
            reach = bar.get_right()[0]
            if b["estimate"] is not None:
                x = self.BARS_LEFT + b["estimate"] * self.BAR_UNIT
                estimate = DashedLine((x, y - 0.24, 0), (x, y + 0.24, 0), color=style.HIGHLIGHT, stroke_width=2)
                reach = max(reach, x)
            value.move_to((reach + style.GAP_M, y, 0), aligned_edge=LEFT)
            bar_rows.append((bar, name, value, estimate))
        estimate_key = style.zh("虚线：被污染的块全丢时的估计", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        estimate_key.next_to((self.BARS_LEFT, self.BARS_TOP - 3 * self.BARS_PITCH, 0), DOWN, buff=style.GAP_L).align_to(
            bar_rows[0][1], LEFT
        )
        fp4_strip = lambda key: strip_cells(strips[key], self.STRIP_WIDTH, self.STRIP_HEIGHT).move_to(strip)  # noqa: E731
        with self.narrate("bf_fp4") as beat:
            self.play(FadeOut(table), FadeOut(frames), FadeOut(chips), run_time=beat.share(0.15))
            bar, name, value, _ = bar_rows[0]
            shown_strip = fp4_strip("e2m1_tensor")
            self.play(Transform(strip, shown_strip), FadeIn(name), GrowFromEdge(bar, LEFT), run_time=beat.share(0.35))
            self.play(FadeIn(value), run_time=beat.share(0.15))
            del blocks_of

        with self.narrate("bf_smaller") as beat:
            for key, (bar, name, value, estimate) in zip(fp4_keys[1:], bar_rows[1:]):
                next_strip = fp4_strip(key)
                self.play(
                    FadeIn(name),
                    GrowFromEdge(bar, LEFT),
                    Transform(strip, next_strip),
                    run_time=beat.share(0.18),
                )
                self.play(FadeIn(value), Create(estimate), run_time=beat.share(0.1))
                shown_strip = next_strip
            self.play(FadeIn(estimate_key), run_time=beat.share(0.1))

        block = facts["block"].value
        back = facts["block_back"].value
        back_values = facts["block_back_values"].value
        left = -self.CELL * 8 + 0.45  # room on the left for the rows' names
        cells = VGroup()
        for row, texts in enumerate((block, back)):
            y = self.BLOCK_Y[row]
            for k, text in enumerate(texts):
                lost = row == 1 and back_values[k] == 0
                color = LOST if lost else (style.HIGHLIGHT if k == 15 else FP4_INK)
                box = Rectangle(width=self.CELL - 0.04, height=0.42, stroke_color=color, stroke_width=1.5)
                box.move_to((left + (k + 0.5) * self.CELL, y, 0))
                cells.add(VGroup(box, style.zh(text, size=style.SMALL_SIZE, color=color).move_to(box)))
        names = VGroup(
            style.zh("原值", size=style.SMALL_SIZE, color=style.MUTED),
            style.zh("NVFP4", size=style.SMALL_SIZE, color=style.MUTED),
        )
        for n, y in zip(names, self.BLOCK_Y):
            n.next_to((left, y, 0), LEFT, buff=style.GAP_S)
        worked = style.zh(
            f"块刻度 {facts['scale_code'].text} × g = {facts['block_scale'].text} · "
            f"离群值 {facts['outlier'].text} → {facts['outlier_back'].text} · "
            f"{facts['neighbours'].text} 个邻居 {facts['neighbours_zero'].text} 个变 0",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        worked.next_to(cells, DOWN, buff=style.GAP_M)
        with self.narrate("bf_worked") as beat:
            self.play(
                FadeOut(estimate_key),
                LaggedStart(*(FadeIn(c) for c in cells[:16]), lag_ratio=0.05),
                FadeIn(names[0]),
                run_time=beat.share(0.3),
            )
            self.play(
                LaggedStart(*(FadeIn(c, shift=0.2 * DOWN) for c in cells[16:]), lag_ratio=0.05),
                FadeIn(names[1]),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(worked), run_time=beat.share(0.2))

        mx_line = style.zh(
            f"MXFP4：刻度 {facts['mx_scale'].text}（2 的幂）· 离群值只回来 {facts['mx_outlier_back'].text} · "
            f"{facts['mx_neighbours'].text} 个邻居 {facts['mx_neighbours_zero'].text} 个变 0",
            size=style.SMALL_SIZE,
            color=LOST,
        ).move_to(worked)
        with self.narrate("bf_mx") as beat:
            self.play(ReplacementTransform(worked, mx_line), Indicate(cells[-1], color=LOST), run_time=beat.share(0.4))
            self.play(Indicate(bar_rows[3][0], color=style.HIGHLIGHT, scale_factor=1.0), run_time=beat.share(0.3))

        fp8_line = style.zh(
            f"换回 FP8：E4M3 整张 {facts['err_e4m3_tensor'].text} · "
            f"1×{facts['tile'].text} {facts['err_e4m3_tiles'].text} · MXFP8 {facts['err_mxfp8'].text}",
            size=style.SMALL_SIZE,
            color=E4M3_INK,
        ).move_to(mx_line)
        with self.narrate("bf_fp8") as beat:
            self.play(ReplacementTransform(mx_line, fp8_line), run_time=beat.share(0.4))
            self.play(Transform(strip, fp4_strip("e4m3_tensor")), run_time=beat.share(0.3))
        self.finish()


# -- fp8_delayed_scaling -------------------------------------------------------------------
class Fp8DelayedScaling(LectureScene):
    """A made-up amax trace on a log axis with a sliding 16-step window; the window max as the limit of what
    fits (margin 0, then margin 1); clipped steps as red ticks; a table of the four ways to pick the scale."""

    PLOT_AT = (-6.0, -2.1)  # the plot's lower-left corner
    PLOT_SIZE = (7.5, 4.3)
    Y_RANGE = (-0.5, 9.0)  # log₂ amax
    TABLE = (Column(2.3, LEFT), Column(6.6, RIGHT))
    TABLE_TOP, PITCH = 2.2, 0.5

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        amax = facts["amax"].value
        steps = len(amax)
        x0, y0 = self.PLOT_AT
        w, h = self.PLOT_SIZE
        lo, hi = self.Y_RANGE
        at = lambda t, v: np.array((x0 + t / (steps - 1) * w, y0 + (math.log2(v) - lo) / (hi - lo) * h, 0))  # noqa: E731
        axes = VGroup(
            Line((x0, y0, 0), (x0 + w, y0, 0), color=style.MUTED, stroke_width=2),
            Line((x0, y0, 0), (x0, y0 + h, 0), color=style.MUTED, stroke_width=2),
        )
        y_labels = VGroup(
            *(
                style.zh(f.text, size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    at(0, f.value), LEFT, buff=style.GAP_S
                )
                for f in (facts["amax_0"], facts["amax_60"], facts["amax_spike"])
            )
        )
        y_labels[0].shift(0.1 * UP)
        axis_name = style.zh("amax（对数）", size=style.SMALL_SIZE, color=style.MUTED).next_to(
            axes[1], UP, buff=style.GAP_S
        )
        axis_name.align_to(axes[1], LEFT)
        step_name = style.zh(f"训练步 0 … {steps - 1}，示意轨迹", size=style.SMALL_SIZE, color=style.MUTED)
        step_name.next_to(axes[0], DOWN, buff=style.GAP_S).align_to(axes[0], RIGHT)
        trace = polyline([at(t, v) for t, v in enumerate(amax)], style.DATA, 3)
        history = facts["history"].value
        window = Rectangle(width=history / (steps - 1) * w, height=h, stroke_width=0, fill_color=style.HIGHLIGHT)
        window.set_fill(opacity=style.FILL_GHOST).move_to((x0, y0 + h / 2, 0), aligned_edge=RIGHT)
        window_name = style.zh(
            f"窗口 {facts['history'].text} 步（TE 默认 {facts['te_history'].text}）",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        window_name.next_to(axis_name, RIGHT, buff=style.GAP_L)

        def slide(group, alpha: float) -> None:
            t = alpha * (steps - 1)
            trace.pointwise_become_partial(full, 0, alpha)
            window.move_to((x0 + t / (steps - 1) * w, y0 + h / 2, 0), aligned_edge=RIGHT)

        full = trace.copy()
        with self.narrate("ds_idea") as beat:
            self.play(Create(axes), FadeIn(y_labels), FadeIn(axis_name), FadeIn(step_name), run_time=beat.share(0.15))
            self.play(FadeIn(window), FadeIn(window_name), run_time=beat.share(0.1))
            self.add(trace)
            self.play(UpdateFromAlphaFunc(VGroup(trace, window), slide, rate_func=linear), run_time=beat.share(0.65))

        def limit(guess: list[float]) -> VGroup:
            """The largest amax the step's scale can hold: a step line through each step's guess × 2^margin."""
            points = []
            for t, g in enumerate(guess):
                points += [at(max(t - 0.5, 0), g), at(min(t + 0.5, steps - 1), g)]
            return polyline(points, E4M3_INK, 2.5)

        def ticks(clipped: list[int]) -> VGroup:
            return VGroup(
                *(
                    Line(at(t, 2.0**lo) + 0.02 * UP, at(t, 2.0**lo) + 0.3 * UP, color=LOST, stroke_width=3)
                    for t in clipped
                )
            )

        rows = [
            ("max，余量 0", facts["clipped_m0"].text),
            ("max，余量 1（×2）", facts["clipped_m1"].text),
            ("只看上一步", facts["clipped_recent"].text),
            ("当场算", facts["clipped_current"].text),
        ]
        head = widgets.text_row(
            ["刻度怎么定", "截断的步"], self.TABLE, self.TABLE_TOP, size=style.SMALL_SIZE, color=style.MUTED
        )
        body = widgets.table(
            None, [[a, b] for a, b in rows], self.TABLE, self.TABLE_TOP - self.PITCH, self.PITCH, size=style.LABEL_SIZE
        )[1]
        for row, color in zip(body, (LOST, E4M3_INK, LOST, style.VERDICT_GOOD)):
            row[1].set_color(color)
        total = style.zh(f"共 {steps} 步", size=style.SMALL_SIZE, color=style.MUTED).next_to(head, UP, buff=style.GAP_S)
        total.align_to(head, LEFT)
        limit0, ticks0 = limit(facts["guess_m0"].value), ticks(facts["clipped_steps_m0"].value)
        key = style.zh("蓝线：刻度能装下的最大值", size=style.SMALL_SIZE, color=E4M3_INK).move_to(
            window_name, aligned_edge=LEFT
        )
        with self.narrate("ds_ramp") as beat:
            self.play(FadeOut(window), ReplacementTransform(window_name, key), run_time=beat.share(0.1))
            self.play(Create(limit0), run_time=beat.share(0.35))
            self.play(LaggedStart(*(GrowFromEdge(t, DOWN) for t in ticks0), lag_ratio=0.03), run_time=beat.share(0.25))
            self.play(FadeIn(head), FadeIn(total), FadeIn(body[0]), run_time=beat.share(0.15))

        limit1, ticks1 = limit(facts["guess_m1"].value), ticks(facts["clipped_steps_m1"].value)
        with self.narrate("ds_margin") as beat:
            self.play(ReplacementTransform(limit0, limit1), run_time=beat.share(0.35))
            self.play(ReplacementTransform(ticks0, ticks1), FadeIn(body[1]), run_time=beat.share(0.35))

        spike_at = facts["spike_at"].value
        spike_note = style.caption_stack(
            f"第 {facts['spike_at'].text} 步：{facts['spike_clipped_m1'].text} 被截断",
            f"误差 {facts['spike_error_m1'].text}",
            size=style.SMALL_SIZE,
            color=LOST,
        )
        spike_note.next_to(at(spike_at, amax[spike_at]), LEFT, buff=style.GAP_M).shift(0.2 * DOWN)
        after = BraceBetweenPoints(
            at(spike_at + 1, 2.0**lo) + 0.45 * UP,
            at(spike_at + history, 2.0**lo) + 0.45 * UP,
            direction=UP,
            color=style.HIGHLIGHT,
        )
        after_note = style.zh(
            f"刻度小了 {facts['spike'].text}，误差 {facts['after_error'].text}",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        after_note.next_to(after, UP, buff=style.GAP_XS)
        after_note.shift(
            (at(steps - 1, 1.0)[0] - after_note.get_right()[0])
            * RIGHT
            * (after_note.get_right()[0] > at(steps - 1, 1.0)[0])
        )
        with self.narrate("ds_spike") as beat:
            self.play(Indicate(ticks1, color=LOST, scale_factor=1.5), FadeIn(spike_note), run_time=beat.share(0.35))
            self.play(GrowFromEdge(after, DOWN), FadeIn(after_note), run_time=beat.share(0.35))

        v3 = style.zh("DeepSeek-V3：每块当场算 amax", size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
        v3.next_to(body, DOWN, buff=style.GAP_ML).align_to(body, LEFT)
        current_note = style.caption_stack(
            f"当场算：最大误差 {facts['current_error'].text}", "代价是张量要读两遍", size=style.SMALL_SIZE
        )
        current_note.next_to(v3, DOWN, buff=style.GAP_S).align_to(v3, LEFT)
        with self.narrate("ds_current") as beat:
            self.play(FadeIn(body[2], shift=0.1 * DOWN), run_time=beat.share(0.3))
            self.play(FadeIn(body[3], shift=0.1 * DOWN), FadeIn(current_note), run_time=beat.share(0.3))
            self.play(FadeIn(v3), run_time=beat.share(0.2))
        self.finish()


def bit_cells(bits: str, first: int, cell: float, left: float, y: float, color: str) -> VGroup:
    """A row of bit cells; bit k sits in column first + k of a grid that starts at `left`."""
    row = VGroup()
    for k, bit in enumerate(bits):
        box = Rectangle(width=cell - 0.03, height=cell * 1.2, stroke_color=color, stroke_width=1.5)
        box.set_fill(color, opacity=style.FILL_GHOST).move_to((left + (first + k + 0.5) * cell, y, 0))
        row.add(VGroup(box, style.code(bit, size=style.SMALL_SIZE, color=color).move_to(box)))
    return row


# -- fp8_accumulation_promotion ------------------------------------------------------------
class Fp8AccumulationPromotion(LectureScene):
    """A 14-bit running sum swamping a product's low bits (a real step of the toy), the toy's error against K,
    promotion to FP32 every 128 products, and V3's measured "nearly 2%" beside the toy's, each with its owner."""

    CELL, BITS_LEFT = 0.3, -6.6
    SUM_Y, PRODUCT_Y = 1.75, 1.05
    PLOT = (0.9, -2.2, 5.3, 4.5)  # left, bottom, width, height
    K_RANGE, ERR_RANGE = (9.0, 14.0), (-3.6, -0.4)  # log₂ K, log₁₀ error
    PROMOTE_Y = -1.2

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        swamp = facts["swamp"].value
        bits = facts["bits"].value
        sum_row = bit_cells(swamp["sum_bits"], 0, self.CELL, self.BITS_LEFT, self.SUM_Y, style.FP32)
        sum_name = style.zh(
            f"{facts['bits'].text} 位累加器：和 = {facts['example_sum'].text}", size=style.SMALL_SIZE, color=style.FP32
        )
        sum_name.next_to(sum_row, UP, buff=style.GAP_S).align_to(sum_row, LEFT)
        incoming = VGroup(
            *(
                Dot(radius=0.06, color=E4M3_INK).move_to((self.BITS_LEFT + 0.4 + 0.35 * k, self.SUM_Y - 1.6, 0))
                for k in range(12)
            )
        )
        incoming_name = style.zh("几千个 FP8 乘积", size=style.SMALL_SIZE, color=E4M3_INK).next_to(
            incoming, DOWN, buff=style.GAP_S
        )
        incoming_name.align_to(incoming, LEFT)
        with self.narrate("ac_sum") as beat:
            self.play(FadeIn(incoming), FadeIn(incoming_name), run_time=beat.share(0.2))
            self.play(
                LaggedStart(
                    *(d.animate.move_to(sum_row.get_center()).set_opacity(0) for d in incoming), lag_ratio=0.12
                ),
                FadeIn(sum_row),
                run_time=beat.share(0.45),
            )
            self.play(FadeIn(sum_name), run_time=beat.share(0.15))
            self.remove(incoming)

        product_row = bit_cells(
            swamp["product_bits"], swamp["shift"], self.CELL, self.BITS_LEFT, self.PRODUCT_Y, E4M3_INK
        )
        overhang = VGroup(*product_row[bits - swamp["shift"] :])
        product_name = style.zh(f"乘积 {facts['example_product'].text}", size=style.SMALL_SIZE, color=E4M3_INK)
        product_name.next_to(product_row, DOWN, buff=style.GAP_S).align_to(product_row, LEFT)
        grid_end = DashedLine(
            (self.BITS_LEFT + bits * self.CELL, self.SUM_Y + 0.35, 0),
            (self.BITS_LEFT + bits * self.CELL, self.PRODUCT_Y - 0.35, 0),
            color=LOST,
            stroke_width=2,
        )
        step_name = style.zh(f"最小刻度 {facts['example_step'].text}", size=style.SMALL_SIZE, color=LOST)
        step_name.next_to(grid_end, UP, buff=style.GAP_XS)
        kept = style.zh(f"只留下 {facts['example_kept'].text}", size=style.SMALL_SIZE, color=LOST)
        kept.next_to(product_name, RIGHT, buff=style.GAP_M)
        with self.narrate("ac_swamp") as beat:
            self.play(FadeOut(incoming_name), Create(grid_end), FadeIn(step_name), run_time=beat.share(0.2))
            self.play(FadeIn(product_row, shift=0.3 * DOWN), FadeIn(product_name), run_time=beat.share(0.2))
            self.play(overhang.animate.set_color(LOST), run_time=beat.share(0.15))
            self.play(overhang.animate.shift(0.6 * DOWN).set_opacity(0), FadeIn(kept), run_time=beat.share(0.3))

        px, py, pw, ph = self.PLOT
        (k_lo, k_hi), (e_lo, e_hi) = self.K_RANGE, self.ERR_RANGE
        at = lambda k, err: np.array(  # noqa: E731
            (px + (math.log2(k) - k_lo) / (k_hi - k_lo) * pw, py + (math.log10(err) - e_lo) / (e_hi - e_lo) * ph, 0)
        )
        axes = VGroup(
            Line((px, py, 0), (px + pw, py, 0), color=style.MUTED, stroke_width=2),
            Line((px, py, 0), (px, py + ph, 0), color=style.MUTED, stroke_width=2),
        )
        labels = VGroup(
            *(
                style.zh(t["text"], size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    at(2**k_lo, t["at"])[1] * UP + px * RIGHT, LEFT, buff=style.GAP_S
                )
                for t in facts["y_ticks"].value
            ),
            *(
                style.zh(t["text"], size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    at(t["at"], 10**e_lo), DOWN, buff=style.GAP_S
                )
                for t in facts["k_ticks"].value
            ),
        )
        k_name = style.zh("K（相加的乘积数）", size=style.SMALL_SIZE, color=style.MUTED).next_to(
            axes[0], UP, buff=style.GAP_S
        )
        k_name.align_to(axes[0], RIGHT)
        err_name = style.zh("最大相对误差", size=style.SMALL_SIZE, color=style.MUTED).next_to(
            axes[1], UP, buff=style.GAP_S
        )
        err_name.align_to(axes[1], LEFT)
        curve = facts["curve"].value
        plain = polyline([at(c["k"], c["plain"]) for c in curve], LOST, 3)
        plain_dots = VGroup(*(Dot(at(c["k"], c["plain"]), radius=0.06, color=LOST) for c in curve))
        toy = style.zh("玩具模型", size=style.SMALL_SIZE, color=LOST)
        toy.next_to(plain_dots[4], RIGHT, buff=style.GAP_S).shift(0.3 * DOWN)
        ends = VGroup(
            style.zh(facts["plain_first"].text, size=style.SMALL_SIZE, color=LOST)
            .next_to(plain_dots[0], RIGHT, buff=style.GAP_S)
            .shift(0.25 * DOWN),
            style.zh(facts["plain_last"].text, size=style.SMALL_SIZE, color=LOST).next_to(
                plain_dots[-1], LEFT, buff=style.GAP_S
            ),
        )
        with self.narrate("ac_curve") as beat:
            self.play(Create(axes), FadeIn(labels), FadeIn(k_name), FadeIn(err_name), run_time=beat.share(0.25))
            self.play(
                Create(plain),
                LaggedStart(*(FadeIn(d, scale=2) for d in plain_dots), lag_ratio=0.3),
                run_time=beat.share(0.45),
            )
            self.play(FadeIn(ends), FadeIn(toy), run_time=beat.share(0.15))

        small = Rectangle(width=1.2, height=0.5, stroke_color=style.FP32, stroke_width=2).move_to(
            (self.BITS_LEFT + 0.6, self.PROMOTE_Y, 0)
        )
        small_fill = widgets.bar(1.2, 0.5, style.FP32, opacity=style.FILL_SOFT).move_to(small, aligned_edge=LEFT)
        small_fill.stretch_to_fit_width(1e-3, about_edge=LEFT)
        small_name = style.zh(f"{facts['bits'].text} 位", size=style.SMALL_SIZE, color=style.FP32).next_to(
            small, DOWN, buff=style.GAP_S
        )
        wide = Rectangle(width=3.2, height=0.5, stroke_color=style.FP32, stroke_width=3).next_to(small, RIGHT, buff=1.1)
        wide_name = style.zh("CUDA 核心上的 FP32 寄存器", size=style.SMALL_SIZE, color=style.FP32).next_to(
            wide, DOWN, buff=style.GAP_S
        )
        move = Arrow(small.get_right(), wide.get_left(), buff=style.GAP_S, color=style.HIGHLIGHT, stroke_width=3)
        every = style.zh(
            f"每 {facts['every'].text} 个乘积 = {facts['wgmma'].text} 次 WGMMA",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        every.next_to(VGroup(small, wide), UP, buff=style.GAP_M).align_to(small, LEFT)
        promoted = polyline([at(c["k"], c["promoted"]) for c in curve], style.VERDICT_GOOD, 3)
        promoted_dots = VGroup(*(Dot(at(c["k"], c["promoted"]), radius=0.06, color=style.VERDICT_GOOD) for c in curve))
        promoted_name = style.zh(
            f"每 {facts['every'].text} 个提升一次", size=style.SMALL_SIZE, color=style.VERDICT_GOOD
        )
        promoted_name.next_to(promoted_dots[0], UP, buff=style.GAP_M).align_to(promoted_dots[0], LEFT)
        gap = DashedLine(
            at(4096, curve[3]["promoted"]), at(4096, curve[3]["plain"]), color=style.HIGHLIGHT, stroke_width=2
        )
        gap_name = style.zh(facts["ratio"].text, size=style.LABEL_SIZE, color=style.HIGHLIGHT).next_to(
            gap, RIGHT, buff=style.GAP_S
        )
        gap_name.shift(0.5 * DOWN)
        with self.narrate("ac_promote") as beat:
            self.play(
                FadeIn(small),
                FadeIn(small_name),
                FadeIn(wide),
                FadeIn(wide_name),
                FadeIn(every),
                run_time=beat.share(0.15),
            )
            self.add(small_fill)
            chunks = VGroup()
            for k in range(3):
                self.play(small_fill.animate.stretch_to_fit_width(1.2, about_edge=LEFT), run_time=beat.share(0.06))
                chunk = widgets.bar(1.0, 0.5, style.FP32, opacity=style.FILL_SOFT).move_to(
                    wide.get_left() + (0.5 + 1.05 * k) * RIGHT
                )
                self.play(
                    ReplacementTransform(small_fill.copy(), chunk),
                    small_fill.animate.stretch_to_fit_width(1e-3, about_edge=LEFT),
                    GrowFromEdge(move, LEFT) if k == 0 else Indicate(move, color=style.HIGHLIGHT),
                    run_time=beat.share(0.07),
                )
                chunks.add(chunk)
            self.play(Create(promoted), FadeIn(promoted_dots), FadeIn(promoted_name), run_time=beat.share(0.2))
            self.play(Create(gap), FadeIn(gap_name), run_time=beat.share(0.12))

        v3 = Dot(at(4096, facts["v3_measured"].value), radius=0.1, color=style.HIGHLIGHT)
        v3_ring = v3.copy().scale(1.8).set_fill(opacity=0).set_stroke(style.HIGHLIGHT, 2)
        v3_tag = style.zh("V3", size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(v3_ring, RIGHT, buff=style.GAP_XS)
        toy_ring = plain_dots[3].copy().scale(2.5).set_fill(opacity=0).set_stroke(LOST, 2)
        owners = VGroup()
        for color, who, what in (
            (LOST, "本课玩具模型（不是硬件）：每加一次就截断", f"K = {facts['k_v3'].text}：{facts['plain_v3'].text}"),
            (style.HIGHLIGHT, "DeepSeek-V3 在 H800 上实测", f"K = {facts['k_v3'].text}：{facts['v3_measured'].text}"),
        ):
            lines = style.caption_stack(who, what, size=style.SMALL_SIZE, color=color)
            owners.add(VGroup(Dot(radius=0.08, color=color).next_to(lines[0], LEFT, buff=style.GAP_S), lines))
        owners.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_L).move_to(
            (self.BITS_LEFT, self.SUM_Y, 0), aligned_edge=LEFT
        )
        bits_picture = VGroup(sum_row, sum_name, product_row, product_name, kept, grid_end, step_name)
        with self.narrate("ac_owner") as beat:
            self.play(FadeOut(bits_picture), run_time=beat.share(0.1))
            self.play(FadeIn(owners[0]), Create(toy_ring), run_time=beat.share(0.3))
            self.play(FadeIn(owners[1]), FadeIn(v3, scale=2), Create(v3_ring), FadeIn(v3_tag), run_time=beat.share(0.3))
        self.finish()


def labelled(
    text: str,
    color: str,
    width: float,
    height: float = 0.5,
    opacity: float = style.FILL_FAINT,
    size: float = style.SMALL_SIZE,
) -> VGroup:
    """A box with its label: widgets.block with the label in text ink (readable on any fill)."""
    return widgets.block(width, height, color, text, opacity=opacity, size=size)


# -- fp8_linear_three_gemms ----------------------------------------------------------------
class Fp8LinearThreeGemms(LectureScene):
    """Schematic: where Transformer Engine sits, the three GEMMs of one Linear in FP8 (V3's recipe), what stays
    in high precision, and the datasheet ratio of the two peaks."""

    STACK_TOP, STACK_W, STACK_SMALL = 2.1, 6.0, 3.2  # the stack, first in the middle, then small at the left
    FLOW_LEFT, FLOW_TOP, ROW = -2.5, 1.85, 1.25  # the Linear's three rows (Fprop, Dgrad, Wgrad): first y, pitch

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        tag = style.zh("示意图", size=style.SMALL_SIZE, color=style.MUTED).to_corner(UP + RIGHT, buff=style.EDGE)
        layers = VGroup(
            labelled("训练框架：Megatron-Core / PyTorch", style.MUTED, self.STACK_W, 0.8, size=style.LABEL_SIZE),
            labelled("Transformer Engine", style.HIGHLIGHT, self.STACK_W, 0.8, style.FILL_SOFT, style.LABEL_SIZE),
            labelled("底层算子：cuBLAS / cuDNN / CUDA", style.MUTED, self.STACK_W, 0.8, size=style.LABEL_SIZE),
        ).arrange(DOWN, buff=style.GAP_M)
        layers.move_to((0, self.STACK_TOP, 0), aligned_edge=UP)
        layers[1][1].set_color(style.BACKGROUND)
        te_parts = style.zh("低精度 · 融合算子 · 注意力 · MoE · 通信重叠", size=style.SMALL_SIZE, color=style.MUTED)
        te_parts.next_to(layers, DOWN, buff=style.GAP_M)
        with self.narrate("lg_stack") as beat:
            self.play(
                FadeIn(tag),
                LaggedStart(*(FadeIn(layer, shift=0.2 * DOWN) for layer in layers), lag_ratio=0.3),
                run_time=beat.share(0.5),
            )
            self.play(
                Indicate(layers[1], color=style.HIGHLIGHT, scale_factor=1.05),
                FadeIn(te_parts),
                run_time=beat.share(0.3),
            )

        def row(y: float, a: tuple[str, str], b: tuple[str, str], gemm: str, out: tuple[str, str]) -> VGroup:
            """One GEMM: two inputs (label, ink), each through its quantizer into E4M3, the product, its output."""
            x0 = self.FLOW_LEFT
            first = labelled(a[0], a[1], 2.2, 0.42).move_to((x0 + 1.1, y + 0.24, 0))
            second = labelled(b[0], b[1], 2.2, 0.42).move_to((x0 + 1.1, y - 0.24, 0))
            q = VGroup(
                labelled("E4M3", E4M3_INK, 0.9, 0.42).move_to((x0 + 3.0, y + 0.24, 0)),
                labelled("E4M3", E4M3_INK, 0.9, 0.42).move_to((x0 + 3.0, y - 0.24, 0)),
            )
            mm = labelled(gemm, style.COMPUTE, 1.7, 0.9, opacity=style.FILL_SOFT).move_to((x0 + 4.75, y, 0))
            result = labelled(out[0], out[1], 2.2, 0.42).move_to((x0 + 7.05, y, 0))
            arrows = VGroup(
                Arrow(
                    first.get_right(), q[0].get_left(), buff=0.05, stroke_width=2, color=style.MUTED, tip_length=0.12
                ),
                Arrow(
                    second.get_right(), q[1].get_left(), buff=0.05, stroke_width=2, color=style.MUTED, tip_length=0.12
                ),
                Arrow(q.get_right(), mm.get_left(), buff=0.05, stroke_width=2, color=style.MUTED, tip_length=0.12),
                Arrow(mm.get_right(), result.get_left(), buff=0.05, stroke_width=2, color=style.MUTED, tip_length=0.12),
            )
            return VGroup(first, second, q, mm, result, arrows)

        y0 = self.FLOW_TOP
        fprop = row(
            y0,
            (f"激活 {facts['tile'].text}", style.BF16),
            (f"权重 {facts['block'].text}", style.FP32),
            "前向 Fprop",
            ("输出 BF16", style.BF16),
        )
        accum = style.zh("FP8 相乘 · FP32 累加", size=style.SMALL_SIZE, color=style.COMPUTE).next_to(
            fprop[3], UP, buff=style.GAP_XS
        )
        with self.narrate("lg_fprop") as beat:
            self.play(
                FadeOut(te_parts),
                layers.animate.scale_to_fit_width(self.STACK_SMALL)
                .to_corner(UP + LEFT, buff=style.EDGE)
                .set_y(self.FLOW_TOP),
                run_time=beat.share(0.15),
            )
            self.play(FadeIn(fprop[0]), FadeIn(fprop[1]), run_time=beat.share(0.15))
            self.play(
                GrowFromEdge(fprop[5][0], LEFT),
                GrowFromEdge(fprop[5][1], LEFT),
                FadeIn(fprop[2]),
                run_time=beat.share(0.2),
            )
            self.play(GrowFromEdge(fprop[5][2], LEFT), FadeIn(fprop[3]), FadeIn(accum), run_time=beat.share(0.15))
            self.play(GrowFromEdge(fprop[5][3], LEFT), FadeIn(fprop[4]), run_time=beat.share(0.15))

        dgrad = row(
            y0 - self.ROW, ("输出梯度", style.BACKWARD), ("权重", style.FP32), "Dgrad", ("输入梯度", style.BACKWARD)
        )
        wgrad = row(
            y0 - 2 * self.ROW,
            ("输出梯度", style.BACKWARD),
            (f"缓存激活 {facts['tile_t'].text}", style.BF16),
            "Wgrad",
            ("权重梯度 FP32", style.FP32),
        )
        retile = style.zh(
            f"{facts['tile'].text} → {facts['tile_t'].text} 改排", size=style.SMALL_SIZE, color=style.HIGHLIGHT
        )
        retile.next_to(wgrad[1], DOWN, buff=style.GAP_XS)
        with self.narrate("lg_backward") as beat:
            self.play(FadeIn(dgrad, shift=0.2 * DOWN), run_time=beat.share(0.3))
            self.play(FadeIn(wgrad, shift=0.2 * DOWN), run_time=beat.share(0.3))
            self.play(FadeIn(retile), Indicate(wgrad[1], color=style.HIGHLIGHT), run_time=beat.share(0.2))

        kept = [
            ("嵌入 · 输出头", style.BF16),
            ("MoE 路由", style.BF16),
            ("归一化 · 注意力", style.BF16),
            ("主权重 · 权重梯度 FP32", style.FP32),
            ("Adam 动量 BF16", style.BF16),
        ]
        boxes = VGroup(*(labelled(t, c, 3.0, 0.38) for t, c in kept)).arrange(DOWN, buff=style.GAP_S)
        boxes.next_to(layers, DOWN, buff=style.GAP_L).align_to(layers, LEFT)
        for box in boxes:  # greyed until the narration names them
            box[0].set_fill(opacity=0.05).set_stroke(opacity=0.3)
            box[1].set_opacity(0.3)
        kept_name = style.zh("留在高精度", size=style.SMALL_SIZE, color=style.MUTED).next_to(
            boxes, UP, buff=style.GAP_S
        )
        kept_name.align_to(boxes, LEFT)
        with self.narrate("lg_keep") as beat:
            self.play(FadeIn(kept_name), FadeIn(boxes), run_time=beat.share(0.15))
            for box in boxes:
                self.play(
                    box[0].animate.set_fill(opacity=style.FILL_SOFT).set_stroke(opacity=1),
                    box[1].animate.set_opacity(1),
                    run_time=beat.share(0.13),
                )

        peak = style.caption_stack(
            "H100 规格表上的理论峰值（稠密）",
            f"FP8 {facts['fp8_peak'].text} ÷ BF16 {facts['bf16_peak'].text} = {facts['ratio'].text}",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        peak.next_to(retile, DOWN, buff=style.GAP_M).align_to(wgrad, LEFT)
        with self.narrate("lg_peak") as beat:
            self.play(FadeIn(peak, shift=0.2 * UP), run_time=beat.share(0.4))
        self.finish()
