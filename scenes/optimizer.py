"""优化器：下山、鞍点与小重球 (optimizer): staging only; every number comes from tools.chapters.optimizer."""

from __future__ import annotations

import itertools

from manim import (
    DEGREES,
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    Arrow,
    Axes,
    Brace,
    Create,
    DashedLine,
    Dot,
    Ellipse,
    FadeIn,
    FadeOut,
    GrowArrow,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    Mobject,
    NumberLine,
    ReplacementTransform,
    ShowIncreasingSubsets,
    Surface,
    SurroundingRectangle,
    Transform,
    VGroup,
    VMobject,
    Write,
    linear,
    np,
)

from scenes import style, widgets
from scenes.base import LectureScene, LectureScene3D
from scenes.widgets import (
    Column,
    ball,
    ball_route,
    curve_through,
    grid_row,
    h_arrow,
    norm_ball,
    reveal,
    roll,
    sketch_axes,
    steepest_step,
    text_row,
)


# -- gradient_descent_ball ----------------------------------------------------------------
class GradientDescentBall(LectureScene):
    """A ball rolls downhill with steps ∝ slope; two starts, two valleys; the column; two rulers."""

    # The gradient column: names centred on one x; bars grow right or left from the zero line.
    ZERO_X = -3.5
    NAME = Column(ZERO_X - 2.75, ORIGIN)
    GROWS_RIGHT, GROWS_LEFT, AT_ZERO = Column(ZERO_X, LEFT), Column(ZERO_X, RIGHT), Column(ZERO_X, ORIGIN)
    COLUMN_TOP, ROW_PITCH = 1.6, 0.75  # the first row's centre, and row to row
    BAR_UNIT = 0.55  # frame units per unit of gradient
    RULER_CENTRE = np.array((3.4, 0.55, 0))  # where the circle and the square are centred
    RULER_RADIUS = 1.45

    @staticmethod
    def make_axes() -> Axes:
        return sketch_axes([-3.6, 3.6, 1], [-2.3, 2.2, 1], 11.5, 4.6).move_to(0.35 * DOWN)

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        per_step = facts["per_step"].value
        axes = self.make_axes()
        x_name = style.zh("参数", size=style.SMALL_SIZE, color=style.MUTED)
        x_name.next_to(axes.x_axis, RIGHT, buff=style.GAP_S).shift(0.3 * UP + 0.4 * LEFT)
        y_name = style.zh("loss", size=style.SMALL_SIZE, color=style.MUTED).next_to(axes.y_axis, UP, buff=style.GAP_S)
        curve = curve_through(axes, facts["curve"].value, style.SCHEMATIC, 5)
        sketch = style.zh("示意：没有刻度", size=style.SMALL_SIZE, color=style.MUTED).to_corner(UP + RIGHT, buff=0.5)

        route = ball_route(axes, facts["route_roll"].value)
        iterates = route[::per_step]
        marks = VGroup(*(Dot(p, radius=0.06, color=style.HIGHLIGHT) for p in iterates)).set_opacity(0)
        rolling = ball(style.HIGHLIGHT).move_to(route[0])
        with self.narrate("ball_roll") as beat:
            self.play(Create(axes), FadeIn(x_name, y_name, sketch), run_time=beat.share(0.15))
            self.play(Create(curve), run_time=beat.share(0.25))
            marks[0].set_opacity(1)
            self.add(marks)
            self.play(FadeIn(rolling, scale=2), run_time=beat.share(0.1))
            self.play(roll(rolling, route[: 3 * per_step + 1]), reveal(marks, 0, 3), run_time=beat.share(0.45))

        with self.narrate("ball_slow") as beat:
            last = len(iterates) - 1
            self.play(roll(rolling, route[3 * per_step :]), reveal(marks, 3, last), run_time=beat.share(0.7))
            tight = VGroup(*marks[-12:])
            note = style.zh("越平，步子越小", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            note.next_to(tight, DOWN, buff=style.GAP_L)
            self.play(FadeIn(note, shift=0.2 * DOWN), Indicate(tight, color=style.HIGHLIGHT), run_time=beat.share(0.25))

        left, right = ball_route(axes, facts["route_left"].value), ball_route(axes, facts["route_right"].value)
        twins = VGroup(ball(style.HIGHLIGHT).move_to(left[0]), ball(style.HIGHLIGHT).move_to(right[0]))
        with self.narrate("ball_starts") as beat:
            self.play(FadeOut(marks, rolling, note), run_time=beat.share(0.25))
            self.play(FadeIn(twins, scale=2), run_time=beat.share(0.3))
            self.play(Indicate(twins, color=style.TEXT), run_time=beat.share(0.3))

        with self.narrate("ball_two_valleys") as beat:
            self.play(roll(twins[0], left), roll(twins[1], right), run_time=beat.share(0.9))

        landscape = VGroup(axes, x_name, y_name, curve, twins, sketch)
        column = self._column(facts["column"].value)
        with self.narrate("ball_column") as beat:
            self.play(FadeOut(landscape), run_time=beat.share(0.15))
            self.play(FadeIn(column["frame"]), run_time=beat.share(0.2))
            self.play(
                LaggedStart(
                    *(
                        GrowFromEdge(bar, LEFT if bar.get_center()[0] >= column["zero"] else RIGHT)
                        for bar in column["bars"]
                    ),
                    lag_ratio=0.25,
                ),
                run_time=beat.share(0.45),
            )

        with self.narrate("ball_backprop") as beat:
            origin = style.caption_stack("反向传播走一遍的输出", "取个负号，就是这一列", size=style.LABEL_SIZE)
            origin.next_to(column["frame"], DOWN, buff=style.GAP_L).align_to(column["frame"], LEFT)
            self.play(FadeIn(origin, shift=0.2 * UP), run_time=beat.share(0.3))
            self.play(Indicate(column["bars"], color=style.BACKWARD), run_time=beat.share(0.3))

        ruler = self._step_rulers()
        with self.narrate("ball_circle") as beat:
            self.play(Create(ruler["plane"]), FadeIn(ruler["names"]), run_time=beat.share(0.2))
            self.play(Create(ruler["circle"]), FadeIn(ruler["circle_name"]), run_time=beat.share(0.25))
            self.play(GrowArrow(ruler["circle_arrow"]), Create(ruler["circle_level"]), run_time=beat.share(0.3))
            self.play(FadeIn(ruler["arrow_name"]), run_time=beat.share(0.15))

        with self.narrate("ball_square") as beat:
            ghost = ruler["circle_arrow"].copy().set_opacity(0.35)
            self.add(ghost)
            self.play(ruler["arrow_name"].animate.set_opacity(0.5), run_time=beat.share(0.1))
            self.play(
                Transform(ruler["circle"], ruler["square"]),
                ReplacementTransform(ruler["circle_name"], ruler["square_name"]),
                ReplacementTransform(ruler["circle_arrow"], ruler["square_arrow"]),
                ReplacementTransform(ruler["circle_level"], ruler["square_level"]),
                run_time=beat.share(0.35),
            )
            moral = style.zh("最快，是相对于你怎么量一步", size=style.BODY_SIZE, color=style.HIGHLIGHT)
            moral.next_to(ruler["square_name"], DOWN, buff=style.EDGE)
            self.play(Write(moral), run_time=beat.share(0.35))
        self.finish()

    def _column(self, column) -> dict:
        """The negative gradient, one row per parameter: sign = direction, length = size."""
        names, bars = VGroup(), VGroup()
        for i, (name, value) in enumerate(column):
            if value == 0:
                bar = Line(0.08 * LEFT, 0.08 * RIGHT, color=style.BACKWARD, stroke_width=5)
            else:
                bar = widgets.bar(abs(value) * self.BAR_UNIT, 0.42, style.BACKWARD)
            side = self.AT_ZERO if value == 0 else self.GROWS_RIGHT if value > 0 else self.GROWS_LEFT
            label, bar = grid_row(
                [style.zh(name, size=style.BODY_SIZE), bar], (self.NAME, side), self.COLUMN_TOP - self.ROW_PITCH * i
            )
            names.add(label)
            bars.add(bar)
        dots = style.zh("⋮", size=style.BODY_SIZE, color=style.MUTED).next_to(names, DOWN, buff=style.GAP_M)
        axis = Line(names.get_top() + 0.3 * UP, dots.get_bottom() + 0.2 * DOWN, color=style.MUTED, stroke_width=2)
        axis.set_x(self.ZERO_X)
        head = style.zh("−梯度：每个参数一格", size=style.LABEL_SIZE, color=style.BACKWARD)
        head.next_to(axis, UP, buff=style.GAP_L)
        frame = VGroup(head, names, dots, axis)
        return {"frame": frame, "bars": bars, "zero": self.ZERO_X}

    def _step_rulers(self) -> dict[str, Mobject]:
        """Steepest step for two parameters, measured by a circle, then by a square."""
        facts = self.facts
        centre, radius = self.RULER_CENTRE, self.RULER_RADIUS
        plane = VGroup(
            Line(centre + 2.2 * LEFT, centre + 2.2 * RIGHT, color=style.MUTED, stroke_width=2),
            Line(centre + 2.0 * DOWN, centre + 2.0 * UP, color=style.MUTED, stroke_width=2),
        )
        names = VGroup(
            style.zh("a", size=style.LABEL_SIZE, color=style.MUTED),
            style.zh("c", size=style.LABEL_SIZE, color=style.MUTED),
        )
        names[0].next_to(plane[0], RIGHT, buff=style.GAP_S)
        names[1].next_to(plane[1], UP, buff=style.GAP_S)
        g = facts["gradient_2d"].value
        circle, square = norm_ball("circle", centre, radius), norm_ball("square", centre, radius)
        circle_arrow, circle_level = steepest_step(centre, radius, facts["steepest_circle"].value, g, style.HIGHLIGHT)
        square_arrow, square_level = steepest_step(centre, radius, facts["steepest_square"].value, g, style.HIGHLIGHT)
        arrow_name = style.zh("−梯度", size=style.SMALL_SIZE, color=style.BACKWARD)
        arrow_name.next_to(circle_arrow.get_center(), DOWN, buff=style.GAP_M)
        circle_name = style.zh("用圆量一步", size=style.LABEL_SIZE).next_to(plane, DOWN, buff=style.GAP_M)
        square_name = style.zh("用方框量一步", size=style.LABEL_SIZE).next_to(plane, DOWN, buff=style.GAP_M)
        return {
            "plane": plane,
            "names": names,
            "circle": circle,
            "square": square,
            "circle_arrow": circle_arrow,
            "square_arrow": square_arrow,
            "circle_level": circle_level,
            "square_level": square_level,
            "circle_name": circle_name,
            "square_name": square_name,
            "arrow_name": arrow_name,
        }


# -- saddle_point -------------------------------------------------------------------------
class SaddlePoint(LectureScene):
    """The pass between two peaks: one cut curves up, the other down; the Hessian's sign rule."""

    MAP_CENTRE = np.array((-4.3, -0.25, 0))
    MAP_SCALE = 0.95
    RIDGE_PANEL = np.array((3.7, 1.45, 0))  # centres of the two cross-sections' axes
    TRAIL_PANEL = np.array((3.7, -1.75, 0))
    RULE_CENTRE = np.array((-3.6, 0.4, 0))  # the Hessian sign rule, once the map is gone
    CAVEAT_GAP = 0.7  # from the sign rule down to the caveat under it

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        on_map = lambda x, y: self.MAP_CENTRE + self.MAP_SCALE * np.array((x, y, 0.0))  # noqa: E731
        contours = VGroup(
            *(
                VMobject(stroke_color=style.SCHEMATIC, stroke_width=2.5).set_points_smoothly(
                    [on_map(x, y) for x, y in [*loop, loop[0]]]
                )
                for loop in facts["contours"].value
            )
        )
        peaks = VGroup(
            *(
                style.zh("峰", size=style.SMALL_SIZE, color=style.MUTED).move_to(on_map(x, y))
                for x, y in facts["peaks"].value
            )
        )
        pass_ball = ball(style.HIGHLIGHT).move_to(on_map(0, 0))
        pass_name = style.zh("垭口", size=style.LABEL_SIZE, color=style.HIGHLIGHT).next_to(
            pass_ball, LEFT, buff=style.GAP_XL
        )
        pass_name.shift(0.55 * UP)
        flat = style.zh("梯度 = 0", size=style.LABEL_SIZE).next_to(pass_ball, RIGHT, buff=0.55).shift(0.35 * DOWN)
        sketch = style.zh("示意地形图", size=style.SMALL_SIZE, color=style.MUTED)
        sketch.next_to(on_map(0, -facts["ridge"].value[-1, 0]), LEFT, buff=style.GAP_ML).shift(0.2 * UP)

        with self.narrate("saddle_worry") as beat:
            self.play(
                LaggedStart(*(Create(c) for c in contours), lag_ratio=0.1),
                FadeIn(peaks, sketch),
                run_time=beat.share(0.8),
            )

        with self.narrate("saddle_pass") as beat:
            self.play(FadeIn(pass_ball, scale=2), FadeIn(pass_name), run_time=beat.share(0.4))
            self.play(Write(flat), run_time=beat.share(0.35))

        reach = facts["ridge"].value[-1, 0]
        ridge_cut = Line(on_map(0, -reach), on_map(0, reach), color=style.SERIES_A, stroke_width=4)
        trail_cut = Line(on_map(-reach, 0), on_map(reach, 0), color=style.SERIES_B, stroke_width=4)
        ridge_panel = self._profile(facts["ridge"].value, style.SERIES_A, "沿山脊", "向上弯", self.RIDGE_PANEL)
        trail_panel = self._profile(facts["trail"].value, style.SERIES_B, "沿山路", "向下弯", self.TRAIL_PANEL)
        with self.narrate("saddle_ridge") as beat:
            self.play(Create(ridge_cut), run_time=beat.share(0.25))
            self.play(FadeIn(ridge_panel["axes"], ridge_panel["head"]), run_time=beat.share(0.15))
            self.play(Create(ridge_panel["curve"]), run_time=beat.share(0.3))
            self.play(FadeIn(ridge_panel["ball"], scale=2), FadeIn(ridge_panel["shape"]), run_time=beat.share(0.2))

        with self.narrate("saddle_trail") as beat:
            self.play(Create(trail_cut), run_time=beat.share(0.25))
            self.play(FadeIn(trail_panel["axes"], trail_panel["head"]), run_time=beat.share(0.15))
            self.play(Create(trail_panel["curve"]), run_time=beat.share(0.3))
            self.play(FadeIn(trail_panel["ball"], scale=2), FadeIn(trail_panel["shape"]), run_time=beat.share(0.2))

        trail = facts["trail"].value
        downhill = trail[len(trail) // 2 : len(trail) // 2 + 40]
        with self.narrate("saddle_escape") as beat:
            kind = style.zh("鞍点", size=style.BODY_SIZE, color=style.HIGHLIGHT).move_to(pass_name)
            self.play(FadeOut(pass_name, flat), FadeIn(kind, scale=1.3), run_time=beat.share(0.3))
            map_path = np.array([on_map(x, 0) for x, _ in downhill])
            self.play(
                roll(trail_panel["ball"], ball_route(trail_panel["axes"], downhill)),
                roll(pass_ball, map_path),
                run_time=beat.share(0.55),
            )

        landscape = VGroup(contours, peaks, sketch, ridge_cut, trail_cut, pass_ball, kind)
        rule = self._rule(facts["hessian_signs"].value)
        with self.narrate("saddle_hessian") as beat:
            self.play(FadeOut(landscape), run_time=beat.share(0.15))
            self.play(FadeIn(rule["head"]), run_time=beat.share(0.15))
            self.play(FadeIn(rule["rows"][0], shift=0.2 * RIGHT), run_time=beat.share(0.2))
            self.play(FadeIn(rule["rows"][1], shift=0.2 * RIGHT), run_time=beat.share(0.2))
            self.play(Create(rule["box"]), run_time=beat.share(0.2))

        with self.narrate("saddle_no_probability") as beat:
            caveat = style.caption_stack(
                "这里故意不给概率", "各个方向怎么弯，并不互相独立", size=style.LABEL_SIZE, color=style.MUTED
            )
            caveat[0].set_color(style.HIGHLIGHT)
            caveat.next_to(rule["rows"], DOWN, buff=self.CAVEAT_GAP).align_to(rule["rows"], LEFT)
            self.play(FadeIn(caveat, shift=0.2 * UP), run_time=beat.share(0.4))
        self.finish()

    @staticmethod
    def _profile(rows, colour, where, shape, centre) -> dict[str, Mobject]:
        """One cross-section through the pass, on its own small axes."""
        axes = sketch_axes([rows[0, 0], rows[-1, 0], 1], [0, 1.15 * rows[:, 1].max(), 1], 5.6, 1.9).move_to(centre)
        curve = curve_through(axes, rows, colour, 5)
        middle = rows[len(rows) // 2]
        marker = ball(style.HIGHLIGHT).move_to(axes.c2p(*middle))
        head = VGroup(style.zh(where, size=style.LABEL_SIZE), style.zh(shape, size=style.LABEL_SIZE, color=colour))
        head.arrange(RIGHT, buff=style.GAP_ML).next_to(axes, UP, buff=style.GAP_SM).align_to(axes, LEFT)
        shape_tag = style.zh("垭口", size=style.SMALL_SIZE, color=style.HIGHLIGHT).next_to(
            marker, DOWN, buff=style.GAP_SM
        )
        return {"axes": axes, "curve": curve, "ball": marker, "head": head, "shape": shape_tag}

    @classmethod
    def _rule(cls, signs) -> dict[str, Mobject]:
        """Hessian eigenvalues: all positive → minimum; mixed → saddle (boxed: the pass is mixed)."""

        def cut(up: bool) -> VMobject:
            sign = 1 if up else -1
            pts = [np.array((t, sign * t * t, 0.0)) for t in np.linspace(-0.35, 0.35, 15)]
            return VMobject(stroke_color=style.SERIES_A if up else style.SERIES_B, stroke_width=5).set_points_smoothly(
                pts
            )

        rows = VGroup()
        for icons, words in (((True, True), "全为正 → 局部最小"), ((True, False), "有正有负 → 鞍点")):
            icon = VGroup(*(cut(up) for up in icons)).arrange(RIGHT, buff=style.EDGE)
            rows.add(VGroup(icon, style.zh(words, size=style.BODY_SIZE)).arrange(RIGHT, buff=style.GAP_L))
        rows.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_XL).move_to(cls.RULE_CENTRE)
        head = style.zh("Hessian 的特征值", size=style.BODY_SIZE, color=style.MUTED)
        head.next_to(rows, UP, buff=style.GAP_L).align_to(rows, LEFT)
        mixed = bool(np.any(signs > 0) and np.any(signs < 0))
        box = SurroundingRectangle(rows[1 if mixed else 0], color=style.HIGHLIGHT, buff=0.18, corner_radius=0.1)
        return {"head": head, "rows": rows, "box": box}


# -- saddle_3d_rotating -------------------------------------------------------------------
class Saddle3dRotating(LectureScene3D):
    """z = x² − y² turning: up one way, down the other, one shape; then the flat pass where descent grinds."""

    SCALE = np.array((1.6, 1.6, 0.7))

    @classmethod
    def place(cls, rows) -> np.ndarray:
        """Surface coordinates (x, y, z) to scene points."""
        return np.asarray(rows, dtype=float) * cls.SCALE

    def construct(self) -> None:
        facts = self.facts
        self.set_camera_orientation(phi=64 * DEGREES, theta=-55 * DEGREES, zoom=0.9)
        heading = self.show_title()
        grid = self.place(facts["surface"].value)
        n = grid.shape[0]
        surface = Surface(
            lambda u, v: grid[round(u), round(v)],
            u_range=[0, n - 1],
            v_range=[0, n - 1],
            resolution=(n - 1, n - 1),
            checkerboard_colors=False,
            fill_color=style.SCHEMATIC,
            fill_opacity=style.FILL_SOFT,
            stroke_color=style.TEXT,
            stroke_width=0.5,
        )
        with self.narrate("spin_surface") as beat:
            self.play(Create(surface), run_time=beat.share(0.6))
            self.begin_ambient_camera_rotation(rate=0.3)

        up = VMobject(stroke_color=style.SERIES_A, stroke_width=6).set_points_smoothly(
            self.place(facts["cut_up"].value)
        )
        down = VMobject(stroke_color=style.SERIES_B, stroke_width=6).set_points_smoothly(
            self.place(facts["cut_down"].value)
        )
        legend = (
            VGroup(
                VGroup(
                    Line(ORIGIN, 0.5 * RIGHT, color=style.SERIES_A, stroke_width=6),
                    style.zh("这一刀：往上翘", size=style.LABEL_SIZE),
                ).arrange(RIGHT, buff=style.GAP_M),
                VGroup(
                    Line(ORIGIN, 0.5 * RIGHT, color=style.SERIES_B, stroke_width=6),
                    style.zh("那一刀：往下沉", size=style.LABEL_SIZE),
                ).arrange(RIGHT, buff=style.GAP_M),
            )
            .arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
            .to_corner(UP + RIGHT, buff=style.GAP_L)
        )
        self.fix_in_frame(legend)
        with self.narrate("spin_cuts") as beat:
            self.play(Create(up), FadeIn(legend[0]), run_time=beat.share(0.3))
            self.play(Create(down), FadeIn(legend[1]), run_time=beat.share(0.3))

        radius = facts["flat_radius"].value
        angles = np.linspace(0, 2 * np.pi, 73)
        ring = np.stack([radius * np.cos(angles), radius * np.sin(angles), radius**2 * np.cos(2 * angles)], axis=1)
        flat = VMobject(stroke_color=style.HIGHLIGHT, stroke_width=5).set_points_smoothly(self.place(ring))
        # The notes stand under the title, where the turning surface never reaches (and clear of the captions).
        flat_note = self.fix_in_frame(
            style.zh("垭口附近：坡几乎是平的", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            .next_to(heading, DOWN, buff=style.GAP_L)
            .align_to(heading, LEFT)
        )
        with self.narrate("spin_flat") as beat:
            self.stop_ambient_camera_rotation()
            self.move_camera(phi=58 * DEGREES, theta=70 * DEGREES, run_time=beat.share(0.35))
            self.play(Create(flat), FadeIn(flat_note), run_time=beat.share(0.4))

        path = self.place(facts["path"].value) + 0.05 * np.array((0, 0, 1.0))
        marks = VGroup(*(Dot(p, radius=0.045, color=style.HIGHLIGHT) for p in path)).set_opacity(0)
        marks[0].set_opacity(1)
        rolling = Dot(path[0], radius=0.1, color=style.HIGHLIGHT)
        # Each dot keeps facing the camera about its own centre.
        self.renderer.camera.add_fixed_orientation_mobjects(*marks, rolling)
        self.add(marks, rolling)
        grind_note = self.fix_in_frame(
            style.zh("一小步一小步地磨", size=style.LABEL_SIZE)
            .next_to(flat_note, DOWN, buff=style.GAP_M)
            .align_to(flat_note, LEFT)
        )
        with self.narrate("spin_grind") as beat:
            last = len(path) - 1
            self.play(roll(rolling, path), reveal(marks, 0, last), run_time=beat.share(0.85))
            self.play(FadeIn(grind_note), run_time=beat.share(0.1))

        with self.narrate("spin_next") as beat:
            teaser = self.fix_in_frame(
                style.zh("下一张：靠惯性滑过去", size=style.BODY_SIZE, color=style.TEXT)
                .to_edge(LEFT, buff=style.GAP_XL)
                .shift(2.2 * DOWN)
            )
            self.begin_ambient_camera_rotation(rate=0.2)
            self.play(FadeIn(teaser), run_time=beat.share(0.3))
        self.finish()


# -- momentum_escape ----------------------------------------------------------------------
MOMENTUM = style.SERIES_A  # the heavy ball, its inertia and its β: one series beside plain descent


class MomentumEscape(LectureScene):
    """Plain GD stalls in the shallow pit; the heavy ball rolls through it on inertia."""

    WEIGHTS_FORMULA = 2.4 * UP  # the β^k sum, centred
    BARS_BASE = 1.4 * DOWN  # the β^k bars stand on this line, centred on the frame
    BAR_PITCH, BAR_WIDTH, BAR_TALL = 1.15, 0.7, 2.3  # centre to centre, width, height of β^0 = 1
    POLYAK_START = np.array((-2.0, -0.6, 0))  # β = 0.75 on Polyak's axis
    POLYAK_LENGTH = 8.0  # from β = 0.75 to β = 1
    POLYAK_HEAD = 1.4 * UP

    @staticmethod
    def make_axes() -> Axes:
        # Low enough to clear the legend, high enough that the spots' names clear the caption band.
        return sketch_axes([-1, 13, 1], [-0.65, 2.75, 1], 12.4, 4.1, visible=False).move_to(0.25 * DOWN)

    def construct(self) -> None:
        facts = self.facts
        heading = self.show_title()
        per_step = facts["per_step"].value
        axes = self.make_axes()
        curve = curve_through(axes, facts["curve"].value, style.DATA, 4)
        formula = style.math(
            f"L(x) = {facts['a'].text} x^2 + {facts['b'].text} cos({facts['c'].text} x)", size=style.MATH_SIZE
        ).to_corner(UP + RIGHT, buff=0.4)
        baseline = Line(axes.c2p(-1, -0.65), axes.c2p(13, -0.65), color=style.MUTED, stroke_width=2)
        spots = VGroup()
        for key, name in (("valley_x", "深谷"), ("pit_x", "浅坑")):
            x = facts[key].value
            tick = Line(axes.c2p(x, -0.65), axes.c2p(x, -0.55), color=style.MUTED, stroke_width=2)
            text = VGroup(
                style.zh(name, size=style.SMALL_SIZE, color=style.MUTED),
                style.zh(f"x = {facts[key].text}", size=style.SMALL_SIZE, color=style.MUTED),
            )
            text.arrange(RIGHT, buff=style.GAP_SM).next_to(tick, DOWN, buff=style.GAP_S)
            spots.add(VGroup(tick, text))
        with self.narrate("heavy_loss") as beat:
            self.play(Write(formula), run_time=beat.share(0.2))
            self.play(Create(curve), Create(baseline), run_time=beat.share(0.35))
            self.play(
                LaggedStart(*(FadeIn(spot, shift=0.2 * UP) for spot in spots), lag_ratio=0.4), run_time=beat.share(0.3)
            )

        plain_path = ball_route(axes, facts["route_plain"].value)
        heavy_path = ball_route(axes, facts["route_heavy"].value)
        heavy_ball = ball(MOMENTUM, 0.17).move_to(heavy_path[0])
        plain_ball = ball(style.HIGHLIGHT, 0.11).move_to(plain_path[0])
        legend = VGroup(
            VGroup(Dot(color=style.HIGHLIGHT, radius=0.1), style.zh("普通梯度下降", size=style.LABEL_SIZE)),
            VGroup(
                Dot(color=MOMENTUM, radius=0.1), style.zh(f"带动量，β = {facts['beta'].text}", size=style.LABEL_SIZE)
            ),
            style.zh(f"学习率都是 {facts['lr'].text}", size=style.LABEL_SIZE, color=style.MUTED),
        )
        for row in legend[:2]:
            row.arrange(RIGHT, buff=style.GAP_M)
        legend.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_SM).next_to(formula, DOWN, buff=style.GAP_ML).align_to(
            formula, LEFT
        )
        with self.narrate("heavy_two_balls") as beat:
            self.play(FadeIn(heavy_ball, scale=2), FadeIn(plain_ball, scale=2), run_time=beat.share(0.3))
            self.play(FadeIn(legend, shift=0.2 * LEFT), run_time=beat.share(0.4))

        k = facts["cross_step"].value
        with self.narrate("heavy_roll") as beat:
            self.play(
                roll(plain_ball, plain_path[: k * per_step + 1]),
                roll(heavy_ball, heavy_path[: k * per_step + 1]),
                run_time=max(beat.share(1.0), 4.0),
            )

        arrows = self._arrows(axes, facts, heavy_path[k * per_step], heavy_path[(k + 1) * per_step])
        with self.narrate("heavy_arrows") as beat:
            self.play(Create(arrows["stem"]), run_time=beat.share(0.1))
            self.play(FadeIn(arrows["pull"]), FadeIn(arrows["pull_label"]), run_time=beat.share(0.3))
            self.play(GrowArrow(arrows["move"]), FadeIn(arrows["move_label"]), run_time=beat.share(0.3))

        with self.narrate("heavy_inertia") as beat:
            self.play(GrowArrow(arrows["inertia"]), FadeIn(arrows["inertia_label"]), run_time=beat.share(0.3))
            quote = style.caption_stack(
                "运动不顺着力的方向走，", "因为有惯性。—— Polyak", size=style.LABEL_SIZE, color=MOMENTUM
            )
            quote.next_to(heading, DOWN, buff=style.GAP_L).align_to(heading, LEFT)
            self.play(FadeIn(quote, shift=0.2 * UP), run_time=beat.share(0.3))

        with self.narrate("heavy_landing") as beat:
            self.play(FadeOut(VGroup(*arrows.values()), quote), run_time=beat.share(0.1))
            self.play(
                roll(plain_ball, plain_path[k * per_step :]),
                roll(heavy_ball, heavy_path[k * per_step :]),
                run_time=beat.share(0.65),
            )
            stuck = style.zh("停在浅坑，梯度归零", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
            stuck.next_to(plain_path[-1], UP, buff=style.EDGE)
            landed = style.zh("落进深谷", size=style.LABEL_SIZE, color=MOMENTUM)
            landed.next_to(heavy_path[-1], UP, buff=style.GAP_L)
            self.play(FadeIn(stuck), FadeIn(landed), run_time=beat.share(0.2))

        board = VGroup(curve, baseline, spots, heavy_ball, plain_ball, legend, stuck, landed, formula)
        sums = self._weights(facts)
        with self.narrate("heavy_weights") as beat:
            self.play(FadeOut(board), run_time=beat.share(0.1))
            self.play(Write(sums["formula"]), FadeIn(sums["meaning"]), run_time=beat.share(0.25))
            self.play(
                LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in sums["bars"]), lag_ratio=0.15),
                FadeIn(sums["below"]),
                FadeIn(sums["above"]),
                run_time=beat.share(0.4),
            )
            self.play(GrowArrow(sums["older"]), FadeIn(sums["older_name"]), run_time=beat.share(0.15))

        polyak = self._polyak(facts)
        with self.narrate("heavy_polyak") as beat:
            self.play(FadeOut(VGroup(*sums.values())), run_time=beat.share(0.1))
            self.play(FadeIn(polyak["head"]), run_time=beat.share(0.2))
            self.play(Create(polyak["line"]), FadeIn(polyak["band"], polyak["ends"]), run_time=beat.share(0.25))
            self.play(FadeIn(polyak["ours"], shift=0.2 * DOWN), run_time=beat.share(0.2))
            self.play(FadeIn(polyak["adam"], shift=0.2 * UP), run_time=beat.share(0.2))
        self.finish()

    @staticmethod
    def _arrows(axes, facts, here, there) -> dict[str, Mobject]:
        """At the crossing step: inertia, the gradient's pull (≈ 0) and the move, to the x scale of the plot."""
        x = axes.p2c(here)[0]
        rows = {"inertia": 2.05, "pull": 1.65, "move": 1.25}
        inertia_end = axes.c2p(x + facts["inertia"].value, rows["inertia"])
        inertia = h_arrow(axes.c2p(x, rows["inertia"]), inertia_end, MOMENTUM)
        move = h_arrow(axes.c2p(x, rows["move"]), axes.c2p(axes.p2c(there)[0], rows["move"]), style.TEXT)
        pull = Dot(axes.c2p(x + facts["pull"].value, rows["pull"]), radius=0.06, color=style.BACKWARD)
        stem = DashedLine(here, axes.c2p(x, rows["inertia"] + 0.15), color=style.MUTED, stroke_width=2)

        def label(words, fact, colour, row, right_of) -> VGroup:
            text = VGroup(
                style.zh(words, size=style.LABEL_SIZE, color=colour),
                style.zh(fact.text, size=style.LABEL_SIZE, color=colour),
            ).arrange(RIGHT, buff=style.GAP_M)
            return text.next_to(axes.c2p(right_of, row), LEFT, buff=style.GAP_M)

        left_end = axes.p2c(inertia_end)[0]
        return {
            "stem": stem,
            "inertia": inertia,
            "pull": pull,
            "move": move,
            "inertia_label": label("惯性：β × 上一步", facts["inertia"], MOMENTUM, rows["inertia"], left_end),
            "pull_label": label("梯度往回拉", facts["pull"], style.BACKWARD, rows["pull"], left_end),
            "move_label": label("这一步移动", facts["move"], style.TEXT, rows["move"], left_end),
        }

    @classmethod
    def _weights(cls, facts) -> dict[str, Mobject]:
        """Bars of β^k: how much of the gradient k steps back is still in today's move."""
        formula = style.math(
            "v_t = beta dot v_(t-1) - eta g_t = -eta sum_(k>=0) beta^k g_(t-k)", size=style.MATH_SIZE
        ).move_to(cls.WEIGHTS_FORMULA)
        meaning = style.zh("v：每一步的移动　g：梯度　η：学习率", size=style.LABEL_SIZE, color=style.MUTED)
        meaning.next_to(formula, DOWN, buff=style.GAP_ML)
        bars = VGroup(*(widgets.bar(cls.BAR_WIDTH, cls.BAR_TALL * w, MOMENTUM) for w in facts["weights"].value))
        bars.arrange(RIGHT, buff=cls.BAR_PITCH - cls.BAR_WIDTH, aligned_edge=DOWN).move_to(
            cls.BARS_BASE, aligned_edge=DOWN
        )
        below = VGroup(
            *(
                style.math("g_t" if k == 0 else f"g_(t-{k})", size=style.MATH_LABEL_SIZE, color=style.BACKWARD).next_to(
                    bar, DOWN, buff=style.GAP_SM
                )
                for k, bar in enumerate(bars)
            )
        )
        above = VGroup(
            *(
                style.math(f"beta^{k}", size=style.MATH_LABEL_SIZE, color=MOMENTUM).next_to(bar, UP, buff=style.GAP_S)
                for k, bar in enumerate(bars)
            )
        )
        older = Arrow(
            bars[2].get_bottom(),
            bars[-1].get_bottom() + 0.3 * RIGHT,
            buff=style.FLUSH,
            color=style.MUTED,
            stroke_width=3,
        ).shift(1.05 * DOWN)
        older_name = style.zh("越老的梯度", size=style.SMALL_SIZE, color=style.MUTED)
        older_name.next_to(older, LEFT, buff=style.GAP_M)
        return {
            "formula": formula,
            "meaning": meaning,
            "bars": bars,
            "below": below,
            "above": above,
            "older": older,
            "older_name": older_name,
        }

    @classmethod
    def _polyak(cls, facts) -> dict[str, Mobject]:
        """Polyak's empirical range, with the β of this figure and Adam's β₁ on it."""
        lo, hi = 0.75, 1.0
        line = NumberLine(
            x_range=[lo, hi, hi - lo], length=cls.POLYAK_LENGTH, include_ticks=False, color=style.MUTED, stroke_width=3
        )
        line.shift(cls.POLYAK_START - line.n2p(lo))
        at = line.n2p
        a, b = facts["polyak_low"], facts["polyak_high"]
        band = widgets.bar(at(b.value)[0] - at(a.value)[0], 0.3, MOMENTUM, opacity=style.FILL_FAINT).move_to(
            (at(a.value) + at(b.value)) / 2
        )
        ends = VGroup(
            *(
                style.zh(f.text, size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    at(f.value) + 0.15 * DOWN, DOWN, buff=style.GAP_S
                )
                for f in (a, b)
            )
        )
        beta, adam = facts["beta"], facts["adam_beta1"]
        ours = VGroup(
            style.zh(f"本图 β = {beta.text}", size=style.SMALL_SIZE, color=MOMENTUM),
            Line(UP * 0.2, DOWN * 0.2, color=MOMENTUM, stroke_width=4),
        ).arrange(DOWN, buff=style.GAP_XS)
        ours.next_to(at(beta.value) + 0.15 * UP, UP, buff=style.FLUSH).shift(0.05 * DOWN)
        adam_mark = VGroup(
            Line(UP * 0.2, DOWN * 0.2, color=style.HIGHLIGHT, stroke_width=4),
            style.zh(f"Adam 默认 β₁ = {adam.text}", size=style.SMALL_SIZE, color=style.HIGHLIGHT),
        )
        adam_mark.arrange(DOWN, buff=style.GAP_XS).next_to(at(adam.value) + 0.15 * DOWN, DOWN, buff=style.FLUSH).shift(
            0.05 * UP
        )
        head = style.zh(
            f"Polyak {facts['polyak_year'].text}「小重球法」：比 {facts['backprop_year'].text} 年的反向传播论文早 "
            f"{facts['years_earlier'].text} 年",
            size=style.LABEL_SIZE,
        ).move_to(cls.POLYAK_HEAD)
        name = style.zh("Polyak 的经验取值", size=style.LABEL_SIZE, color=MOMENTUM).next_to(
            line, LEFT, buff=style.GAP_ML
        )
        return {"head": head, "line": line, "band": band, "ends": VGroup(ends, name), "ours": ours, "adam": adam_mark}


# -- learning_rate_two_paths --------------------------------------------------------------
class LearningRateTwoPaths(LectureScene):
    """The learning rate's units; one narrow valley, two learning rates; the threshold and the step counts."""

    MAP_CENTRE = np.array((0.0, 1.6, 0))
    MAP_SCALE = 0.5
    TAG_Y = -0.05
    # The two tables, side by side under the map; columns are left edges from each table's left.
    THRESHOLD_CENTRE = np.array((-3.4, -1.25, 0))
    THRESHOLD_COLUMNS = (Column(0.0), Column(2.25), Column(4.85))
    HALFWAY_CENTRE = np.array((3.6, -1.25, 0))
    HALFWAY_COLUMNS = (Column(0.0), Column(1.8), Column(3.3))
    CAVEAT = 2.55 * DOWN  # under the tables, above the caption band
    TERM_GAP = 0.7  # between the update rule's terms: room for each term's unit under it
    SHOWN = 0.3  # the opacity a path already shown fades to, once the next one starts

    @classmethod
    def on_map(cls, rows) -> np.ndarray:
        """Valley coordinates (flat, steep) to screen points."""
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        return cls.MAP_CENTRE + cls.MAP_SCALE * np.column_stack([rows, np.zeros(len(rows))])

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        units = self._units()
        with self.narrate("lr_units") as beat:
            self.play(FadeIn(units["rule"]), run_time=beat.share(0.15))
            self.play(FadeIn(units["param"], units["grad"]), run_time=beat.share(0.35))
            self.play(FadeIn(units["lr"]), run_time=beat.share(0.15))
            self.play(ReplacementTransform(units["lr"], units["lr_unit"]), run_time=beat.share(0.25))

        with self.narrate("lr_not_universal") as beat:
            tag = style.zh("不是一个通用常数", size=style.BODY_SIZE, color=style.HIGHLIGHT)
            tag.next_to(units["lr_unit"], DOWN, buff=style.EDGE)
            self.play(
                Indicate(units["lr_unit"], color=style.HIGHLIGHT), FadeIn(tag, shift=0.2 * UP), run_time=beat.share(0.5)
            )

        rings = VGroup(
            *(
                Ellipse(
                    width=2 * self.MAP_SCALE * a, height=2 * self.MAP_SCALE * b, color=style.SCHEMATIC, stroke_width=2
                ).move_to(self.MAP_CENTRE)
                for a, b in facts["contours"].value
            )
        )
        bottom = Dot(self.MAP_CENTRE, radius=0.06, color=style.TEXT)
        shape = style.caption_stack(
            f"陡峭比 {facts['kappa'].text}：上下陡，左右平",
            "η：学习率　λ陡：陡方向的曲率",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        ).to_corner(UP + RIGHT, buff=style.EDGE)
        with self.narrate("lr_valley") as beat:
            self.play(FadeOut(VGroup(*units.values()), tag), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(Create(r) for r in rings[::-1]), lag_ratio=0.2), FadeIn(bottom), run_time=beat.share(0.45)
            )
            self.play(FadeIn(shape), run_time=beat.share(0.2))

        start_x = facts["start"].value[0]
        over = self._path(facts["path_over"].value, style.VERDICT_BAD)
        over_tag = self._tag(f"大：η·λ陡 = {facts['lr_over'].text}，比门槛高 {facts['margin'].text}", style.VERDICT_BAD)
        with self.narrate("lr_too_large") as beat:
            self.play(FadeIn(over["ball"], scale=2), FadeIn(over_tag), run_time=beat.share(0.15))
            self.play(*over["play"], run_time=beat.share(0.7))

        small = self._path(facts["path_small"].value, style.HIGHLIGHT)
        small_tag = self._tag(f"小：η·λ陡 = {facts['lr_small'].text}", style.HIGHLIGHT)
        with self.narrate("lr_too_small") as beat:
            self.play(
                FadeOut(over["ball"], over_tag),
                over["trail"].animate.set_opacity(self.SHOWN),
                FadeIn(small["ball"], scale=2),
                FadeIn(small_tag),
                run_time=beat.share(0.15),
            )
            self.play(*small["play"], run_time=beat.share(0.55))
            under_map = self.on_map((start_x, 0))[0][1] - self.MAP_SCALE * facts["map_height"].value - 0.1
            ends = [
                self.on_map((x, 0))[0] * np.array((1, 0, 0)) + under_map * UP
                for x in (start_x, facts["path_small"].value[-1, 0], 0.0)
            ]
            whole = DashedLine(ends[0], ends[2], color=style.MUTED, stroke_width=2)
            brace = Brace(Line(ends[0], ends[1]), DOWN, buff=style.GAP_XS, color=style.HIGHLIGHT)
            share = style.zh(
                f"{facts['crawl_steps'].text} 步，只走了到谷底的 {facts['crawl_fraction'].text}",
                size=style.LABEL_SIZE,
                color=style.HIGHLIGHT,
            ).next_to(brace, RIGHT, buff=style.GAP_M)
            self.play(FadeOut(small_tag), run_time=beat.share(0.07))
            self.play(Create(whole), FadeIn(brace), FadeIn(share), run_time=beat.share(0.18))

        under = self._path(facts["path_under"].value, style.VERDICT_GOOD)
        under_tag = self._tag(
            f"贴着门槛：η·λ陡 = {facts['lr_under'].text}，比门槛低 {facts['margin'].text}", style.VERDICT_GOOD
        )
        table = self._threshold_and_halfway()
        with self.narrate("lr_just_under") as beat:
            self.play(
                FadeOut(small["ball"], brace, share, whole),
                small["trail"].animate.set_opacity(self.SHOWN),
                FadeIn(under["ball"], scale=2),
                FadeIn(under_tag),
                run_time=beat.share(0.15),
            )
            self.play(*under["play"], run_time=beat.share(0.45))
            half = DashedLine(
                self.on_map((start_x / 2, -2.4))[0],
                self.on_map((start_x / 2, 2.4))[0],
                color=style.VERDICT_GOOD,
                stroke_width=2,
            )
            half_name = style.zh("一半", size=style.SMALL_SIZE, color=style.VERDICT_GOOD).next_to(
                half, UP, buff=style.GAP_XS
            )
            self.play(
                Create(half),
                FadeIn(half_name),
                FadeIn(table["halfway_head"], table["halfway_rows"][0]),
                Indicate(under["marks"][facts["halfway_run"].value], color=style.VERDICT_GOOD, scale_factor=2.5),
                run_time=beat.share(0.3),
            )

        with self.narrate("lr_threshold") as beat:
            self.play(FadeIn(table["threshold_head"]), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(FadeIn(row, shift=0.2 * RIGHT) for row in table["threshold_rows"]), lag_ratio=0.5),
                run_time=beat.share(0.7),
            )

        with self.narrate("lr_extrapolate") as beat:
            caveat = style.zh(
                f"陡峭比取 {facts['kappa'].text} 只为看得见；真实量级交给公式外推",
                size=style.LABEL_SIZE,
                color=style.MUTED,
            ).move_to(self.CAVEAT)
            self.play(FadeIn(caveat), run_time=beat.share(0.3))
            self.play(FadeIn(table["halfway_rows"][1], shift=0.2 * RIGHT), run_time=beat.share(0.3))
            self.play(Indicate(table["halfway_rows"][1], color=style.HIGHLIGHT), run_time=beat.share(0.25))
        self.finish()

    @classmethod
    def _units(cls) -> dict[str, Mobject]:
        """新参数 = 参数 − 学习率 × 梯度, with each term's unit underneath."""
        rule = VGroup(
            *(
                style.zh(w, size=style.BODY_SIZE, color=c)
                for w, c in (
                    ("新参数", style.TEXT),
                    ("=", style.TEXT),
                    ("参数", style.TEXT),
                    ("−", style.TEXT),
                    ("学习率", style.HIGHLIGHT),
                    ("×", style.TEXT),
                    ("梯度", style.BACKWARD),
                )
            )
        ).arrange(RIGHT, buff=cls.TERM_GAP)
        rule.move_to(1.3 * UP)

        def unit(words, term, colour=style.MUTED) -> Mobject:
            return style.zh(words, size=style.LABEL_SIZE, color=colour).next_to(term, DOWN, buff=style.GAP_L)

        return {
            "rule": rule,
            "param": unit("参数", rule[2]),
            "grad": unit("loss ÷ 参数", rule[6]),
            "lr": unit("？", rule[4]),
            "lr_unit": unit("参数² ÷ loss", rule[4], style.HIGHLIGHT),
        }

    def _path(self, rows, colour) -> dict:
        """A ball and the trail of its iterates, revealed one step at a time."""
        points = self.on_map(rows)
        trail = VGroup(*(Line(a, b, color=colour, stroke_width=3) for a, b in itertools.pairwise(points)))
        marks = VGroup(*(Dot(p, radius=0.04, color=colour) for p in points))
        head = ball(colour, 0.1).move_to(points[0])
        play = [
            roll(head, points),
            ShowIncreasingSubsets(trail, rate_func=linear),
            ShowIncreasingSubsets(marks, rate_func=linear),
        ]
        return {"ball": head, "trail": VGroup(trail, marks), "marks": marks, "play": play}

    def _tag(self, words, colour) -> Mobject:
        """Which learning rate a path uses, in the row under the map."""
        return style.zh(words, size=style.LABEL_SIZE, color=colour).move_to((0, self.TAG_Y, 0))

    def _threshold_and_halfway(self) -> dict[str, VGroup]:
        """The two tables under the map: the threshold ±5% (left) and the steps to halfway (right)."""
        f = self.facts

        def left_row(texts, colour=style.TEXT) -> VGroup:
            return text_row(texts, self.THRESHOLD_COLUMNS, color=colour)

        def right_row(texts, colour=style.TEXT) -> VGroup:
            return text_row(texts, self.HALFWAY_COLUMNS, color=colour)

        threshold_head = left_row(("η·λ陡", f"{f['stable_steps'].text} 步后陡方向", ""), style.MUTED)
        threshold_rows = VGroup(
            left_row(
                (f"{f['lr_under'].text}（−{f['margin'].text}）", f"×{f['shrink'].text}", "收敛"), style.VERDICT_GOOD
            ),
            left_row((f"{f['threshold'].text}（门槛）", "", "")),
            left_row((f"{f['lr_over'].text}（+{f['margin'].text}）", f"×{f['grow'].text}", "发散"), style.VERDICT_BAD),
        )
        left = VGroup(threshold_head, *threshold_rows).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
        left.move_to(self.THRESHOLD_CENTRE)
        halfway_head = VGroup(
            style.zh("走到一半要几步", size=style.LABEL_SIZE, color=style.MUTED),
            right_row(("陡峭比", "公式", "真跑"), style.MUTED),
        )
        halfway_head.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
        halfway_rows = VGroup(
            right_row((f["kappa"].text, f["halfway"].text, f["halfway_run"].text), style.VERDICT_GOOD),
            right_row((f["kappa_far"].text, f["halfway_far"].text, "外推"), style.HIGHLIGHT),
        )
        right = VGroup(halfway_head, *halfway_rows).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_M)
        right.move_to(self.HALFWAY_CENTRE)
        return {
            "threshold_head": threshold_head,
            "threshold_rows": threshold_rows,
            "halfway_head": halfway_head,
            "halfway_rows": halfway_rows,
        }


# -- optimal_step_parabola ----------------------------------------------------------------
class OptimalStepParabola(LectureScene):
    """On f = a·x², |f′| / f″ is the distance to the bottom: two parabolas, four numbers each."""

    PLOT_CENTRE = np.array((-3.5, -0.1, 0))  # the x axis and its name above the caption band
    TABLE = (Column(1.0, LEFT), Column(4.4, ORIGIN), Column(6.0, ORIGIN))  # quantity, the gentle one, the steep one
    TABLE_TOP, ROW_PITCH = 2.35, 0.62  # the header's centre; row to row
    LESSON = np.array((3.9, -1.4, 0))  # the optimal-step rule, under the table; the optimizers under it

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        axes = sketch_axes([-4, 4, 1], [-0.3, 8.5, 1], 6.4, 5.0).move_to(self.PLOT_CENTRE)
        x_name = style.zh("x", size=style.LABEL_SIZE, color=style.MUTED).next_to(axes.x_axis, RIGHT, buff=style.GAP_S)
        curves = {
            name: curve_through(axes, self._clip(facts[f"{name}_curve"].value), style.DATA, 4)
            for name in ("gentle", "steep")
        }
        table = self._quantities()
        with self.narrate("opt_question") as beat:
            self.play(Create(axes), FadeIn(x_name), run_time=beat.share(0.3))
            self.play(Create(curves["gentle"]), run_time=beat.share(0.5))

        marks = {name: self._marks(axes, name) for name in ("gentle", "steep")}
        with self.narrate("opt_gentle") as beat:
            self.play(FadeIn(table["head"][0], table["names"]), run_time=beat.share(0.15))
            self.play(
                FadeIn(marks["gentle"]["point"], scale=2),
                FadeIn(table["gentle"][:2]),
                FadeIn(table["head"][1]),
                run_time=beat.share(0.3),
            )
            self.play(Create(marks["gentle"]["tangent"]), FadeIn(table["gentle"][2]), run_time=beat.share(0.25))
            self.play(FadeIn(table["gentle"][3]), run_time=beat.share(0.2))

        with self.narrate("opt_ratio") as beat:
            self.play(FadeIn(table["gentle"][4]), run_time=beat.share(0.25))
            self.play(
                GrowArrow(marks["gentle"]["step"]), FadeIn(marks["gentle"]["step_label"]), run_time=beat.share(0.35)
            )
            self.play(
                Create(marks["gentle"]["drop"]),
                Indicate(marks["gentle"]["bottom"], scale_factor=2),
                run_time=beat.share(0.25),
            )

        with self.narrate("opt_steep") as beat:
            self.play(
                Create(curves["steep"]),
                FadeIn(marks["steep"]["point"], scale=2),
                FadeIn(table["head"][2]),
                FadeIn(table["steep"][:2]),
                run_time=beat.share(0.25),
            )
            self.play(Create(marks["steep"]["tangent"]), FadeIn(table["steep"][2]), run_time=beat.share(0.2))
            self.play(FadeIn(table["steep"][3]), FadeIn(table["steep"][4]), run_time=beat.share(0.2))
            self.play(
                GrowArrow(marks["steep"]["step"]), FadeIn(marks["steep"]["step_label"]), run_time=beat.share(0.25)
            )

        with self.narrate("opt_lesson") as beat:
            slopes = VGroup(table["gentle"][2], table["steep"][2])
            steps = VGroup(table["gentle"][4], table["steep"][4])
            self.play(Indicate(slopes, color=style.BACKWARD), run_time=beat.share(0.4))
            self.play(Indicate(steps, color=style.HIGHLIGHT), run_time=beat.share(0.4))

        with self.narrate("opt_denominator") as beat:
            best = VGroup(
                style.zh("最优步长 = |f′| ÷", size=style.BODY_SIZE),
                style.zh("f″", size=style.BODY_SIZE, color=style.HIGHLIGHT),
            ).arrange(RIGHT, buff=style.GAP_M)
            best.move_to(self.LESSON)
            box = SurroundingRectangle(best[1], color=style.HIGHLIGHT, buff=style.GAP_S)
            guess = style.caption_stack(
                "AdaGrad、RMSProp、Adam", "都在用过去的 f′ 猜这个分母", size=style.LABEL_SIZE, color=style.HIGHLIGHT
            )
            guess.next_to(best, DOWN, buff=0.25)
            self.play(Write(best), run_time=beat.share(0.3))
            self.play(Create(box), FadeIn(guess, shift=0.2 * UP), run_time=beat.share(0.35))
        self.finish()

    @staticmethod
    def _clip(rows, top: float = 8.5) -> np.ndarray:
        """The rows of a sampled curve that stay under the plot's top."""
        return rows[rows[:, 1] <= top]

    def _marks(self, axes, name) -> dict[str, Mobject]:
        """The point, its tangent (slope f′), the optimal step |f′|/f″ and where it lands."""
        f = self.facts
        x, slope, step = f[f"{name}_x"].value, f[f"{name}_slope"].value, f[f"{name}_step"].value
        height = float(np.interp(x, *f[f"{name}_curve"].value.T))
        here = axes.c2p(x, height)
        point = Dot(here, radius=0.09, color=style.TEXT)
        along = axes.c2p(x + 1, height + slope) - here
        along = 1.2 * along / np.linalg.norm(along)
        tangent = Line(here - along, here + along, color=style.BACKWARD, stroke_width=5)
        land = x - np.sign(slope) * step
        arrow = h_arrow(here, axes.c2p(land, height), style.HIGHLIGHT)
        label = style.zh(f[f"{name}_step"].text, size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        label.next_to(arrow.point_from_proportion(0.3 if step > 2 else 0.6), UP, buff=style.GAP_SM)
        bottom = Dot(axes.c2p(land, 0), radius=0.07, color=style.HIGHLIGHT)
        drop = DashedLine(axes.c2p(land, height), axes.c2p(land, 0), color=style.HIGHLIGHT, stroke_width=2)
        return {
            "point": point,
            "tangent": tangent,
            "step": arrow,
            "step_label": label,
            "drop": VGroup(drop, bottom),
            "bottom": bottom,
        }

    QUANTITIES = (  # each row: its name, its facts' key, its colour
        ("a", "a", style.TEXT),
        ("x", "x", style.TEXT),
        ("f′ = 2ax", "slope", style.BACKWARD),
        ("f″ = 2a", "curvature", style.TEXT),
        ("|f′| ÷ f″", "step", style.HIGHLIGHT),
    )

    def _quantities(self) -> dict[str, VGroup]:
        """One row per quantity, one column per parabola; ``table["gentle"][k]`` is row k of that column."""
        f = self.facts
        head, rows = widgets.table(
            ("", "缓的", "陡的"),
            [(name, f[f"gentle_{key}"].text, f[f"steep_{key}"].text) for name, key, _ in self.QUANTITIES],
            self.TABLE,
            self.TABLE_TOP,
            self.ROW_PITCH,
            colors=[colour for _, _, colour in self.QUANTITIES],
        )
        names, gentle, steep = (VGroup(*(row[c] for row in rows)) for c in range(3))
        return {"names": names, "head": head, "gentle": gentle, "steep": steep}
