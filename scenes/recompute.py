"""重算：拿算力换显存 (the recompute chapter): staging only; every number comes from tools.chapters.recompute."""

from __future__ import annotations

from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    Arrow,
    Axes,
    Create,
    DashedLine,
    Dot,
    DoubleArrow,
    FadeIn,
    FadeOut,
    GrowArrow,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    Mobject,
    Polygon,
    Rectangle,
    ReplacementTransform,
    SurroundingRectangle,
    Transform,
    TransformFromCopy,
    ValueTracker,
    VGroup,
    Write,
    always_redraw,
    linear,
    np,
)

from scenes import style
from scenes.base import LectureScene
from scenes.widgets import Column, bar, block, curve_through, grid_row, panel, sketch_axes, text_row
from tools.course.catalogue import FigureFacts
from tools.course.facts import Fact

# Gaps this chapter repeats that the style's scale has no name for.
AT_POINT = 0.12  # a label under or beside the point it names: a tick on an axis, a plotted dot
ON_LINE = 0.08  # a label riding on the line or arrow it names
GLYPH_GAP = 0.08  # between the hand-set pieces of one formula, or two pass blocks in a row
UNDER_LAYER = 0.25  # an activation block under its layer in the strip


def _retraction_line(mob: Mobject, color: str = style.VERDICT_BAD) -> Line:
    """A line through a number the page retracted."""
    return Line(mob.get_left() + 0.05 * LEFT, mob.get_right() + 0.05 * RIGHT, color=color, stroke_width=3)


def _save_flag(at: np.ndarray, color: str = style.MEMORY, height: float = 0.42) -> VGroup:
    """A save point (a checkpoint kept in memory): a small flag on a pole, its foot at `at`."""
    pole = Line(at, at + height * UP, color=color, stroke_width=3)
    cloth = Polygon(
        at + height * UP,
        at + (height - 0.16) * UP,
        at + (height - 0.08) * UP + 0.22 * RIGHT,
        color=color,
        fill_color=color,
        fill_opacity=1,
        stroke_width=1,
    )
    return VGroup(pole, cloth)


class RecomputeTradeoff(LectureScene):
    """First the save point and the exchange (memory down ~40×, compute up ⅓), then the three tiers."""

    LAYERS_SHOWN = 6  # schematic layers in the strip
    STRIP_CENTRE = 1.0 * UP
    LAYER_W, LAYER_H = 1.3, 0.75
    MEMORY_X = (-5.3, -3.3)  # the two memory bars' centres
    MEMORY_BASE, MEMORY_HEIGHT = -1.9, 3.3  # the keep-all bar's height; the other is to scale
    SPAN_OFFSET = 1.0  # the ratio's arrow stands this far right of the small bar, clear of its labels
    PASSES_LEFT = np.array((-0.4, 0.9, 0))  # the pass blocks' rows start here
    PASS_W, PASS_H, PASS_ROWS = 1.15, 0.62, 1.25
    RECAP_Y = 2.7
    # The tiers' table: tier | extra compute | memory removed; a value cell is a bar with its number after it.
    TIERS = (Column(-6.6, LEFT), Column(-2.9, LEFT), Column(1.4, LEFT))
    TIER_HEADER_Y, TIER_TOP, TIER_PITCH = 1.85, 0.65, 0.8
    BAR_100 = 2.5  # a bar's length at 100%, the same in both columns
    NOTES_Y = -1.6  # two short lines under the table

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        strip = self._save_points(facts)
        recap = self._exchange(facts, strip)
        self._tiers(facts, recap)
        self.finish()

    # -- the save point -----------------------------------------------------------------
    def _save_points(self, facts: FigureFacts) -> VGroup:
        """The forward strip of layers and their kept activations, then save points and the backward replay."""
        layers = VGroup(
            *(panel(self.LAYER_W, self.LAYER_H, corner_radius=0.08, stroke_width=2) for _ in range(self.LAYERS_SHOWN))
        )
        layers.arrange(RIGHT, buff=style.GAP_L).move_to(self.STRIP_CENTRE)
        forward = Arrow(
            layers.get_left() + 0.55 * UP + 0.1 * LEFT,
            layers.get_right() + 0.55 * UP,
            buff=style.FLUSH,
            color=style.FORWARD,
            stroke_width=4,
        )
        forward.shift((layers.get_top()[1] + 0.3 - forward.get_y()) * UP)
        forward_name = style.zh("前向", size=style.LABEL_SIZE, color=style.FORWARD).next_to(
            forward, UP, buff=style.GAP_S
        )
        kept = VGroup(
            *(block(self.LAYER_W - 0.3, 0.55, style.FORWARD).next_to(layer, DOWN, buff=UNDER_LAYER) for layer in layers)
        )
        keep_name = style.zh("全部留着：每层的中间结果", size=style.LABEL_SIZE, color=style.FORWARD)
        keep_name.next_to(kept, DOWN, buff=style.GAP_L)
        flags = VGroup(*(_save_flag(layer.get_corner(DOWN + LEFT) + 0.05 * RIGHT) for layer in layers))
        for flag, layer in zip(flags, layers):
            flag.next_to(layer, DOWN, buff=style.GAP_XS).align_to(layer, LEFT)
        flag_name = style.zh("重算：只留每层入口，一个存档点", size=style.LABEL_SIZE, color=style.MEMORY)
        flag_name.move_to(keep_name)
        with self.narrate("tr_save") as beat:
            self.play(LaggedStart(*(FadeIn(layer) for layer in layers), lag_ratio=0.15), run_time=beat.share(0.15))
            self.play(
                GrowArrow(forward),
                FadeIn(forward_name),
                LaggedStart(*(GrowFromEdge(activation, UP) for activation in kept), lag_ratio=0.5),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(keep_name), run_time=beat.share(0.1))
            self.play(
                FadeOut(kept, shift=0.2 * DOWN),
                ReplacementTransform(keep_name, flag_name),
                LaggedStart(*(FadeIn(flag, shift=0.2 * UP) for flag in flags), lag_ratio=0.2),
                run_time=beat.share(0.3),
            )

        backward = Arrow(
            layers.get_right() + 0.1 * RIGHT, layers.get_left(), buff=style.FLUSH, color=style.BACKWARD, stroke_width=4
        ).next_to(flag_name, DOWN, buff=style.GAP_L)
        backward_name = style.zh("反向", size=style.LABEL_SIZE, color=style.BACKWARD).next_to(
            backward, RIGHT, buff=style.GAP_SM
        )
        with self.narrate("tr_replay") as beat:
            self.play(FadeIn(backward_name), run_time=beat.share(0.08))
            per_layer = beat.share(0.8) / len(layers)
            for i in range(len(layers) - 1, -1, -1):
                layer = layers[i]
                replay = Arrow(
                    layer.get_left() + 0.15 * RIGHT,
                    layer.get_right() + 0.15 * LEFT,
                    buff=style.FLUSH,
                    color=style.FORWARD,
                    stroke_width=3,
                ).move_to(layer)
                again = block(self.LAYER_W - 0.3, 0.55, style.FORWARD, opacity=style.FILL_FAINT).next_to(
                    layer, DOWN, buff=UNDER_LAYER
                )
                again.set_stroke(style.FORWARD, 2, opacity=1)
                segment = Line(
                    layers[i].get_right() + 0.2 * RIGHT,
                    layers[i].get_left() + 0.2 * LEFT,
                    color=style.BACKWARD,
                    stroke_width=4,
                ).set_y(backward.get_y())
                self.play(
                    Create(segment),
                    Indicate(flags[i], color=style.HIGHLIGHT, scale_factor=1.3),
                    run_time=per_layer * 0.35,
                )
                self.play(GrowArrow(replay), FadeIn(again), run_time=per_layer * 0.35)
                self.play(FadeOut(replay), FadeOut(again, shift=0.15 * DOWN), run_time=per_layer * 0.3)
                backward.add(segment)
        return VGroup(layers, forward, forward_name, flags, flag_name, backward, backward_name)

    # -- the exchange: memory against passes ------------------------------------------------------
    def _exchange(self, facts: FigureFacts, strip: VGroup) -> Mobject:
        """Activation memory kept against passes paid, to scale; returns the one-line recap it leaves."""
        keep, full = facts["keep_all"], facts["full_recompute"]
        heights = (self.MEMORY_HEIGHT, self.MEMORY_HEIGHT / facts["asymmetry"].value)  # to scale
        bars, names, values = VGroup(), VGroup(), VGroup()
        for x, height, name, fact in zip(self.MEMORY_X, heights, ("全部留着", "只留入口 *"), (keep, full)):
            memory = bar(1.2, max(height, 0.04), style.MEMORY)
            memory.move_to((x, self.MEMORY_BASE, 0), aligned_edge=DOWN)
            bars.add(memory)
            names.add(style.zh(name, size=style.LABEL_SIZE).next_to((x, self.MEMORY_BASE, 0), DOWN, buff=style.GAP_M))
            values.add(
                style.value(fact, size=style.BODY_SIZE, color=style.MEMORY).next_to(memory, UP, buff=style.GAP_SM)
            )
        base = Line(
            (self.MEMORY_X[0] - 1.0, self.MEMORY_BASE, 0),
            (self.MEMORY_X[1] + 1.0, self.MEMORY_BASE, 0),
            color=style.MUTED,
            stroke_width=2,
        )
        memory_name = style.zh(f"激活显存 · 一条 {facts['seq'].text} 序列", size=style.LABEL_SIZE, color=style.MUTED)
        memory_name.next_to(values, UP, buff=style.GAP_L).set_x(np.mean(self.MEMORY_X))
        with self.narrate("tr_memory") as beat:
            self.play(FadeOut(strip), run_time=beat.share(0.15))
            self.play(
                Create(base),
                FadeIn(memory_name),
                FadeIn(names[0]),
                GrowFromEdge(bars[0], DOWN),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(values[0]), run_time=beat.share(0.1))
            self.play(FadeIn(names[1]), GrowFromEdge(bars[1], DOWN), FadeIn(values[1]), run_time=beat.share(0.2))
            ratio = style.value(facts["asymmetry"], size=style.BODY_SIZE, color=style.HIGHLIGHT)
            span_x = bars[1].get_x() + self.SPAN_OFFSET
            span = DoubleArrow(
                (span_x, bars[1].get_top()[1], 0),
                (span_x, bars[0].get_top()[1], 0),
                buff=style.FLUSH,
                color=style.HIGHLIGHT,
                stroke_width=3,
                tip_length=0.2,
            )
            ratio.next_to(span, RIGHT, buff=style.GAP_M)
            self.play(GrowArrow(span), FadeIn(ratio), run_time=beat.share(0.2))

        rows = VGroup()
        before = self._passes(("前向", "反向", "反向"), (style.FORWARD, style.BACKWARD, style.BACKWARD))
        before.move_to(self.PASSES_LEFT, aligned_edge=LEFT)
        after = self._passes(
            ("前向", "重算", "反向", "反向"), (style.FORWARD, style.FORWARD, style.BACKWARD, style.BACKWARD)
        )
        after[1][0].set_fill(opacity=style.FILL_FAINT)
        after.move_to(self.PASSES_LEFT + self.PASS_ROWS * DOWN, aligned_edge=LEFT)
        count_before = style.zh(f"{facts['passes_before'].text} 遍", size=style.BODY_SIZE)
        count_before.next_to(before, RIGHT, buff=style.GAP_L)
        count_after = style.zh(f"{facts['passes_after'].text} 遍", size=style.BODY_SIZE)
        count_after.next_to(after, RIGHT, buff=style.GAP_L)
        rows.add(before, after)
        compute_name = style.zh("一步的算力（以一遍前向为单位）", size=style.LABEL_SIZE, color=style.MUTED)
        compute_name.next_to(before, UP, buff=style.GAP_L).align_to(before, LEFT)
        with self.narrate("tr_compute") as beat:
            self.play(
                FadeIn(compute_name),
                LaggedStart(*(FadeIn(b, shift=0.2 * RIGHT) for b in before), lag_ratio=0.4),
                run_time=beat.share(0.35),
            )
            self.play(FadeIn(count_before), run_time=beat.share(0.1))
            # The same three passes drop to the row below, opening a gap after the forward for the replay.
            self.play(TransformFromCopy(before, VGroup(after[0], after[2], after[3])), run_time=beat.share(0.2))
            self.play(GrowFromEdge(after[1], LEFT), run_time=beat.share(0.2))
            self.play(FadeIn(count_after), run_time=beat.share(0.1))

        cut = style.value(facts["memory_cut"], size=style.BODY_SIZE, color=style.MEMORY)
        cut.next_to(values[1], UP, buff=style.GAP_M)
        extra = style.zh(f"+{facts['third'].text}", size=style.BODY_SIZE, color=style.COMPUTE)
        extra.next_to(count_after, DOWN, buff=style.GAP_M)
        default = style.zh("兑换比例悬殊：默认开着", size=style.BODY_SIZE, color=style.HIGHLIGHT)
        default.next_to(after, DOWN, buff=0.55).align_to(after, LEFT)
        with self.narrate("tr_default") as beat:
            self.play(FadeIn(extra, scale=1.3), Indicate(after[1], color=style.HIGHLIGHT), run_time=beat.share(0.25))
            self.play(FadeIn(cut, scale=1.3), run_time=beat.share(0.25))
            self.play(FadeIn(default), run_time=beat.share(0.2))

        recap = style.zh(
            f"全部留着 {keep.text} → 只留入口 {full.text} *　·　{facts['passes_before'].text} 遍 → "
            f"{facts['passes_after'].text} 遍",
            size=style.LABEL_SIZE,
            color=style.MUTED,
        )
        recap.move_to((0, self.RECAP_Y, 0))
        self.play(
            FadeOut(
                VGroup(
                    bars,
                    names,
                    base,
                    memory_name,
                    span,
                    ratio,
                    rows,
                    compute_name,
                    count_before,
                    count_after,
                    extra,
                    default,
                )
            ),
            ReplacementTransform(VGroup(values, cut), recap),
            run_time=0.8,
        )
        return recap

    def _passes(self, names: tuple[str, ...], colours: tuple[str, ...]) -> VGroup:
        """One row of pass blocks (forward, replay, backward), each one forward's worth of compute wide."""
        return VGroup(*(block(self.PASS_W, self.PASS_H, colour, name) for name, colour in zip(names, colours))).arrange(
            RIGHT, buff=GLYPH_GAP
        )

    # -- three tiers ------------------------------------------------------------------------------
    def _tiers(self, facts: FigureFacts, recap: Mobject) -> None:
        """The three tiers' table of compute paid against memory removed, then the page's selective share retracted."""
        header = VGroup(
            text_row(
                ("档位", "多付算力", "换掉激活显存"),
                self.TIERS,
                self.TIER_HEADER_Y,
                size=style.BODY_SIZE,
                color=style.MUTED,
            ),
            text_row(
                ("", f"÷ 一步（{facts['passes_before'].text} 遍前向）", f"÷ 一层 MoE（{facts['moe_layer'].text}）"),
                self.TIERS,
                self.TIER_HEADER_Y - 0.42,
                size=style.SMALL_SIZE,
                color=style.MUTED,
            ),
        )
        rule = Line(
            (self.TIERS[0].x, self.TIER_HEADER_Y - 0.72, 0),
            (6.6, self.TIER_HEADER_Y - 0.72, 0),
            color=style.MUTED,
            stroke_width=1.5,
        )
        tiers = (("none", "不重算"), ("selective", "选择性重算"), ("full", "全量重算"))
        rows = {
            key: self._tier_row(name, facts[f"{key}_compute"], facts[f"{key}_memory"], i)
            for i, (key, name) in enumerate(tiers)
        }
        with self.narrate("tr_tiers") as beat:
            self.play(FadeIn(header[0]), Create(rule), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(FadeIn(row[0], shift=0.2 * RIGHT) for row in rows.values()), lag_ratio=0.4),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(header[1]), run_time=beat.share(0.15))
            self.play(FadeIn(rows["none"][1:]), run_time=beat.share(0.1))
        for key in ("full", "selective"):
            with self.narrate(f"tr_{key}") as beat:
                row = rows[key]
                self.play(GrowFromEdge(row[1], LEFT), FadeIn(row[2]), run_time=beat.share(0.35))
                self.play(GrowFromEdge(row[3], LEFT), FadeIn(row[4]), run_time=beat.share(0.35))

        selective = rows["selective"]
        page = style.value(facts["page_selective_memory"], size=style.LABEL_SIZE, color=style.MUTED)
        page_name = style.zh("页面", size=style.SMALL_SIZE, color=style.MUTED)
        old = VGroup(page_name, page).arrange(RIGHT, buff=style.GAP_S).next_to(selective[4], RIGHT, buff=style.GAP_M)
        why = style.caption_stack(
            f"页面的分母少了每层入口（{facts['entry'].text}）；",
            f"同一个分母 {facts['moe_layer'].text}，是 {facts['selective_memory'].text[1:]}",
            size=style.LABEL_SIZE,
            color=style.TEXT,
        )
        why.move_to((0, self.NOTES_Y, 0), aligned_edge=UP)
        with self.narrate("tr_page") as beat:
            self.play(FadeIn(old), run_time=beat.share(0.2))
            strike = _retraction_line(page)
            self.play(Create(strike), run_time=beat.share(0.15))
            self.play(FadeIn(why[0]), run_time=beat.share(0.2))
            self.play(FadeIn(why[1]), Indicate(selective[4], color=style.HIGHLIGHT), run_time=beat.share(0.2))

        value = style.zh(
            f"每份算力换回的显存：选择性是全量的 {facts['value_ratio'].text}",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        ).move_to(why[0])
        deepseek = style.zh(
            "DeepSeek-V3：重算全部 RMSNorm 与 MLA 上投影，正是这一档", size=style.LABEL_SIZE, color=style.TEXT
        ).move_to(why[1])
        mark = SurroundingRectangle(VGroup(selective, old), color=style.HIGHLIGHT, buff=0.12, corner_radius=0.08)
        with self.narrate("tr_value") as beat:
            self.play(FadeOut(why), FadeIn(value), Create(mark), run_time=beat.share(0.3))
            self.play(FadeIn(deepseek), run_time=beat.share(0.25))

        caveat = style.caption_stack(
            "显存按 V3 config 自推，当量级看；",
            f"* 只留入口：未计正在重算的那一层（一层 MoE 约 {facts['working_layer'].text}）",
            size=style.LABEL_SIZE,
            color=style.MUTED,
        )
        caveat.move_to((0, self.NOTES_Y, 0), aligned_edge=UP)
        with self.narrate("tr_caveat") as beat:
            self.play(
                FadeOut(VGroup(value, deepseek)),
                Indicate(recap, color=style.TEXT, scale_factor=1.05),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(caveat), run_time=beat.share(0.3))

    def _tier_row(self, name: str, compute: Fact, memory: Fact, index: int) -> VGroup:
        """A tier's name, then its compute and memory shares, each a bar to scale with its number after it."""
        y = self.TIER_TOP - index * self.TIER_PITCH
        label = style.zh(name, size=style.BODY_SIZE)
        cells = [label]
        for column, fact, colour in ((self.TIERS[1], compute, style.COMPUTE), (self.TIERS[2], memory, style.MEMORY)):
            share = bar(max(abs(fact.value) * self.BAR_100, 0.03), 0.36, colour)
            share.move_to((column.x, y, 0), aligned_edge=LEFT)
            number = style.value(fact, size=style.BODY_SIZE, color=colour).next_to(share, RIGHT, buff=style.GAP_M)
            cells += [share, number]
        row = VGroup(*cells)
        label.move_to((self.TIERS[0].x, y, 0), aligned_edge=LEFT)
        return row


class RecomputeSqrtL(LectureScene):
    """Checkpoint every k layers: L/k + k present at once, swept live; equal at √L (L = 64), then V3's 61."""

    STRIP = (-6.4, 2.35, 12.8, 0.36)  # left, centre y, width, cell height
    PLOT_ORIGIN = np.array((0.6, -2.3, 0))
    PLOT_W, PLOT_H = 5.6, 3.6
    K_MAX, Y_MAX = 34, 36
    ROOT_LABEL = (14, 26)  # (k, layers): right of the total's minimum, above its rising branch
    READOUT = np.array((-6.5, 1.05, 0))  # the formula's left edge; the stops' lines hang under it
    READOUT_PITCH = 0.55

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        self.k = ValueTracker(1.0)
        strip = self._strip(facts["layers"].value)
        legend = self._strip_key()
        formula = style.zh("同时在场 ＝ L/k ＋ k", size=style.BODY_SIZE).move_to(self.READOUT, aligned_edge=LEFT)
        with self.narrate("sq_idea") as beat:
            self.play(FadeIn(strip), FadeIn(legend), run_time=beat.share(0.35))
            self.play(self.k.animate.set_value(facts["k_small"].value), run_time=beat.share(0.4))

        axes = sketch_axes((0, self.K_MAX, 1), (0, self.Y_MAX, 1), self.PLOT_W, self.PLOT_H)
        axes.move_to(self.PLOT_ORIGIN, aligned_edge=DOWN + LEFT)
        names = VGroup(
            style.zh("k", size=style.LABEL_SIZE, color=style.MUTED).next_to(axes.x_axis, RIGHT, buff=style.GAP_S),
            style.zh("层数", size=style.LABEL_SIZE, color=style.MUTED).next_to(axes.y_axis, UP, buff=style.GAP_S),
        )
        curves = self._curves(axes, facts["sweep"].value)
        with self.narrate("sq_count") as beat:
            self.play(Write(formula), run_time=beat.share(0.25))
            self.play(Create(axes), FadeIn(names), run_time=beat.share(0.2))
            self.play(Create(curves[0]), Create(curves[1]), run_time=beat.share(0.25))
            self.play(Create(curves[2]), run_time=beat.share(0.2))

        marker = always_redraw(lambda: self._sweep_marker(axes, facts["sweep"].value))
        lines = VGroup()
        with self.narrate("sq_small") as beat:
            self.play(FadeIn(marker), run_time=beat.share(0.2))
            lines.add(self._readout(facts, "small", 0))
            self.play(FadeIn(lines[-1], shift=0.2 * RIGHT), run_time=beat.share(0.3))
            ticks = self._ticks(axes, facts, "")
            self.play(FadeIn(ticks[0]), run_time=beat.share(0.2))
        with self.narrate("sq_sweep") as beat:
            self.play(self.k.animate.set_value(facts["k_best"].value - 2), rate_func=linear, run_time=beat.share(0.9))
        with self.narrate("sq_meet") as beat:
            self.play(self.k.animate.set_value(facts["k_best"].value), run_time=beat.share(0.2))
            lines.add(self._readout(facts, "best", 1))
            root = style.zh(
                f"√{facts['layers'].text} ＝ {facts['sqrt'].text}", size=style.BODY_SIZE, color=style.HIGHLIGHT
            ).move_to(axes.c2p(*self.ROOT_LABEL))
            self.play(FadeIn(lines[-1], shift=0.2 * RIGHT), FadeIn(ticks[1]), run_time=beat.share(0.3))
            self.play(FadeIn(root), run_time=beat.share(0.25))
        with self.narrate("sq_large") as beat:
            self.play(self.k.animate.set_value(facts["k_large"].value), rate_func=linear, run_time=beat.share(0.55))
            lines.add(self._readout(facts, "large", 2))
            level = facts["total_small"].value
            even = DashedLine(
                axes.c2p(facts["k_small"].value, level),
                axes.c2p(facts["k_large"].value, level),
                color=style.HIGHLIGHT,
                stroke_width=2.5,
            )
            self.play(FadeIn(lines[-1], shift=0.2 * RIGHT), FadeIn(ticks[2]), Create(even), run_time=beat.share(0.35))
        why = style.zh("L/k × k ＝ L：乘积一定，相等时和最小", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        why.next_to(lines, DOWN, buff=style.GAP_L).align_to(lines, LEFT)
        with self.narrate("sq_why") as beat:
            self.play(FadeIn(why), run_time=beat.share(0.3))
            self.play(Indicate(lines[1], color=style.HIGHLIGHT), run_time=beat.share(0.3))

        # -- V3's 61 layers ----------------------------------------------------------------------------
        v3_curves = self._curves(axes, facts["v3_sweep"].value)
        v3_title = style.zh(
            f"V3：L ＝ {facts['v3_layers'].text}，√L {facts['v3_sqrt'].text}",
            size=style.BODY_SIZE,
            color=style.HIGHLIGHT,
        ).move_to(self.READOUT, aligned_edge=LEFT)
        with self.narrate("sq_v3") as beat:
            self.play(
                FadeOut(VGroup(lines, why, even, ticks, root)), marker.animate.set_opacity(0), run_time=beat.share(0.2)
            )
            self.remove(marker)
            self.k.set_value(facts["v3_k_small"].value)
            v3_strip = self._strip(facts["v3_layers"].value)
            self.play(
                *(Transform(a, b) for a, b in zip(curves, v3_curves)),
                ReplacementTransform(formula, v3_title),
                ReplacementTransform(strip, v3_strip),
                run_time=beat.share(0.45),
            )
        v3_marker = always_redraw(lambda: self._sweep_marker(axes, facts["v3_sweep"].value))
        v3_lines = VGroup(*(self._readout(facts, stop, i, "v3_") for i, stop in enumerate(("small", "best", "large"))))
        v3_ticks = self._ticks(axes, facts, "v3_")
        ends = VGroup(
            *(
                DashedLine(
                    axes.c2p(0, facts[f"v3_total_{stop}"].value),
                    axes.c2p(facts[f"v3_k_{stop}"].value, facts[f"v3_total_{stop}"].value),
                    color=style.HIGHLIGHT,
                    stroke_width=2,
                )
                for stop in ("small", "large")
            )
        )
        unequal = (
            style.zh(
                f"{facts['v3_total_small'].text} ≠ {facts['v3_total_large'].text}",
                size=style.BODY_SIZE,
                color=style.HIGHLIGHT,
            )
            .next_to(v3_lines, DOWN, buff=style.GAP_L)
            .align_to(v3_lines, LEFT)
        )
        with self.narrate("sq_v3_best") as beat:
            self.add(v3_marker)
            self.play(FadeIn(v3_lines[0]), FadeIn(v3_ticks[0]), run_time=beat.share(0.15))
            self.play(self.k.animate.set_value(facts["v3_k_best"].value), run_time=beat.share(0.15))
            self.play(FadeIn(v3_lines[1]), FadeIn(v3_ticks[1]), run_time=beat.share(0.15))
            self.play(self.k.animate.set_value(facts["v3_k_large"].value), run_time=beat.share(0.2))
            self.play(FadeIn(v3_lines[2]), FadeIn(v3_ticks[2]), run_time=beat.share(0.1))
            self.play(Create(ends), FadeIn(unequal), run_time=beat.share(0.2))
        self.finish()

    # -- pieces -------------------------------------------------------------------------------------
    def _strip(self, layers: int) -> VGroup:
        """L cells; every k-th a save point, the top segment (being recomputed) lit. Repainted
        only when k, rounded while it sweeps, changes: redrawing every cell each frame doubled the render time."""
        left, y, width, height = self.STRIP
        cell = width / layers
        cells = VGroup(
            *(
                Rectangle(width=cell, height=height, stroke_color=style.BACKGROUND, stroke_width=1).move_to(
                    (left + (i + 0.5) * cell, y, 0)
                )
                for i in range(layers)
            )
        )
        painted = [0]

        def paint(group: VGroup) -> None:
            k = max(1, round(self.k.get_value()))
            if k == painted[0]:
                return
            painted[0] = k
            first_lit = (layers - 1) // k * k  # the last whole segment: where backward starts recomputing
            if layers - first_lit < k:
                first_lit -= k
            for i, rect in enumerate(group):
                if i % k == 0:
                    rect.set_fill(style.MEMORY, style.FILL_SOLID)
                elif i >= first_lit:
                    rect.set_fill(style.FORWARD, style.FILL_SOFT)
                else:
                    rect.set_fill(style.PANEL, 1.0)

        paint(cells)
        return cells.add_updater(paint)

    def _strip_key(self) -> VGroup:
        """What the strip's two lit colours mean: save points, and the segment being recomputed."""
        items = VGroup()
        for colour, name in ((style.MEMORY, "存档点（L/k 个）"), (style.FORWARD, "正在重算的一段（k 层）")):
            swatch = bar(0.3, 0.22, colour)
            items.add(VGroup(swatch, style.zh(name, size=style.SMALL_SIZE)).arrange(RIGHT, buff=style.GAP_S))
        items.arrange(RIGHT, buff=style.GAP_L)
        left, y, _width, height = self.STRIP
        return items.next_to((left, y - height / 2, 0), DOWN, buff=style.GAP_M, aligned_edge=LEFT)

    def _curves(self, axes: Axes, sweep: dict) -> VGroup:
        """Save points L/k, the recomputed segment k and their sum, against k."""
        k = sweep["k"]
        rows = [(x, c, s) for x, c, s in zip(k, sweep["checkpoints"], sweep["segment"]) if c + s <= self.Y_MAX]
        low = [(x, c) for x, c, _s in rows]
        return VGroup(
            curve_through(axes, low, style.MEMORY, 3),
            curve_through(axes, [(x, s) for x, _c, s in rows], style.FORWARD, 3),
            curve_through(axes, [(x, c + s) for x, c, s in rows], style.DATA, 4),
        )

    def _sweep_marker(self, axes: Axes, sweep: dict) -> VGroup:
        """The current k on the three curves: a drop line and a dot on each."""
        k = self.k.get_value()
        checkpoints = float(np.interp(k, sweep["k"], sweep["checkpoints"]))
        drop = Line(axes.c2p(k, 0), axes.c2p(k, checkpoints + k), color=style.MUTED, stroke_width=2)
        dots = VGroup(
            Dot(axes.c2p(k, checkpoints + k), radius=0.08, color=style.HIGHLIGHT),
            Dot(axes.c2p(k, checkpoints), radius=0.06, color=style.MEMORY),
            Dot(axes.c2p(k, k), radius=0.06, color=style.FORWARD),
        )
        return VGroup(drop, dots)

    def _readout(self, facts: FigureFacts, stop: str, index: int, prefix: str = "") -> VGroup:
        """One stop's sum, save points + segment = total, in the curves' colours, on line `index` under the formula."""
        f = {name: facts[f"{prefix}{name}_{stop}"].text for name in ("k", "ckpt", "total")}
        line = VGroup(
            style.zh(f"k ＝ {f['k']}：", size=style.BODY_SIZE),
            style.zh(f["ckpt"], size=style.BODY_SIZE, color=style.MEMORY),
            style.zh("＋", size=style.BODY_SIZE),
            style.zh(f["k"], size=style.BODY_SIZE, color=style.FORWARD),
            style.zh(f"＝ {f['total']}", size=style.BODY_SIZE),
        ).arrange(RIGHT, buff=0.12)
        return line.move_to(self.READOUT + (index + 1) * self.READOUT_PITCH * DOWN, aligned_edge=LEFT)

    def _ticks(self, axes: Axes, facts: FigureFacts, prefix: str) -> VGroup:
        """The three stops' k under the x axis."""
        ticks = VGroup()
        for stop in ("small", "best", "large"):
            k = facts[f"{prefix}k_{stop}"]
            ticks.add(
                style.value(k, size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    axes.c2p(k.value, 0), DOWN, buff=AT_POINT
                )
            )
        return ticks


class SelectiveRecomputeTable(LectureScene):
    """One V3 MoE layer's tensors, computed row by row, ranked by TFLOP per GiB, cut at 3."""

    # tensor | GiB saved | TFLOP to recompute | TFLOP per GiB | verdict
    TABLE = (Column(-6.65, LEFT), Column(-0.7, RIGHT), Column(1.8, RIGHT), Column(3.8, RIGHT), Column(5.05, ORIGIN))
    CUT_END = 5.5  # rules and the cut end here; the cut's name follows it
    HEADER_Y, FIRST_ROW_Y, PITCH = 2.5, 2.0, 0.4
    OLD_CELL_X = 0.45  # the retracted value sits struck through left of the script's
    VERDICT_COLOURS = {
        "白捡": style.VERDICT_GOOD,
        "划算": style.VERDICT_GOOD,
        "边际": style.HIGHLIGHT,
        "绝不": style.VERDICT_BAD,
    }
    NOTE_Y = -1.45  # under the table: a footnote, later the tier's sums and shares
    SUM_Y = -1.35

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        data = facts["rows"].value
        question = style.caption_stack("扔掉它，反向时再算回来：", "每省一个字节，要付多少次运算？", color=style.TEXT)
        question.move_to(0.3 * UP)
        with self.narrate("tb_question") as beat:
            self.play(FadeIn(question[0]), run_time=beat.share(0.3))
            self.play(FadeIn(question[1]), run_time=beat.share(0.3))
        rule_text = style.zh("线性层：代价 ＝ 省下的字节 × 输入宽度 k", size=style.BODY_SIZE, color=style.HIGHLIGHT)
        rule_text.next_to(question, DOWN, buff=style.GAP_L)
        with self.narrate("tb_closed") as beat:
            self.play(FadeIn(rule_text, shift=0.2 * UP), run_time=beat.share(0.4))

        header = text_row(
            ("张量", "省显存 GiB", "重算 TFLOP", "每 GiB 付", "结论"), self.TABLE, self.HEADER_Y, color=style.MUTED
        )
        rule = Line(
            (self.TABLE[0].x, self.HEADER_Y - 0.26, 0),
            (self.CUT_END, self.HEADER_Y - 0.26, 0),
            color=style.MUTED,
            stroke_width=1.5,
        )
        rows = [None] * len(data)
        for rank, row in enumerate(data):
            rows[rank] = text_row(
                (row["label"], row["gib"], row["tflop"], row["per_gib"]),
                self.TABLE,
                self._y(row["forward"]),
                size=style.SMALL_SIZE,
            )
        with self.narrate("tb_rows") as beat:
            self.play(FadeOut(question), rule_text.animate.scale(0.8).move_to((0, -2.0, 0)), run_time=beat.share(0.1))
            self.play(FadeIn(header), Create(rule), run_time=beat.share(0.08))
            per_row = beat.share(0.5) / len(rows)
            for row in sorted(rows, key=lambda r: r.get_y(), reverse=True):
                self.play(
                    LaggedStart(*(FadeIn(cell, shift=0.15 * RIGHT) for cell in row), lag_ratio=0.25), run_time=per_row
                )
            self.play(
                FadeOut(rule_text),
                *(row.animate.set_y(self._y(rank)) for rank, row in enumerate(rows)),
                run_time=beat.share(0.3),
            )

        verdicts = [
            style.zh(r["verdict"], size=style.SMALL_SIZE, color=self.VERDICT_COLOURS[r["verdict"]]).move_to(
                (self.TABLE[4].x, self._y(rank), 0)
            )
            for rank, r in enumerate(data)
        ]
        taken = [rank for rank, r in enumerate(data) if r["selected"]]
        with self.narrate("tb_cheap") as beat:
            free = [rank for rank in taken if data[rank]["verdict"] == "白捡"]
            self.play(LaggedStart(*(FadeIn(verdicts[i]) for i in free), lag_ratio=0.3), run_time=beat.share(0.35))
            self.play(
                LaggedStart(*(FadeIn(verdicts[i]) for i in taken if i not in free), lag_ratio=0.3),
                run_time=beat.share(0.35),
            )
        gate_rank = next(rank for rank, r in enumerate(data) if r["verdict"] == "边际")
        gate = rows[gate_rank]
        with self.narrate("tb_gate") as beat:
            self.play(Indicate(gate[0], color=style.HIGHLIGHT, scale_factor=1.05), run_time=beat.share(0.4))
            self.play(FadeIn(verdicts[gate_rank]), run_time=beat.share(0.3))

        with self.narrate("tb_retract") as beat:
            script = gate[2]
            old = style.value(facts["retracted_cell"], size=style.SMALL_SIZE, color=style.MUTED)
            old.move_to(script, aligned_edge=RIGHT)
            self.play(script.animate.set_opacity(0), FadeIn(old), run_time=beat.share(0.2))
            strike = _retraction_line(old)
            self.play(Create(strike), run_time=beat.share(0.15))
            self.play(
                VGroup(old, strike).animate.move_to((self.OLD_CELL_X, gate.get_y(), 0)),
                script.animate.set_opacity(1).set_color(style.HIGHLIGHT),
                run_time=beat.share(0.3),
            )

        star = style.zh("*", size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(gate[0], RIGHT, buff=style.GAP_XS)
        note = style.zh(
            f"* {facts['gate_gib'].text} ＝ gate ＋ up ＋ 一份 {facts['kv_down_width'].text} 宽的 KV 降维；"
            f"按标签含路由与 Q 降维则为 {facts['gate_gib_as_labelled'].text}",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        ).move_to((0, self.NOTE_Y, 0))
        with self.narrate("tb_row_content") as beat:
            self.play(FadeIn(star), Indicate(gate[1], color=style.HIGHLIGHT), run_time=beat.share(0.3))
            self.play(FadeIn(note), run_time=beat.share(0.3))

        attention = rows[-1]
        jump = style.value(facts["attention_vs_previous"], size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        jump_arrow = Arrow(
            gate[3].get_right() + 0.15 * RIGHT,
            attention[3].get_right() + 0.15 * RIGHT,
            buff=style.FLUSH,
            color=style.VERDICT_BAD,
            stroke_width=3,
            max_tip_length_to_length_ratio=0.3,
        )
        jump_arrow.shift(0.1 * RIGHT)
        jump.next_to(jump_arrow, RIGHT, buff=ON_LINE)
        with self.narrate("tb_attention") as beat:
            self.play(Indicate(attention, color=style.VERDICT_BAD, scale_factor=1.03), run_time=beat.share(0.3))
            self.play(GrowArrow(jump_arrow), FadeIn(jump), run_time=beat.share(0.3))
            self.play(FadeOut(jump_arrow), FadeOut(jump), FadeIn(verdicts[-1]), run_time=beat.share(0.2))

        cut_y = (self._y(taken[-1]) + self._y(taken[-1] + 1)) / 2
        cut = DashedLine((self.TABLE[0].x, cut_y, 0), (self.CUT_END, cut_y, 0), color=style.HIGHLIGHT, stroke_width=3)
        cut_name = style.zh(f"切在 {facts['cut'].text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        cut_name.next_to(cut, RIGHT, buff=style.GAP_S)
        taken_rows = VGroup(*(rows[i] for i in taken))
        band = SurroundingRectangle(
            taken_rows,
            color=style.VERDICT_GOOD,
            buff=0.06,
            stroke_width=0,
            fill_color=style.VERDICT_GOOD,
            fill_opacity=style.FILL_GHOST,
        )
        with self.narrate("tb_cut") as beat:
            self.play(FadeOut(note), FadeOut(star), Create(cut), FadeIn(cut_name), run_time=beat.share(0.25))
            self.play(FadeIn(band), run_time=beat.share(0.2))
            self.play(
                Indicate(rows[taken[-1]][3], color=style.HIGHLIGHT),
                Indicate(gate[3], color=style.HIGHLIGHT),
                run_time=beat.share(0.3),
            )

        sums = text_row(
            ("选择性一档：一层合计", facts["saved_cell"].text, facts["paid_cell"].text),
            self.TABLE,
            self.SUM_Y,
            color=style.VERDICT_GOOD,
        )
        sum_rule = Line(
            (self.TABLE[0].x, self.SUM_Y + 0.26, 0),
            (self.CUT_END, self.SUM_Y + 0.26, 0),
            color=style.MUTED,
            stroke_width=1.5,
        )
        with self.narrate("tb_sum") as beat:
            self.play(Create(sum_rule), FadeIn(sums[0]), run_time=beat.share(0.2))
            self.play(
                TransformFromCopy(VGroup(*(rows[i][1] for i in taken)), sums[1]),
                TransformFromCopy(VGroup(*(rows[i][2] for i in taken)), sums[2]),
                run_time=beat.share(0.5),
            )

        shares = VGroup(
            text_row(
                ("占比", f"÷ {facts['moe_layer'].text}", f"÷ {facts['step_tflop'].text}"),
                self.TABLE,
                self.SUM_Y - 0.42,
                size=style.SMALL_SIZE,
                color=style.MUTED,
            ),
            text_row(
                ("", facts["selective_memory"].text, facts["selective_compute"].text),
                self.TABLE,
                self.SUM_Y - 0.84,
                color=style.HIGHLIGHT,
            ),
        )
        page_name = style.zh("页面写", size=style.SMALL_SIZE, color=style.MUTED)
        page = style.value(facts["page_selective_memory"], size=style.SMALL_SIZE, color=style.MUTED)
        why = style.zh("：分母少了每层入口", size=style.SMALL_SIZE, color=style.MUTED)
        old_share = VGroup(page_name, page, why).arrange(RIGHT, buff=style.GAP_S)
        old_share.move_to((self.TABLE[0].x, self.SUM_Y - 0.84, 0), aligned_edge=LEFT)
        with self.narrate("tb_share") as beat:
            self.play(FadeIn(shares[0]), run_time=beat.share(0.25))
            self.play(FadeIn(shares[1], scale=1.2), run_time=beat.share(0.25))
            self.play(FadeIn(page_name), FadeIn(page), run_time=beat.share(0.15))
            self.play(Create(_retraction_line(page)), FadeIn(why), run_time=beat.share(0.2))
        self.finish()

    def _y(self, rank: int) -> float:
        """The y of the table's row at `rank`."""
        return self.FIRST_ROW_Y - rank * self.PITCH


class AttentionCrossover(LectureScene):
    """FLOPs per byte saved against S: flat lines for linear layers (k), a rising line for attention; they cross."""

    LEFT = -6.7  # the derivation column's left edge
    PLOT_ORIGIN = np.array((0.0, -2.3, 0))
    PLOT_W, PLOT_H = 5.5, 4.8

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        axis = facts["axis_s"].value
        top = axis["max"]
        axes = sketch_axes((0, top, top / 8), (0, top, top / 8), self.PLOT_W, self.PLOT_H)
        axes.move_to(self.PLOT_ORIGIN, aligned_edge=DOWN + LEFT)
        x_name = style.zh("序列长度 S", size=style.LABEL_SIZE, color=style.MUTED)
        x_name.next_to(axes.c2p(0, 0), DOWN, buff=AT_POINT, aligned_edge=LEFT)
        y_name = style.zh("每省一字节的 FLOPs", size=style.LABEL_SIZE, color=style.MUTED)
        y_name.next_to(axes.y_axis, UP, buff=style.GAP_S).align_to(axes.y_axis, LEFT)
        ticks = VGroup(
            *(
                style.zh(t["text"], size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    axes.c2p(t["s"], 0), DOWN, buff=AT_POINT
                )
                for t in axis["ticks"]
            )
        )
        with self.narrate("ac_axes") as beat:
            self.play(Create(axes), run_time=beat.share(0.3))
            self.play(FadeIn(x_name), FadeIn(y_name), FadeIn(ticks), run_time=beat.share(0.3))

        shapes = self._matmul()
        with self.narrate("ac_shape") as beat:
            self.play(LaggedStart(*(FadeIn(part) for part in shapes), lag_ratio=0.3), run_time=beat.share(0.7))

        fraction, cancels = self._fraction(facts)
        fraction.next_to(shapes, DOWN, buff=style.GAP_XL).align_to(shapes, LEFT)
        with self.narrate("ac_cancel") as beat:
            self.play(FadeIn(fraction[0]), run_time=beat.share(0.25))
            self.play(Create(fraction[1]), FadeIn(fraction[2]), run_time=beat.share(0.3))
            cancels.move_to(fraction)
            self._place_cancels(fraction, cancels)
            self.play(
                LaggedStart(*(Create(c) for c in cancels), lag_ratio=0.3), FadeIn(fraction[3]), run_time=beat.share(0.3)
            )

        example = facts["example"].value
        proof = style.caption_stack(
            f"例：S＝{example['s']}，k＝{example['k']}，n＝{example['n']} → "
            f"{example['flops']} ÷ {example['bytes']} ＝ {example['k']}",
            f"随机 {facts['trials'].text} 组，真乘一遍：比值都是 k",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        proof.next_to(fraction, DOWN, buff=style.GAP_L).align_to(fraction, LEFT)
        with self.narrate("ac_random") as beat:
            self.play(FadeIn(proof[0]), run_time=beat.share(0.35))
            self.play(FadeIn(proof[1]), run_time=beat.share(0.35))

        lines, labels = VGroup(), VGroup()
        for width in facts["widths"].value:
            line = Line(axes.c2p(0, width["k"]), axes.c2p(top, width["k"]), color=style.SERIES_A, stroke_width=3)
            lines.add(line)
            labels.add(
                style.zh(width["text"], size=style.SMALL_SIZE, color=style.SERIES_A).next_to(
                    line, RIGHT, buff=style.GAP_S
                )
            )
        with self.narrate("ac_flat") as beat:
            self.play(LaggedStart(*(Create(line) for line in lines), lag_ratio=0.3), run_time=beat.share(0.5))
            self.play(LaggedStart(*(FadeIn(label) for label in labels), lag_ratio=0.3), run_time=beat.share(0.35))

        slope = facts["v3_slope"].value
        rise = Line(axes.c2p(0, 0), axes.c2p(top / slope, top), color=style.SERIES_B, stroke_width=4)
        rise_name = style.zh("attention（V3）", size=style.LABEL_SIZE, color=style.SERIES_B)
        rise_name.next_to(rise.point_from_proportion(0.4), DOWN + RIGHT, buff=style.GAP_S)
        attention = style.caption_stack(
            "attention：运算 ∝ S²，产出 ∝ S", "每字节的代价随 S 直线上升", size=style.LABEL_SIZE
        )
        attention.move_to((self.LEFT, 1.9, 0), aligned_edge=LEFT)
        with self.narrate("ac_attention") as beat:
            self.play(FadeOut(VGroup(shapes, fraction, cancels, proof)), run_time=beat.share(0.2))
            self.play(FadeIn(attention[0]), run_time=beat.share(0.2))
            self.play(Create(rise), FadeIn(attention[1]), run_time=beat.share(0.4))
            self.play(FadeIn(rise_name), run_time=beat.share(0.1))

        two = facts["per_number"].text
        formula = style.zh(f"斜率 ＝ (d_qk ＋ d_v) ÷ ({two} × d_v)", size=style.LABEL_SIZE)
        formula.next_to(attention, DOWN, buff=style.GAP_L).align_to(attention, LEFT)
        causal = style.zh("（causal 只算一半的分数）", size=style.SMALL_SIZE, color=style.MUTED)
        causal.next_to(formula, DOWN, buff=style.GAP_S).align_to(formula, LEFT)
        models = (
            VGroup(
                style.zh(
                    f"V3：({facts['d_qk'].text} ＋ {facts['d_v'].text}) ÷ ({two} × {facts['d_v'].text}) ＝ "
                    f"{facts['v3_slope'].text}",
                    size=style.LABEL_SIZE,
                    color=style.SERIES_B,
                ),
                style.zh(
                    f"GPT-3：({facts['gpt3_d'].text} ＋ {facts['gpt3_d'].text}) ÷ ({two} × {facts['gpt3_d'].text}) ＝ "
                    f"{facts['gpt3_slope'].text}",
                    size=style.LABEL_SIZE,
                    color=style.MUTED,
                ),
            )
            .arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
            .next_to(causal, DOWN, buff=style.GAP_L)
        )
        models.align_to(formula, LEFT)
        with self.narrate("ac_slope") as beat:
            self.play(FadeIn(formula), FadeIn(causal), run_time=beat.share(0.3))
            self.play(FadeIn(models[0]), Indicate(rise, color=style.HIGHLIGHT), run_time=beat.share(0.3))
            self.play(FadeIn(models[1]), run_time=beat.share(0.25))

        crossings = facts["crossings"].value
        main = next(c for c in crossings if c["k"] == facts["hidden"].value)
        dot = Dot(axes.c2p(main["s"], main["k"]), radius=0.09, color=style.HIGHLIGHT)
        drop = DashedLine(axes.c2p(main["s"], main["k"]), axes.c2p(main["s"], 0), color=style.HIGHLIGHT, stroke_width=2)
        where = style.zh(f"S ≈ {facts['crossover'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        where.next_to(dot, DOWN + RIGHT, buff=style.GAP_S)
        with self.narrate("ac_cross") as beat:
            self.play(
                Indicate(lines[-1], color=style.HIGHLIGHT),
                Indicate(labels[-1], color=style.HIGHLIGHT),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(dot, scale=1.5), Create(drop), FadeIn(where), run_time=beat.share(0.35))

        others = [c for c in crossings if c is not main]
        other_dots = VGroup(*(Dot(axes.c2p(c["s"], c["k"]), radius=0.07, color=style.HIGHLIGHT) for c in others))
        other_text = style.zh(
            "其他交点：" + "、".join(c["text"] for c in others), size=style.LABEL_SIZE, color=style.HIGHLIGHT
        )
        other_text.next_to(models, DOWN, buff=style.GAP_L).align_to(models, LEFT)
        with self.narrate("ac_others") as beat:
            self.play(
                LaggedStart(*(FadeIn(d, scale=1.5) for d in other_dots), lag_ratio=0.3),
                FadeIn(other_text),
                run_time=beat.share(0.6),
            )

        caveat = style.caption_stack(
            "交点不是工程阈值：取决于 causal 折半、", "头维度，和拿哪条线对照", size=style.LABEL_SIZE
        )
        caveat.move_to((self.LEFT, 1.9, 0), aligned_edge=LEFT)
        shape = style.zh("能带走的是形状：一平一斜，必然相交", size=style.BODY_SIZE, color=style.HIGHLIGHT)
        shape.next_to(caveat, DOWN, buff=style.GAP_L).align_to(caveat, LEFT)
        with self.narrate("ac_caveat") as beat:
            self.play(FadeOut(VGroup(attention, formula, causal, models, other_text)), run_time=beat.share(0.2))
            self.play(FadeIn(caveat), run_time=beat.share(0.3))
            self.play(FadeIn(shape), run_time=beat.share(0.3))
        self.finish()

    def _matmul(self) -> VGroup:
        """[S,k] × [k,n] → [S,n] as blocks to scale of nothing (示意): activations in, weights, activations out."""
        a = Rectangle(
            width=0.6, height=1.3, stroke_color=style.FORWARD, fill_color=style.FORWARD, fill_opacity=style.FILL_FAINT
        )
        b = Rectangle(
            width=1.3, height=0.6, stroke_color=style.MUTED, fill_color=style.MUTED, fill_opacity=style.FILL_FAINT
        )
        out = Rectangle(
            width=1.3, height=1.3, stroke_color=style.FORWARD, fill_color=style.FORWARD, fill_opacity=style.FILL_SOFT
        )
        times, gives = style.zh("×", size=style.BODY_SIZE), style.zh("→", size=style.BODY_SIZE)
        row = VGroup(a, times, b, gives, out).arrange(RIGHT, buff=0.25)
        names = VGroup(
            *(
                style.zh(name, size=style.LABEL_SIZE).next_to(block, DOWN, buff=style.GAP_S)
                for name, block in (("S × k", a), ("k × n", b), ("S × n", out))
            )
        )
        names[1].align_to(names[0], DOWN)
        names[2].align_to(names[0], DOWN)
        group = VGroup(row, names)
        return group.move_to((self.LEFT, 1.7, 0), aligned_edge=LEFT)

    def _fraction(self, facts: FigureFacts) -> tuple[VGroup, VGroup]:
        """(2·S·k·n) over (S·n·2), the factors as separate pieces so the shared ones can be struck."""
        mac, per = facts["mac"].text, facts["per_number"].text
        top = VGroup(*(style.zh(t, size=style.BODY_SIZE) for t in (mac, "·", "S", "·", "k", "·", "n")))
        top.arrange(RIGHT, buff=GLYPH_GAP)
        bottom = VGroup(*(style.zh(t, size=style.BODY_SIZE) for t in ("S", "·", "n", "·", per)))
        bottom.arrange(RIGHT, buff=GLYPH_GAP)
        fraction_bar = Line(LEFT, RIGHT, color=style.TEXT, stroke_width=2).set_width(top.width + 0.2)
        VGroup(top, fraction_bar, bottom).arrange(DOWN, buff=0.12)
        result = style.zh("＝ k", size=style.BODY_SIZE, color=style.HIGHLIGHT).next_to(fraction_bar, RIGHT, buff=0.25)
        names = VGroup(
            style.zh("运算", size=style.SMALL_SIZE, color=style.MUTED).next_to(top, LEFT, buff=style.GAP_ML),
            style.zh("字节", size=style.SMALL_SIZE, color=style.MUTED).next_to(bottom, LEFT, buff=style.GAP_ML),
        )
        names.align_to(names[0], RIGHT)
        fraction = VGroup(VGroup(top, names[0]), fraction_bar, VGroup(bottom, names[1]), result)
        cancels = VGroup(
            *(Line(DOWN + LEFT, UP + RIGHT, color=style.VERDICT_BAD, stroke_width=3).set_height(0.32) for _ in range(6))
        )
        return fraction, cancels

    @staticmethod
    def _place_cancels(fraction: VGroup, cancels: VGroup) -> None:
        """Lay each cancelling stroke over the factor it strikes, above the line and below."""
        top, bottom = fraction[0][0], fraction[2][0]
        for line, glyph in zip(cancels, (top[0], top[2], top[6], bottom[4], bottom[0], bottom[2])):
            line.move_to(glyph)


class SeqLenFlip(LectureScene):
    """The same criterion on two models, each with its own constants: GPT-3 at 2K, V3 at 128K."""

    PANELS = {"gpt3": np.array((-6.3, -1.8, 0)), "v3": np.array((0.9, -1.8, 0))}  # axes origins
    PANEL_W, PANEL_H = 5.0, 3.6
    HEADER_Y = 2.5
    NOTE_Y = style.CAPTION_TOP + style.GAP_ML  # one short line under the panels, just above the caption band
    # Where each verdict sits, as a share of its panel's axes, and which corner sits there: in the empty
    # corner, GPT-3's under its attention line, V3's above it (its operating point's drop line runs low right).
    VERDICT_AT = {"gpt3": ((1.0, 0.04), RIGHT + DOWN), "v3": ((0.04, 0.96), LEFT + UP)}
    LINE_NAME_AT = {"gpt3": 0.25, "v3": 0.55}  # the d_model line's name, centred at this share of S: clear of
    # the attention line (left on GPT-3's panel) and of V3's operating point
    COST_SIDE = {"gpt3": DOWN + RIGHT, "v3": LEFT}  # where the point's cost label goes, clear of its lines
    VERDICTS = SelectiveRecomputeTable.VERDICT_COLOURS

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        paper = style.caption_stack(
            f"Korthikanti 等，{facts['year'].text}：选择性重算", "挑出来重算的，正是 attention", size=style.BODY_SIZE
        )
        paper.move_to(0.3 * UP)
        with self.narrate("fl_paper") as beat:
            self.play(FadeIn(paper[0]), run_time=beat.share(0.35))
            self.play(FadeIn(paper[1]), run_time=beat.share(0.35))

        panels = {}
        for key, head in (
            ("gpt3", f"GPT-3 · 序列 {facts['gpt3_seq_k'].text}"),
            ("v3", f"DeepSeek-V3 · 序列 {facts['v3_seq_k'].text}"),
        ):
            panels[key] = self._model_panel(key, head, facts)
        self.panels = panels
        gpt3 = panels["gpt3"]
        with self.narrate("fl_gpt3") as beat:
            self.play(FadeOut(paper), run_time=beat.share(0.15))
            self.play(FadeIn(gpt3["head"]), Create(gpt3["axes"]), FadeIn(gpt3["names"]), run_time=beat.share(0.25))
            self.play(Create(gpt3["rise"]), FadeIn(gpt3["rise_name"]), run_time=beat.share(0.25))
            self.play(Create(gpt3["line"]), FadeIn(gpt3["line_name"]), run_time=beat.share(0.25))
        self._point("gpt3", "fl_gpt3_point", ("在交点左边：", "attention 最划算"), style.VERDICT_GOOD)
        v3 = panels["v3"]
        with self.narrate("fl_v3") as beat:
            self.play(FadeIn(v3["head"]), Create(v3["axes"]), FadeIn(v3["names"]), run_time=beat.share(0.2))
            self.play(Create(v3["rise"]), FadeIn(v3["rise_name"]), run_time=beat.share(0.25))
            self.play(Create(v3["line"]), FadeIn(v3["line_name"]), run_time=beat.share(0.25))
            self.play(FadeIn(v3["cross"]), run_time=beat.share(0.15))
        self._point("v3", "fl_v3_point", ("在交点右边：", "attention 最不该重算"), style.VERDICT_BAD)

        with self.narrate("fl_both") as beat:
            self.play(
                *(Indicate(panels[k]["rise_name"], color=style.HIGHLIGHT) for k in panels), run_time=beat.share(0.4)
            )
            self.play(
                *(Indicate(panels[k]["line_name"], color=style.HIGHLIGHT) for k in panels), run_time=beat.share(0.4)
            )

        axes = gpt3["axes"]
        x = facts["gpt3_seq"].value
        wrong_slope = facts["v3_slope"].value
        y_max = facts["gpt3_panel"].value["y_max"]
        ghost = DashedLine(axes.c2p(0, 0), axes.c2p(y_max / wrong_slope, y_max), color=style.MUTED, stroke_width=2)
        ghost_dot = Dot(axes.c2p(x, wrong_slope * x), radius=0.06, color=style.MUTED)
        # The page's retracted label, under the panel (the plot's corner by the dot has no room for it).
        wrong_name = style.zh("页面早先套了 V3 的斜率：", size=style.LABEL_SIZE, color=style.MUTED)
        wrong = style.value(facts["retracted"], size=style.LABEL_SIZE, color=style.MUTED)
        right = style.zh(f"→ {facts['gpt3_cost'].text}", size=style.LABEL_SIZE)
        VGroup(wrong_name, wrong, right).arrange(RIGHT, buff=style.GAP_SM).move_to(
            (axes.get_left()[0], self.NOTE_Y, 0), aligned_edge=LEFT
        )
        with self.narrate("fl_retract") as beat:
            self.play(Create(ghost), FadeIn(ghost_dot), FadeIn(wrong), FadeIn(wrong_name), run_time=beat.share(0.35))
            strike = _retraction_line(wrong)
            self.play(
                Create(strike), FadeIn(right), Indicate(gpt3["cost"], color=style.HIGHLIGHT), run_time=beat.share(0.3)
            )
            self.play(FadeOut(VGroup(ghost, ghost_dot, wrong, wrong_name, strike, right)), run_time=beat.share(0.2))

        share = style.zh(
            f"论文的 {facts['paper_share'].text} 未按 causal 折半；本课口径：GPT-3 attention "
            f"占一层前向 {facts['gpt3_share'].text}",
            size=style.LABEL_SIZE,
            color=style.MUTED,
        )
        share.move_to((0, self.NOTE_Y, 0))
        with self.narrate("fl_share") as beat:
            self.play(FadeIn(share), run_time=beat.share(0.4))

        default = style.code('recompute_modules = ["core_attn"]', size=style.BODY_SIZE, color=style.HIGHLIGHT)
        flag = style.zh("Megatron-LM 选择性重算的默认值", size=style.LABEL_SIZE, color=style.MUTED)
        box = VGroup(flag, default).arrange(DOWN, buff=style.GAP_M).move_to((0, 1.7, 0))
        fossil = style.zh(
            f"{facts['gpt3_seq_k'].text} 年代的最优解，留在了 {facts['v3_seq_k'].text} 的默认值里", size=style.BODY_SIZE
        ).next_to(box, DOWN, buff=style.GAP_L)
        everything = VGroup(*(m for p in panels.values() for m in p.values() if m is not None), share)
        with self.narrate("fl_fossil") as beat:
            self.play(FadeOut(everything), run_time=beat.share(0.25))
            self.play(FadeIn(flag), Write(default), run_time=beat.share(0.35))
            self.play(FadeIn(fossil), run_time=beat.share(0.25))

        columns = (Column(-5.2, LEFT), Column(-1.4, LEFT), Column(3.2, LEFT))
        rows = VGroup()
        for i, module in enumerate(facts["modules"].value):
            y = -0.2 - 0.55 * i
            colour = self.VERDICTS[module["verdict"]]
            rows.add(
                grid_row(
                    [
                        style.code(
                            module["module"],
                            size=style.LABEL_SIZE,
                            color=style.HIGHLIGHT if module["default"] else style.TEXT,
                        ),
                        style.zh(f"→ {module['tensors']}", size=style.LABEL_SIZE),
                        style.zh(module["verdict"], size=style.LABEL_SIZE, color=colour),
                    ],
                    columns,
                    y,
                )
            )
        with self.narrate("fl_rest") as beat:
            self.play(FadeOut(fossil), FadeIn(rows[0]), run_time=beat.share(0.25))
            self.play(
                LaggedStart(*(FadeIn(r, shift=0.2 * RIGHT) for r in rows[1:]), lag_ratio=0.4), run_time=beat.share(0.55)
            )
        self.finish()

    def _model_panel(self, key: str, head: str, facts: FigureFacts) -> dict[str, Mobject | None]:
        """One model's plot of FLOPs per byte against S: its attention and d_model lines, its point and crossing."""
        info = facts[f"{key}_panel"].value
        x_max, y_max = info["x_max"], info["y_max"]
        axes = sketch_axes((0, x_max, x_max / 8), (0, y_max, y_max / 8), self.PANEL_W, self.PANEL_H)
        axes.move_to(self.PANELS[key], aligned_edge=DOWN + LEFT)
        names = VGroup(
            style.zh("S", size=style.LABEL_SIZE, color=style.MUTED).next_to(axes.x_axis, RIGHT, buff=style.GAP_S),
            style.zh("每字节 FLOPs", size=style.SMALL_SIZE, color=style.MUTED)
            .next_to(axes.y_axis, UP, buff=style.GAP_S)
            .align_to(axes.y_axis, LEFT),
        )
        slope = facts[f"{key}_slope"]
        end_x = min(x_max, y_max / slope.value)
        rise = Line(axes.c2p(0, 0), axes.c2p(end_x, slope.value * end_x), color=style.SERIES_B, stroke_width=4)
        rise_name = style.zh(f"attention 斜率 {slope.text}", size=style.SMALL_SIZE, color=style.SERIES_B)
        rise_name.next_to(rise.point_from_proportion(0.45), DOWN + RIGHT, buff=style.GAP_S)
        width = facts[f"{key}_width"]
        line = Line(axes.c2p(0, width.value), axes.c2p(x_max, width.value), color=style.SERIES_A, stroke_width=3)
        line_name = style.zh(f"d_model {width.text}", size=style.SMALL_SIZE, color=style.SERIES_A)
        line_name.next_to(axes.c2p(self.LINE_NAME_AT[key] * x_max, width.value), UP, buff=ON_LINE)
        crossing = facts[f"{key}_crossing"]
        cross = VGroup(
            Dot(axes.c2p(crossing.value, width.value), radius=0.07, color=style.HIGHLIGHT),
            style.value(crossing, size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(
                axes.c2p(crossing.value, 0), DOWN, buff=AT_POINT
            ),
        )
        head_text = style.zh(head, size=style.BODY_SIZE).move_to((axes.get_center()[0], self.HEADER_Y, 0))
        seq, cost = facts[f"{key}_seq"], facts[f"{key}_cost"]
        drop = DashedLine(axes.c2p(seq.value, 0), axes.c2p(seq.value, cost.value), color=style.TEXT, stroke_width=2)
        point = Dot(axes.c2p(seq.value, cost.value), radius=0.09, color=style.TEXT)
        cost_text = style.value(cost, size=style.LABEL_SIZE).next_to(point, self.COST_SIDE[key], buff=AT_POINT)
        seq_text = style.value(seq, size=style.SMALL_SIZE).next_to(axes.c2p(seq.value, 0), DOWN, buff=AT_POINT)
        return {
            "axes": axes,
            "names": names,
            "rise": rise,
            "rise_name": rise_name,
            "line": line,
            "line_name": line_name,
            "cross": cross,
            "head": head_text,
            "drop": drop,
            "point": point,
            "cost": cost_text,
            "seq": seq_text,
            "verdict": None,
        }

    def _point(self, key: str, cue: str, verdict_text: tuple[str, str], colour: str) -> None:
        """The model's own operating point on its attention line, and which side of its crossing it falls."""
        plot = self.panels[key]
        (share_x, share_y), corner = self.VERDICT_AT[key]
        verdict = style.caption_stack(*verdict_text, size=style.LABEL_SIZE, color=colour)
        for line in verdict:  # both lines flush with the corner's side
            line.align_to(verdict, RIGHT if corner[0] > 0 else LEFT)
        axes = plot["axes"]
        verdict.move_to(axes.c2p(share_x * axes.x_range[1], share_y * axes.y_range[1]), aligned_edge=corner)
        plot["verdict"] = verdict
        with self.narrate(cue) as beat:
            self.play(Create(plot["drop"]), FadeIn(plot["seq"]), run_time=beat.share(0.25))
            self.play(FadeIn(plot["point"], scale=1.5), FadeIn(plot["cost"]), run_time=beat.share(0.2))
            if key == "gpt3":
                self.play(FadeIn(plot["cross"]), run_time=beat.share(0.15))
            self.play(FadeIn(verdict), run_time=beat.share(0.2))
