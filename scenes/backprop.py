"""The backprop chapter (反向传播：三倍算力与扔不掉的激活), staging only.

Every number comes from tools.chapters.backprop.
"""

from __future__ import annotations

import itertools

from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    AnimationGroup,
    Arrow,
    Brace,
    Circle,
    Circumscribe,
    Create,
    CurvedArrow,
    DashedLine,
    DashedVMobject,
    Dot,
    DoubleArrow,
    FadeIn,
    FadeOut,
    GrowArrow,
    GrowFromCenter,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    MoveAlongPath,
    Polygon,
    Rectangle,
    ReplacementTransform,
    RoundedRectangle,
    ShowPassingFlash,
    Square,
    Succession,
    SurroundingRectangle,
    Text,
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

from scenes import style, widgets
from scenes.base import LectureScene
from scenes.widgets import Column, sketch_axes, text_row


class ExchangeRate(LectureScene):
    """Three words: a derivative divides, a gradient lines rates up, a chain multiplies them."""

    SCALE = 20.0  # frame units per unit of the made-up quantities (0.03 -> 0.6)
    TAG_X = -5.9  # the three words, down the left edge, one per row
    DIVIDE_Y, GRADIENT_Y, CHAIN_Y = 1.85, -0.15, -2.05
    # ① two rulers, input over output: name, line, where the dot starts
    INPUT_Y, OUTPUT_Y = 2.35, 1.35
    RULER_NAME_X, RULER_SPAN, RULER_START = -4.45, (-3.8, 0.9), -3.2
    EQUATION = np.array((3.2, 2.05, 0))
    PARAMS = np.array((-1.9, 0.2, 0))  # ② the row of parameters
    CHAIN_START, CHAIN_PITCH = -4.3, 2.25  # ③ the first node of the chain, and node to node
    PRODUCT_X = 5.3

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        with self.narrate("rate_intro") as beat:
            tags = [
                self._word_tag("导数", "相除", self.DIVIDE_Y),
                self._word_tag("梯度", "一排", self.GRADIENT_Y),
                self._word_tag("链式法则", "相乘", self.CHAIN_Y),
            ]
            self.play(
                LaggedStart(*(FadeIn(t, shift=0.3 * RIGHT) for t in tags), lag_ratio=0.4), run_time=beat.share(0.7)
            )
        self._divide(facts, tags[0])
        self._gradient(tags[1])
        total_box = self._chain(facts, tags[2])
        with self.narrate("rate_caveat") as beat:
            caveat = style.zh("⚠ 这些数都是编出来的示意数", size=style.LABEL_SIZE, color=style.HIGHLIGHT).to_corner(
                UP + RIGHT, buff=style.EDGE
            )
            self.play(FadeIn(caveat, shift=0.2 * UP), run_time=beat.share(0.3))
            self.play(Circumscribe(total_box, color=style.HIGHLIGHT), run_time=beat.share(0.4))
        self.finish()

    def _word_tag(self, word: str, gloss: str, y: float) -> VGroup:
        """A row's word on the left edge: the term and, under it, what it does."""
        tag = VGroup(
            style.zh(word, size=style.BODY_SIZE, color=style.HIGHLIGHT),
            style.zh(gloss, size=style.SMALL_SIZE, color=style.MUTED),
        ).arrange(DOWN, buff=style.GAP_S)
        return tag.move_to((self.TAG_X, y, 0))

    def _ruler(self, label: str, y: float, start, colour: str) -> tuple[Text, Line, Dot, Text]:
        """A named ruler: its name, its line, the dot that moves on it, and the dot's reading."""
        name = style.zh(label, size=style.LABEL_SIZE, color=style.MUTED).move_to((self.RULER_NAME_X, y, 0))
        line = Line((self.RULER_SPAN[0], y, 0), (self.RULER_SPAN[1], y, 0), color=style.MUTED, stroke_width=2)
        dot = Dot((self.RULER_START, y, 0), radius=0.09, color=colour)
        reading = style.value(start, color=colour).next_to(dot, UP, buff=style.GAP_S)
        return name, line, dot, reading

    def _nudge(self, dot, reading, end_fact, distance, colour, run_time) -> Line:
        """Move a dot by `distance`, leave the stretch it covered, update its reading."""
        start = dot.get_center()
        stretch = Line(start, start + distance * RIGHT, color=colour, stroke_width=7)
        new_reading = style.value(end_fact, color=colour).next_to(start + distance * RIGHT, UP, buff=style.GAP_S)
        self.play(
            dot.animate.shift(distance * RIGHT), Create(stretch), Transform(reading, new_reading), run_time=run_time
        )
        return stretch

    def _divide(self, facts, tag) -> None:
        """The first word: nudge the input, see how far the output moves, divide the two."""
        in_parts = self._ruler("输入", self.INPUT_Y, facts["x_before"], style.HIGHLIGHT)
        out_parts = self._ruler("输出", self.OUTPUT_Y, facts["y_before"], style.FORWARD)
        with self.narrate("rate_nudge") as beat:
            self.play(Indicate(tag[0]), *(FadeIn(m) for m in (*in_parts, *out_parts)), run_time=beat.share(0.25))
            d_in = facts["moved_0"].value * self.SCALE
            d_out = facts["moved_1"].value * self.SCALE
            in_stretch = self._nudge(
                in_parts[2], in_parts[3], facts["x_after"], d_in, style.HIGHLIGHT, beat.share(0.25)
            )
            self.wait(beat.share(0.1))
            out_stretch = self._nudge(
                out_parts[2], out_parts[3], facts["y_after"], d_out, style.FORWARD, beat.share(0.25)
            )
        with self.narrate("rate_divide") as beat:
            moved_in = style.value(facts["moved_0"], size=style.SMALL_SIZE, color=style.HIGHLIGHT)
            moved_out = style.value(facts["moved_1"], size=style.SMALL_SIZE, color=style.FORWARD)
            self.play(
                FadeIn(moved_in.next_to(in_stretch, DOWN, buff=style.GAP_S)),
                FadeIn(moved_out.next_to(out_stretch, DOWN, buff=style.GAP_M)),
                run_time=beat.share(0.2),
            )
            # Lay the input's stretch along the output's, as many times as it fits: that count is the rate.
            copies = VGroup(*(in_stretch.copy() for _ in range(round(facts["rate_a"].value))))
            copies.arrange(RIGHT, buff=style.GAP_XS).next_to(out_stretch, DOWN, buff=0.06).align_to(out_stretch, LEFT)
            self.play(
                LaggedStart(*(TransformFromCopy(in_stretch, c) for c in copies), lag_ratio=0.6),
                run_time=beat.share(0.3),
            )
            equation = style.math(
                f"{facts['moved_1'].text} div {facts['moved_0'].text} = {facts['rate_a'].text}", size=style.TITLE_SIZE
            ).move_to(self.EQUATION)
            name = style.zh("兑换率", size=style.LABEL_SIZE, color=style.HIGHLIGHT).next_to(
                equation, DOWN, buff=style.GAP_SM
            )
            self.play(TransformFromCopy(VGroup(moved_out, moved_in), equation), run_time=beat.share(0.25))
            self.play(FadeIn(name, shift=0.1 * UP), run_time=beat.share(0.15))
        with self.narrate("rate_limit") as beat:
            note = style.zh("差商，不是极限", size=style.SMALL_SIZE, color=style.MUTED).next_to(
                name, RIGHT, buff=style.GAP_ML
            )
            self.play(FadeIn(note), Indicate(equation, color=style.HIGHLIGHT), run_time=beat.share(0.4))

    def _gradient(self, tag) -> None:
        """The second word: one exchange rate per parameter, lined up in a row."""
        params = VGroup(*(Circle(radius=0.2, color=style.TEXT, stroke_width=2) for _ in range(6)))
        params.arrange(RIGHT, buff=style.GAP_L).move_to(self.PARAMS)
        dots = style.zh("⋯", size=style.BODY_SIZE, color=style.MUTED).next_to(params, RIGHT, buff=style.GAP_M)
        name = style.zh("参数", size=style.LABEL_SIZE, color=style.MUTED).next_to(params, LEFT, buff=style.GAP_M)
        chips = VGroup(
            *(
                Square(0.3, stroke_width=0, fill_color=style.BACKWARD, fill_opacity=style.FILL_SOLID).next_to(
                    p, DOWN, buff=style.GAP_M
                )
                for p in params
            )
        )
        with self.narrate("rate_gradient") as beat:
            self.play(
                Indicate(tag[0]),
                FadeIn(name),
                LaggedStart(*(FadeIn(p, scale=0.5) for p in params), lag_ratio=0.15),
                FadeIn(dots),
                run_time=beat.share(0.3),
            )
            self.play(
                LaggedStart(
                    *(
                        AnimationGroup(Indicate(p, color=style.HIGHLIGHT), GrowFromCenter(c))
                        for p, c in zip(params, chips)
                    ),
                    lag_ratio=0.3,
                ),
                run_time=beat.share(0.4),
            )
            bracket = SurroundingRectangle(chips, color=style.BACKWARD, buff=style.GAP_S, corner_radius=0.08)
            label = style.zh("每个参数一个兑换率，排成一排", size=style.LABEL_SIZE, color=style.BACKWARD).next_to(
                bracket, RIGHT, buff=style.GAP_ML
            )
            self.play(Create(bracket), FadeIn(label, shift=0.2 * LEFT), run_time=beat.share(0.25))

    def _chain(self, facts, tag) -> SurroundingRectangle:
        """The third word: a nudge travels a chain of links, and the total rate is their product. Returns its box."""
        y = self.CHAIN_Y
        nodes = VGroup(
            *(
                Circle(radius=0.28, color=style.TEXT, stroke_width=2).move_to(
                    (self.CHAIN_START + i * self.CHAIN_PITCH, y, 0)
                )
                for i in range(4)
            )
        )
        links, arrows = VGroup(), VGroup()
        for i in range(3):
            box = RoundedRectangle(width=0.95, height=0.5, corner_radius=0.1, color=style.MUTED, stroke_width=2)
            mark = style.zh(f"×{facts[f'link_{i + 1}'].text}", size=style.LABEL_SIZE)
            links.add(VGroup(box, mark.move_to(box)).move_to((nodes[i].get_center() + nodes[i + 1].get_center()) / 2))
            arrows.add(
                Arrow(
                    nodes[i].get_right(),
                    links[i].get_left(),
                    buff=style.GAP_XS,
                    stroke_width=2,
                    max_tip_length_to_length_ratio=0.35,
                    color=style.MUTED,
                ),
                Arrow(
                    links[i].get_right(),
                    nodes[i + 1].get_left(),
                    buff=style.GAP_XS,
                    stroke_width=2,
                    max_tip_length_to_length_ratio=0.35,
                    color=style.MUTED,
                ),
            )
        with self.narrate("rate_chain") as beat:
            self.play(Indicate(tag[0]), FadeIn(nodes), run_time=beat.share(0.25))
            self.play(
                LaggedStart(
                    *(FadeIn(VGroup(arrows[2 * i], links[i], arrows[2 * i + 1])) for i in range(3)), lag_ratio=0.5
                ),
                run_time=beat.share(0.6),
            )
        moved = [
            style.value(facts[f"moved_{i}"], color=style.HIGHLIGHT).next_to(nodes[i], DOWN, buff=style.GAP_SM)
            for i in range(4)
        ]
        with self.narrate("rate_travel") as beat:
            self.play(
                FadeIn(moved[0], scale=1.3), nodes[0].animate.set_stroke(style.HIGHLIGHT), run_time=beat.share(0.15)
            )
            for i in range(3):
                pulse = Dot(nodes[i].get_center(), radius=0.1, color=style.HIGHLIGHT)
                self.play(
                    MoveAlongPath(pulse, Line(nodes[i].get_center(), nodes[i + 1].get_center())),
                    Indicate(links[i], color=style.HIGHLIGHT),
                    run_time=beat.share(0.14),
                )
                self.remove(pulse)
                self.play(
                    TransformFromCopy(moved[i], moved[i + 1]),
                    nodes[i + 1].animate.set_stroke(style.HIGHLIGHT),
                    run_time=beat.share(0.11),
                )
        with self.narrate("rate_product") as beat:
            total = style.math(
                f"{facts['moved_3'].text} div {facts['moved_0'].text} = {facts['total'].text}", size=style.TITLE_SIZE
            )
            product = style.math(
                " = " + " times ".join(f"{facts[f'link_{i}'].text}" for i in (1, 2, 3)), size=style.TITLE_SIZE
            )
            group = VGroup(total, product).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
            group.move_to((self.PRODUCT_X, y, 0))
            self.play(TransformFromCopy(VGroup(moved[3], moved[0]), total), run_time=beat.share(0.25))
            self.play(TransformFromCopy(VGroup(*(link[1] for link in links)), product), run_time=beat.share(0.25))
            box = SurroundingRectangle(group, color=style.HIGHLIGHT, buff=style.GAP_SM, corner_radius=0.08)
            self.play(Create(box), run_time=beat.share(0.1))
            shrink = links[facts["shrinking_link"].value[0] - 1]
            note = style.zh("缩小", size=style.SMALL_SIZE, color=style.BACKWARD).next_to(shrink, UP, buff=style.GAP_S)
            self.play(
                shrink[0].animate.set_stroke(style.BACKWARD, 4),
                FadeIn(note, shift=0.1 * DOWN),
                run_time=beat.share(0.2),
            )
        return box


class FiniteDifferences(LectureScene):
    """The brute-force way: nudge one parameter, rerun the whole forward; a counter races to 三千亿."""

    BAR_LEFT, BAR_WIDTH, BAR_Y = -6.2, 12.4, -0.55
    NETWORK_Y, LAYER_START, LAYER_PITCH = 1.5, -5.6, 1.15  # five layers in a row, then the loss
    LOSS_X = 0.45
    COUNTER_X = 4.2  # the counter panel: two labels, each over its reading
    COUNTER_Y = {"tried_label": 2.55, "tried": 2.0, "time_label": 1.35, "spent": 0.8}
    TOTAL = 1.6 * DOWN  # seconds ÷ a year
    PASSES = np.array((-3.0, 1.1, 0))  # where the network was: many forwards, then one backward

    def construct(self) -> None:
        facts = self.facts
        counter = facts["counter"].value
        self.show_title()
        blocks, grids, loss = self._fd_network()
        with self.narrate("brute_intro") as beat:
            self.play(LaggedStart(*(FadeIn(b) for b in blocks), lag_ratio=0.15), run_time=beat.share(0.5))
            self.play(FadeIn(loss, shift=0.2 * LEFT), run_time=beat.share(0.3))

        # The counter panel and the progress bar over all parameters.
        tried_label = style.zh("已动过的参数", size=style.LABEL_SIZE, color=style.MUTED)
        time_label = style.zh("已用时间", size=style.LABEL_SIZE, color=style.MUTED)
        tried_label.move_to((self.COUNTER_X, self.COUNTER_Y["tried_label"], 0))
        time_label.move_to((self.COUNTER_X, self.COUNTER_Y["time_label"], 0))
        tried = self._reading(counter[0]["parameters"], self.COUNTER_Y["tried"])
        spent = self._reading(counter[0]["elapsed"], self.COUNTER_Y["spent"])
        frame = Rectangle(width=self.BAR_WIDTH, height=0.36, color=style.MUTED, stroke_width=2)
        frame.move_to((self.BAR_LEFT, self.BAR_Y, 0), aligned_edge=LEFT)
        fill = self._fill(0.0)
        bar_name = (
            style.zh(f"{facts['parameters'].text}个参数，一个一个来", size=style.LABEL_SIZE, color=style.MUTED)
            .next_to(frame, UP, buff=style.GAP_S)
            .align_to(frame, RIGHT)
        )

        with self.narrate("brute_nudge") as beat:
            dot = grids[1][7]
            tag = style.zh("动一丁点", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            tag.next_to(blocks[1], DOWN, buff=style.GAP_S)
            self.play(dot.animate.set_color(style.HIGHLIGHT).scale(2.2), FadeIn(tag), run_time=beat.share(0.2))
            run = style.zh("整个前向重跑一遍", size=style.LABEL_SIZE, color=style.FORWARD)
            run.next_to(VGroup(*blocks), UP, buff=style.GAP_S)
            self.play(FadeIn(run), run_time=beat.share(0.1))
            self._forward_sweep(blocks, loss, beat.share(0.4))
            asked = style.zh("变了多少？", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            asked.next_to(loss, DOWN, buff=style.GAP_SM).shift(0.4 * RIGHT)
            self.play(FadeIn(asked, shift=0.1 * UP), run_time=beat.share(0.15))

        with self.narrate("brute_next") as beat:
            derivative = style.zh("一除：一个导数", size=style.LABEL_SIZE, color=style.BACKWARD).move_to(asked)
            self.play(
                FadeIn(tried_label),
                FadeIn(time_label),
                FadeIn(tried),
                FadeIn(spent),
                ReplacementTransform(asked, derivative),
                run_time=beat.share(0.25),
            )
            previous = dot
            for stop, target in zip(counter[1:3], (grids[2][4], grids[3][10])):
                self.play(
                    previous.animate.set_color(style.MUTED).scale(1 / 2.2),
                    target.animate.set_color(style.HIGHLIGHT).scale(2.2),
                    tag.animate.set_x(target.get_x()),
                    run_time=beat.share(0.1),
                )
                self._forward_sweep(blocks, loss, beat.share(0.16))
                self._tick(tried, spent, stop, beat.share(0.08))
                previous = target

        with self.narrate("brute_count") as beat:
            self.play(Create(frame), FadeIn(fill), FadeIn(bar_name), run_time=beat.share(0.35))
            per = style.zh(
                f"一次前向按 {facts['seconds_per_forward'].text}算", size=style.LABEL_SIZE, color=style.FORWARD
            ).move_to(run)
            self.play(ReplacementTransform(run, per), run_time=beat.share(0.25))

        with self.narrate("brute_race") as beat:
            self.play(FadeOut(tag), previous.animate.set_color(style.MUTED).scale(1 / 2.2), run_time=beat.share(0.05))
            stops = counter[3:]
            step = beat.share(0.85) / len(stops)
            for stop in stops:
                new_fill = self._fill(stop["share"])
                self._tick(
                    tried,
                    spent,
                    stop,
                    0.45 * step,
                    Transform(fill, new_fill),
                    ShowPassingFlash(self._sweep_line(blocks, loss), time_width=0.5),
                )
                self.wait(0.55 * step)

        with self.narrate("brute_total") as beat:
            sum_line = style.zh(
                f"{facts['seconds'].text} 秒 ÷ {facts['year_seconds'].text}/年 = {facts['years'].text}",
                size=style.BODY_SIZE,
            ).move_to(self.TOTAL)
            self.play(
                FadeIn(sum_line, shift=0.2 * UP), Indicate(spent, color=style.HIGHLIGHT), run_time=beat.share(0.45)
            )
            nearly = style.zh(facts["nearly"].text, size=style.TITLE_SIZE, color=style.HIGHLIGHT)
            nearly.next_to(sum_line, DOWN, buff=style.GAP_ML)
            self.play(GrowFromCenter(nearly), run_time=beat.share(0.3))

        with self.narrate("brute_one_step") as beat:
            one_step = style.zh("而这，还只是一步", size=style.BODY_SIZE, color=style.VERDICT_BAD)
            one_step.next_to(nearly, RIGHT, buff=style.GAP_XL)
            self.play(
                FadeIn(one_step, shift=0.2 * LEFT),
                Circumscribe(frame, color=style.VERDICT_BAD),
                run_time=beat.share(0.5),
            )

        with self.narrate("brute_point") as beat:
            self.play(FadeOut(VGroup(*blocks, loss, per, derivative)), run_time=beat.share(0.12))
            many = VGroup(
                *(
                    Arrow(
                        2 * LEFT,
                        2 * RIGHT,
                        buff=style.FLUSH,
                        stroke_width=2,
                        color=style.FORWARD,
                        max_tip_length_to_length_ratio=0.06,
                    )
                    for _ in range(5)
                )
            )
            many.arrange(DOWN, buff=style.GAP_S).move_to(self.PASSES)
            many_name = style.zh(
                f"{facts['parameters'].text}次前向", size=style.BODY_SIZE, color=style.FORWARD
            ).next_to(many, UP, buff=style.GAP_M)
            self.play(
                LaggedStart(*(GrowArrow(a) for a in many), lag_ratio=0.1), FadeIn(many_name), run_time=beat.share(0.3)
            )
            one = Arrow(2 * RIGHT, 2 * LEFT, buff=style.FLUSH, stroke_width=8, color=style.BACKWARD).move_to(
                self.PASSES
            )
            one_name = style.zh("压成一次反向", size=style.BODY_SIZE, color=style.BACKWARD)
            one_name.next_to(one, DOWN, buff=style.GAP_M)
            self.play(
                ReplacementTransform(many, one),
                FadeIn(one_name, shift=0.2 * UP),
                many_name.animate.set_opacity(0.5),
                run_time=beat.share(0.35),
            )
        self.finish()

    def _fd_network(self) -> tuple[list[VGroup], VGroup, VGroup]:
        """Five layers, each a panel with its parameters drawn as dots inside it."""
        blocks, grids = [], VGroup()
        for i in range(5):
            panel = widgets.panel(0.8, 2.0, corner_radius=0.08, stroke_width=2).set_stroke(style.FORWARD)
            panel.move_to((self.LAYER_START + i * self.LAYER_PITCH, self.NETWORK_Y, 0))
            grid = VGroup(*(Dot(radius=0.04, color=style.MUTED) for _ in range(18))).arrange_in_grid(6, 3, buff=0.18)
            grids.add(grid.move_to(panel))
            blocks.append(VGroup(panel, grid))
        loss = VGroup(
            Circle(radius=0.42, color=style.TEXT, stroke_width=2), style.zh("损失", size=style.LABEL_SIZE)
        ).move_to((self.LOSS_X, self.NETWORK_Y, 0))
        loss[1].move_to(loss[0])
        return blocks, grids, loss

    @classmethod
    def _reading(cls, text: str, y: float) -> Text:
        """A counter reading, in the counter panel at height y."""
        return style.zh(text, size=style.TITLE_SIZE, color=style.TEXT).move_to((cls.COUNTER_X, y, 0))

    def _fill(self, share: float) -> Rectangle:
        width = max(share * self.BAR_WIDTH, 0.02)
        bar = widgets.bar(width, 0.36, style.FORWARD)
        return bar.move_to((self.BAR_LEFT, self.BAR_Y, 0), aligned_edge=LEFT)

    @staticmethod
    def _sweep_line(blocks, loss) -> Line:
        """The path of one forward pass, from the first layer into the loss."""
        return Line(blocks[0].get_left(), loss.get_left()).set_stroke(style.FORWARD, 8)

    def _forward_sweep(self, blocks, loss, run_time) -> None:
        self.play(
            ShowPassingFlash(self._sweep_line(blocks, loss), time_width=0.4),
            Succession(
                *(Indicate(b, color=style.FORWARD, scale_factor=1.05) for b in blocks),
                Indicate(loss, color=style.HIGHLIGHT),
            ),
            run_time=run_time,
        )

    def _tick(self, tried, spent, stop, run_time, *extra) -> None:
        """Advance both counter readings to a stop, with any other animations of the same beat."""
        self.play(
            Transform(tried, self._reading(stop["parameters"], tried.get_y())),
            Transform(spent, self._reading(stop["elapsed"], spent.get_y())),
            *extra,
            run_time=run_time,
        )


class FirstGradient(LectureScene):
    """Softmax + cross-entropy: the seed of the backward chain is p − y, on the logits."""

    ROWS = (1.75, 1.0, 0.25, -0.5, -1.25)
    CHAR_X, LOGIT_X, P_X, Y_X, SEED_X = -6.0, -4.55, -2.75, -0.5, 4.6  # column anchors
    HEAD_Y = 2.55  # the columns' heads
    LOSS = np.array((4.6, 3.25, 0))  # the loss, boxed, top right
    SIGNS_Y = -1.95  # what a sign of p − y means, under the seed column
    NOTE = np.array((-0.3, style.CAPTION_TOP + 0.68, 0))  # the note, and the check under it, above the caption band
    SCALE = 2.0  # frame units per unit of probability, for p, y and p − y alike

    def construct(self) -> None:
        facts = self.facts
        chars = facts["chars"].value
        n = len(chars)
        self.show_title()

        with self.narrate("seed_loss") as beat:
            loss_name = style.zh("损失", size=style.BODY_SIZE)
            loss_value = style.zh("一个数", size=style.BODY_SIZE, color=style.HIGHLIGHT)
            loss = VGroup(loss_name, loss_value).arrange(RIGHT, buff=style.GAP_ML).move_to(self.LOSS)
            loss_box = SurroundingRectangle(loss, color=style.HIGHLIGHT, buff=style.GAP_SM, corner_radius=0.08)
            self.play(FadeIn(loss, scale=1.2), Create(loss_box), run_time=beat.share(0.4))

        labels = VGroup(
            *(style.zh(c, size=style.BODY_SIZE).move_to((self.CHAR_X, y, 0)) for c, y in zip(chars, self.ROWS))
        )
        chips = VGroup()
        for i, y in enumerate(self.ROWS):
            box = RoundedRectangle(width=0.9, height=0.5, corner_radius=0.08, color=style.MUTED, stroke_width=2)
            chips.add(VGroup(box, style.value(facts[f"logit_{i}"]).move_to(box)).move_to((self.LOGIT_X, y, 0)))
        head_y = self.HEAD_Y
        with self.narrate("seed_logits") as beat:
            head = style.zh("logits", size=style.LABEL_SIZE, color=style.MUTED).move_to((self.LOGIT_X, head_y, 0))
            self.play(FadeIn(labels, shift=0.2 * RIGHT), FadeIn(head), run_time=beat.share(0.3))
            self.play(
                LaggedStart(*(FadeIn(c, shift=0.2 * LEFT) for c in chips), lag_ratio=0.2), run_time=beat.share(0.5)
            )

        p_bars, p_texts = self._probability_bars("p", self.P_X, style.FORWARD)
        with self.narrate("seed_softmax") as beat:
            arrow = Arrow(
                (head.get_right()[0] + 0.1, head_y, 0),
                (self.P_X - 0.1, head_y, 0),
                buff=style.FLUSH,
                stroke_width=3,
                color=style.FORWARD,
                max_tip_length_to_length_ratio=0.2,
            )
            arrow_name = style.zh("softmax", size=style.SMALL_SIZE, color=style.FORWARD).next_to(
                arrow, UP, buff=style.GAP_XS
            )
            head_p = style.zh("p：你猜的", size=style.LABEL_SIZE, color=style.FORWARD)
            head_p.next_to((self.P_X, head_y, 0), RIGHT, buff=style.FLUSH)
            self.play(GrowArrow(arrow), FadeIn(arrow_name), FadeIn(head_p), run_time=beat.share(0.2))
            self.play(*(TransformFromCopy(chips[i], p_bars[i]) for i in range(n)), run_time=beat.share(0.3))
            for i in (0, 1):  # the two the narration names
                self.play(
                    FadeIn(p_texts[i], shift=0.1 * RIGHT),
                    Indicate(labels[i], color=style.FORWARD),
                    run_time=beat.share(0.12),
                )
            self.play(*(FadeIn(t) for t in p_texts[2:]), run_time=beat.share(0.1))

        y_bars, y_texts = self._probability_bars("y", self.Y_X, style.HIGHLIGHT)
        with self.narrate("seed_truth") as beat:
            minus = style.zh("−", size=style.BODY_SIZE).move_to((self.Y_X - 0.35, head_y, 0))
            head_y_text = style.zh("y：正确答案", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            head_y_text.next_to((self.Y_X, head_y, 0), RIGHT, buff=style.FLUSH)
            self.play(
                FadeIn(minus),
                FadeIn(head_y_text),
                *(GrowFromEdge(b, LEFT) for b in y_bars),
                *(FadeIn(t) for t in y_texts),
                run_time=beat.share(0.3),
            )
            self.play(
                Indicate(labels[0], color=style.HIGHLIGHT),
                Indicate(y_bars[0], color=style.HIGHLIGHT),
                run_time=beat.share(0.2),
            )
            value = style.zh(f"= −ln p({chars[0]}) = {facts['loss'].text}", size=style.BODY_SIZE, color=style.HIGHLIGHT)
            new_loss = (
                VGroup(loss_name.copy(), value).arrange(RIGHT, buff=style.GAP_ML).move_to(loss).align_to(loss, RIGHT)
            )
            self.play(
                Transform(loss, new_loss),
                Transform(
                    loss_box,
                    SurroundingRectangle(new_loss, color=style.HIGHLIGHT, buff=style.GAP_SM, corner_radius=0.08),
                ),
                run_time=beat.share(0.3),
            )

        seed_bars, seed_texts = self._seed_bars()
        with self.narrate("seed_subtract") as beat:
            equals = style.zh("=", size=style.BODY_SIZE).move_to((self.SEED_X - 2.0, head_y, 0))
            head_seed = style.zh("p − y：梯度的种子", size=style.LABEL_SIZE, color=style.BACKWARD)
            head_seed.move_to((self.SEED_X, head_y, 0))
            axis = Line(
                (self.SEED_X, self.ROWS[0] + 0.35, 0),
                (self.SEED_X, self.ROWS[-1] - 0.35, 0),
                color=style.MUTED,
                stroke_width=2,
            )
            self.play(FadeIn(equals), FadeIn(head_seed), Create(axis), run_time=beat.share(0.15))
            for i in (0, 1):
                self.play(
                    TransformFromCopy(VGroup(p_bars[i], y_bars[i]), seed_bars[i]),
                    Indicate(VGroup(p_texts[i], y_texts[i]), color=style.BACKWARD),
                    run_time=beat.share(0.2),
                )
                self.play(FadeIn(seed_texts[i], scale=1.3), run_time=beat.share(0.1))
            self.play(
                *(TransformFromCopy(VGroup(p_bars[i], y_bars[i]), seed_bars[i]) for i in range(2, n)),
                *(FadeIn(seed_texts[i]) for i in range(2, n)),
                run_time=beat.share(0.15),
            )

        with self.narrate("seed_sign") as beat:
            up = style.zh("正：猜高了", size=style.SMALL_SIZE, color=style.BACKWARD)
            down = style.zh("负：该高没高", size=style.SMALL_SIZE, color=style.BACKWARD)
            signs = VGroup(down, up).arrange(RIGHT, buff=style.GAP_XL).move_to((self.SEED_X, self.SIGNS_Y, 0))
            self.play(
                FadeIn(up),
                *(Indicate(seed_bars[i], color=style.HIGHLIGHT) for i in range(1, n)),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(down), Indicate(seed_bars[0], color=style.HIGHLIGHT), run_time=beat.share(0.3))
            seed_box = SurroundingRectangle(
                VGroup(seed_bars, seed_texts), color=style.BACKWARD, buff=style.GAP_SM, corner_radius=0.08
            )
            self.play(Create(seed_box), run_time=beat.share(0.2))

        with self.narrate("seed_logits_caveat") as beat:
            back = CurvedArrow(
                (self.SEED_X - 1.0, self.ROWS[-1] - 0.35, 0),
                (self.LOGIT_X, self.ROWS[-1] - 0.3, 0),
                angle=-0.25,
                color=style.BACKWARD,
                stroke_width=4,
            )
            note = style.zh(
                "对 logits（softmax 之前）求导，不是对概率 p", size=style.LABEL_SIZE, color=style.BACKWARD
            ).move_to(self.NOTE)
            self.play(FadeOut(signs), run_time=beat.share(0.1))
            self.play(Create(back), Indicate(chips, color=style.BACKWARD), run_time=beat.share(0.35))
            self.play(FadeIn(note, shift=0.1 * UP), run_time=beat.share(0.2))

        with self.narrate("seed_check") as beat:
            check = style.zh(
                f"有限差分核对：每个 logit 动一丁点重算损失，最大误差 {facts['fd_error'].text}",
                size=style.SMALL_SIZE,
                color=style.MUTED,
            ).next_to(note, DOWN, buff=0.12)
            self.play(FadeIn(check), run_time=beat.share(0.3))
        self.finish()

    def _probability_bars(self, key: str, x: float, colour: str) -> tuple[VGroup, VGroup]:
        """Bars growing right from x, one per row, with their values beside them."""
        bars, texts = VGroup(), VGroup()
        for i, y in enumerate(self.ROWS):
            fact = self.facts[f"{key}_{i}"]
            width = max(fact.value * self.SCALE, 0.02)
            bar = widgets.bar(width, 0.42, colour, opacity=style.FILL_SOLID if fact.value else style.FILL_FAINT)
            bars.add(bar.move_to((x, y, 0), aligned_edge=LEFT))
            texts.add(style.value(fact, color=colour).next_to(bar, RIGHT, buff=style.GAP_S))
        return bars, texts

    def _seed_bars(self) -> tuple[VGroup, VGroup]:
        """Signed bars about the seed axis: negative to the left, positive to the right."""
        bars, texts = VGroup(), VGroup()
        values = self.facts["seed_values"].value
        for i, (v, y) in enumerate(zip(values, self.ROWS)):
            width = abs(v) * self.SCALE
            bar = widgets.bar(width, 0.42, style.BACKWARD)
            bar.move_to((self.SEED_X, y, 0), aligned_edge=LEFT if v > 0 else RIGHT)
            bars.add(bar)
            text = style.value(self.facts[f"seed_{i}"], color=style.BACKWARD)
            texts.add(text.next_to(bar, RIGHT if v > 0 else LEFT, buff=style.GAP_S))
        return bars, texts


def _wish_arrow(wish: float, at, scale: float = 1.5) -> VMobject:
    """Up to brighten, down to dim, as long as the push; a flat dash when the push is about nothing."""
    length = abs(wish) * scale
    centre = np.array(at, dtype=float)
    if length < 0.06:
        return Line(centre + 0.12 * LEFT, centre + 0.12 * RIGHT, color=style.BACKWARD, stroke_width=4)
    half = (length / 2) * (UP if wish > 0 else DOWN)
    return Arrow(
        centre - half,
        centre + half,
        buff=style.FLUSH,
        color=style.BACKWARD,
        stroke_width=6,
        tip_length=0.14,
        max_tip_length_to_length_ratio=0.6,
        max_stroke_width_to_length_ratio=40,
    )


class BackpropNudge3b1b(LectureScene):
    """3Blue1Brown's four devices, redrawn with the next-character example; number-free."""

    OUT_Y = (2.0, 1.1, 0.2, -0.7, -1.6)
    MID_Y = (1.55, 0.65, -0.25, -1.15)
    X0, X1, X2 = -5.4, -2.6, 0.4  # layer below, upstream layer, output layer
    DEVICES = np.array((4.95, 0.9, 0))  # the four devices, listed down the right
    CLOSING_Y = style.CAPTION_TOP + 0.45  # the two closing lines, under the examples and above the caption band
    # The examples: one row per character, one column of pushes per example, then their average.
    EXAMPLE_ROWS = (1.7, 0.9, 0.1, -0.7, -1.5)
    CHAR_X, EXAMPLE_XS, AVERAGE_X = -6.2, (-4.6, -2.5, -0.4), 2.0
    EXAMPLE_HEAD_Y = 2.55

    def construct(self) -> None:
        facts = self.facts
        chars = facts["chars"].value
        self.show_title()
        below = self._layer(self.X0, self.MID_Y, [None] * 4)
        mid = self._layer(self.X1, self.MID_Y, facts["upstream"].value)
        out = self._layer(self.X2, self.OUT_Y, facts["brightness"].value)
        edges_low = self._edges(below, mid)
        edges = self._edges(mid, out)
        names = VGroup(
            *(style.zh(c, size=style.BODY_SIZE).next_to(n, RIGHT, buff=style.GAP_M) for c, n in zip(chars, out))
        )
        context = style.zh(
            f"例子：「{facts['contexts'].value[0][0]}＿」", size=style.LABEL_SIZE, color=style.HIGHLIGHT
        ).to_corner(UP + RIGHT, buff=style.EDGE)
        devices = [
            style.zh(t, size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            for t in ("① 推多少，看差多远", "② 变亮有三条路", "③ 改权重，看上游亮度", "④ 众口难调，取平均")
        ]
        VGroup(*devices).arrange(DOWN, aligned_edge=LEFT, buff=style.EDGE).move_to(self.DEVICES)
        target = names[0]

        with self.narrate("nudge_intro") as beat:
            self.play(
                FadeIn(below), FadeIn(mid), FadeIn(out), Create(edges_low), Create(edges), run_time=beat.share(0.45)
            )
            self.play(FadeIn(names, shift=0.1 * LEFT), FadeIn(context), run_time=beat.share(0.3))

        wish = facts["wish"].value
        arrows = VGroup(
            *(_wish_arrow(w, (names[i].get_right()[0] + 0.4, self.OUT_Y[i], 0)) for i, w in enumerate(wish))
        )
        with self.narrate("nudge_wish") as beat:
            ring = SurroundingRectangle(
                VGroup(out[0], target), color=style.HIGHLIGHT, buff=style.GAP_S, corner_radius=0.1
            )
            self.play(Create(ring), run_time=beat.share(0.2))
            self.play(GrowArrow(arrows[0]), run_time=beat.share(0.25))
            self.play(*(GrowArrow(a) for a in arrows[1:]), run_time=beat.share(0.25))

        with self.narrate("nudge_size") as beat:
            self.play(FadeIn(devices[0], shift=0.2 * LEFT), run_time=beat.share(0.2))
            self.play(Indicate(arrows[0], color=style.HIGHLIGHT, scale_factor=1.3), run_time=beat.share(0.35))
            self.play(*(Indicate(a, color=style.HIGHLIGHT) for a in arrows[1:]), run_time=beat.share(0.3))

        into_target = VGroup(*(edges[k * len(out) + 0] for k in range(len(mid))))
        with self.narrate("nudge_three_ways") as beat:
            self.play(FadeIn(devices[1], shift=0.2 * LEFT), run_time=beat.share(0.15))
            bias = style.zh("偏置", size=style.LABEL_SIZE, color=style.BACKWARD).next_to(ring, UP, buff=style.GAP_S)
            self.play(FadeIn(bias, shift=0.15 * DOWN), Indicate(out[0], color=style.BACKWARD), run_time=beat.share(0.2))
            weight = style.zh("权重", size=style.LABEL_SIZE, color=style.BACKWARD)
            weight.move_to(into_target[0].point_from_proportion(0.55) + 0.3 * UP)
            self.play(
                FadeIn(weight), into_target.animate.set_stroke(style.BACKWARD, opacity=1), run_time=beat.share(0.25)
            )
            activation = style.zh("上一层激活", size=style.LABEL_SIZE, color=style.BACKWARD)
            activation.next_to(mid, UP, buff=style.GAP_M)
            self.play(
                FadeIn(activation), Indicate(mid, color=style.BACKWARD, scale_factor=1.05), run_time=beat.share(0.25)
            )

        nudges = facts["weight_nudge"].value
        with self.narrate("nudge_weights") as beat:
            self.play(FadeIn(devices[2], shift=0.2 * LEFT), run_time=beat.share(0.15))
            widths = [2 + 12 * v / max(nudges) for v in nudges]
            self.play(*(e.animate.set_stroke(width=w) for e, w in zip(into_target, widths)), run_time=beat.share(0.4))
            brightest = mid[int(np.argmax(facts["upstream"].value))]
            self.play(Indicate(brightest, color=style.HIGHLIGHT, scale_factor=1.3), run_time=beat.share(0.3))

        with self.narrate("nudge_keep") as beat:
            keep = DashedVMobject(SurroundingRectangle(mid, color=style.FORWARD, buff=style.GAP_SM, corner_radius=0.1))
            keep_name = style.zh("前向时的亮度：得存着", size=style.LABEL_SIZE, color=style.FORWARD)
            keep_name.next_to(keep, DOWN, buff=style.GAP_SM)
            self.play(Create(keep), FadeOut(activation), run_time=beat.share(0.3))
            self.play(FadeIn(keep_name, shift=0.1 * UP), run_time=beat.share(0.3))

        # What 「的」 alone asks of the layer below, then every output's request added up.
        asks = VGroup(
            *(
                _wish_arrow(v, (self.X1 - 0.55, y, 0), scale=0.8)
                for v, y in zip(facts["target_request"].value, self.MID_Y)
            )
        )
        summed = VGroup(
            *(
                _wish_arrow(v, (self.X1 - 0.55, y, 0), scale=0.8)
                for v, y in zip(facts["previous_nudge"].value, self.MID_Y)
            )
        )
        with self.narrate("nudge_previous") as beat:
            self.play(FadeOut(keep), FadeOut(keep_name), run_time=beat.share(0.08))
            self.play(
                LaggedStart(*(GrowArrow(a) if isinstance(a, Arrow) else Create(a) for a in asks), lag_ratio=0.2),
                run_time=beat.share(0.3),
            )
            backward = VGroup(*(Line(e.get_end(), e.get_start()).set_stroke(style.BACKWARD, 4) for e in edges))
            self.play(
                LaggedStart(*(ShowPassingFlash(b, time_width=0.6) for b in backward), lag_ratio=0.02),
                Transform(asks, summed),
                run_time=beat.share(0.25),
            )
            down = VGroup(*(Line(e.get_end(), e.get_start()).set_stroke(style.BACKWARD, 4) for e in edges_low))
            self.play(
                LaggedStart(*(ShowPassingFlash(b, time_width=0.6) for b in down), lag_ratio=0.02),
                Indicate(below, color=style.BACKWARD, scale_factor=1.05),
                run_time=beat.share(0.25),
            )

        network = VGroup(below, mid, out, edges_low, edges, names, arrows, asks, ring, bias, weight)
        labels, columns, average_head, average = self._examples(facts, chars)
        with self.narrate("nudge_examples") as beat:
            self.play(FadeOut(network), FadeOut(context), run_time=beat.share(0.15))
            self.play(
                FadeIn(devices[3], shift=0.2 * LEFT), FadeIn(labels), FadeIn(columns[0]), run_time=beat.share(0.2)
            )
            for column in columns[1:]:
                self.play(FadeIn(column, shift=0.2 * LEFT), run_time=beat.share(0.2))

        with self.narrate("nudge_average") as beat:
            self.play(
                FadeIn(average_head),
                TransformFromCopy(VGroup(*(c[1:] for c in columns)), average),
                run_time=beat.share(0.3),
            )
            greedy = style.zh("只听第一个：什么都猜「的」", size=style.LABEL_SIZE, color=style.MUTED)
            later = style.zh("后面：多张卡之间也这样取平均", size=style.LABEL_SIZE, color=style.COMM)
            closing = VGroup(greedy, later).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_SM)
            closing.set_y(self.CLOSING_Y).align_to(labels, LEFT)
            self.play(Indicate(columns[0], color=style.MUTED), FadeIn(greedy), run_time=beat.share(0.3))
            self.play(FadeIn(later, shift=0.1 * UP), run_time=beat.share(0.2))
        self.finish()

    @staticmethod
    def _layer(x: float, ys, brightness) -> VGroup:
        """Neurons as circles lit by their activation (a layer without values is drawn dim)."""
        layer = VGroup()
        for y, b in zip(ys, brightness):
            layer.add(
                Circle(
                    radius=0.28,
                    color=style.TEXT,
                    stroke_width=2,
                    fill_color=style.TEXT,
                    fill_opacity=style.FILL_GHOST if b is None else b,
                ).move_to((x, y, 0))
            )
        return layer

    @staticmethod
    def _edges(left: VGroup, right: VGroup) -> VGroup:
        """Every neuron on the left to every neuron on the right; edge k·len(right)+j goes from k to j."""
        return VGroup(
            *(
                Line(a.get_right(), b.get_left(), color=style.MUTED, stroke_width=1.5, stroke_opacity=0.35)
                for a in left
                for b in right
            )
        )

    @classmethod
    def _examples(cls, facts, chars) -> tuple[VGroup, VGroup, VGroup, VGroup]:
        """Row labels, one column of pushes per example, and their average column."""
        rows, head_y = cls.EXAMPLE_ROWS, cls.EXAMPLE_HEAD_Y
        labels = VGroup(*(style.zh(c, size=style.BODY_SIZE).move_to((cls.CHAR_X, y, 0)) for c, y in zip(chars, rows)))
        columns = VGroup()
        for x, (context, _char), wishes in zip(cls.EXAMPLE_XS, facts["contexts"].value, facts["wishes"].value):
            head = style.zh(f"{context}＿", size=style.LABEL_SIZE, color=style.HIGHLIGHT).move_to((x, head_y, 0))
            columns.add(VGroup(head, *(_wish_arrow(w, (x, y, 0), scale=1.1) for w, y in zip(wishes, rows))))
        x = cls.AVERAGE_X
        head = style.zh("平均", size=style.LABEL_SIZE, color=style.BACKWARD).move_to((x, head_y, 0))
        divider = DashedLine(
            (x - 1.0, head_y + 0.35, 0), (x - 1.0, rows[-1] - 0.4, 0), color=style.MUTED, stroke_width=2
        )
        average = VGroup(*(_wish_arrow(w, (x, y, 0), scale=1.1) for w, y in zip(facts["average"].value, rows)))
        return labels, columns, VGroup(head, divider), average


MATRIX_FILL_SPAN = 0.75  # a matrix cell's fill runs from FILL_GHOST (a zero) to 0.9 (the largest value)


def _value_matrix(values, colour, cell: float = 0.28) -> VGroup:
    """A tensor as a grid of cells, each lit by the size of its value (the values are real)."""
    grid = np.asarray(values)
    top = float(np.abs(grid).max()) or 1.0
    cells = VGroup(
        *(
            Square(
                cell,
                stroke_color=style.TEXT,
                stroke_width=1,
                fill_color=colour,
                fill_opacity=style.FILL_GHOST + MATRIX_FILL_SPAN * abs(v) / top,
            )
            for v in grid.flat
        )
    )
    return cells.arrange_in_grid(*grid.shape, buff=style.FLUSH)


class LayerTwoMatmuls(LectureScene):
    """One linear layer on the way back: ① upstream × Wᵀ goes down, ② stored inputᵀ × upstream is kept."""

    FORWARD_Y, FIRST_Y, SECOND_Y = 2.0, 0.05, -1.8  # the forward row, then one row per backward matmul
    INPUT_X, WEIGHT_X, OUTPUT_X = -5.6, -3.9, -2.2  # the forward row: input × weight = output
    SLOT_X = -0.3  # where the upstream sensitivity arrives, on the forward row
    RESULT_X, LEFT_X, RIGHT_X = -1.3, 0.45, 2.2  # a backward row: result = left × right
    NAME_X = 4.6  # each backward row's name
    TALLY = np.array((0.85, 2.45, 0))  # left edge of the matmul count

    def construct(self) -> None:
        facts = self.facts
        self.show_title()

        x = _value_matrix(facts["x"].value, style.FORWARD).move_to((self.INPUT_X, self.FORWARD_Y, 0))
        w = _value_matrix(facts["w"].value, style.FORWARD).move_to((self.WEIGHT_X, self.FORWARD_Y, 0))
        y = _value_matrix(facts["y"].value, style.FORWARD).move_to((self.OUTPUT_X, self.FORWARD_Y, 0))
        forward = VGroup(x, self._sign("×", x, w), w, self._sign("=", w, y), y)
        forward_labels = VGroup(
            self._shape_label("输入", facts["x_shape"], x),
            self._shape_label("权重", facts["w_shape"], w),
            self._shape_label("输出", facts["y_shape"], y),
        )
        with self.narrate("layer_forward") as beat:
            self.play(FadeIn(x), FadeIn(forward_labels[0]), run_time=beat.share(0.15))
            self.play(FadeIn(forward[1:3]), FadeIn(forward_labels[1]), run_time=beat.share(0.15))
            self.play(
                FadeIn(forward[3]),
                TransformFromCopy(VGroup(x, w), y),
                FadeIn(forward_labels[2]),
                run_time=beat.share(0.3),
            )
            keep = DashedVMobject(SurroundingRectangle(x, color=style.HIGHLIGHT, buff=style.GAP_S))
            kept = style.zh("存下", size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(keep, UP, buff=style.GAP_S)
            self.play(Create(keep), FadeIn(kept), run_time=beat.share(0.2))

        slot = np.array((self.SLOT_X, self.FORWARD_Y, 0))
        with self.narrate("layer_myth") as beat:
            scalar = Dot(slot + 6 * RIGHT, radius=0.14, color=style.BACKWARD)
            question = style.zh("一个数？", size=style.LABEL_SIZE, color=style.BACKWARD)
            self.play(scalar.animate.move_to(slot), run_time=beat.share(0.3))
            question.next_to(scalar, UP, buff=style.GAP_SM)
            self.play(FadeIn(question), run_time=beat.share(0.15))
            cross = VGroup(
                Line(slot + 0.35 * (UP + LEFT), slot + 0.35 * (DOWN + RIGHT)),
                Line(slot + 0.35 * (UP + RIGHT), slot + 0.35 * (DOWN + LEFT)),
            ).set_stroke(style.VERDICT_BAD, 6)
            self.play(Create(cross), run_time=beat.share(0.2))

        upstream = _value_matrix(facts["upstream"].value, style.BACKWARD).move_to(slot)
        upstream_label = self._shape_label("上游敏感度", facts["upstream_shape"], upstream)
        with self.narrate("layer_upstream") as beat:
            self.play(
                FadeOut(VGroup(scalar, question, cross)),
                FadeIn(upstream, shift=0.5 * LEFT),
                FadeIn(upstream_label),
                run_time=beat.share(0.3),
            )
            outline = SurroundingRectangle(y, color=style.HIGHLIGHT, buff=style.GAP_XS)
            self.play(Create(outline), run_time=beat.share(0.15))
            self.play(outline.animate.move_to(upstream), run_time=beat.share(0.25))
            self.play(Indicate(upstream[0], color=style.HIGHLIGHT, scale_factor=1.6), run_time=beat.share(0.15))
            self.play(FadeOut(outline), run_time=beat.share(0.05))

        first = self._product(
            "grad_input",
            "输入梯度",
            self.FIRST_Y,
            (facts["upstream"].value, "上游", facts["upstream_shape"], style.BACKWARD),
            (np.asarray(facts["w"].value).T, "Wᵀ", facts["wt_shape"], style.FORWARD),
        )
        with self.narrate("layer_first") as beat:
            name = style.zh("① 输入梯度", size=style.BODY_SIZE, color=style.BACKWARD)
            name.move_to((self.NAME_X, self.FIRST_Y, 0))
            self.play(FadeIn(name, shift=0.2 * LEFT), run_time=beat.share(0.12))
            self._multiply(first, upstream, w, beat.share(0.5))
            sent = self._send(first, "交给下面一层")
            self.play(GrowArrow(sent[0]), FadeIn(sent[1]), run_time=beat.share(0.2))

        second = self._product(
            "grad_weight",
            "权重梯度",
            self.SECOND_Y,
            (np.asarray(facts["x"].value).T, "输入ᵀ", facts["xt_shape"], style.FORWARD),
            (facts["upstream"].value, "上游", facts["upstream_shape"], style.BACKWARD),
        )
        with self.narrate("layer_second") as beat:
            name2 = style.zh("② 权重梯度", size=style.BODY_SIZE, color=style.BACKWARD)
            name2.move_to((self.NAME_X, self.SECOND_Y, 0))
            stored = style.zh("用前向存下来的输入", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            stored.next_to(name2, DOWN, buff=style.GAP_SM)
            self.play(FadeIn(name2, shift=0.2 * LEFT), run_time=beat.share(0.12))
            self._multiply(second, x, upstream, beat.share(0.5))
            sent2 = self._send(second, "交给优化器")
            self.play(GrowArrow(sent2[0]), FadeIn(sent2[1]), FadeIn(stored), run_time=beat.share(0.2))

        with self.narrate("layer_hinge") as beat:
            self.play(Circumscribe(VGroup(x, keep), color=style.HIGHLIGHT), run_time=beat.share(0.35))
            self.play(
                Indicate(stored, color=style.HIGHLIGHT, scale_factor=1.15),
                Indicate(second[2], color=style.HIGHLIGHT),
                run_time=beat.share(0.35),
            )

        with self.narrate("layer_count") as beat:
            tally = VGroup(
                style.zh(f"前向 {facts['forward_matmuls'].text}", size=style.TITLE_SIZE, color=style.FORWARD),
                style.zh(f"＋ 反向 {facts['backward_matmuls'].text}", size=style.TITLE_SIZE, color=style.BACKWARD),
                style.zh(f"＝ {facts['ratio'].text}×", size=style.TITLE_SIZE, color=style.HIGHLIGHT),
            )
            tally.arrange(RIGHT, buff=style.GAP_M).move_to(self.TALLY, aligned_edge=LEFT)
            each = style.zh(
                f"三次乘法一样大：各 {facts['flops_each'].text} 次浮点运算", size=style.SMALL_SIZE, color=style.MUTED
            ).next_to(tally, DOWN, buff=style.GAP_M)
            self.play(
                Indicate(forward, color=style.FORWARD, scale_factor=1.05), FadeIn(tally[0]), run_time=beat.share(0.25)
            )
            self.play(
                Indicate(first[1:], color=style.BACKWARD, scale_factor=1.05),
                Indicate(second[1:], color=style.BACKWARD, scale_factor=1.05),
                FadeIn(tally[1]),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(tally[2], scale=1.3), FadeIn(each), run_time=beat.share(0.25))

        with self.narrate("layer_caveat") as beat:
            caveat = VGroup(
                style.zh("⚠ 三倍只数矩阵乘", size=style.SMALL_SIZE, color=style.HIGHLIGHT),
                style.zh("norm、激活、偏置、通信没算：小，但不是零", size=style.SMALL_SIZE, color=style.MUTED),
            ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
            caveat.next_to(each, DOWN, buff=style.GAP_M).align_to(each, LEFT)
            self.play(FadeIn(caveat, shift=0.1 * UP), run_time=beat.share(0.3))

        with self.narrate("layer_check") as beat:
            ticks = VGroup(
                *(
                    style.zh("✓", size=style.BODY_SIZE, color=style.VERDICT_GOOD).next_to(n, RIGHT, buff=style.GAP_M)
                    for n in (name, name2)
                )
            )
            self.play(
                Indicate(first[0], color=style.VERDICT_GOOD),
                Indicate(second[0], color=style.VERDICT_GOOD),
                FadeIn(ticks, scale=1.5),
                run_time=beat.share(0.4),
            )
        self.finish()

    @staticmethod
    def _sign(symbol: str, left, right) -> Text:
        """An operator (×, =) centred between two matrices."""
        return style.zh(symbol, size=style.BODY_SIZE).move_to((left.get_right() + right.get_left()) / 2)

    @staticmethod
    def _shape_label(name: str, shape, grid) -> Text:
        """A matrix's name and shape, under it."""
        return style.zh(f"{name} {shape.text}", size=style.SMALL_SIZE, color=style.MUTED).next_to(
            grid, DOWN, buff=style.GAP_SM
        )

    def _product(self, key, name, row_y, left_factor, right_factor) -> VGroup:
        """result = left × right on one row: [result, =, left, ×, right, labels].

        Each factor is (values, name, shape fact, colour); the result is the fact `key`.
        """
        result = _value_matrix(self.facts[key].value, style.BACKWARD).move_to((self.RESULT_X, row_y, 0))
        labels = VGroup(self._shape_label(name, self.facts[f"{key}_shape"], result))
        factors = []
        for (values, factor_name, shape, colour), x in zip((left_factor, right_factor), (self.LEFT_X, self.RIGHT_X)):
            factors.append(_value_matrix(values, colour).move_to((x, row_y, 0)))
            labels.add(self._shape_label(factor_name, shape, factors[-1]))
        left, right = factors
        return VGroup(result, self._sign("=", result, left), left, self._sign("×", left, right), right, labels)

    def _multiply(self, row, left_source, right_source, run_time) -> None:
        """The two factors arrive from where they live, then the product appears."""
        result, equals, left, times, right, labels = row
        self.play(
            TransformFromCopy(left_source, left),
            TransformFromCopy(right_source, right),
            FadeIn(times),
            FadeIn(labels[1:]),
            run_time=0.55 * run_time,
        )
        self.play(
            FadeIn(equals), TransformFromCopy(VGroup(left, right), result), FadeIn(labels[0]), run_time=0.45 * run_time
        )

    @staticmethod
    def _send(row, where: str) -> VGroup:
        """An arrow out of a row's result, to the left, and where it goes."""
        result = row[0]
        arrow = Arrow(
            result.get_left(),
            result.get_left() + 1.6 * LEFT,
            buff=style.GAP_SM,
            color=style.BACKWARD,
            stroke_width=4,
            max_tip_length_to_length_ratio=0.2,
        )
        label = style.zh(where, size=style.LABEL_SIZE, color=style.BACKWARD).next_to(arrow, LEFT, buff=style.GAP_SM)
        return VGroup(arrow, label)


class GatesCircuit(LectureScene):
    """f = max(a + b, d) · c: values flow forward, gradients flow back gate by gate."""

    # Where each input sits and where each gate sits (frame units), and what each gate does on the way back.
    INPUTS = {"a": (-5.6, 2.3), "b": (-5.6, 1.0), "d": (-5.6, -0.4), "c": (-5.6, -1.9)}
    GATES = {"q": ((-2.9, 1.65), "+", "分发"), "m": ((0.1, 0.6), "max", "路由"), "f": ((3.1, -0.65), "×", "交换")}
    WIRES = [("a", "q"), ("b", "q"), ("q", "m"), ("d", "m"), ("m", "f"), ("c", "f")]
    OUTPUT = (5.6, -0.65)
    RESULT = np.array((4.0, style.CAPTION_TOP + 0.7, 0))  # the three gradients, boxed, under the × gate, above the band

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        nodes, wires, gates = self._build_circuit()

        with self.narrate("gates_intro") as beat:
            self.play(FadeIn(nodes), run_time=beat.share(0.25))
            self.play(*(Create(w) for w in wires.values()), run_time=beat.share(0.35))
            self.play(*(FadeIn(g, scale=0.6) for g in gates.values()), run_time=beat.share(0.3))

        values = {name: self._value_label(name, wires, facts[name].text) for name in "abcdqmf"}
        with self.narrate("gates_forward") as beat:
            step = beat.share(4 / 4.2) / 4  # four equal beats: the inputs, then each gate
            self.play(*(FadeIn(values[n], shift=0.2 * RIGHT) for n in "abdc"), run_time=step)
            for out, (left, right) in (("q", "ab"), ("m", "qd"), ("f", "mc")):
                self._flow(values[left], values[right], gates[out], values[out], wires, out, step)

        grads = {name: self._grad_label(name, wires, facts[f"grad_{name}"].text) for name in "abcdqmf"}
        with self.narrate("gates_seed") as beat:
            self.play(FadeIn(grads["f"], scale=1.4), run_time=beat.share(0.4))
            self.play(Indicate(grads["f"], color=style.BACKWARD), run_time=beat.share(0.4))

        with self.narrate("gates_mul") as beat:
            rule = self._rule_tag("f", gates)
            self.play(FadeIn(rule), gates["f"].animate.set_stroke(style.BACKWARD), run_time=beat.share(0.2))
            # Swap: each input's value crosses over to become the other input's gradient.
            self.play(
                ReplacementTransform(values["m"].copy(), grads["c"], path_arc=-np.pi / 2),
                ReplacementTransform(values["c"].copy(), grads["m"], path_arc=-np.pi / 2),
                run_time=beat.share(0.55),
            )

        with self.narrate("gates_max") as beat:
            rule = self._rule_tag("m", gates)
            self.play(FadeIn(rule), gates["m"].animate.set_stroke(style.BACKWARD), run_time=beat.share(0.2))
            self.play(
                ShowPassingFlash(self._backward_copy(wires[("q", "m")]), time_width=0.6),
                ReplacementTransform(grads["m"].copy(), grads["q"]),
                run_time=beat.share(0.45),
            )
            grads["d"].set_color(style.MUTED)
            self.play(FadeIn(grads["d"]), wires[("d", "m")].animate.set_stroke(opacity=0.35), run_time=beat.share(0.25))

        with self.narrate("gates_add") as beat:
            rule = self._rule_tag("q", gates)
            self.play(FadeIn(rule), gates["q"].animate.set_stroke(style.BACKWARD), run_time=beat.share(0.25))
            self.play(
                ReplacementTransform(grads["q"].copy(), grads["a"]),
                ReplacementTransform(grads["q"].copy(), grads["b"]),
                run_time=beat.share(0.5),
            )

        with self.narrate("gates_result") as beat:
            result = (
                VGroup(
                    style.math(f"(partial f)/(partial a) = {facts['grad_a'].text}", color=style.BACKWARD),
                    style.math(f"(partial f)/(partial b) = {facts['grad_b'].text}", color=style.BACKWARD),
                    style.math(f"(partial f)/(partial c) = {facts['grad_c'].text}", color=style.BACKWARD),
                )
                .arrange(RIGHT, buff=0.7)
                .move_to(self.RESULT)
            )
            box = SurroundingRectangle(result, color=style.HIGHLIGHT, buff=style.GAP_M, corner_radius=0.1)
            self.play(*(Indicate(grads[n], color=style.HIGHLIGHT) for n in "abc"), run_time=beat.share(0.25))
            self.play(Write(result), run_time=beat.share(0.35))
            self.play(Create(box), run_time=beat.share(0.15))
        self.finish()
        del heading

    # -- staging helpers -------------------------------------------------
    def _build_circuit(self) -> tuple[VGroup, dict[tuple[str, str], Line], dict[str, VGroup]]:
        """The input names, the wires between inputs and gates (keyed by (from, to)), and the gates."""
        nodes = VGroup()
        for name, (x, y) in self.INPUTS.items():
            nodes.add(style.zh(name, size=style.BODY_SIZE).move_to((x, y, 0)))
        nodes.add(style.zh("f", size=style.BODY_SIZE).move_to((*self.OUTPUT, 0)))
        gates = {}
        for out, ((x, y), symbol, _rule) in self.GATES.items():
            ring = Circle(radius=0.45, color=style.TEXT, stroke_width=3).move_to((x, y, 0))
            mark = style.zh(symbol, size=style.BODY_SIZE if len(symbol) == 1 else style.LABEL_SIZE)
            gates[out] = VGroup(ring, mark.move_to(ring))
        position = {name: np.array((x, y, 0.0)) for name, (x, y) in self.INPUTS.items()}
        position |= {out: np.array((*xy, 0.0)) for out, (xy, _s, _r) in self.GATES.items()}
        wires = {}
        for src, dst in self.WIRES:
            start = position[src] + (0.45 if src in self.GATES else 0.3) * RIGHT
            end_dir = position[src] - position[dst]
            end = position[dst] + 0.45 * end_dir / np.linalg.norm(end_dir)
            wires[(src, dst)] = Line(start, end, color=style.MUTED, stroke_width=3)
        wires[("f", "out")] = Line(
            position["f"] + 0.45 * RIGHT, np.array((*self.OUTPUT, 0)) + 0.3 * LEFT, color=style.MUTED, stroke_width=3
        )
        return nodes, wires, gates

    @staticmethod
    def _wire_from(name, wires) -> Line:
        """The wire leaving a node."""
        return next(w for (src, _dst), w in wires.items() if src == name)

    def _anchor(self, name, wires) -> np.ndarray:
        """Where a wire's labels sit: early on input wires, where they are far apart."""
        wire = self._wire_from(name, wires)
        return wire.point_from_proportion(0.3 if name in self.INPUTS else 0.5)

    def _value_label(self, name, wires, text) -> Text:
        """A node's forward value, above its wire."""
        return style.zh(text, size=style.LABEL_SIZE, color=style.FORWARD).next_to(
            self._anchor(name, wires), UP, buff=style.GAP_S
        )

    def _grad_label(self, name, wires, text) -> Text:
        """A node's gradient, under its wire."""
        return style.zh(text, size=style.LABEL_SIZE, color=style.BACKWARD).next_to(
            self._anchor(name, wires), DOWN, buff=style.GAP_S
        )

    def _flow(self, left, right, gate, result, wires, out, run_time) -> None:
        """Two values fly into a gate and the gate's output value emerges."""
        into = VGroup(left.copy(), right.copy())
        self.play(into.animate.move_to(gate).scale(0.6), run_time=0.55 * run_time)
        self.play(
            ReplacementTransform(into, result),
            Indicate(gate, color=style.FORWARD, scale_factor=1.1),
            ShowPassingFlash(self._wire_from(out, wires).copy().set_stroke(style.FORWARD, 6), time_width=0.8),
            run_time=0.45 * run_time,
        )

    @staticmethod
    def _backward_copy(wire) -> Line:
        """A wire drawn from its end back to its start, in the backward colour: a gradient's way back."""
        return Line(wire.get_end(), wire.get_start()).set_stroke(style.BACKWARD, 6)

    @classmethod
    def _rule_tag(cls, out, gates) -> Text:
        """What a gate does on the way back (分发, 路由, 交换), over the gate."""
        return style.zh(cls.GATES[out][2], size=style.LABEL_SIZE, color=style.BACKWARD).next_to(
            gates[out], UP, buff=style.GAP_SM
        )


class VanishingGradients(LectureScene):
    """Running products of 0.8, 1.0 and 1.2 over depth on a log axis; then σ(1−σ) ≤ 0.25."""

    COLOURS = {"shrink": style.HIGHLIGHT, "flat": style.DATA, "grow": style.VERDICT_BAD}
    PLOT_CENTRE = np.array((-2.0, 0.1, 0))
    FORMULA = 0.4 * UP
    CARDS_X, CARDS_Y = 4.7, (1.6, -1.2)  # where the two end cards are centred: grow, shrink
    SIGMOID_CENTRE = np.array((-2.9, -0.1, 0))  # the σ(1−σ) plot, after the race
    CAVEAT = np.array((3.9, 1.6, 0))  # beside it; the history under the caveat

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        curves = facts["curves"].value
        links = len(curves["grow"]) - 1
        ticks = facts["decade_ticks"].value
        low, high = ticks[0]["exponent"], ticks[-1]["exponent"]
        # The y axis counts decades above the floor, so the x axis sits at the bottom.
        axes = sketch_axes([0, links, 10], [0, high - low, 1], 8.2, 4.7, ticks=True).move_to(self.PLOT_CENTRE)
        self._at = lambda x, exponent: axes.c2p(x, exponent - low)
        y_labels = VGroup(
            *(
                style.zh(t["text"], size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    self._at(0, t["exponent"]), LEFT, buff=style.GAP_SM
                )
                for t in ticks
            )
        )
        x_labels = VGroup(
            *(
                style.zh(t["text"], size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    self._at(t["layer"], low), DOWN, buff=style.GAP_SM
                )
                for t in facts["layer_ticks"].value
            )
        )
        x_name = style.zh("层数", size=style.LABEL_SIZE).next_to(x_labels, RIGHT, buff=style.GAP_M)
        y_name = style.zh("累乘结果（对数刻度）", size=style.LABEL_SIZE)
        y_name.next_to(axes, UP, buff=style.GAP_M).align_to(axes, LEFT)
        one = DashedLine(self._at(0, 0), self._at(links, 0), color=style.MUTED, stroke_width=1.5, dash_length=0.08)

        with self.narrate("depth_intro") as beat:
            formula = style.math(
                f"g times underbrace(f times f times dots.c times f, {facts['links'].text})", size=56
            ).move_to(self.FORMULA)
            self.play(Write(formula), run_time=beat.share(0.5))
        with self.narrate("depth_axes") as beat:
            self.play(FadeOut(formula), Create(axes), run_time=beat.share(0.35))
            self.play(FadeIn(x_labels), FadeIn(x_name), run_time=beat.share(0.2))
            self.play(FadeIn(y_labels, lag_ratio=0.15), FadeIn(y_name), Create(one), run_time=beat.share(0.35))

        depth = ValueTracker(0.0)
        bounds = (low, high)
        lines = {
            key: always_redraw(
                lambda key=key: self._depth_trace(curves[key], depth.get_value(), bounds, self.COLOURS[key])
            )
            for key in ("shrink", "flat", "grow")
        }
        heads = {
            key: always_redraw(lambda key=key: self._head(curves[key], depth.get_value(), bounds, key))
            for key in ("shrink", "flat", "grow")
        }
        with self.narrate("depth_race") as beat:
            self.add(*lines.values())
            self.play(*(FadeIn(h) for h in heads.values()), run_time=beat.share(0.3))
            self.play(
                depth.animate.set_value(facts["vanish_layer"].value - 4), rate_func=linear, run_time=beat.share(0.65)
            )

        with self.narrate("depth_vanish") as beat:
            self.play(depth.animate.set_value(facts["vanish_layer"].value), rate_func=linear, run_time=beat.share(0.35))
            vanish = self._exit_ring(
                facts["vanish_layer"].value, low, "shrink", f"第 {facts['vanish_layer'].text} 层掉出地板"
            )
            self.play(FadeIn(vanish, scale=1.3), run_time=beat.share(0.3))

        with self.narrate("depth_exit") as beat:
            self.play(depth.animate.set_value(facts["exit_layer"].value), rate_func=linear, run_time=beat.share(0.35))
            leave = self._exit_ring(facts["exit_layer"].value, high, "grow", f"第 {facts['exit_layer'].text} 层出框")
            self.play(FadeIn(leave, scale=1.3), run_time=beat.share(0.25))
            self.play(Indicate(heads["flat"], color=style.DATA), run_time=beat.share(0.25))

        with self.narrate("depth_ends") as beat:
            self.play(depth.animate.set_value(links), rate_func=linear, run_time=beat.share(0.3))
            ends = self._end_cards(facts)
            self.play(FadeIn(ends[0], shift=0.2 * LEFT), run_time=beat.share(0.15))
            self.play(FadeIn(ends[1], shift=0.2 * LEFT), run_time=beat.share(0.15))
            self.play(GrowFromCenter(ends[2]), FadeIn(ends[3]), run_time=beat.share(0.2))

        for mob in (*lines.values(), *heads.values()):
            mob.clear_updaters()
        plot = VGroup(
            axes, y_labels, x_labels, x_name, y_name, one, *lines.values(), *heads.values(), vanish, leave, ends
        )
        self._sigmoid_panel(facts, plot)
        self.finish()
        del heading

    # -- σ(1−σ), the caveat and the history -----------------------------------------
    def _sigmoid_panel(self, facts, plot) -> None:
        """The race gives way to σ(1−σ) and its ceiling, then the caveat and the history."""
        sig = facts["sigmoid_curve"].value
        top = facts["sigmoid_max"].value
        axes = sketch_axes([-6, 6, 2], [0, 0.3, 0.1], 6.0, 3.6).move_to(self.SIGMOID_CENTRE)
        curve = VMobject(color=style.BACKWARD, stroke_width=4).set_points_smoothly(
            [axes.c2p(x, y) for x, y in zip(sig["x"], sig["y"])]
        )
        name = style.math("sigma(x) dot (1 - sigma(x))", size=40, color=style.BACKWARD)
        name.next_to(axes, UP, buff=style.EDGE)
        with self.narrate("depth_sigmoid") as beat:
            self.play(FadeOut(plot), run_time=beat.share(0.15))
            self.play(Create(axes), Write(name), run_time=beat.share(0.2))
            self.play(Create(curve), run_time=beat.share(0.3))
            ceiling = DashedLine(axes.c2p(-6, top), axes.c2p(6, top), color=style.HIGHLIGHT, stroke_width=2)
            label = style.value(facts["sigmoid_max"], size=style.BODY_SIZE, color=style.HIGHLIGHT)
            label.next_to(ceiling.get_start(), UP + RIGHT, buff=style.GAP_S)
            dot = Dot(axes.c2p(0, top), color=style.HIGHLIGHT, radius=0.08)
            self.play(Create(ceiling), FadeIn(dot, scale=2), FadeIn(label), run_time=beat.share(0.25))

        with self.narrate("depth_check") as beat:
            samples = VGroup(
                *(Dot(axes.c2p(x, y), radius=0.035, color=style.TEXT) for x, y in zip(sig["x"][::2], sig["y"][::2]))
            )
            tag = style.zh(f"{facts['samples'].text} 个采样点复核", size=style.LABEL_SIZE, color=style.MUTED)
            tag.next_to(axes, DOWN, buff=style.GAP_ML)
            self.play(FadeIn(samples, lag_ratio=0.02), FadeIn(tag), run_time=beat.share(0.55))
            self.play(Indicate(dot, color=style.HIGHLIGHT, scale_factor=1.8), Indicate(label), run_time=beat.share(0.3))

        with self.narrate("depth_caveat") as beat:
            note = style.caption_stack(
                "这里只单拎出了激活函数这一截；", "每层还要乘权重矩阵和归一化。", size=style.LABEL_SIZE
            ).move_to(self.CAVEAT)
            box = SurroundingRectangle(note, color=style.MUTED, buff=style.GAP_M, corner_radius=0.08)
            self.play(FadeIn(note), Create(box), run_time=beat.share(0.3))

        with self.narrate("depth_history") as beat:
            rows = VGroup()
            for key, who in (
                ("year_thesis", "Hochreiter 硕士论文"),
                ("year_paper", "Bengio, Simard, Frasconi"),
                ("year_joint", "两拨人合写一章"),
            ):
                year = style.value(facts[key], size=style.LABEL_SIZE, color=style.HIGHLIGHT)
                rows.add(VGroup(year, style.zh(who, size=style.LABEL_SIZE)).arrange(RIGHT, buff=style.GAP_ML))
            rows.arrange(DOWN, aligned_edge=LEFT, buff=style.EDGE).next_to(box, DOWN, buff=0.7).align_to(box, LEFT)
            spine = Line(
                rows[0][0].get_left() + 0.25 * LEFT,
                rows[-1][0].get_left() + 0.25 * LEFT,
                color=style.MUTED,
                stroke_width=2,
            )
            for row in rows:
                row.add(Dot(row[0].get_left() + 0.25 * LEFT, radius=0.06, color=style.HIGHLIGHT))
            self.play(Create(spine), run_time=beat.share(0.1))
            for row in rows:
                self.play(FadeIn(row, shift=0.15 * RIGHT), run_time=beat.share(0.2))

    # -- staging helpers -------------------------------------------------
    @staticmethod
    def _depth_path(curve, depth, bounds) -> tuple[list[tuple[float, float]], bool]:
        """Points (layer, log10 product) up to `depth`, cut where the curve leaves the frame."""
        logs = np.log10(curve)
        last = int(np.floor(depth))
        points = [(k, logs[k]) for k in range(last + 1)]
        if depth > last and last + 1 < len(logs):
            points.append((depth, logs[last] + (depth - last) * (logs[last + 1] - logs[last])))
        low, high = bounds
        for i in range(1, len(points)):
            (x0, y0), (x1, y1) = points[i - 1], points[i]
            for edge in (low, high):
                if (y1 - edge) * (y0 - edge) < 0 or (y1 == edge != y0):
                    t = (edge - y0) / (y1 - y0)
                    return [*points[:i], (x0 + t * (x1 - x0), edge)], True
        return points, False

    def _depth_trace(self, curve, depth, bounds, colour) -> VMobject:
        """A curve drawn up to `depth` layers."""
        points, _ = self._depth_path(curve, depth, bounds)
        line = VMobject(color=colour, stroke_width=4)
        line.set_points_as_corners([self._at(x, y) for x, y in points] * (1 if len(points) > 1 else 2))
        return line

    def _head(self, curve, depth, bounds, key) -> VGroup:
        """The dot at a curve's front, with its factor beside it while the curve is inside the frame."""
        points, out = self._depth_path(curve, depth, bounds)
        colour = self.COLOURS[key]
        dot = Dot(self._at(*points[-1]), radius=0.07, color=colour)
        label = style.zh(f"×{self.facts[f'f_{key}'].text}", size=style.LABEL_SIZE, color=colour)
        # Each label on the open side of its line (the falling one above-right, clear of the x axis).
        label.next_to(dot, {"grow": UP + LEFT, "flat": UP, "shrink": UP + RIGHT}[key], buff=style.GAP_S)
        return VGroup(dot) if out else VGroup(dot, label)

    def _exit_ring(self, layer, exponent, key, text) -> VGroup:
        """Where a curve leaves the frame: a ring, and its factor and layer just inside the plot."""
        colour = self.COLOURS[key]
        ring = Circle(radius=0.16, color=colour, stroke_width=3).move_to(self._at(layer, exponent))
        label = style.zh(text, size=style.LABEL_SIZE, color=colour)
        label.next_to(ring, (UP if key == "shrink" else DOWN) + RIGHT, buff=style.GAP_XS)
        return VGroup(ring, label)

    @classmethod
    def _end_cards(cls, facts) -> VGroup:
        """Where the growing and the shrinking product end up, braced, with the gap between them."""
        cards = []
        for key, value, colour in (
            ("f_grow", "grow_end", cls.COLOURS["grow"]),
            ("f_shrink", "shrink_end", cls.COLOURS["shrink"]),
        ):
            head = style.zh(f"×{facts[key].text}，走完 {facts['links'].text} 层", size=style.LABEL_SIZE, color=colour)
            number = style.value(facts[value], size=36, color=colour)
            cards.append(VGroup(head, number).arrange(DOWN, buff=style.GAP_SM, aligned_edge=LEFT))
        cards[0].move_to((cls.CARDS_X, cls.CARDS_Y[0], 0))
        cards[1].move_to((cls.CARDS_X, cls.CARDS_Y[1], 0)).align_to(cards[0], LEFT)
        brace = Brace(VGroup(*cards), RIGHT, color=style.TEXT)
        gap = style.zh(f"相差 {facts['decades'].text}\n个数量级以上", size=style.LABEL_SIZE)
        gap.next_to(cards[1], UP, buff=style.GAP_L).align_to(cards[0], LEFT)
        return VGroup(cards[0], cards[1], brace, gap)


class ForwardVsReverseMode(LectureScene):
    """One chain of local derivatives, walked from the parameters (once per parameter) and from the loss (once)."""

    BOXES = (-3.4, -1.7, 0.0, 1.7, 3.4)
    CHAIN_Y = -0.35
    PARAMS_X, PARAM_PITCH, LOSS_X = -5.6, 0.26, 5.5  # the column of parameters, and the loss, on the chain's row
    FORWARD_Y, BACKWARD_Y = 1.5, 2.1  # the two walks along the chain, drawn over it
    TAG_X, TAG_Y = 3.2, 2.35  # forward mode's tag on the left, reverse mode's on the right
    RULE = (style.CAPTION_TOP + 0.7) * UP  # the closing rule, where the chain's caption stood (above the caption band)

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        params, fan, boxes, links, loss = self._build_chain()
        count = style.zh(f"{facts['params'].text}个参数", size=style.LABEL_SIZE, color=style.FORWARD)
        count.next_to(params, DOWN, buff=style.GAP_M)
        loss_label = style.zh("loss", size=style.LABEL_SIZE, color=style.BACKWARD).next_to(loss, DOWN, buff=style.GAP_M)
        local = style.zh("一层层的局部导数", size=style.LABEL_SIZE, color=style.MUTED)
        local.next_to(VGroup(*boxes), DOWN, buff=style.GAP_ML)

        with self.narrate("modes_chain") as beat:
            self.play(FadeIn(params, lag_ratio=0.05), FadeIn(count), run_time=beat.share(0.25))
            self.play(
                Create(fan),
                *(FadeIn(b, shift=0.1 * UP) for b in boxes),
                *(Create(a) for a in links),
                FadeIn(local),
                run_time=beat.share(0.35),
            )
            self.play(FadeIn(loss, scale=2), FadeIn(loss_label), run_time=beat.share(0.2))

        with self.narrate("modes_same") as beat:
            start, end = self.BOXES[0] - 0.6, self.BOXES[-1] + 0.6
            left_to_right = Arrow(
                (start, self.FORWARD_Y, 0),
                (end, self.FORWARD_Y, 0),
                color=style.FORWARD,
                buff=style.FLUSH,
                stroke_width=4,
            )
            right_to_left = Arrow(
                (end, self.BACKWARD_Y, 0),
                (start, self.BACKWARD_Y, 0),
                color=style.BACKWARD,
                buff=style.FLUSH,
                stroke_width=4,
            )
            same = style.zh("乘出来的数一模一样", size=style.LABEL_SIZE).next_to(right_to_left, UP, buff=style.GAP_SM)
            self.play(*(Indicate(b, color=style.HIGHLIGHT, scale_factor=1.08) for b in boxes), run_time=beat.share(0.3))
            self.play(GrowArrow(left_to_right), GrowArrow(right_to_left), run_time=beat.share(0.3))
            self.play(FadeIn(same), run_time=beat.share(0.2))

        forward_tag = style.zh("正向模式：从参数出发", size=style.BODY_SIZE, color=style.FORWARD)
        forward_tag.move_to((-self.TAG_X, self.TAG_Y, 0))
        with self.narrate("modes_forward") as beat:
            self.play(
                FadeOut(VGroup(left_to_right, right_to_left, same)), FadeIn(forward_tag), run_time=beat.share(0.2)
            )
            self.play(params[0].animate.set_color(style.HIGHLIGHT).scale(1.6), run_time=beat.share(0.15))
            self._pulse(params[0], boxes, loss, style.FORWARD, beat.share(0.45))
            done = [self._done_mark(params[0])]
            self.play(FadeIn(done[0], scale=1.5), params[0].animate.scale(1 / 1.6), run_time=beat.share(0.15))

        with self.narrate("modes_forward_count") as beat:
            self._pulse(params[1], boxes, loss, style.FORWARD, beat.share(0.25))
            done.append(self._done_mark(params[1]))
            self.add(done[-1])
            rest = list(params[2:])
            self.play(
                AnimationGroup(*(self._pulse_animation(p, boxes, loss, style.FORWARD) for p in rest), lag_ratio=0.12),
                run_time=beat.share(0.4),
            )
            done += [self._done_mark(p) for p in rest]
            self.add(*done[2:])
            tally = style.zh(f"走{facts['params'].text}遍", size=36, color=style.FORWARD)
            tally.next_to(forward_tag, DOWN, buff=style.GAP_SM)
            self.play(FadeIn(tally, scale=1.3), run_time=beat.share(0.2))

        reverse_tag = style.zh("反向模式：从 loss 出发", size=style.BODY_SIZE, color=style.BACKWARD)
        reverse_tag.move_to((self.TAG_X, self.TAG_Y, 0))
        with self.narrate("modes_reverse") as beat:
            self.play(
                FadeOut(VGroup(*done)),
                VGroup(forward_tag, tally).animate.set_opacity(0.5),
                FadeIn(reverse_tag),
                run_time=beat.share(0.15),
            )
            self.play(Indicate(loss, color=style.BACKWARD, scale_factor=1.6), run_time=beat.share(0.15))
            spine = VMobject().set_points_as_corners(
                [
                    loss.get_center(),
                    *(np.array((x, self.CHAIN_Y, 0)) for x in reversed(self.BOXES)),
                    boxes[0].get_left(),
                ]
            )
            runner = Dot(loss.get_center(), radius=0.1, color=style.BACKWARD)
            self.play(
                MoveAlongPath(runner, spine),
                ShowPassingFlash(spine.copy().set_stroke(style.BACKWARD, 7), time_width=0.5),
                rate_func=linear,
                run_time=beat.share(0.3),
            )
            back_fan = VGroup(*(Line(boxes[0].get_left(), p.get_center()) for p in params))
            self.play(
                ShowPassingFlash(back_fan.copy().set_stroke(style.BACKWARD, 5), time_width=0.8),
                FadeOut(runner),
                run_time=beat.share(0.15),
            )
            marks = VGroup(*(self._done_mark(p) for p in params))
            once = style.zh("只走一遍", size=36, color=style.BACKWARD).next_to(reverse_tag, DOWN, buff=style.GAP_SM)
            self.play(FadeIn(marks, scale=1.5), FadeIn(once, scale=1.3), run_time=beat.share(0.15))

        with self.narrate("modes_why") as beat:
            self.play(VGroup(forward_tag, tally).animate.set_opacity(1), run_time=beat.share(0.1))
            self.play(
                Indicate(count, color=style.HIGHLIGHT), Indicate(tally, color=style.HIGHLIGHT), run_time=beat.share(0.3)
            )
            self.play(
                Indicate(VGroup(loss, loss_label), color=style.HIGHLIGHT, scale_factor=1.4),
                Indicate(once, color=style.HIGHLIGHT),
                run_time=beat.share(0.3),
            )

        with self.narrate("modes_rule") as beat:
            rule = style.caption_stack(
                "输出远比输入多时，从前往后反倒划算。", "先数一数：输入多，还是输出多？", size=style.LABEL_SIZE
            )
            rule.move_to(self.RULE)
            self.play(FadeOut(local), FadeIn(rule[0]), run_time=beat.share(0.3))
            self.play(FadeIn(rule[1]), run_time=beat.share(0.2))
            boxed = SurroundingRectangle(rule[1], color=style.HIGHLIGHT, buff=style.GAP_S, corner_radius=0.06)
            self.play(Create(boxed), run_time=beat.share(0.2))
        self.finish()
        del heading

    # -- staging helpers -------------------------------------------------
    def _build_chain(self) -> tuple[VGroup, VGroup, list[VGroup], list[Line], Dot]:
        """The column of parameters, their fan into the chain, the chain's boxes, its links, and the loss."""
        y = self.CHAIN_Y
        params = VGroup(*(Dot(radius=0.06, color=style.FORWARD) for _ in range(14)))
        params.arrange(DOWN, buff=self.PARAM_PITCH - 0.12).move_to((self.PARAMS_X, y, 0))
        boxes = [
            VGroup(
                widgets.panel(1.05, 1.5, stroke_width=2.5).set_stroke(style.TEXT),
                style.zh("∂", size=36, color=style.MUTED),
            ).move_to((x, y, 0))
            for x in self.BOXES
        ]
        fan = VGroup(*(Line(p.get_center(), boxes[0].get_left(), color=style.MUTED, stroke_width=1.2) for p in params))
        links = [
            Line(a.get_right(), b.get_left(), color=style.MUTED, stroke_width=2.5) for a, b in itertools.pairwise(boxes)
        ]
        loss = Dot((self.LOSS_X, y, 0), radius=0.16, color=style.BACKWARD)
        links.append(Line(boxes[-1].get_right(), loss.get_left(), color=style.MUTED, stroke_width=2.5))
        return params, fan, boxes, links, loss

    def _route(self, param, boxes, loss) -> VMobject:
        """The way from one parameter through the whole chain to the loss."""
        return VMobject().set_points_as_corners(
            [
                param.get_center(),
                boxes[0].get_left(),
                *(np.array((x, self.CHAIN_Y, 0)) for x in self.BOXES),
                loss.get_center(),
            ]
        )

    def _pulse_animation(self, param, boxes, loss, colour) -> ShowPassingFlash:
        """A flash along one parameter's route, to play among others."""
        route = self._route(param, boxes, loss)
        return ShowPassingFlash(route.set_stroke(colour, 6), time_width=0.35)

    def _pulse(self, param, boxes, loss, colour, run_time) -> None:
        """A runner and a flash along one parameter's route."""
        route = self._route(param, boxes, loss)
        runner = Dot(param.get_center(), radius=0.1, color=colour)
        self.play(
            MoveAlongPath(runner, route),
            ShowPassingFlash(route.copy().set_stroke(colour, 6), time_width=0.4),
            rate_func=linear,
            run_time=run_time,
        )
        self.remove(runner)

    @staticmethod
    def _done_mark(param) -> Dot:
        """The mark beside a parameter whose derivative is known."""
        return Dot(param.get_center() + 0.28 * LEFT, radius=0.06, color=style.HIGHLIGHT)


class ActivationMountain(LectureScene):
    """Activation memory over one step (schematic staircase), then the two cards and the tables behind them."""

    MOUNTAIN_ORIGIN = np.array(
        (-5.6, style.CAPTION_TOP + 0.7, 0)
    )  # the staircase's axes cross here (its labels under the axis
    MOUNTAIN_WIDTH, MOUNTAIN_HEIGHT = 11.0, 4.2  # stay above the caption band; its top stays under the caveat)
    TOP_Y = 2.55  # the band under the title: the mountain's caveat, later the two small cards
    # The two configurations: every layer's activations kept, or only each layer's entry (a checkpoint).
    CARDS = (("全部留着", "keep_all", style.FORWARD), ("只留每层入口 *", "full_recompute", style.MEMORY))
    BIG_CARDS = 0.1 * UP
    SMALL_CARDS_X = (-3.4, 3.4)
    UNIT = 1.85 * UP  # the unit every table counts in
    # The per-layer tables: what is kept (left edge), its width (centred), its size (right edge).
    TABLE = (Column(-5.4, LEFT), Column(1.2, ORIGIN), Column(5.4, RIGHT))
    TABLE_TOP, TABLE_PITCH = 0.75, 0.34  # the header's centre; body row to row
    TABLE_HEAD_GAP = 0.45  # the header's centre to the first body row's
    CHIPS_Y = 1.25  # a finished table shrinks to a chip on this row
    TOTALS = np.array((-0.6, -0.45, 0))
    NOTES = (style.CAPTION_TOP + 0.5) * UP  # the two closing notes, above the caption band

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        mountain = self._mountain(facts)
        big, small, extras = self._cards(facts, mountain)
        self._sources_of_the_cards(facts, big, small, extras)
        self.finish()
        del heading

    # -- the mountain --------------------------------------------------------------
    def _mountain(self, facts) -> VGroup:
        """The staircase of activation memory climbing in forward and falling in backward; returns all of it."""
        memory = facts["mountain"].value
        span, peak = len(memory), max(memory)
        origin = self.MOUNTAIN_ORIGIN
        unit_x, unit_y = self.MOUNTAIN_WIDTH / span, self.MOUNTAIN_HEIGHT / (peak + 1)

        def at(t, level) -> np.ndarray:
            return origin + np.array((t * unit_x, level * unit_y, 0))

        x_axis = Arrow(at(0, 0), at(span + 0.6, 0), buff=style.FLUSH, color=style.MUTED, stroke_width=3)
        y_axis = Arrow(at(0, 0), at(0, peak + 1), buff=style.FLUSH, color=style.MUTED, stroke_width=3)
        x_name = style.zh("时间", size=style.LABEL_SIZE, color=style.MUTED).next_to(x_axis, RIGHT, buff=style.GAP_SM)
        y_name = style.zh("激活显存（示意，无刻度）", size=style.LABEL_SIZE, color=style.MUTED)
        y_name.next_to(y_axis, UP, buff=style.GAP_SM).align_to(y_axis, LEFT)
        # Layer k's saved tensors live while memory holds at least k of them.
        bands = []
        for level in range(1, peak + 1):
            alive = [t for t, m in enumerate(memory) if m >= level]
            bands.append((level, alive[0], alive[-1] + 1))
        clock = ValueTracker(0.0)

        def drawn() -> VGroup:
            now = clock.get_value()
            group = VGroup()
            for level, start, end in bands:
                if now <= start:
                    continue
                right = min(now, end)
                group.add(
                    Polygon(
                        at(start, level - 1),
                        at(right, level - 1),
                        at(right, level),
                        at(start, level),
                        stroke_color=style.BACKGROUND,
                        stroke_width=1.5,
                        fill_color=style.FORWARD,
                        fill_opacity=style.FILL_SOFT if level % 2 else style.FILL_FAINT,
                    )
                )
            return group

        def outline() -> VMobject:
            now = clock.get_value()
            points = [at(0, 0)]
            for t, m in enumerate(memory):
                if t >= now:
                    break
                points += [at(t, m), at(min(t + 1, now), m)]
            return VMobject(color=style.TEXT, stroke_width=3).set_points_as_corners(
                points if len(points) > 1 else points * 2
            )

        stack, edge = always_redraw(drawn), always_redraw(outline)
        with self.narrate("mnt_climb") as beat:
            self.play(Create(x_axis), Create(y_axis), FadeIn(x_name), FadeIn(y_name), run_time=beat.share(0.2))
            forward = style.zh("前向：每层留下中间结果", size=style.LABEL_SIZE, color=style.FORWARD)
            forward.move_to(at(peak / 2, -0.6))
            self.add(stack, edge)
            self.play(FadeIn(forward), clock.animate.set_value(peak - 4), rate_func=linear, run_time=beat.share(0.7))
        with self.narrate("mnt_peak") as beat:
            self.play(clock.animate.set_value(peak + 1), rate_func=linear, run_time=beat.share(0.45))
            turn = DashedLine(at(peak + 0.5, 0), at(peak + 0.5, peak + 0.6), color=style.HIGHLIGHT, stroke_width=2)
            summit = style.zh("山顶：前向走完", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            summit.next_to(turn, LEFT, buff=style.GAP_XL).align_to(turn, UP)
            self.play(Create(turn), FadeIn(summit), run_time=beat.share(0.35))
        with self.narrate("mnt_descend") as beat:
            backward = style.zh("反向：用完一层，放掉一层", size=style.LABEL_SIZE, color=style.BACKWARD)
            backward.move_to(at(peak + 1 + peak / 2, -0.6))
            self.play(FadeIn(backward), clock.animate.set_value(span), rate_func=linear, run_time=beat.share(0.85))
        stack.clear_updaters()
        edge.clear_updaters()
        with self.narrate("mnt_caveat") as beat:
            note = style.caption_stack(
                f"台阶画了 {facts['steps'].text} 级，只为看得清；",
                f"真实模型 {facts['layers'].text} 层，坡更细、有凸起，顶点不变。",
                size=style.LABEL_SIZE,
                color=style.MUTED,
            )
            note.move_to(at(span + 0.6, 0), aligned_edge=RIGHT).set_y(self.TOP_Y)
            self.play(FadeIn(note), run_time=beat.share(0.3))
        return VGroup(x_axis, y_axis, x_name, y_name, stack, edge, forward, turn, summit, backward, note)

    # -- the two cards -------------------------------------------------------------
    def _cards(self, facts, mountain) -> tuple[list[VGroup], list[VGroup], VGroup]:
        """The two big cards (keep all, keep only each layer's entry); returns them, their small copies and the rest."""
        big = []
        for label, key, colour in self.CARDS:
            text = VGroup(
                style.zh(label, size=style.BODY_SIZE), style.value(facts[key], size=48, color=colour)
            ).arrange(DOWN, buff=style.GAP_M)
            box = widgets.panel(4.8, 2.2, corner_radius=0.15, stroke_width=3).set_stroke(colour)
            big.append(VGroup(box, text.move_to(box)))
        VGroup(*big).arrange(RIGHT, buff=1.4).move_to(self.BIG_CARDS)
        context = style.zh(
            f"DeepSeek-V3，一条 {facts['seq'].text} 序列，bf16", size=style.LABEL_SIZE, color=style.MUTED
        ).next_to(VGroup(*big), UP, buff=style.GAP_L)
        with self.narrate("mnt_cards") as beat:
            self.play(FadeOut(mountain), FadeIn(context), run_time=beat.share(0.15))
            self.play(FadeIn(big[0], shift=0.2 * UP), run_time=beat.share(0.2))
            self.wait(beat.share(0.2))
            self.play(FadeIn(big[1], shift=0.2 * UP), run_time=beat.share(0.2))
        with self.narrate("mnt_same") as beat:
            same = style.zh("同一条序列，两种配置；不是两个模型", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            same.next_to(VGroup(*big), DOWN, buff=style.GAP_L)
            link = DoubleArrow(
                big[0].get_right(), big[1].get_left(), buff=style.GAP_S, color=style.HIGHLIGHT, stroke_width=3
            )
            self.play(GrowFromCenter(link), FadeIn(same), run_time=beat.share(0.5))
        small = []
        for (label, key, colour), x in zip(self.CARDS, self.SMALL_CARDS_X):
            text = VGroup(
                style.zh(label, size=style.SMALL_SIZE), style.value(facts[key], size=style.BODY_SIZE, color=colour)
            ).arrange(RIGHT, buff=style.GAP_ML)
            box = widgets.panel(text.width + 0.5, 0.62, corner_radius=0.1, stroke_width=2.5).set_stroke(colour)
            small.append(VGroup(box, text.move_to(box)).move_to((x, self.TOP_Y, 0)))
        return big, small, VGroup(context, link, same)

    # -- where the two numbers come from -------------------------------------------
    def _sources_of_the_cards(self, facts, big, small, extras) -> None:
        """The cards shrink to the top; the per-layer tables behind them build up row by row."""
        unit = style.zh(
            f"单位：一份 hidden 宽的张量 = {facts['tokens'].text} × {facts['hidden'].text} × "
            f"{facts['bf16_bytes'].text} = {facts['entry'].text}",
            size=style.LABEL_SIZE,
        )
        unit.move_to(self.UNIT)
        with self.narrate("mnt_unit") as beat:
            self.play(
                FadeOut(extras), *(ReplacementTransform(b, s) for b, s in zip(big, small)), run_time=beat.share(0.35)
            )
            self.play(FadeIn(unit, shift=0.2 * DOWN), run_time=beat.share(0.35))

        attention = self._kept_tensors("注意力（MLA）留下的", facts["attention_rows"].value, facts["attention"])
        with self.narrate("mnt_attention") as beat:
            self.play(FadeIn(attention[0]), run_time=beat.share(0.1))
            rows = attention[1]
            per_row = beat.share(0.75) / len(rows)
            for row in rows:
                self.play(FadeIn(row, shift=0.3 * RIGHT), run_time=per_row)
            self.play(FadeIn(attention[2]), run_time=beat.share(0.1))

        chip = self._subtotal_chip("注意力", facts["attention"])
        chip.move_to((self.TABLE[0].x, self.CHIPS_Y, 0), aligned_edge=LEFT)
        moe = self._kept_tensors("MoE 留下的", facts["moe_rows"].value, facts["moe"])
        with self.narrate("mnt_moe") as beat:
            self.play(ReplacementTransform(attention, chip), run_time=beat.share(0.25))
            self.play(FadeIn(moe[0]), run_time=beat.share(0.05))
            per_row = beat.share(0.5) / len(moe[1])
            for row in moe[1]:
                self.play(FadeIn(row, shift=0.3 * RIGHT), run_time=per_row)
            self.play(FadeIn(moe[2]), run_time=beat.share(0.1))

        with self.narrate("mnt_copies") as beat:
            copies = [
                moe[1][i]
                for i, row in enumerate(facts["moe_rows"].value)
                if row["width"].startswith(facts["copies"].text + " ")
            ]
            marks = VGroup(
                *(
                    SurroundingRectangle(r, color=style.HIGHLIGHT, buff=style.GAP_XS, corner_radius=0.05)
                    for r in (copies[0], copies[-1])
                )
            )
            why = style.zh(
                f"{facts['copies'].text} 份 = {facts['routed'].text} 个路由专家 + {facts['shared'].text} 个共享专家",
                size=style.LABEL_SIZE,
                color=style.HIGHLIGHT,
            )
            io = style.zh(
                f"进去一次 + 出来一次 = {facts['copies_io'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT
            )
            VGroup(why, io).arrange(RIGHT, buff=0.8).next_to(moe, DOWN, buff=style.GAP_ML)
            self.play(Create(marks), FadeIn(why), run_time=beat.share(0.35))
            self.play(FadeIn(io), run_time=beat.share(0.25))

        with self.narrate("mnt_total") as beat:
            lines = (
                VGroup(
                    style.zh(
                        f"MoE 层：{facts['moe_layer_exact'].text} × {facts['moe_layers'].text}", size=style.BODY_SIZE
                    ),
                    style.zh(
                        f"dense 层：{facts['dense_layer_exact'].text} × {facts['dense_layers'].text}",
                        size=style.BODY_SIZE,
                    ),
                    style.zh(
                        f"合计 {facts['keep_all_gib'].text} ≈ {facts['keep_all'].text}", size=36, color=self.CARDS[0][2]
                    ),
                    style.zh(
                        f"只留入口：{facts['entry'].text} × {facts['layers'].text} = {facts['full_recompute'].text}",
                        size=style.BODY_SIZE,
                        color=self.CARDS[1][2],
                    ),
                )
                .arrange(DOWN, aligned_edge=LEFT, buff=0.28)
                .move_to(self.TOTALS)
            )
            dense_note = style.zh("（按页面口径，不含 FFN 输出）", size=style.SMALL_SIZE, color=style.MUTED)
            dense_note.next_to(lines[1], RIGHT, buff=style.GAP_M)
            moe_chip = self._subtotal_chip("MoE", facts["moe"]).next_to(chip, RIGHT, buff=style.GAP_ML)
            self.play(ReplacementTransform(VGroup(moe, marks, why, io), moe_chip), run_time=beat.share(0.2))
            self.play(FadeIn(lines[0], shift=0.2 * RIGHT), run_time=beat.share(0.1))
            self.play(FadeIn(lines[1], shift=0.2 * RIGHT), FadeIn(dense_note), run_time=beat.share(0.1))
            self.play(FadeIn(lines[2], scale=1.2), run_time=beat.share(0.15))
            self.play(Indicate(small[0], color=style.HIGHLIGHT, scale_factor=1.1), run_time=beat.share(0.15))
            self.play(
                FadeIn(lines[3], shift=0.2 * RIGHT),
                Indicate(small[1], color=style.HIGHLIGHT, scale_factor=1.1),
                run_time=beat.share(0.15),
            )

        with self.narrate("mnt_note") as beat:
            notes = style.caption_stack(
                "按 V3 的配置逐个算子自推，当量级看；差一倍也装不下。",
                f"* 只留入口：还没算正在重算的那一层（一层 MoE 约 {facts['moe_layer'].text}）。",
                size=style.SMALL_SIZE,
                color=style.MUTED,
            )
            notes.move_to(self.NOTES)
            self.play(FadeIn(notes[0]), run_time=beat.share(0.3))
            self.play(FadeIn(notes[1]), run_time=beat.share(0.3))

    @classmethod
    def _kept_tensors(cls, title, rows, subtotal) -> VGroup:
        """A header and a rule, one row per kept tensor, then a rule and the subtotal."""
        top = cls.TABLE_TOP

        def rule(y) -> Line:
            return Line((cls.TABLE[0].x, y, 0), (cls.TABLE[-1].x, y, 0), color=style.MUTED, stroke_width=1.5)

        header = text_row((title, "宽度", "大小"), cls.TABLE, top, color=style.MUTED)
        first = top - cls.TABLE_HEAD_GAP
        cells = [(r["label"], r["width"], r["size"]) for r in rows]
        body = widgets.table(None, cells, cls.TABLE, first, cls.TABLE_PITCH, size=style.SMALL_SIZE)[1]
        y_sum = first - cls.TABLE_PITCH * len(rows) - 0.1
        total = VGroup(
            rule(y_sum + 0.22),
            text_row(("小计", "", f"约 {subtotal.text}"), cls.TABLE, y_sum - 0.05, color=style.HIGHLIGHT),
        )
        return VGroup(VGroup(header, rule(top - 0.25)), body, total)

    @staticmethod
    def _subtotal_chip(label, fact) -> VGroup:
        """A finished table shrunk to its name and subtotal, outlined."""
        text = VGroup(
            style.zh(label, size=style.SMALL_SIZE, color=style.MUTED), style.value(fact, size=style.SMALL_SIZE)
        ).arrange(RIGHT, buff=style.GAP_M)
        box = RoundedRectangle(
            width=text.width + 0.3, height=0.45, corner_radius=0.08, stroke_color=style.MUTED, stroke_width=1.5
        )
        return VGroup(box, text.move_to(box))


class GradientJourney(LectureScene):
    """Five stations between a gradient's birth in backward and its use in the update (number-free)."""

    MARKS = "①②③④⑤"
    ORDER = ("produce", "reduce", "clip", "accumulate", "update")
    STATIONS = 2.3 * UP  # the row of five stations, centred
    STATION_PITCH = 2.6
    CAPTION = 0.3 * UP  # a line of prose under the stations
    DETAIL = 0.2 * DOWN  # centre of the first station's detail
    TIMELINE_LEFT, TIMELINE_RIGHT = -4.6, 6.2  # time 0 and the end of the clip, on the timeline
    LANES = {"backward": 0.35, "reduce": -0.55, "clip": -1.45}  # the timeline's rows
    TIME_AXIS_Y = -2.1
    BATCH = np.array((-0.3, 0.4, 0))  # the big batch; its parts under it, the accumulator under those
    PARTS_Y = -0.6
    ACCUMULATOR = 1.8 * DOWN
    WEIGHTS = np.array((-2.8, -0.6, 0))
    NOTE = (style.CAPTION_TOP + 0.25) * UP  # the closing note, above the caption band

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        names = facts["stations"].value
        stations = VGroup()
        for i, key in enumerate(self.ORDER):
            ring = Circle(radius=0.32, color=style.MUTED, stroke_width=3, fill_color=style.PANEL, fill_opacity=1)
            mark = style.zh(self.MARKS[i], size=style.BODY_SIZE, color=style.MUTED)
            label = style.zh(names[key], size=style.LABEL_SIZE, color=style.MUTED)
            node = VGroup(ring, mark.move_to(ring))
            node.move_to(self.STATIONS + (i - (len(self.ORDER) - 1) / 2) * self.STATION_PITCH * RIGHT)
            stations.add(VGroup(node, label.next_to(node, DOWN, buff=style.GAP_SM)))
        arrows = VGroup(
            *(
                Arrow(
                    a[0].get_right(),
                    b[0].get_left(),
                    buff=style.GAP_S,
                    color=style.MUTED,
                    stroke_width=3,
                    max_tip_length_to_length_ratio=0.25,
                )
                for a, b in itertools.pairwise(stations)
            )
        )
        packet = Square(
            side_length=0.3, fill_color=style.BACKWARD, fill_opacity=1, stroke_color=style.BF16, stroke_width=4
        )

        with self.narrate("gj_intro") as beat:
            self.play(FadeIn(stations, lag_ratio=0.2), Create(arrows, lag_ratio=0.2), run_time=beat.share(0.5))
            not_inference = style.zh("推理时，这几道一道都没有", size=style.LABEL_SIZE, color=style.MUTED)
            not_inference.move_to(self.CAPTION)
            self.play(FadeIn(not_inference), run_time=beat.share(0.25))

        detail = self._produce()
        with self.narrate("gj_produce") as beat:
            self.play(FadeOut(not_inference), self._light(stations[0]), run_time=beat.share(0.15))
            self.play(FadeIn(detail[0]), run_time=beat.share(0.15))
            # Backward walks the layers from the last to the first; each drops its gradient.
            per_layer = beat.share(0.5) / len(detail[1])
            for bar, grad in zip(detail[1], detail[2]):
                self.play(
                    Indicate(bar, color=style.BACKWARD, scale_factor=1.03),
                    FadeIn(grad, shift=0.3 * DOWN),
                    run_time=per_layer,
                )
            packet.move_to(stations[0][0]).shift(0.55 * UP)
            self.play(FadeIn(packet, scale=1.5), FadeIn(detail[3]), run_time=beat.share(0.15))

        timeline = self._timeline(facts["timeline"].value)
        with self.narrate("gj_reduce") as beat:
            self._advance(packet, stations, 1, beat.share(0.15))
            self.play(FadeOut(detail), FadeIn(timeline["axes"]), run_time=beat.share(0.15))
            self.play(LaggedStart(*(FadeIn(b) for b in timeline["backward"]), lag_ratio=0.3), run_time=beat.share(0.25))
            self.play(
                LaggedStart(*(FadeIn(b, shift=0.2 * DOWN) for b in timeline["reduce"]), lag_ratio=0.4),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(timeline["hidden"]), run_time=beat.share(0.15))

        with self.narrate("gj_clip") as beat:
            self._advance(packet, stations, 2, beat.share(0.15))
            self.play(Create(timeline["wait"]), FadeIn(timeline["wait_label"]), run_time=beat.share(0.3))
            self.play(FadeIn(timeline["clip"], shift=0.2 * RIGHT), run_time=beat.share(0.2))
            self.play(FadeIn(timeline["exposed"]), run_time=beat.share(0.15))

        accumulate = self._accumulate(facts["micro"].value)
        with self.narrate("gj_accumulate") as beat:
            self._advance(packet, stations, 3, beat.share(0.1))
            self.play(FadeOut(VGroup(*timeline.values())), FadeIn(accumulate["whole"]), run_time=beat.share(0.2))
            self.play(FadeIn(accumulate["parts_label"]), FadeIn(accumulate["frame"]), run_time=beat.share(0.1))
            per_part = beat.share(0.35) / len(accumulate["parts"])
            for part, drop in zip(accumulate["parts"], accumulate["drops"]):
                self.play(FadeIn(part), ReplacementTransform(part.copy(), drop), run_time=per_part)
            self.play(FadeIn(accumulate["same"]), packet.animate.set_stroke(style.FP32), run_time=beat.share(0.15))

        with self.narrate("gj_update") as beat:
            self._advance(packet, stations, 4, beat.share(0.12))
            weights = self._journey_weights()
            self.play(FadeOut(VGroup(*accumulate.values())), FadeIn(weights), run_time=beat.share(0.15))
            self.play(packet.animate.move_to(weights[0]).scale(0.8), run_time=beat.share(0.15))
            self.play(Indicate(weights[0], color=style.BACKWARD), FadeOut(packet, scale=0.2), run_time=beat.share(0.15))
            thrown = style.zh("用完就扔", size=36, color=style.HIGHLIGHT).next_to(weights, RIGHT, buff=0.8)
            self.play(FadeIn(thrown, scale=1.3), run_time=beat.share(0.12))
            tags = self._precision_tags().next_to(thrown, DOWN, buff=style.GAP_L).align_to(thrown, LEFT)
            self.play(FadeIn(tags[0]), run_time=beat.share(0.1))
            self.play(FadeIn(tags[1]), run_time=beat.share(0.1))

        with self.narrate("gj_bounds") as beat:
            note = style.zh("通信多大、能藏多少：下一张图，和后面的专题", size=style.LABEL_SIZE, color=style.MUTED)
            note.move_to(self.NOTE)
            self.play(FadeIn(note), run_time=beat.share(0.3))
        self.finish()
        del heading

    # -- staging helpers -------------------------------------------------
    def _light(self, station) -> AnimationGroup:
        """Light a station: its ring in the backward colour, its mark and name in text colour."""
        return AnimationGroup(
            station[0][0].animate.set_stroke(style.BACKWARD),
            station[0][1].animate.set_color(style.TEXT),
            station[1].animate.set_color(style.TEXT),
        )

    def _advance(self, packet, stations, index, run_time) -> None:
        """Move the gradient packet over a station and light it."""
        target = stations[index][0].get_center() + 0.55 * UP
        self.play(packet.animate.move_to(target), self._light(stations[index]), run_time=run_time)

    @classmethod
    def _produce(cls) -> VGroup:
        """The first station's detail: the layers, the layers in backward order, a gradient under each, the tag."""
        bars = (
            VGroup(
                *(widgets.panel(1.3, 0.5, corner_radius=0.06, stroke_width=2).set_stroke(style.TEXT) for _ in range(6))
            )
            .arrange(RIGHT, buff=style.EDGE)
            .move_to(cls.DETAIL)
        )
        caption = style.zh("反向：从最后一层往回走", size=style.LABEL_SIZE, color=style.BACKWARD)
        caption.next_to(bars, UP, buff=style.GAP_ML)
        order = list(reversed(bars))
        grads = VGroup(
            *(
                Square(
                    side_length=0.28, fill_color=style.BACKWARD, fill_opacity=1, stroke_color=style.BF16, stroke_width=3
                ).next_to(bar, DOWN, buff=style.GAP_L)
                for bar in order
            )
        )
        tag = style.zh("每层一份梯度，bf16", size=style.LABEL_SIZE, color=style.BF16).next_to(
            grads, DOWN, buff=style.EDGE
        )
        return VGroup(VGroup(bars, caption), VGroup(*order), grads, tag)

    @classmethod
    def _timeline(cls, plan) -> dict[str, VMobject]:
        """The second and third stations' timeline: backward, all-reduce and clip lanes, keyed by part."""
        end = plan["clip"][1]
        left, right = cls.TIMELINE_LEFT, cls.TIMELINE_RIGHT

        def x(t) -> float:
            return left + (right - left) * t / end

        rows = cls.LANES
        names = VGroup(
            *(
                style.zh(text, size=style.LABEL_SIZE, color=colour).move_to((left - 0.25, y, 0), aligned_edge=RIGHT)
                for text, y, colour in (
                    ("反向计算", rows["backward"], style.BACKWARD),
                    ("跨卡平均", rows["reduce"], style.COMM),
                    ("全局裁剪", rows["clip"], style.HIGHLIGHT),
                )
            )
        )
        time_axis = Arrow(
            (left, cls.TIME_AXIS_Y, 0),
            (right + 0.4, cls.TIME_AXIS_Y, 0),
            buff=style.FLUSH,
            color=style.MUTED,
            stroke_width=2,
        )
        time_name = style.zh("时间", size=style.SMALL_SIZE, color=style.MUTED)
        time_name.next_to(time_axis, DOWN, buff=style.GAP_S)
        time_name.align_to(time_axis, RIGHT)

        def span(start, stop, y, colour) -> Rectangle:
            """A stretch of work on a lane, from time start to time stop."""
            return widgets.bar(x(stop) - x(start), 0.5, colour, stroke_color=style.BACKGROUND, stroke_width=2).move_to(
                ((x(start) + x(stop)) / 2, y, 0)
            )

        backward = VGroup(*(span(a, b, rows["backward"], style.BACKWARD) for a, b in plan["backward"]))
        reduce = VGroup(*(span(a, b, rows["reduce"], style.COMM) for a, b in plan["all_reduce"]))
        compute_end = plan["backward"][-1][1]
        under = Rectangle(
            width=x(compute_end) - x(plan["all_reduce"][0][0]),
            height=1.5,
            stroke_color=style.VERDICT_GOOD,
            stroke_width=2,
            fill_opacity=0,
        ).move_to(((x(plan["all_reduce"][0][0]) + x(compute_end)) / 2, (rows["backward"] + rows["reduce"]) / 2, 0))
        hidden = VGroup(
            under,
            style.zh("藏在反向底下 ✓", size=style.LABEL_SIZE, color=style.VERDICT_GOOD)
            .next_to(under, UP, buff=style.GAP_S)
            .align_to(under, RIGHT),
        )
        last = plan["all_reduce"][-1][1]
        wait = DashedLine(
            (x(last), rows["backward"] + 0.55, 0), (x(last), cls.TIME_AXIS_Y, 0), color=style.HIGHLIGHT, stroke_width=2
        )
        wait_label = style.zh("全部梯度到齐", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        wait_label.next_to(wait, UP, buff=style.GAP_S).shift(0.4 * LEFT)
        clip = span(*plan["clip"], rows["clip"], style.HIGHLIGHT)
        exposed = style.zh("藏不了 ✗", size=style.LABEL_SIZE, color=style.VERDICT_BAD).next_to(
            clip, LEFT, buff=style.GAP_ML
        )
        return {
            "axes": VGroup(names, time_axis, time_name),
            "backward": backward,
            "reduce": reduce,
            "hidden": hidden,
            "wait": wait,
            "wait_label": wait_label,
            "clip": clip,
            "exposed": exposed,
        }

    @classmethod
    def _accumulate(cls, micro) -> dict[str, VMobject]:
        """The fourth station's detail: a big batch, its micro-batches and the fp32 accumulator."""
        whole_bar = widgets.bar(8.0, 0.45, style.BACKWARD, stroke_color=style.BACKGROUND, stroke_width=4)
        whole_label = style.zh("一个大 batch", size=style.LABEL_SIZE)
        whole = VGroup(whole_label, whole_bar).arrange(RIGHT, buff=style.GAP_L).move_to(cls.BATCH)
        parts = VGroup(
            *(
                widgets.bar(8.0 / micro, 0.45, style.BACKWARD, stroke_color=style.BACKGROUND, stroke_width=4)
                for _ in range(micro)
            )
        )
        parts.arrange(RIGHT, buff=style.GAP_L).move_to((whole_bar.get_x() + 0.75, cls.PARTS_Y, 0))
        parts_label = style.zh("拆成几份小的", size=style.LABEL_SIZE).next_to(parts, LEFT, buff=style.GAP_L)
        accumulator = RoundedRectangle(
            width=2.2, height=0.6, corner_radius=0.08, stroke_color=style.FP32, stroke_width=3
        ).move_to(cls.ACCUMULATOR)
        acc_label = style.zh("累加器（fp32）", size=style.LABEL_SIZE, color=style.FP32).next_to(
            accumulator, LEFT, buff=style.GAP_ML
        )
        drops = VGroup(
            *(
                Square(
                    side_length=0.26, fill_color=style.BACKWARD, fill_opacity=1, stroke_color=style.FP32, stroke_width=3
                )
                for _ in range(micro)
            )
        ).arrange(RIGHT, buff=style.GAP_SM)
        drops.move_to(accumulator)
        same = style.zh("总量不变，只是时间线拉长", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        same.next_to(accumulator, RIGHT, buff=style.GAP_L)
        return {
            "whole": whole,
            "parts_label": parts_label,
            "parts": parts,
            "drops": drops,
            "frame": VGroup(accumulator, acc_label),
            "same": same,
        }

    @classmethod
    def _journey_weights(cls) -> VGroup:
        """The weights the update writes, in fp32."""
        box = widgets.panel(2.2, 1.2, stroke_width=3).set_stroke(style.FP32)
        label = style.zh("权重", size=style.BODY_SIZE)
        return VGroup(box, label.move_to(box)).move_to(cls.WEIGHTS)

    @staticmethod
    def _precision_tags() -> VGroup:
        """Which precision each use of a gradient needs."""
        return VGroup(
            style.zh("只用一次：bf16 就够", size=style.LABEL_SIZE, color=style.BF16),
            style.zh("一旦累积：升回 fp32", size=style.LABEL_SIZE, color=style.FP32),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)


class BatchCommVsCompute(LectureScene):
    """Communication is flat in batch size, compute rises after a knee; shapes only, no scale."""

    PLOT_CENTRE = np.array((-3.2, 0.0, 0))  # high enough that the x axis's name clears the caption band
    # The right-hand panel: a head on its centre line, then a row for the small and one for the large batch.
    PANEL_HEAD = np.array((3.9, 1.6, 0))
    PANEL_ROWS = {"small": 0.7, "large": -0.4}
    SHARE_X = 4.45  # centre of the share bars
    EPOCH_LEFT = 2.0  # the epoch rows start here
    NOTE = np.array((3.9, style.CAPTION_TOP + 0.6, 0))  # the two-line note, above the caption band

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        curves, labels = facts["curves"].value, facts["labels"].value
        batch = curves["batch"]
        top = max(curves["compute"]) * 1.1
        axes = sketch_axes([0, batch[-1], batch[-1]], [0, top, top], 6.2, 4.2, tips=True).move_to(self.PLOT_CENTRE)
        x_name = style.zh(labels["x"], size=style.LABEL_SIZE, color=style.MUTED)
        x_name.next_to(axes.x_axis, DOWN, buff=style.GAP_M)
        x_name.align_to(axes.x_axis, RIGHT)
        y_name = style.zh(labels["y"] + "（示意，无刻度）", size=style.LABEL_SIZE, color=style.MUTED)
        y_name.next_to(axes.y_axis, UP, buff=style.GAP_SM).align_to(axes.y_axis, LEFT)

        def line(values, colour) -> VMobject:
            return VMobject(color=colour, stroke_width=5).set_points_as_corners(
                [axes.c2p(b, v) for b, v in zip([0, *batch], [values[0], *values])]
            )

        comm, compute = line(curves["comm"], style.COMM), line(curves["compute"], style.COMPUTE)
        comm_name = style.zh(labels["comm"], size=style.LABEL_SIZE, color=style.COMM).next_to(
            comm, RIGHT, buff=style.GAP_SM
        )
        compute_name = style.zh(labels["compute"], size=style.LABEL_SIZE, color=style.COMPUTE)
        compute_name.next_to(compute.get_end(), RIGHT, buff=style.GAP_SM)

        with self.narrate("batch_comm") as beat:
            self.play(Create(axes), FadeIn(x_name), FadeIn(y_name), run_time=beat.share(0.35))
            self.play(Create(comm), FadeIn(comm_name), run_time=beat.share(0.4))

        with self.narrate("batch_flat") as beat:
            probe = ValueTracker(batch[0])
            rider = always_redraw(
                lambda: Dot(axes.c2p(probe.get_value(), curves["comm"][0]), radius=0.09, color=style.COMM)
            )
            self.add(rider)
            self.play(probe.animate.set_value(batch[-1]), run_time=beat.share(0.5))
            self.play(probe.animate.set_value(batch[len(batch) // 3]), run_time=beat.share(0.3))
            rider.clear_updaters()
            self.remove(rider)

        knee_x = curves["knee"]
        knee_line = DashedLine(axes.c2p(knee_x, 0), axes.c2p(knee_x, top * 0.85), color=style.MUTED, stroke_width=2)
        knee_name = style.zh(labels["knee"], size=style.LABEL_SIZE, color=style.MUTED)
        knee_name.next_to(knee_line, UP, buff=style.GAP_S)
        with self.narrate("batch_compute") as beat:
            self.play(Create(compute), run_time=beat.share(0.55), rate_func=linear)
            self.play(FadeIn(compute_name), Create(knee_line), FadeIn(knee_name), run_time=beat.share(0.3))

        share = self._share_bars(curves, labels)
        with self.narrate("batch_share") as beat:
            self.play(FadeIn(share[0]), run_time=beat.share(0.2))
            self.play(
                GrowFromEdge(share[1][0], LEFT),
                GrowFromEdge(share[2][0], LEFT),
                FadeIn(share[1][1]),
                FadeIn(share[2][1]),
                run_time=beat.share(0.4),
            )
            self.play(Indicate(share[2][0][0], color=style.HIGHLIGHT, scale_factor=1.2), run_time=beat.share(0.3))

        epoch = self._epoch_rows(facts["epoch"].value, curves["comm"][0], labels)
        with self.narrate("batch_epoch") as beat:
            self.play(FadeOut(share), FadeIn(epoch[0]), run_time=beat.share(0.15))
            for row in epoch[1:]:
                self.play(
                    FadeIn(row[0]),
                    LaggedStart(*(FadeIn(b, shift=0.1 * RIGHT) for b in row[1]), lag_ratio=0.3),
                    run_time=beat.share(0.35),
                )

        with self.narrate("batch_knee") as beat:
            note = style.caption_stack(
                "只画形状，没有刻度；", "拐点在哪，要在自己的配置上量。", size=style.LABEL_SIZE, color=style.MUTED
            ).move_to(self.NOTE)
            self.play(Indicate(knee_name, color=style.HIGHLIGHT), FadeIn(note), run_time=beat.share(0.45))

        with self.narrate("batch_overlap") as beat:
            overlap = style.zh("边算边传，只有训练才有", size=style.LABEL_SIZE, color=style.COMM)
            overlap.next_to(note, UP, buff=style.GAP_ML).align_to(note, LEFT)
            self.play(FadeIn(overlap), run_time=beat.share(0.35))
        self.finish()
        del heading

    # -- staging helpers -------------------------------------------------
    @classmethod
    def _share_bars(cls, curves, labels) -> VGroup:
        """A step split into communication and compute, at a small and at the largest batch (widths are shares)."""
        width, rows = 4.2, VGroup()
        title = style.zh("一步里通信占多少", size=style.LABEL_SIZE).move_to(cls.PANEL_HEAD)
        rows.add(title)
        for key, index in (("small", 0), ("large", -1)):
            part = curves["share"][index]
            bar = VGroup(
                widgets.bar(width * part, 0.5, style.COMM),
                widgets.bar(width * (1 - part), 0.5, style.COMPUTE, opacity=style.FILL_SOFT),
            ).arrange(RIGHT, buff=style.FLUSH)
            bar.move_to((cls.SHARE_X, cls.PANEL_ROWS[key], 0))
            name = style.zh(labels[key], size=style.LABEL_SIZE).next_to(bar, LEFT, buff=style.GAP_M)
            rows.add(VGroup(bar, name))
        return rows

    @staticmethod
    def _step(step, comm, unit) -> VGroup:
        """One step: its communication (fixed) and its compute, side by side."""
        return (
            VGroup(
                widgets.bar(comm * unit, 0.5, style.COMM),
                widgets.bar((step["step"] - comm) * unit, 0.5, style.COMPUTE, opacity=style.FILL_SOFT),
            )
            .arrange(RIGHT, buff=style.FLUSH)
            .add(Rectangle(width=step["step"] * unit, height=0.5, stroke_color=style.BACKGROUND, stroke_width=2))
        )

    def _epoch_rows(self, epoch, comm, labels) -> VGroup:
        """One epoch as a row of steps: many short ones in small batches, few in large ones."""
        longest = max(e["steps"] * e["step"] for e in epoch.values())
        unit = 4.6 / longest
        group = VGroup(style.zh("跑完一个 epoch", size=style.LABEL_SIZE).move_to(self.PANEL_HEAD))
        for key, y in self.PANEL_ROWS.items():
            steps = VGroup(*(self._step(epoch[key], comm, unit) for _ in range(epoch[key]["steps"])))
            steps.arrange(RIGHT, buff=style.FLUSH)
            steps.move_to((self.EPOCH_LEFT, y, 0), aligned_edge=LEFT)
            name = style.zh(labels[key], size=style.LABEL_SIZE).next_to(steps, LEFT, buff=style.GAP_M)
            group.add(VGroup(name, steps))
        return group
