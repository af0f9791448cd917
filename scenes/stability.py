"""The stability chapter (训练为什么会飞：稳定性，与本课自推的数): staging only; every number comes from
tools.chapters.stability."""

from __future__ import annotations

import itertools

from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    Arrow,
    BraceBetweenPoints,
    Circle,
    Create,
    Cross,
    CurvedArrow,
    DashedLine,
    DashedVMobject,
    Dot,
    FadeIn,
    FadeOut,
    GrowFromCenter,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    Mobject,
    Rectangle,
    RoundedRectangle,
    SurroundingRectangle,
    Text,
    Transform,
    TransformFromCopy,
    ValueTracker,
    VGroup,
    VMobject,
    Write,
    always_redraw,
    config,
    linear,
    np,
)

from scenes import style, widgets
from scenes.base import LectureScene
from scenes.widgets import Column, curve_through, grid_row, sketch_axes, text_row, verdict
from tools.course.facts import Fact

SNUG = 0.08  # two stacked small labels, a tag on its dot: closer than GAP_S
MARK_GAP = 0.06  # between small marks in one row (attention weights, batch squares)

# -- stability_overview ----------------------------------------------------------------------


class StabilityOverview(LectureScene):
    """Four tools from four papers, one panel each: PaLM's rollback, QK-norm, ST-MoE's Table 4, LN placement."""

    PANEL_W, PANEL_H = 6.6, 2.8  # two across fill the frame inside its margin (style.EDGE)
    # Panel centres: Ⓐ PaLM and Ⓑ QK-norm on top, Ⓒ Table 4 and Ⓓ LN placement under them.
    CENTRES = {"palm": (-3.45, 1.6), "qk": (3.45, 1.6), "table": (-3.45, -1.35), "ln": (3.45, -1.35)}
    HEADERS = {
        "palm": "Ⓐ PaLM：回滚，跳数据",
        "qk": "Ⓑ QK-norm：注意力别塌成一个尖",
        "table": "Ⓒ ST-MoE Table 4：稳定 × 质量",
        "ln": "Ⓓ LN 放在哪",
    }
    BAR_W, BAR_H = 0.2, 1.05  # one attention weight's bar, and the height of weight 1
    TABLE = (Column(-6.55), Column(-2.95), Column(-0.3, RIGHT))  # 做法 | 稳定性 | 质量 (numbers right-aligned)
    LESSON_GAP = 0.18  # 「两栏必须一起看」 under Table 4's rows
    CELL_PAD = 0.06  # the frame round the two z-loss cells
    NORM_GAP = 0.25  # Post-LN's Norm box after the sum

    def construct(self) -> None:
        self.show_title()
        panels = {key: self._panel_with_header(key) for key in self.CENTRES}
        with self.narrate("ov_intro") as beat:
            self.play(LaggedStart(*(FadeIn(p[0]) for p in panels.values()), lag_ratio=0.2), run_time=beat.share(0.5))
            self.play(LaggedStart(*(FadeIn(p[1]) for p in panels.values()), lag_ratio=0.2), run_time=beat.share(0.4))

        self._palm(panels["palm"][0])
        self._qk_norm(panels["qk"][0])
        self._st_moe_table(panels["table"][0])
        self._placement(panels["ln"][0])

        note = style.caption_stack(
            "无本课实测：Ⓒ 的三个数照抄 Table 4", "失稳率被论文故意调高过", size=style.SMALL_SIZE, color=style.HIGHLIGHT
        ).to_corner(UP + RIGHT, buff=style.EDGE)
        with self.narrate("ov_caveat") as beat:
            self.play(FadeIn(note), run_time=beat.share(0.3))
            self.play(Indicate(self.table_numbers, color=style.HIGHLIGHT, scale_factor=1.05), run_time=beat.share(0.4))
        self.finish()

    # -- the four panels -----------------------------------------------------------------------
    def _panel_with_header(self, key: str) -> tuple[RoundedRectangle, Text]:
        """One of the four panels at its centre, and its header in the top left corner."""
        x, y = self.CENTRES[key]
        frame = widgets.panel(self.PANEL_W, self.PANEL_H).move_to((x, y, 0))
        header = style.zh(self.HEADERS[key], size=style.LABEL_SIZE)
        header.next_to(frame.get_corner(UP + LEFT), DOWN + RIGHT, buff=style.GAP_M)
        return frame, header

    def _palm(self, frame: Mobject) -> None:
        """A sketched loss curve: a spike, the roll back to an earlier checkpoint, the skipped batches.

        Its labels stand in a column on the right, each in the colour of what it names."""
        facts = self.facts
        axes = sketch_axes((0, 1), (0, 1), 3.6, 1.6).move_to(frame.get_center() + 1.3 * LEFT + 0.25 * DOWN)
        base = [(t, 0.22 + 0.6 * np.exp(-2.5 * t)) for t in np.linspace(0.02, 0.98, 60)]
        spiked = [(t, y + 0.6 * np.exp(-(((t - 0.64) / 0.03) ** 2)) * (t >= 0.6)) for t, y in base if t <= 0.74]
        before = curve_through(axes, spiked, style.SCHEMATIC, 3)
        legend = VGroup(
            style.zh(f"{facts['palm_params'].text}参数", size=style.SMALL_SIZE, color=style.MUTED),
            style.zh(f"飞了 {facts['palm_spikes'].text}", size=style.SMALL_SIZE, color=style.VERDICT_BAD),
            style.zh(f"回滚 {facts['rollback'].text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT),
            style.zh(f"跳过 {facts['skip'].text}", size=style.SMALL_SIZE, color=style.VERDICT_BAD),
        ).arrange(DOWN, aligned_edge=LEFT, buff=0.16)
        legend.next_to(axes, RIGHT, buff=style.GAP_L).align_to(axes, UP)
        spike_top = Dot(axes.c2p(0.64, 0.22 + 0.6 * np.exp(-1.6) + 0.6), color=style.VERDICT_BAD, radius=0.06)
        with self.narrate("ov_palm") as beat:
            self.play(Create(axes), FadeIn(legend[0]), run_time=beat.share(0.2))
            self.play(Create(before), run_time=beat.share(0.5), rate_func=linear)
            self.play(FadeIn(spike_top), FadeIn(legend[1]), run_time=beat.share(0.2))

        ckpt = 0.45
        ckpt_y = 0.22 + 0.6 * np.exp(-2.5 * ckpt)
        checkpoint = Dot(axes.c2p(ckpt, ckpt_y), color=style.HIGHLIGHT, radius=0.07)
        back = CurvedArrow(
            spike_top.get_center() + 0.05 * LEFT,
            checkpoint.get_center() + 0.1 * UP,
            angle=0.8,
            color=style.HIGHLIGHT,
            stroke_width=3,
            tip_length=0.15,
        )
        skip = widgets.bar(
            axes.c2p(0.64, 0)[0] - axes.c2p(ckpt, 0)[0], 0.16, style.VERDICT_BAD, opacity=style.FILL_SOFT
        ).move_to(axes.c2p((ckpt + 0.64) / 2, 0), aligned_edge=DOWN)
        after = curve_through(axes, [(t, y) for t, y in base if t >= ckpt], style.VERDICT_GOOD, 3)
        with self.narrate("ov_palm_fix") as beat:
            self.play(FadeIn(checkpoint), Create(back), FadeIn(legend[2]), run_time=beat.share(0.35))
            self.play(FadeIn(skip), FadeIn(legend[3]), run_time=beat.share(0.25))
            self.play(
                before.animate.set_stroke(opacity=0.35), FadeOut(spike_top), Create(after), run_time=beat.share(0.3)
            )

    def _qk_norm(self, frame: Mobject) -> None:
        """One query over eight keys: a real softmax as the logits grow, then the same with QK-norm."""
        facts = self.facts
        curve = facts["attention"].value
        last = len(curve["scales"]) - 1
        floor = frame.get_center()[1] - 0.55  # the bars stand on this line
        x = frame.get_center()[0]
        anchors = {"raw": (x - 1.85, floor, 0), "normed": (x + 1.85, floor, 0)}
        steps = {key: ValueTracker(0) for key in anchors}
        colours = {"raw": style.FORWARD, "normed": style.VERDICT_GOOD}

        def bars(key: str) -> VGroup:
            def draw() -> VGroup:
                weights = curve[key][round(steps[key].get_value())]
                group = VGroup(*(widgets.bar(self.BAR_W, max(w * self.BAR_H, 0.01), colours[key]) for w in weights))
                return group.arrange(RIGHT, buff=MARK_GAP, aligned_edge=DOWN).move_to(anchors[key], aligned_edge=DOWN)

            return always_redraw(draw)

        def base(key: str) -> Line:
            line = Line(LEFT, RIGHT, color=style.MUTED, stroke_width=1.5).set_width(2.2).move_to(anchors[key])
            return line

        lines = {key: base(key) for key in anchors}
        names = {
            "raw": style.zh("不加 QK-norm", size=style.SMALL_SIZE, color=style.MUTED),
            "normed": style.zh("加 QK-norm", size=style.SMALL_SIZE, color=style.VERDICT_GOOD),
        }
        entropy = {
            "raw": style.zh(f"熵 {facts['entropy_start'].text}", size=style.SMALL_SIZE),
            "normed": style.zh(f"熵 {facts['entropy_normed'].text}", size=style.SMALL_SIZE, color=style.VERDICT_GOOD),
        }
        for key in anchors:
            names[key].next_to(lines[key], DOWN, buff=style.GAP_S)
            entropy[key].next_to(names[key], DOWN, buff=style.GAP_S)
        raw = bars("raw")
        with self.narrate("ov_qk") as beat:
            self.play(Create(lines["raw"]), FadeIn(raw), FadeIn(names["raw"]), run_time=beat.share(0.4))
            self.play(FadeIn(entropy["raw"]), run_time=beat.share(0.3))

        growth = VGroup(
            style.zh("logits", size=style.SMALL_SIZE, color=style.VERDICT_BAD),
            style.zh(f"放大 {facts['logit_growth'].text}", size=style.SMALL_SIZE, color=style.VERDICT_BAD),
        )
        growth.arrange(DOWN, buff=SNUG).move_to((x, floor + 0.55, 0))
        computed = style.zh("真 softmax", size=style.SMALL_SIZE, color=style.MUTED)
        computed.move_to((x, entropy["raw"].get_center()[1], 0))
        end_entropy = style.zh(f"熵 {facts['entropy_end'].text}", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        end_entropy.move_to(entropy["raw"])
        with self.narrate("ov_qk_collapse") as beat:
            self.play(FadeIn(growth), FadeIn(computed), run_time=beat.share(0.15))
            self.play(steps["raw"].animate.set_value(last), run_time=beat.share(0.5), rate_func=linear)
            self.play(Transform(entropy["raw"], end_entropy), run_time=beat.share(0.2))

        normed = bars("normed")
        with self.narrate("ov_qk_fix") as beat:
            self.play(
                Create(lines["normed"]),
                FadeIn(normed),
                FadeIn(names["normed"]),
                FadeIn(entropy["normed"]),
                run_time=beat.share(0.35),
            )
            self.play(steps["normed"].animate.set_value(last), run_time=beat.share(0.4), rate_func=linear)
        raw.clear_updaters()
        normed.clear_updaters()

    def _st_moe_table(self, frame: Mobject) -> None:
        """Table 4, copied: stability and quality side by side, and what the pair says."""
        facts = self.facts
        top = frame.get_top()[1] - 0.75
        head = text_row(("做法", "稳定性", "质量 ↑"), self.TABLE, top, size=style.SMALL_SIZE, color=style.MUTED)
        names = ("基线", f"update clipping 收紧到 {facts['clip_threshold'].text}", "router z-loss")
        rows = VGroup(
            *(
                grid_row(
                    (
                        style.zh(name, size=style.SMALL_SIZE),
                        style.value(facts[f"{key}_stable"]),
                        style.value(facts[f"{key}_quality"]),
                    ),
                    self.TABLE,
                    top - 0.43 * (i + 1),
                )
                for i, (key, name) in enumerate(zip(("baseline", "clipping", "z_loss"), names))
            )
        )
        lesson = style.zh("两栏必须一起看", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        lesson.next_to(rows, DOWN, buff=self.LESSON_GAP).align_to(rows, LEFT)
        self.table_numbers = VGroup(*(row[2] for row in rows))
        with self.narrate("ov_table") as beat:
            self.play(FadeIn(head), run_time=beat.share(0.3))
        crashed = style.zh(f"（崩了 {facts['diverged'].text}）", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        crashed.next_to(rows[0][0], RIGHT, buff=style.GAP_S)
        with self.narrate("ov_baseline") as beat:
            self.play(FadeIn(rows[0]), run_time=beat.share(0.4))
            self.play(FadeIn(crashed), rows[0][1].animate.set_color(style.VERDICT_BAD), run_time=beat.share(0.3))
        with self.narrate("ov_clip") as beat:
            self.play(FadeIn(rows[1]), run_time=beat.share(0.35))
            self.play(rows[1][1].animate.set_color(style.VERDICT_GOOD), run_time=beat.share(0.15))
            self.play(
                rows[1][2].animate.set_color(style.VERDICT_BAD),
                Indicate(rows[1][2], color=style.VERDICT_BAD),
                run_time=beat.share(0.35),
            )
        with self.narrate("ov_zloss") as beat:
            self.play(FadeIn(rows[2]), run_time=beat.share(0.3))
            self.play(
                rows[2][1].animate.set_color(style.VERDICT_GOOD),
                rows[2][2].animate.set_color(style.VERDICT_GOOD),
                run_time=beat.share(0.2),
            )
            both = SurroundingRectangle(VGroup(rows[2][1], rows[2][2]), color=style.HIGHLIGHT, buff=self.CELL_PAD)
            self.play(Create(both), FadeIn(lesson), run_time=beat.share(0.25))
        self.table_numbers.add(crashed)

    def _placement(self, frame: Mobject) -> None:
        """Post-LN's main path runs through Norm; Pre-LN's never does."""
        centre = frame.get_center()
        post = self._residual_block("post").move_to(centre + 0.95 * LEFT + 0.3 * UP)
        pre = self._residual_block("pre").move_to(centre + 0.95 * LEFT + 0.95 * DOWN)
        post_name = style.zh("Post-LN", size=style.LABEL_SIZE).next_to(post, RIGHT, buff=style.GAP_M)
        pre_name = style.zh("Pre-LN", size=style.LABEL_SIZE).next_to(pre, RIGHT, buff=style.GAP_M)
        post_verdict = style.zh("要 warmup 压住", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        pre_verdict = style.zh("初始化即良态", size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
        post_verdict.next_to(post_name, DOWN, buff=style.GAP_S).align_to(post_name, LEFT)
        pre_verdict.next_to(pre_name, DOWN, buff=style.GAP_S).align_to(pre_name, LEFT)
        with self.narrate("ov_ln") as beat:
            self.play(FadeIn(post), FadeIn(post_name), run_time=beat.share(0.25))
            self.play(
                Indicate(post.main_path, color=style.VERDICT_BAD), FadeIn(post_verdict), run_time=beat.share(0.25)
            )
            self.play(FadeIn(pre), FadeIn(pre_name), run_time=beat.share(0.2))
            self.play(Indicate(pre.main_path, color=style.VERDICT_GOOD), FadeIn(pre_verdict), run_time=beat.share(0.2))

    @classmethod
    def _residual_block(cls, placement: str) -> VGroup:
        """x → (branch) → ⊕, with Norm after the sum (post) or before the branch (pre)."""

        def box(text: str) -> VGroup:
            label = style.zh(text, size=style.SMALL_SIZE)
            return VGroup(
                RoundedRectangle(
                    width=label.width + 0.25, height=0.38, corner_radius=0.06, stroke_width=1.5, stroke_color=style.TEXT
                ),
                label,
            )

        x = style.zh("x", size=style.LABEL_SIZE)
        plus = VGroup(Circle(radius=0.14, color=style.TEXT, stroke_width=1.5), style.zh("+", size=style.SMALL_SIZE))
        plus.move_to(x.get_center() + 2.0 * RIGHT)
        branch = VGroup(box("Norm"), box("F")).arrange(RIGHT, buff=style.GAP_SM) if placement == "pre" else box("F")
        branch.move_to((x.get_center() + plus.get_center()) / 2 + 0.45 * UP)
        start = x.get_right() + 0.05 * RIGHT
        parts = VGroup(x, plus, branch)
        parts.add(Line(start, start + 0.25 * RIGHT, color=style.TEXT, stroke_width=1.5))
        parts.add(Line(start + 0.25 * RIGHT, branch.get_left() + 0.04 * LEFT, color=style.TEXT, stroke_width=1.5))
        parts.add(
            Arrow(
                branch.get_right(),
                plus.get_top(),
                buff=0.04,
                color=style.TEXT,
                stroke_width=1.5,
                tip_length=0.12,
                max_tip_length_to_length_ratio=0.3,
            )
        )
        main = VGroup(Line(start, plus.get_left(), color=style.TEXT, stroke_width=2.5))
        if placement == "post":
            norm = box("Norm").next_to(plus, RIGHT, buff=cls.NORM_GAP)
            main.add(
                Line(plus.get_right(), norm.get_left(), color=style.TEXT, stroke_width=2.5),
                norm,
                Line(norm.get_right(), norm.get_right() + 0.3 * RIGHT, color=style.TEXT, stroke_width=2.5),
            )
        else:
            main.add(Line(plus.get_right(), plus.get_right() + 0.5 * RIGHT, color=style.TEXT, stroke_width=2.5))
        parts.add(main)
        parts.main_path = main
        return parts


# -- loss_spikes -------------------------------------------------------------------------------


class LossSpikes(LectureScene):
    """PaLM's loss spikes as a sketch (no y scale), their irregular gaps, and the re-feed experiment."""

    RUN_CENTRE = np.array((-0.2, 0.95, 0))  # the whole run's axes
    RUN_SIZE = (12.2, 3.2)
    BADGES = np.array((6.7, 2.8, 0))  # right edge of the badges' row, over the axes
    GAPS = np.array((-4.6, -2.55, 0))  # bottom left of the sorted gaps, under the axis
    GAP_HEIGHT = 1.0  # the longest gap's bar
    ZOOM_X = {"spiked": -3.45, "refed": 3.45}  # the two zoomed panels of the re-feed
    ZOOM_Y, ZOOM_SIZE = 0.85, (5.6, 2.4)
    STRIP_BELOW = 0.3  # the strip of batches hangs this far under a zoomed axis
    BATCH_STEPS = 5  # steps per batch square in the strip
    LESSON_Y = style.CAPTION_TOP + 0.65  # 「尖峰 ＝ 这批数据 × 当时的参数状态」, just above the captions
    LATE_ABOVE = 0.25  # 「很晚才来」 over the last spike's foot

    @classmethod
    def run_axes(cls) -> Mobject:
        """The whole run's axes: no ticks on either axis, the loss has no scale (a sketch)."""
        return sketch_axes((0, 1), (0, 1), *cls.RUN_SIZE).move_to(cls.RUN_CENTRE)

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        curve = facts["curve"].value
        loss = np.array(curve["loss"])
        steps = len(loss) - 1
        floor, top = 0.95 * float(loss.min()), 1.02 * float(loss.max())
        axes = self.run_axes()

        def point(step: float, value: float) -> np.ndarray:
            return axes.c2p(step / steps, (value - floor) / (top - floor))

        line = VMobject(stroke_color=style.SCHEMATIC, stroke_width=2.5)
        line.set_points_as_corners([point(i, v) for i, v in enumerate(loss)])
        loss_name = style.zh("loss（无刻度）", size=style.SMALL_SIZE, color=style.MUTED)
        loss_name.next_to(axes.y_axis, UP, buff=style.GAP_S).align_to(axes.y_axis, LEFT)
        step_name = style.zh("训练步数 →", size=style.SMALL_SIZE, color=style.MUTED)
        step_name.next_to(axes.x_axis, DOWN, buff=style.GAP_S).align_to(axes.x_axis, RIGHT)
        count = style.zh(f"飞了 {facts['palm_spikes'].text}", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        with self.narrate("ls_curve") as beat:
            self.play(Create(axes), FadeIn(loss_name), FadeIn(step_name), run_time=beat.share(0.2))
            self.play(Create(line), run_time=beat.share(0.6), rate_func=linear)
            self.play(FadeIn(count.move_to(self.BADGES, aligned_edge=RIGHT)), run_time=beat.share(0.15))

        clipping = style.zh("梯度裁剪：开着", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        clipping.next_to(count, LEFT, buff=style.GAP_L)
        with self.narrate("ls_clipping") as beat:
            self.play(FadeIn(clipping, shift=0.2 * DOWN), run_time=beat.share(0.4))
            self.play(Indicate(clipping, color=style.HIGHLIGHT), run_time=beat.share(0.4))

        # The gaps between neighbouring spikes, laid along the axis, then stood up in order of length.
        at = curve["spikes"]
        marks = VGroup(
            *(
                Line(
                    point(a, floor) + 0.12 * DOWN, point(a, floor) + 0.12 * UP, color=style.VERDICT_BAD, stroke_width=3
                )
                for a in at
            )
        )
        segments = VGroup(
            *(
                Line(point(a, floor), point(b, floor), color=(style.SERIES_A, style.SERIES_B)[i % 2], stroke_width=6)
                for i, (a, b) in enumerate(itertools.pairwise(at))
            )
        )
        gaps = [b - a for a, b in itertools.pairwise(at)]
        order = sorted(range(len(gaps)), key=gaps.__getitem__)
        bars = VGroup(
            *(widgets.bar(0.16, self.GAP_HEIGHT * gaps[i] / max(gaps), segments[i].get_color()) for i in order)
        )
        bars.arrange(RIGHT, buff=style.GAP_XS, aligned_edge=DOWN).move_to(self.GAPS, aligned_edge=DOWN + LEFT)
        bars_name = style.zh("相邻间距，排好序：没有两根一样高", size=style.SMALL_SIZE, color=style.MUTED)
        bars_name.next_to(bars, RIGHT, buff=style.GAP_L).align_to(bars, DOWN)
        late = style.zh("很晚才来", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        late.next_to(point(at[-1], floor), UP, buff=self.LATE_ABOVE).shift(0.6 * LEFT)
        with self.narrate("ls_irregular") as beat:
            self.play(LaggedStart(*(GrowFromCenter(m) for m in marks), lag_ratio=0.1), run_time=beat.share(0.25))
            self.play(Create(segments), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(TransformFromCopy(segments[i], bar) for i, bar in zip(order, bars)), lag_ratio=0.05),
                FadeIn(bars_name),
                run_time=beat.share(0.3),
            )
            self.play(
                FadeIn(late), Indicate(marks[-2:], color=style.HIGHLIGHT, scale_factor=1.5), run_time=beat.share(0.2)
            )

        baseline = facts["baseline"].value
        small = VMobject(stroke_color=style.SCHEMATIC, stroke_width=2.5)
        small.set_points_smoothly(
            [point(i, floor + 0.25 * (top - floor) + v - min(baseline)) for i, v in list(enumerate(baseline))[::20]]
        )
        small = DashedVMobject(small, num_dashes=60)
        small_name = style.zh("更小的模型：没看到尖峰", size=style.SMALL_SIZE, color=style.MUTED)
        small_name.next_to(bars_name, UP, buff=style.GAP_L).align_to(bars_name, LEFT).shift(0.8 * RIGHT)
        small_key = DashedLine(ORIGIN, 0.6 * RIGHT, color=style.SCHEMATIC, stroke_width=2.5)
        small_key.next_to(small_name, LEFT, buff=style.GAP_M)
        small_name = VGroup(small_key, small_name)
        with self.narrate("ls_scale") as beat:
            self.play(FadeOut(late), FadeOut(segments), run_time=beat.share(0.2))
            self.play(Create(small), FadeIn(small_name), run_time=beat.share(0.5))
        run = VGroup(axes, line, loss_name, step_name, count, clipping, marks, bars, bars_name, small, small_name)

        # -- the re-feed: the same batches, from an earlier checkpoint ---------------------------
        refeed = facts["refeed"].value
        window = refeed["window"]
        lowest = min(min(refeed["spiked"]), min(refeed["refed"]))
        highest = max(max(refeed["spiked"]), max(refeed["refed"]))
        low, high = lowest - 0.15 * (highest - lowest), highest + 0.05 * (highest - lowest)
        panels = {}
        for key in ("spiked", "refed"):
            zoom = sketch_axes((0, 1), (0, 1), *self.ZOOM_SIZE).move_to((self.ZOOM_X[key], self.ZOOM_Y, 0))
            values = refeed[key]
            trace = VMobject(stroke_color=style.SCHEMATIC, stroke_width=3).set_points_as_corners(
                [zoom.c2p(i / (len(values) - 1), (v - low) / (high - low)) for i, v in enumerate(values)]
            )
            panels[key] = (zoom, trace, self._batch_strip(zoom, window, refeed["batches"]))
        spiked_name = style.zh("当时的参数 ＋ 这几批数据", size=style.LABEL_SIZE)
        spiked_name.next_to(panels["spiked"][0], UP, buff=style.GAP_M)
        question = style.zh("这批数据坏了？", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        question.next_to(panels["spiked"][2], DOWN, buff=style.GAP_M)
        with self.narrate("ls_suspect") as beat:
            self.play(FadeOut(run), run_time=beat.share(0.2))
            self.play(
                Create(panels["spiked"][0]), FadeIn(spiked_name), FadeIn(panels["spiked"][2]), run_time=beat.share(0.25)
            )
            self.play(Create(panels["spiked"][1]), run_time=beat.share(0.3), rate_func=linear)
            self.play(FadeIn(question), run_time=beat.share(0.15))

        refed_name = style.zh("更早的检查点 ＋ 同样这几批", size=style.LABEL_SIZE)
        refed_name.next_to(panels["refed"][0], UP, buff=style.GAP_M)
        with self.narrate("ls_refeed") as beat:
            self.play(FadeOut(question), Create(panels["refed"][0]), FadeIn(refed_name), run_time=beat.share(0.3))
            self.play(
                TransformFromCopy(panels["spiked"][2], panels["refed"][2], path_arc=-0.6), run_time=beat.share(0.5)
            )

        calm = style.zh("不飞", size=style.BODY_SIZE, color=style.VERDICT_GOOD)
        calm.move_to(panels["refed"][0].c2p(0.5, 0.7))
        with self.narrate("ls_flat") as beat:
            self.play(Create(panels["refed"][1]), run_time=beat.share(0.6), rate_func=linear)
            self.play(FadeIn(calm, scale=1.2), run_time=beat.share(0.3))

        lesson = style.zh("尖峰 ＝ 这批数据 × 当时的参数状态", size=style.BODY_SIZE, color=style.HIGHLIGHT)
        lesson.move_to((0, self.LESSON_Y, 0))
        with self.narrate("ls_cause") as beat:
            self.play(Write(lesson), run_time=beat.share(0.6))
            self.play(Indicate(panels["spiked"][1], color=style.VERDICT_BAD), run_time=beat.share(0.3))

        zoom, trace, strip = panels["spiked"]
        base = refeed["base"]
        start = round(0.12 * (len(base) - 1))
        checkpoint = Dot(trace.point_from_proportion(0.12), color=style.HIGHLIGHT, radius=0.08)
        back = CurvedArrow(
            trace.get_top() + 0.1 * LEFT,
            checkpoint.get_center() + 0.15 * UP,
            angle=0.9,
            color=style.HIGHLIGHT,
            stroke_width=3,
            tip_length=0.18,
        )
        back_label = style.zh(f"回滚 {facts['rollback'].text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        back_label.move_to(zoom.c2p(0.02, 0.95), aligned_edge=LEFT)  # the corner the arrow bends away from
        skipped = VGroup(*(Cross(strip[i], stroke_color=style.VERDICT_BAD, stroke_width=3) for i in strip.hits))
        skip_label = style.zh(f"跳过 {facts['skip'].text}", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        skip_label.next_to(strip, DOWN, buff=style.GAP_S).align_to(skipped, LEFT)
        onward = VMobject(stroke_color=style.VERDICT_GOOD, stroke_width=3).set_points_as_corners(
            [zoom.c2p(i / (len(base) - 1), (v - low) / (high - low)) for i, v in enumerate(base) if i >= start]
        )
        with self.narrate("ls_remedy") as beat:
            self.play(FadeIn(checkpoint), Create(back), FadeIn(back_label), run_time=beat.share(0.3))
            self.play(Create(skipped), FadeIn(skip_label), run_time=beat.share(0.25))
            self.play(trace.animate.set_stroke(opacity=0.35), Create(onward), run_time=beat.share(0.35))

        around = style.zh("绕过去，不是修好", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        around.move_to(zoom.c2p(0.8, 0.5))
        with self.narrate("ls_not_fixed") as beat:
            self.play(FadeIn(around, shift=0.2 * UP), run_time=beat.share(0.4))

        caveat = style.caption_stack(
            "示意：位置只按「看不出规律」挑",
            "高度、宽度论文未给，纵轴不设刻度",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        caveat.to_corner(UP + RIGHT, buff=style.EDGE)
        with self.narrate("ls_schematic") as beat:
            self.play(FadeIn(caveat), run_time=beat.share(0.4))
        self.finish()

    def _batch_strip(self, zoom: Mobject, window: tuple[int, int], batches: tuple[int, int]) -> VGroup:
        """The batches of the zoomed window as squares under its axis; the spike's own batches highlighted."""
        first, last = window
        squares, squares.hits = VGroup(), []
        for start in range(first, last, self.BATCH_STEPS):
            hit = start <= batches[1] and start + self.BATCH_STEPS > batches[0]
            if hit:
                squares.hits.append(len(squares))
            squares.add(
                Rectangle(
                    width=0.22,
                    height=0.22,
                    stroke_color=style.BACKGROUND,
                    stroke_width=1,
                    fill_color=style.HIGHLIGHT if hit else style.MUTED,
                    fill_opacity=style.FILL_SOLID,
                )
            )
        squares.arrange(RIGHT, buff=MARK_GAP)
        squares.stretch_to_fit_width(zoom.x_axis.get_width()).next_to(zoom.x_axis, DOWN, buff=self.STRIP_BELOW)
        return squares


# -- post_ln_decay -----------------------------------------------------------------------------


class PostLnDecay(LectureScene):
    """x₀'s coefficient at layer l: Post-LN's 2^(−l/2) (closed form and a real run) beside Pre-LN's 1."""

    PLOT_CENTRE = np.array((-2.8, -0.3, 0))
    PLOT_SIZE = (6.2, 4.2)
    LOG_FLOOR = 12.8  # the plot's bottom is log₂ = −12.8, just under 2⁻¹²
    LOG_SPAN = 13.6  # up to log₂ = 0.8, just over Pre-LN's 1
    SIDE_X = 0.95  # left edge of the right-hand column
    SIDE_TOP = 2.65  # its first line; lines go down from here
    LINE = 0.62  # the column's line pitch
    MATH = 34  # the two formulas, so that each fits the column beside its name
    VARIANCE_UNIT = 1.0  # height of a unit-variance box in the opening sum

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        post = style.math('x_(l+1) = "Norm"(x_l + F(x_l))', size=self.MATH)
        post_name = style.zh("Post-LN", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        self._side_row(VGroup(post_name, post).arrange(RIGHT, buff=style.GAP_M), 0)
        with self.narrate("pl_formula") as beat:
            self.play(FadeIn(post_name), Write(post), run_time=beat.share(0.6))
            self.play(Indicate(post[0][8:12], color=style.HIGHLIGHT), run_time=beat.share(0.3))

        # Variance 1 + 1 = 2, then Norm pulls it back: ÷ √2 (drawn where the plot will stand).
        x_bar = self._variance_box(style.SERIES_A, "x")
        f_bar = self._variance_box(style.SERIES_B, "F(x)")
        stack = (
            VGroup(x_bar, f_bar).arrange(UP, buff=style.FLUSH).move_to(self.PLOT_CENTRE + 2.2 * LEFT, aligned_edge=DOWN)
        )
        sum_text = style.zh(
            f"方差 {facts['unit_variance'].text} ＋ {facts['unit_variance'].text} ＝ {facts['sum_variance'].text}",
            size=style.BODY_SIZE,
        )
        sum_text.next_to(stack, RIGHT, buff=style.GAP_L).align_to(stack, UP)
        norm_text = style.zh(
            f"Norm 拉回 {facts['unit_variance'].text}：÷ {facts['sqrt_two'].text}",
            size=style.BODY_SIZE,
            color=style.HIGHLIGHT,
        )
        norm_text.next_to(sum_text, DOWN, buff=style.GAP_L).align_to(sum_text, LEFT)
        squeezed = VGroup(x_bar[0].copy(), f_bar[0].copy())  # the boxes only: their names would squash
        squeezed.stretch(0.5, 1).move_to(stack, aligned_edge=DOWN)
        with self.narrate("pl_variance") as beat:
            self.play(FadeIn(x_bar), run_time=beat.share(0.2))
            self.play(FadeIn(f_bar, shift=0.3 * DOWN), FadeIn(sum_text), run_time=beat.share(0.3))
            self.play(
                FadeOut(x_bar[1]),
                FadeOut(f_bar[1]),
                Transform(VGroup(x_bar[0], f_bar[0]), squeezed),
                FadeIn(norm_text),
                run_time=beat.share(0.35),
            )

        per_layer = style.zh(f"x₀ 的系数：每层 × {facts['half_root'].text}", size=style.LABEL_SIZE)
        per_layer = self._side_row(per_layer, 1)
        deep = style.zh(
            f"第 {facts['layers'].text} 层：只剩 {facts['end'].text}", size=style.LABEL_SIZE, color=style.VERDICT_BAD
        )
        deep = self._side_row(deep, 2)
        with self.narrate("pl_unroll") as beat:
            self.play(FadeOut(stack), FadeOut(sum_text), FadeOut(norm_text), run_time=beat.share(0.2))
            self.play(FadeIn(per_layer), run_time=beat.share(0.3))
            self.play(FadeIn(deep), run_time=beat.share(0.3))

        axes, labels = self._coefficient_plot()
        closed = facts["closed"].value
        line = Line(
            self._coefficient_point(axes, 0, closed[0]),
            self._coefficient_point(axes, len(closed) - 1, closed[-1]),
            color=style.DATA,
            stroke_width=3,
        )
        line_name = style.math("2^(-l\\/2)", size=style.MATH_LABEL_SIZE, color=style.DATA)
        line_name.next_to(line.point_from_proportion(0.35), UP + RIGHT, buff=style.GAP_S)
        with self.narrate("pl_curve") as beat:
            self.play(Create(axes), FadeIn(labels), run_time=beat.share(0.35))
            self.play(Create(line), FadeIn(line_name), run_time=beat.share(0.5))

        measured = facts["measured"].value
        dots = VGroup(
            *(
                Dot(self._coefficient_point(axes, layer, value), radius=0.06, color=style.FORWARD)
                for layer, value in enumerate(measured)
                if layer > 0
            )
        )
        run = style.zh(
            f"真跑：d ＝ {facts['dim'].text} · {facts['runs'].text} 次 · 种子 {facts['seed'].text}",
            size=style.LABEL_SIZE,
            color=style.FORWARD,
        )
        run = self._side_row(run, 1)
        with self.narrate("pl_run") as beat:
            self.play(FadeOut(per_layer), FadeOut(deep), FadeIn(run), run_time=beat.share(0.25))
            self.play(LaggedStart(*(FadeIn(d, scale=2) for d in dots), lag_ratio=0.15), run_time=beat.share(0.65))

        agree = style.zh(
            f"最大偏差 {facts['deviation'].text}，在 {facts['sigmas'].text}σ ＝ {facts['noise_band'].text} 以内",
            size=style.LABEL_SIZE,
            color=style.FORWARD,
        )
        agree = self._side_row(agree, 2)
        with self.narrate("pl_agree") as beat:
            self.play(FadeIn(agree), run_time=beat.share(0.4))
            self.play(Indicate(dots, color=style.HIGHLIGHT, scale_factor=1.3), run_time=beat.share(0.4))

        caveat = style.zh("画的是前向残差直通项，不是梯度倍率", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        caveat = self._side_row(caveat, 3)
        with self.narrate("pl_caveat") as beat:
            self.play(FadeIn(caveat, shift=0.2 * LEFT), run_time=beat.share(0.4))

        end_dot = Dot(self._coefficient_point(axes, len(closed) - 1, closed[-1]), radius=0.1, color=style.VERDICT_BAD)
        end_label = style.value(facts["end"], size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        end_label.next_to(end_dot, UP, buff=style.GAP_M)
        culprit = style.zh("LN 是梯度消失的元凶之一（苏剑林）", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        culprit = self._side_row(culprit, 4)
        with self.narrate("pl_culprit") as beat:
            self.play(FadeIn(end_dot, scale=2), FadeIn(end_label), run_time=beat.share(0.35))
            self.play(FadeIn(culprit), run_time=beat.share(0.35))

        pre = style.math('x_(l+1) = x_l + F("Norm"(x_l))', size=self.MATH)
        pre_name = style.zh("Pre-LN", size=style.LABEL_SIZE, color=style.VERDICT_GOOD)
        self._side_row(VGroup(pre_name, pre).arrange(RIGHT, buff=style.GAP_M), 1)
        pre.align_to(post, LEFT)
        no_norm = style.zh("去掉 Norm：方差每层翻倍", size=style.LABEL_SIZE, color=style.MUTED)
        no_norm = self._side_row(no_norm, 2)
        with self.narrate("pl_pre_ln") as beat:
            self.play(FadeOut(run), FadeOut(agree), FadeIn(no_norm), run_time=beat.share(0.4))
            self.play(FadeIn(pre_name), Write(pre), run_time=beat.share(0.45))

        flat = Line(
            self._coefficient_point(axes, 0, 1.0),
            self._coefficient_point(axes, len(closed) - 1, 1.0),
            color=style.VERDICT_GOOD,
            stroke_width=4,
        )
        flat_name = style.zh(f"Pre-LN：系数一直是 {facts['one'].text}", size=style.LABEL_SIZE, color=style.VERDICT_GOOD)
        flat_name.next_to(flat, DOWN, buff=style.GAP_S).align_to(flat, RIGHT)
        equal = style.zh("最后再 Norm 一次：各分支平权", size=style.LABEL_SIZE, color=style.VERDICT_GOOD)
        equal = self._side_row(equal, 2)
        with self.narrate("pl_pre_path") as beat:
            self.play(Create(flat), FadeIn(flat_name), run_time=beat.share(0.45))
            self.play(FadeOut(no_norm), FadeIn(equal), run_time=beat.share(0.35))

        disease = verdict("预训练：毛病", style.VERDICT_BAD, "靠输入的层收不到信号")
        cure = verdict("微调：功能", style.VERDICT_GOOD, "靠输入的层少动，护住预训练")
        readings = VGroup(disease, cure).arrange(DOWN, buff=style.GAP_L, aligned_edge=LEFT)
        readings.next_to(caveat, DOWN, buff=style.GAP_L).align_to(caveat, LEFT)
        for badge in readings:
            for part in badge:
                part.align_to(caveat, LEFT)
        with self.narrate("pl_pretrain") as beat:
            self.play(FadeOut(culprit), FadeIn(disease), run_time=beat.share(0.35))
            self.play(Indicate(end_dot, color=style.VERDICT_BAD, scale_factor=1.6), run_time=beat.share(0.35))
        with self.narrate("pl_finetune") as beat:
            self.play(FadeIn(cure), run_time=beat.share(0.4))
            self.play(Indicate(line, color=style.VERDICT_GOOD), run_time=beat.share(0.4))
        self.finish()

    # -- geometry ----------------------------------------------------------------------------
    def _side_y(self, slot: int) -> float:
        return self.SIDE_TOP - slot * self.LINE

    def _side_row(self, mob: Mobject, slot: int) -> Mobject:
        """Place a line of the right-hand column in its slot (0 at the top)."""
        return mob.move_to((self.SIDE_X, self._side_y(slot), 0), aligned_edge=LEFT)

    @classmethod
    def _variance_box(cls, colour: str, name: str) -> VGroup:
        """A unit of variance as a box with its name on it: VGroup(box, name)."""
        return widgets.block(
            1.2,
            cls.VARIANCE_UNIT,
            colour,
            name,
            size=style.LABEL_SIZE,
            stroke_color=style.TEXT,
            stroke_width=1,
        )

    def _coefficient_plot(self) -> tuple[Mobject, VGroup]:
        """Layers along x, x₀'s coefficient on a log₂ axis up the side (data: it carries a scale).

        The axes' own y runs from 0 at the bottom; ``_at`` maps log₂ of a coefficient onto it, and
        the ticks are drawn here, at the facts' tick values."""
        facts = self.facts
        x_ticks, y_ticks = facts["x_ticks"].value, facts["y_ticks"].value
        axes = sketch_axes((0, x_ticks[-1]["layer"], x_ticks[1]["layer"]), (0, self.LOG_SPAN, 1), *self.PLOT_SIZE)
        axes.move_to(self.PLOT_CENTRE)
        labels = VGroup()
        for tick in x_ticks:
            at = axes.c2p(tick["layer"], 0)
            last_x = style.zh(tick["text"], size=style.SMALL_SIZE, color=style.MUTED).next_to(
                at, DOWN, buff=style.GAP_SM
            )
            labels.add(Line(at, at + 0.1 * DOWN, color=style.MUTED, stroke_width=2), last_x)
        for tick in y_ticks:
            at = self._coefficient_point(axes, 0, 2.0 ** tick["log2"])
            labels.add(
                Line(at, at + 0.1 * LEFT, color=style.MUTED, stroke_width=2),
                style.zh(tick["text"], size=style.SMALL_SIZE, color=style.MUTED).next_to(at, LEFT, buff=style.GAP_SM),
            )
        labels.add(style.zh("层 l", size=style.SMALL_SIZE, color=style.MUTED).next_to(last_x, RIGHT, buff=style.GAP_M))
        labels.add(
            style.zh("x₀ 的系数（对数轴）", size=style.SMALL_SIZE, color=style.MUTED)
            .next_to(axes.y_axis, UP, buff=style.GAP_S)
            .align_to(axes.y_axis, LEFT)
        )
        return axes, labels

    def _coefficient_point(self, axes: Mobject, layer: float, coefficient: float) -> np.ndarray:
        return axes.c2p(layer, np.log2(coefficient) + self.LOG_FLOOR)


# -- fp16_vs_bf16 ------------------------------------------------------------------------------


class Fp16VsBf16(LectureScene):
    """A log₂ number line: fp16's real lower boundaries and its red line, bf16's reach, and real rounding."""

    LINE_Y = 0.75  # the log₂ number line
    LOG_RANGE = (-131, 19)  # binades it shows, left to right
    LINE_X = (-6.7, 6.5)
    BARS_Y = {"bf16": 2.15, "fp16": 1.35}  # each format's range, over the line; the red line's label between
    ZOOM_Y = -1.55  # the linear close-up of the cut, under the line
    ZOOM_X = (0.3, 6.3)  # where 0 and 2⁻²³ sit on it
    RISK_Y = style.CAPTION_TOP + 0.45  # bf16's real risk, the last line of prose, just above the captions
    UNDER = 0.5  # prose under a line (the number line, the close-up), clear of its tick labels
    ZOOM_TICK_GAP = 0.18  # the close-up's tick labels under it

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        question = style.zh("bf16 要不要 loss scaling？", size=style.BODY_SIZE)
        question.next_to(heading, DOWN, buff=style.GAP_L).align_to(heading, LEFT)
        answer = style.zh("不用", size=style.BODY_SIZE, color=style.VERDICT_GOOD).next_to(
            question, RIGHT, buff=style.GAP_M
        )
        with self.narrate("uf_question") as beat:
            self.play(FadeIn(question), run_time=beat.share(0.4))
            self.play(FadeIn(answer, scale=1.3), run_time=beat.share(0.3))

        line = Line(
            (self.LINE_X[0], self.LINE_Y, 0), (self.LINE_X[1], self.LINE_Y, 0), color=style.MUTED, stroke_width=2
        )
        ticks = VGroup(
            *(
                Line(
                    self._x_of_exponent(e) * RIGHT + self.LINE_Y * UP + 0.07 * DOWN,
                    self._x_of_exponent(e) * RIGHT + self.LINE_Y * UP + 0.07 * UP,
                    color=style.MUTED,
                    stroke_width=1.5,
                )
                for e in range(-128, self.LOG_RANGE[1], 16)
            )
        )
        one = style.zh("1", size=style.SMALL_SIZE, color=style.MUTED).next_to(self._on_line(0), UP, buff=0.12)
        axis_name = style.zh("log₂ 数轴：往左越小，一格 16 个二进制数量级", size=style.SMALL_SIZE, color=style.MUTED)
        axis_name.next_to(line, DOWN, buff=self.UNDER).align_to(line, LEFT)
        with self.narrate("uf_line") as beat:
            self.play(FadeOut(question), FadeOut(answer), Create(line), run_time=beat.share(0.4))
            self.play(FadeIn(ticks), FadeIn(one), FadeIn(axis_name), run_time=beat.share(0.4))

        # fp16: the normal range down to 2⁻¹⁴, the subnormals down to 2⁻²⁴, each boundary from its bit pattern.
        normal_exp, sub_exp = (round(np.log2(facts[name].value)) for name in ("fp16_min_normal", "fp16_min_subnormal"))
        fp16_top = facts["fp16_max_log2"].value
        fp16_normal = self._range_bar(normal_exp, fp16_top, "fp16", style.FILL_SOLID)
        fp16_sub = self._range_bar(sub_exp, normal_exp, "fp16", style.FILL_FAINT)
        fp16_name = style.zh(f"fp16 · 指数 {facts['fp16_exp'].text} 位", size=style.LABEL_SIZE, color=style.FP16)
        fp16_name.next_to(fp16_sub, LEFT, buff=style.GAP_M)
        bounds = VGroup()
        for name, side in (("fp16_min_normal", RIGHT), ("fp16_min_subnormal", LEFT)):
            mark = Line(
                self._on_line(round(np.log2(facts[name].value))) + 0.12 * UP,
                self._on_line(round(np.log2(facts[name].value))) + 0.12 * DOWN,
                color=style.FP16,
                stroke_width=3,
            )
            label = style.zh(
                f"{facts[name].text}（{facts[name + '_bits'].text}）", size=style.SMALL_SIZE, color=style.FP16
            )
            label.next_to(mark, DOWN, buff=style.GAP_SM)
            label.shift(label.width / 2 * side + 0.05 * side)
            bounds.add(VGroup(mark, label))
        with self.narrate("uf_fp16") as beat:
            self.play(FadeIn(fp16_name), GrowFromEdge(fp16_normal, RIGHT), run_time=beat.share(0.3))
            self.play(FadeIn(bounds[0]), run_time=beat.share(0.2))
            self.play(GrowFromEdge(fp16_sub, RIGHT), run_time=beat.share(0.2))
            self.play(FadeIn(bounds[1]), run_time=beat.share(0.2))

        # The red line at 2⁻²⁵, half the least subnormal, and a linear close-up of the cut under it.
        cut_exp = round(np.log2(facts["cut"].value))
        red_top = (self.BARS_Y["fp16"] + self.BARS_Y["bf16"]) / 2  # between the two bars
        red = Line(
            self._on_line(cut_exp) + (red_top - self.LINE_Y) * UP,
            self._on_line(cut_exp) + 0.3 * DOWN,
            color=style.VERDICT_BAD,
            stroke_width=4,
        )
        red_label = style.zh(f"红线 {facts['cut'].text}：以下舍成 0", size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        red_label.next_to(red.get_top(), LEFT, buff=style.GAP_S)
        zoom, zoom_marks = self._close_up(facts["fp16_min_subnormal"])
        lenses = VGroup(
            DashedLine(self._on_line(cut_exp - 2), zoom.get_left(), color=style.MUTED, stroke_width=1.5),
            DashedLine(self._on_line(cut_exp + 2), zoom.get_right(), color=style.MUTED, stroke_width=1.5),
        )
        with self.narrate("uf_red") as beat:
            self.play(FadeOut(axis_name), Create(red), FadeIn(red_label), run_time=beat.share(0.35))
            self.play(Create(lenses), Create(zoom), FadeIn(zoom_marks), run_time=beat.share(0.45))

        probes = facts["probes"].value
        dots, tags = VGroup(), VGroup()
        for probe, where in zip(probes, ("线下", "压线", "线上")):
            dot = Dot(self._zoomed(probe["x"]) + 0.45 * UP, radius=0.07, color=style.HIGHLIGHT)
            tag = style.zh(where, size=style.SMALL_SIZE, color=style.HIGHLIGHT)
            dots.add(dot)
            tags.add(tag.next_to(dot, UP, buff=SNUG))
        landed = [
            Dot(
                self._zoomed(probe["fp16"]),
                radius=0.07,
                color=style.VERDICT_BAD if probe["fp16"] == 0 else style.VERDICT_GOOD,
            )
            for probe in probes
        ]
        with self.narrate("uf_round") as beat:
            self.play(
                LaggedStart(*(FadeIn(d, shift=0.2 * DOWN) for d in dots), lag_ratio=0.3),
                FadeIn(tags),
                run_time=beat.share(0.3),
            )
            for dot, target in zip(dots, landed):
                self.add(dot.copy().set_opacity(0.3))  # where it was, before the rounding
                self.play(Transform(dot, target), run_time=beat.share(0.18))

        tiny = Dot(self._zoomed(facts["tiny"].value) + 0.45 * UP, radius=0.07, color=style.BACKWARD)  # a gradient
        tiny_label = style.zh(
            f"{facts['tiny'].text} → fp16：{facts['tiny_fp16'].text}", size=style.SMALL_SIZE, color=style.BACKWARD
        )
        tiny_label.next_to(zoom, DOWN, buff=self.UNDER).align_to(zoom, LEFT)
        scaling = style.zh("所以 fp16 要先放大 loss，算完再缩回", size=style.SMALL_SIZE, color=style.MUTED)
        scaling.next_to(tiny_label, DOWN, buff=style.GAP_S).align_to(tiny_label, LEFT)
        with self.narrate("uf_tiny") as beat:
            self.play(FadeIn(tiny, shift=0.2 * DOWN), FadeIn(tiny_label), run_time=beat.share(0.3))
            self.play(tiny.animate.move_to(self._zoomed(0.0)).set_color(style.VERDICT_BAD), run_time=beat.share(0.25))
            self.play(FadeIn(scaling), run_time=beat.share(0.3))

        bf16_exp = round(np.log2(facts["bf16_min_normal"].value))
        bf16_bar = self._range_bar(bf16_exp, self.LOG_RANGE[1], "bf16", style.FILL_SOLID)
        bf16_name = style.zh(
            f"bf16 · 指数 {facts['bf16_exp'].text} 位，同 fp32", size=style.LABEL_SIZE, color=style.BF16
        )
        bf16_name.next_to(bf16_bar, UP, buff=style.GAP_S).align_to(bf16_bar, LEFT)
        bf16_mark = VGroup(
            Line(
                self._on_line(bf16_exp) + 0.12 * UP,
                self._on_line(bf16_exp) + 0.12 * DOWN,
                color=style.BF16,
                stroke_width=3,
            )
        )
        bf16_mark.add(
            style.zh(
                f"{facts['bf16_min_normal'].text}（{facts['bf16_min_normal_bits'].text}）",
                size=style.SMALL_SIZE,
                color=style.BF16,
            )
            .next_to(bf16_mark, DOWN, buff=style.GAP_SM)
            .align_to(bf16_mark, LEFT)
        )
        lost = BraceBetweenPoints(
            self._on_line(bf16_exp) + 0.2 * DOWN, self._on_line(normal_exp) + 0.2 * DOWN, DOWN, color=style.VERDICT_BAD
        )
        lost.shift((bf16_mark[1].get_bottom()[1] - lost.get_top()[1] - 0.05) * UP)
        lost_label = style.zh(
            f"小的那头 fp16 少 {facts['binades_lost'].text} 个二进制数量级",
            size=style.SMALL_SIZE,
            color=style.VERDICT_BAD,
        ).next_to(lost, DOWN, buff=style.GAP_S)
        with self.narrate("uf_bf16") as beat:
            self.play(
                FadeOut(lenses),
                FadeOut(scaling),
                GrowFromEdge(bf16_bar, RIGHT),
                FadeIn(bf16_name),
                run_time=beat.share(0.35),
            )
            self.play(FadeIn(bf16_mark), run_time=beat.share(0.2))
            self.play(GrowFromCenter(lost), FadeIn(lost_label), run_time=beat.share(0.3))

        kept = Dot(
            self._on_line(np.log2(facts["tiny_bf16"].value)) + (self.BARS_Y["bf16"] - self.LINE_Y) * UP,
            radius=0.08,
            color=style.HIGHLIGHT,
        )
        kept_label = style.zh(f"bf16：{facts['tiny_bf16'].text}，还在", size=style.SMALL_SIZE, color=style.BF16)
        kept_label.next_to(kept, UP, buff=style.GAP_S)
        with self.narrate("uf_keeps") as beat:
            self.play(FadeIn(kept, scale=2), FadeIn(kept_label), run_time=beat.share(0.4))
            self.play(Indicate(kept, color=style.HIGHLIGHT, scale_factor=2), run_time=beat.share(0.3))

        risk = style.zh(
            f"bf16 怕的是累加：{facts['repeat_step'].text} 加 {facts['repeats'].text} 次，仍是 "
            f"{facts['bf16_sum'].text}",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        risk.move_to((self.LINE_X[0], self.RISK_Y, 0), aligned_edge=LEFT)
        with self.narrate("uf_risk") as beat:
            self.play(FadeIn(risk, shift=0.2 * UP), run_time=beat.share(0.4))

        real = style.caption_stack(
            "每个边界取自位模式，舍入是真舍",
            "不画梯度直方图：那份数据我们没有",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        ).to_corner(UP + RIGHT, buff=style.EDGE)
        with self.narrate("uf_real") as beat:
            self.play(FadeIn(real), run_time=beat.share(0.4))
            self.play(Indicate(VGroup(bounds, bf16_mark, red), color=style.HIGHLIGHT), run_time=beat.share(0.4))
        self.finish()

    # -- geometry ----------------------------------------------------------------------------
    def _x_of_exponent(self, exponent: float) -> float:
        low, high = self.LOG_RANGE
        return self.LINE_X[0] + (exponent - low) / (high - low) * (self.LINE_X[1] - self.LINE_X[0])

    def _on_line(self, exponent: float) -> np.ndarray:
        return np.array((self._x_of_exponent(exponent), self.LINE_Y, 0))

    def _range_bar(self, low: float, high: float, name: str, opacity: float) -> Rectangle:
        """A format's range between two binary exponents, over the line at its own height."""
        left, right = self._x_of_exponent(low), self._x_of_exponent(min(high, self.LOG_RANGE[1]))
        return widgets.bar(right - left, 0.32, style.PRECISION[name], opacity=opacity).move_to(
            ((left + right) / 2, self.BARS_Y[name], 0)
        )

    def _zoomed(self, value: float) -> np.ndarray:
        """A value's place on the close-up, which runs linearly from 0 to 2⁻²³."""
        least = self.facts["fp16_min_subnormal"].value
        return np.array((self.ZOOM_X[0] + value / (2 * least) * (self.ZOOM_X[1] - self.ZOOM_X[0]), self.ZOOM_Y, 0))

    def _close_up(self, least: Fact) -> tuple[Line, VGroup]:
        """The line from 0 to two least subnormals, linear: fp16's values 0 and 2⁻²⁴ on it, the red line between."""
        axis = Line(self._zoomed(0.0), self._zoomed(2 * least.value), color=style.MUTED, stroke_width=2)
        marks = VGroup()
        for value, text in ((0.0, "0"), (least.value, least.text)):
            at = self._zoomed(value)
            marks.add(
                Line(at + 0.12 * UP, at + 0.12 * DOWN, color=style.FP16, stroke_width=3),
                style.zh(text, size=style.SMALL_SIZE, color=style.FP16).next_to(at, DOWN, buff=self.ZOOM_TICK_GAP),
            )
        cut = self._zoomed(least.value / 2)
        marks.add(Line(cut + 0.35 * UP, cut + 0.2 * DOWN, color=style.VERDICT_BAD, stroke_width=4))
        name = style.zh("放大看（线性）", size=style.SMALL_SIZE, color=style.MUTED)
        name.next_to(axis, DOWN, buff=0.55).align_to(axis, RIGHT)
        marks.add(name)
        return axis, marks


# -- derived_numbers_appendix ------------------------------------------------------------------


class DerivedNumbersAppendix(LectureScene):
    """The course's self-derived numbers, each row taken from the figure that computes it, with its chain."""

    COLUMNS = (Column(-6.75), Column(-1.3), Column(3.0))  # 数 | 推导链 | 可能错在哪
    HEAD_Y = 2.45
    FIRST_Y = 1.85  # the first row's centre
    PITCH, LINE_PITCH = 0.62, 0.34  # between rows, and between the lines of a two-line chain
    FOOTNOTE_Y = style.CAPTION_TOP + 0.4  # the resident set's footnote, under the table, just above the captions

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        kinds = VGroup(
            style.zh("查得到原文的数", size=style.BODY_SIZE, color=style.MUTED),
            style.zh("自己按算子推的数", size=style.BODY_SIZE, color=style.HIGHLIGHT),
        )
        kinds.arrange(RIGHT, buff=1.5).move_to(0.3 * UP)
        with self.narrate("ap_intro") as beat:
            self.play(FadeIn(kinds[0]), run_time=beat.share(0.3))
            self.play(FadeIn(kinds[1]), run_time=beat.share(0.3))

        head = text_row(
            ("数", "推导链", "可能错在哪"), self.COLUMNS, self.HEAD_Y, size=style.SMALL_SIZE, color=style.MUTED
        )
        right = config.frame_width / 2 - style.EDGE
        rule = Line(
            (self.COLUMNS[0].x, self.HEAD_Y - 0.25, 0),
            (right, self.HEAD_Y - 0.25, 0),
            color=style.MUTED,
            stroke_width=1,
        )
        with self.narrate("ap_table") as beat:
            self.play(
                FadeOut(kinds[0]),
                kinds[1].animate.scale(0.8).next_to(heading, RIGHT, buff=style.GAP_L),
                run_time=beat.share(0.35),
            )
            self.play(FadeIn(head), Create(rule), run_time=beat.share(0.35))

        y = self.FIRST_Y
        rows = VGroup()
        for row in facts["rows"].value:
            lines = len(row["chain"])
            centre = y - (lines - 1) * self.LINE_PITCH / 2
            built = self._derived_row(row, centre)
            rows.add(built)
            # The figure the number comes from, where its chain will be written, and the number out of it.
            source = style.zh(f"取自「{row['source']}」", size=style.SMALL_SIZE, color=style.MUTED)
            source.move_to((self.COLUMNS[1].x, centre, 0), aligned_edge=LEFT)
            with self.narrate(f"ap_{row['id']}") as beat:
                self.play(FadeIn(source, shift=0.3 * LEFT), run_time=beat.share(0.2))
                self.play(FadeIn(built.number, shift=0.4 * LEFT), FadeIn(built.what), run_time=beat.share(0.2))
                self.play(FadeOut(source), Write(built.chain), run_time=beat.share(0.25))
                self.play(FadeIn(built.risk), run_time=beat.share(0.2))
            if row["id"] == "resident":
                self._resident_footnote(built)
            y = centre - (lines - 1) * self.LINE_PITCH / 2 - self.PITCH

        rule_text = style.caption_stack(
            "判据：自己推的数，连着推导一起给", "数字会过期，推导不会", size=style.SMALL_SIZE, color=style.HIGHLIGHT
        )
        rule_text.to_corner(UP + RIGHT, buff=style.EDGE)
        with self.narrate("ap_rule") as beat:
            self.play(FadeOut(kinds[1]), FadeIn(rule_text[0]), run_time=beat.share(0.3))
            self.play(
                LaggedStart(
                    *(Indicate(r.chain, color=style.HIGHLIGHT, scale_factor=1.05) for r in rows), lag_ratio=0.2
                ),
                run_time=beat.share(0.55),
            )
        with self.narrate("ap_end") as beat:
            self.play(FadeIn(rule_text[1]), run_time=beat.share(0.4))
        self.finish()

    def _derived_row(self, row: dict, centre: float) -> VGroup:
        """One row: what and its number, the chain (one or two lines), where it could be wrong."""
        what = style.zh(row["what"], size=style.SMALL_SIZE, color=style.MUTED)
        number = style.zh(row["number"], size=style.LABEL_SIZE)
        cell = VGroup(what, number).arrange(RIGHT, buff=style.GAP_M, aligned_edge=DOWN)
        chain = VGroup(*(style.zh(line, size=style.SMALL_SIZE) for line in row["chain"]))
        chain.arrange(DOWN, buff=self.LINE_PITCH - chain[0].height, aligned_edge=LEFT)
        risk = style.zh(row["risk"], size=style.SMALL_SIZE, color=style.VERDICT_BAD)
        built = grid_row((cell, chain, risk), self.COLUMNS, centre)
        built.what, built.number, built.chain, built.risk = what, number, chain, risk
        return built

    def _resident_footnote(self, resident: VGroup) -> None:
        """Under the table: full recompute's 106.75 GiB leaves out the layer being recomputed, which adds to it."""
        facts = self.facts
        note = style.zh(
            f"注：{facts['full_recompute'].text} 未含反向时展开的那一层；"
            f"算上是 {facts['working_set'].text}，分水岭 {facts['sequences_d9'].text}",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        note.move_to((self.COLUMNS[0].x, self.FOOTNOTE_Y, 0), aligned_edge=LEFT)
        with self.narrate("ap_d9") as beat:
            self.play(FadeIn(note), Indicate(resident.number, color=style.HIGHLIGHT), run_time=beat.share(0.5))
