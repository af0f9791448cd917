"""Staging pieces more than one figure uses: sketch axes and tick labels, tables, bars, blocks and
panels, the rolling ball, the unit balls of a norm, the byte ledger's row and slivers, the verdict badge, a pipeline
schedule's lanes, bars and meter.

``style`` says how things look (palette, type, text); this module builds the
recurring pieces out of it, so a figure's ``construct`` only places and moves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    Arrow,
    Axes,
    Circle,
    DashedLine,
    Dot,
    Line,
    ManimColor,
    Mobject,
    Rectangle,
    RoundedRectangle,
    Square,
    UpdateFromAlphaFunc,
    VGroup,
    VMobject,
    interpolate_color,
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


def sketch_axes(
    x_range: Sequence[float],
    y_range: Sequence[float],
    x_length: float,
    y_length: float,
    *,
    tips: bool = False,
    ticks: bool = False,
    visible: bool = True,
    corner: bool = False,
) -> Axes:
    """Muted axes in the course's sketch style: no ticks (no scale, see the figure standard), no tips.

    ``ticks=True`` is for the rare data axis that carries a scale; ``visible=False`` keeps only
    the coordinate system, for a curve that stands on its own (its lines are drawn at zero opacity);
    ``corner=True`` makes the axes meet at the ranges' lower-left corner (log axes, offset ranges).
    """
    line = {"color": style.MUTED, "stroke_width": 2, "include_ticks": ticks}
    if not visible:
        line["stroke_opacity"] = 0
    kind = _CornerAxes if corner else Axes
    return kind(
        x_range=list(x_range), y_range=list(y_range), x_length=x_length, y_length=y_length, tips=tips, axis_config=line
    )


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
    return VMobject(stroke_color=color, stroke_width=width).set_points_smoothly([axes.c2p(x, y) for x, y in samples])


def line_through(axes: Axes, samples, color: str, width: float = 4) -> VMobject:
    """Straight segments through sampled (x, y) rows: for data with corners, steps or noise, which
    smoothing would round off (a schedule's drop, a run's per-step ratio)."""
    return VMobject(stroke_color=color, stroke_width=width).set_points_as_corners([axes.c2p(x, y) for x, y in samples])


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


def text_row(
    texts: Sequence[str],
    columns: Sequence[Column],
    y: float = 0.0,
    *,
    size: float = style.LABEL_SIZE,
    color: str = style.TEXT,
) -> VGroup:
    """A row of text cells in one size and colour; an empty string leaves its column empty."""
    return grid_row([style.zh(t, size=size, color=color) if t else None for t in texts], columns, y)


def table(
    header: Sequence[str] | None,
    rows: Sequence[Sequence[str | Mobject | None]],
    columns: Sequence[Column],
    top: float,
    pitch: float,
    *,
    size: float = style.LABEL_SIZE,
    colors: Sequence[str] | None = None,
    header_gap: float | None = None,
) -> VGroup:
    """A table: a muted header row at ``top`` (None for none), then one row per pitch below it.

    A cell is a string (set in ``size``, in its row's colour from ``colors``) or a ready mobject.
    ``header_gap`` is the header-to-first-row distance, when it differs from the pitch. Returns
    VGroup(header, body): ``table[1][i]`` is row i, ``table[1][i][j]`` its cell in column j.
    """
    head = text_row(header, columns, top, size=size, color=style.MUTED) if header else VGroup()
    first = top - (pitch if header_gap is None else header_gap) if header else top
    body = VGroup()
    for i, cells in enumerate(rows):
        color = colors[i] if colors else style.TEXT
        made = [style.zh(c, size=size, color=color) if isinstance(c, str) and c else c or None for c in cells]
        body.add(grid_row(made, columns, first - pitch * i))
    return VGroup(head, body)


# -- bars, blocks and panels ---------------------------------------------------------------


def bar(width: float, height: float, color: str, *, opacity: float = style.FILL_SOLID, **kwargs) -> Rectangle:
    """A filled bar read by its length: no outline unless ``kwargs`` give one (stroke_color=...)."""
    kwargs.setdefault("stroke_width", 0)
    return Rectangle(width=width, height=height, fill_color=color, fill_opacity=opacity, **kwargs)


def block(
    width: float,
    height: float,
    color: str,
    label: str = "",
    *,
    opacity: float = style.FILL_SOFT,
    size: float = style.SMALL_SIZE,
    label_color: str = style.TEXT,
    **kwargs,
) -> VGroup:
    """A filled box with its label centred on it: VGroup(box) or VGroup(box, label).

    The outline is the fill's colour, 2 wide, unless ``kwargs`` say otherwise (stroke_color=...).
    """
    kwargs.setdefault("stroke_color", color)
    kwargs.setdefault("stroke_width", 2)
    box = Rectangle(width=width, height=height, fill_color=color, fill_opacity=opacity, **kwargs)
    if not label:
        return VGroup(box)
    return VGroup(box, style.zh(label, size=size, color=label_color).move_to(box))


def panel(width: float, height: float, *, corner_radius: float = 0.12, stroke_width: float = 1.5) -> RoundedRectangle:
    """A rounded panel in the panel colour, a muted outline round it: a sub-figure's ground."""
    return RoundedRectangle(
        width=width,
        height=height,
        corner_radius=corner_radius,
        stroke_width=stroke_width,
        stroke_color=style.MUTED,
        fill_color=style.PANEL,
        fill_opacity=1,
    )


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

    def place(mob, alpha) -> None:
        s = alpha * last
        i = min(int(s), last - 1)
        mob.move_to(points[i] + (s - i) * (points[i + 1] - points[i]))

    return UpdateFromAlphaFunc(ball, place, rate_func=linear, **kwargs)


def reveal(marks: VGroup, first: int, last: int, **kwargs) -> UpdateFromAlphaFunc:
    """Show marks[first..last] one by one, in step with a `roll` over the same stretch."""

    def show(group, alpha) -> None:
        upto = first + alpha * (last - first)
        for i, mark in enumerate(group):
            if first <= i:
                mark.set_opacity(1.0 if i <= upto + 1e-9 else 0.0)

    return UpdateFromAlphaFunc(marks, show, rate_func=linear, **kwargs)


def h_arrow(start, end, color: str, width: float = 5) -> Arrow:
    """A step drawn as an arrow to scale: no buffer, and a tip that stays small on a short step."""
    return Arrow(
        start,
        end,
        buff=style.FLUSH,
        color=color,
        stroke_width=width,
        max_tip_length_to_length_ratio=0.3,
        max_stroke_width_to_length_ratio=12,
    )


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
    arrow = Arrow(centre, tip, buff=style.FLUSH, color=color, stroke_width=6)
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

    def __init__(
        self, cells: list[dict], unit: float = 0.55, height: float = 0.9, label_size: float = style.SMALL_SIZE, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.keys = []
        for cell in cells:
            colour = style.PRECISION[cell["precision"]]
            factored = cell.get("factored", False)
            box = Rectangle(
                width=self.SLIVER if factored else cell["bytes"] * unit,
                height=height,
                stroke_color=style.TEXT,
                stroke_width=2,
                fill_color=colour,
                fill_opacity=0.55,
            )
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
    pieces = VGroup(
        *(
            Rectangle(
                width=box.width / parts,
                height=box.height,
                stroke_color=style.TEXT,
                stroke_width=0.5,
                fill_color=box.get_fill_color(),
                fill_opacity=box.get_fill_opacity(),
            )
            for _ in range(parts)
        )
    )
    return pieces.arrange(RIGHT, buff=style.FLUSH).move_to(box)


# -- verdicts ------------------------------------------------------------------------------

ACROSS_GAP = 0.8  # between a verdict's subject and its answer, when they sit side by side


def verdict(
    answer: str,
    color: str,
    note: str,
    *,
    under: Mobject | None = None,
    size: float = style.LABEL_SIZE,
    across: bool = False,
) -> VGroup:
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


# -- pipeline schedules --------------------------------------------------------------------


def op_color(op: str, chunk: int = 0, chunks: int = 1) -> str:
    """F blue, B red-orange, W brick; a rank's second chunk in a lighter shade of the same colour."""
    base = {"F": style.FORWARD, "B": style.BACKWARD, "W": style.WEIGHT_GRAD}[op]
    lighter = 0.45 if chunk > 0 and chunks > 1 else 0.0
    return interpolate_color(ManimColor(base), ManimColor(style.TEXT), lighter).to_hex()


def _revealable(box: Rectangle) -> Rectangle:
    """Remember a box's full width and opacities, so :func:`_reveal` can draw part of it."""
    box.full = (box.width, box.get_fill_opacity(), box.get_stroke_opacity())
    return box


def _reveal(box: Rectangle, shown: float) -> None:
    """Draw a box from its left edge to `shown` (0 … 1) of its full width; nothing at 0."""
    width, fill, stroke = box.full
    box.stretch_to_fit_width(max(shown, 1e-3) * width, about_edge=LEFT)
    box.set_fill(opacity=fill if shown > 0 else 0).set_stroke(opacity=stroke if shown > 0 else 0)


class ScheduleLanes(VGroup):
    """A simulated pipeline schedule on rank lanes, drawn so it can be *played*.

    `timeline` is the value of a timeline fact (``tools.chapters.pipeline._timeline``):
    ranks, makespan, slots (rank, op, name, micro, chunk, start, end, paired_chunk),
    idle stretches and in-flight steps per rank. Lane r is rank r, top to bottom; x is
    time, `width` long for the whole makespan (or for `span` time units, so that two
    timelines share one scale). Ops and bubbles start hidden; :meth:`show_until`
    reveals what ran before time τ, a running op drawn up to τ.

    ``lanes.lanes`` are the lane backgrounds, ``lanes.names`` the rank labels,
    ``lanes.ops`` and ``lanes.bubbles`` one group per rank.
    """

    LABEL_MIN = 0.2  # an op narrower than this carries no micro-batch number

    def __init__(
        self,
        timeline: dict,
        width: float,
        lane_height: float = 0.5,
        pitch: float = 0.62,
        *,
        span: float | None = None,
        numbers: bool = True,
        names: bool = True,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.timeline, self.unit = timeline, width / (span or timeline["makespan"])
        self.lane_height, self.pitch = lane_height, pitch
        ranks, chunks = timeline["ranks"], timeline["chunks"]
        self.lanes = VGroup(
            *(
                Rectangle(
                    width=timeline["makespan"] * self.unit,
                    height=lane_height,
                    stroke_width=0,
                    fill_color=style.PANEL,
                    fill_opacity=1,
                ).move_to(self._at(0, r), aligned_edge=LEFT)
                for r in range(ranks)
            )
        )
        self.names = VGroup(
            *(
                style.zh(f"卡 {r}", size=style.SMALL_SIZE, color=style.MUTED).next_to(
                    self.lanes[r], LEFT, buff=style.GAP_M
                )
                for r in range(ranks)
            )
        )
        self._spans: list[tuple[Mobject, float, float]] = []  # (piece, start, end)
        self.ops = VGroup(*(VGroup() for _ in range(ranks)))
        for slot in timeline["slots"]:
            self.ops[slot["rank"]].add(self._op(slot, chunks, numbers))
        self.bubbles = VGroup(*(VGroup() for _ in range(ranks)))
        for r, stretches in enumerate(timeline["idle"]):
            for a, b in stretches:
                box = self._box(a, b, r, style.MUTED, 0.35)
                self.bubbles[r].add(box)
                self._spans.append((box, a, b))
        self.add(self.lanes, *([self.names] if names else []), self.bubbles, self.ops)
        self.show_until(0.0)

    def _at(self, t: float, rank: int) -> np.ndarray:
        return np.array((t * self.unit, -rank * self.pitch, 0.0))

    def x_of(self, t: float) -> float:
        """The x on screen of time t (wherever the lanes have been moved)."""
        return self.lanes[0].get_left()[0] + t * self.unit

    def point_at(self, t: float, rank: int) -> np.ndarray:
        return np.array((self.x_of(t), self.lanes[rank].get_center()[1], 0.0))

    def _box(self, a: float, b: float, rank: int, color: str, opacity: float, height: float | None = None) -> Rectangle:
        box = Rectangle(
            width=(b - a) * self.unit,
            height=height or self.lane_height,
            stroke_color=style.BACKGROUND,
            stroke_width=1.5,
            fill_color=color,
            fill_opacity=opacity,
        )
        return _revealable(box.move_to(self._at((a + b) / 2, rank)))

    def _op(self, slot: dict, chunks: int, numbers: bool) -> VGroup:
        a, b, r = slot["start"], slot["end"], slot["rank"]
        if slot["op"] == "F&B":  # an overlapped pair: F on top, its partner's B below, one outline round both
            half = self.lane_height / 2
            top = self._box(a, b, r, op_color("F", slot["chunk"], chunks), 0.9, half).shift(half / 2 * UP)
            bottom = self._box(a, b, r, op_color("B", slot["paired_chunk"], chunks), 0.9, half).shift(half / 2 * DOWN)
            outline = _revealable(
                Rectangle(
                    width=(b - a) * self.unit,
                    height=self.lane_height,
                    stroke_color=style.TEXT,
                    stroke_width=2,
                    fill_opacity=0,
                ).move_to(self._at((a + b) / 2, r))
            )
            pieces = VGroup(top, bottom, outline)
        else:
            pieces = VGroup(self._box(a, b, r, op_color(slot["op"], slot["chunk"], chunks), 0.9))
        for piece in pieces:
            self._spans.append((piece, a, b))
        if numbers and (b - a) * self.unit >= self.LABEL_MIN and slot["op"] != "F&B":
            label = style.zh(str(slot["micro"]), size=style.SMALL_SIZE - 4, color=style.BACKGROUND)
            pieces.add(label.move_to(pieces[0]))
            self._spans.append((label, (a + b) / 2, (a + b) / 2 + 1e-9))
        return pieces

    def show_until(self, tau: float) -> None:
        """Everything that ran before τ, a running op drawn up to τ; nothing after."""
        for piece, a, b in self._spans:
            shown = min(max((tau - a) / (b - a), 0.0), 1.0)
            if isinstance(piece, Rectangle):
                _reveal(piece, shown)
            else:
                piece.set_opacity(1.0 if shown > 0 else 0.0)

    def show_all(self) -> None:
        self.show_until(self.timeline["makespan"])


class InFlightBars(VGroup):
    """One bar per rank that rises and falls with how many micro-batches the rank holds at time τ.

    `steps` is a timeline fact's ``in_flight`` (per rank, (time, count) steps). A thin tick
    stays at the highest level each bar has reached. ``bars.bars``, ``bars.peaks``, ``bars.names``.
    """

    def __init__(self, steps: list, unit: float, width: float = 0.32, gap: float = 0.18, **kwargs) -> None:
        super().__init__(**kwargs)
        self.steps, self.unit, self.bar_width = steps, unit, width
        self.base = Line(ORIGIN, (len(steps) * (width + gap) - gap) * RIGHT, color=style.MUTED, stroke_width=2)
        self.bars = VGroup(
            *(
                _revealable(
                    Rectangle(width=width, height=unit, stroke_width=0, fill_color=style.FORWARD, fill_opacity=0.8)
                )
                for _ in steps
            )
        )
        self.peaks = VGroup(*(Line(ORIGIN, width * RIGHT, color=style.HIGHLIGHT, stroke_width=3) for _ in steps))
        for i, (bar, peak) in enumerate(zip(self.bars, self.peaks)):
            bar.move_to(((width + gap) * i + width / 2, unit / 2, 0))
            peak.move_to(((width + gap) * i + width / 2, 0, 0))
        self.names = VGroup(
            *(
                style.zh(str(i), size=style.SMALL_SIZE, color=style.MUTED)
                .next_to(self.base, DOWN, buff=style.GAP_S)
                .set_x(bar.get_x())
                for i, bar in enumerate(self.bars)
            )
        )
        self.add(self.base, self.bars, self.peaks, self.names)
        self.show_at(0.0)

    def show_at(self, tau: float) -> None:
        floor = self.base.get_y()
        for steps, bar, peak in zip(self.steps, self.bars, self.peaks):
            reached = [c for t, c in steps if t <= tau + 1e-9]  # the steps start at (0, 0)
            bar.stretch_to_fit_height(max(reached[-1] * self.unit, 1e-3), about_edge=DOWN)
            bar.set_fill(opacity=0.8 if reached[-1] > 0 else 0)
            peak.set_y(floor + max(reached) * self.unit).set_stroke(opacity=1 if max(reached) > 0 else 0)


class BubbleMeter(VGroup):
    """A bar that fills with idle time as a schedule plays: full width is ranks × makespan, so at the
    end the grey part is the bubble fraction. ``meter.frame``, ``meter.fill``, ``meter.name``."""

    def __init__(self, timeline: dict, width: float, height: float = 0.22, **kwargs) -> None:
        super().__init__(**kwargs)
        self.idle = [stretch for stretches in timeline["idle"] for stretch in stretches]
        self.full = timeline["ranks"] * timeline["makespan"]
        self.frame = Rectangle(width=width, height=height, stroke_color=style.MUTED, stroke_width=1.5)
        self.fill = _revealable(
            Rectangle(width=width, height=height, stroke_width=0, fill_color=style.MUTED, fill_opacity=0.8).move_to(
                self.frame
            )
        )
        self.name = style.zh("空泡", size=style.SMALL_SIZE, color=style.MUTED)
        self.name.next_to(self.frame, LEFT, buff=style.GAP_M)
        self.add(self.frame, self.fill, self.name)
        self.show_until(0.0)

    def show_until(self, tau: float) -> None:
        idle = sum(min(max(tau - a, 0.0), b - a) for a, b in self.idle)
        _reveal(self.fill, idle / self.full)

    def end_x(self) -> float:
        """Where the fill ends once the schedule has played out."""
        return self.frame.get_left()[0] + self.frame.width * sum(b - a for a, b in self.idle) / self.full


def play_schedule(start: float, end: float, *pieces, **kwargs) -> UpdateFromAlphaFunc:
    """Play schedule pieces on one clock from time `start` to `end`: ScheduleLanes fill in at their
    simulated times, InFlightBars rise and fall, a BubbleMeter fills with the idle time so far."""

    def advance(group, alpha) -> None:
        tau = start + alpha * (end - start)
        for piece in pieces:
            (piece.show_at if isinstance(piece, InFlightBars) else piece.show_until)(tau)

    return UpdateFromAlphaFunc(VGroup(*pieces), advance, rate_func=linear, **kwargs)
