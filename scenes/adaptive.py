"""自适应优化器：分母、步长与学习率曲线 (adaptive): staging only; every number comes from tools.chapters.adaptive."""

from __future__ import annotations

import itertools

from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    Arrow,
    Create,
    Cross,
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowArrow,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    Mobject,
    Rectangle,
    SurroundingRectangle,
    Transform,
    VGroup,
    Write,
    np,
)

from scenes import style, widgets
from scenes.base import LectureScene
from scenes.widgets import (
    Column,
    curve_through,
    grid_row,
    line_through,
    norm_ball,
    sketch_axes,
    steepest_step,
    text_row,
    tick_labels,
    verdict,
)


def _note(text: str, color: str = style.MUTED, size: float = style.SMALL_SIZE) -> Mobject:
    """An axis name or a small note: muted and small unless told otherwise."""
    return style.zh(text, size=size, color=color)


# -- adagrad_rmsprop_adam_chain -----------------------------------------------------------
class AdagradRmspropAdamChain(LectureScene):
    """One steady gradient, four step-size curves on log–log axes: AdaGrad decays, RMSProp and Adam
    without bias correction overshoot, the corrected ratio sits on 1."""

    PLOT_CENTRE = np.array((-2.45, 0.15, 0))
    PANEL_X = 2.45  # left edge of the right-hand column: each method named, its formula under it
    PANEL_TOP = 2.55
    PANEL_PITCH = 1.95

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        names = self._method_names()
        with self.narrate("chain_denominator") as beat:
            self.play(
                LaggedStart(*(FadeIn(row["name"], shift=0.2 * RIGHT) for row in names), lag_ratio=0.4),
                run_time=beat.share(0.6),
            )

        axes = sketch_axes([0, f["x_max"].value, 1], [-1.75, 1.6, 1], 7.4, 4.6, ticks=True, corner=True)
        axes.move_to(self.PLOT_CENTRE)
        ticks = tick_labels(axes, f["x_ticks"].value, f["y_ticks"].value)
        x_name = _note("步数").next_to(axes.x_axis.get_right(), DOWN, buff=style.GAP_S).align_to(axes.x_axis, RIGHT)
        y_name = _note("这一步 ÷ 理想的一步").next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT)
        ideal = DashedLine(axes.c2p(0, 0), axes.c2p(f["x_max"].value, 0), color=style.MUTED, stroke_width=2)
        ideal_name = _note("理想").next_to(ideal.get_end(), UP, buff=style.GAP_S).shift(0.3 * LEFT)
        with self.narrate("chain_steady") as beat:
            self.play(Create(axes), FadeIn(ticks, x_name, y_name), run_time=beat.share(0.4))
            self.play(Create(ideal), FadeIn(ideal_name), run_time=beat.share(0.35))

        with self.narrate("chain_adagrad") as beat:
            self.play(Write(names[0]["formula"]), run_time=beat.share(0.6))

        adagrad = curve_through(axes, f["adagrad_curve"].value, style.SERIES_A)
        end = Dot(axes.c2p(*f["adagrad_curve"].value[-1]), radius=0.07, color=style.SERIES_A)
        end_name = style.zh(
            f"第 {f['adagrad_step'].text} 步：{f['adagrad_share'].text}", size=style.LABEL_SIZE, color=style.SERIES_A
        ).next_to(end, UP + RIGHT, buff=style.GAP_S)
        with self.narrate("chain_adagrad_decay") as beat:
            self.play(Create(adagrad), run_time=beat.share(0.5))
            self.play(FadeIn(end, scale=2), FadeIn(end_name, shift=0.2 * DOWN), run_time=beat.share(0.25))

        with self.narrate("chain_rmsprop") as beat:
            self.play(Write(names[1]["formula"]), run_time=beat.share(0.5))

        with self.narrate("chain_bias") as beat:
            self.play(Indicate(names[1]["formula"], color=style.SERIES_B), run_time=beat.share(0.5))
            self.play(FadeIn(names[1]["note"], shift=0.2 * UP), run_time=beat.share(0.3))

        rmsprop = curve_through(axes, f["rmsprop_curve"].value, style.SERIES_B)
        first = Dot(axes.c2p(*f["rmsprop_curve"].value[0]), radius=0.07, color=style.SERIES_B)
        first_name = (
            style.zh(
                f"{f['rmsprop_first'].text}（β₂ = {f['beta2'].text}）", size=style.LABEL_SIZE, color=style.SERIES_B
            )
            .next_to(first, RIGHT, buff=style.GAP_M)
            .shift(0.3 * DOWN)
        )
        with self.narrate("chain_orange") as beat:
            self.play(Create(rmsprop), run_time=beat.share(0.5))
            self.play(FadeIn(first, scale=2), FadeIn(first_name, shift=0.2 * RIGHT), run_time=beat.share(0.3))

        adam = curve_through(axes, f["adam_curve"].value, style.HIGHLIGHT)
        peak = Dot(axes.c2p(*f["adam_peak_point"].value), radius=0.07, color=style.HIGHLIGHT)
        peak_name = (
            style.zh(
                f"{f['adam_peak'].text}（第 {f['adam_peak_step'].text} 步）",
                size=style.LABEL_SIZE,
                color=style.HIGHLIGHT,
            )
            .next_to(peak, DOWN, buff=style.GAP_M)
            .shift(0.4 * RIGHT)
        )
        with self.narrate("chain_adam") as beat:
            self.play(Write(names[2]["formula"]), run_time=beat.share(0.25))
            self.play(Create(adam), run_time=beat.share(0.4))
            self.play(FadeIn(peak, scale=2), FadeIn(peak_name, shift=0.2 * DOWN), run_time=beat.share(0.2))

        fixed = curve_through(axes, f["corrected_curve"].value, style.VERDICT_GOOD, 7)
        fixed_name = style.zh(f"修正后：{f['corrected'].text}", size=style.LABEL_SIZE, color=style.VERDICT_GOOD)
        fixed_name.next_to(axes.c2p(f["x_max"].value, 0), DOWN, buff=style.GAP_ML).shift(1.0 * LEFT)
        with self.narrate("chain_corrected") as beat:
            self.play(Indicate(names[2]["formula"], color=style.VERDICT_GOOD), run_time=beat.share(0.3))
            self.play(Create(fixed), FadeOut(ideal_name), FadeIn(fixed_name), run_time=beat.share(0.45))
        self.finish()

    def _method_names(self) -> list[dict[str, Mobject]]:
        """Each method: its name (coloured as its curve) and, when the narration gets there, its formula."""
        rows = []
        specs = (
            ("AdaGrad：除以历来平方和", style.SERIES_A, "g_t / sqrt(sum_(s <= t) g_s^2)", None),
            ("RMSProp：除以滑动平均", style.SERIES_B, "g_t / sqrt(v_t), quad v_0 = 0", "从零起步，头几步分母偏小"),
            (
                "Adam：两个平均各自修正",
                style.HIGHLIGHT,
                "hat(m)_t / sqrt(hat(v)_t), quad hat(v)_t = v_t / (1 - beta_2^t)",
                None,
            ),
        )
        for i, (words, colour, formula, note) in enumerate(specs):
            name = style.zh(words, size=style.LABEL_SIZE, color=colour)
            name.move_to((self.PANEL_X, self.PANEL_TOP - self.PANEL_PITCH * i, 0), aligned_edge=LEFT)
            maths = style.math(formula, size=style.MATH_LABEL_SIZE).next_to(name, DOWN, buff=style.GAP_M)
            maths.align_to(name, LEFT)
            row = {"name": name, "formula": maths}
            if note:
                row["note"] = _note(note, style.SERIES_B).next_to(maths, DOWN, buff=style.GAP_S).align_to(name, LEFT)
            rows.append(row)
        return rows


# -- adam_update_rms ----------------------------------------------------------------------
class AdamUpdateRms(LectureScene):
    """Units cancel, the constant is √((1 − β₁)/(1 + β₁)); a simulation hugs it whatever the scale or β₂;
    β₂ sets the window instead."""

    LEFT_X = -6.6  # the formulas' left edge
    PLOT_CENTRE = np.array((3.5, 0.3, 0))

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        update = style.math("Delta theta = -eta dot hat(m) / sqrt(hat(v))", size=style.MATH_SIZE)
        update.move_to((self.LEFT_X, 2.1, 0), aligned_edge=LEFT)
        units = VGroup(
            _note("梯度的单位", style.TEXT, style.LABEL_SIZE),
            _note("÷", style.TEXT, style.LABEL_SIZE),
            _note("梯度的单位", style.TEXT, style.LABEL_SIZE),
        ).arrange(RIGHT, buff=style.GAP_M)
        units.next_to(update, DOWN, buff=style.GAP_L).align_to(update, LEFT)
        crosses = VGroup(Cross(units[0], stroke_width=3), Cross(units[2], stroke_width=3))
        with self.narrate("rms_units") as beat:
            self.play(Write(update), run_time=beat.share(0.35))
            self.play(FadeIn(units, shift=0.2 * UP), run_time=beat.share(0.25))
            self.play(Create(crosses), run_time=beat.share(0.25))

        constant = style.zh(f"＝ 常数，但不一定是 {f['one'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        constant.next_to(units, DOWN, buff=style.GAP_M).align_to(units, LEFT)
        with self.narrate("rms_not_one") as beat:
            self.play(FadeIn(constant, shift=0.2 * LEFT), run_time=beat.share(0.5))

        closed = style.math(
            f"sqrt((1 - beta_1) / (1 + beta_1)) = {f['closed'].text}", size=style.MATH_SIZE, color=style.HIGHLIGHT
        )
        closed.move_to((self.LEFT_X, -0.75, 0), aligned_edge=LEFT)
        premise = _note(f"梯度基本是噪声时；β₁ = {f['beta1'].text}").next_to(closed, DOWN, buff=style.GAP_M)
        premise.align_to(closed, LEFT)
        with self.narrate("rms_closed") as beat:
            self.play(Write(closed), run_time=beat.share(0.5))
            self.play(FadeIn(premise), run_time=beat.share(0.2))

        plot = self._plot()
        with self.narrate("rms_simulate") as beat:
            self.play(Create(plot["axes"]), FadeIn(plot["ticks"], plot["names"]), run_time=beat.share(0.25))
            self.play(Create(plot["closed"]), FadeIn(plot["closed_name"]), run_time=beat.share(0.2))
            self.play(Create(plot["base"]), FadeIn(plot["base_name"]), run_time=beat.share(0.35))

        with self.narrate("rms_measured") as beat:
            self.play(FadeIn(plot["band"]), FadeIn(plot["band_name"]), run_time=beat.share(0.4))
            self.play(FadeIn(plot["su"]), run_time=beat.share(0.3))

        with self.narrate("rms_scale") as beat:
            self.play(Create(plot["tiny"]), FadeIn(plot["tiny_name"]), run_time=beat.share(0.4))
            self.play(Create(plot["short"]), FadeIn(plot["short_name"]), run_time=beat.share(0.4))

        formulas = VGroup(update, units, crosses, constant, premise)
        windows = self._windows()
        with self.narrate("rms_windows") as beat:
            self.play(
                FadeOut(formulas),
                closed.animate.move_to((self.LEFT_X, 2.1, 0), aligned_edge=LEFT),
                run_time=beat.share(0.15),
            )
            self.play(FadeIn(windows["head"]), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(GrowFromEdge(bar, LEFT) for bar in windows["bars"]), lag_ratio=0.5),
                FadeIn(windows["labels"]),
                run_time=beat.share(0.6),
            )

        step = style.zh(f"每步每个参数 ≈ {f['step_share'].text} × 学习率", size=style.BODY_SIZE, color=style.HIGHLIGHT)
        step.move_to((self.LEFT_X, 0.9, 0), aligned_edge=LEFT)
        with self.narrate("rms_lr") as beat:
            self.play(FadeOut(windows["head"], windows["bars"], windows["labels"]), run_time=beat.share(0.2))
            self.play(Write(step), run_time=beat.share(0.5))

        transfer = style.caption_stack(
            "别的优化器把更新对齐到它，", "就能借用 Adam 的学习率与权重衰减", size=style.LABEL_SIZE
        )
        transfer.next_to(step, DOWN, buff=style.GAP_L).align_to(step, LEFT)
        credit = _note("Moonlight 论文提出，Kimi K2 沿用").next_to(transfer, DOWN, buff=style.GAP_M)
        credit.align_to(step, LEFT)
        with self.narrate("rms_transfer") as beat:
            self.play(FadeIn(transfer, shift=0.2 * UP), run_time=beat.share(0.35))
            self.play(FadeIn(credit), run_time=beat.share(0.2))
        self.finish()

    def _plot(self) -> dict[str, Mobject]:
        """Update RMS per step after the burn-in: three runs and the closed form's line."""
        f = self.facts
        traces = f["traces"].value
        first, last = traces["base"][0, 0], traces["base"][-1, 0]
        axes = sketch_axes([first, last, last - first], [0, 0.4, 0.1], 5.6, 3.7, ticks=True)
        axes.move_to(self.PLOT_CENTRE)
        ticks = tick_labels(axes, [(first, f["first_step"].text), (last, f["last_step"].text)], f["y_ticks"].value)
        names = VGroup(
            _note("步数").next_to(axes.x_axis, DOWN, buff=style.GAP_L),
            _note("更新的均方根").next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT),
        )
        level = f["closed"].value
        closed = DashedLine(axes.c2p(first, level), axes.c2p(last, level), color=style.HIGHLIGHT, stroke_width=3)
        closed_name = _note(f"闭式解 {f['closed'].text}", style.HIGHLIGHT).next_to(closed, UP, buff=style.GAP_S)
        closed_name.align_to(closed, RIGHT)
        base = line_through(axes, traces["base"], style.DATA, 2)
        base_name = _note(f"模拟 {f['simulated'].text}（{f['params'].text} 个参数）", style.DATA)
        base_name.next_to(axes.c2p(first, 0.17), RIGHT, buff=style.GAP_ML)
        low, high = f["range_low"].value, f["range_high"].value
        band = widgets.bar(
            axes.x_length, axes.c2p(0, high)[1] - axes.c2p(0, low)[1], style.MUTED, opacity=style.FILL_GHOST
        )
        band.move_to(axes.c2p((first + last) / 2, (low + high) / 2))
        band_name = _note(f"实测 {f['range_low'].text}–{f['range_high'].text}").next_to(
            axes.c2p(first, high), DOWN + RIGHT, buff=style.GAP_S
        )
        su = _note(f"苏剑林的模拟 {f['su_simulated'].text}").next_to(base_name, DOWN, buff=style.GAP_S)
        su.align_to(base_name, LEFT)
        tiny = line_through(axes, traces["tiny"], style.SERIES_A, 2)
        tiny_name = _note(f"梯度整体 × {f['tiny_scale'].text}", style.SERIES_A).next_to(su, DOWN, buff=style.GAP_S)
        tiny_name.align_to(base_name, LEFT)
        short = line_through(axes, traces["short"], style.SERIES_B, 2)
        short_name = _note(f"β₂ = {f['short_beta2'].text}", style.SERIES_B).next_to(tiny_name, DOWN, buff=style.GAP_S)
        short_name.align_to(base_name, LEFT)
        return {
            "axes": axes,
            "ticks": ticks,
            "names": names,
            "closed": closed,
            "closed_name": closed_name,
            "base": base,
            "base_name": base_name,
            "band": band,
            "band_name": band_name,
            "su": su,
            "tiny": tiny,
            "tiny_name": tiny_name,
            "short": short,
            "short_name": short_name,
        }

    def _windows(self) -> dict[str, Mobject]:
        """β₂'s job: how many steps the average remembers, 1/(1 − β), as bars on a log scale."""
        f = self.facts
        head = style.zh("β₁ 管每步迈多大，β₂ 管记多久", size=style.LABEL_SIZE)
        head.move_to((self.LEFT_X, 1.05, 0), aligned_edge=LEFT)
        bars, labels = VGroup(), VGroup()
        per_decade = 0.9
        for i, key in enumerate(("short", "mid", "long")):
            y = 0.35 - 0.6 * i
            beta = _note(f"β = {f[f'beta_{key}'].text}", style.TEXT, style.LABEL_SIZE)
            beta.move_to((self.LEFT_X, y, 0), aligned_edge=LEFT)
            length = per_decade * np.log10(f[f"window_{key}"].value)
            bar = widgets.bar(length, 0.3, style.SERIES_A)
            bar.move_to((self.LEFT_X + 1.7, y, 0), aligned_edge=LEFT)
            steps = _note(f"{f[f'window_{key}'].text} 步", style.SERIES_A, style.LABEL_SIZE).next_to(
                bar, RIGHT, buff=style.GAP_M
            )
            bars.add(bar)
            labels.add(beta, steps)
        return {"head": head, "bars": bars, "labels": labels}


def _matrix(rows, color: str = style.TEXT, size: float = style.MATH_LABEL_SIZE) -> Mobject:
    """A small matrix set in Typst from a fact's entries (already formatted in tools)."""
    return style.math("mat(" + "; ".join(", ".join(row) for row in rows) + ")", size=size, color=color)


# -- muon ---------------------------------------------------------------------------------
class Muon(LectureScene):
    """Ⓐ msign on a general matrix, a diagonal one and a column; Ⓑ the trace it maximises; Ⓒ the circle,
    the square and the spectral norm; Ⓓ Newton–Schulz, run for real, and what it costs."""

    COLUMNS_X = (-4.6, 0.0, 4.6)  # Ⓐ's three cases, Ⓒ's three rulers
    INPUT_Y, OUTPUT_Y, NOTE_Y = 0.65, -1.35, -2.3
    RULER_Y, RULER_RADIUS = 0.55, 1.05
    CELL = 0.42  # a cell of Ⓒ's matrix G
    CELL_GAP = 0.06  # between G's cells
    HISTOGRAM_CENTRE = np.array((0.0, -0.35, 0))
    SPECTRUM_CENTRE = np.array((-1.5, 1.5, 0))

    def construct(self) -> None:
        self.show_title()
        cases = self._cases()
        with self.narrate("muon_idea") as beat:
            self.play(FadeIn(cases[0]["head"]), FadeIn(cases[0]["input"], shift=0.2 * DOWN), run_time=beat.share(0.4))

        svd = style.math('M = U Sigma V^T quad arrow.r.double quad "msign"(M) = U V^T', size=style.MATH_LABEL_SIZE)
        svd.move_to((0, 2.45, 0))
        with self.narrate("muon_svd") as beat:
            self.play(Write(svd), run_time=beat.share(0.6))

        def finish_case(case) -> list:
            return [GrowArrow(case["arrow"]), FadeIn(case["output"], shift=0.2 * DOWN), FadeIn(case["note"])]

        with self.narrate("muon_general") as beat:
            self.play(*finish_case(cases[0]), run_time=beat.share(0.6))

        middle_box = SurroundingRectangle(
            VGroup(*cases[1].values()), color=style.HIGHLIGHT, buff=style.GAP_SM, corner_radius=0.1
        )
        with self.narrate("muon_diagonal") as beat:
            self.play(FadeIn(cases[1]["head"]), FadeIn(cases[1]["input"], shift=0.2 * DOWN), run_time=beat.share(0.15))
            self.play(*finish_case(cases[1]), run_time=beat.share(0.2))
            self.play(Create(middle_box), run_time=beat.share(0.2))
            self.play(FadeIn(cases[2]["head"]), FadeIn(cases[2]["input"], shift=0.2 * DOWN), run_time=beat.share(0.15))
            self.play(*finish_case(cases[2]), run_time=beat.share(0.2))

        panel_a = VGroup(svd, middle_box, *(m for case in cases for m in case.values()))
        trace = self._trace()
        with self.narrate("muon_trace") as beat:
            self.play(FadeOut(panel_a), run_time=beat.share(0.2))
            self.play(Write(trace["question"]), FadeIn(trace["given"]), run_time=beat.share(0.4))
            self.play(Create(trace["axes"]), FadeIn(trace["x_name"]), run_time=beat.share(0.2))

        with self.narrate("muon_trace_answer") as beat:
            self.play(
                LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in trace["bars"]), lag_ratio=0.05),
                run_time=beat.share(0.35),
            )
            self.play(Create(trace["rival"]), FadeIn(trace["rival_name"]), run_time=beat.share(0.2))
            self.play(GrowArrow(trace["best"]), FadeIn(trace["best_name"]), run_time=beat.share(0.3))

        rulers = self._rulers()
        with self.narrate("muon_norms") as beat:
            self.play(FadeOut(VGroup(*trace.values())), run_time=beat.share(0.1))
            for key in ("circle", "square", "matrix"):
                self.play(
                    FadeIn(rulers[key]["shape"]),
                    GrowArrow(rulers[key]["arrow"]),
                    FadeIn(rulers[key]["note"]),
                    run_time=beat.share(0.27),
                )

        spectrum = self._spectrum()
        with self.narrate("muon_ns") as beat:
            self.play(
                FadeOut(VGroup(*(m for ruler in rulers.values() for m in ruler.values()))), run_time=beat.share(0.1)
            )
            self.play(
                Create(spectrum["axes"]),
                FadeIn(spectrum["one"], spectrum["names"]),
                GrowFromEdge(spectrum["bars"][0], DOWN),
                FadeIn(spectrum["round"][0]),
                run_time=beat.share(0.2),
            )
            steps = len(spectrum["bars"]) - 1
            for k in range(1, steps + 1):
                self.play(
                    Transform(spectrum["bars"][0], spectrum["bars"][k]),
                    Transform(spectrum["round"][0], spectrum["round"][k]),
                    run_time=beat.share(0.5 / steps),
                )
            self.play(FadeIn(spectrum["range"]), run_time=beat.share(0.15))

        cost = self._cost()
        with self.narrate("muon_cost") as beat:
            self.play(GrowFromEdge(cost["step"], LEFT), FadeIn(cost["step_name"]), run_time=beat.share(0.3))
            self.play(FadeIn(cost["sliver"]), FadeIn(cost["sliver_name"]), run_time=beat.share(0.3))
            self.play(FadeIn(cost["estimate"]), run_time=beat.share(0.25))

        wallclock = _note(
            "FLOP 少 ≠ 墙钟时间短：一串互相依赖的小矩阵乘，在目标配置上实测", style.HIGHLIGHT, style.LABEL_SIZE
        ).next_to(cost["estimate"], DOWN, buff=style.GAP_M)
        wallclock.align_to(cost["estimate"], LEFT)
        with self.narrate("muon_wallclock") as beat:
            self.play(FadeIn(wallclock, shift=0.2 * UP), run_time=beat.share(0.35))

        caveats = style.caption_stack(
            "本图不比收敛快慢：没有对照实测",
            "DeepSeek-V4 用 Muon 训练：页面所述，未核实",
            size=style.LABEL_SIZE,
            color=style.MUTED,
        )
        caveats.move_to(wallclock, aligned_edge=LEFT + UP)
        with self.narrate("muon_no_curves") as beat:
            self.play(FadeOut(wallclock), run_time=beat.share(0.1))
            self.play(FadeIn(caveats[0]), run_time=beat.share(0.3))
            self.play(FadeIn(caveats[1]), run_time=beat.share(0.3))
        self.finish()

    def _cases(self) -> list[dict[str, Mobject]]:
        """Ⓐ: a general matrix, a diagonal one and a column vector, each above its msign."""
        f = self.facts
        specs = (
            ("一般矩阵（动量 M）", "general", f"正交：长短都成 {f['one'].text}"),
            ("对角矩阵", "diagonal", "只剩正负号：逐元素取符号"),
            ("一列向量", "vector", "除以自己的长度"),
        )
        cases = []
        for x, (head, key, note) in zip(self.COLUMNS_X, specs):
            matrix = _matrix(f[key].value).move_to((x, self.INPUT_Y, 0))
            result = _matrix(f[f"{key}_sign"].value, style.HIGHLIGHT).move_to((x, self.OUTPUT_Y, 0))
            arrow = Arrow(matrix.get_bottom(), result.get_top(), buff=0.12, color=style.MUTED, stroke_width=4)
            cases.append(
                {
                    "head": _note(head, style.TEXT, style.LABEL_SIZE).move_to((x, 1.65, 0)),
                    "input": matrix,
                    "arrow": arrow,
                    "output": result,
                    "note": _note(note, style.HIGHLIGHT, style.LABEL_SIZE).move_to((x, self.NOTE_Y, 0)),
                }
            )
        return cases

    def _trace(self) -> dict[str, Mobject]:
        """Ⓑ: tr(Gᵀ O) for random semi-orthogonal O (a histogram) against O = msign(G)."""
        f = self.facts
        question = style.math("max_(norm(O)_2 <= 1) tr(G^T O)", size=style.MATH_SIZE).move_to((-3.2, 2.3, 0))
        given = _note(
            f"G：随机 {f['trace_shape'].text} 梯度；O：随机半正交，试 {f['samples'].text} 个",
            style.TEXT,
            style.LABEL_SIZE,
        ).next_to(question, RIGHT, buff=style.GAP_L)
        edges, counts = f["rival_edges"].value, f["rival_counts"].value
        top = f["nuclear"].value * 1.04
        axes = sketch_axes(
            [edges[0], top, top - edges[0]], [0, counts.max() * 1.15, counts.max()], 11.0, 3.0, corner=True
        ).move_to(self.HISTOGRAM_CENTRE)
        bars = VGroup()
        for left, right, count in zip(edges[:-1], edges[1:], counts):
            if count:
                bar = widgets.bar(
                    axes.c2p(right, 0)[0] - axes.c2p(left, 0)[0],
                    axes.c2p(0, count)[1] - axes.c2p(0, 0)[1],
                    style.SCHEMATIC,
                    stroke_width=1,
                    stroke_color=style.BACKGROUND,
                )
                bars.add(bar.move_to(axes.c2p(left, 0), aligned_edge=LEFT + DOWN))
        x_name = _note("tr(GᵀO)：沿 G 走了多远").next_to(axes.x_axis, DOWN, buff=style.GAP_M)
        rival_x, best_x = f["rival_best"].value, f["nuclear"].value
        rival = DashedLine(
            axes.c2p(rival_x, 0), axes.c2p(rival_x, counts.max() * 1.1), color=style.TEXT, stroke_width=2
        )
        rival_name = _note(f"随机里最好：{f['rival_best'].text}", style.TEXT, style.LABEL_SIZE)
        rival_name.next_to(rival.get_top(), LEFT, buff=style.GAP_S).shift(0.3 * DOWN)
        best = Arrow(
            axes.c2p(best_x, counts.max() * 1.1),
            axes.c2p(best_x, 0),
            buff=style.FLUSH,
            color=style.HIGHLIGHT,
            stroke_width=6,
        )
        best_name = _note(f"msign(G)：{f['trace_best'].text} ＝ 核范数 ‖G‖*", style.HIGHLIGHT, style.LABEL_SIZE)
        best_name.next_to(best, UP, buff=style.GAP_S).align_to(best, RIGHT)
        return {
            "question": question,
            "given": given,
            "axes": axes,
            "bars": bars,
            "x_name": x_name,
            "rival": rival,
            "rival_name": rival_name,
            "best": best,
            "best_name": best_name,
        }

    def _rulers(self) -> dict[str, dict[str, Mobject]]:
        """Ⓒ: the steepest step by a circle, by a square (the gradient_descent_ball callback), by the spectral norm."""
        f = self.facts
        g = f["gradient_2d"].value
        rulers = {}
        specs = (
            ("circle", "用圆量一步", "−g/‖g‖ ＝ −msign(一列 g)", f["steepest_circle"].value),
            ("square", "用方框量一步", "−sign(g) ＝ −msign(diag g)", f["steepest_square"].value),
            ("matrix", "用谱范数量一步", "−msign(G)：Muon", None),
        )
        for x, (key, head, formula, direction) in zip(self.COLUMNS_X, specs):
            centre = np.array((x, self.RULER_Y, 0))
            if direction is None:
                cells = VGroup(
                    *(
                        widgets.block(
                            self.CELL, self.CELL, style.SCHEMATIC, opacity=style.FILL_FAINT, stroke_color=style.TEXT
                        )
                        for _ in range(12)
                    )
                )
                shape = cells.arrange_in_grid(rows=4, cols=3, buff=self.CELL_GAP).move_to(centre)
                arrow = Arrow(
                    centre + 0.9 * LEFT, centre + 0.9 * RIGHT, buff=style.FLUSH, color=style.HIGHLIGHT, stroke_width=6
                ).next_to(shape, DOWN, buff=style.GAP_M)
                shape = VGroup(shape, _note("G", style.TEXT, style.LABEL_SIZE).next_to(shape, LEFT, buff=style.GAP_S))
            else:
                ball = norm_ball(key, centre, self.RULER_RADIUS)
                arrow, level = steepest_step(centre, self.RULER_RADIUS, direction, g, style.HIGHLIGHT)
                shape = VGroup(ball, level)
            note = VGroup(_note(head, style.TEXT, style.LABEL_SIZE), _note(formula, style.HIGHLIGHT, style.LABEL_SIZE))
            note.arrange(DOWN, buff=style.GAP_S).move_to((x, self.NOTE_Y + 0.25, 0))
            rulers[key] = {"shape": shape, "arrow": arrow, "note": note}
        return rulers

    def _spectrum(self) -> dict[str, Mobject]:
        """Ⓓ: the singular values of one random matrix through the Newton–Schulz rounds."""
        f = self.facts
        spectra, rounds = f["spectra"].value, f["ns_rounds"].value
        axes = sketch_axes([0, len(spectra[0]), 1], [0, 1.4, 1], 6.0, 1.7, corner=True).move_to(self.SPECTRUM_CENTRE)
        one = DashedLine(axes.c2p(0, 1), axes.c2p(len(spectra[0]), 1), color=style.HIGHLIGHT, stroke_width=2)
        names = VGroup(
            _note(f"{f['one'].text}", style.HIGHLIGHT).next_to(one, LEFT, buff=style.GAP_S),
            _note("奇异值，从大到小").next_to(axes, DOWN, buff=style.GAP_S),
        )
        width = axes.c2p(1, 0)[0] - axes.c2p(0, 0)[0]

        def bars_for(values) -> VGroup:
            return VGroup(
                *(
                    widgets.bar(0.7 * width, max(1e-3, axes.c2p(0, v)[1] - axes.c2p(0, 0)[1]), style.SERIES_A).move_to(
                        axes.c2p(i + 0.5, 0), aligned_edge=DOWN
                    )
                    for i, v in enumerate(values)
                )
            )

        bars = [bars_for(values) for values in spectra]
        labels = [
            _note(text, style.TEXT, style.LABEL_SIZE).next_to(axes, RIGHT, buff=style.GAP_L).shift(0.6 * UP)
            for text in rounds
        ]
        span = (
            _note(
                f"{f['ns_steps'].text} 轮后：{f['sv_low'].text} – {f['sv_high'].text}",
                style.HIGHLIGHT,
                style.LABEL_SIZE,
            )
            .next_to(labels[0], DOWN, buff=style.GAP_M)
            .align_to(labels[0], LEFT)
        )
        return {"axes": axes, "one": one, "names": names, "bars": bars, "round": labels, "range": span}

    def _cost(self) -> dict[str, Mobject]:
        """Ⓓ: one step's forward and backward FLOPs as a bar, the Newton–Schulz sliver to scale."""
        f = self.facts
        length = 7.0
        step = widgets.bar(length, 0.35, style.COMPUTE, opacity=style.FILL_SOFT)  # FLOPs: compute
        step.move_to((-6.3, -0.45, 0), aligned_edge=LEFT)
        step_name = _note("一步的前向 + 反向", style.TEXT).next_to(step, UP, buff=style.GAP_S).align_to(step, LEFT)
        sliver = widgets.bar(max(0.03, length * f["overhead"].value), 0.35, style.HIGHLIGHT).next_to(
            step, RIGHT, buff=style.FLUSH
        )
        sliver_name = _note(f"Newton–Schulz ≈ T·m/B ＝ {f['overhead'].text}", style.HIGHLIGHT).next_to(
            sliver, RIGHT, buff=style.GAP_S
        )
        estimate = _note(
            f"作者估算：< {f['limit'].text} 的 FLOP（{f['model'].text}：m ＝ {f['width'].text}，"
            f"B ＝ {f['batch_tokens'].text} token，T ＝ {f['ns_steps'].text}）",
            style.TEXT,
            style.LABEL_SIZE,
        )
        estimate.next_to(step, DOWN, buff=style.GAP_M).align_to(step, LEFT)
        return {
            "step": step,
            "step_name": step_name,
            "sliver": sliver,
            "sliver_name": sliver_name,
            "estimate": estimate,
        }


# -- weight_update_ratio ------------------------------------------------------------------
class WeightUpdateRatio(LectureScene):
    """The 1e-3 ruler on our own tiny MLP: a swept learning rate, three runs, and the NaN multiplier
    found by bisection (not the page's ×2.1, which needs the page's data)."""

    PLOT_CENTRE = np.array((-2.3, -0.1, 0))
    NET_CENTRE = np.array((-4.2, -0.5, 0))
    NODE_PITCH = 0.19
    LINE_Y = 0.3  # the multiplier's number line

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        ruler = VGroup(
            style.math("norm(Delta W) / norm(W)", size=style.MATH_SIZE),
            style.zh(f"≈ {f['ruler'].text}", size=style.BODY_SIZE),
        ).arrange(RIGHT, buff=style.GAP_M)
        ruler.move_to((0, 2.1, 0))
        with self.narrate("ratio_ruler") as beat:
            self.play(Write(ruler), run_time=beat.share(0.5))

        notes = style.caption_stack(
            "ΔW 是这一步的更新（学习率 × 梯度），不是梯度",
            "只查离谱，不找最优",
            size=style.LABEL_SIZE,
            color=style.MUTED,
        )
        notes.next_to(ruler, DOWN, buff=style.GAP_L)
        with self.narrate("ratio_updates") as beat:
            self.play(FadeIn(notes, shift=0.2 * UP), run_time=beat.share(0.4))

        net = self._network()
        shape = f"{f['n_in'].text} → {f['n_hidden'].text} → {f['n_out'].text}"
        spec = style.caption_stack(
            f"tanh MLP {shape}，numpy 手写前向与反向",
            f"固定种子，{f['samples'].text} 个样本，每次 {f['steps'].text} 步",
            size=style.LABEL_SIZE,
        )
        spec.next_to(net["wires"], RIGHT, buff=0.8)
        with self.narrate("ratio_setup") as beat:
            self.play(FadeOut(notes), run_time=beat.share(0.1))
            self.play(LaggedStart(Create(net["wires"]), FadeIn(net["nodes"]), lag_ratio=0.3), run_time=beat.share(0.4))
            self.play(FadeIn(spec, shift=0.2 * LEFT), run_time=beat.share(0.3))

        sweep = self._sweep()
        with self.narrate("ratio_sweep") as beat:
            self.play(FadeOut(ruler, net["wires"], net["nodes"], spec), run_time=beat.share(0.1))
            self.play(Create(sweep["axes"]), FadeIn(sweep["ticks"], sweep["names"]), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(dot, scale=2) for dot in sweep["dots"]), lag_ratio=0.15), run_time=beat.share(0.6)
            )

        with self.narrate("ratio_pick") as beat:
            self.play(Create(sweep["ruler"]), FadeIn(sweep["ruler_name"]), run_time=beat.share(0.25))
            self.play(Create(sweep["ring"]), FadeIn(sweep["pick"]), run_time=beat.share(0.3))
            self.play(FadeIn(sweep["failed"], scale=1.5), FadeIn(sweep["failed_name"]), run_time=beat.share(0.25))

        runs = self._runs()
        with self.narrate("ratio_three") as beat:
            self.play(FadeOut(VGroup(*sweep.values())), run_time=beat.share(0.1))
            self.play(
                Create(runs["axes"]),
                FadeIn(runs["ticks"], runs["names"], runs["ruler"], runs["legend_head"]),
                run_time=beat.share(0.2),
            )
            for key in ("small", "right", "large"):
                self.play(Create(runs[key]), FadeIn(runs[f"{key}_name"]), run_time=beat.share(0.2))

        line = self._multiplier_line()
        with self.narrate("ratio_bisect") as beat:
            self.play(FadeOut(VGroup(*runs.values())), run_time=beat.share(0.1))
            self.play(Create(line["line"]), FadeIn(line["ticks"], line["name"]), run_time=beat.share(0.15))
            self.play(FadeIn(line["bracket"][0]), run_time=beat.share(0.1))
            steps = len(line["bracket"]) - 1
            for k in range(1, steps + 1):
                self.play(Transform(line["bracket"][0], line["bracket"][k]), run_time=beat.share(0.45 / steps))
            self.play(FadeIn(line["found"], shift=0.2 * DOWN), run_time=beat.share(0.15))

        with self.narrate("ratio_page") as beat:
            self.play(Create(line["page"]), FadeIn(line["page_name"]), run_time=beat.share(0.25))
            self.play(FadeIn(line["page_fine"], shift=0.2 * UP), run_time=beat.share(0.25))
            self.play(FadeIn(line["caveat"]), run_time=beat.share(0.25))
        self.finish()

    def _network(self) -> dict[str, VGroup]:
        """8 → 16 → 4: nodes in three columns, every wire drawn thin."""
        f = self.facts
        sizes = (f["n_in"].value, f["n_hidden"].value, f["n_out"].value)
        columns = []
        for i, n in enumerate(sizes):
            x = self.NET_CENTRE[0] + 1.4 * (i - 1)
            ys = (np.arange(n) - (n - 1) / 2) * self.NODE_PITCH
            columns.append([np.array((x, self.NET_CENTRE[1] + y, 0)) for y in ys])
        nodes = VGroup(*(Dot(p, radius=0.07, color=style.FORWARD) for column in columns for p in column))
        wires = VGroup(
            *(
                Line(a, b, stroke_width=0.6, color=style.MUTED)
                for left, right in itertools.pairwise(columns)
                for a in left
                for b in right
            )
        )
        return {"nodes": nodes, "wires": wires}

    def _sweep(self) -> dict[str, Mobject]:
        """The sweep: each learning rate's steady ratio, the ruler, the pick, the runs that overflowed."""
        f = self.facts
        axes = sketch_axes([-4, 0, 1], [-5, -1, 1], 7.4, 4.2, ticks=True, corner=True).move_to(self.PLOT_CENTRE)
        ticks = tick_labels(axes, f["lr_ticks"].value, f["ratio_ticks"].value)
        names = VGroup(
            _note("学习率").next_to(axes.x_axis.get_right(), UP, buff=style.GAP_S),
            _note(f"稳定后的 ‖ΔW‖/‖W‖（后 {f['steady_last'].text} 步）")
            .next_to(axes, UP, buff=style.GAP_S)
            .align_to(axes, LEFT),
        )
        dots = VGroup(*(Dot(axes.c2p(x, y), radius=0.06, color=style.DATA) for x, y in f["sweep"].value))
        ruler = DashedLine(axes.c2p(-4, -3), axes.c2p(0, -3), color=style.HIGHLIGHT, stroke_width=2)
        ruler_name = _note(f"尺子 {f['ruler'].text}", style.HIGHLIGHT).next_to(ruler, RIGHT, buff=style.GAP_S)
        chosen = axes.c2p(*f["chosen"].value)
        ring = Dot(chosen, radius=0.13, color=style.VERDICT_GOOD).set_fill(opacity=0).set_stroke(style.VERDICT_GOOD, 3)
        pick = _note(f"学习率 {f['lr'].text} → {f['ratio'].text}", style.VERDICT_GOOD, style.LABEL_SIZE)
        pick.next_to(chosen, DOWN + RIGHT, buff=style.GAP_M)
        failed = VGroup(
            *(Dot(axes.c2p(x, -1.25), radius=0.06, color=style.VERDICT_BAD) for x in f["sweep_failed"].value)
        )
        failed_name = _note("NaN", style.VERDICT_BAD, style.LABEL_SIZE).next_to(failed, UP, buff=style.GAP_S)
        return {
            "axes": axes,
            "ticks": ticks,
            "names": names,
            "dots": dots,
            "ruler": ruler,
            "ruler_name": ruler_name,
            "ring": ring,
            "pick": pick,
            "failed": failed,
            "failed_name": failed_name,
        }

    def _runs(self) -> dict[str, Mobject]:
        """Three runs, step by step: a tenth of the swept lr, the swept lr, ten times it."""
        f = self.facts
        steps = f["steps"].value
        axes = sketch_axes([0, steps, steps // 2], [-5, -1, 1], 7.4, 4.2, ticks=True, corner=True)
        axes.move_to(self.PLOT_CENTRE)
        ticks = tick_labels(axes, f["step_ticks"].value, f["ratio_ticks"].value)
        names = VGroup(
            _note("步数").next_to(axes.x_axis.get_right(), UP, buff=style.GAP_S),
            _note("每一步的 ‖ΔW‖/‖W‖").next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT),
        )
        ruler = DashedLine(axes.c2p(0, -3), axes.c2p(steps, -3), color=style.HIGHLIGHT, stroke_width=2)
        runs = {"axes": axes, "ticks": ticks, "names": names, "ruler": ruler}
        curves = f["curves"].value
        for key, colour in (("small", style.SERIES_A), ("right", style.VERDICT_GOOD), ("large", style.VERDICT_BAD)):
            runs[key] = line_through(axes, curves[key], colour, 2)
            lr, ratio = (f["lr"], f["ratio"]) if key == "right" else (f[f"lr_{key}"], f[f"ratio_{key}"])
            runs[f"{key}_name"] = VGroup(
                Line(ORIGIN, 0.4 * RIGHT, color=colour, stroke_width=4), _note(f"{lr.text} → {ratio.text}", colour)
            )
            runs[f"{key}_name"].arrange(RIGHT, buff=style.GAP_M)
        runs["legend_head"] = _note("学习率 → 稳定后的比值")
        legend = VGroup(runs["legend_head"], *(runs[f"{key}_name"] for key in ("large", "right", "small")))
        legend.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M).next_to(axes, RIGHT, buff=0.4).align_to(axes, UP)
        return runs

    def _multiplier_line(self) -> dict:
        """A log number line of lr multipliers; the bisection's bracket shrinking; the page's ×2.1 on it."""
        f = self.facts
        left, right = -5.0, 5.0

        def at(log_k) -> np.ndarray:
            return np.array((left + (right - left) * log_k / 3, self.LINE_Y, 0))

        line = Line(at(0), at(3), color=style.MUTED, stroke_width=3)
        ticks = VGroup()
        for e, text in f["multiplier_ticks"].value:
            ticks.add(
                Line(at(e) + 0.1 * DOWN, at(e) + 0.1 * UP, color=style.MUTED, stroke_width=2),
                _note(text).next_to(at(e), DOWN, buff=style.GAP_M),
            )
        name = _note("学习率再乘多少：绿端仍收敛，红端 NaN（二分法，每轮取中点）", style.TEXT, style.LABEL_SIZE)
        name.move_to((0, 2.2, 0))

        def bracket(lo, hi) -> VGroup:
            return VGroup(
                Line(at(lo), at(hi), color=style.HIGHLIGHT, stroke_width=10),
                Dot(at(lo), radius=0.1, color=style.VERDICT_GOOD),
                Dot(at(hi), radius=0.1, color=style.VERDICT_BAD),
            )

        brackets = [bracket(lo, hi) for lo, hi in f["brackets"].value]
        hi = f["brackets"].value[-1][1]
        found = _note(f"{f['halvings'].text} 轮后：{f['multiplier'].text} 就 NaN", style.VERDICT_BAD, style.BODY_SIZE)
        found.next_to(at(hi), UP, buff=style.GAP_L)
        page_at = at(np.log10(f["page_multiplier"].value))
        page = Line(page_at + 0.35 * DOWN, page_at + 0.35 * UP, color=style.TEXT, stroke_width=4)
        page_name = _note(f"页面：{f['page_multiplier'].text} 就 NaN", style.TEXT, style.LABEL_SIZE)
        page_name.next_to(page, UP, buff=style.GAP_S)
        page_fine = _note(f"我们的设置：{f['page_multiplier'].text} 仍收敛", style.VERDICT_GOOD, style.LABEL_SIZE)
        page_fine.next_to(page, DOWN, buff=0.55)
        caveat = _note(
            f"页面没给数据、损失和初始化：{f['page_multiplier'].text} 无法复现", style.MUTED, style.LABEL_SIZE
        )
        caveat.move_to((0, -1.7, 0))
        return {
            "line": line,
            "ticks": ticks,
            "name": name,
            "bracket": brackets,
            "found": found,
            "page": page,
            "page_name": page_name,
            "page_fine": page_fine,
            "caveat": caveat,
        }


# -- lr_schedules -------------------------------------------------------------------------
class LrSchedules(LectureScene):
    """GPT-3's cosine against V3's warmup-stable-decay on one normalised axis; the 10% line across the whole
    plot, V3's last step below it; the warmups under a magnifier; Ⓑ what each school makes you decide."""

    PLOT_CENTRE = np.array((-2.3, 0.4, 0))
    LEGEND_X = 2.2  # the right-hand column: the three words, the legend, the magnifier
    ZOOM_CENTRE = np.array((3.9, -0.85, 0))
    TABLE = (Column(-6.5, LEFT), Column(-3.7, LEFT), Column(1.3, LEFT))  # question, cosine, WSD
    TABLE_TOP, ROW_PITCH = 1.7, 0.95
    UNDER_AXIS = 0.4  # an x axis to the note under it, clear of the tick labels
    LEGEND_LINE = 0.06  # a schedule's name to its total, one legend entry

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        three = style.zh("升上去 · 稳住 · 降下来", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        three.move_to((self.LEGEND_X, 2.55, 0), aligned_edge=LEFT)
        with self.narrate("sched_three") as beat:
            self.play(Write(three), run_time=beat.share(0.6))

        axes = sketch_axes([0, 1, 0.5], [0, 1.1, 1], 7.2, 3.8, ticks=True, corner=True).move_to(self.PLOT_CENTRE)
        ticks = tick_labels(axes, f["progress_ticks"].value, f["level_ticks"].value)
        names = VGroup(
            _note("训练进度（占各自总 token）").next_to(axes.x_axis, DOWN, buff=self.UNDER_AXIS),
            _note("÷ 各自的峰值").next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT),
        )
        legend = VGroup(
            *(
                VGroup(_note(name, colour, style.LABEL_SIZE), _note(f"共 {total.text} token")).arrange(
                    DOWN, aligned_edge=LEFT, buff=self.LEGEND_LINE
                )
                for name, colour, total in (
                    ("GPT-3：余弦", style.SERIES_A, f["gpt3_total"]),
                    ("DeepSeek-V3：WSD", style.SERIES_B, f["v3_total"]),
                )
            )
        )
        legend.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M).next_to(three, DOWN, buff=style.GAP_L)
        legend.align_to(three, LEFT)
        no_absolute = _note(f"不画绝对学习率：峰值差 {f['peak_ratio'].text}", style.TEXT)
        no_absolute.next_to(names[0], DOWN, buff=style.GAP_S)
        with self.narrate("sched_axes") as beat:
            self.play(Create(axes), FadeIn(ticks, names), run_time=beat.share(0.35))
            self.play(FadeIn(no_absolute), run_time=beat.share(0.3))

        gpt3 = line_through(axes, f["gpt3_curve"].value, style.SERIES_A, 4)
        with self.narrate("sched_gpt3") as beat:
            self.play(FadeIn(legend[0]), run_time=beat.share(0.15))
            self.play(Create(gpt3), run_time=beat.share(0.7))

        v3 = line_through(axes, f["v3_curve"].value, style.SERIES_B, 4)
        stable = f["v3_stable_end"]
        stable_mark = DashedLine(
            axes.c2p(stable.value, 0), axes.c2p(stable.value, 1), color=style.SERIES_B, stroke_width=2
        )
        stable_name = _note(f"稳到 {stable.text}", style.SERIES_B).next_to(
            axes.c2p(stable.value, 1), UP, buff=style.GAP_S
        )
        with self.narrate("sched_v3") as beat:
            self.play(FadeIn(legend[1]), run_time=beat.share(0.15))
            self.play(Create(v3), run_time=beat.share(0.55))
            self.play(Create(stable_mark), FadeIn(stable_name), run_time=beat.share(0.2))

        zoom = self._zoom()
        with self.narrate("sched_warmup") as beat:
            self.play(Create(zoom["axes"]), FadeIn(zoom["ticks"], zoom["title"]), run_time=beat.share(0.3))
            self.play(Create(zoom["gpt3"]), FadeIn(zoom["gpt3_name"]), run_time=beat.share(0.25))
            self.play(Create(zoom["v3"]), FadeIn(zoom["v3_name"]), run_time=beat.share(0.25))

        floor = f["floor"].value
        dashed = DashedLine(axes.c2p(0, floor), axes.c2p(1, floor), color=style.HIGHLIGHT, stroke_width=3)
        with self.narrate("sched_floor") as beat:
            self.play(Create(dashed), run_time=beat.share(0.5))
            self.play(Indicate(ticks[-2], color=style.HIGHLIGHT), run_time=beat.share(0.3))

        end = f["v3_curve"].value[-1]
        dip = Dot(axes.c2p(*end), radius=0.08, color=style.SERIES_B)
        dip_name = _note(f"末段 {f['v3_last'].text}", style.SERIES_B).next_to(dip, LEFT, buff=style.GAP_S)
        with self.narrate("sched_dip") as beat:
            self.play(FadeIn(dip, scale=2), FadeIn(dip_name), run_time=beat.share(0.4))
            self.play(Indicate(dip_name, color=style.SERIES_B), run_time=beat.share(0.3))

        plot = VGroup(
            three,
            axes,
            ticks,
            names,
            legend,
            no_absolute,
            gpt3,
            v3,
            stable_mark,
            stable_name,
            dashed,
            dip,
            dip_name,
            *zoom.values(),
        )
        table = self._decisions()
        with self.narrate("sched_decide") as beat:
            self.play(FadeOut(plot), run_time=beat.share(0.1))
            self.play(FadeIn(table[0]), run_time=beat.share(0.15))
            self.play(FadeIn(table[1], shift=0.2 * RIGHT), run_time=beat.share(0.3))
            self.play(FadeIn(table[2], shift=0.2 * RIGHT), run_time=beat.share(0.3))

        report = style.zh(
            "报一个学习率，要连着 batch、曲线形状和总 token 数", size=style.BODY_SIZE, color=style.HIGHLIGHT
        ).move_to((0, self.TABLE_TOP - 3.4 * self.ROW_PITCH, 0))
        with self.narrate("sched_report") as beat:
            self.play(FadeIn(report, shift=0.2 * UP), run_time=beat.share(0.5))
        self.finish()

    def _zoom(self) -> dict[str, Mobject]:
        """The first 0.4% of training, magnified: both warmups."""
        f = self.facts
        reach = f["zoom"].value
        axes = sketch_axes([0, reach, reach], [0, 1.1, 1], 2.6, 1.2, ticks=True, corner=True).move_to(self.ZOOM_CENTRE)
        ticks = tick_labels(axes, f["zoom_ticks"].value)
        title = _note(f"放大开头 {f['zoom'].text}").next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT)
        gpt3 = line_through(axes, f["gpt3_zoom"].value, style.SERIES_A, 3)
        v3 = line_through(axes, f["v3_zoom"].value, style.SERIES_B, 3)
        gpt3_name = _note(f"GPT-3：{f['gpt3_warmup'].text}", style.SERIES_A).next_to(axes, DOWN, buff=self.UNDER_AXIS)
        gpt3_name.align_to(axes, LEFT)
        v3_name = _note(f"V3：{f['v3_warmup_steps'].text} 步 ≈ {f['v3_warmup'].text}", style.SERIES_B)
        v3_name.next_to(gpt3_name, DOWN, buff=style.GAP_S).align_to(axes, LEFT)
        return {
            "axes": axes,
            "ticks": ticks,
            "title": title,
            "gpt3": gpt3,
            "v3": v3,
            "gpt3_name": gpt3_name,
            "v3_name": v3_name,
        }

    def _decisions(self) -> list[VGroup]:
        """Ⓑ: what each school makes you decide, and when."""
        head = text_row(
            ("", "余弦（GPT-3）", "WSD（DeepSeek-V3）"),
            self.TABLE,
            self.TABLE_TOP,
            size=style.BODY_SIZE,
            color=style.MUTED,
        )
        head[1].set_color(style.SERIES_A)
        head[2].set_color(style.SERIES_B)
        rows = [
            text_row(texts, self.TABLE, self.TABLE_TOP - self.ROW_PITCH * (i + 1), size=style.LABEL_SIZE)
            for i, texts in enumerate(
                (
                    ("开训前要定什么", "总长度：余弦绑着总 token 数", "峰值和 warmup"),
                    ("什么时候降", "开训那一刻就定了", "训到半路再定：稳定段可续"),
                )
            )
        ]
        for row in rows:
            row[0].set_color(style.MUTED)
        return [head, *rows]


# -- lr_numbers ---------------------------------------------------------------------------
class LrNumbers(LectureScene):
    """GPT-3 Table 2.1 (restored from the paper), V3 against it, the interpolation that does not rescue the
    comparison, and the batch-size ceiling η* ≈ η_max/(1 + B_noise/B)."""

    TABLE = (Column(-6.75, LEFT), Column(-3.2, RIGHT), Column(-0.8, RIGHT), Column(1.3, RIGHT))
    BAR_X, BAR_UNIT = 1.5, 4000.0  # bars start here; frame units per unit of lr
    TABLE_TOP, ROW_PITCH = 2.45, 0.46
    NOTES_X = 2.9
    CEILING_CENTRE = np.array((-1.3, 0.6, 0))

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        rows = self._gpt3_table()
        with self.narrate("num_table") as beat:
            self.play(FadeIn(rows["head"]), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(FadeIn(row, shift=0.2 * RIGHT) for row in rows["rows"]), lag_ratio=0.3),
                run_time=beat.share(0.7),
            )

        with self.narrate("num_trend") as beat:
            self.play(
                LaggedStart(*(GrowFromEdge(bar, LEFT) for bar in rows["bars"]), lag_ratio=0.2), run_time=beat.share(0.6)
            )
            self.play(
                Indicate(VGroup(*(row[2] for row in rows["rows"])), color=style.HIGHLIGHT), run_time=beat.share(0.3)
            )

        spans = VGroup(
            _note(f"规模差 {f['scale'].text}", style.TEXT, style.LABEL_SIZE),
            _note(f"学习率只差 {f['lr_span'].text}", style.HIGHLIGHT, style.LABEL_SIZE),
        )
        spans.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S).move_to((self.NOTES_X, 1.1, 0), aligned_edge=LEFT)
        with self.narrate("num_mild") as beat:
            self.play(
                FadeIn(spans[0]), Indicate(VGroup(rows["rows"][0][1], rows["rows"][-1][1])), run_time=beat.share(0.4)
            )
            self.play(FadeIn(spans[1]), Indicate(VGroup(rows["bars"][0], rows["bars"][-1])), run_time=beat.share(0.4))

        lost = _note(f"数值取自 GPT-3 论文表 2.1（页面正文丢了）；页面另几处写成 {f['page_sizes'].text} 档")
        lost.next_to(rows["rows"][-1], DOWN, buff=style.GAP_M).align_to(rows["rows"][-1], LEFT)
        with self.narrate("num_lost") as beat:
            self.play(FadeIn(lost, shift=0.2 * UP), run_time=beat.share(0.4))

        v3_row = text_row(
            ("DeepSeek-V3", f["v3_params"].text, "", f["v3_lr"].text),
            self.TABLE,
            self.TABLE_TOP - self.ROW_PITCH * 10.4,
            color=style.SERIES_B,
        )
        v3_bar = self._lr_bar(f["v3_lr"].value, v3_row.get_y(), style.SERIES_B)
        v3_note = VGroup(
            _note(f"比 175B 高 {f['peak_ratio'].text}", style.SERIES_B, style.LABEL_SIZE),
            _note(f"batch {f['v3_batch_first'].text} → {f['v3_batch_last'].text} 条序列", style.SERIES_B),
        )
        v3_note.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S).move_to((self.NOTES_X, 0.0, 0), aligned_edge=LEFT)
        with self.narrate("num_v3") as beat:
            self.play(FadeIn(v3_row, shift=0.2 * RIGHT), GrowFromEdge(v3_bar, LEFT), run_time=beat.share(0.45))
            self.play(FadeIn(v3_note), run_time=beat.share(0.3))

        rescue = VGroup(
            _note(f"按激活 {f['v3_active'].text} 插值：{f['interpolated'].text}", style.TEXT),
            _note(f"V3 仍是它的 {f['gap'].text}", style.SERIES_B, style.LABEL_SIZE),
            _note(f"页面取整成 {f['page_interpolated'].text}：{f['page_gap'].text}"),
        )
        rescue.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S).move_to((self.NOTES_X, -1.05, 0), aligned_edge=LEFT)
        with self.narrate("num_active") as beat:
            self.play(Indicate(VGroup(rows["rows"][-2], rows["rows"][-1]), color=style.TEXT), run_time=beat.share(0.25))
            self.play(FadeIn(rescue[0]), run_time=beat.share(0.25))
            self.play(FadeIn(rescue[1]), FadeIn(rescue[2]), run_time=beat.share(0.3))

        lesson = style.caption_stack(
            "一条趋势，只在", "产生它的那次实验里有效", size=style.LABEL_SIZE, color=style.HIGHLIGHT
        )
        lesson.move_to((self.NOTES_X, 0.2, 0), aligned_edge=LEFT)
        with self.narrate("num_lesson") as beat:
            self.play(FadeOut(spans, v3_note, rescue), run_time=beat.share(0.2))
            self.play(FadeIn(lesson, shift=0.2 * UP), run_time=beat.share(0.4))

        table = VGroup(rows["head"], *rows["rows"], rows["bars"], lost, v3_row, v3_bar, lesson)
        ceiling = self._ceiling()
        with self.narrate("num_ceiling") as beat:
            self.play(FadeOut(table), run_time=beat.share(0.1))
            self.play(Write(ceiling["formula"]), run_time=beat.share(0.25))
            self.play(Create(ceiling["axes"]), FadeIn(ceiling["ticks"], ceiling["names"]), run_time=beat.share(0.15))
            self.play(
                Create(ceiling["curve"]), Create(ceiling["top"]), FadeIn(ceiling["top_name"]), run_time=beat.share(0.25)
            )
            self.play(
                LaggedStart(*(FadeIn(p, scale=1.5) for p in ceiling["points"]), lag_ratio=0.3), run_time=beat.share(0.2)
            )

        verdicts = style.caption_stack(
            "batch 翻倍，学习率并不跟着翻倍",
            "Adam 下甚至可能往回降（Surge 现象，有前提）",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        verdicts[1].set_color(style.MUTED)
        verdicts.next_to(ceiling["ticks"], DOWN, buff=style.GAP_L).align_to(ceiling["axes"], LEFT)
        with self.narrate("num_not_double") as beat:
            self.play(FadeIn(verdicts[0], shift=0.2 * UP), run_time=beat.share(0.3))
            self.play(FadeIn(verdicts[1], shift=0.2 * UP), run_time=beat.share(0.3))
        self.finish()

    def _lr_bar(self, lr: float, y: float, color: str) -> Rectangle:
        """A peak learning rate as a bar to scale, on its row's height."""
        return widgets.bar(lr * self.BAR_UNIT, 0.28, color).move_to((self.BAR_X, y, 0), aligned_edge=LEFT)

    def _gpt3_table(self) -> dict[str, VGroup]:
        """GPT-3's eight sizes: name, parameters, batch in tokens, peak lr, and the lr as a bar."""
        sizes = self.facts["rows"].value
        head, rows = widgets.table(
            ("GPT-3", "参数", "batch（token）", "峰值学习率"),
            [(row["name"], row["params"], row["batch"], row["lr"]) for row in sizes],
            self.TABLE,
            self.TABLE_TOP,
            self.ROW_PITCH,
        )
        bars = VGroup(
            *(
                self._lr_bar(size["lr_value"], self.TABLE_TOP - self.ROW_PITCH * (i + 1), style.SERIES_A)
                for i, size in enumerate(sizes)
            )
        )
        return {"head": head, "rows": rows, "bars": bars}

    def _ceiling(self) -> dict[str, Mobject]:
        """η*/η_max against B/B_noise: rising, bounded by 1."""
        f = self.facts
        formula = style.math('eta^* approx eta_"max" / (1 + B_"noise" / B)', size=style.MATH_SIZE)
        formula.move_to((4.2, 2.75, 0))
        axes = sketch_axes([-1.5, 2.5, 1], [0, 1.1, 0.5], 8.0, 2.8, ticks=True, corner=True)
        axes.move_to(self.CEILING_CENTRE)
        ticks = tick_labels(axes, f["batch_ticks"].value)
        names = VGroup(
            _note("batch ÷ B_noise").next_to(axes.x_axis.get_right(), UP, buff=style.GAP_S),
            _note("最优学习率 ÷ η_max").next_to(axes, UP, buff=style.GAP_S).align_to(axes, LEFT),
        )
        curve = curve_through(axes, f["ceiling_curve"].value, style.SERIES_A)
        top = DashedLine(axes.c2p(-1.5, 1), axes.c2p(2.5, 1), color=style.HIGHLIGHT, stroke_width=2)
        top_name = _note("上限 η_max", style.HIGHLIGHT).next_to(top, UP, buff=style.GAP_S).align_to(top, RIGHT)
        points = VGroup()
        for (x, y), text in zip(f["ceiling_points"].value, f["ceiling_texts"].value):
            dot = Dot(axes.c2p(x, y), radius=0.07, color=style.SERIES_A)
            points.add(VGroup(dot, _note(text, style.TEXT).next_to(dot, DOWN + RIGHT, buff=style.GAP_S)))
        return {
            "formula": formula,
            "axes": axes,
            "ticks": ticks,
            "names": names,
            "curve": curve,
            "top": top,
            "top_name": top_name,
            "points": points,
        }


# -- beta_windows -------------------------------------------------------------------------
class BetaWindows(LectureScene):
    """How long a β remembers: old inputs fade; a fixed β₂ = 0.99 keeps 100 steps, PaLM's 1 − k^−0.8 a window
    that grows as k^0.8; why: a rare token's second moment under each."""

    PLOT_CENTRE = np.array((-2.6, -0.15, 0))
    TABLE = (Column(2.9, RIGHT), Column(4.9, RIGHT), Column(6.6, RIGHT))  # k, β₂, window
    TABLE_TOP, ROW_PITCH = 1.6, 0.42
    TRACE_CENTRE = np.array((-1.6, -0.6, 0))
    TRACE_LEGEND_X = 3.0
    AXIS_NAME_GAP = 0.25  # a plot's y-axis name above it, clear of the top tick label
    BAR_GAP = 0.08  # between the memory bars

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        memory = self._memory()
        with self.narrate("beta_memory") as beat:
            self.play(Write(memory["formula"]), run_time=beat.share(0.3))
            self.play(
                LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in memory["bars"][::-1]), lag_ratio=0.05),
                FadeIn(memory["names"]),
                run_time=beat.share(0.45),
            )

        plot = self._windows_plot()
        with self.narrate("beta_fixed") as beat:
            self.play(FadeOut(VGroup(*memory.values())), run_time=beat.share(0.15))
            self.play(Create(plot["axes"]), FadeIn(plot["ticks"], plot["names"]), run_time=beat.share(0.3))
            self.play(Create(plot["fixed"]), FadeIn(plot["fixed_name"]), run_time=beat.share(0.35))

        palm = style.math(f"beta_2 = 1 - k^(-{f['decay'].text})", size=style.MATH_SIZE, color=style.SERIES_B)
        palm.move_to((4.6, 2.3, 0))
        palm_name = _note("PaLM", style.SERIES_B, style.LABEL_SIZE).next_to(palm, LEFT, buff=style.GAP_M)
        with self.narrate("beta_palm") as beat:
            self.play(Write(palm), FadeIn(palm_name), run_time=beat.share(0.6))

        table = self._palm_table()
        with self.narrate("beta_table") as beat:
            self.play(FadeIn(table["head"]), run_time=beat.share(0.1))
            for row, dot in zip(table["rows"], plot["points"]):
                self.play(FadeIn(row, shift=0.2 * LEFT), FadeIn(dot, scale=2), run_time=beat.share(0.07))
            self.play(Create(plot["palm"]), run_time=beat.share(0.3))

        with self.narrate("beta_cross") as beat:
            self.play(FadeIn(plot["cross"], scale=2), FadeIn(plot["cross_name"]), run_time=beat.share(0.4))

        why = _note(f"生僻 token：梯度每 {f['period'].text} 步才出现一次（示意）", style.TEXT, style.BODY_SIZE)
        why.move_to((0, 2.35, 0))
        with self.narrate("beta_why") as beat:
            self.play(FadeOut(VGroup(*plot.values(), *table.values(), palm, palm_name)), run_time=beat.share(0.2))
            self.play(FadeIn(why, shift=0.2 * DOWN), run_time=beat.share(0.4))

        traces = self._traces()
        with self.narrate("beta_rare_fixed") as beat:
            self.play(Create(traces["axes"]), FadeIn(traces["ticks"], traces["names"]), run_time=beat.share(0.2))
            self.play(Create(traces["fixed"]), run_time=beat.share(0.45))
            self.play(FadeIn(traces["fixed_name"]), run_time=beat.share(0.2))

        with self.narrate("beta_rare_palm") as beat:
            self.play(Create(traces["palm"]), run_time=beat.share(0.4))
            self.play(FadeIn(traces["palm_name"]), run_time=beat.share(0.2))

        guess = style.caption_stack(
            "猜想（本课自推，没有证据）：二阶矩用 bf16 存，靠老的贡献会衰减",
            "β₂ 一路涨上去，v 越来越像累加器，这个前提就松了",
            size=style.LABEL_SIZE,
            color=style.MUTED,
        )
        guess[0].set_color(style.HIGHLIGHT)
        guess.move_to((0, 2.25, 0))
        with self.narrate("beta_conjecture") as beat:
            self.play(FadeOut(why), FadeIn(guess, shift=0.2 * DOWN), run_time=beat.share(0.4))
        self.finish()

    def _memory(self) -> dict[str, Mobject]:
        """What each of the last inputs still weighs in the average (β = 0.9): a fading row of bars."""
        f = self.facts
        formula = style.math("v_t = beta v_(t-1) + (1 - beta) x_t", size=style.MATH_SIZE).move_to((0, 2.1, 0))
        weights = f["memory_weights"].value
        unit = 2.6 / weights.max()
        bars = VGroup(*(widgets.bar(0.26, w * unit, style.SERIES_A) for w in weights)).arrange(
            RIGHT, buff=self.BAR_GAP, aligned_edge=DOWN
        )
        bars.move_to((0, -0.6, 0))
        names = VGroup(
            _note("最老", style.TEXT, style.LABEL_SIZE).next_to(bars, LEFT, buff=style.GAP_M),
            _note("最新", style.TEXT, style.LABEL_SIZE).next_to(bars, RIGHT, buff=style.GAP_M),
            _note(f"β = {f['memory_beta'].text}：每个输入在平均里还占多少").next_to(bars, DOWN, buff=style.GAP_M),
        )
        return {"formula": formula, "bars": bars, "names": names}

    def _windows_plot(self) -> dict[str, Mobject]:
        """Window against step, both log: a fixed 0.99 flat at 100, PaLM rising as k^0.8."""
        f = self.facts
        axes = sketch_axes([0, 5, 1], [0, 4.2, 1], 6.8, 4.0, ticks=True, corner=True).move_to(self.PLOT_CENTRE)
        ticks = tick_labels(axes, f["step_ticks"].value, f["window_ticks"].value)
        names = VGroup(
            _note("步数 k").next_to(axes.x_axis.get_right(), UP, buff=style.GAP_S),
            _note("记多少步").next_to(axes, UP, buff=self.AXIS_NAME_GAP).align_to(axes, LEFT),
        )
        level = f["fixed_level"].value
        fixed = Line(axes.c2p(0, level), axes.c2p(5, level), color=style.SERIES_A, stroke_width=4)
        fixed_name = _note(f"β₂ = {f['fixed'].text}：{f['fixed_window'].text} 步", style.SERIES_A, style.LABEL_SIZE)
        fixed_name.next_to(axes.c2p(0, level), UP + RIGHT, buff=style.GAP_S)
        palm = line_through(axes, f["window_curve"].value, style.SERIES_B, 4)
        points = VGroup(*(Dot(axes.c2p(x, y), radius=0.07, color=style.SERIES_B) for x, y in f["palm_points"].value))
        crossing = np.log10(f["crossing"].value)
        cross = Dot(axes.c2p(crossing, level), radius=0.1, color=style.HIGHLIGHT)
        cross_name = _note(f"第 {f['crossing'].text} 步交叉", style.HIGHLIGHT, style.LABEL_SIZE)
        cross_name.next_to(cross, DOWN + RIGHT, buff=style.GAP_S)
        return {
            "axes": axes,
            "ticks": ticks,
            "names": names,
            "fixed": fixed,
            "fixed_name": fixed_name,
            "palm": palm,
            "points": points,
            "cross": cross,
            "cross_name": cross_name,
        }

    def _palm_table(self) -> dict[str, VGroup]:
        """PaLM's β₂ at a few steps (the page's table, lost in extraction, recomputed)."""
        steps = self.facts["rows"].value
        head, rows = widgets.table(
            ("k", "β₂", "窗口（步）"),
            [(row["k"], row["beta"], row["window"]) for row in steps],
            self.TABLE,
            self.TABLE_TOP,
            self.ROW_PITCH,
            colors=[style.SERIES_B] * len(steps),
        )
        return {"head": head, "rows": rows}

    def _traces(self) -> dict[str, Mobject]:
        """A rare token's second moment v over the last three sightings: fixed 0.99 against PaLM's β₂."""
        f = self.facts
        fixed, palm = f["fixed_trace"].value, f["palm_trace"].value
        first, last = fixed[0, 0], f["trace_last"].value
        axes = sketch_axes([first, last, last - first], [-12, -2, 2], 8.6, 3.3, ticks=True, corner=True)
        axes.move_to(self.TRACE_CENTRE)
        ticks = tick_labels(
            axes, [(first, f["trace_first"].text), (last, f["trace_last"].text)], f["trace_ticks"].value
        )
        names = VGroup(
            _note("步数").next_to(axes.x_axis, DOWN, buff=style.GAP_S),
            _note("这个 token 的二阶矩 v").next_to(axes, UP, buff=self.AXIS_NAME_GAP).align_to(axes, LEFT),
        )
        fixed_line = line_through(axes, fixed, style.SERIES_A, 3)
        palm_line = line_through(axes, palm, style.SERIES_B, 4)
        fixed_name = VGroup(
            _note(f"β₂ = {f['fixed'].text}", style.SERIES_A, style.LABEL_SIZE),
            _note(f"来回差 {f['swing_fixed'].text}", style.SERIES_A),
        )
        palm_name = VGroup(
            _note(f"PaLM（窗口约 {f['late_window'].text} 步）", style.SERIES_B, style.LABEL_SIZE),
            _note(f"只在 {f['swing_palm'].text} 之内起伏", style.SERIES_B),
        )
        for name, level in ((fixed_name, -9.0), (palm_name, -3.3)):
            name.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
            name.move_to((self.TRACE_LEGEND_X, axes.c2p(first, level)[1], 0), aligned_edge=LEFT)
        return {
            "axes": axes,
            "ticks": ticks,
            "names": names,
            "fixed": fixed_line,
            "palm": palm_line,
            "fixed_name": fixed_name,
            "palm_name": palm_name,
        }


# -- warmup_explanations ------------------------------------------------------------------
class WarmupExplanations(LectureScene):
    """Three explanations of warmup, built row by row with the premise each needs and how it stands;
    the third's symptom as a sketch (no scale)."""

    TABLE = (Column(-6.6, LEFT), Column(-1.3, LEFT), Column(2.4, LEFT))  # claim, premise, verdict
    TABLE_TOP, ROW_PITCH = 2.45, 1.05
    SKETCH_CENTRE = np.array((-4.4, -2.05, 0))
    BOX_PAD = 0.08  # a pick's box round its row

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        head = text_row(("说法", "前提", "现在怎么看"), self.TABLE, self.TABLE_TOP, color=style.MUTED)
        with self.narrate("wu_intro") as beat:
            self.play(FadeIn(head, shift=0.2 * DOWN), run_time=beat.share(0.4))

        rows = self._explanations()
        with self.narrate("wu_first") as beat:
            self.play(FadeIn(rows[0]["claim"], shift=0.2 * RIGHT), run_time=beat.share(0.4))
            self.play(FadeIn(rows[0]["premise"]), run_time=beat.share(0.3))

        with self.narrate("wu_first_verdict") as beat:
            self.play(FadeIn(rows[0]["verdict"], scale=1.2), run_time=beat.share(0.4))

        with self.narrate("wu_second") as beat:
            self.play(FadeIn(rows[1]["claim"], shift=0.2 * RIGHT), FadeIn(rows[1]["premise"]), run_time=beat.share(0.4))
            self.play(FadeIn(rows[1]["verdict"][0], scale=1.2), run_time=beat.share(0.3))

        with self.narrate("wu_second_caveat") as beat:
            self.play(FadeIn(rows[1]["verdict"][1], shift=0.2 * UP), run_time=beat.share(0.4))

        with self.narrate("wu_third") as beat:
            self.play(FadeIn(rows[2]["claim"], shift=0.2 * RIGHT), run_time=beat.share(0.35))
            self.play(FadeIn(rows[2]["premise"]), run_time=beat.share(0.3))

        sketch = self._sketch()
        with self.narrate("wu_symptom") as beat:
            self.play(FadeIn(rows[2]["verdict"], scale=1.2), run_time=beat.share(0.2))
            self.play(Create(sketch["axes"]), FadeIn(sketch["names"]), run_time=beat.share(0.15))
            self.play(Create(sketch["curve"]), run_time=beat.share(0.4))
            self.play(FadeIn(sketch["nan"], scale=1.5), run_time=beat.share(0.15))

        picks = style.caption_stack(
            "Pre-LN（现代大模型）→ 第二种更相关", "Post-LN 又见先平后炸 → 第三种", size=style.LABEL_SIZE
        )
        picks.move_to((2.6, -1.95, 0))
        boxes = [
            SurroundingRectangle(VGroup(*rows[i].values()), color=colour, buff=self.BOX_PAD, corner_radius=0.08)
            for i, colour in ((1, style.SERIES_A), (2, style.SERIES_B))  # two picks: Pre-LN, Post-LN
        ]
        with self.narrate("wu_premise") as beat:
            self.play(Create(boxes[0]), FadeIn(picks[0]), run_time=beat.share(0.4))
            self.play(Create(boxes[1]), FadeIn(picks[1]), run_time=beat.share(0.4))

        length = style.zh(
            f"warmup 多长：GPT-3 占 {f['gpt3_warmup'].text}，V3 是头 {f['v3_warmup_steps'].text} 步",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        ).move_to((-1.3, -1.95, 0), aligned_edge=LEFT)
        with self.narrate("wu_length") as beat:
            self.play(FadeOut(picks, *boxes), run_time=beat.share(0.2))
            self.play(FadeIn(length, shift=0.2 * UP), run_time=beat.share(0.4))
        self.finish()

    def _explanations(self) -> list[dict[str, Mobject]]:
        """Each row's claim, premise and verdict, placed on the table's columns."""
        f = self.facts
        specs = (
            (
                "二阶矩样本太少，估不准",
                ("没讲前提", None),
                ("被驳倒", style.VERDICT_BAD, f"{f['year'].text} 年的系统实验"),
            ),
            (
                "让网络扛得住更大的峰值学习率",
                ("一般情况", None),
                ("成立", style.VERDICT_GOOD, f"但实验只到 {f['layers'].text} 层、上下文 {f['context'].text}"),
            ),
            (
                "压住后面的层，等前面的层跟上",
                ("有明显的梯度消失", "如 Post-LN"),
                ("成立", style.VERDICT_GOOD, "还给出可观察的现象"),
            ),
        )
        rows = []
        for i, (claim, (premise, example), (answer, colour, note)) in enumerate(specs):
            y = self.TABLE_TOP - self.ROW_PITCH * (i + 1)
            claim_text = style.zh(claim, size=style.LABEL_SIZE)
            premise_text = style.zh(premise, size=style.LABEL_SIZE)
            if example:
                premise_text = VGroup(premise_text, _note(example)).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
            badge = verdict(answer, colour, note)
            badge[1].set_color(style.MUTED)
            cells = grid_row([claim_text, premise_text, badge], self.TABLE, y)
            rows.append({"claim": cells[0], "premise": cells[1], "verdict": cells[2]})
        return rows

    def _sketch(self) -> dict[str, Mobject]:
        """The third explanation's symptom, schematic: loss drops, sits flat, then climbs to NaN. No scale."""
        f = self.facts
        axes = sketch_axes([0, 1, 1], [0, 1.6, 1], 3.8, 0.85, corner=True).move_to(self.SKETCH_CENTRE)
        curve = curve_through(axes, f["loss_sketch"].value, style.SCHEMATIC, 4)
        names = VGroup(
            _note("Post-LN 不做 warmup 时的 loss（示意，无刻度）")
            .next_to(axes, UP, buff=style.GAP_S)
            .align_to(axes, LEFT)
        )
        nan = _note("NaN", style.VERDICT_BAD, style.LABEL_SIZE).next_to(curve.get_end(), RIGHT, buff=style.GAP_S)
        return {"axes": axes, "curve": curve, "names": names, "nan": nan}
