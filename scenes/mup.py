"""The μP chapter (μP：换了宽度，不用重调学习率): staging only; every number and curve comes from tools.chapters.mup.

What moves: the column cosines' histogram narrows as the matrix widens; three signals ride a log-scale track
through 20 layers; Adam's step climbs with width while the init stays flat; the coordinate check's lines
swell with width in SP while μP's stay flat, step by step; the loss basin slides left with width in SP and
stands still in μP.
"""

from __future__ import annotations

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
    Mobject,
    Rectangle,
    Transform,
    UpdateFromAlphaFunc,
    ValueTracker,
    VGroup,
    VMobject,
    Write,
    interpolate_color,
    linear,
    np,
)

from scenes import style, widgets
from scenes.base import LectureScene
from scenes.widgets import Column, line_through, sketch_axes, tick_labels, verdict

PARAMETRIZATION_NAMES = {"sp": "SP（标准参数化）", "mup": "μP"}


def _note(text: str, color: str = style.MUTED, size: float = style.SMALL_SIZE) -> Mobject:
    """An axis name or a small note: muted and small unless told otherwise."""
    return style.zh(text, size=size, color=color)


def width_shade(i: int, count: int) -> str:
    """The i-th of `count` widths, narrowest palest: one series, darkening as the model widens."""
    pale = 0.8 * (1 - i / max(count - 1, 1))
    return interpolate_color(ManimColor(style.SERIES_A), ManimColor(style.TEXT), pale).to_hex()


def data_axes(x_range, y_range, width: float, height: float) -> VGroup:
    """Axes meeting at their ranges' lower-left corner (log axes), with plain line ends."""
    return sketch_axes(x_range, y_range, width, height, ticks=True, corner=True)


# -- mup_random_matrix ---------------------------------------------------------------------------
class MupRandomMatrix(LectureScene):
    """The column cosines of N(0, 1/n) matrices narrow like 1/√n (the histogram morphs through four widths);
    random vectors keep their length; but the singular values fill 0 to 2 at every width, beside an
    orthogonal matrix's single spike at 1: the notes' "approximately orthogonal" is wrong."""

    PLOT_CENTRE = np.array((-3.3, 0.2, 0))
    PLOT_SIZE = (5.8, 3.6)
    DENSITY_TOP = 14.0
    TABLE = (Column(1.2, RIGHT), Column(3.7, RIGHT), Column(6.4, RIGHT))
    TABLE_TOP, TABLE_PITCH = 2.2, 0.5
    STRIP_LEFT, STRIP_WIDTH, STRIP_TOP, STRIP_PITCH = -3.3, 5.0, 2.45, 0.85
    STRIP_HEIGHT = 0.7

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        widths = f["widths"].value
        edges = np.array(f["cos_edges"].value)
        axes = data_axes([edges[0], edges[-1], 0.3], [0, self.DENSITY_TOP, 2], *self.PLOT_SIZE).move_to(
            self.PLOT_CENTRE
        )
        x_name = _note("两列夹角的余弦").next_to(axes.x_axis, DOWN, buff=style.GAP_S)
        zero = _note(f["sigma_ticks"].value[0][1]).next_to(axes.x_axis.n2p(0), DOWN, buff=style.GAP_XS)
        x_name.next_to(zero, DOWN, buff=style.GAP_XS)
        bars = [self._histogram(axes, edges, f[f"cos_hist_{n}"].value) for n in widths]
        width_label = style.zh(f"n = {f[f'n_{widths[0]}'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        width_label.next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT)
        head = widgets.text_row(
            ["n", "余弦离散 × √n", "长度比离散 × √(2n)"],
            self.TABLE,
            self.TABLE_TOP,
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        rows = [
            widgets.text_row(
                [f[f"n_{n}"].text, f[f"cosine_{n}"].text, ""],
                self.TABLE,
                self.TABLE_TOP - self.TABLE_PITCH * (i + 1),
            )
            for i, n in enumerate(widths)
        ]
        gains = VGroup(
            *(
                widgets.text_row(
                    ["", "", f[f"gain_{n}"].text], self.TABLE, self.TABLE_TOP - self.TABLE_PITCH * (i + 1)
                )[2]
                for i, n in enumerate(widths)
            )
        )
        with self.narrate("rm_columns") as beat:
            self.play(Create(axes), FadeIn(x_name), FadeIn(zero), FadeIn(head), run_time=beat.share(0.15))
            self.play(FadeIn(bars[0]), FadeIn(width_label), FadeIn(rows[0]), run_time=beat.share(0.15))
            shown = bars[0]
            for i in range(1, len(widths)):
                label = style.zh(f"n = {f[f'n_{widths[i]}'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
                label.move_to(width_label, aligned_edge=LEFT)
                self.play(
                    Transform(shown, bars[i]),
                    Transform(width_label, label),
                    FadeIn(rows[i], shift=0.2 * UP),
                    run_time=beat.share(0.17),
                )

        shell = style.caption_stack(
            f"{f['vectors'].text} 个随机向量：", f"‖Wx‖ / ‖x‖ 都在 {f['one'].text} 附近", size=style.SMALL_SIZE
        )
        shell.next_to(rows[-1], DOWN, buff=style.GAP_L).align_to(head, LEFT)
        with self.narrate("rm_lengths") as beat:
            self.play(
                LaggedStart(*(FadeIn(g, shift=0.2 * LEFT) for g in gains), lag_ratio=0.3), run_time=beat.share(0.5)
            )
            self.play(FadeIn(shell), run_time=beat.share(0.25))

        strips, labels = self._spectra(f, widths)
        with self.narrate("rm_spectrum") as beat:
            self.play(
                FadeOut(VGroup(axes, x_name, zero, shown, width_label, head, *rows, gains, shell)),
                run_time=beat.share(0.1),
            )
            self.play(FadeIn(strips[-1]), run_time=beat.share(0.15))  # the orthogonal matrix: one spike at 1
            self.play(
                LaggedStart(*(FadeIn(s, shift=0.2 * UP) for s in strips[:-1]), lag_ratio=0.3),
                run_time=beat.share(0.35),
            )
            self.play(
                FadeIn(labels), Indicate(strips[-2], color=style.HIGHLIGHT, scale_factor=1.0), run_time=beat.share(0.25)
            )

        claim = style.zh("笔记：「近似为正交矩阵，n 越大越好」", size=style.LABEL_SIZE)
        answer = verdict("✗", style.VERDICT_BAD, "对随便一个向量保长度 ≠ 对每个方向都保长度")
        answer[0].next_to(claim, RIGHT, buff=style.GAP_M)
        answer[1].next_to(claim, DOWN, buff=style.GAP_S).align_to(claim, LEFT)
        card = VGroup(claim, answer)
        style.above_captions(card).to_edge(LEFT, buff=style.EDGE + style.GAP_L)
        with self.narrate("rm_notes") as beat:
            self.play(FadeIn(claim), run_time=beat.share(0.3))
            self.play(FadeIn(answer[0], scale=1.5), FadeIn(answer[1]), run_time=beat.share(0.35))

        self.finish()

    def _histogram(self, axes, edges: np.ndarray, density: list[float]) -> VGroup:
        """Bars of a density on the cosine axis."""
        bars = VGroup()
        for left, right, height in zip(edges[:-1], edges[1:], density):
            if height <= 0:
                continue
            low, high = axes.c2p(left, 0), axes.c2p(right, min(height, self.DENSITY_TOP))
            bar = widgets.bar(high[0] - low[0], max(high[1] - low[1], 0.01), style.SERIES_A)
            bars.add(bar.move_to((low + high) / 2))
        return bars

    def _spectra(self, f, widths) -> tuple[VGroup, VGroup]:
        """One strip per width: its singular values as a histogram on 0 … 2.1, with σ_max, σ_min and the
        share within 1 ± 0.1; the last strip is an orthogonal matrix (QR): every σ exactly 1."""
        edges = np.array(f["sigma_edges"].value)
        unit = self.STRIP_WIDTH / edges[-1]
        strips = VGroup()
        labels = VGroup()

        def base(y: float) -> VGroup:
            line = Line((self.STRIP_LEFT, y, 0), (self.STRIP_LEFT + self.STRIP_WIDTH, y, 0), color=style.MUTED)
            band = Rectangle(
                width=0.2 * unit,
                height=self.STRIP_HEIGHT,
                stroke_width=0,
                fill_color=style.HIGHLIGHT,
                fill_opacity=style.FILL_GHOST,
            ).move_to((self.STRIP_LEFT + unit, y + self.STRIP_HEIGHT / 2, 0))
            return VGroup(band, line)

        for i, n in enumerate(widths):
            y = self.STRIP_TOP - self.STRIP_PITCH * i
            counts, _ = np.histogram(f[f"sigmas_{n}"].value, edges)
            peak = max(counts.max(), 1)
            group = base(y)
            for left, count in zip(edges[:-1], counts):
                if count:
                    bar = widgets.bar((edges[1] - edges[0]) * unit, self.STRIP_HEIGHT * count / peak, style.SERIES_A)
                    group.add(
                        bar.move_to(
                            (self.STRIP_LEFT + (left + (edges[1] - edges[0]) / 2) * unit, y, 0), aligned_edge=DOWN
                        )
                    )
            name = _note(f"n = {f[f'n_{n}'].text}").next_to(group[1], LEFT, buff=style.GAP_M)
            group.add(name)
            strips.add(group)
            spread = f"σ：{f[f'sigma_min_{n}'].text} … {f[f'sigma_max_{n}'].text}"
            text = f"{spread}，{f['one'].text} ± {f['band'].text} 内 {f[f'near_one_{n}'].text}"
            labels.add(_note(text, color=style.TEXT).next_to(group[1], RIGHT, buff=style.GAP_M).shift(0.2 * UP))
        y = self.STRIP_TOP - self.STRIP_PITCH * len(widths)
        ortho = base(y)
        spike = widgets.bar(0.06, self.STRIP_HEIGHT, style.VERDICT_GOOD).move_to(
            (self.STRIP_LEFT + unit, y, 0), aligned_edge=DOWN
        )
        ortho.add(spike, _note(f"正交矩阵（QR，n = {f['qr_n'].text}）").next_to(ortho[1], LEFT, buff=style.GAP_M))
        ticks = VGroup(
            *(
                _note(text).next_to((self.STRIP_LEFT + at * unit, y, 0), DOWN, buff=style.GAP_XS)
                for at, text in f["sigma_ticks"].value
            )
        )
        ortho.add(ticks)
        labels.add(
            _note(f"σ 全是 {f['one'].text}（误差 {f['qr'].text}）", color=style.VERDICT_GOOD)
            .next_to(ortho[1], RIGHT, buff=style.GAP_M)
            .shift(0.2 * UP)
        )
        strips.add(ortho)
        return strips, labels


# -- mup_rms_through_depth -----------------------------------------------------------------------
class MupRmsThroughDepth(LectureScene):
    """A vector's log-RMS through 20 layers for three variances (traced, dots riding the track), then with a
    ReLU before each layer (1/n fades, 2/n holds); then one rectangular layer whose forward and backward
    gauges no variance sets to 1 at once."""

    PLOT_CENTRE = np.array((-2.2, 0.1, 0))
    PLOT_SIZE = (7.0, 4.6)
    READOUT_X = 2.0
    TABLE = (Column(-6.4, LEFT), Column(-1.6, RIGHT), Column(-1.4, LEFT), Column(3.0, RIGHT), Column(3.2, LEFT))
    TABLE_TOP, TABLE_PITCH = 0.3, 0.6

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        layers = f["layers"].value
        axes = data_axes([0, layers, 5], [-30, 30, 10], *self.PLOT_SIZE).move_to(self.PLOT_CENTRE)
        zero_line = DashedLine(axes.c2p(0, 0), axes.c2p(layers, 0), color=style.MUTED, stroke_width=1.5)
        ticks = tick_labels(axes, f["x_ticks"].value)
        x_name = _note("层").next_to(ticks, DOWN, buff=style.GAP_XS).set_x(axes.x_axis.n2p(layers / 2)[0])
        y_name = _note("log₁₀ RMS").next_to(axes.y_axis, UP, buff=style.GAP_S)
        walks = f["walks"].value
        series = (
            ("one", style.VERDICT_BAD, "方差 1", "log_one"),
            ("one_over_n", style.VERDICT_GOOD, "方差 1/n", "log_one_over_n"),
            ("one_over_n2", style.SERIES_B, "方差 1/n²", "log_one_over_n2"),
        )
        curves = VGroup(*(line_through(axes, list(enumerate(walks[key])), color) for key, color, _, _ in series))
        riders = VGroup(*(Dot(axes.c2p(0, walks[key][0]), color=color) for key, color, _, _ in series))
        ends = VGroup(
            *(
                style.zh(f"{name}：{f[fact].text}", size=style.SMALL_SIZE, color=color).next_to(
                    axes.c2p(layers, walks[key][-1]), RIGHT, buff=style.GAP_S
                )
                for key, color, name, fact in series
            )
        )
        closed = _note(f"闭式解 ±{f['layers'].text}·log₁₀√{f['width'].text} = ±{f['closed'].text}", color=style.TEXT)
        closed.next_to(ends[1], DOWN, buff=style.GAP_L).align_to(ends[1], LEFT)
        with self.narrate("depth_linear") as beat:
            self.play(Create(axes), FadeIn(ticks, x_name, y_name, zero_line), run_time=beat.share(0.15))
            self.add(riders)
            for curve, rider in zip(curves, riders):
                rider.add_updater(lambda d, c=curve: d.move_to(c.get_end()))
            self.play(*(Create(c) for c in curves), run_time=beat.share(0.45), rate_func=linear)
            for rider in riders:
                rider.clear_updaters()
            self.play(FadeIn(ends), run_time=beat.share(0.15))
            self.play(FadeIn(closed), run_time=beat.share(0.15))

        relu = f["relu_walks"].value
        relu_series = (
            ("he", style.VERDICT_GOOD, f"ReLU + 方差 2/n：{f['relu_he'].text}"),
            ("one_over_n", style.SERIES_B, f"ReLU + 方差 1/n：{f['relu_one_over_n'].text}"),
        )
        relu_curves = VGroup(*(line_through(axes, list(enumerate(relu[key])), color) for key, color, _ in relu_series))
        relu_notes = style.caption_stack(relu_series[0][2], relu_series[1][2], size=style.SMALL_SIZE)
        relu_notes[0].set_color(style.VERDICT_GOOD)
        relu_notes[1].set_color(style.SERIES_B)
        relu_notes.next_to(axes, RIGHT, buff=style.GAP_L).align_to(axes, UP)
        halving = _note(f"{f['halving'].text} × RMS(x) = {f['relu_closed'].text}", color=style.TEXT)
        halving.next_to(relu_notes, DOWN, buff=style.GAP_SM).align_to(relu_notes, LEFT)
        with self.narrate("depth_relu") as beat:
            self.play(curves.animate.set_stroke(opacity=0.25), FadeOut(riders, ends, closed), run_time=beat.share(0.15))
            self.play(*(Create(c) for c in relu_curves), run_time=beat.share(0.4), rate_func=linear)
            self.play(FadeIn(relu_notes), FadeIn(halving), run_time=beat.share(0.25))

        layer = widgets.block(
            2.6,
            1.0,
            style.PANEL,
            f"W：{f['fan_in'].text} → {f['fan_out'].text}",
            size=style.LABEL_SIZE,
            opacity=1.0,
            stroke_color=style.MUTED,
        )
        layer.move_to((0, 1.9, 0))
        forward = Arrow(layer.get_left() + 1.6 * LEFT, layer.get_left(), color=style.FORWARD, buff=0)
        forward_end = Arrow(layer.get_right(), layer.get_right() + 1.6 * RIGHT, color=style.FORWARD, buff=0)
        backward = Arrow(
            layer.get_right() + 1.6 * RIGHT + 0.35 * DOWN, layer.get_right() + 0.35 * DOWN, color=style.BACKWARD, buff=0
        )
        backward_end = Arrow(
            layer.get_left() + 0.35 * DOWN, layer.get_left() + 1.6 * LEFT + 0.35 * DOWN, color=style.BACKWARD, buff=0
        )
        names = VGroup(
            _note("前向 W·x", color=style.FORWARD).next_to(forward, UP, buff=style.GAP_S),
            _note("反向 Wᵀ·g", color=style.BACKWARD).next_to(backward, DOWN, buff=style.GAP_S),
        )
        rows = f["rect"].value
        table = widgets.table(
            ["方差", "前向", "（闭式）", "反向", "（闭式）"],
            [
                [
                    row["name"],
                    row["forward"],
                    f"（{row['forward_closed']}）",
                    row["backward"],
                    f"（{row['backward_closed']}）",
                ]
                for row in rows
            ],
            self.TABLE,
            self.TABLE_TOP,
            self.TABLE_PITCH,
            header_gap=0.55,
        )
        for row, values in zip(table[1], rows):
            for cell, value in ((row[1], values["forward_value"]), (row[3], values["backward_value"])):
                cell.set_color(style.VERDICT_GOOD if abs(value - 1) < 0.05 else style.VERDICT_BAD)
        with self.narrate("depth_rect") as beat:
            self.play(
                FadeOut(VGroup(axes, ticks, x_name, y_name, zero_line, curves, relu_curves, relu_notes, halving)),
                run_time=beat.share(0.1),
            )
            self.play(
                FadeIn(layer),
                GrowFromEdge(forward, LEFT),
                GrowFromEdge(forward_end, LEFT),
                FadeIn(names[0]),
                run_time=beat.share(0.15),
            )
            self.play(
                GrowFromEdge(backward, RIGHT),
                GrowFromEdge(backward_end, RIGHT),
                FadeIn(names[1]),
                run_time=beat.share(0.15),
            )
            self.play(FadeIn(table[0]), run_time=beat.share(0.05))
            self.play(
                LaggedStart(*(FadeIn(row, shift=0.2 * UP) for row in table[1]), lag_ratio=0.5),
                run_time=beat.share(0.45),
            )

        moral = style.caption_stack(
            f"没有一个方差能让前向、反向同时保持 {f['unit'].text}", "宽度和稳定性，是绑在一起的", size=style.LABEL_SIZE
        )
        style.above_captions(moral).align_to(table, LEFT)
        with self.narrate("depth_open") as beat:
            self.play(
                Indicate(
                    VGroup(*(r[1] for r in table[1]), *(r[3] for r in table[1])),
                    color=style.HIGHLIGHT,
                    scale_factor=1.0,
                ),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(moral, shift=0.2 * UP), run_time=beat.share(0.3))
        self.finish()


# -- mup_adam_update_scale -----------------------------------------------------------------------
class MupAdamUpdateScale(LectureScene):
    """On log–log axes against width: RMS(W·x) at init stays flat, Adam's first step climbs like n (an outer
    product, nothing cancels), a random ±η update like √n; then the loss change of one step, SP against μP's
    lr·32/n, and the rule it leads to."""

    PLOT_CENTRE = np.array((-2.6, 0.4, 0))
    PLOT_SIZE = (6.4, 3.9)
    Y_RANGE = (-3.5, 7.5)  # log₂ RMS
    NOTE_X = 1.9

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        widths = f["widths"].value
        xs = np.log2(widths)
        axes = data_axes([xs[0] - 0.5, xs[-1] + 0.5, 1], [*self.Y_RANGE, 1], *self.PLOT_SIZE).move_to(self.PLOT_CENTRE)
        ticks = tick_labels(axes, f["x_ticks"].value)
        x_name = _note("宽度 n（对数）").next_to(ticks, DOWN, buff=style.GAP_S)
        y_name = _note("每个坐标的 RMS（对数）").next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT)
        series = (
            ("init", style.DATA, "初始化 W·x", "init", "slope_init"),
            ("update", style.VERDICT_BAD, "Adam 一步 ΔW·x", "update", "slope_update"),
            ("random", style.SERIES_B, "随机 ±η 矩阵 R·x", "random", "slope_random"),
        )
        lines, dots, values, names = {}, {}, {}, {}
        for key, color, name, prefix, slope in series:
            points = [(x, np.log2(v)) for x, v in zip(xs, f[key].value)]
            lines[key] = line_through(axes, points, color)
            dots[key] = VGroup(*(Dot(axes.c2p(*p), radius=0.06, color=color) for p in points))
            values[key] = VGroup(
                *(
                    style.zh(f[f"{prefix}_{n}"].text, size=style.SMALL_SIZE, color=color).next_to(
                        d,
                        DOWN if key == "random" else UP,
                        buff=style.GAP_S,
                    )
                    for d, n in zip(dots[key], widths)
                )
            )
            if key == "init":  # its values go in its legend line: the random line meets it at n = 1024
                values[key] = VGroup()
            names[key] = style.caption_stack(f"{name}：斜率 {f[slope].text}", size=style.SMALL_SIZE, color=color)
            if key == "init":
                listed = " / ".join(f"{f[f'{prefix}_{n}'].text}" for n in widths)
                names[key] = style.caption_stack(names[key][0].text, listed, size=style.SMALL_SIZE, color=color)
        names_column = VGroup(*names.values()).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_SM)
        names_column.move_to((self.NOTE_X, 2.2, 0), aligned_edge=UP + LEFT)
        with self.narrate("adam_init") as beat:
            self.play(Create(axes), FadeIn(ticks, x_name, y_name), run_time=beat.share(0.2))
            self.play(
                Create(lines["init"]),
                LaggedStart(*(FadeIn(d) for d in dots["init"]), lag_ratio=0.3),
                run_time=beat.share(0.4),
            )
            self.play(FadeIn(values["init"]), FadeIn(names["init"]), run_time=beat.share(0.2))

        formula = style.caption_stack(
            "ΔW = −η · sign(g) · sign(x)ᵀ", "⇒ 每个坐标都移动 η · ‖x‖₁", size=style.LABEL_SIZE
        )
        formula.next_to(names_column, DOWN, buff=style.GAP_L).align_to(names_column, LEFT)
        with self.narrate("adam_step") as beat:
            self.play(FadeIn(formula), run_time=beat.share(0.2))
            self.play(
                Create(lines["update"]),
                LaggedStart(*(GrowFromEdge(d, DOWN) for d in dots["update"]), lag_ratio=0.3),
                run_time=beat.share(0.45),
            )
            self.play(FadeIn(values["update"]), FadeIn(names["update"]), run_time=beat.share(0.2))

        table = style.caption_stack("mup README：外积 Θ(n)", "独立随机 Θ(√n)", size=style.SMALL_SIZE, color=style.MUTED)
        table.next_to(formula, DOWN, buff=style.GAP_M).align_to(formula, LEFT)
        with self.narrate("adam_random") as beat:
            self.play(
                Create(lines["random"]),
                LaggedStart(*(FadeIn(d) for d in dots["random"]), lag_ratio=0.3),
                run_time=beat.share(0.4),
            )
            self.play(FadeIn(values["random"]), FadeIn(names["random"]), run_time=beat.share(0.2))
            self.play(FadeIn(table), run_time=beat.share(0.2))

        loss_axes, loss_group = self._loss_panel(f)
        with self.narrate("adam_loss") as beat:
            self.play(
                FadeOut(
                    VGroup(
                        axes,
                        ticks,
                        x_name,
                        y_name,
                        *lines.values(),
                        *dots.values(),
                        *values.values(),
                        names_column,
                        formula,
                        table,
                    )
                ),
                run_time=beat.share(0.1),
            )
            self.play(Create(loss_axes), FadeIn(loss_group[0]), run_time=beat.share(0.15))
            self.play(Create(loss_group[1]), FadeIn(loss_group[2]), run_time=beat.share(0.3))
            self.play(Create(loss_group[3]), FadeIn(loss_group[4]), run_time=beat.share(0.3))

        rule = widgets.block(
            5.6,
            0.75,
            style.PANEL,
            "隐藏层：Adam 学习率 ∝ 1/宽度",
            size=style.BODY_SIZE,
            opacity=1.0,
            stroke_color=style.HIGHLIGHT,
        )
        style.above_captions(rule).align_to(loss_axes, LEFT)
        with self.narrate("adam_rule") as beat:
            self.play(FadeIn(rule, shift=0.2 * UP), run_time=beat.share(0.4))
        self.finish()

    def _loss_panel(self, f) -> tuple[VGroup, VGroup]:
        """ΔL of one step (first order) against width: SP climbing, μP flat. Returns axes and
        (tick labels and names, SP line, SP readout, μP line, μP readout)."""
        widths = f["loss_widths"].value
        xs = np.log2(widths)
        axes = data_axes([xs[0] - 0.4, xs[-1] + 0.4, 1], [-2.5, 8.5, 1], 6.4, 3.4).move_to((-2.6, 0.85, 0))
        ticks = tick_labels(axes, f["loss_ticks"].value)
        names = VGroup(
            ticks,
            _note("宽度 n（对数）").next_to(ticks, DOWN, buff=style.GAP_S),
            _note(f"一步的损失变化（一阶项，η = {f['lr'].text}，对数）")
            .next_to(axes, UP, buff=style.GAP_S)
            .align_to(axes, LEFT),
        )
        sp = line_through(axes, list(zip(xs, np.log2(f["loss_sp"].value))), style.VERDICT_BAD)
        mu = line_through(axes, list(zip(xs, np.log2(f["loss_mup"].value))), style.VERDICT_GOOD)
        sp_note = (
            style.caption_stack(
                f"SP：{f['loss_sp_first'].text} → {f['loss_sp_last'].text}",
                f"斜率 {f['loss_slope_sp'].text}",
                size=style.SMALL_SIZE,
                color=style.VERDICT_BAD,
            )
            .next_to(axes, RIGHT, buff=style.GAP_L)
            .align_to(axes, UP)
        )
        mu_note = (
            style.caption_stack(
                f"μP（学习率 × {f['base'].text}/n）：{f['loss_mup_low'].text} … {f['loss_mup_high'].text}",
                f"斜率 {f['loss_slope_mup'].text}",
                size=style.SMALL_SIZE,
                color=style.VERDICT_GOOD,
            )
            .next_to(sp_note, DOWN, buff=style.GAP_L)
            .align_to(sp_note, LEFT)
        )
        return axes, VGroup(names, sp, sp_note, mu, mu_note)


# -- mup_coord_check -----------------------------------------------------------------------------
class MupCoordCheck(LectureScene):
    """The coordinate check played step by step: SP's and μP's mean |coordinate| of h1, h2 and the output
    against width, t = 0 → 3; SP's lines swell with width, μP's stay flat."""

    PANELS = {"sp": np.array((-3.4, 0.45, 0)), "mup": np.array((3.5, 0.45, 0))}
    PANEL_SIZE = (5.4, 3.6)
    Y_RANGE = (-4.5, 8.5)  # log₂ of mean |coordinate|
    NOTE_Y = 3.0  # the axis names, under the title (the band above the captions holds the key)
    LAYERS = (("h1", style.MUTED, "第一层 h1"), ("h2", style.SERIES_A, "第二层 h2"), ("y", style.SERIES_B, "输出 y"))

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        l1 = f["l1"].value
        xs = np.log2(f["widths"].value)
        step = ValueTracker(0.0)
        panels, lines = {}, {}
        for p, centre in self.PANELS.items():
            axes = data_axes([xs[0] - 0.3, xs[-1] + 0.3, 1], [*self.Y_RANGE, 1], *self.PANEL_SIZE).move_to(centre)
            ticks = tick_labels(axes, f["x_ticks"].value)
            name = style.zh(PARAMETRIZATION_NAMES[p], size=style.LABEL_SIZE, color=style.TEXT).next_to(
                axes, UP, buff=style.GAP_S
            )
            panels[p] = VGroup(axes, ticks, name)
            for layer, color, _ in self.LAYERS:
                lines[p, layer] = self._line(axes, xs, l1[p][layer], color, step)
        key = VGroup(*(style.zh(label, size=style.SMALL_SIZE, color=color) for _, color, label in self.LAYERS))
        key.arrange(RIGHT, buff=style.GAP_L).next_to(panels["sp"][1], DOWN, buff=style.GAP_M).set_x(0)
        axis_name = _note("横轴：宽度（对数）　纵轴：平均 |坐标|（对数）").move_to((0, self.NOTE_Y, 0))
        clock = style.zh("第 0 步", size=style.LABEL_SIZE, color=style.HIGHLIGHT).to_corner(UP + RIGHT, buff=style.EDGE)
        with self.narrate("coord_intro") as beat:
            self.play(
                *(Create(v[0]) for v in panels.values()),
                *(FadeIn(v[1:]) for v in panels.values()),
                run_time=beat.share(0.35),
            )
            self.play(FadeIn(key), FadeIn(axis_name), FadeIn(clock), run_time=beat.share(0.25))

        with self.narrate("coord_start") as beat:
            self.play(*(Create(line) for line in lines.values()), run_time=beat.share(0.6))
            for line in lines.values():
                line.add_updater(line.follow)

        with self.narrate("coord_sp") as beat:
            self.play(step.animate.set_value(1.0), self._count(clock, 0, 1), run_time=beat.share(0.5), rate_func=linear)
            self.play(
                Indicate(VGroup(lines["sp", "h2"], lines["sp", "y"]), color=style.VERDICT_BAD, scale_factor=1.0),
                run_time=beat.share(0.3),
            )

        slopes = VGroup(
            *(
                style.zh(
                    f"h2 斜率 {f[f'{p}_h2_slope_3'].text}",
                    size=style.SMALL_SIZE,
                    color=style.VERDICT_BAD if p == "sp" else style.VERDICT_GOOD,
                )
                .move_to(panels[p][0].c2p(xs[0], self.Y_RANGE[1]), aligned_edge=UP + LEFT)
                .shift(style.GAP_M * RIGHT)  # inside the plot's empty upper left, clear of the panel's name
                for p in self.PANELS
            )
        )
        with self.narrate("coord_mup") as beat:
            self.play(
                step.animate.set_value(3.0), self._count(clock, 1, 3), run_time=beat.share(0.55), rate_func=linear
            )
            self.play(
                FadeIn(slopes),
                Indicate(panels["mup"][0], color=style.VERDICT_GOOD, scale_factor=1.0),
                run_time=beat.share(0.3),
            )
        for line in lines.values():
            line.clear_updaters()

        note = _note(f"μP 的输出在第 0 步随宽度变小（斜率 {f['mup_y_slope_0'].text}），走一步就平了", color=style.TEXT)
        note.move_to(axis_name)
        with self.narrate("coord_note") as beat:
            self.play(FadeOut(axis_name), FadeIn(note), run_time=beat.share(0.3))
            self.play(Indicate(lines["mup", "y"], color=style.HIGHLIGHT, scale_factor=1.0), run_time=beat.share(0.3))
        self.finish()

    @staticmethod
    def _line(axes, xs, steps: list[list[float]], color: str, step: ValueTracker) -> VMobject:
        """A layer's line at the step the tracker holds, between two steps linearly; `line.follow` redraws it."""

        def at(t: float) -> list[tuple[float, float]]:
            low = min(int(np.floor(t)), len(steps) - 2)
            frac = t - low
            return [(x, (1 - frac) * a + frac * b) for x, a, b in zip(xs, steps[low], steps[low + 1])]

        line = line_through(axes, at(0.0), color)

        def follow(mob: VMobject) -> None:
            mob.set_points_as_corners([axes.c2p(x, y) for x, y in at(step.get_value())])

        line.follow = follow
        return line

    @staticmethod
    def _count(clock, start: int, end: int) -> UpdateFromAlphaFunc:
        """The step counter ticking from `start` to `end` as the lines move."""

        def advance(mob, alpha: float) -> None:
            shown = min(int(start + alpha * (end - start) + 1e-9), end)
            if mob.shown != shown:
                mob.become(
                    style.zh(f"第 {shown} 步", size=style.LABEL_SIZE, color=style.HIGHLIGHT).move_to(
                        mob, aligned_edge=RIGHT
                    )
                )
                mob.shown = shown

        clock.shown = start
        return UpdateFromAlphaFunc(clock, advance)


# -- mup_lr_transfer -----------------------------------------------------------------------------
class MupLrTransfer(LectureScene):
    """Loss against learning rate, one curve per width: in SP the basin slides left as the model widens (a
    marker follows the minimum), in μP the minima line up at 2⁻⁵; copying width 32's best to width 256 in SP
    costs two orders of magnitude of loss."""

    PANELS = {"sp": np.array((-3.35, 0.55, 0)), "mup": np.array((3.55, 0.55, 0))}
    PANEL_SIZE = (5.4, 3.4)
    Y_RANGE = (-3.6, 3.6)

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        exps = f["exponents"].value
        widths = f["widths"].value
        curves = f["curves"].value
        panels, plots, minima = {}, {}, {}
        for p, centre in self.PANELS.items():
            axes = data_axes([exps[0] - 0.5, exps[-1] + 0.5, 1], [*self.Y_RANGE, 1], *self.PANEL_SIZE).move_to(centre)
            ticks = tick_labels(axes, f["x_ticks"].value, f["y_ticks"].value)
            name = style.zh(PARAMETRIZATION_NAMES[p], size=style.LABEL_SIZE).next_to(axes, UP, buff=style.GAP_S)
            panels[p] = VGroup(axes, ticks, name)
            plots[p] = VGroup()
            minima[p] = []
            for i, n in enumerate(widths):
                ys = curves[f"{p}_{n}"]
                plots[p].add(line_through(axes, list(zip(exps, ys)), width_shade(i, len(widths)), width=3))
                low = int(np.argmin(ys))
                minima[p].append(axes.c2p(exps[low], ys[low]))
        key = VGroup(
            *(
                style.zh(f"n = {f[f'n_{n}'].text}", size=style.SMALL_SIZE, color=width_shade(i, len(widths)))
                for i, n in enumerate(widths)
            )
        ).arrange(RIGHT, buff=style.GAP_L)
        key.next_to(panels["sp"][1], DOWN, buff=style.GAP_M).set_x(0)
        axis_name = _note(f"横轴：学习率　纵轴：训练 {f['steps'].text} 步后的 log₁₀ MSE")
        axis_name.next_to(key, DOWN, buff=style.GAP_S)
        with self.narrate("lr_sweep") as beat:
            self.play(
                *(Create(v[0]) for v in panels.values()),
                *(FadeIn(v[1:]) for v in panels.values()),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(key), FadeIn(axis_name), run_time=beat.share(0.2))
            self.play(Create(plots["sp"][0]), run_time=beat.share(0.3))

        marker = Dot(minima["sp"][0], radius=0.09, color=style.HIGHLIGHT)
        best = VGroup(
            *(
                style.zh(f[f"best_sp_{n}"].text, size=style.SMALL_SIZE, color=width_shade(i, len(widths))).next_to(
                    minima["sp"][i], DOWN, buff=style.GAP_S
                )
                for i, n in enumerate(widths)
            )
        )
        with self.narrate("lr_sp") as beat:
            self.play(FadeIn(marker, scale=2), FadeIn(best[0]), run_time=beat.share(0.1))
            for i in range(1, len(widths)):
                self.play(
                    Create(plots["sp"][i]),
                    marker.animate.move_to(minima["sp"][i]),
                    FadeIn(best[i]),
                    run_time=beat.share(0.22),
                )

        sp_axes = panels["sp"][0]
        at = f["best_mup"].value
        copied = Dot(
            sp_axes.c2p(np.log2(at), curves[f"sp_{widths[-1]}"][exps.index(int(np.log2(at)))]),
            radius=0.08,
            color=style.VERDICT_BAD,
        )
        guide = DashedLine(
            sp_axes.c2p(np.log2(at), self.Y_RANGE[0]),
            sp_axes.c2p(np.log2(at), self.Y_RANGE[1]),
            color=style.MUTED,
            stroke_width=2,
        )
        copy_note = style.caption_stack(
            f"搬来 {f['best_sp_32'].text}：{f['sp_wide_copied'].text}",
            f"自己最优：{f['sp_wide_own'].text}",
            size=style.SMALL_SIZE,
            color=style.VERDICT_BAD,
        )
        copy_note.next_to(sp_axes.c2p(np.log2(at), self.Y_RANGE[1]), LEFT, buff=style.GAP_S).shift(
            0.35 * DOWN
        )  # clear of the wide curves
        copy_note[1].set_color(style.TEXT)
        with self.narrate("lr_copy") as beat:
            self.play(Create(guide), run_time=beat.share(0.2))
            self.play(FadeIn(copied, scale=2), FadeIn(copy_note), run_time=beat.share(0.35))

        mu_axes = panels["mup"][0]
        mu_guide = DashedLine(
            mu_axes.c2p(np.log2(at), self.Y_RANGE[0]),
            mu_axes.c2p(np.log2(at), self.Y_RANGE[1]),
            color=style.VERDICT_GOOD,
            stroke_width=2,
        )
        mu_dots = VGroup(
            *(Dot(point, radius=0.07, color=width_shade(i, len(widths))) for i, point in enumerate(minima["mup"]))
        )
        aligned = style.zh(f"最低点都在 {f['best_mup'].text}", size=style.SMALL_SIZE, color=style.VERDICT_GOOD)
        aligned.next_to(mu_axes.c2p(np.log2(at), self.Y_RANGE[1]), RIGHT, buff=style.GAP_S).shift(0.2 * DOWN)
        with self.narrate("lr_mup") as beat:
            self.play(LaggedStart(*(Create(c) for c in plots["mup"]), lag_ratio=0.3), run_time=beat.share(0.45))
            self.play(Create(mu_guide), FadeIn(mu_dots), FadeIn(aligned), run_time=beat.share(0.25))
            self.play(
                Indicate(VGroup(plots["sp"][0], plots["mup"][0]), color=style.HIGHLIGHT, scale_factor=1.0),
                run_time=beat.share(0.2),
            )

        card = style.caption_stack(
            "在小模型上调好学习率，直接用到大模型", "玩具模型，自设任务：只说明方向", size=style.LABEL_SIZE
        )
        card[1].set_color(style.MUTED)
        style.above_captions(card).set_x(0)
        with self.narrate("lr_transfer") as beat:
            self.play(FadeOut(key), FadeOut(axis_name), run_time=beat.share(0.1))
            self.play(Write(card[0]), run_time=beat.share(0.35))
            self.play(FadeIn(card[1]), run_time=beat.share(0.2))
        self.finish()
