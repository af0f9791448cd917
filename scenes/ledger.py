"""Chapter 3b–5, ledger: staging only; every number comes from tools.chapters.ledger."""

from __future__ import annotations

import math

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Brace,
    BraceBetweenPoints,
    Create,
    CurvedArrow,
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowFromCenter,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    NumberLine,
    Rectangle,
    ReplacementTransform,
    Square,
    SurroundingRectangle,
    TransformFromCopy,
    ValueTracker,
    VGroup,
    Write,
    always_redraw,
    linear,
)

from scenes import style
from scenes.base import LectureScene

# -- §3.1–§3.4 and the checkpoint -----------------------------------------------

class Ledger16Bytes(LectureScene):
    """Five cells per parameter, 2 against 12, and the state cells each optimizer keeps."""

    def construct(self):
        facts = self.facts
        self.show_title()
        cells = facts["ledger"].value
        row = style.LedgerRow(cells, unit=0.7, height=1.0).move_to(0.9 * UP)
        tags = VGroup(*(style.zh(c["precision"], size=style.SMALL_SIZE, color=style.PRECISION[c["precision"]])
                        .next_to(row.cell(c["key"]), UP, buff=0.12) for c in cells))

        with self.narrate("l16_intro") as cue:
            frame = Rectangle(width=row.width, height=row.height, color=style.MUTED).move_to(row)
            frame.set_stroke(style.MUTED, 2, opacity=0.6)
            self.play(Create(frame), run_time=0.5 * cue.duration)
        for cue_id, keys in (("l16_weight", ["weight"]), ("l16_grad", ["grad"]), ("l16_moments", ["m", "v"]),
                             ("l16_master", ["master"])):
            with self.narrate(cue_id) as cue:
                self.play(*(FadeIn(row.cell(k), shift=0.4 * DOWN) for k in keys),
                          *(FadeIn(tags[row.keys.index(k)]) for k in keys), run_time=0.35 * cue.duration)
                self.play(*(Indicate(row.cell(k), color=style.HIGHLIGHT, scale_factor=1.05) for k in keys),
                          run_time=0.3 * cue.duration)
        self.remove(frame)

        with self.narrate("l16_sum") as cue:
            formula = style.zh(facts["sum"].text, size=style.BODY_SIZE)
            unit = style.zh("B", size=style.BODY_SIZE)
            total = VGroup(formula, unit).arrange(RIGHT, buff=0.12).next_to(row, DOWN, buff=0.45)
            glyphs = [formula[i] for i in range(0, 2 * len(cells), 2)]  # 2＋2＋…: a term every other glyph
            self.play(*(ReplacementTransform(row.cell(c["key"])[2].copy(), g) for c, g in zip(cells, glyphs)),
                      run_time=0.45 * cue.duration)
            rest = VGroup(*(formula[i] for i in range(len(formula)) if formula[i] not in glyphs), unit)
            self.play(FadeIn(rest), run_time=0.25 * cue.duration)

        with self.narrate("l16_ratio") as cue:
            side = VGroup(row.cell("m"), row.cell("v"), row.cell("master"))
            optimizer = Brace(side, DOWN, buff=0.1, color=style.FP32)
            optimizer_label = style.zh(f"优化器 {facts['optimizer'].text}", size=style.BODY_SIZE, color=style.FP32)
            optimizer_label.next_to(optimizer, DOWN, buff=0.12)
            model_label = style.zh(f"权重 {facts['weight'].text}", size=style.BODY_SIZE, color=style.BF16)
            model_brace = Brace(row.cell("weight"), DOWN, buff=0.1, color=style.BF16)
            model_label.next_to(model_brace, DOWN, buff=0.12)
            self.play(FadeOut(total), run_time=0.1 * cue.duration)
            self.play(GrowFromCenter(model_brace), FadeIn(model_label), run_time=0.2 * cue.duration)
            self.play(GrowFromCenter(optimizer), FadeIn(optimizer_label),
                      row.cell("grad").animate.set_opacity(0.35), run_time=0.25 * cue.duration)
            box = SurroundingRectangle(side, color=style.FP32, buff=0.08, stroke_width=5)
            self.play(Create(box), run_time=0.2 * cue.duration)

        with self.narrate("l16_caveat") as cue:
            caveat = style.zh("ZeRO 论文的经典口径：一种配置，不是定律", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            caveat.to_edge(DOWN, buff=1.4)
            self.play(FadeIn(caveat, shift=0.2 * UP), run_time=0.3 * cue.duration)

        # The band: the row moves up, compact; each optimizer takes copies of the cells it keeps.
        compact = style.LedgerRow(cells, unit=0.45, height=0.7).to_edge(UP, buff=1.05)
        band = facts["band"].value
        entries = VGroup()
        state_rows = []
        for index, entry in enumerate(band):
            y = 1.86 - 0.7 * index
            year = style.zh(entry["year"] or "", size=style.LABEL_SIZE, color=style.MUTED)
            name = style.zh(entry["name"], size=style.LABEL_SIZE)
            note = style.zh(entry["note"], size=style.SMALL_SIZE, color=style.MUTED)
            year.move_to((-6.0, y, 0))
            name.move_to((-4.4, y, 0))
            if entry["state"]:
                state = style.LedgerRow(entry["state"], unit=0.32, height=0.6)
            else:
                state = style.zh("无状态", size=style.SMALL_SIZE, color=style.MUTED)
            state.move_to((-3.0, y, 0), aligned_edge=LEFT)
            note.move_to((-0.3, y, 0), aligned_edge=LEFT)
            entries.add(VGroup(year, name, state, note))
            state_rows.append(state)
        axis = Line((-6.65, entries[1].get_y() + 0.3, 0), (-6.65, entries[-1].get_y() - 0.3, 0),
                    color=style.MUTED, stroke_width=2)

        groups = {"l16_band_early": [0, 1], "l16_band_adaptive": [2, 3], "l16_band_adam": [4, 5],
                  "l16_band_muon": [6]}
        for cue_id, indices in groups.items():
            with self.narrate(cue_id) as cue:
                if cue_id == "l16_band_early":
                    self.play(FadeOut(VGroup(model_brace, model_label, optimizer, optimizer_label, box, caveat, tags)),
                              ReplacementTransform(row, compact), run_time=0.2 * cue.duration)
                    self.play(Create(axis), run_time=0.1 * cue.duration)
                for i in indices:
                    entry, state = band[i], state_rows[i]
                    self.play(FadeIn(entries[i][:2], shift=0.2 * RIGHT), run_time=0.12 * cue.duration)
                    if entry["state"]:
                        self.play(*(TransformFromCopy(compact.cell(c["key"]), state.cell(c["key"]))
                                    for c in entry["state"]), run_time=0.2 * cue.duration)
                    else:
                        self.play(FadeIn(state), run_time=0.1 * cue.duration)
                    self.play(FadeIn(entries[i][3]), run_time=0.08 * cue.duration)

        with self.narrate("l16_no_curves") as cue:
            rule = style.zh("只比结构，不比收敛：没有实测，不画曲线", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            rule.next_to(entries, DOWN, buff=0.1).align_to(entries, LEFT)
            self.play(FadeIn(rule, shift=0.2 * UP), run_time=0.3 * cue.duration)
        self.show_source()
        self.wait(1.5)



class MixedPrecisionSame16(LectureScene):
    """Pure fp32 against mixed precision: the 2 + 2 saved is eaten by the master copy."""

    UNIT = 0.6
    LEFT_EDGE = -4.4

    def construct(self):
        facts = self.facts
        self.show_title()
        with self.narrate("mp_myth") as cue:
            myth = style.zh("「用了混合精度，显存省一半？」", size=style.BODY_SIZE, color=style.HIGHLIGHT)
            myth.move_to(2.55 * UP)
            self.play(FadeIn(myth, shift=0.2 * DOWN), run_time=0.4 * cue.duration)

        pure = self._row(facts["pure"], 1.3)
        pure_name = style.zh("纯 fp32", size=style.LABEL_SIZE).next_to(pure, LEFT, buff=0.35)
        pure_sum = style.value(facts["pure_sum"], size=style.LABEL_SIZE).next_to(pure, DOWN, buff=0.2)
        line = DashedLine(pure.get_corner(UP + RIGHT) + 0.35 * UP, pure.get_corner(DOWN + RIGHT) + 2.9 * DOWN,
                          color=style.MUTED, stroke_width=2)
        with self.narrate("mp_pure") as cue:
            self.play(FadeIn(pure_name), run_time=0.1 * cue.duration)
            self.play(LaggedStart(*(FadeIn(c, shift=0.3 * DOWN) for c in pure), lag_ratio=0.3),
                      run_time=0.4 * cue.duration)
            self.play(Write(pure_sum), Create(line), run_time=0.3 * cue.duration)

        mixed = self._row(facts["mixed"], -1.0)
        mixed_name = style.zh("混合精度", size=style.LABEL_SIZE).next_to(mixed, LEFT, buff=0.35)
        mixed_name.align_to(pure_name, RIGHT)
        shrunk = VGroup(*(mixed.cell(k).copy() for k in ("weight", "grad", "m", "v")))
        with self.narrate("mp_shrink") as cue:
            start = pure.copy()
            self.play(FadeIn(mixed_name), start.animate.shift((mixed.get_y() - pure.get_y()) * UP),
                      run_time=0.3 * cue.duration)
            self.play(ReplacementTransform(start, shrunk), run_time=0.35 * cue.duration)
            tags = VGroup(*(style.zh(f"省 {facts[name].text}", size=style.SMALL_SIZE, color=style.BF16)
                            .next_to(shrunk[i], UP, buff=0.12) for i, name in ((0, "weight_saved"), (1, "grad_saved"))))
            gap = Rectangle(width=mixed.cell("master").width, height=mixed.height, color=style.HIGHLIGHT,
                            stroke_width=2).move_to(mixed.cell("master"))
            gap.set_fill(style.HIGHLIGHT, opacity=0.12)
            self.play(FadeIn(tags), Create(gap), run_time=0.25 * cue.duration)

        with self.narrate("mp_master") as cue:
            self.play(FadeIn(mixed.cell("master"), shift=1.5 * LEFT), run_time=0.4 * cue.duration)
            self.play(FadeOut(gap), Indicate(mixed.cell("master"), color=style.HIGHLIGHT, scale_factor=1.05),
                      run_time=0.35 * cue.duration)
        self.remove(shrunk)
        self.add(mixed)

        mixed_sum = style.value(facts["mixed_sum"], size=style.LABEL_SIZE).next_to(mixed, DOWN, buff=0.2)
        with self.narrate("mp_equal") as cue:
            self.play(Write(mixed_sum), FadeOut(tags), run_time=0.35 * cue.duration)
            equal = style.zh(f"{facts['pure'].text} ＝ {facts['mixed'].text}", size=style.BODY_SIZE,
                             color=style.HIGHLIGHT).move_to(2.55 * UP)
            self.play(ReplacementTransform(myth, equal),
                      Indicate(line, color=style.HIGHLIGHT), run_time=0.4 * cue.duration)

        accumulate = self._row(facts["accumulate"], -1.0)
        accumulate_sum = style.value(facts["accumulate_sum"], size=style.LABEL_SIZE).next_to(accumulate, DOWN, buff=0.2)
        accumulate_sum.align_to(mixed_sum, LEFT)
        with self.narrate("mp_accum") as cue:
            tag = style.zh("fp32 累加器", size=style.SMALL_SIZE, color=style.FP32)
            tag.next_to(mixed.cell("grad"), UP, buff=0.12)
            self.play(FadeIn(tag), Indicate(mixed.cell("grad"), color=style.FP32), run_time=0.4 * cue.duration)
            self.play(ReplacementTransform(mixed, accumulate), tag.animate.next_to(accumulate.cell("grad"), UP, buff=0.12),
                      ReplacementTransform(mixed_sum, accumulate_sum), run_time=0.35 * cue.duration)
            edge = (line.get_x(), accumulate.get_top()[1], 0)
            over = BraceBetweenPoints(edge, accumulate.get_corner(UP + RIGHT), UP, buff=0.05, color=style.BAD)
            over_label = style.zh("超出", size=style.SMALL_SIZE, color=style.BAD).next_to(over, UP, buff=0.05)
            short = DashedLine(line.get_start(), edge + 0.05 * UP, color=style.MUTED, stroke_width=2)
            self.play(ReplacementTransform(line, short), GrowFromCenter(over), FadeIn(over_label),
                      Indicate(accumulate_sum, color=style.BAD), run_time=0.2 * cue.duration)

        with self.narrate("mp_point") as cue:
            point = style.caption_stack("混合精度换来的：算得更快，激活与通信更小", "都不在常驻这本账上",
                                        size=style.LABEL_SIZE)
            point[1].set_color(style.HIGHLIGHT)
            point.to_edge(DOWN, buff=1.0).set_x(-0.8)
            self.play(FadeIn(point[0], shift=0.2 * UP), run_time=0.3 * cue.duration)
            self.play(FadeIn(point[1], shift=0.2 * UP), run_time=0.25 * cue.duration)
        self.show_source()
        self.wait(1.5)

    def _row(self, fact, y):
        row = style.LedgerRow(fact.value, unit=self.UNIT, height=0.9)
        return row.move_to((self.LEFT_EDGE, y, 0), aligned_edge=LEFT)


class WhyFp32Bf16(LectureScene):
    """Bit layouts, real bf16 arithmetic at 1.0, and the line the criterion draws through the ledger."""

    BIT = 0.26
    BITS_LEFT = -3.6

    def construct(self):
        facts = self.facts
        self.show_title()
        layouts = {f["name"]: f for f in facts["layouts"].value}
        rows = {name: self._bits(layouts[name], y) for name, y in (("fp32", 2.2), ("bf16", 1.1), ("fp16", 0.0))}
        names = {name: style.zh(name, size=style.BODY_SIZE, color=style.PRECISION[name])
                 .next_to(rows[name], LEFT, buff=0.35) for name in rows}
        labels = {name: self._bit_labels(rows[name], layouts[name], name) for name in rows}

        with self.narrate("fb_fp32") as cue:
            self.play(FadeIn(names["fp32"]), LaggedStart(*(FadeIn(b) for b in rows["fp32"]), lag_ratio=0.05),
                      run_time=0.45 * cue.duration)
            sign = style.zh("符号", size=style.SMALL_SIZE, color=style.MUTED).next_to(rows["fp32"][0], UP, buff=0.1)
            self.play(FadeIn(labels["fp32"]), FadeIn(sign), run_time=0.25 * cue.duration)

        with self.narrate("fb_bf16") as cue:
            high = Brace(rows["fp32"][:16], UP, buff=0.05, color=style.BF16)
            self.play(GrowFromCenter(high), FadeOut(sign), run_time=0.2 * cue.duration)
            self.play(FadeIn(names["bf16"]), TransformFromCopy(rows["fp32"][:16], rows["bf16"]),
                      run_time=0.4 * cue.duration)
            self.play(FadeIn(labels["bf16"]), FadeOut(high), run_time=0.2 * cue.duration)

        with self.narrate("fb_fp16") as cue:
            self.play(FadeIn(names["fp16"]), TransformFromCopy(rows["bf16"], rows["fp16"]), run_time=0.45 * cue.duration)
            self.play(FadeIn(labels["fp16"]), run_time=0.25 * cue.duration)

        with self.narrate("fb_range") as cue:
            axis, marks = self._range_line()
            self.play(Create(axis), run_time=0.15 * cue.duration)
            self.play(FadeIn(marks[0]), run_time=0.12 * cue.duration)
            self.play(TransformFromCopy(marks[0][0], marks[1][0]), FadeIn(marks[1][1]), run_time=0.15 * cue.duration)
            gap = BraceBetweenPoints(marks[0][0].get_center(), marks[1][0].get_center(), DOWN, color=style.BAD)
            gap_label = style.zh(f"少 {facts['binades_lost'].text} 个二进制数量级", size=style.LABEL_SIZE,
                                 color=style.BAD).next_to(gap, DOWN, buff=0.1)
            self.play(GrowFromCenter(gap), FadeIn(gap_label), run_time=0.2 * cue.duration)
            verdict = style.zh("fp16 缺的是范围，不是位数", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            verdict.next_to(gap_label, DOWN, buff=0.15)
            self.play(FadeIn(verdict, shift=0.2 * LEFT), run_time=0.15 * cue.duration)
        layout_part = VGroup(*rows.values(), *names.values(), *labels.values(), axis, marks, gap, gap_label, verdict)

        # Ⓑ bf16 near 1.0: a number line whose ticks are the bf16 values.
        cell = facts["cell"].value
        line = NumberLine(x_range=[1.0 - cell / 3, 1.0 + 2.3 * cell, cell], length=2.3 * 4 + 4 / 3,
                          include_ticks=False, color=style.MUTED).move_to((0, 0.9, 0))
        line.shift((-4.5 - line.n2p(1.0)[0]) * RIGHT)
        ticks = VGroup(*(Line(line.n2p(1.0 + k * cell) + 0.25 * UP, line.n2p(1.0 + k * cell) + 0.25 * DOWN,
                              color=style.BF16, stroke_width=4) for k in range(3)))
        half = DashedLine(line.n2p(1.0 + cell / 2) + 0.18 * UP, line.n2p(1.0 + cell / 2) + 0.18 * DOWN,
                          color=style.MUTED)
        half_label = style.zh(f"半格 {facts['half_cell'].text}", size=style.SMALL_SIZE, color=style.MUTED)
        half_label.next_to(half, DOWN, buff=0.12)
        tick_labels = VGroup(style.value(facts["one"], size=style.LABEL_SIZE).next_to(ticks[0], DOWN, buff=0.12),
                             style.value(facts["full_result"], size=style.LABEL_SIZE).next_to(ticks[1], DOWN, buff=0.12))
        name = style.zh("bf16", size=style.BODY_SIZE, color=style.BF16).next_to(line, LEFT, buff=0.3)
        dot = Dot(line.n2p(1.0), radius=0.13, color=style.HIGHLIGHT)
        with self.narrate("fb_cell") as cue:
            self.play(FadeOut(layout_part), run_time=0.15 * cue.duration)
            self.play(Create(line), FadeIn(name), FadeIn(ticks), FadeIn(tick_labels), run_time=0.25 * cue.duration)
            brace = BraceBetweenPoints(ticks[0].get_top(), ticks[1].get_top(), UP, color=style.BF16)
            width = style.zh(f"一格 ＝ {facts['cell'].text} ＝ {facts['cell_decimal'].text}", size=style.LABEL_SIZE,
                             color=style.BF16).next_to(brace, UP, buff=0.1)
            self.play(GrowFromCenter(brace), FadeIn(width), FadeIn(dot), run_time=0.3 * cue.duration)

        with self.narrate("fb_small") as cue:
            step = style.zh(f"＋{facts['small_step'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            self.play(Create(half), FadeIn(half_label), run_time=0.15 * cue.duration)
            target = line.n2p(1.0 + facts["small_step"].value)
            step.next_to(target, DOWN, buff=0.75)
            self.play(dot.animate.move_to(target), FadeIn(step), run_time=0.3 * cue.duration)
            back = style.zh(f"舍回 {facts['small_result'].text}", size=style.LABEL_SIZE, color=style.BAD)
            back.move_to(step)
            self.play(dot.animate.move_to(line.n2p(1.0)).set_color(style.BAD), ReplacementTransform(step, back),
                      run_time=0.3 * cue.duration)

        with self.narrate("fb_full") as cue:
            self.play(dot.animate.move_to(line.n2p(1.0 + cell)).set_color(style.GOOD), FadeOut(back),
                      run_time=0.4 * cue.duration)
            self.play(Indicate(tick_labels[1], color=style.GOOD), run_time=0.3 * cue.duration)

        progress = ValueTracker(0)
        bar_frame = Rectangle(width=6.0, height=0.3, color=style.MUTED, stroke_width=2).move_to((0.5, -0.6, 0))
        bar = always_redraw(lambda: Rectangle(width=max(0.001, 6.0 * progress.get_value()), height=0.3,
                                              stroke_width=0, fill_color=style.HIGHLIGHT, fill_opacity=0.6)
                            .move_to(bar_frame, aligned_edge=LEFT))
        bar_label = style.zh(f"每次＋{facts['repeat_step'].text}，连加 {facts['repeats'].text} 次",
                             size=style.LABEL_SIZE).next_to(bar_frame, LEFT, buff=0.3)
        hops = 24  # drawn hops: each one a try that rounds back (the real loop makes 1,000)
        ghost = always_redraw(lambda: Dot(line.n2p(1.0 + facts["repeat_step"].value), radius=0.1,
                                          color=style.HIGHLIGHT)
                              .set_opacity(0.8 * (1 - (progress.get_value() * hops) % 1) * (0 < progress.get_value() < 1)))
        with self.narrate("fb_repeat") as cue:
            self.play(dot.animate.move_to(line.n2p(1.0)).set_color(style.HIGHLIGHT), FadeOut(brace), FadeOut(width),
                      FadeIn(bar_frame), FadeIn(bar_label), run_time=0.15 * cue.duration)
            self.add(bar, ghost)
            self.play(progress.animate.set_value(1), run_time=0.65 * cue.duration, rate_func=linear)
            result = style.zh(f"还是 {facts['bf16_sum'].text}", size=style.LABEL_SIZE, color=style.BAD)
            result.next_to(dot, UP, buff=0.3)
            self.play(FadeIn(result), Indicate(dot, color=style.BAD), run_time=0.15 * cue.duration)

        fp32 = NumberLine(x_range=[1.0, 2.1, 1.0], length=9.9, include_ticks=False, color=style.MUTED)
        fp32.shift((-4.5 - fp32.n2p(1.0)[0]) * RIGHT + (-2.1 - fp32.get_y()) * UP)
        fp32_ticks = VGroup(*(Line(fp32.n2p(v) + 0.2 * UP, fp32.n2p(v) + 0.2 * DOWN, color=style.FP32, stroke_width=4)
                              for v in (1.0, 2.0)))
        fp32_labels = VGroup(style.value(facts["one"], size=style.LABEL_SIZE).next_to(fp32_ticks[0], DOWN, buff=0.12),
                             style.zh(f"应为 {facts['exact_sum'].text}", size=style.LABEL_SIZE, color=style.MUTED)
                             .next_to(fp32_ticks[1], DOWN, buff=0.12))
        fp32_name = style.zh("fp32", size=style.BODY_SIZE, color=style.FP32).next_to(fp32, LEFT, buff=0.3)
        path = facts["fp32_path"].value
        fp32_dot = always_redraw(lambda: Dot(fp32.n2p(path[round(progress.get_value() * (len(path) - 1))]),
                                             radius=0.13, color=style.FP32))
        with self.narrate("fb_fp32_loop") as cue:
            self.play(Create(fp32), FadeIn(fp32_name), FadeIn(fp32_ticks), FadeIn(fp32_labels),
                      run_time=0.15 * cue.duration)
            progress.set_value(0)
            self.add(fp32_dot)
            self.play(progress.animate.set_value(1), run_time=0.45 * cue.duration, rate_func=linear)
            final = style.value(facts["fp32_sum"], size=style.LABEL_SIZE, color=style.FP32)
            final.next_to(fp32_dot, UP, buff=0.2)
            self.play(FadeIn(final), run_time=0.15 * cue.duration)
        rounding_part = VGroup(line, ticks, half, half_label, tick_labels, name, dot, bar_frame, bar, bar_label, ghost,
                               result, fp32, fp32_ticks, fp32_labels, fp32_name, fp32_dot, final)

        # Ⓒ the ledger again: what never forgets stays fp32.
        row = style.LedgerRow(facts["ledger"].value, unit=0.6, height=0.9).move_to(1.3 * UP)
        v3_row = style.LedgerRow(facts["v3_moments"].value, unit=0.6, height=0.9).move_to(1.3 * UP)
        with self.narrate("fb_rule_master") as cue:
            self.play(FadeOut(rounding_part), FadeIn(row, shift=0.3 * DOWN), run_time=0.25 * cue.duration)
            master_tag = self._verdict(row.cell("master"), "老的贡献永远不走", "必须 fp32", style.FP32)
            self.play(Indicate(row.cell("master"), color=style.HIGHLIGHT, scale_factor=1.05), FadeIn(master_tag),
                      run_time=0.35 * cue.duration)

        with self.narrate("fb_rule_moments") as cue:
            self.play(Indicate(VGroup(row.cell("m"), row.cell("v")), color=style.HIGHLIGHT, scale_factor=1.03),
                      run_time=0.3 * cue.duration)
            self.play(ReplacementTransform(row, v3_row), master_tag.animate.shift(
                (v3_row.cell("master").get_x() - row.cell("master").get_x()) * RIGHT), run_time=0.35 * cue.duration)
            moments_tag = self._verdict(VGroup(v3_row.cell("m"), v3_row.cell("v")), "老的会衰减", "bf16 也行",
                                        style.BF16)
            self.play(FadeIn(moments_tag), run_time=0.2 * cue.duration)

        with self.narrate("fb_rule") as cue:
            used_tag = self._verdict(VGroup(v3_row.cell("weight"), v3_row.cell("grad")), "用完就扔", "bf16", style.BF16)
            self.play(FadeIn(used_tag), Indicate(v3_row.cell("grad"), color=style.HIGHLIGHT), run_time=0.3 * cue.duration)
            rule = style.caption_stack("分界不在累不累加，在老的贡献走不走",
                                       "口子：随机舍入下 bf16 主权重也可行，需额外支持，不推荐", size=style.LABEL_SIZE)
            rule[0].set_color(style.HIGHLIGHT)
            rule[1].scale(style.SMALL_SIZE / style.LABEL_SIZE).set_color(style.MUTED).align_to(rule[0], LEFT)
            rule.move_to(1.6 * DOWN)
            self.play(FadeIn(rule[0], shift=0.2 * UP), run_time=0.25 * cue.duration)
            self.play(FadeIn(rule[1]), run_time=0.2 * cue.duration)
        self.show_source()
        self.wait(1.0)

    def _bits(self, layout, y):
        """One box per bit: sign grey, exponent solid, mantissa light, in the format's colour."""
        colour = style.PRECISION[layout["name"]]
        boxes = VGroup()
        for part, count in (("sign", layout["sign"]), ("exponent", layout["exponent"]), ("mantissa", layout["mantissa"])):
            fill, opacity = (style.MUTED, 0.6) if part == "sign" else (colour, 0.9 if part == "exponent" else 0.3)
            for _ in range(count):
                boxes.add(Rectangle(width=self.BIT, height=0.42, stroke_color=style.TEXT, stroke_width=1,
                                    fill_color=fill, fill_opacity=opacity))
        boxes.arrange(RIGHT, buff=0)
        return boxes.move_to((self.BITS_LEFT, y, 0), aligned_edge=LEFT)

    def _bit_labels(self, boxes, layout, name):
        exp = boxes[1:1 + layout["exponent"]]
        man = boxes[1 + layout["exponent"]:]
        return VGroup(
            style.zh(f"{self.facts[f'{name}_exp'].text} 位指数", size=style.SMALL_SIZE).next_to(exp, DOWN, buff=0.08),
            style.zh(f"{self.facts[f'{name}_man'].text} 位尾数", size=style.SMALL_SIZE).next_to(man, DOWN, buff=0.08),
        )

    def _range_line(self):
        """Smallest normal numbers on a log₂ axis: where fp16 stops and where bf16 / fp32 stop."""
        facts = self.facts
        axis = NumberLine(x_range=[-130, 0, 2], length=10.3, include_ticks=False, color=style.MUTED)
        axis.move_to((1.35, -1.55, 0))
        marks = VGroup()
        for fact, colour, who in ((facts["bf16_min_normal"], style.BF16, "bf16 / fp32"),
                                  (facts["fp16_min_normal"], style.FP16, "fp16")):
            point = Dot(axis.n2p(math.log2(fact.value)), radius=0.11, color=colour)
            label = style.zh(f"{who}：{fact.text}", size=style.LABEL_SIZE, color=colour).next_to(point, UP, buff=0.15)
            if label.get_left()[0] < axis.get_left()[0]:
                label.align_to(point, LEFT).shift(0.1 * LEFT)
            marks.add(VGroup(point, label))
        caption = style.caption_stack("最小正规数", "（对数轴）", size=style.SMALL_SIZE, color=style.MUTED)
        caption.next_to(axis, LEFT, buff=0.2)
        return VGroup(axis, caption), marks

    @staticmethod
    def _verdict(cells, first, second, colour):
        tag = VGroup(style.zh(first, size=style.SMALL_SIZE), style.zh(second, size=style.LABEL_SIZE, color=colour))
        return tag.arrange(DOWN, buff=0.1).next_to(cells, DOWN, buff=0.2)


class OptimizerBytesTable(LectureScene):
    """Each state-saving variant as the AdamW row transformed: a cell dropped, factored or shrunk."""

    UNIT = 0.45
    ROW_LEFT = -3.9
    ROWS = (("adamw", "AdamW", 2.5), ("muon", "Muon", 1.7), ("lion", "Lion", 0.9),
            ("adafactor", "Adafactor", 0.1), ("8bit_adam", "8-bit Adam", -1.25))

    def construct(self):
        facts = self.facts
        self.show_title()
        rows, names, sums = {}, {}, {}
        for key, name, y in (*self.ROWS, ("lion_8bit", "8-bit Lion", -2.1)):
            rows[key] = style.LedgerRow(facts[key].value, unit=self.UNIT, height=0.62)
            rows[key].move_to((self.ROW_LEFT, y, 0), aligned_edge=LEFT).shift(
                (y - rows[key][0][0].get_y()) * UP)  # box centres on y, whatever text hangs below
            names[key] = style.zh(name, size=style.LABEL_SIZE).move_to((-6.75, y, 0), aligned_edge=LEFT)
            sums[key] = style.value(facts[f"{key}_sum"], size=style.LABEL_SIZE).move_to((6.75, y, 0), aligned_edge=RIGHT)

        with self.narrate("ob_intro") as cue:
            self.play(FadeIn(names["adamw"]), FadeIn(rows["adamw"], shift=0.3 * DOWN), run_time=0.35 * cue.duration)
            self.play(Write(sums["adamw"]), run_time=0.3 * cue.duration)

        for cue_id, key in (("ob_muon", "muon"), ("ob_lion", "lion"), ("ob_adafactor", "adafactor"),
                            ("ob_8bit", "8bit_adam")):
            with self.narrate(cue_id) as cue:
                self._derive(rows["adamw"], rows[key], names[key], cue.duration * 0.55)
                self.play(Write(sums[key]), run_time=0.2 * cue.duration)
                if key == "adafactor":
                    inset = self._factored_inset(rows[key])
                    self.play(FadeIn(inset), run_time=0.15 * cue.duration)

        tags = {}
        for key, idea in (("muon", "拿掉"), ("lion", "拿掉"), ("adafactor", "分解"), ("8bit_adam", "存小")):
            tags[key] = style.zh(idea, size=style.SMALL_SIZE, color=style.HIGHLIGHT).move_to(
                (-4.45, rows[key][0][0].get_y(), 0))
        with self.narrate("ob_ideas") as cue:
            for keys in (("muon", "lion"), ("adafactor",), ("8bit_adam",)):
                self.play(*(FadeIn(tags[k], scale=1.4) for k in keys),
                          *(Indicate(rows[k], color=style.HIGHLIGHT, scale_factor=1.02) for k in keys),
                          run_time=0.27 * cue.duration)

        with self.narrate("ob_stack") as cue:
            stack_tag = style.zh("叠加", size=style.SMALL_SIZE, color=style.GOOD).move_to(
                (-4.45, rows["lion_8bit"][0][0].get_y(), 0))
            self._derive(rows["lion"], rows["lion_8bit"], names["lion_8bit"], cue.duration * 0.5)
            self.play(Write(sums["lion_8bit"]), FadeIn(stack_tag), run_time=0.25 * cue.duration)

        with self.narrate("ob_exclusive") as cue:
            clash = style.zh("拿掉与分解互斥：v 拿掉了，就无从分解", size=style.LABEL_SIZE, color=style.BAD)
            clash.move_to((0, -2.72, 0))
            self.play(*(tags[k].animate.set_color(style.BAD) for k in ("muon", "lion", "adafactor")),
                      FadeIn(clash, shift=0.2 * UP), run_time=0.35 * cue.duration)
            self.play(*(Indicate(tags[k], color=style.BAD, scale_factor=1.4) for k in ("muon", "lion", "adafactor")),
                      run_time=0.3 * cue.duration)

        with self.narrate("ob_caveat") as cue:
            caveat = style.zh("8-bit Adam 另加稳定 embedding 层：改了结构，不只换存法", size=style.LABEL_SIZE,
                              color=style.HIGHLIGHT).move_to(clash)
            self.play(ReplacementTransform(clash, caveat), Indicate(names["8bit_adam"], color=style.HIGHLIGHT),
                      run_time=0.35 * cue.duration)
        self.show_source()
        self.wait(1.5)

    def _derive(self, source, target, name, run_time):
        """A copy of `source` slides to the target row and becomes it, cell by cell."""
        start = source.copy()
        self.play(FadeIn(name), start.animate.shift((target[0][0].get_y() - source[0][0].get_y()) * UP),
                  run_time=0.4 * run_time)
        moves = []
        for key in source.keys:
            if key in target.keys:
                moves.append(ReplacementTransform(start.cell(key), target.cell(key)))
            else:
                moves.append(FadeOut(start.cell(key), scale=0.3, shift=0.4 * UP))
        self.play(*moves, run_time=0.6 * run_time)

    def _factored_inset(self, row):
        """A matrix whose v is kept as one row and one column, with the real shape and cost."""
        facts = self.facts
        size = 0.7
        grid = Square(side_length=size, stroke_color=style.MUTED, stroke_width=2)
        strip_row = Rectangle(width=size, height=size / 6, stroke_width=0, fill_color=style.FP32, fill_opacity=0.9)
        strip_col = Rectangle(width=size / 6, height=size, stroke_width=0, fill_color=style.FP32, fill_opacity=0.9)
        strip_row.next_to(grid, DOWN, buff=0.08)
        strip_col.next_to(grid, RIGHT, buff=0.08)
        icon = VGroup(grid, strip_row, strip_col)
        text = style.caption_stack(f"{facts['matrix'].text} 的矩阵", f"v 每参数 {facts['adafactor_v'].text}",
                                   size=style.SMALL_SIZE, color=style.TEXT)
        inset = VGroup(icon, text).arrange(RIGHT, buff=0.2)
        return inset.set_x(-0.05 + inset.width / 2).set_y(row[0][0].get_y())


class CheckpointSize(LectureScene):
    """Which of the 16 bytes a checkpoint must hold, what that is for 671B, and what else must go in."""

    TIB = 0.82  # frame units per TiB: the two bars are drawn to scale

    def construct(self):
        facts = self.facts
        self.show_title()
        row = style.LedgerRow(facts["ledger"].value, unit=0.6, height=0.9).move_to(2.2 * UP)
        question = style.zh("丢了，能不能重建？", size=style.BODY_SIZE, color=style.HIGHLIGHT).move_to(0.9 * UP)
        with self.narrate("ck_intro") as cue:
            self.play(FadeIn(row, shift=0.3 * DOWN), run_time=0.35 * cue.duration)
            self.play(FadeIn(question), run_time=0.25 * cue.duration)

        with self.narrate("ck_rebuild") as cue:
            weight, grad, master = row.cell("weight"), row.cell("grad"), row.cell("master")
            arrow = CurvedArrow(master.get_top() + 0.05 * UP, weight.get_top() + 0.05 * UP, angle=0.5,
                                color=style.GOOD, stroke_width=3, tip_length=0.18)
            cast = style.zh("舍入", size=style.SMALL_SIZE, color=style.GOOD).next_to(arrow, UP, buff=0.05)
            yes = self._verdict(VGroup(weight, grad), "能", "舍入即得 · 下一步重算", style.GOOD)
            self.play(FadeOut(question), Create(arrow), FadeIn(cast), run_time=0.3 * cue.duration)
            self.play(FadeIn(yes), run_time=0.25 * cue.duration)
            self.play(weight.animate.set_opacity(0.3), grad.animate.set_opacity(0.3), FadeOut(arrow), FadeOut(cast),
                      run_time=0.2 * cue.duration)

        saved = style.LedgerRow(facts["saved"].value, unit=0.6, height=0.9).move_to((-6.45, 0.0, 0), aligned_edge=LEFT)
        box = Rectangle(width=saved.width + 0.6, height=1.5, color=style.TEXT).move_to(
            (saved.get_left()[0] - 0.3, -0.25, 0), aligned_edge=LEFT)
        box_label = style.zh("检查点", size=style.LABEL_SIZE).next_to(box, UP, buff=0.08).align_to(box, LEFT)
        classic_sum = style.value(facts["classic_sum"], size=style.LABEL_SIZE).next_to(saved, DOWN, buff=0.15)
        with self.narrate("ck_keep") as cue:
            no = self._verdict(VGroup(row.cell("m"), row.cell("v"), master), "不能", "装着全部历史", style.BAD)
            self.play(FadeIn(no), run_time=0.2 * cue.duration)
            self.play(Create(box), FadeIn(box_label), run_time=0.2 * cue.duration)
            self.play(*(TransformFromCopy(row.cell(k), saved.cell(k)) for k in saved.keys), run_time=0.3 * cue.duration)
            self.play(Write(classic_sum), run_time=0.2 * cue.duration)

        classic_bar = self._bar(facts["classic_tib"].value, -1.6, style.FP32, "经典")
        classic_label = style.zh(f"{facts['classic_bytes'].text} × {facts['params'].text} ≈ {facts['classic_tib'].text}",
                                 size=style.LABEL_SIZE).next_to(classic_bar, RIGHT, buff=0.2)
        with self.narrate("ck_size") as cue:
            self.play(GrowFromEdge(classic_bar, LEFT), run_time=0.45 * cue.duration)
            self.play(FadeIn(classic_label), run_time=0.25 * cue.duration)

        v3_saved = style.LedgerRow(facts["v3_saved"].value, unit=0.6, height=0.9).move_to(saved, aligned_edge=LEFT)
        v3_sum = style.value(facts["v3_sum"], size=style.LABEL_SIZE).next_to(v3_saved, DOWN, buff=0.2)
        v3_bar = self._bar(facts["v3_tib"].value, -2.35, style.BF16, "V3 式")
        v3_label = style.zh(f"{facts['v3_bytes'].text} × {facts['params'].text} ≈ {facts['v3_tib'].text}",
                            size=style.LABEL_SIZE).next_to(v3_bar, RIGHT, buff=0.2).align_to(classic_label, LEFT)
        smaller = style.zh(f"小 {facts['smaller'].text}", size=style.BODY_SIZE, color=style.HIGHLIGHT)
        with self.narrate("ck_v3") as cue:
            self.play(ReplacementTransform(saved, v3_saved), ReplacementTransform(classic_sum, v3_sum),
                      run_time=0.25 * cue.duration)
            self.play(GrowFromEdge(v3_bar, LEFT), run_time=0.25 * cue.duration)
            smaller.next_to(v3_label, RIGHT, buff=0.4)
            cut = DashedLine(classic_bar[0].get_corner(DOWN + RIGHT),
                             (classic_bar[0].get_right()[0], v3_bar[0].get_bottom()[1], 0), color=style.MUTED)
            self.play(FadeIn(v3_label), FadeIn(smaller), Create(cut), run_time=0.25 * cue.duration)

        extras = VGroup(*(style.zh(text, size=style.LABEL_SIZE) for text in
                          ("① 数据读到了哪里", "② 数据管线的状态", "③ 随机数的状态")))
        extras.arrange(DOWN, aligned_edge=LEFT, buff=0.18).move_to((box.get_right()[0] + 0.4, box.get_y(), 0),
                                                                   aligned_edge=LEFT)
        with self.narrate("ck_more") as cue:
            whole = Rectangle(width=extras.get_right()[0] + 0.3 - box.get_left()[0], height=box.height,
                              color=style.TEXT).move_to(box, aligned_edge=LEFT)
            self.play(ReplacementTransform(box, whole), run_time=0.2 * cue.duration)
            self.play(LaggedStart(*(FadeIn(e, shift=0.2 * LEFT) for e in extras), lag_ratio=0.6),
                      run_time=0.5 * cue.duration)

        with self.narrate("ck_rollback") as cue:
            brace = Brace(extras[:2], RIGHT, buff=0.15, color=style.HIGHLIGHT)
            why = style.caption_stack("回滚跳数据", "的前提", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
            why.next_to(brace, RIGHT, buff=0.1)
            self.play(GrowFromCenter(brace), FadeIn(why), *(Indicate(e, color=style.HIGHLIGHT) for e in extras[:2]),
                      run_time=0.4 * cue.duration)
        self.show_source()
        self.wait(1.5)

    def _bar(self, tib, y, colour, name):
        bar = Rectangle(width=tib * self.TIB, height=0.5, stroke_width=0, fill_color=colour, fill_opacity=0.7)
        bar.move_to((-6.3, y, 0), aligned_edge=LEFT)
        label = style.zh(name, size=style.SMALL_SIZE).move_to(bar, aligned_edge=LEFT).shift(0.15 * RIGHT)
        return VGroup(bar, label)

    @staticmethod
    def _verdict(cells, first, second, colour):
        tag = VGroup(style.zh(first, size=style.LABEL_SIZE, color=colour), style.zh(second, size=style.SMALL_SIZE))
        return tag.arrange(DOWN, buff=0.08).next_to(cells, DOWN, buff=0.15)


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------
