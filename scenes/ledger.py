"""The ledger chapter, 每参数 16 字节：训练一步的显存账: staging only.

Every number comes from tools.chapters.ledger.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    AnimationGroup,
    Arrow,
    Brace,
    BraceBetweenPoints,
    Create,
    Cross,
    CurvedArrow,
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowArrow,
    GrowFromCenter,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    Mobject,
    NumberLine,
    ParametricFunction,
    Polygon,
    Rectangle,
    ReplacementTransform,
    Square,
    SurroundingRectangle,
    Transform,
    TransformFromCopy,
    ValueTracker,
    VGroup,
    VMobject,
    Write,
    always_redraw,
    linear,
    np,
)

from scenes import style
from scenes.base import Beat, LectureScene
from scenes.widgets import Column, LedgerRow, bar, block, grid_row, slivers, text_row, verdict
from tools.course.catalogue import FigureFacts
from tools.course.facts import Fact

# -- the ledger row and its variants: ledger_16_bytes to checkpoint_size --------------------


class Ledger16Bytes(LectureScene):
    """Five cells per parameter, 2 against 12, and the state cells each optimizer keeps."""

    ROW = 0.9 * UP  # the big ledger row
    # The band of optimizers: year, name, the state cells it keeps, a note; one row each.
    BAND = (Column(-6.0, ORIGIN), Column(-4.4, ORIGIN), Column(-3.0, LEFT), Column(-0.3, LEFT))
    BAND_TOP, BAND_PITCH = 2.45, 0.68
    BAND_AXIS_X = -6.65  # the time line down the left of the band

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        cells = facts["ledger"].value
        row = LedgerRow(cells, unit=0.7, height=1.0).move_to(self.ROW)
        tags = VGroup(
            *(
                style.zh(c["precision"], size=style.SMALL_SIZE, color=style.PRECISION[c["precision"]]).next_to(
                    row.cell(c["key"]), UP, buff=style.GAP_S
                )
                for c in cells
            )
        )

        with self.narrate("l16_intro") as beat:
            frame = Rectangle(width=row.width, height=row.height, color=style.MUTED).move_to(row)
            frame.set_stroke(style.MUTED, 2, opacity=0.6)
            self.play(Create(frame), run_time=beat.share(0.5))
        for cue_id, keys in (
            ("l16_weight", ["weight"]),
            ("l16_grad", ["grad"]),
            ("l16_moments", ["m", "v"]),
            ("l16_master", ["master"]),
        ):
            with self.narrate(cue_id) as beat:
                self.play(
                    *(FadeIn(row.cell(k), shift=0.4 * DOWN) for k in keys),
                    *(FadeIn(tags[row.keys.index(k)]) for k in keys),
                    run_time=beat.share(0.35),
                )
                self.play(
                    *(Indicate(row.cell(k), color=style.HIGHLIGHT, scale_factor=1.05) for k in keys),
                    run_time=beat.share(0.3),
                )
        self.remove(frame)

        with self.narrate("l16_sum") as beat:
            formula = style.zh(facts["sum"].text, size=style.BODY_SIZE)
            unit = style.zh("B", size=style.BODY_SIZE)
            total = VGroup(formula, unit).arrange(RIGHT, buff=style.GAP_S).next_to(row, DOWN, buff=style.GAP_L)
            glyphs = [formula[i] for i in range(0, 2 * len(cells), 2)]  # 2＋2＋…: a term every other glyph
            self.play(
                *(ReplacementTransform(row.cell(c["key"])[2].copy(), g) for c, g in zip(cells, glyphs)),
                run_time=beat.share(0.45),
            )
            rest = VGroup(*(formula[i] for i in range(len(formula)) if formula[i] not in glyphs), unit)
            self.play(FadeIn(rest), run_time=beat.share(0.25))

        with self.narrate("l16_ratio") as beat:
            side = VGroup(row.cell("m"), row.cell("v"), row.cell("master"))
            optimizer = Brace(side, DOWN, buff=style.GAP_S, color=style.FP32)
            optimizer_label = style.zh(f"优化器 {facts['optimizer'].text}", size=style.BODY_SIZE, color=style.FP32)
            optimizer_label.next_to(optimizer, DOWN, buff=style.GAP_S)
            model_label = style.zh(f"权重 {facts['weight'].text}", size=style.BODY_SIZE, color=style.BF16)
            model_brace = Brace(row.cell("weight"), DOWN, buff=style.GAP_S, color=style.BF16)
            model_label.next_to(model_brace, DOWN, buff=style.GAP_S)
            self.play(FadeOut(total), run_time=beat.share(0.1))
            self.play(GrowFromCenter(model_brace), FadeIn(model_label), run_time=beat.share(0.2))
            self.play(
                GrowFromCenter(optimizer),
                FadeIn(optimizer_label),
                row.cell("grad").animate.set_opacity(style.FILL_FAINT),
                run_time=beat.share(0.25),
            )
            box = SurroundingRectangle(side, color=style.FP32, buff=style.GAP_S, stroke_width=5)
            self.play(Create(box), run_time=beat.share(0.2))

        with self.narrate("l16_caveat") as beat:
            caveat = style.zh("ZeRO 论文的经典口径：一种配置，不是定律", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            style.above_captions(caveat)
            self.play(FadeIn(caveat, shift=0.2 * UP), run_time=beat.share(0.3))

        # The band: the row moves up, compact; each optimizer takes copies of the cells it keeps.
        compact = LedgerRow(cells, unit=0.42, height=0.7).to_corner(UP + RIGHT, buff=style.EDGE)
        band = facts["band"].value
        entries = VGroup()
        state_rows = []
        for index, entry in enumerate(band):
            year_text = facts[f"year_{entry['id']}"].text if entry["year"] else ""
            year = style.zh(year_text, size=style.LABEL_SIZE, color=style.MUTED) if year_text else None
            if entry["state"]:
                state = LedgerRow(entry["state"], unit=0.32, height=0.6)
            else:
                state = style.zh("无状态", size=style.SMALL_SIZE, color=style.MUTED)
            entries.add(
                grid_row(
                    [
                        year,
                        style.zh(entry["name"], size=style.LABEL_SIZE),
                        state,
                        style.zh(entry["note"], size=style.SMALL_SIZE, color=style.MUTED),
                    ],
                    self.BAND,
                    self.BAND_TOP - self.BAND_PITCH * index,
                )
            )
            state_rows.append(state)
        axis = Line(
            (self.BAND_AXIS_X, entries[1].get_y() + 0.3, 0),
            (self.BAND_AXIS_X, entries[-1].get_y() - 0.3, 0),
            color=style.MUTED,
            stroke_width=2,
        )

        groups = {"l16_band_early": [0, 1], "l16_band_adaptive": [2, 3], "l16_band_adam": [4, 5], "l16_band_muon": [6]}
        for cue_id, indices in groups.items():
            with self.narrate(cue_id) as beat:
                if cue_id == "l16_band_early":
                    self.play(
                        FadeOut(VGroup(model_brace, model_label, optimizer, optimizer_label, box, caveat, tags)),
                        ReplacementTransform(row, compact),
                        run_time=beat.share(0.2),
                    )
                    self.play(Create(axis), run_time=beat.share(0.1))
                for i in indices:
                    entry, state = band[i], state_rows[i]
                    self.play(FadeIn(entries[i][:2], shift=0.2 * RIGHT), run_time=beat.share(0.12))
                    if entry["state"]:
                        self.play(
                            *(TransformFromCopy(compact.cell(c["key"]), state.cell(c["key"])) for c in entry["state"]),
                            run_time=beat.share(0.2),
                        )
                    else:
                        self.play(FadeIn(state), run_time=beat.share(0.1))
                    self.play(FadeIn(entries[i][3]), run_time=beat.share(0.08))

        with self.narrate("l16_no_curves") as beat:
            rule = style.zh("只比结构，不比收敛：没有实测，不画曲线", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            rule.next_to(entries, DOWN, buff=style.GAP_S).align_to(entries, LEFT)
            self.play(FadeIn(rule, shift=0.2 * UP), run_time=beat.share(0.3))
        self.finish()


class MixedPrecisionSame16(LectureScene):
    """Pure fp32 against mixed precision: the 2 + 2 saved is eaten by the master copy."""

    UNIT = 0.6
    LEFT_EDGE = -4.4  # both rows start here
    PURE_Y, MIXED_Y = 1.45, -0.8
    MYTH = 2.55 * UP  # the myth, and the equation that replaces it
    # The closing point, under the rows and just above the caption band.
    POINT = np.array((-0.8, style.CAPTION_TOP + style.GAP_L, 0))

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        with self.narrate("mp_myth") as beat:
            myth = style.zh("「用了混合精度，显存省一半？」", size=style.BODY_SIZE, color=style.HIGHLIGHT)
            myth.move_to(self.MYTH)
            self.play(FadeIn(myth, shift=0.2 * DOWN), run_time=beat.share(0.4))

        pure = self._ledger_row_at(facts["pure"], self.PURE_Y)
        pure_name = style.zh("纯 fp32", size=style.LABEL_SIZE).next_to(pure, LEFT, buff=style.EDGE)
        pure_sum = style.value(facts["pure_sum"], size=style.LABEL_SIZE).next_to(pure, DOWN, buff=style.GAP_M)
        line = DashedLine(
            pure.get_corner(UP + RIGHT) + 0.35 * UP,
            pure.get_corner(DOWN + RIGHT) + 2.9 * DOWN,
            color=style.MUTED,
            stroke_width=2,
        )
        with self.narrate("mp_pure") as beat:
            self.play(FadeIn(pure_name), run_time=beat.share(0.1))
            self.play(
                LaggedStart(*(FadeIn(c, shift=0.3 * DOWN) for c in pure), lag_ratio=0.3), run_time=beat.share(0.4)
            )
            self.play(Write(pure_sum), Create(line), run_time=beat.share(0.3))

        mixed = self._ledger_row_at(facts["mixed"], self.MIXED_Y)
        mixed_name = style.zh("混合精度", size=style.LABEL_SIZE).next_to(mixed, LEFT, buff=style.EDGE)
        mixed_name.align_to(pure_name, RIGHT)
        shrunk = VGroup(*(mixed.cell(k).copy() for k in ("weight", "grad", "m", "v")))
        with self.narrate("mp_shrink") as beat:
            start = pure.copy()
            self.play(
                FadeIn(mixed_name), start.animate.shift((mixed.get_y() - pure.get_y()) * UP), run_time=beat.share(0.3)
            )
            self.play(ReplacementTransform(start, shrunk), run_time=beat.share(0.35))
            tags = VGroup(
                *(
                    style.zh(f"省 {facts[name].text}", size=style.SMALL_SIZE, color=style.BF16).next_to(
                        shrunk[i], UP, buff=style.GAP_S
                    )
                    for i, name in ((0, "weight_saved"), (1, "grad_saved"))
                )
            )
            gap = Rectangle(
                width=mixed.cell("master").width, height=mixed.height, color=style.HIGHLIGHT, stroke_width=2
            ).move_to(mixed.cell("master"))
            gap.set_fill(style.HIGHLIGHT, opacity=style.FILL_GHOST)
            self.play(FadeIn(tags), Create(gap), run_time=beat.share(0.25))

        with self.narrate("mp_master") as beat:
            self.play(FadeIn(mixed.cell("master"), shift=1.5 * LEFT), run_time=beat.share(0.4))
            self.play(
                FadeOut(gap),
                Indicate(mixed.cell("master"), color=style.HIGHLIGHT, scale_factor=1.05),
                run_time=beat.share(0.35),
            )
        self.remove(shrunk)
        self.add(mixed)

        mixed_sum = style.value(facts["mixed_sum"], size=style.LABEL_SIZE).next_to(mixed, DOWN, buff=style.GAP_M)
        with self.narrate("mp_equal") as beat:
            self.play(Write(mixed_sum), FadeOut(tags), run_time=beat.share(0.35))
            equal = style.zh(
                f"{facts['pure'].text} ＝ {facts['mixed'].text}", size=style.BODY_SIZE, color=style.HIGHLIGHT
            ).move_to(self.MYTH)
            self.play(
                ReplacementTransform(myth, equal), Indicate(line, color=style.HIGHLIGHT), run_time=beat.share(0.4)
            )

        accumulate = self._ledger_row_at(facts["accumulate"], self.MIXED_Y)
        accumulate_sum = style.value(facts["accumulate_sum"], size=style.LABEL_SIZE)
        accumulate_sum.next_to(accumulate, DOWN, buff=style.GAP_M)
        accumulate_sum.align_to(mixed_sum, LEFT)
        with self.narrate("mp_accum") as beat:
            tag = style.zh("fp32 累加器", size=style.SMALL_SIZE, color=style.FP32)
            tag.next_to(mixed.cell("grad"), UP, buff=style.GAP_S)
            self.play(FadeIn(tag), Indicate(mixed.cell("grad"), color=style.FP32), run_time=beat.share(0.4))
            self.play(
                ReplacementTransform(mixed, accumulate),
                tag.animate.next_to(accumulate.cell("grad"), UP, buff=style.GAP_S),
                ReplacementTransform(mixed_sum, accumulate_sum),
                run_time=beat.share(0.35),
            )
            edge = (line.get_x(), accumulate.get_top()[1], 0)
            over = BraceBetweenPoints(
                edge, accumulate.get_corner(UP + RIGHT), UP, buff=style.GAP_XS, color=style.VERDICT_BAD
            )
            over_label = style.zh("超出", size=style.SMALL_SIZE, color=style.VERDICT_BAD).next_to(
                over, UP, buff=style.GAP_XS
            )
            short = DashedLine(line.get_start(), edge + 0.05 * UP, color=style.MUTED, stroke_width=2)
            self.play(
                ReplacementTransform(line, short),
                GrowFromCenter(over),
                FadeIn(over_label),
                Indicate(accumulate_sum, color=style.VERDICT_BAD),
                run_time=beat.share(0.2),
            )

        with self.narrate("mp_point") as beat:
            point = style.caption_stack(
                "混合精度换来的：算得更快，激活与通信更小", "都不在常驻这本账上", size=style.LABEL_SIZE
            )
            point[1].set_color(style.HIGHLIGHT)
            point.move_to(self.POINT)
            self.play(FadeIn(point[0], shift=0.2 * UP), run_time=beat.share(0.3))
            self.play(FadeIn(point[1], shift=0.2 * UP), run_time=beat.share(0.25))
        self.finish()

    def _ledger_row_at(self, fact: Fact, y: float) -> LedgerRow:
        """A ledger row to the figure's scale, its left edge on the rows' common edge, at height y."""
        row = LedgerRow(fact.value, unit=self.UNIT, height=0.9)
        return row.move_to((self.LEFT_EDGE, y, 0), aligned_edge=LEFT)


class WhyFp32Bf16(LectureScene):
    """Bit layouts, real bf16 arithmetic at 1.0, and the line the criterion draws through the ledger."""

    BIT = 0.26
    BITS_LEFT = -3.6
    BIT_ROWS = {"fp32": 2.35, "bf16": 1.25, "fp16": 0.15}  # the y of each format's row of bits
    RANGE_CENTRE = np.array((1.35, -1.3, 0))  # the log₂ axis of smallest normal numbers (its notes above the band)
    BF16_ONE = np.array((-4.3, 0.9, 0))  # where 1.0 sits on the bf16 number line
    FP32_ONE = np.array((-4.3, -2.1, 0))  # and on the fp32 one, under it
    PROGRESS_CENTRE = np.array((0.8, -0.6, 0))  # the bar counting the 1,000 additions
    LEDGER = 1.3 * UP  # the ledger row of the closing part

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        layouts = {f["name"]: f for f in facts["layouts"].value}
        rows = {name: self._bits(layouts[name], y) for name, y in self.BIT_ROWS.items()}
        names = {
            name: style.zh(name, size=style.BODY_SIZE, color=style.PRECISION[name]).next_to(
                rows[name], LEFT, buff=style.EDGE
            )
            for name in rows
        }
        labels = {name: self._bit_labels(rows[name], layouts[name], name) for name in rows}

        with self.narrate("fb_fp32") as beat:
            self.play(
                FadeIn(names["fp32"]),
                LaggedStart(*(FadeIn(b) for b in rows["fp32"]), lag_ratio=0.05),
                run_time=beat.share(0.45),
            )
            sign = style.zh("符号", size=style.SMALL_SIZE, color=style.MUTED)
            sign.next_to(rows["fp32"][0], UP, buff=style.GAP_S)
            self.play(FadeIn(labels["fp32"]), FadeIn(sign), run_time=beat.share(0.25))

        with self.narrate("fb_bf16") as beat:
            high = Brace(rows["fp32"][:16], UP, buff=style.GAP_XS, color=style.BF16)
            self.play(GrowFromCenter(high), FadeOut(sign), run_time=beat.share(0.2))
            self.play(
                FadeIn(names["bf16"]), TransformFromCopy(rows["fp32"][:16], rows["bf16"]), run_time=beat.share(0.4)
            )
            self.play(FadeIn(labels["bf16"]), FadeOut(high), run_time=beat.share(0.2))

        with self.narrate("fb_fp16") as beat:
            self.play(FadeIn(names["fp16"]), TransformFromCopy(rows["bf16"], rows["fp16"]), run_time=beat.share(0.45))
            self.play(FadeIn(labels["fp16"]), run_time=beat.share(0.25))

        with self.narrate("fb_range") as beat:
            axis, marks = self._range_line()
            self.play(Create(axis), run_time=beat.share(0.15))
            self.play(FadeIn(marks[0]), run_time=beat.share(0.12))
            self.play(TransformFromCopy(marks[0][0], marks[1][0]), FadeIn(marks[1][1]), run_time=beat.share(0.15))
            gap = BraceBetweenPoints(marks[0][0].get_center(), marks[1][0].get_center(), DOWN, color=style.VERDICT_BAD)
            gap_label = style.zh(
                f"少 {facts['binades_lost'].text} 个二进制数量级", size=style.LABEL_SIZE, color=style.VERDICT_BAD
            ).next_to(gap, DOWN, buff=style.GAP_S)
            self.play(GrowFromCenter(gap), FadeIn(gap_label), run_time=beat.share(0.2))
            lesson = style.zh("fp16 缺的是范围，不是位数", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            lesson.next_to(gap_label, DOWN, buff=style.GAP_SM)
            self.play(FadeIn(lesson, shift=0.2 * LEFT), run_time=beat.share(0.15))
        layout_part = VGroup(*rows.values(), *names.values(), *labels.values(), axis, marks, gap, gap_label, lesson)

        # bf16 near 1.0: a number line whose ticks are the bf16 values.
        cell = facts["cell"].value
        line = NumberLine(
            x_range=[1.0 - cell / 3, 1.0 + 2.3 * cell, cell],
            length=2.3 * 4 + 4 / 3,
            include_ticks=False,
            color=style.MUTED,
        )
        line.shift(self.BF16_ONE - line.n2p(1.0))
        ticks = VGroup(
            *(
                Line(
                    line.n2p(1.0 + k * cell) + 0.25 * UP,
                    line.n2p(1.0 + k * cell) + 0.25 * DOWN,
                    color=style.BF16,
                    stroke_width=4,
                )
                for k in range(3)
            )
        )
        half = DashedLine(
            line.n2p(1.0 + cell / 2) + 0.18 * UP, line.n2p(1.0 + cell / 2) + 0.18 * DOWN, color=style.MUTED
        )
        half_label = style.zh(f"半格 {facts['half_cell'].text}", size=style.SMALL_SIZE, color=style.MUTED)
        half_label.next_to(half, DOWN, buff=style.GAP_S)
        tick_labels = VGroup(
            style.value(facts["one"], size=style.LABEL_SIZE).next_to(ticks[0], DOWN, buff=style.GAP_S),
            style.value(facts["full_result"], size=style.LABEL_SIZE).next_to(ticks[1], DOWN, buff=style.GAP_S),
        )
        name = style.zh("bf16", size=style.BODY_SIZE, color=style.BF16).next_to(line, LEFT, buff=style.GAP_ML)
        dot = Dot(line.n2p(1.0), radius=0.13, color=style.HIGHLIGHT)
        with self.narrate("fb_cell") as beat:
            self.play(FadeOut(layout_part), run_time=beat.share(0.15))
            self.play(Create(line), FadeIn(name), FadeIn(ticks), FadeIn(tick_labels), run_time=beat.share(0.25))
            brace = BraceBetweenPoints(ticks[0].get_top(), ticks[1].get_top(), UP, color=style.BF16)
            width = style.zh(
                f"一格 ＝ {facts['cell'].text} ＝ {facts['cell_decimal'].text}", size=style.LABEL_SIZE, color=style.BF16
            ).next_to(brace, UP, buff=style.GAP_S)
            self.play(GrowFromCenter(brace), FadeIn(width), FadeIn(dot), run_time=beat.share(0.3))

        with self.narrate("fb_small") as beat:
            step = style.zh(f"＋{facts['small_step'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            self.play(Create(half), FadeIn(half_label), run_time=beat.share(0.15))
            target = line.n2p(1.0 + facts["small_step"].value)
            step.next_to(target, DOWN, buff=0.75)
            self.play(dot.animate.move_to(target), FadeIn(step), run_time=beat.share(0.3))
            back = style.zh(f"舍回 {facts['small_result'].text}", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
            back.move_to(step)
            self.play(
                dot.animate.move_to(line.n2p(1.0)).set_color(style.BF16),
                ReplacementTransform(step, back),
                run_time=beat.share(0.3),
            )

        with self.narrate("fb_full") as beat:
            self.play(
                dot.animate.move_to(line.n2p(1.0 + cell)).set_color(style.BF16), FadeOut(back), run_time=beat.share(0.4)
            )
            self.play(Indicate(tick_labels[1], color=style.VERDICT_GOOD), run_time=beat.share(0.3))

        progress = ValueTracker(0)
        bar_frame = Rectangle(width=6.0, height=0.3, color=style.MUTED, stroke_width=2).move_to(self.PROGRESS_CENTRE)
        progress_fill = always_redraw(
            lambda: Rectangle(
                width=max(0.001, 6.0 * progress.get_value()),
                height=0.3,
                stroke_width=0,
                fill_color=style.HIGHLIGHT,
                fill_opacity=style.FILL_SOFT,
            ).move_to(bar_frame, aligned_edge=LEFT)
        )
        bar_label = style.zh(
            f"每次＋{facts['repeat_step'].text}，连加 {facts['repeats'].text} 次", size=style.LABEL_SIZE
        ).next_to(bar_frame, LEFT, buff=style.GAP_ML)
        hops = 24  # drawn hops: each one a try that rounds back (the real loop makes 1,000)
        ghost = always_redraw(
            lambda: Dot(line.n2p(1.0 + facts["repeat_step"].value), radius=0.1, color=style.HIGHLIGHT).set_opacity(
                0.8 * (1 - (progress.get_value() * hops) % 1) * (0 < progress.get_value() < 1)
            )
        )
        with self.narrate("fb_repeat") as beat:
            self.play(
                dot.animate.move_to(line.n2p(1.0)).set_color(style.HIGHLIGHT),
                FadeOut(brace),
                FadeOut(width),
                FadeIn(bar_frame),
                FadeIn(bar_label),
                run_time=beat.share(0.15),
            )
            self.add(progress_fill, ghost)
            self.play(progress.animate.set_value(1), run_time=beat.share(0.65), rate_func=linear)
            result = style.zh(f"还是 {facts['bf16_sum'].text}", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
            result.next_to(dot, UP, buff=style.GAP_ML)
            self.play(FadeIn(result), Indicate(dot, color=style.HIGHLIGHT), run_time=beat.share(0.15))

        fp32 = NumberLine(x_range=[1.0, 2.1, 1.0], length=9.9, include_ticks=False, color=style.MUTED)
        fp32.shift(self.FP32_ONE - fp32.n2p(1.0))
        fp32_ticks = VGroup(
            *(
                Line(fp32.n2p(v) + 0.2 * UP, fp32.n2p(v) + 0.2 * DOWN, color=style.FP32, stroke_width=4)
                for v in (1.0, 2.0)
            )
        )
        fp32_labels = VGroup(
            style.value(facts["one"], size=style.LABEL_SIZE),
            style.zh(f"应为 {facts['exact_sum'].text}", size=style.LABEL_SIZE, color=style.MUTED),
        )
        for label, tick in zip(fp32_labels, fp32_ticks):
            label.next_to(tick, DOWN, buff=style.GAP_S)
        fp32_name = style.zh("fp32", size=style.BODY_SIZE, color=style.FP32).next_to(fp32, LEFT, buff=style.GAP_ML)
        path = facts["fp32_path"].value
        fp32_dot = always_redraw(
            lambda: Dot(fp32.n2p(path[round(progress.get_value() * (len(path) - 1))]), radius=0.13, color=style.FP32)
        )
        with self.narrate("fb_fp32_loop") as beat:
            self.play(
                Create(fp32), FadeIn(fp32_name), FadeIn(fp32_ticks), FadeIn(fp32_labels), run_time=beat.share(0.15)
            )
            progress.set_value(0)
            self.add(fp32_dot)
            self.play(progress.animate.set_value(1), run_time=beat.share(0.45), rate_func=linear)
            final = style.value(facts["fp32_sum"], size=style.LABEL_SIZE, color=style.FP32)
            final.next_to(fp32_dot, UP, buff=style.GAP_M)
            self.play(FadeIn(final), run_time=beat.share(0.15))
        rounding_part = VGroup(
            line,
            ticks,
            half,
            half_label,
            tick_labels,
            name,
            dot,
            bar_frame,
            progress_fill,
            bar_label,
            ghost,
            result,
            fp32,
            fp32_ticks,
            fp32_labels,
            fp32_name,
            fp32_dot,
            final,
        )

        # The ledger again: what never forgets stays fp32.
        row = LedgerRow(facts["ledger"].value, unit=0.6, height=0.9).move_to(self.LEDGER)
        v3_row = LedgerRow(facts["v3_moments"].value, unit=0.6, height=0.9).move_to(self.LEDGER)
        with self.narrate("fb_rule_master") as beat:
            self.play(FadeOut(rounding_part), FadeIn(row, shift=0.3 * DOWN), run_time=beat.share(0.25))
            master_tag = verdict("必须 fp32", style.FP32, "老的贡献永远不走", under=row.cell("master"))
            self.play(
                Indicate(row.cell("master"), color=style.HIGHLIGHT, scale_factor=1.05),
                FadeIn(master_tag),
                run_time=beat.share(0.35),
            )

        with self.narrate("fb_rule_moments") as beat:
            self.play(
                Indicate(VGroup(row.cell("m"), row.cell("v")), color=style.HIGHLIGHT, scale_factor=1.03),
                run_time=beat.share(0.3),
            )
            self.play(
                ReplacementTransform(row, v3_row),
                master_tag.animate.shift((v3_row.cell("master").get_x() - row.cell("master").get_x()) * RIGHT),
                run_time=beat.share(0.35),
            )
            moments = VGroup(v3_row.cell("m"), v3_row.cell("v"))
            moments_tag = verdict("bf16 也行", style.BF16, "老的会衰减", under=moments)
            self.play(FadeIn(moments_tag), run_time=beat.share(0.2))

        with self.narrate("fb_rule") as beat:
            used_tag = verdict("bf16", style.BF16, "用完就扔", under=VGroup(v3_row.cell("weight"), v3_row.cell("grad")))
            self.play(FadeIn(used_tag), Indicate(v3_row.cell("grad"), color=style.HIGHLIGHT), run_time=beat.share(0.3))
            rule = style.caption_stack(
                "分界不在累不累加，在老的贡献走不走",
                "口子：随机舍入下 bf16 主权重也可行，需额外支持，不推荐",
                size=style.LABEL_SIZE,
            )
            rule[0].set_color(style.HIGHLIGHT)
            rule[1].scale(style.SMALL_SIZE / style.LABEL_SIZE).set_color(style.MUTED).align_to(rule[0], LEFT)
            rule.move_to(1.6 * DOWN)
            self.play(FadeIn(rule[0], shift=0.2 * UP), run_time=beat.share(0.25))
            self.play(FadeIn(rule[1]), run_time=beat.share(0.2))
        self.finish(hold=1.0)  # the figure runs close to 120 s

    def _bits(self, layout: dict, y: float) -> VGroup:
        """One box per bit: sign grey, exponent solid, mantissa light, in the format's colour."""
        colour = style.PRECISION[layout["name"]]
        boxes = VGroup()
        for part, count in (
            ("sign", layout["sign"]),
            ("exponent", layout["exponent"]),
            ("mantissa", layout["mantissa"]),
        ):
            fill, opacity = (
                (style.MUTED, style.FILL_SOFT)
                if part == "sign"
                else (colour, style.FILL_SOLID if part == "exponent" else style.FILL_FAINT)
            )
            for _ in range(count):
                boxes.add(
                    Rectangle(
                        width=self.BIT,
                        height=0.42,
                        stroke_color=style.TEXT,
                        stroke_width=1,
                        fill_color=fill,
                        fill_opacity=opacity,
                    )
                )
        boxes.arrange(RIGHT, buff=style.FLUSH)
        return boxes.move_to((self.BITS_LEFT, y, 0), aligned_edge=LEFT)

    def _bit_labels(self, boxes: VGroup, layout: dict, name: str) -> VGroup:
        """How many exponent and mantissa bits, under their boxes."""
        exp = boxes[1 : 1 + layout["exponent"]]
        man = boxes[1 + layout["exponent"] :]
        return VGroup(
            style.zh(f"{self.facts[f'{name}_exp'].text} 位指数", size=style.SMALL_SIZE).next_to(
                exp, DOWN, buff=style.GAP_S
            ),
            style.zh(f"{self.facts[f'{name}_man'].text} 位尾数", size=style.SMALL_SIZE).next_to(
                man, DOWN, buff=style.GAP_S
            ),
        )

    def _range_line(self) -> tuple[VGroup, VGroup]:
        """Smallest normal numbers on a log₂ axis: where fp16 stops and where bf16 / fp32 stop."""
        facts = self.facts
        axis = NumberLine(x_range=[-130, 0, 2], length=10.3, include_ticks=False, color=style.MUTED)
        axis.move_to(self.RANGE_CENTRE)
        marks = VGroup()
        for fact, colour, who in (
            (facts["bf16_min_normal"], style.BF16, "bf16 / fp32"),
            (facts["fp16_min_normal"], style.FP16, "fp16"),
        ):
            point = Dot(axis.n2p(math.log2(fact.value)), radius=0.11, color=colour)
            label = style.zh(f"{who}：{fact.text}", size=style.LABEL_SIZE, color=colour).next_to(
                point, UP, buff=style.GAP_SM
            )
            if label.get_left()[0] < axis.get_left()[0]:
                label.align_to(point, LEFT).shift(0.1 * LEFT)
            marks.add(VGroup(point, label))
        caption = style.caption_stack("最小正规数", "（对数轴）", size=style.SMALL_SIZE, color=style.MUTED)
        caption.next_to(axis, LEFT, buff=style.GAP_M)
        return VGroup(axis, caption), marks


class OptimizerBytesTable(LectureScene):
    """Each state-saving variant as the AdamW row transformed: a cell dropped, factored or shrunk."""

    UNIT = 0.45
    # One row per optimizer: its name, its ledger row (boxes centred on the row's y), its sum.
    COLUMNS = (Column(-6.75, LEFT), Column(-3.9, LEFT), Column(6.75, RIGHT))
    ROWS = (
        ("adamw", "AdamW", 2.55),
        ("muon", "Muon", 1.8),
        ("lion", "Lion", 1.05),
        ("adafactor", "Adafactor", 0.3),
        ("8bit_adam", "8-bit Adam", -1.1),
    )
    STACKED = ("lion_8bit", "8-bit Lion", -1.9)  # two ideas at once, under the rest
    TAG_X = -4.45  # each row's idea (拿掉, 分解, 存小), between its name and its row
    INSET_X = -0.05  # left edge of Adafactor's factored inset
    CLASH = (style.CAPTION_TOP + style.GAP_ML) * UP  # the clash, then the caveat in its place: just above the captions

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        rows, names, sums = {}, {}, {}
        for key, name, y in (*self.ROWS, self.STACKED):
            names[key], rows[key], sums[key] = grid_row(
                [
                    style.zh(name, size=style.LABEL_SIZE),
                    LedgerRow(facts[key].value, unit=self.UNIT, height=0.62),
                    style.value(facts[f"{key}_sum"], size=style.LABEL_SIZE),
                ],
                self.COLUMNS,
                y,
            )
            rows[key].shift((y - rows[key].boxes().get_y()) * UP)  # box centres on y, whatever text hangs below

        with self.narrate("ob_intro") as beat:
            self.play(FadeIn(names["adamw"]), FadeIn(rows["adamw"], shift=0.3 * DOWN), run_time=beat.share(0.35))
            self.play(Write(sums["adamw"]), run_time=beat.share(0.3))

        for cue_id, key in (
            ("ob_muon", "muon"),
            ("ob_lion", "lion"),
            ("ob_adafactor", "adafactor"),
            ("ob_8bit", "8bit_adam"),
        ):
            with self.narrate(cue_id) as beat:
                self._derive(rows["adamw"], rows[key], names[key], beat.share(0.55))
                self.play(Write(sums[key]), run_time=beat.share(0.2))
                if key == "adafactor":
                    inset = self._factored_inset(rows[key])
                    self.play(FadeIn(inset), run_time=beat.share(0.15))

        tags = {}
        for key, idea in (("muon", "拿掉"), ("lion", "拿掉"), ("adafactor", "分解"), ("8bit_adam", "存小")):
            tags[key] = style.zh(idea, size=style.SMALL_SIZE, color=style.HIGHLIGHT)
            tags[key].move_to(rows[key].boxes()).set_x(self.TAG_X)
        with self.narrate("ob_ideas") as beat:
            for keys in (("muon", "lion"), ("adafactor",), ("8bit_adam",)):
                self.play(
                    *(FadeIn(tags[k], scale=1.4) for k in keys),
                    *(Indicate(rows[k], color=style.HIGHLIGHT, scale_factor=1.02) for k in keys),
                    run_time=beat.share(0.27),
                )

        with self.narrate("ob_stack") as beat:
            stack_tag = style.zh("叠加", size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
            stack_tag.move_to(rows["lion_8bit"].boxes()).set_x(self.TAG_X)
            self._derive(rows["lion"], rows["lion_8bit"], names["lion_8bit"], beat.share(0.5))
            self.play(Write(sums["lion_8bit"]), FadeIn(stack_tag), run_time=beat.share(0.25))

        with self.narrate("ob_exclusive") as beat:
            clash = style.zh("拿掉与分解互斥：v 拿掉了，就无从分解", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
            clash.move_to(self.CLASH)
            self.play(
                *(tags[k].animate.set_color(style.VERDICT_BAD) for k in ("muon", "lion", "adafactor")),
                FadeIn(clash, shift=0.2 * UP),
                run_time=beat.share(0.35),
            )
            self.play(
                *(Indicate(tags[k], color=style.VERDICT_BAD, scale_factor=1.4) for k in ("muon", "lion", "adafactor")),
                run_time=beat.share(0.3),
            )

        with self.narrate("ob_caveat") as beat:
            caveat = style.zh(
                "8-bit Adam 另加稳定 embedding 层：改了结构，不只换存法", size=style.LABEL_SIZE, color=style.HIGHLIGHT
            ).move_to(clash)
            self.play(
                ReplacementTransform(clash, caveat),
                Indicate(names["8bit_adam"], color=style.HIGHLIGHT),
                run_time=beat.share(0.35),
            )
        self.finish()

    def _derive(self, source: LedgerRow, target: LedgerRow, name: Mobject, run_time: float) -> None:
        """A copy of `source` slides to the target row and becomes it, cell by cell."""
        start = source.copy()
        self.play(
            FadeIn(name),
            start.animate.shift((target.boxes().get_y() - source.boxes().get_y()) * UP),
            run_time=0.4 * run_time,
        )
        moves = []
        for key in source.keys:
            if key in target.keys:
                moves.append(ReplacementTransform(start.cell(key), target.cell(key)))
            else:
                moves.append(FadeOut(start.cell(key), scale=0.3, shift=0.4 * UP))
        self.play(*moves, run_time=0.6 * run_time)

    def _factored_inset(self, row: LedgerRow) -> VGroup:
        """A matrix whose v is kept as one row and one column, with the real shape and cost."""
        facts = self.facts
        size = 0.7
        grid = Square(side_length=size, stroke_color=style.MUTED, stroke_width=2)
        strip_row = bar(size, size / 6, style.FP32)
        strip_col = bar(size / 6, size, style.FP32)
        strip_row.next_to(grid, DOWN, buff=style.GAP_S)
        strip_col.next_to(grid, RIGHT, buff=style.GAP_S)
        icon = VGroup(grid, strip_row, strip_col)
        text = style.caption_stack(
            f"{facts['matrix'].text} 的矩阵",
            f"v 每参数 {facts['adafactor_v'].text}",
            size=style.SMALL_SIZE,
            color=style.TEXT,
        )
        inset = VGroup(icon, text).arrange(RIGHT, buff=style.GAP_M)
        return inset.move_to((self.INSET_X, row.boxes().get_y(), 0), aligned_edge=LEFT)


class CheckpointSize(LectureScene):
    """Which of the 16 bytes a checkpoint must hold, what that is for 671B, and what else must go in."""

    TIB = 0.82  # frame units per TiB: the two bars are drawn to scale
    ROW = 2.2 * UP  # the 16-byte row
    QUESTION = 0.9 * UP
    SAVED_LEFT = np.array((-6.45, 0.0, 0))  # where the checkpoint's cells start
    BAR_LEFT = -6.3  # the two size bars start here
    CLASSIC_Y, V3_Y = -1.6, -2.35

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        row = LedgerRow(facts["ledger"].value, unit=0.6, height=0.9).move_to(self.ROW)
        question = style.zh("丢了，能不能重建？", size=style.BODY_SIZE, color=style.HIGHLIGHT).move_to(self.QUESTION)
        with self.narrate("ck_intro") as beat:
            self.play(FadeIn(row, shift=0.3 * DOWN), run_time=beat.share(0.35))
            self.play(FadeIn(question), run_time=beat.share(0.25))

        with self.narrate("ck_rebuild") as beat:
            weight, grad, master = row.cell("weight"), row.cell("grad"), row.cell("master")
            arrow = CurvedArrow(
                master.get_top() + 0.05 * UP,
                weight.get_top() + 0.05 * UP,
                angle=0.5,
                color=style.VERDICT_GOOD,
                stroke_width=3,
                tip_length=0.18,
            )
            cast = style.zh("舍入", size=style.SMALL_SIZE, color=style.VERDICT_GOOD).next_to(
                arrow, UP, buff=style.GAP_XS
            )
            yes = verdict("能", style.VERDICT_GOOD, "舍入即得 · 下一步重算", under=VGroup(weight, grad))
            self.play(FadeOut(question), Create(arrow), FadeIn(cast), run_time=beat.share(0.3))
            self.play(FadeIn(yes), run_time=beat.share(0.25))
            self.play(
                weight.animate.set_opacity(style.FILL_FAINT),
                grad.animate.set_opacity(style.FILL_FAINT),
                FadeOut(arrow),
                FadeOut(cast),
                run_time=beat.share(0.2),
            )

        saved = LedgerRow(facts["saved"].value, unit=0.6, height=0.9).move_to(self.SAVED_LEFT, aligned_edge=LEFT)
        box = Rectangle(width=saved.width + 0.6, height=1.5, color=style.TEXT)
        box.move_to(saved.get_left() + 0.3 * LEFT + 0.25 * DOWN, aligned_edge=LEFT)  # room for the sum underneath
        box_label = style.zh("检查点", size=style.LABEL_SIZE).next_to(box, UP, buff=style.GAP_S).align_to(box, LEFT)
        classic_sum = style.value(facts["classic_sum"], size=style.LABEL_SIZE).next_to(saved, DOWN, buff=style.GAP_SM)
        with self.narrate("ck_keep") as beat:
            no = verdict("不能", style.VERDICT_BAD, "装着全部历史", under=VGroup(row.cell("m"), row.cell("v"), master))
            self.play(FadeIn(no), run_time=beat.share(0.2))
            self.play(Create(box), FadeIn(box_label), run_time=beat.share(0.2))
            self.play(*(TransformFromCopy(row.cell(k), saved.cell(k)) for k in saved.keys), run_time=beat.share(0.3))
            self.play(Write(classic_sum), run_time=beat.share(0.2))

        classic_bar = self._size_bar(facts["classic_tib"].value, self.CLASSIC_Y, style.FP32, "经典")
        classic_label = style.zh(
            f"{facts['classic_bytes'].text} × {facts['params'].text} ≈ {facts['classic_tib'].text}",
            size=style.LABEL_SIZE,
        ).next_to(classic_bar, RIGHT, buff=style.GAP_M)
        with self.narrate("ck_size") as beat:
            self.play(GrowFromEdge(classic_bar, LEFT), run_time=beat.share(0.45))
            self.play(FadeIn(classic_label), run_time=beat.share(0.25))

        v3_saved = LedgerRow(facts["v3_saved"].value, unit=0.6, height=0.9).move_to(saved, aligned_edge=LEFT)
        v3_sum = style.value(facts["v3_sum"], size=style.LABEL_SIZE).next_to(v3_saved, DOWN, buff=style.GAP_M)
        v3_bar = self._size_bar(facts["v3_tib"].value, self.V3_Y, style.BF16, "V3 式")
        v3_label = style.zh(
            f"{facts['v3_bytes'].text} × {facts['params'].text} ≈ {facts['v3_tib'].text}", size=style.LABEL_SIZE
        )
        v3_label.next_to(v3_bar, RIGHT, buff=style.GAP_M).align_to(classic_label, LEFT)
        smaller = style.zh(f"小 {facts['smaller'].text}", size=style.BODY_SIZE, color=style.HIGHLIGHT)
        with self.narrate("ck_v3") as beat:
            self.play(
                ReplacementTransform(saved, v3_saved),
                ReplacementTransform(classic_sum, v3_sum),
                run_time=beat.share(0.25),
            )
            self.play(GrowFromEdge(v3_bar, LEFT), run_time=beat.share(0.25))
            smaller.next_to(v3_label, RIGHT, buff=style.GAP_L)
            cut = DashedLine(
                classic_bar[0].get_corner(DOWN + RIGHT),
                (classic_bar[0].get_right()[0], v3_bar[0].get_bottom()[1], 0),
                color=style.MUTED,
            )
            self.play(FadeIn(v3_label), FadeIn(smaller), Create(cut), run_time=beat.share(0.25))

        extras = VGroup(
            *(
                style.zh(text, size=style.LABEL_SIZE)
                for text in ("① 数据读到了哪里", "② 数据管线的状态", "③ 随机数的状态")
            )
        )
        extras.arrange(DOWN, aligned_edge=LEFT, buff=0.18).next_to(box, RIGHT, buff=style.GAP_L)
        with self.narrate("ck_more") as beat:
            whole = Rectangle(
                width=extras.get_right()[0] + 0.3 - box.get_left()[0], height=box.height, color=style.TEXT
            ).move_to(box, aligned_edge=LEFT)
            self.play(ReplacementTransform(box, whole), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(e, shift=0.2 * LEFT) for e in extras), lag_ratio=0.6), run_time=beat.share(0.5)
            )

        with self.narrate("ck_rollback") as beat:
            brace = Brace(extras[:2], RIGHT, buff=style.GAP_SM, color=style.HIGHLIGHT)
            why = style.caption_stack("回滚跳数据", "的前提", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
            why.next_to(brace, RIGHT, buff=style.GAP_S)
            self.play(
                GrowFromCenter(brace),
                FadeIn(why),
                *(Indicate(e, color=style.HIGHLIGHT) for e in extras[:2]),
                run_time=beat.share(0.4),
            )
        self.finish()

    def _size_bar(self, tib: float, y: float, colour: str, name: str) -> VGroup:
        """A checkpoint's size as a bar to scale, its name inside at the left."""
        size = bar(tib * self.TIB, 0.5, colour, opacity=style.FILL_SOFT)
        size.move_to((self.BAR_LEFT, y, 0), aligned_edge=LEFT)
        label = style.zh(name, size=style.SMALL_SIZE).move_to(size, aligned_edge=LEFT).shift(0.15 * RIGHT)
        return VGroup(size, label)


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------


class LoraLedger(LectureScene):
    """A frozen matrix beside two thin adapters; the ledger row drops 14 bytes; the chain stays."""

    MATRIX_Y = 0.1  # the frozen matrix and its two adapters, side by side
    W_X, A_X, B_X = -3.6, 0.2, 2.75
    LAYERS = np.array((-2.6, -0.2, 0))  # the stack of layers with their q, v adapters
    COUNTS = np.array((2.6, -0.2, 0))  # and what they add up to
    FULL_ROW = np.array((0.9, 2.2, 0))  # the full fine-tune's ledger row; LoRA's rows hang under it
    BARS_LEFT = -4.3  # the resident-memory bars, to scale
    BAR_ROWS = (-1.75, -2.45)
    PASSES = np.array((0.6, 2.0, 0))  # forward and the two backward matmuls
    CHAIN = np.array((-0.4, -1.5, 0))  # the frozen layers the gradient still walks
    VERDICTS = 0.3 * UP

    def construct(self) -> None:
        facts = self.facts
        self.show_title()

        # -- the matrix and its adapters -------------------------------------------
        side = 3.0
        big = Rectangle(
            width=side,
            height=side,
            stroke_color=style.TEXT,
            stroke_width=2,
            fill_color=style.FROZEN,
            fill_opacity=style.FILL_SOFT,
        ).move_to((self.W_X, self.MATRIX_Y, 0))
        big_label = style.zh(f"{facts['width'].text} × {facts['width'].text}", size=style.LABEL_SIZE)
        big_label.next_to(big, DOWN, buff=style.GAP_M)
        frozen_tag = style.zh("冻住", size=style.LABEL_SIZE, color=style.FROZEN).next_to(big, UP, buff=style.GAP_SM)
        thin = 0.12  # drawn wider than to scale (16 of 4,096 would be 0.012), see the to-scale square below
        a = bar(thin, side, style.HIGHLIGHT)
        b = bar(side, thin, style.HIGHLIGHT)
        a.move_to((self.A_X, self.MATRIX_Y, 0))
        b.move_to((self.B_X, self.MATRIX_Y, 0))
        a_label = style.zh(
            f"{facts['width'].text} × {facts['rank'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT
        ).next_to(a, DOWN, buff=style.GAP_M)
        b_label = style.zh(
            f"{facts['rank'].text} × {facts['width'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT
        ).next_to(b, DOWN, buff=style.GAP_ML)
        train_tag = style.zh("只训这两个", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        train_tag.next_to(VGroup(a, b), UP, buff=style.GAP_M)

        with self.narrate("lora_intro") as beat:
            self.play(FadeIn(big), FadeIn(big_label), run_time=beat.share(0.35))
            self.play(
                big.animate.set_fill(style.FROZEN, style.FILL_FAINT), FadeIn(frozen_tag), run_time=beat.share(0.25)
            )
            self.play(GrowFromEdge(a, UP), GrowFromEdge(b, LEFT), run_time=beat.share(0.3))

        with self.narrate("lora_matrix") as beat:
            self.play(
                FadeIn(a_label),
                FadeIn(b_label),
                Indicate(a, color=style.HIGHLIGHT),
                Indicate(b, color=style.HIGHLIGHT),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(train_tag), run_time=beat.share(0.15))
            # The two adapters hold as many numbers as this square, drawn to scale inside the matrix.
            patch_side = side * facts["matrix_share"].value ** 0.5
            patch = Square(side_length=patch_side, stroke_width=0, fill_color=style.HIGHLIGHT, fill_opacity=1)
            patch.move_to(big.get_corner(UP + RIGHT) + patch_side / 2 * (DOWN + LEFT))
            share = style.value(facts["matrix_share"], size=style.BODY_SIZE, color=style.HIGHLIGHT)
            share.next_to(patch, RIGHT, buff=style.GAP_M).align_to(big, UP)
            self.play(ReplacementTransform(VGroup(a.copy(), b.copy()), patch), run_time=beat.share(0.3))
            self.play(FadeIn(share, shift=0.2 * LEFT), run_time=beat.share(0.15))

        panel = VGroup(big, big_label, frozen_tag, a, b, a_label, b_label, train_tag, patch, share)

        # -- where the adapters hang: q and v in every layer ---------------------------
        layers = facts["layers"].value
        stack = VGroup()
        for _ in range(layers):
            layer = bar(2.2, 0.07, style.FROZEN, opacity=style.FILL_SOFT)
            q = bar(0.22, 0.07, style.HIGHLIGHT, opacity=1)
            v = q.copy()
            q.next_to(layer, RIGHT, buff=style.GAP_S)
            v.next_to(q, RIGHT, buff=0.06)
            stack.add(VGroup(layer, q, v))
        stack.arrange(UP, buff=0.03).move_to(self.LAYERS)
        head = VGroup(
            *(
                style.zh(name, size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(adapter, UP, buff=style.GAP_S)
                for name, adapter in (("q", stack[-1][1]), ("v", stack[-1][2]))
            )
        )
        layer_label = style.zh(f"{facts['layers'].text} 层", size=style.LABEL_SIZE)
        layer_label.next_to(stack, LEFT, buff=style.GAP_M)
        count = VGroup(
            style.value(facts["adapters"], size=style.BODY_SIZE, color=style.HIGHLIGHT),
            style.zh("个 adapter 参数", size=style.LABEL_SIZE, color=style.HIGHLIGHT),
        ).arrange(RIGHT, buff=style.GAP_SM)
        model = style.zh(f"LLaMA-7B：{facts['params'].text} 参数", size=style.LABEL_SIZE)
        of_model = VGroup(
            style.zh("占", size=style.LABEL_SIZE),
            style.value(facts["adapter_share"], size=style.BODY_SIZE, color=style.HIGHLIGHT),
        ).arrange(RIGHT, buff=style.GAP_SM)
        summary = (
            VGroup(count, model, of_model).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_ML).move_to(self.COUNTS)
        )

        with self.narrate("lora_model") as beat:
            self.play(FadeOut(panel), run_time=beat.share(0.1))
            self.play(FadeIn(VGroup(*(s[0] for s in stack))), FadeIn(layer_label), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(VGroup(s[1], s[2]), scale=1.6) for s in stack), lag_ratio=0.08),
                FadeIn(head),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(count, shift=0.2 * RIGHT), run_time=beat.share(0.1))
            self.play(FadeIn(model), run_time=beat.share(0.1))
            self.play(FadeIn(of_model), run_time=beat.share(0.1))

        self.play(FadeOut(VGroup(stack, head, layer_label, summary)), run_time=0.6)

        # -- the ledger: full fine-tune vs LoRA ---------------------------------------
        unit = 0.42
        full_row = LedgerRow(facts["row"].value, unit=unit, height=0.75).move_to(self.FULL_ROW)
        full_name = style.zh("全量微调", size=style.LABEL_SIZE).next_to(full_row, LEFT, buff=style.GAP_ML)
        full_times = style.zh(f"× {facts['params'].text}", size=style.LABEL_SIZE)
        full_times.next_to(full_row, RIGHT, buff=style.GAP_M)
        with self.narrate("lora_full_row") as beat:
            self.play(
                FadeIn(full_name),
                LaggedStart(*(FadeIn(c, shift=0.2 * DOWN) for c in full_row), lag_ratio=0.15),
                run_time=beat.share(0.6),
            )
            self.play(FadeIn(full_times), run_time=beat.share(0.25))

        lora_row = full_row.copy().move_to(full_row).shift(1.35 * DOWN)
        lora_name = style.zh("LoRA 底座", size=style.LABEL_SIZE).next_to(lora_row, LEFT, buff=style.GAP_ML)
        lora_name.align_to(full_name, RIGHT)
        dropped = VGroup(*(lora_row.cell(k) for k in lora_row.keys if k != "weight"))
        cross = Cross(dropped, stroke_color=style.VERDICT_BAD, stroke_width=4)
        dropped_label = style.zh(f"{facts['dropped'].text} 用不上", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        dropped_label.next_to(dropped, DOWN, buff=style.GAP_SM)
        kept = lora_row.cell("weight")
        base_times = style.zh(f"× {facts['params'].text}（冻住）", size=style.LABEL_SIZE)
        adapter_row = LedgerRow(facts["row"].value, unit=unit, height=0.75)
        adapter_row.next_to(lora_row, DOWN, buff=style.GAP_L).align_to(lora_row, LEFT)
        adapter_name = style.zh("adapter", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        adapter_name.next_to(adapter_row, LEFT, buff=style.GAP_ML).align_to(full_name, RIGHT)
        adapter_times = style.zh(f"× {facts['adapters'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        adapter_times.next_to(adapter_row, RIGHT, buff=style.GAP_M)
        with self.narrate("lora_freeze") as beat:
            self.play(TransformFromCopy(full_row, lora_row), FadeIn(lora_name), run_time=beat.share(0.2))
            self.play(Create(cross), FadeIn(dropped_label), run_time=beat.share(0.2))
            self.play(
                FadeOut(VGroup(dropped, cross), shift=0.4 * DOWN),
                FadeOut(dropped_label),
                kept[0].animate.set_fill(style.FROZEN, style.FILL_SOFT),
                run_time=beat.share(0.25),
            )
            base_times.next_to(kept, RIGHT, buff=style.GAP_M)
            self.play(FadeIn(base_times), run_time=beat.share(0.1))
            self.play(FadeIn(adapter_name), FadeIn(adapter_row), FadeIn(adapter_times), run_time=beat.share(0.2))

        # Bars to scale: resident GiB of each way.
        scale = 8.0 / facts["full_gib"].value
        bars = VGroup()
        for fact, colour, name in (
            (facts["full_gib"], style.MEMORY, "全量微调"),
            (facts["lora_gib"], style.HIGHLIGHT, "LoRA"),
        ):
            resident = bar(fact.value * scale, 0.45, colour)
            label = style.zh(name, size=style.LABEL_SIZE)
            amount = style.value(fact, size=style.LABEL_SIZE)
            bars.add(VGroup(label, resident, amount))
        for (label, resident, amount), y in zip(bars, self.BAR_ROWS):
            resident.move_to((self.BARS_LEFT, y, 0), aligned_edge=LEFT)
            label.next_to(resident, LEFT, buff=style.GAP_ML)
            amount.next_to(resident, RIGHT, buff=style.GAP_M)
        heading = style.zh("常驻显存", size=style.LABEL_SIZE, color=style.MUTED).next_to(bars, UP, buff=style.GAP_SM)
        heading.align_to(bars[0][1], LEFT)
        ratio = style.value(facts["ratio"], size=style.TITLE_SIZE, color=style.HIGHLIGHT)
        ratio.next_to(bars[1][2], RIGHT, buff=style.GAP_XL)
        with self.narrate("lora_bars") as beat:
            self.play(FadeIn(heading), *(FadeIn(b[0]) for b in bars), run_time=beat.share(0.15))
            self.play(*(GrowFromEdge(b[1], LEFT) for b in bars), run_time=beat.share(0.4))
            self.play(*(FadeIn(b[2]) for b in bars), run_time=beat.share(0.15))
            self.play(FadeIn(ratio, scale=1.4), run_time=beat.share(0.2))

        ledger_part = VGroup(
            full_row,
            full_name,
            full_times,
            lora_row[0],
            lora_name,
            base_times,
            adapter_row,
            adapter_name,
            adapter_times,
            bars,
            heading,
            ratio,
        )
        self.play(FadeOut(ledger_part), run_time=0.6)

        # -- compute: the weight-gradient matmul disappears --------------------------
        def pass_row(names: tuple[tuple[str, str], ...]) -> VGroup:
            """The passes of one step as labelled blocks, in their directions' colours."""
            blocks = VGroup(
                *(
                    block(2.3, 0.7, colour, name, size=style.LABEL_SIZE, stroke_color=style.TEXT)
                    for name, colour in names
                )
            )
            return blocks.arrange(RIGHT, buff=style.GAP_S)

        steps = (("前向", style.FORWARD), ("① 输入梯度", style.BACKWARD), ("② 权重梯度", style.WEIGHT_GRAD))
        full_passes = pass_row(steps).move_to(self.PASSES)
        lora_passes = pass_row(steps).next_to(full_passes, DOWN, buff=style.GAP_ML)
        full_tag = VGroup(
            style.zh("全量微调", size=style.LABEL_SIZE).next_to(full_passes, LEFT, buff=style.GAP_ML),
            style.value(facts["full_passes"], size=style.BODY_SIZE).next_to(full_passes, RIGHT, buff=style.GAP_ML),
        )
        lora_label = style.zh("LoRA", size=style.LABEL_SIZE).next_to(lora_passes, LEFT, buff=style.GAP_ML)
        lora_label.align_to(full_tag[0], RIGHT)
        lora_value = style.value(facts["lora_passes"], size=style.BODY_SIZE, color=style.HIGHLIGHT)
        lora_value.next_to(lora_passes[1], RIGHT, buff=style.GAP_ML)
        strike = Cross(lora_passes[2], stroke_color=style.VERDICT_BAD, stroke_width=4)
        with self.narrate("lora_compute") as beat:
            self.play(
                FadeIn(full_tag[0]),
                LaggedStart(*(FadeIn(p) for p in full_passes), lag_ratio=0.3),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(full_tag[1]), FadeIn(lora_label), FadeIn(lora_passes), run_time=beat.share(0.2))
            self.play(Indicate(lora_passes[2], color=style.VERDICT_BAD), run_time=beat.share(0.15))
            self.play(Create(strike), run_time=beat.share(0.15))
            self.play(FadeOut(VGroup(lora_passes[2], strike)), FadeIn(lora_value), run_time=beat.share(0.15))

        # -- activations: the gradient still walks the whole chain --------------------
        n = 8
        chain = VGroup(
            *(
                Rectangle(
                    width=0.9,
                    height=0.6,
                    stroke_color=style.TEXT,
                    stroke_width=2,
                    fill_color=style.FROZEN,
                    fill_opacity=style.FILL_FAINT,
                )
                for _ in range(n)
            )
        )
        chain.arrange(RIGHT, buff=style.EDGE).move_to(self.CHAIN)
        tips = VGroup(
            *(
                Rectangle(width=0.9, height=0.1, stroke_width=0, fill_color=style.HIGHLIGHT, fill_opacity=1).next_to(
                    box, DOWN, buff=0.04
                )
                for box in chain
            )
        )
        kept_acts = VGroup(
            *(
                Square(
                    side_length=0.28, stroke_width=0, fill_color=style.FORWARD, fill_opacity=style.FILL_SOLID
                ).next_to(box, UP, buff=style.GAP_S)
                for box in chain
            )
        )
        loss = style.zh("loss", size=style.LABEL_SIZE).next_to(chain, RIGHT, buff=style.GAP_L)
        tip_tag = style.zh("adapter", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        tip_tag.next_to(tips[0], DOWN, buff=style.GAP_S)
        act_tag = style.zh("激活：整条链都得留着", size=style.LABEL_SIZE, color=style.FORWARD)
        act_tag.next_to(kept_acts, UP, buff=style.GAP_M)
        below = tip_tag.get_bottom()[1] - 0.25
        back = Arrow(loss.get_center(), chain.get_left(), buff=style.FLUSH, color=style.BACKWARD, stroke_width=5).set_y(
            below
        )
        with self.narrate("lora_chain") as beat:
            self.play(FadeIn(chain), FadeIn(tips), FadeIn(tip_tag), FadeIn(loss), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(k, shift=0.15 * UP) for k in kept_acts), lag_ratio=0.15), run_time=beat.share(0.2)
            )
            self.play(GrowArrow(back), run_time=beat.share(0.3))
            self.play(Indicate(tips[0], color=style.BACKWARD), FadeIn(act_tag), run_time=beat.share(0.2))

        # -- the three rows of the page's table -------------------------------------
        self.play(
            FadeOut(
                VGroup(
                    full_passes,
                    full_tag,
                    lora_label,
                    lora_passes[:2],
                    lora_value,
                    chain,
                    tips,
                    tip_tag,
                    kept_acts,
                    loss,
                    act_tag,
                    back,
                )
            ),
            run_time=0.6,
        )
        rows = (
            VGroup(
                verdict(f"相差 {facts['ratio'].text}", style.VERDICT_GOOD, "常驻", size=style.TITLE_SIZE, across=True),
                verdict(
                    f"{facts['full_passes'].text} → {facts['lora_passes'].text}",
                    style.VERDICT_GOOD,
                    "算力",
                    size=style.TITLE_SIZE,
                    across=True,
                ),
                verdict("基本不省", style.VERDICT_BAD, "激活", size=style.TITLE_SIZE, across=True),
            )
            .arrange(DOWN, aligned_edge=LEFT, buff=style.EDGE)
            .move_to(self.VERDICTS)
        )
        with self.narrate("lora_close") as beat:
            self.play(
                LaggedStart(*(FadeIn(r, shift=0.2 * RIGHT) for r in rows), lag_ratio=0.35), run_time=beat.share(0.55)
            )
            self.play(Indicate(rows[2], color=style.VERDICT_BAD), run_time=beat.share(0.3))
        self.finish()


class ZeroStages(LectureScene):
    """The 16-byte row of one GPU, cut across 64 GPUs: biggest and least used first."""

    UNIT = 0.42
    HEIGHT = 0.7
    X0 = -4.1  # left edge of every row
    ROWS_Y = (2.0, 1.0, 0.0, -1.0)
    COMM_X = 5.7
    HEAD_Y = 2.75  # the column heads: memory over the rows, communication over its column
    STRIP = np.array((0.6, style.CAPTION_TOP + 0.4, 0))  # the 64 cards, their centre this far above the captions
    RULE = np.array((0.4, -0.2, 0))  # the rule's table: what each group weighs and when it is used
    RULE_COLUMNS = (Column(0.0), Column(1.9), Column(3.0))  # name, bytes, phases: left edges

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        setup = style.zh(
            f"{facts['params'].text}参数 · {facts['gpus'].text} 张卡", size=style.LABEL_SIZE, color=style.MUTED
        ).to_corner(UP + RIGHT, buff=style.EDGE)
        cells = facts["row"].value
        groups = facts["groups"].value  # in cut order
        stages = [()]
        for group in groups:
            stages.append(stages[-1] + tuple(group["keys"]))
        names = ("baseline", "p_os", "p_os_g", "p_os_g_p")
        stage_labels = (
            ("数据并行", "每卡一整份"),
            ("ZeRO-1", f"切{groups[0]['label']}"),
            ("ZeRO-2", f"再切{groups[1]['label']}"),
            ("ZeRO-3", f"再切{groups[2]['label']}"),
        )

        gpus = facts["gpus"].value
        strip = VGroup(*(Square(side_length=0.27, stroke_color=style.MUTED, stroke_width=1.5) for _ in range(gpus)))
        strip.arrange_in_grid(rows=2, buff=0.07).move_to(self.STRIP)
        # Inside every GPU, one stripe per group, lit when that group's sliver lands there.
        precision = {c["key"]: c["precision"] for c in cells}
        stripes = [
            VGroup(
                *(
                    Rectangle(
                        width=0.19,
                        height=0.05,
                        stroke_width=0,
                        fill_color=style.PRECISION[precision[g["keys"][0]]],
                        fill_opacity=style.FILL_SOLID,
                    )
                    .move_to(square)
                    .shift((0.075 * i - 0.075) * UP)
                    for square in strip
                )
            )
            for i, g in enumerate(groups)
        ]
        strip[0].set_stroke(style.HIGHLIGHT, 3)
        strip_label = style.zh(f"{facts['gpus'].text} 张卡", size=style.LABEL_SIZE).next_to(
            strip, LEFT, buff=style.GAP_ML
        )
        ours = style.zh("本卡", size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(strip[0], UP, buff=style.GAP_S)
        ours.align_to(strip[0], LEFT)
        comm_head = style.zh("通信量", size=style.LABEL_SIZE, color=style.MUTED).move_to((self.COMM_X, self.HEAD_Y, 0))
        mem_head = VGroup(
            style.zh("本卡显存", size=style.LABEL_SIZE, color=style.MUTED),
            style.zh(f"GB = {facts['gb'].text} 字节，同论文 Figure 1", size=style.SMALL_SIZE, color=style.MUTED),
        )
        mem_head.arrange(RIGHT, buff=style.GAP_ML, aligned_edge=DOWN).move_to(
            (self.X0, self.HEAD_Y, 0), aligned_edge=LEFT
        )

        row = self._layout(cells, (), gpus, self.ROWS_Y[0])
        labels = [self._stage_label(*text, y) for text, y in zip(stage_labels, self.ROWS_Y)]
        with self.narrate("zero_intro") as beat:
            self.play(FadeIn(setup), run_time=beat.share(0.3))
            self.play(
                FadeIn(strip_label), LaggedStart(*(FadeIn(s) for s in strip), lag_ratio=0.02), run_time=beat.share(0.4)
            )
            self.play(FadeIn(ours), run_time=beat.share(0.15))

        with self.narrate("zero_baseline") as beat:
            self.play(
                FadeIn(mem_head),
                FadeIn(labels[0]),
                LaggedStart(*(FadeIn(p, shift=0.2 * DOWN) for _k, p in row), lag_ratio=0.2),
                run_time=beat.share(0.5),
            )
            self.play(
                FadeIn(self._stage_total(facts["baseline"], row)),
                FadeIn(comm_head),
                FadeIn(self._comm(facts["comm_baseline"], self.ROWS_Y[0])),
                run_time=beat.share(0.3),
            )

        # The rule: each group's size and the phases that touch it; the table sorts itself.
        row_keys = [c["key"] for c in cells]
        in_row = sorted(groups, key=lambda g: row_keys.index(g["keys"][0]))
        lines = {g["label"]: self._rule_line(g, style.PRECISION[precision[g["keys"][0]]]) for g in in_row}
        table = VGroup(*lines.values()).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M).move_to(self.RULE)
        with self.narrate("zero_rule") as beat:
            self.play(
                LaggedStart(*(FadeIn(line, shift=0.2 * RIGHT) for line in table), lag_ratio=0.3),
                run_time=beat.share(0.3),
            )
            ranked = VGroup(*(lines[g["label"]].copy() for g in groups))
            ranked.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
            ranked.move_to(table)
            self.play(
                *(lines[g["label"]].animate.move_to(ranked[i]) for i, g in enumerate(groups)), run_time=beat.share(0.3)
            )
            first = lines[groups[0]["label"]]
            self.play(
                Indicate(first, color=style.HIGHLIGHT),
                *(Indicate(p, color=style.HIGHLIGHT) for k, p in row if k in groups[0]["keys"]),
                run_time=beat.share(0.3),
            )
        self.play(FadeOut(table), run_time=0.5)

        for stage in range(1, 4):
            with self.narrate(("zero_cut_os", "zero_cut_g", "zero_cut_p")[stage - 1]) as beat:
                row = self._cut(
                    row,
                    stages[stage - 1],
                    stages[stage],
                    cells,
                    gpus,
                    self.ROWS_Y[stage],
                    labels[stage],
                    stripes[stage - 1],
                    beat,
                )
                self.play(
                    FadeIn(self._stage_total(facts[names[stage]], row)),
                    FadeIn(self._comm(facts[f"comm_{names[stage]}"], self.ROWS_Y[stage])),
                    run_time=beat.share(0.15),
                )

        with self.narrate("zero_close") as beat:
            self.play(
                LaggedStart(
                    *(Indicate(label[1], color=style.HIGHLIGHT, scale_factor=1.15) for label in labels[1:]),
                    lag_ratio=0.6,
                ),
                run_time=beat.share(0.6),
            )
        self.finish()

    # -- staging helpers -------------------------------------------------------------
    def _layout(self, cells: list[dict], sharded: tuple[str, ...], gpus: int, y: float) -> list[tuple[str, Mobject]]:
        """One GPU's row: full cells with labels, sharded cells as their 1/gpus sliver; left-aligned."""
        template = LedgerRow(cells, unit=self.UNIT, height=self.HEIGHT)
        pieces = []
        for key in template.keys:
            cell = template.cell(key)
            pieces.append((key, slivers(cell[0], gpus)[0] if key in sharded else cell))
        group = VGroup(*(p for _k, p in pieces)).arrange(RIGHT, buff=style.FLUSH)
        group.move_to((self.X0, y, 0), aligned_edge=LEFT)
        return pieces

    def _cut(
        self,
        row: list[tuple[str, Mobject]],
        before: tuple[str, ...],
        after: tuple[str, ...],
        cells: list[dict],
        gpus: int,
        y: float,
        label: VGroup,
        stripes: VGroup,
        beat: Beat,
    ) -> list[tuple[str, Mobject]]:
        """Copy a stage's row down to the next, cut the newly sharded cells into slivers and fly them to the cards."""
        moving = [(k, p.copy()) for k, p in row]
        self.play(
            *(TransformFromCopy(p, m.shift((y - m.get_center()[1]) * UP)) for (_k, p), (_k2, m) in zip(row, moving)),
            FadeIn(label),
            run_time=beat.share(0.15),
        )
        fresh = [k for k in after if k not in before]
        cut = {}
        for key, piece in moving:
            if key in fresh:
                cut[key] = slivers(piece[0], gpus)
        self.play(
            *(FadeOut(VGroup(p[1], p[2])) for k, p in moving if k in fresh),
            *(FadeIn(s) for s in cut.values()),
            *(FadeOut(p[0]) for k, p in moving if k in fresh),
            run_time=beat.share(0.15),
        )
        flights = []
        for pieces in cut.values():
            for sliver, stripe in zip(pieces[1:], stripes[1:]):
                flights.append(sliver.animate.become(stripe.copy()))
        self.play(LaggedStart(*flights, lag_ratio=0.004), FadeIn(stripes[0]), run_time=beat.share(0.3))
        self.add(stripes)
        target = self._layout(cells, after, gpus, y)
        current = [cut[k][0] if k in cut else p for k, p in moving]
        self.play(*(ReplacementTransform(c, t) for c, (_k, t) in zip(current, target)), run_time=beat.share(0.15))
        for pieces in cut.values():
            self.remove(*pieces[1:])
        return target

    def _stage_label(self, name: str, action: str, y: float) -> VGroup:
        """A stage's name over what it cuts, right-aligned left of its row."""
        group = VGroup(
            style.zh(name, size=style.LABEL_SIZE), style.zh(action, size=style.SMALL_SIZE, color=style.MUTED)
        )
        group.arrange(DOWN, aligned_edge=RIGHT, buff=0.06)
        return group.move_to((self.X0 - 0.5, y, 0), aligned_edge=RIGHT)

    @staticmethod
    def _stage_total(fact: Fact, row: list[tuple[str, Mobject]]) -> Mobject:
        """A stage's bytes per card, just right of its row."""
        end = max(p.get_right()[0] for _k, p in row)
        return style.value(fact, size=style.LABEL_SIZE).next_to(
            (end, row[0][1].get_center()[1], 0), RIGHT, buff=style.GAP_M
        )

    def _comm(self, fact: Fact, y: float) -> Mobject:
        """A stage's communication volume, in the communication column."""
        return style.value(fact, size=style.LABEL_SIZE).move_to((self.COMM_X, y, 0))

    @classmethod
    def _rule_line(cls, group: dict, colour: str) -> VGroup:
        """Name, bytes and the phases that use it, in fixed columns."""
        return grid_row(
            [
                style.zh(group["label"], size=style.LABEL_SIZE, color=colour),
                style.zh(group["text"], size=style.LABEL_SIZE),
                style.zh("用在：" + "、".join(group["phases"]), size=style.LABEL_SIZE, color=style.MUTED),
            ],
            cls.RULE_COLUMNS,
        )


class PeakMemoryTimeline(LectureScene):
    """Weights, optimizer state, activations and gradients stacked over one step of V3."""

    ORIGIN = np.array((-5.6, -2.35, 0.0))
    WIDTH = 8.2
    HEIGHT = 4.8
    SIDE_X = 4.75  # the right-hand column: the rule at the top, the schematic inset under it
    RULE_Y, INSET_Y = 2.3, -1.1
    COLUMN_BASE = np.array((-5.2, -2.3, 0))  # the resident column stands here; the activation slices beside it
    WORKINGS = np.array((-3.0, 1.2, 0))  # left edge of the three computed rows
    CAVEATS = np.array((-3.0, -1.5, 0))  # and of the caveats under them

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        line = facts["timeline"].value
        axis = facts["axis"].value
        self.t_end, self.top = line["t"][-1], axis["top"]
        t = line["t"]
        stack = [[0.0] * len(t)]
        for item in ("weights", "optimizer", "activations", "grads"):
            stack.append([a + b for a, b in zip(stack[-1], line[item])])
        colours = (style.BF16, style.FP32, style.FORWARD, style.BACKWARD)

        # -- axes: phases along time (no scale), TiB up the side --------------------------
        x_axis = Line(self.ORIGIN, self.ORIGIN + self.WIDTH * RIGHT, color=style.MUTED, stroke_width=2)
        y_axis = Line(self.ORIGIN, self.ORIGIN + self.HEIGHT * UP, color=style.MUTED, stroke_width=2)
        ticks = VGroup()
        for tick, text in zip(axis["ticks"], axis["labels"]):
            y = self._tib_y(tick)
            ticks.add(
                Line((self.ORIGIN[0] - 0.08, y, 0), (self.ORIGIN[0], y, 0), color=style.MUTED),
                style.zh(text, size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    (self.ORIGIN[0], y, 0), LEFT, buff=style.GAP_SM
                ),
            )
        unit = style.zh("TiB", size=style.SMALL_SIZE, color=style.MUTED).next_to(y_axis, UP, buff=style.GAP_S)
        bounds = (0.0, line["forward_end"], line["backward_end"], line["update_end"])
        phases = VGroup()
        for (start, end), name in zip(itertools.pairwise(bounds), ("前向", "反向", "更新")):
            phases.add(
                style.zh(name, size=style.LABEL_SIZE, color=style.MUTED).move_to(
                    ((self._x(start) + self._x(end)) / 2, self.ORIGIN[1] - 0.3, 0)
                )
            )
        phases[2].next_to((self._x(bounds[2]), self.ORIGIN[1] - 0.3, 0), RIGHT, buff=style.GAP_XS)
        dividers = VGroup(
            *(
                DashedLine(
                    (self._x(b), self.ORIGIN[1], 0),
                    (self._x(b), self._tib_y(self.top), 0),
                    color=style.MUTED,
                    stroke_width=1.5,
                )
                for b in bounds[1:3]
            )
        )
        scope = style.zh("全局总量 · 不分卡", size=style.SMALL_SIZE, color=style.MUTED).to_corner(
            UP + RIGHT, buff=style.EDGE
        )

        with self.narrate("peak_intro") as beat:
            self.play(Create(x_axis), Create(y_axis), run_time=beat.share(0.3))
            self.play(FadeIn(ticks), FadeIn(unit), FadeIn(phases), Create(dividers), run_time=beat.share(0.35))
            self.play(FadeIn(scope), run_time=beat.share(0.2))

        trackers = [ValueTracker(0.0) for _ in colours]
        bands = [
            always_redraw(lambda i=i: self._band(t, stack[i], stack[i + 1], trackers[i].get_value(), colours[i]))
            for i in range(4)
        ]
        w_label = self._inside(f"权重 {facts['weights_tib'].text}", stack[0], stack[1], 20)
        o_label = self._inside(f"优化器状态 {facts['optimizer_tib'].text}", stack[1], stack[2], 20)
        use = Rectangle(
            width=self._x(bounds[3]) - self._x(bounds[2]),
            height=self._tib_y(stack[2][0]) - self._tib_y(stack[1][0]),
            stroke_color=style.HIGHLIGHT,
            stroke_width=4,
        )
        use.move_to(
            (
                (self._x(bounds[2]) + self._x(bounds[3])) / 2,
                (self._tib_y(stack[1][0]) + self._tib_y(stack[2][0])) / 2,
                0,
            )
        )
        use_label = style.zh("只在这一刻用", size=style.LABEL_SIZE, color=style.HIGHLIGHT).next_to(
            use, RIGHT, buff=style.GAP_ML
        )
        with self.narrate("peak_flat") as beat:
            self.add(bands[0], bands[1])
            self.play(
                trackers[0].animate.set_value(self.t_end),
                trackers[1].animate.set_value(self.t_end),
                run_time=beat.share(0.45),
            )
            self.play(FadeIn(w_label), FadeIn(o_label), run_time=beat.share(0.15))
            self.play(Create(use), FadeIn(use_label), run_time=beat.share(0.2))
            self.play(Indicate(use, color=style.HIGHLIGHT), run_time=beat.share(0.15))
        self.play(FadeOut(use), FadeOut(use_label), run_time=0.4)

        peak_a = t.index(line["forward_end"])
        a_point = np.array((self._x(t[peak_a]), self._tib_y(stack[3][peak_a]), 0))
        a_label = style.zh(f"激活 {facts['activations_tib'].text}", size=style.LABEL_SIZE, color=style.FORWARD)
        a_label.next_to(a_point, LEFT, buff=style.GAP_ML).shift(0.2 * UP)
        with self.narrate("peak_activations") as beat:
            self.add(bands[2])
            self.play(trackers[2].animate.set_value(self.t_end), run_time=beat.share(0.75), rate_func=linear)
            self.play(FadeIn(a_label), run_time=beat.share(0.15))

        peak_g = t.index(line["backward_end"])
        g_point = np.array((self._x(t[peak_g]), self._tib_y(stack[4][peak_g]), 0))
        g_label = style.zh(f"梯度 {facts['grads_tib'].text}", size=style.LABEL_SIZE, color=style.BACKWARD)
        g_label.next_to(g_point, UP, buff=style.GAP_M).shift(0.3 * RIGHT)
        with self.narrate("peak_grads") as beat:
            self.add(bands[3])
            self.play(trackers[3].animate.set_value(self.t_end), run_time=beat.share(0.75), rate_func=linear)
            self.play(FadeIn(g_label), run_time=beat.share(0.15))
        for band in bands:
            band.clear_updaters()

        # Each item's peak, then the sum's: here it sits on the activations' peak, and in general it need not.
        dots = VGroup(Dot(a_point, color=style.FORWARD, radius=0.09), Dot(g_point, color=style.BACKWARD, radius=0.09))
        total = VMobject(stroke_color=style.DATA, stroke_width=3)
        total.set_points_as_corners([(self._x(x), self._tib_y(y), 0) for x, y in zip(t, stack[4])])
        inset = self._schematic().move_to((self.SIDE_X, self.INSET_Y, 0))
        with self.narrate("peak_sum") as beat:
            self.play(LaggedStart(*(FadeIn(d, scale=2) for d in dots), lag_ratio=0.5), run_time=beat.share(0.25))
            self.play(Create(total), run_time=beat.share(0.3))
            self.play(FadeIn(inset[0]), Create(inset[1]), run_time=beat.share(0.2))
            self.play(Create(inset[2]), FadeIn(inset[3]), run_time=beat.share(0.2))

        moment = DashedLine(
            (a_point[0], self.ORIGIN[1], 0),
            (a_point[0], self._tib_y(self.top), 0),
            color=style.HIGHLIGHT,
            stroke_width=3,
        )
        largest = style.zh("那一刻最大：优化器状态", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        largest.move_to((self.SIDE_X, self.RULE_Y, 0))
        with self.narrate("peak_rule") as beat:
            self.play(Create(moment), run_time=beat.share(0.3))
            self.play(FadeIn(largest), Indicate(o_label, color=style.HIGHLIGHT), run_time=beat.share(0.5))

        # -- the three computed rows -----------------------------------------------------
        chart = VGroup(
            x_axis,
            y_axis,
            ticks,
            unit,
            phases,
            dividers,
            w_label,
            o_label,
            a_label,
            g_label,
            dots,
            total,
            inset,
            moment,
            largest,
            bands[2],
        )
        column_scale = 4.3 / facts["resident_tib"].value
        base = self.COLUMN_BASE
        parts = VGroup()
        for fact, colour in (
            (facts["weights_tib"], style.BF16),
            (facts["grads_tib"], style.BACKWARD),
            (facts["optimizer_tib"], style.FP32),
        ):
            parts.add(
                bar(
                    0.9,
                    fact.value * column_scale,
                    colour,
                    opacity=style.FILL_SOFT,
                    stroke_color=style.TEXT,
                    stroke_width=1,
                )
            )
        parts.arrange(UP, buff=style.FLUSH).move_to(base, aligned_edge=DOWN)
        resident_label = style.zh("常驻", size=style.LABEL_SIZE).next_to(parts, DOWN, buff=style.GAP_SM)
        rows = (
            VGroup(
                style.zh(
                    f"{facts['params'].text} × {facts['bytes'].text} ÷ {facts['tib'].text}"
                    f" = {facts['resident_tib'].text}",
                    size=style.BODY_SIZE,
                ),
                style.zh(
                    f"{facts['resident_tib'].text} × {facts['kib'].text} ÷ {facts['recompute_gib'].text} = "
                    f"{facts['sequences'].text}",
                    size=style.BODY_SIZE,
                ),
                style.zh(
                    f"{facts['sequences'].text} × {facts['seq'].text} {facts['tokens'].text} token",
                    size=style.BODY_SIZE,
                ),
            )
            .arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_L)
            .move_to(self.WORKINGS, aligned_edge=LEFT)
        )
        with self.narrate("peak_resident") as beat:
            self.play(FadeOut(chart), run_time=beat.share(0.2))
            self.play(
                ReplacementTransform(bands[0], parts[0]),
                ReplacementTransform(bands[3], parts[1]),
                ReplacementTransform(bands[1], parts[2]),
                FadeIn(resident_label),
                run_time=beat.share(0.3),
            )
            self.play(Write(rows[0]), run_time=beat.share(0.35))

        slice_height = column_scale * facts["recompute_gib"].value / facts["kib"].value
        whole = int(facts["sequences"].value)
        slices = VGroup(
            *(
                bar(0.9, slice_height, style.FORWARD, stroke_color=style.BACKGROUND, stroke_width=0.6)
                for _ in range(whole)
            )
        )
        slices.add(bar(0.9, slice_height * (facts["sequences"].value - whole), style.FORWARD))
        slices.arrange(UP, buff=style.FLUSH).move_to(base + 1.15 * RIGHT, aligned_edge=DOWN)
        slices_label = style.zh("激活", size=style.LABEL_SIZE, color=style.FORWARD).next_to(
            slices, DOWN, buff=style.GAP_SM
        )
        count = style.value(facts["sequences"], size=style.LABEL_SIZE, color=style.FORWARD).next_to(
            slices, UP, buff=style.GAP_S
        )
        with self.narrate("peak_break_even") as beat:
            self.play(
                FadeIn(slices_label),
                LaggedStart(*(FadeIn(s) for s in slices), lag_ratio=0.05),
                run_time=beat.share(0.5),
            )
            self.play(FadeIn(count), Write(rows[1]), run_time=beat.share(0.25))
            self.play(Write(rows[2]), run_time=beat.share(0.2))

        caveats = style.caption_stack(
            f"{facts['bytes'].text} 是经典口径；V3 的 m、v 其实存成 bf16",
            f"{facts['recompute_gib'].text} 为自推，未含重算层的工作集：{facts['sequences_round'].text}只当量级看",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        ).move_to(self.CAVEATS, aligned_edge=LEFT)
        with self.narrate("peak_caveat") as beat:
            self.play(
                FadeIn(caveats[0]),
                Indicate(rows[0], color=style.HIGHLIGHT, scale_factor=1.03),
                run_time=beat.share(0.45),
            )
            self.play(
                FadeIn(caveats[1]),
                Indicate(rows[1], color=style.HIGHLIGHT, scale_factor=1.03),
                run_time=beat.share(0.45),
            )
        self.finish()

    # -- geometry ---------------------------------------------------------------------------
    def _x(self, t: float) -> float:
        """The x on screen of time t."""
        return self.ORIGIN[0] + self.WIDTH * t / self.t_end

    def _tib_y(self, tib: float) -> float:
        """The y on screen of a height in TiB."""
        return self.ORIGIN[1] + self.HEIGHT * tib / self.top

    def _band(self, t: list[float], lower: list[float], upper: list[float], upto: float, colour: str) -> VMobject:
        """The stacked band between two curves, from time 0 up to `upto`."""
        keep = [i for i, x in enumerate(t) if x <= upto]
        if not keep or upto <= 0:
            return VMobject()
        top = [(self._x(t[i]), self._tib_y(upper[i]), 0) for i in keep]
        bottom = [(self._x(t[i]), self._tib_y(lower[i]), 0) for i in keep]
        last = keep[-1]
        if last + 1 < len(t) and t[last + 1] > t[last]:
            f = (upto - t[last]) / (t[last + 1] - t[last])
            top.append((self._x(upto), self._tib_y(upper[last] + f * (upper[last + 1] - upper[last])), 0))
            bottom.append((self._x(upto), self._tib_y(lower[last] + f * (lower[last + 1] - lower[last])), 0))
        return Polygon(*top, *reversed(bottom), stroke_width=0, fill_color=colour, fill_opacity=style.FILL_SOFT)

    def _inside(self, text: str, lower: list[float], upper: list[float], at: float) -> Mobject:
        """A band's name inside it, its left edge at time `at`, centred between the band's edges at time 0."""
        label = style.zh(text, size=style.LABEL_SIZE)
        return label.move_to((self._x(at) + label.width / 2, (self._tib_y(lower[0]) + self._tib_y(upper[0])) / 2, 0))

    @staticmethod
    def _schematic() -> VGroup:
        """Two offset bumps (grey, no scale) whose sum peaks between them."""
        width, height = 3.4, 1.5

        def bump(centre: float) -> Callable[[float], float]:
            return lambda x: np.exp(-(((x - centre) / 0.25) ** 2))

        def curve(f: Callable[[float], float], colour: str, stroke: float) -> ParametricFunction:
            return ParametricFunction(
                lambda x: np.array((width * (x - 0.5), height * f(x) / 1.45 - height / 2, 0)),
                t_range=(0, 1),
                color=colour,
                stroke_width=stroke,
            )

        a, b = bump(0.35), bump(0.65)
        parts = VGroup(curve(a, style.SCHEMATIC, 3), curve(b, style.SCHEMATIC, 3))
        total = curve(lambda x: a(x) + b(x), style.DATA, 3)
        peaks = VGroup(
            *(
                Dot(curve.point_from_proportion(x), radius=0.06, color=curve.get_color())
                for curve, x in ((parts[0], 0.35), (parts[1], 0.65), (total, 0.5))
            )
        )
        base = Line((-width / 2, -height / 2, 0), (width / 2, -height / 2, 0), color=style.MUTED, stroke_width=1.5)
        note = style.zh("示意：两峰错开，和的峰在中间", size=style.SMALL_SIZE, color=style.MUTED)
        note.next_to(base, DOWN, buff=style.GAP_SM)
        return VGroup(VGroup(base), VGroup(parts, peaks[:2]), VGroup(total, peaks[2]), note)


class SixNdUnderestimate(LectureScene):
    """6ND counts only the weight matmuls; at 128K attention's weight-free matmuls are most of a layer."""

    LEFT_X = -3.4  # every bar starts here; its name ends just before
    FULL = 7.3  # bar length of the corrected total
    FORMULA = np.array((-4.6, 2.55, 0))  # 「6ND」, with its split and its numbers to the right
    ND_Y, LAYER_Y, ROUTE_Y, GPT3_Y = 0.0, 1.35, -1.2, -2.5  # the bars' rows

    def construct(self) -> None:
        facts = self.facts
        self.show_title()

        six = style.zh("6ND", size=style.TITLE_SIZE, color=style.HIGHLIGHT).move_to(self.FORMULA)
        split = style.zh(
            f"{facts['six'].text} = 前向 {facts['forward_flops'].text} + 反向 {facts['backward_flops'].text}"
            "（每参数、每 token）",
            size=style.LABEL_SIZE,
            color=style.MUTED,
        )
        split.next_to(six, RIGHT, buff=style.GAP_L)
        with self.narrate("sixnd_formula") as beat:
            self.play(Write(six), run_time=beat.share(0.3))
            self.play(FadeIn(split, shift=0.2 * RIGHT), run_time=beat.share(0.4))

        plug = style.zh(
            f"= {facts['six'].text} × {facts['active'].text} × {facts['tokens'].text} = {facts['six_nd'].text}",
            size=style.BODY_SIZE,
        ).next_to(six, RIGHT, buff=style.GAP_ML)
        scale = self.FULL / facts["corrected"].value
        nd_bar = self._flops_bar(facts["six_nd"].value * scale, self.ND_Y, style.COMPUTE)
        nd_name = self._bar_name("6ND 估算", self.ND_Y)
        nd_value = style.value(facts["six_nd"], size=style.LABEL_SIZE).next_to(nd_bar, RIGHT, buff=style.GAP_M)
        with self.narrate("sixnd_plug") as beat:
            self.play(FadeOut(split), run_time=beat.share(0.15))
            self.play(Write(plug), run_time=beat.share(0.4))
            self.play(
                FadeIn(nd_name),
                GrowFromEdge(nd_bar, LEFT),
                TransformFromCopy(plug[-len(facts["six_nd"].text.replace(" ", "")) :], nd_value),
                run_time=beat.share(0.3),
            )

        # One layer's forward at 128K: the weight matmuls, then attention's two weight-free matmuls.
        share = facts["attention_share"].value
        weights_part = self._flops_bar(self.FULL * (1 - share), self.LAYER_Y, style.COMPUTE)
        attention_part = self._flops_bar(self.FULL * share, self.LAYER_Y, style.HIGHLIGHT)
        attention_part.next_to(weights_part, RIGHT, buff=style.FLUSH)
        layer_name = self._bar_name(f"一层前向 · {facts['seq'].text}", self.LAYER_Y)
        w_tag = style.zh("乘权重", size=style.SMALL_SIZE).next_to(weights_part, UP, buff=style.GAP_S)
        a_tag = style.zh("QKᵀ、AV：没有权重", size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(
            attention_part, UP, buff=style.GAP_S
        )
        with self.narrate("sixnd_blind") as beat:
            self.play(FadeIn(layer_name), GrowFromEdge(weights_part, LEFT), FadeIn(w_tag), run_time=beat.share(0.3))
            self.play(GrowFromEdge(attention_part, LEFT), FadeIn(a_tag), run_time=beat.share(0.4))

        a_pct = style.value(facts["attention_share"], size=style.LABEL_SIZE, color=style.BACKGROUND).move_to(
            attention_part
        )
        w_pct = style.value(facts["weight_share"], size=style.LABEL_SIZE, color=style.BACKGROUND).move_to(weights_part)
        link = DashedLine(
            weights_part.get_corner(DOWN + RIGHT),
            (weights_part.get_right()[0], nd_bar.get_top()[1], 0),
            color=style.MUTED,
        )
        with self.narrate("sixnd_share") as beat:
            self.play(FadeIn(a_pct, scale=1.3), run_time=beat.share(0.3))
            self.play(
                FadeIn(w_pct, scale=1.3), Create(link), Indicate(nd_bar, color=style.COMPUTE), run_time=beat.share(0.4)
            )

        grown = self._flops_bar(self.FULL, self.ND_Y, style.COMPUTE)
        grown_value = style.value(facts["corrected"], size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        grown_value.next_to(grown, RIGHT, buff=style.GAP_M)
        times = (
            style.zh(
                f"= 6ND ÷ {facts['weight_share'].text}（{facts['multiplier'].text}）",
                size=style.LABEL_SIZE,
                color=style.HIGHLIGHT,
            )
            .next_to(grown, DOWN, buff=style.GAP_SM)
            .align_to(grown, RIGHT)
        )
        with self.narrate("sixnd_corrected") as beat:
            self.play(
                FadeOut(link),
                Transform(nd_bar, grown),
                ReplacementTransform(nd_value, grown_value),
                nd_name.animate.become(self._bar_name("真实算力", self.ND_Y)),
                run_time=beat.share(0.5),
            )
            self.play(FadeIn(times), run_time=beat.share(0.25))

        route_bar = self._flops_bar(facts["per_operator"].value * scale, self.ROUTE_Y, style.DATA)
        route_name = self._bar_name("按算子逐项加", self.ROUTE_Y)
        route_value = style.value(facts["per_operator"], size=style.LABEL_SIZE)
        route_value.next_to(route_bar, RIGHT, buff=style.GAP_M)
        gap = style.zh(f"两条路相差 {facts['gap'].text} · 都是自推，当量级看", size=style.SMALL_SIZE, color=style.MUTED)
        gap.next_to(route_bar, DOWN, buff=style.GAP_SM).align_to(route_bar, LEFT)
        with self.narrate("sixnd_route") as beat:
            self.play(FadeIn(route_name), GrowFromEdge(route_bar, LEFT), run_time=beat.share(0.35))
            self.play(FadeIn(route_value), run_time=beat.share(0.15))
            self.play(FadeIn(gap), run_time=beat.share(0.2))

        g_share = facts["gpt3_share"].value
        g_weights = self._flops_bar(self.FULL * (1 - g_share), self.GPT3_Y, style.COMPUTE)
        g_attention = self._flops_bar(self.FULL * g_share, self.GPT3_Y, style.HIGHLIGHT).next_to(
            g_weights, RIGHT, buff=style.FLUSH
        )
        g_name = self._bar_name(f"GPT-3 一层 · {facts['gpt3_seq'].text}", self.GPT3_Y)
        g_value = style.value(facts["gpt3_share"], size=style.LABEL_SIZE, color=style.HIGHLIGHT).next_to(
            g_attention, RIGHT, buff=style.GAP_M
        )
        with self.narrate("sixnd_gpt3") as beat:
            self.play(FadeIn(g_name), GrowFromEdge(g_weights, LEFT), run_time=beat.share(0.3))
            self.play(GrowFromEdge(g_attention, LEFT), FadeIn(g_value), run_time=beat.share(0.25))
            self.play(Indicate(g_value, color=style.HIGHLIGHT), run_time=beat.share(0.2))
        self.finish()

    def _flops_bar(self, length: float, y: float, colour: str) -> Mobject:
        """A bar of FLOPs to scale, starting at the bars' common left edge on row y."""
        return bar(length, 0.55, colour).move_to((self.LEFT_X, y, 0), aligned_edge=LEFT)

    def _bar_name(self, text: str, y: float) -> Mobject:
        """A bar's name, ending just left of the bars."""
        return style.zh(text, size=style.LABEL_SIZE).move_to((self.LEFT_X - 0.25, y, 0), aligned_edge=RIGHT)


class Worked125m(LectureScene):
    """GPT-3 Small on one GPU: the resident column, the activation column that outgrows it, recompute."""

    BASE_Y = -2.15  # the columns' names hang under it, above the caption band
    GIB = 1.0  # frame units per GiB
    RIGHT_X = -2.4  # left edge of the right-hand panel
    RES_X, ACT_X = -5.7, -4.1  # the resident and the activation columns, standing on BASE_Y
    CHIPS = 2.65 * UP  # the setup, one chip per fact
    COUNT = np.array((0.5, 0.6, 0))  # the parameter count
    # The right-hand panel: each piece starts at RIGHT_X, centred on its row.
    PANEL = {
        "ledger": 1.6,
        "resident": -0.45,
        "strip": 1.3,
        "kept": -0.15,
        "steps": -2.0,
        "outgrown": 0.4,
        "recompute": -0.9,
        "summary": 0.6,
    }
    RESIDENT_COLUMNS = (Column(0.0), Column(2.2), Column(3.4))  # name, bytes per parameter, GiB
    KEPT_COLUMNS = (Column(0.0), Column(3.3, RIGHT))  # a kept tensor, and its width
    SUMMARY_COLUMNS = (Column(0.8), Column(2.1), Column(4.3))  # the closing table: row name, without, with recompute
    SUMMARY_PITCH = 0.55
    TENSOR_SHADES = (0.4, 0.5)  # neighbouring kept tensors of the strip in two shades, so each reads as its own

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        chips = (
            VGroup(
                *(
                    style.zh(text, size=style.LABEL_SIZE)
                    for text in (
                        f"{facts['params'].text}参数",
                        f"{facts['layers'].text} 层",
                        f"宽 {facts['width'].text}",
                        "一张卡",
                        f"batch {facts['batch'].text} × {facts['seq'].text}",
                    )
                )
            )
            .arrange(RIGHT, buff=0.55)
            .move_to(self.CHIPS)
        )
        dots = VGroup(
            *(
                style.zh("·", size=style.LABEL_SIZE, color=style.MUTED).move_to((a.get_right() + b.get_left()) / 2)
                for a, b in itertools.pairwise(chips)
            )
        )
        with self.narrate("w_intro") as beat:
            self.play(
                LaggedStart(*(FadeIn(c, shift=0.2 * DOWN) for c in chips), lag_ratio=0.3),
                FadeIn(dots),
                run_time=beat.share(0.7),
            )

        d = facts["width"].text
        count = (
            VGroup(
                style.zh(
                    f"{facts['per_layer'].text} · {facts['layers'].text} · {d}² + {facts['vocab'].text} · {d}"
                    f" + {facts['context'].text} · {d}",
                    size=style.BODY_SIZE,
                ),
                style.zh(
                    f"= {facts['params_exact'].text} ≈ {facts['params'].text}",
                    size=style.BODY_SIZE,
                    color=style.HIGHLIGHT,
                ),
            )
            .arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
            .move_to(self.COUNT)
        )
        parts = VGroup(
            style.zh("各层", size=style.SMALL_SIZE, color=style.MUTED),
            style.zh("词表嵌入", size=style.SMALL_SIZE, color=style.MUTED),
            style.zh("位置嵌入", size=style.SMALL_SIZE, color=style.MUTED),
        )
        with self.narrate("w_params") as beat:
            self.play(Write(count[0]), run_time=beat.share(0.45))
            for part, (start, end) in zip(parts, self._term_spans(count[0])):
                part.next_to(VGroup(*count[0][start:end]), UP, buff=style.GAP_S)
            self.play(FadeIn(parts), run_time=beat.share(0.15))
            self.play(FadeIn(count[1], shift=0.2 * DOWN), run_time=beat.share(0.25))
        self.play(FadeOut(VGroup(count, parts)), run_time=0.5)

        # -- resident: the 16-byte row times 1.25 亿, stacked into a column ----------------------------
        row = self._on_panel(LedgerRow(facts["row"].value, unit=0.42, height=0.7), "ledger")
        row_times = style.zh(f"× {facts['params'].text}", size=style.LABEL_SIZE).next_to(row, RIGHT, buff=style.GAP_M)
        x_res, x_act = self.RES_X, self.ACT_X
        segments = VGroup(
            *(
                self._gib_column(x_res, 0, facts[name].value, colour)
                for name, colour in (
                    ("weights_gib", style.BF16),
                    ("grads_gib", style.BF16),
                    ("optimizer_gib", style.FP32),
                )
            )
        )
        segments.arrange(UP, buff=style.FLUSH).move_to((x_res, self.BASE_Y, 0), aligned_edge=DOWN)
        res_name = style.zh("常驻", size=style.LABEL_SIZE).next_to(segments, DOWN, buff=style.GAP_S)
        res_value = style.value(facts["resident_gib"], size=style.LABEL_SIZE).next_to(segments, UP, buff=style.GAP_S)
        per_cell = {cell["key"]: cell["text"] for cell in facts["row"].value}
        lines = VGroup(
            *(
                self._table_line(name, fact.text, size)
                for name, fact, size in (
                    ("bf16 权重", facts["weights_gib"], per_cell["weight"]),
                    ("bf16 梯度", facts["grads_gib"], per_cell["grad"]),
                    ("优化器状态", facts["optimizer_gib"], facts["optimizer_bytes"].text),
                    ("小计", facts["resident_gib"], facts["row"].text),
                )
            )
        )
        self._on_panel(lines.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M), "resident")
        ratio = style.zh(f"是权重的 {facts['resident_ratio'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        ratio.next_to(lines[3], RIGHT, buff=style.GAP_L)
        with self.narrate("w_resident") as beat:
            self.play(FadeIn(row), FadeIn(row_times), run_time=beat.share(0.15))
            sources = (row.cell("weight"), row.cell("grad"), VGroup(row.cell("m"), row.cell("v"), row.cell("master")))
            for source, segment, line in zip(sources, segments, lines):
                self.play(TransformFromCopy(source, segment), FadeIn(line), run_time=beat.share(0.15))
            self.play(FadeIn(res_name), FadeIn(res_value), FadeIn(lines[3]), run_time=beat.share(0.1))
            self.play(FadeIn(ratio), Indicate(segments[0], color=style.HIGHLIGHT), run_time=beat.share(0.1))
        self.play(FadeOut(VGroup(row, row_times, lines, ratio)), run_time=0.5)

        # -- activations: one layer, one token, six tensors ------------------------------------------
        widths = [facts[f"kept_{i}"] for i in range(len(facts["kept_labels"].value))]
        per_unit = 6.0 / facts["kept_per_layer"].value
        strip = VGroup(
            *(
                Rectangle(
                    width=w.value * per_unit,
                    height=0.5,
                    stroke_color=style.BACKGROUND,
                    stroke_width=2,
                    fill_color=style.FORWARD,
                    fill_opacity=self.TENSOR_SHADES[i % 2],
                )
                for i, w in enumerate(widths)
            )
        ).arrange(RIGHT, buff=style.FLUSH)
        self._on_panel(strip, "strip")
        names = VGroup(
            *(
                grid_row(
                    [
                        style.zh(label, size=style.SMALL_SIZE),
                        style.zh(w.text, size=style.SMALL_SIZE, color=style.MUTED),
                    ],
                    self.KEPT_COLUMNS,
                )
                for label, w in zip(facts["kept_labels"].value, widths)
            )
        )
        self._on_panel(names.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S), "kept")
        layer_sum = (
            style.zh(
                f"一层 · 每 token：{facts['kept_per_layer'].text} 个数 = {facts['layer_kib'].text}",
                size=style.LABEL_SIZE,
                color=style.FORWARD,
            )
            .next_to(strip, UP, buff=style.GAP_M)
            .align_to(strip, LEFT)
        )
        with self.narrate("w_layer") as beat:
            self.play(
                LaggedStart(
                    *(AnimationGroup(GrowFromEdge(box, LEFT), FadeIn(name)) for box, name in zip(strip, names)),
                    lag_ratio=0.5,
                ),
                run_time=beat.share(0.6),
            )
            self.play(FadeIn(layer_sum), run_time=beat.share(0.2))

        act = self._gib_column(x_act, self.BASE_Y, facts["activations_gib"].value, style.FORWARD)
        act_name = style.zh("激活", size=style.LABEL_SIZE, color=style.FORWARD).next_to(act, DOWN, buff=style.GAP_S)
        act_value = style.value(facts["activations_gib"], size=style.LABEL_SIZE, color=style.FORWARD).next_to(
            act, UP, buff=style.GAP_S
        )
        steps = VGroup(
            style.zh(f"× {facts['layers'].text} 层 = 每 token {facts['token_kib'].text}", size=style.BODY_SIZE),
            style.zh(
                f"× {facts['tokens'].text} token = {facts['activations_gib'].text}",
                size=style.BODY_SIZE,
                color=style.FORWARD,
            ),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
        self._on_panel(steps, "steps")
        with self.narrate("w_activations") as beat:
            self.play(FadeIn(steps[0], shift=0.2 * DOWN), run_time=beat.share(0.3))
            self.play(FadeIn(steps[1], shift=0.2 * DOWN), run_time=beat.share(0.25))
            self.play(FadeIn(act_name), GrowFromEdge(act, DOWN), FadeIn(act_value), run_time=beat.share(0.35))

        level = DashedLine(
            (x_res - 0.5, segments.get_top()[1], 0),
            (x_act + 0.6, segments.get_top()[1], 0),
            color=style.HIGHLIGHT,
            stroke_width=3,
        )
        outgrown = style.zh(
            f"激活 {facts['activations_gib'].text} ＞ 常驻 {facts['resident_gib'].text}",
            size=style.BODY_SIZE,
            color=style.HIGHLIGHT,
        )
        self._on_panel(outgrown, "outgrown")
        with self.narrate("w_surprise") as beat:
            self.play(FadeOut(VGroup(strip, names, layer_sum, steps)), Create(level), run_time=beat.share(0.3))
            self.play(FadeIn(outgrown), Indicate(act, color=style.HIGHLIGHT), run_time=beat.share(0.4))

        small = self._gib_column(x_act, self.BASE_Y, facts["recompute_gib"].value, style.FORWARD)
        small_value = style.value(facts["recompute_gib"], size=style.LABEL_SIZE, color=style.FORWARD).next_to(
            small, UP, buff=style.GAP_S
        )
        recompute = VGroup(
            style.zh(
                f"全量重算：激活 {facts['activations_gib'].text} → {facts['recompute_gib'].text}"
                f"（省 {facts['saving'].text}）",
                size=style.BODY_SIZE,
            ),
            style.zh(
                f"算力 {facts['passes_keep'].text} → {facts['passes_recompute'].text}（{facts['extra_compute'].text}）",
                size=style.BODY_SIZE,
                color=style.COMPUTE,
            ),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
        self._on_panel(recompute, "recompute")
        with self.narrate("w_recompute") as beat:
            self.play(FadeOut(outgrown), FadeOut(level), run_time=beat.share(0.1))
            self.play(
                Transform(act, small),
                FadeOut(act_value),
                FadeIn(small_value),
                FadeIn(recompute[0]),
                run_time=beat.share(0.45),
            )
            act_value = small_value
            self.play(FadeIn(recompute[1]), run_time=beat.share(0.25))

        # The two totals as stacks: resident + activations, without and with recompute.
        keep_act = self._gib_column(x_res, segments.get_top()[1], facts["activations_gib"].value, style.FORWARD)
        keep_total = style.value(facts["total_keep"], size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        keep_total.next_to(keep_act, UP, buff=style.GAP_S)
        rec_res = segments.copy().move_to((x_act, self.BASE_Y, 0), aligned_edge=DOWN)
        rec_total = style.value(facts["total_recompute"], size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        rec_total.next_to(rec_res, UP, buff=style.GAP_S + facts["recompute_gib"].value * self.GIB)
        stack_names = VGroup(
            *(
                style.zh(text, size=style.SMALL_SIZE).next_to(column, DOWN, buff=style.GAP_SM)
                for text, column in (("不开重算", segments), ("开了重算", rec_res))
            )
        )
        table = self._summary(facts)
        with self.narrate("w_table") as beat:
            self.play(FadeOut(VGroup(recompute, res_name, act_name, res_value, act_value)), run_time=beat.share(0.1))
            self.play(
                GrowFromEdge(keep_act, DOWN),
                TransformFromCopy(segments, rec_res),
                act.animate.move_to(rec_res.get_top(), aligned_edge=DOWN),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(stack_names), FadeIn(keep_total), FadeIn(rec_total), run_time=beat.share(0.1))
            self.play(
                LaggedStart(*(FadeIn(r, shift=0.2 * RIGHT) for r in table), lag_ratio=0.3), run_time=beat.share(0.3)
            )
            self.play(Indicate(table[3], color=style.HIGHLIGHT), run_time=beat.share(0.15))
        self.finish()

    def _gib_column(self, x: float, y: float, gib: float, colour: str) -> Mobject:
        """A column of GiB to scale, standing on (x, y)."""
        column = bar(0.9, gib * self.GIB, colour, opacity=style.FILL_SOFT, stroke_color=style.TEXT, stroke_width=1)
        return column.move_to((x, y, 0), aligned_edge=DOWN)

    @staticmethod
    def _term_spans(formula: Mobject) -> list[tuple[int, int]]:
        """Glyph ranges of the three terms of 'a · b · c² + d · e + f · g' (split at the '+' glyphs)."""
        text = formula.text.replace(" ", "")
        cuts = [i for i, ch in enumerate(text) if ch == "+"]
        return [(0, cuts[0]), (cuts[0] + 1, cuts[1]), (cuts[1] + 1, len(text))]

    def _on_panel(self, mobject: Mobject, row: str) -> Mobject:
        """Put a piece of the right-hand panel on its row, starting at the panel's left edge."""
        return mobject.move_to((self.RIGHT_X, self.PANEL[row], 0), aligned_edge=LEFT)

    @classmethod
    def _table_line(cls, name: str, value: str, per_param: str) -> VGroup:
        """One line of the resident table: what, bytes per parameter, GiB."""
        return grid_row(
            [
                style.zh(name, size=style.LABEL_SIZE),
                style.zh(per_param, size=style.LABEL_SIZE, color=style.MUTED),
                style.zh(value, size=style.LABEL_SIZE),
            ],
            cls.RESIDENT_COLUMNS,
        )

    @classmethod
    def _summary(cls, facts: FigureFacts) -> VGroup:
        """The page's two-column table, on the panel's grid, its first row on the panel's "summary" row."""
        rows = (
            ("", "不开重算", "开了重算"),
            ("常驻", facts["resident_gib"].text, facts["resident_gib"].text),
            ("激活", facts["activations_gib"].text, facts["recompute_gib"].text),
            ("合计", facts["total_keep"].text, facts["total_recompute"].text),
            ("算力", facts["passes_keep"].text, f"{facts['passes_recompute'].text}（{facts['extra_compute'].text}）"),
        )
        table = VGroup(
            *(
                text_row(
                    row,
                    cls.SUMMARY_COLUMNS,
                    -cls.SUMMARY_PITCH * r,
                    color=style.HIGHLIGHT if r == 3 else (style.MUTED if r == 0 else style.TEXT),
                )
                for r, row in enumerate(rows)
            )
        )
        return table.shift((cls.RIGHT_X, cls.PANEL["summary"], 0))
