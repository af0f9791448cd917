"""Staging pieces more than one figure uses: sketch axes and tick labels, table rows, the rolling
ball, the unit balls of a norm, the byte ledger's row and slivers, the verdict badge.

``style`` says how things look (palette, type, text); this module builds the
recurring pieces out of it, so a figure's ``construct`` only places and moves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    Arrow,
    Axes,
    Circle,
    DashedLine,
    Dot,
    Mobject,
    Rectangle,
    Square,
    UpdateFromAlphaFunc,
    VGroup,
    VMobject,
    linear,
    np,
)

from scenes import style

# -- sketch axes ---------------------------------------------------------------------------


class _CornerAxes(Axes):
    """Axes that meet at the lower-left corner of their ranges, wherever 0 is.

    manim puts each axis through the other's 0; on a log axis (0 is 10⁰) or a range that
    does not start at 0 that draws the x axis through the middle of the data. Both the
    axis placement and ``c2p`` go through ``_origin_shift``, so they stay consistent.
    """

    @staticmethod
    def _origin_shift(axis_range: Sequence[float]) -> float:
        return axis_range[0]


def sketch_axes(x_range: Sequence[float], y_range: Sequence[float], x_length: float, y_length: float, *,
                tips: bool = False, ticks: bool = False, visible: bool = True, corner: bool = False) -> Axes:
    """Muted axes in the course's sketch style: no ticks (no scale, see the figure standard), no tips.

    ``ticks=True`` is for the rare data axis that carries a scale; ``visible=False`` keeps only
    the coordinate system, for a curve that stands on its own (its lines are drawn at zero opacity);
    ``corner=True`` makes the axes meet at the ranges' lower-left corner (log axes, offset ranges).
    """
    line = {"color": style.MUTED, "stroke_width": 2, "include_ticks": ticks}
    if not visible:
        line["stroke_opacity"] = 0
    kind = _CornerAxes if corner else Axes
    return kind(x_range=list(x_range), y_range=list(y_range), x_length=x_length, y_length=y_length, tips=tips,
                axis_config=line)


def tick_labels(axes: Axes, x=(), y=(), size: float = style.SMALL_SIZE) -> VGroup:
    """Labels of a data axis's ticks: (position, text) pairs (a fact's value), under the x axis
    and left of the y axis. The text is the fact's, so a log axis reads 1, 10, 100 at 0, 1, 2."""
    labels = VGroup()
    for at, text in x:
        labels.add(style.zh(text, size=size, color=style.MUTED).next_to(axes.x_axis.n2p(at), DOWN, buff=style.GAP_S))
    for at, text in y:
        labels.add(style.zh(text, size=size, color=style.MUTED).next_to(axes.y_axis.n2p(at), LEFT, buff=style.GAP_S))
    return labels


def curve_through(axes: Axes, samples, color: str, width: float = 4) -> VMobject:
    """A smooth curve through sampled (x, y) rows, in the axes' coordinates."""
    return VMobject(stroke_color=color, stroke_width=width).set_points_smoothly(
        [axes.c2p(x, y) for x, y in samples])


def line_through(axes: Axes, samples, color: str, width: float = 4) -> VMobject:
    """Straight segments through sampled (x, y) rows: for data with corners, steps or noise, which
    smoothing would round off (a schedule's drop, a run's per-step ratio)."""
    return VMobject(stroke_color=color, stroke_width=width).set_points_as_corners(
        [axes.c2p(x, y) for x, y in samples])


# -- tables --------------------------------------------------------------------------------


class Column(NamedTuple):
    """One table column: the x its cells hang on, and which point of a cell sits there.

    ``align`` is LEFT (cells start at x), RIGHT (cells end at x) or ORIGIN (cells are centred on x).
    A figure names its columns once, as a tuple on the scene class.
    """

    x: float
    align: np.ndarray = LEFT


def grid_row(cells: Sequence[Mobject | None], columns: Sequence[Column], y: float = 0.0) -> VGroup:
    """One table row: cell i on column i, its centre at height y.

    A None cell leaves its column empty (an empty placeholder keeps ``row[i]`` as column i).
    """
    if len(cells) > len(columns):
        raise ValueError(f"a row of {len(cells)} cells on a table of {len(columns)} columns")
    row = VGroup()
    for cell, column in zip(cells, columns):
        if cell is None:
            cell = VMobject()  # no points: it takes no room and moves with nothing
        else:
            cell.move_to((column.x, y, 0), aligned_edge=column.align)
        row.add(cell)
    return row


def text_row(texts: Sequence[str], columns: Sequence[Column], y: float = 0.0, *, size: float = style.LABEL_SIZE,
             color: str = style.TEXT) -> VGroup:
    """A row of text cells in one size and colour; an empty string leaves its column empty."""
    return grid_row([style.zh(t, size=size, color=color) if t else None for t in texts], columns, y)


# -- the rolling ball ----------------------------------------------------------------------

BALL_RADIUS = 0.13


def ball(color: str, radius: float = BALL_RADIUS) -> Dot:
    """A ball on a loss curve or a map, ringed in the background colour so it reads over a line."""
    return Dot(radius=radius, color=color).set_stroke(style.BACKGROUND, 2)


def ball_route(axes: Axes, route) -> np.ndarray:
    """Where a ball goes on screen: each (x, L(x)) row of a simulated route, through the axes."""
    return np.array([axes.c2p(x, y) for x, y in route])


def roll(ball: Mobject, points: np.ndarray, **kwargs) -> UpdateFromAlphaFunc:
    """Move a ball through `points`, the same time for each stretch between two of them."""
    last = len(points) - 1

    def place(mob, alpha):
        s = alpha * last
        i = min(int(s), last - 1)
        mob.move_to(points[i] + (s - i) * (points[i + 1] - points[i]))

    return UpdateFromAlphaFunc(ball, place, rate_func=linear, **kwargs)


def reveal(marks: VGroup, first: int, last: int, **kwargs) -> UpdateFromAlphaFunc:
    """Show marks[first..last] one by one, in step with a `roll` over the same stretch."""

    def show(group, alpha):
        upto = first + alpha * (last - first)
        for i, mark in enumerate(group):
            if first <= i:
                mark.set_opacity(1.0 if i <= upto + 1e-9 else 0.0)

    return UpdateFromAlphaFunc(marks, show, rate_func=linear, **kwargs)


def h_arrow(start, end, color: str, width: float = 5) -> Arrow:
    """A step drawn as an arrow to scale: no buffer, and a tip that stays small on a short step."""
    return Arrow(start, end, buff=0, color=color, stroke_width=width, max_tip_length_to_length_ratio=0.3,
                 max_stroke_width_to_length_ratio=12)


# -- steepest descent under a norm -------------------------------------------------------------


def norm_ball(kind: str, centre, radius: float, color: str = style.TEXT) -> VMobject:
    """The unit ball a step is measured by, drawn at `centre`: "circle" (length) or "square" (largest entry)."""
    if kind == "circle":
        return Circle(radius=radius, color=color, stroke_width=3).move_to(centre)
    if kind == "square":
        return Square(side_length=2 * radius, color=color, stroke_width=3).move_to(centre)
    raise ValueError(f"a norm ball is a 'circle' or a 'square', not {kind!r}")


def steepest_step(centre, radius: float, direction, gradient, color: str) -> tuple[Arrow, DashedLine]:
    """The steepest step on a ball's boundary (`direction`, a tools fact) and the lowest level
    line it reaches: perpendicular to the gradient, through the arrow's tip."""
    centre = np.asarray(centre, dtype=float)
    tip = centre + radius * np.array((*direction, 0.0))
    arrow = Arrow(centre, tip, buff=0, color=color, stroke_width=6)
    g = np.asarray(gradient, dtype=float)
    along = np.array((-g[1], g[0], 0.0)) / np.linalg.norm(g)
    level = DashedLine(tip - 1.3 * along, tip + 1.3 * along, color=style.BACKWARD, stroke_width=3)
    return arrow, level


# -- the byte ledger -----------------------------------------------------------------------


class LedgerRow(VGroup):
    """The byte ledger of one parameter: a row of cells, each as wide as its bytes.

    `cells` is the value of a ledger fact (``tools.chapters.ledger.row_fact``): dicts
    with key, label, short, precision, bytes, factored and text. Cells are
    coloured by precision; ``row.cell("m")`` returns one cell (box, label,
    bytes) to move, recolour, shrink or remove. A narrow cell shows its
    short label; a factored cell (about 0 bytes) is a sliver with its text
    underneath.
    """

    SLIVER = 0.08  # width of a factored cell, which holds about 0 bytes per parameter

    def __init__(self, cells: list[dict], unit: float = 0.55, height: float = 0.9,
                 label_size: float = style.SMALL_SIZE, **kwargs):
        super().__init__(**kwargs)
        self.keys = []
        for cell in cells:
            colour = style.PRECISION[cell["precision"]]
            factored = cell.get("factored", False)
            box = Rectangle(width=self.SLIVER if factored else cell["bytes"] * unit, height=height,
                            stroke_color=style.TEXT, stroke_width=2, fill_color=colour, fill_opacity=0.55)
            label = style.zh(cell["label"], size=label_size)
            if label.width > box.width - 0.1 and "short" in cell:
                label = style.zh(cell["short"], size=label_size)
            if label.width > box.width - 0.1 and not factored:
                label.scale_to_fit_width(box.width - 0.1)
            size = style.zh(cell["text"], size=label_size, color=style.TEXT)
            text = VGroup(label, size).arrange(DOWN, buff=0.08)  # inside a cell: tighter than any gap
            if factored:
                text.next_to(box, DOWN, buff=style.GAP_S)
            else:
                text.move_to(box)
            if len(self):  # cells abut box to box (a factored cell's text may stick out below)
                text.shift(self[-1][0].get_right() - box.get_left())
                box.shift(self[-1][0].get_right() - box.get_left())
            self.add(VGroup(box, label, size))
            self.keys.append(cell["key"])
        self.shift(-VGroup(*(group[0] for group in self)).get_center())

    def cell(self, key: str) -> VGroup:
        return self[self.keys.index(key)]

    def boxes(self) -> VGroup:
        """The cells' boxes only: what to line up with, whatever text hangs below a sliver."""
        return VGroup(*(group[0] for group in self))


def slivers(box: Rectangle, parts: int) -> VGroup:
    """A ledger cell's box cut into `parts` equal vertical slivers, laid over it (ZeRO's cut)."""
    pieces = VGroup(*(Rectangle(width=box.width / parts, height=box.height, stroke_color=style.TEXT,
                                stroke_width=0.5, fill_color=box.get_fill_color(), fill_opacity=box.get_fill_opacity())
                      for _ in range(parts)))
    return pieces.arrange(RIGHT, buff=0).move_to(box)


# -- verdicts ------------------------------------------------------------------------------

ACROSS_GAP = 0.8  # between a verdict's subject and its answer, when they sit side by side


def verdict(answer: str, color: str, note: str, *, under: Mobject | None = None, size: float = style.LABEL_SIZE,
            across: bool = False) -> VGroup:
    """A verdict badge: the answer in its colour, with a few words beside it. ``badge[0]`` is the answer.

    Stacked (the default), it hangs under the cells it judges (`under`): the answer on
    top, the note that says why under it, smaller and plain (「能」 over 「舍入即得」).
    Across, it is one row of a table of verdicts: the note is the row's muted subject,
    at the answer's size, and the answer follows it (「常驻　相差 14×」).
    """
    answer_text = style.zh(answer, size=size, color=color)
    if across:
        subject = style.zh(note, size=size, color=style.MUTED)
        badge = VGroup(answer_text, subject.next_to(answer_text, LEFT, buff=ACROSS_GAP))
    else:
        badge = VGroup(answer_text, style.zh(note, size=style.SMALL_SIZE)).arrange(DOWN, buff=style.GAP_S)
    if under is not None:
        badge.next_to(under, DOWN, buff=style.GAP_M)
    return badge

