"""The shared staging pieces in scenes/widgets.py: table rows, sketch axes, the verdict badge, a played schedule."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def widgets():
    from scenes import widgets as module

    return module


def test_a_row_hangs_each_cell_on_its_column(widgets):
    from manim import LEFT, ORIGIN, RIGHT, Square

    columns = (widgets.Column(-3.0, LEFT), widgets.Column(0.5, ORIGIN), widgets.Column(4.0, RIGHT))
    row = widgets.grid_row([Square(0.4), Square(1.0), Square(0.6)], columns, y=1.25)
    assert np.isclose(row[0].get_left()[0], -3.0)
    assert np.isclose(row[1].get_x(), 0.5)
    assert np.isclose(row[2].get_right()[0], 4.0)
    assert all(np.isclose(cell.get_y(), 1.25) for cell in row)


def test_an_empty_cell_keeps_the_columns_numbered(widgets):
    from manim import LEFT

    columns = tuple(widgets.Column(x, LEFT) for x in (0.0, 2.0, 4.0))
    row = widgets.text_row(("甲", "", "丙"), columns, y=-0.5)
    assert len(row) == 3
    assert np.isclose(row[2].get_left()[0], 4.0)
    assert len(row[1].get_all_points()) == 0  # a placeholder: no room taken
    with pytest.raises(ValueError, match="a row of 4 cells on a table of"):
        widgets.grid_row([None] * 4, columns)


def test_sketch_axes_have_no_ticks_and_can_hide_their_lines(widgets):
    axes = widgets.sketch_axes([0, 4, 1], [0, 2, 1], 4.0, 2.0)
    assert not any(len(getattr(line, "ticks", ())) for line in (axes.x_axis, axes.y_axis))
    assert len(widgets.sketch_axes([0, 4, 1], [0, 2, 1], 4.0, 2.0, ticks=True).x_axis.ticks) > 0
    hidden = widgets.sketch_axes([0, 4, 1], [0, 2, 1], 4.0, 2.0, visible=False)
    assert hidden.x_axis.get_stroke_opacity() == 0
    # the coordinates are the same, seen or not
    assert np.allclose(hidden.c2p(1, 1), axes.c2p(1, 1))


def test_a_verdict_puts_its_answer_first_and_hangs_under_its_cells(widgets):
    from manim import Square

    cells = Square(1.0)
    badge = widgets.verdict("能", "#83C167", "舍入即得", under=cells)
    assert badge[0].text == "能"
    assert badge[0].get_y() > badge[1].get_y()
    assert badge.get_top()[1] < cells.get_bottom()[1]
    row = widgets.verdict("相差 7.9×", "#83C167", "常驻", across=True)
    assert row[1].text == "常驻"
    assert row[1].get_x() < row[0].get_x()


def test_corner_axes_meet_at_the_lower_left_of_their_ranges(widgets):
    axes = widgets.sketch_axes([0, 3, 1], [-2, 1, 1], 6.0, 3.0, corner=True)
    assert np.allclose(axes.x_axis.get_start(), axes.c2p(0, -2))  # the x axis runs along y = −2, not y = 0
    assert np.allclose(axes.y_axis.get_start(), axes.c2p(0, -2))
    assert np.isclose(axes.c2p(3, 1)[0] - axes.c2p(0, 1)[0], 6.0)


def test_tick_labels_sit_under_and_left_of_their_ticks(widgets):
    axes = widgets.sketch_axes([0, 3, 1], [-2, 1, 1], 6.0, 3.0, ticks=True, corner=True)
    labels = widgets.tick_labels(axes, x=[(1, "10")], y=[(0, "1")])
    assert labels[0].text == "10"
    assert np.isclose(labels[0].get_x(), axes.c2p(1, -2)[0])
    assert labels[0].get_top()[1] < axes.x_axis.get_y()
    assert labels[1].get_right()[0] < axes.y_axis.get_x()
    assert np.isclose(labels[1].get_y(), axes.c2p(0, 0)[1])


def test_line_through_keeps_a_step_square(widgets):
    axes = widgets.sketch_axes([0, 2, 1], [0, 1, 1], 2.0, 1.0)
    step = widgets.line_through(axes, [(0, 1), (1, 1), (1, 0.5), (2, 0.5)], "#FFFFFF")
    corners = [axes.p2c(p) for p in step.get_anchors()]
    assert any(np.allclose(c, (1, 0.5)) for c in corners)  # the drop is a corner, not a curve


def test_steepest_step_tips_on_the_ball_and_its_level_line_is_square_to_the_gradient(widgets):
    centre = np.array((1.0, -0.5, 0.0))
    arrow, level = widgets.steepest_step(centre, 1.2, (0.6, -0.8), (-3.0, 4.0), "#FFFFFF")
    assert np.allclose(arrow.get_end(), centre + 1.2 * np.array((0.6, -0.8, 0.0)), atol=1e-6)
    along = level.get_end() - level.get_start()
    assert np.isclose(along[:2] @ np.array((-3.0, 4.0)), 0.0, atol=1e-6)
    assert widgets.norm_ball("square", centre, 1.2).width == pytest.approx(2.4)
    with pytest.raises(ValueError, match="not 'diamond'"):
        widgets.norm_ball("diamond", centre, 1.0)


# -- a pipeline schedule, played -----------------------------------------------------------


@pytest.fixture(scope="module")
def gpipe():
    from tools.course import catalogue

    return catalogue.facts("pipeline_gpipe")["timeline"].value


def test_lanes_draw_an_op_up_to_the_playhead_and_nothing_after(widgets, gpipe):
    lanes = widgets.ScheduleLanes(gpipe, width=6.6)
    unit = 6.6 / gpipe["makespan"]
    first = lanes.ops[0][0][0]  # F0 on rank 0, from 0 to 1
    lanes.show_until(0.5)
    assert np.isclose(first.width, 0.5 * unit)
    assert first.get_fill_opacity() > 0
    later = lanes.ops[0][-1][0]  # its last B, not started at 0.5
    assert later.get_fill_opacity() == 0
    lanes.show_all()
    assert np.isclose(first.width, unit)
    assert np.isclose(later.width, 2 * unit)
    assert np.isclose(lanes.x_of(gpipe["makespan"]) - lanes.x_of(0), 6.6)


def test_bars_follow_the_in_flight_count_and_keep_their_peak(widgets, gpipe):
    bars = widgets.InFlightBars(gpipe["in_flight"], unit=0.2)
    forwards_done = max(s["end"] for s in gpipe["slots"] if s["op"] == "F")
    bars.show_at(forwards_done)
    assert np.isclose(bars.bars[0].height, 8 * 0.2)  # GPipe holds all m = 8 before the first B
    bars.show_at(gpipe["makespan"])
    assert bars.bars[0].get_fill_opacity() == 0  # all released
    assert np.isclose(bars.peaks[0].get_y() - bars.base.get_y(), 8 * 0.2)


def test_the_meter_ends_at_the_bubble_fraction(widgets, gpipe):
    from tools.course import catalogue

    meter = widgets.BubbleMeter(gpipe, width=5.0)
    meter.show_until(gpipe["makespan"])
    bubble = catalogue.facts("pipeline_gpipe")["bubble"].value
    assert np.isclose(meter.fill.width, 5.0 * bubble)
    assert np.isclose(meter.end_x() - meter.frame.get_left()[0], 5.0 * bubble)
