"""Chapter 3b–5, ledger: staging only; every number comes from tools.chapters.ledger."""

from __future__ import annotations

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Brace,
    Create,
    DashedLine,
    FadeIn,
    FadeOut,
    GrowFromCenter,
    Indicate,
    LaggedStart,
    Line,
    Rectangle,
    ReplacementTransform,
    SurroundingRectangle,
    TransformFromCopy,
    VGroup,
    Write,
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
            y = 1.8 - 0.64 * index
            year = style.zh(entry["year"] or "", size=style.LABEL_SIZE, color=style.MUTED)
            name = style.zh(entry["name"], size=style.LABEL_SIZE)
            note = style.zh(entry["note"], size=style.SMALL_SIZE, color=style.MUTED)
            year.move_to((-6.0, y, 0))
            name.move_to((-4.4, y, 0))
            if entry["state"]:
                state = style.LedgerRow(entry["state"], unit=0.32, height=0.62)
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
            rule.next_to(entries, DOWN, buff=0.2).align_to(entries, LEFT)
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
            over = Rectangle(width=accumulate.get_right()[0] - line.get_x(), height=accumulate.height + 0.2,
                             stroke_color=style.BAD, stroke_width=5)
            over.move_to(accumulate, aligned_edge=RIGHT).shift(0.1 * RIGHT)
            self.play(FadeIn(over), Indicate(accumulate_sum, color=style.BAD), run_time=0.2 * cue.duration)

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


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------
