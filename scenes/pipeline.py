"""The pipeline chapter (流水线并行：把模型切到多张卡上): staging only; every timeline and number comes from
tools.chapters.pipeline.

Each schedule is *played*: its ops appear on the rank lanes at the times the
simulator gave them, the bubbles fill in grey and a meter counts them, and each
rank's in-flight micro-batches rise and fall as a bar (scenes.widgets).
"""

from __future__ import annotations

from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    Arrow,
    BraceBetweenPoints,
    Create,
    DashedLine,
    FadeIn,
    FadeOut,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    Rectangle,
    ReplacementTransform,
    Text,
    VGroup,
    VMobject,
    Write,
    np,
)

from scenes import style, widgets
from scenes.base import LectureScene
from scenes.widgets import BubbleMeter, Column, InFlightBars, ScheduleLanes, op_color, play_schedule, text_row

OP_FILL = 0.9  # an op's fill as ScheduleLanes draws it: a key's boxes and a lone op match the lanes
SNUG = 0.08  # text right on what it names (a schedule's name on its lanes), the lines packed in a card
MARK_GAP = 0.06  # a peak's count on its tick, model stages side by side


def op_key(*entries: tuple[str, str, float]) -> VGroup:
    """A row of small op boxes with their names: (op kind or a colour, name, width in time units)."""
    items = VGroup()
    for kind, name, units in entries:
        color = op_color(kind) if kind in ("F", "B", "W") else kind
        box = widgets.bar(0.22 * units, 0.22, color, opacity=OP_FILL)
        name_text = style.zh(name, size=style.SMALL_SIZE, color=style.MUTED)
        items.add(VGroup(box, name_text).arrange(RIGHT, buff=style.GAP_S))
    return items.arrange(RIGHT, buff=style.GAP_L)


def place_lanes(
    timeline: dict, left_centre, width: float, lane_height: float = 0.5, pitch: float = 0.62, **kwargs
) -> ScheduleLanes:
    """Lanes whose lane 0 starts at `left_centre` (the left end of its centre line)."""
    lanes = ScheduleLanes(timeline, width, lane_height, pitch, **kwargs)
    return lanes.shift(np.array(left_centre) - lanes.lanes[0].get_left())


# Two schedules on one clock, one above the other: lane 0's centre of each, and their lanes' size.
STACK_UPPER, STACK_LOWER = 2.45, 0.45
STACK_LANE, STACK_PITCH = 0.34, 0.42


def stacked(
    upper: dict, lower: dict, left: float = -5.0, width: float = 7.4, *, upper_whole: bool = True, **kwargs
) -> tuple[ScheduleLanes, ScheduleLanes]:
    """Two timelines on one time scale, the upper one (drawn whole, unless `upper_whole` is False)
    to compare against, the lower one ready to play."""
    span = max(upper["makespan"], lower["makespan"])
    top = place_lanes(upper, (left, STACK_UPPER, 0), width, STACK_LANE, STACK_PITCH, span=span)
    if upper_whole:
        top.show_all()
    bottom = place_lanes(lower, (left, STACK_LOWER, 0), width, STACK_LANE, STACK_PITCH, span=span, **kwargs)
    return top, bottom


def place_bars(steps: list, base_left, unit: float, reach: float = 0) -> VGroup:
    """In-flight bars whose base line starts at `base_left`, their heading above the highest they (or a
    `reach` level, another schedule's peak) go; ``panel[0]`` is the InFlightBars."""
    bars = InFlightBars(steps, unit)
    top = max(reach, *(c for rank in steps for _, c in rank))
    heading = style.zh("每卡在途", size=style.SMALL_SIZE, color=style.MUTED)
    heading.next_to(bars.base, UP, buff=unit * top + style.GAP_L)
    panel = VGroup(bars, heading)
    return panel.shift(np.array(base_left) - bars.base.get_left())


def place_meter(timeline: dict, left, width: float) -> BubbleMeter:
    """A bubble meter whose frame starts at `left`."""
    meter = BubbleMeter(timeline, width)
    return meter.shift(np.array(left) - meter.frame.get_left())


def moment_line(lanes: ScheduleLanes, t: float, color: str = style.HIGHLIGHT) -> Line:
    """A vertical line across the lanes at time t."""
    top, bottom = lanes.lanes[0].get_top()[1] + 0.12, lanes.lanes[-1].get_bottom()[1] - 0.12
    return Line((lanes.x_of(t), top, 0), (lanes.x_of(t), bottom, 0), color=color, stroke_width=3)


def stage_block(stage: int, chunk: int, chunks: int, width: float, height: float, size: float) -> VGroup:
    """A stage of the model as a block in its chunk's forward colour, its number on it."""
    return widgets.block(
        width,
        height,
        op_color("F", chunk, chunks),
        str(stage),
        opacity=style.FILL_SOLID,
        size=size,
        label_color=style.BACKGROUND,
        stroke_color=style.BACKGROUND,
    )


# -- pipeline_gpipe ------------------------------------------------------------------------
class PipelineGpipe(LectureScene):
    """GPipe played on four lanes: all forwards, all backwards; bubbles counted; in-flight bars at m."""

    LANES_AT = (-5.0, 1.75, 0)  # the left end of lane 0's centre line
    LANES_WIDTH = 8.4
    BARS_AT = (3.95, 0.0, 0)  # the bars' base line starts here
    BAR_UNIT = 0.22
    METER_AT = (-5.0, -0.85, 0)
    COUNT_Y = -1.5
    FORMULA_Y = style.CAPTION_TOP + 0.6  # the formula, the last line, just above the captions
    TABLE = (Column(0.8, LEFT), Column(3.2, RIGHT), Column(5.1, RIGHT))
    TABLE_TOP, TABLE_PITCH = -1.3, 0.4

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        timeline = facts["timeline"].value
        lanes = place_lanes(timeline, self.LANES_AT, self.LANES_WIDTH)
        panel = place_bars(timeline["in_flight"], self.BARS_AT, self.BAR_UNIT)
        bars = panel[0]
        meter = place_meter(timeline, self.METER_AT, self.LANES_WIDTH)
        key = op_key(("F", f"前向 {facts['t_f'].text} 格", 1), ("B", f"反向 {facts['t_b'].text} 格", 2))
        key.to_corner(UP + RIGHT, buff=style.EDGE).shift(0.05 * DOWN)

        with self.narrate("gpipe_setup") as beat:
            self.play(
                LaggedStart(
                    *(FadeIn(VGroup(lane, name), shift=0.2 * RIGHT) for lane, name in zip(lanes.lanes, lanes.names)),
                    lag_ratio=0.2,
                ),
                run_time=beat.share(0.45),
            )
            self.add(lanes)
            self.play(FadeIn(key), FadeIn(panel), run_time=beat.share(0.3))

        forward_done, makespan = facts["forward_done"].value, timeline["makespan"]
        with self.narrate("gpipe_forward") as beat:
            self.add(meter)
            self.play(play_schedule(0, forward_done, lanes, bars, meter), run_time=beat.share(0.9))

        with self.narrate("gpipe_backward") as beat:
            self.play(play_schedule(forward_done, makespan, lanes, bars, meter), run_time=beat.share(0.9))

        with self.narrate("gpipe_bubble") as beat:
            self.play(Indicate(lanes.bubbles, color=style.TEXT, scale_factor=1.0), run_time=beat.share(0.5))
            self.play(Indicate(meter.fill, color=style.TEXT), run_time=beat.share(0.3))

        count = style.zh(
            f"灰格 {facts['idle_total'].text} ÷ 全部 {facts['area'].text} = {facts['bubble'].text}",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        count.move_to((self.METER_AT[0], self.COUNT_Y, 0), aligned_edge=LEFT)
        with self.narrate("gpipe_count") as beat:
            self.play(Write(count), run_time=beat.share(0.5))

        formula = VGroup(
            style.math("(p - 1) / (m + p - 1)", size=style.MATH_LABEL_SIZE),
            style.zh(f"= {facts['p_minus_1'].text} / {facts['m_plus_p_minus_1'].text}", size=style.LABEL_SIZE),
        ).arrange(RIGHT, buff=style.GAP_M)
        formula.move_to((self.METER_AT[0], self.FORMULA_Y, 0), aligned_edge=LEFT)
        with self.narrate("gpipe_formula") as beat:
            self.play(FadeIn(formula, shift=0.2 * UP), run_time=beat.share(0.5))

        moment = moment_line(lanes, forward_done)
        peak = style.zh(f"{facts['peak'].text} 个", size=style.LABEL_SIZE, color=style.HIGHLIGHT)
        peak.next_to(bars.peaks, RIGHT, buff=style.GAP_M)
        with self.narrate("gpipe_inflight") as beat:
            self.play(Create(moment), run_time=beat.share(0.15))
            self.play(play_schedule(0, forward_done, bars), run_time=beat.share(0.4))
            self.play(FadeIn(peak, shift=0.1 * LEFT), run_time=beat.share(0.2))

        start, end = facts["hold"].value
        brace = BraceBetweenPoints(
            lanes.point_at(start, 0) + 0.3 * UP, lanes.point_at(end, 0) + 0.3 * UP, direction=UP, color=style.HIGHLIGHT
        )
        brace_note = style.zh("卡 0 存得最久", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        brace_note.next_to(brace, UP, buff=style.GAP_S)
        with self.narrate("gpipe_hold") as beat:
            self.play(FadeIn(brace), FadeIn(brace_note), run_time=beat.share(0.4))
            self.play(Indicate(lanes.ops[0], color=style.HIGHLIGHT, scale_factor=1.0), run_time=beat.share(0.4))

        head = text_row(
            ["微批次 m", "空泡", "每卡在途"], self.TABLE, self.TABLE_TOP, size=style.SMALL_SIZE, color=style.MUTED
        )
        rows = VGroup(
            *(
                text_row(
                    [row["m"], row["bubble"], row["peak"]],
                    self.TABLE,
                    self.TABLE_TOP - self.TABLE_PITCH * (i + 1),
                    size=style.SMALL_SIZE,
                )
                for i, row in enumerate(facts["rows"].value)
            )
        )
        with self.narrate("gpipe_more") as beat:
            self.play(FadeOut(moment), FadeIn(head), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(row, shift=0.2 * UP) for row in rows), lag_ratio=0.4), run_time=beat.share(0.5)
            )
        self.finish()


def schedule_name(text: str, lanes: ScheduleLanes, color: str = style.MUTED) -> Text:
    """A schedule's name, above its lanes at the left."""
    return style.zh(text, size=style.SMALL_SIZE, color=color).next_to(lanes.lanes[0], UP, buff=SNUG, aligned_edge=LEFT)


def dashed_level(bars: InFlightBars, count: float, note: str) -> VGroup:
    """A dashed line across the bars at a count (another schedule's peak), its note at its left end."""
    y = bars.base.get_y() + count * bars.unit
    line = DashedLine(
        (bars.base.get_left()[0] - 0.1, y, 0), (bars.base.get_right()[0] + 0.1, y, 0), color=style.MUTED, stroke_width=2
    )
    name = style.zh(note, size=style.SMALL_SIZE, color=style.MUTED).next_to(line, LEFT, buff=style.GAP_S)
    return VGroup(line, name)


def peak_labels(bars: InFlightBars, texts: list[str], color: str = style.HIGHLIGHT) -> VGroup:
    """Each bar's peak, written just above its peak tick."""
    return VGroup(
        *(
            style.zh(text, size=style.SMALL_SIZE, color=color).next_to(tick, UP, buff=MARK_GAP)
            for tick, text in zip(bars.peaks, texts)
        )
    )


# -- pipeline_1f1b -------------------------------------------------------------------------
class Pipeline1f1b(LectureScene):
    """GPipe above, 1F1B played below on the same clock: same bubble, in-flight falling from 4 to 1;
    then the NOTES' recipe for the warm-up count and why it must count from 1, not 0."""

    LANES_WIDTH = 7.4
    BARS_AT, BAR_UNIT = (4.1, -1.0, 0), 0.17
    METER_AT = (-5.0, -1.25, 0)
    INFO_X = 3.0
    RECIPE = (
        Column(-5.6, ORIGIN),
        Column(-3.8, ORIGIN),
        Column(-1.0, ORIGIN),
        Column(1.8, ORIGIN),
        Column(4.4, ORIGIN),
    )
    RECIPE_TOP, RECIPE_PITCH = 0.75, 0.38

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        gpipe_tl, timeline = facts["gpipe_timeline"].value, facts["timeline"].value
        top, bottom = stacked(gpipe_tl, timeline)
        top_tag, bottom_tag = schedule_name("GPipe", top), schedule_name("1F1B", bottom, style.TEXT)
        panel = place_bars(timeline["in_flight"], self.BARS_AT, self.BAR_UNIT, reach=facts["gpipe_peak"].value)
        bars = panel[0]
        meter = place_meter(timeline, self.METER_AT, self.LANES_WIDTH)
        gpipe_info = style.caption_stack(
            f"空泡 {facts['gpipe_bubble'].text}",
            f"每卡在途 {facts['gpipe_peak'].text}",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        gpipe_info.move_to((self.INFO_X, top.lanes.get_center()[1], 0), aligned_edge=LEFT)

        with self.narrate("f1b_gpipe") as beat:
            self.play(FadeIn(top), FadeIn(top_tag), FadeIn(gpipe_info), run_time=beat.share(0.3))
            self.play(FadeIn(bottom), FadeIn(bottom_tag), FadeIn(panel), FadeIn(meter), run_time=beat.share(0.3))

        first_b, last_f, makespan = facts["phases"].value
        warmups = VGroup(
            *(
                style.zh(f"预热 {facts[f'warmup_{r}'].text}", size=style.SMALL_SIZE, color=style.FORWARD).next_to(
                    bottom.lanes[r], RIGHT, buff=style.GAP_S
                )
                for r in range(timeline["ranks"])
            )
        )
        with self.narrate("f1b_warmup") as beat:
            self.play(FadeIn(warmups), run_time=beat.share(0.2))
            self.play(play_schedule(0, first_b, bottom, bars, meter), run_time=beat.share(0.7))

        with self.narrate("f1b_steady") as beat:
            self.play(FadeOut(warmups), run_time=beat.share(0.1))
            self.play(play_schedule(first_b, last_f, bottom, bars, meter), run_time=beat.share(0.8))

        with self.narrate("f1b_cooldown") as beat:
            self.play(play_schedule(last_f, makespan, bottom, bars, meter), run_time=beat.share(0.8))

        count = style.zh(
            f"灰格 {facts['idle_total'].text} · 空泡 {facts['bubble'].text}",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        count.next_to(meter.frame, DOWN, buff=style.GAP_M).align_to(meter.frame, LEFT)
        gpipe_count = style.zh(f"灰格 {facts['gpipe_idle_total'].text}", size=style.SMALL_SIZE, color=style.MUTED)
        gpipe_count.next_to(gpipe_info, DOWN, buff=style.GAP_S).align_to(gpipe_info, LEFT)
        with self.narrate("f1b_same_bubble") as beat:
            self.play(
                Indicate(bottom.bubbles, color=style.TEXT, scale_factor=1.0),
                Indicate(top.bubbles, color=style.TEXT, scale_factor=1.0),
                run_time=beat.share(0.4),
            )
            self.play(Write(count), FadeIn(gpipe_count), run_time=beat.share(0.4))

        gpipe_level = dashed_level(bars, facts["gpipe_peak"].value, f"GPipe {facts['gpipe_peak'].text}")
        peaks = peak_labels(bars, [facts[f"peak_{r}"].text for r in range(timeline["ranks"])])
        with self.narrate("f1b_inflight") as beat:
            self.play(Create(gpipe_level[0]), FadeIn(gpipe_level[1]), run_time=beat.share(0.3))
            self.play(FadeIn(peaks, shift=0.1 * UP), run_time=beat.share(0.3))

        recipe_lines = style.caption_stack(
            "笔记：第 i 段先发 m − i + 1 个（m 是段数）", "之后 B 挑最老的，F 挑最新的下一个", size=style.LABEL_SIZE
        )
        recipe_lines.move_to((self.RECIPE[0].x - 0.4, self.RECIPE_TOP, 0), aligned_edge=UP + LEFT)
        with self.narrate("f1b_recipe") as beat:
            self.play(
                FadeOut(VGroup(top, top_tag, gpipe_info, gpipe_count, panel, gpipe_level, peaks, meter, count)),
                VGroup(bottom, bottom_tag).animate.shift((STACK_UPPER - STACK_LOWER) * UP),
                run_time=beat.share(0.25),
            )
            self.play(FadeIn(recipe_lines, shift=0.2 * DOWN), run_time=beat.share(0.4))

        table = self._recipe_table(facts["recipe"].value)
        table.next_to(recipe_lines, DOWN, buff=style.GAP_M)
        table.align_to(recipe_lines, LEFT)
        with self.narrate("f1b_index") as beat:
            self.play(FadeIn(table.head), run_time=beat.share(0.2))
            self.play(LaggedStart(*(FadeIn(row) for row in table.rows), lag_ratio=0.3), run_time=beat.share(0.5))
            self.play(Indicate(table.match, color=style.VERDICT_GOOD), run_time=beat.share(0.25))

        with self.narrate("f1b_zero") as beat:
            self.play(FadeIn(table.zero_head), FadeIn(table.zero), run_time=beat.share(0.35))
            self.play(Indicate(table.zero, color=style.VERDICT_BAD), run_time=beat.share(0.3))
        self.finish()

    def _recipe_table(self, recipe: list[dict]) -> VGroup:
        """Per rank: Megatron's warm-up, the forwards before the first B, the NOTES read from 1 and from 0."""
        columns, pitch = self.RECIPE, self.RECIPE_PITCH
        head = text_row(
            ["卡 r", "预热 p − r − 1", "先发（含稳态第一个）", "笔记 i = r + 1"],
            columns[:4],
            0,
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        zero_head = text_row(
            ["", "", "", "", "笔记按 i = r"], columns, 0, size=style.SMALL_SIZE, color=style.VERDICT_BAD
        )
        rows, match, zero = VGroup(), VGroup(), VGroup()
        for i, item in enumerate(recipe):
            y = -pitch * (i + 1)
            row = text_row(
                [item["rank"], item["warmup"], item["up_front"], item["notes_1"]], columns[:4], y, size=style.SMALL_SIZE
            )
            rows.add(row)
            match.add(row[2], row[3])
            zero.add(
                text_row(["", "", "", "", item["notes_0"]], columns, y, size=style.SMALL_SIZE, color=style.VERDICT_BAD)[
                    4
                ]
            )
        table = VGroup(head, rows, zero_head[4], zero)
        table.head, table.rows, table.match, table.zero_head, table.zero = head, rows, match, zero_head[4], zero
        return table


# -- pipeline_interleaved ------------------------------------------------------------------
class PipelineInterleaved(LectureScene):
    """The model cut into 2 × 4 chunks placed round-robin (the NOTES' s0 0 4 …); VPP played under 1F1B on
    one clock: the start-up triangle halves, the bubble drops, sends double, in-flight grows."""

    MODEL_Y, BLOCK_W, BLOCK_H = 1.6, 1.15, 0.5
    GRID_LEFT, GRID_TOP, GRID_PITCH = -2.6, 1.7, 0.62  # where card r's two chunks sit
    LANES_WIDTH = 7.4
    BARS_AT, BAR_UNIT = (4.3, -1.0, 0), 0.2
    METER_AT = (-5.0, -1.25, 0)
    INFO_X = 3.0

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        p, v = facts["p"].value, facts["v"].value
        placement = facts["placement"].value  # card r holds stages placement[r]
        stages = [stage_block(s, s // p, v, self.BLOCK_W, self.BLOCK_H, style.LABEL_SIZE) for s in range(p * v)]
        row = VGroup(*stages).arrange(RIGHT, buff=MARK_GAP).move_to((0, self.MODEL_Y, 0))
        model_name = style.zh("整个模型，按层", size=style.SMALL_SIZE, color=style.MUTED)
        model_name.next_to(row, UP, buff=style.GAP_S).align_to(row, LEFT)
        with self.narrate("vpp_split") as beat:
            self.play(
                LaggedStart(*(FadeIn(block, shift=0.2 * DOWN) for block in stages), lag_ratio=0.1),
                FadeIn(model_name),
                run_time=beat.share(0.6),
            )

        cards = VGroup(
            *(
                style.zh(f"卡 {r}", size=style.LABEL_SIZE, color=style.MUTED).move_to(
                    (self.GRID_LEFT - 0.9, self.GRID_TOP - 1.0 - self.GRID_PITCH * r, 0)
                )
                for r in range(p)
            )
        )
        targets = {}
        for r, held in enumerate(placement):
            for k, stage in enumerate(held):
                targets[stage] = np.array(
                    (self.GRID_LEFT + k * (self.BLOCK_W + 0.15) + self.BLOCK_W / 2, cards[r].get_y(), 0)
                )
        notes = style.zh(f"笔记：{facts['notes_placement'].value}", size=style.SMALL_SIZE, color=style.MUTED)
        notes.next_to(cards, DOWN, buff=style.GAP_L).align_to(cards, LEFT)
        with self.narrate("vpp_place") as beat:
            self.play(FadeOut(model_name), FadeIn(cards), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(block.animate.move_to(targets[s]) for s, block in enumerate(stages)), lag_ratio=0.12),
                run_time=beat.share(0.55),
            )
            self.play(FadeIn(notes), run_time=beat.share(0.2))

        key = op_key(
            ("F", f"前向 {facts['chunk_f'].text} 格", 0.5),
            ("B", f"反向 {facts['chunk_b'].text} 格", 1),
            (op_color("F", 1, 2), "第二块颜色浅", 1),
        )
        key.to_corner(UP + RIGHT, buff=style.EDGE).shift(0.05 * DOWN)
        with self.narrate("vpp_shorter") as beat:
            self.play(FadeIn(key), run_time=beat.share(0.4))

        base_tl, timeline = facts["base_timeline"].value, facts["timeline"].value
        top, bottom = stacked(base_tl, timeline, numbers=False)
        top_tag, bottom_tag = schedule_name("1F1B", top), schedule_name("交错 1F1B", bottom, style.TEXT)
        panel = place_bars(timeline["in_flight"], self.BARS_AT, self.BAR_UNIT)
        bars = panel[0]
        meter = place_meter(timeline, self.METER_AT, self.LANES_WIDTH)
        with self.narrate("vpp_play") as beat:
            self.play(FadeOut(VGroup(*stages, cards, notes)), run_time=beat.share(0.1))
            self.play(
                FadeIn(top),
                FadeIn(top_tag),
                FadeIn(bottom),
                FadeIn(bottom_tag),
                FadeIn(panel),
                FadeIn(meter),
                run_time=beat.share(0.15),
            )
            self.play(play_schedule(0, timeline["makespan"], bottom, bars, meter), run_time=beat.share(0.7))

        last = p - 1
        starts = VGroup(
            moment_line(top, facts["base_last_start"].value), moment_line(bottom, facts["last_start"].value)
        )
        for line, lanes in zip(starts, (top, bottom)):
            line.put_start_and_end_on(
                (line.get_x(), lanes.lanes[last].get_top()[1] + 0.05, 0),
                (line.get_x(), lanes.lanes[last].get_bottom()[1] - 0.05, 0),
            )
        start_notes = VGroup(
            *(
                style.zh(
                    f"卡 {last} 第 {facts[name].text} 格开工", size=style.SMALL_SIZE, color=style.HIGHLIGHT
                ).next_to(lanes.lanes[last], RIGHT, buff=style.GAP_M)
                for lanes, name in zip((top, bottom), ("base_last_start", "last_start"))
            )
        )
        with self.narrate("vpp_triangle") as beat:
            self.play(
                Indicate(VGroup(top.bubbles, bottom.bubbles), color=style.TEXT, scale_factor=1.0),
                run_time=beat.share(0.35),
            )
            self.play(Create(starts), FadeIn(start_notes), run_time=beat.share(0.35))

        change = style.zh(
            f"空泡 {facts['base_bubble'].text} → {facts['bubble'].text}", size=style.LABEL_SIZE, color=style.HIGHLIGHT
        )
        change.next_to(meter.frame, DOWN, buff=style.GAP_M).align_to(meter.frame, LEFT)
        formula = VGroup(
            style.math("(p - 1) / (v m + p - 1)", size=style.MATH_LABEL_SIZE),
            style.zh(f"= {facts['ratio'].text}", size=style.LABEL_SIZE),
        ).arrange(RIGHT, buff=style.GAP_M)
        formula.next_to(change, RIGHT, buff=style.GAP_L)
        with self.narrate("vpp_bubble") as beat:
            self.play(FadeOut(starts), FadeOut(start_notes), Write(change), run_time=beat.share(0.4))
            self.play(FadeIn(formula, shift=0.2 * UP), run_time=beat.share(0.35))

        info = style.caption_stack(
            f"跨卡 {facts['base_hops'].text} 次 → {facts['hops'].text} 次 / 微批次",
            f"卡 0 发激活 {facts['base_sends'].text} → {facts['sends'].text} 次",
            size=style.SMALL_SIZE,
            color=style.COMM,
        )
        info.move_to((self.INFO_X, top.lanes.get_center()[1], 0), aligned_edge=LEFT)
        with self.narrate("vpp_comm") as beat:
            self.play(FadeIn(info, shift=0.2 * LEFT), run_time=beat.share(0.4))

        base_level = dashed_level(bars, facts["base_peak_0"].value, f"1F1B {facts['base_peak_0'].text}")
        peaks = peak_labels(bars, [facts[f"peak_{r}"].text for r in range(p)])
        with self.narrate("vpp_memory") as beat:
            self.play(FadeIn(peaks, shift=0.1 * UP), run_time=beat.share(0.3))
            self.play(Create(base_level[0]), FadeIn(base_level[1]), run_time=beat.share(0.3))
        self.finish()


# -- pipeline_zero_bubble -------------------------------------------------------------------
class PipelineZeroBubble(LectureScene):
    """A backward split into B (input gradient, someone waits) and W (weight gradient, nobody waits);
    ZB-H1 under 1F1B on one clock (a third of the bubble, same in-flight); ZB-H2 with no idle inside any
    rank, but only if the step does not end on a global synchronisation such as clipping's norm."""

    SPLIT_Y, UNIT = 1.3, 1.3  # the big backward box, and its width per time unit
    LANES_WIDTH = 7.4
    BARS_AT, BAR_UNIT = (4.3, -1.0, 0), 0.2
    METER_AT = (-5.0, -1.25, 0)
    INFO_X = 3.0
    H2_AT = (-5.0, 1.9, 0)
    WAITING_GAP = 1.0  # room for the arrow from B to 「上一张卡在等」

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        unit = self.UNIT
        # A lone op, drawn as the lanes draw one: its name on it.
        op = {"opacity": OP_FILL, "size": style.LABEL_SIZE, "label_color": style.BACKGROUND, "stroke_width": 4}
        whole = widgets.block(
            facts["t_full"].value * unit, 0.7, style.BACKWARD, "反向", **op, stroke_color=style.BACKGROUND
        )
        whole.move_to((0, self.SPLIT_Y, 0))
        jobs = style.caption_stack("① 输入的梯度：传给上一张卡", "② 权重的梯度：留给自己", size=style.LABEL_SIZE)
        jobs.next_to(whole, DOWN, buff=style.GAP_L)
        with self.narrate("zb_two_jobs") as beat:
            self.play(FadeIn(whole), run_time=beat.share(0.3))
            self.play(FadeIn(jobs[0], shift=0.2 * UP), run_time=beat.share(0.3))
            self.play(FadeIn(jobs[1], shift=0.2 * UP), run_time=beat.share(0.3))

        b_box = widgets.block(facts["t_b"].value * unit, 0.7, style.BACKWARD, "B", **op, stroke_color=style.BACKGROUND)
        b_box.align_to(whole, LEFT).set_y(self.SPLIT_Y)
        w_box = widgets.block(
            facts["t_w"].value * unit, 0.7, style.WEIGHT_GRAD, "W", **op, stroke_color=style.BACKGROUND
        )
        w_box.align_to(whole, RIGHT).set_y(self.SPLIT_Y)
        previous = style.zh("上一张卡在等", size=style.SMALL_SIZE, color=style.BACKWARD)
        previous.next_to(b_box, LEFT, buff=self.WAITING_GAP)
        to_previous = Arrow(
            b_box.get_left(), previous.get_right(), buff=style.GAP_S, color=style.BACKWARD, stroke_width=4
        )
        later = style.zh("没人等，往后挪", size=style.SMALL_SIZE, color=style.WEIGHT_GRAD)
        with self.narrate("zb_split") as beat:
            self.play(
                FadeOut(whole),
                FadeIn(b_box),
                FadeIn(w_box),
                run_time=beat.share(0.3),
            )
            self.play(Create(to_previous), FadeIn(previous), run_time=beat.share(0.25))
            self.play(w_box.animate.shift(1.6 * RIGHT), run_time=beat.share(0.25))
            later.next_to(w_box, RIGHT, buff=style.GAP_M)
            self.play(FadeIn(later), run_time=beat.share(0.15))

        base_tl, h1_tl = facts["timeline"].value, facts["h1_timeline"].value
        span = base_tl["makespan"]
        top, bottom = stacked(base_tl, h1_tl, upper_whole=False)
        top_tag, bottom_tag = schedule_name("1F1B（反向不拆）", top), schedule_name("ZB-H1", bottom, style.TEXT)
        panel = place_bars(h1_tl["in_flight"], self.BARS_AT, self.BAR_UNIT)
        bars = panel[0]
        meter = place_meter(h1_tl, self.METER_AT, self.LANES_WIDTH)
        key = op_key(("F", "F", 1), ("B", "B", 1), ("W", "W", 1))
        key.to_corner(UP + RIGHT, buff=style.EDGE).shift(0.05 * DOWN)
        split_demo = VGroup(b_box, w_box, previous, to_previous, later, jobs)
        with self.narrate("zb_h1") as beat:
            self.play(FadeOut(split_demo), run_time=beat.share(0.1))
            self.play(FadeIn(VGroup(top, top_tag, bottom, bottom_tag, panel, meter, key)), run_time=beat.share(0.15))
            self.play(play_schedule(0, span, top, bottom, bars, meter), run_time=beat.share(0.7))

        idle = style.caption_stack(
            f"每卡空等 {facts['base_idle'].text} 格",
            f"→ {facts['h1_idle'].text} 格，是 {facts['third'].text}",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        idle.move_to((self.INFO_X, top.lanes.get_center()[1], 0), aligned_edge=LEFT)
        peaks = peak_labels(bars, [facts["h1_peak"].text] * h1_tl["ranks"])
        with self.narrate("zb_h1_result") as beat:
            self.play(
                Indicate(VGroup(top.bubbles, bottom.bubbles), color=style.TEXT, scale_factor=1.0),
                run_time=beat.share(0.3),
            )
            self.play(FadeIn(idle, shift=0.2 * LEFT), run_time=beat.share(0.3))
            self.play(FadeIn(peaks, shift=0.1 * UP), run_time=beat.share(0.25))

        change = style.zh(
            f"空泡 {facts['base_bubble'].text} → {facts['h1_bubble'].text}",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        change.next_to(meter.frame, DOWN, buff=style.GAP_M).align_to(meter.frame, LEFT)
        with self.narrate("zb_h1_bubble") as beat:
            self.play(Write(change), run_time=beat.share(0.6))

        h2_tl = facts["h2_timeline"].value
        h2 = place_lanes(h2_tl, self.H2_AT, self.LANES_WIDTH, span=span)
        h2_tag = schedule_name("ZB-H2", h2, style.TEXT)
        h2_panel = place_bars(h2_tl["in_flight"], self.BARS_AT, self.BAR_UNIT)
        h2_bars = h2_panel[0]
        with self.narrate("zb_h2") as beat:
            self.play(
                FadeOut(VGroup(top, top_tag, bottom, bottom_tag, panel, meter, idle, peaks, change)),
                run_time=beat.share(0.1),
            )
            self.play(FadeIn(h2), FadeIn(h2_tag), FadeIn(h2_panel), run_time=beat.share(0.1))
            self.play(play_schedule(0, h2_tl["makespan"], h2, h2_bars), run_time=beat.share(0.7))

        h2_peaks = peak_labels(h2_bars, [facts["h2_peak"].text] * h2_tl["ranks"])
        zb_v = style.caption_stack(
            "ZB-V（论文，未模拟）：层折成 V 形，", "激活 1×，点对点通信 2×", size=style.SMALL_SIZE, color=style.MUTED
        )
        zb_v.next_to(h2.lanes, DOWN, buff=style.GAP_L).align_to(h2.lanes, LEFT)
        with self.narrate("zb_h2_price") as beat:
            self.play(
                FadeIn(h2_peaks, shift=0.1 * UP),
                Indicate(h2_bars.peaks, color=style.HIGHLIGHT),
                run_time=beat.share(0.35),
            )
            self.play(FadeIn(zb_v), run_time=beat.share(0.3))

        sync = moment_line(h2, h2_tl["makespan"], style.VERDICT_BAD)
        sync_name = style.zh("步末同步", size=style.SMALL_SIZE, color=style.VERDICT_BAD).next_to(
            sync, UP, buff=style.GAP_S
        )
        edges = style.zh(
            f"两条斜边：每卡共空等 {facts['h2_edges'].text} 格", size=style.SMALL_SIZE, color=style.HIGHLIGHT
        )
        edges.next_to(h2.lanes, DOWN, buff=style.GAP_L).align_to(h2.lanes, LEFT)
        with self.narrate("zb_edges") as beat:
            self.play(
                FadeOut(zb_v), Indicate(h2.bubbles, color=style.TEXT, scale_factor=1.0), run_time=beat.share(0.35)
            )
            self.play(FadeIn(edges), Create(sync), FadeIn(sync_name), run_time=beat.share(0.35))

        clip = style.caption_stack(
            "梯度裁剪要全局范数：反向传播一章的第三道", "论文：先更新、后检查，出错就回滚", size=style.LABEL_SIZE
        )
        clip.next_to(edges, DOWN, buff=style.GAP_M).align_to(edges, LEFT)
        with self.narrate("zb_clip") as beat:
            self.play(
                FadeIn(clip[0], shift=0.2 * UP), Indicate(sync, color=style.VERDICT_BAD), run_time=beat.share(0.4)
            )
            self.play(FadeIn(clip[1], shift=0.2 * UP), run_time=beat.share(0.3))
        self.finish()


# -- pipeline_bidirectional ----------------------------------------------------------------
class PipelineBidirectional(LectureScene):
    """Chimera's two crossing pipelines played under 1F1B (slot units); the NOTES' 0/7 placement is the
    V shape, not Chimera; DualPipeV played from its reference order; the V3 table at PP = 8."""

    LANES_LEFT, LANES_WIDTH = -4.6, 7.0
    INFO_X = 3.2
    V_LEFT, V_TOP, V_STEP_X, V_PITCH = -1.2, 1.7, 0.72, 0.62  # the V: stage s at column s, on its card's row
    CARDS_X, CHIMERA_LEFT = -6.2, -5.2
    DUAL_AT, DUAL_WIDTH = (-4.8, 1.9, 0), 10.6
    TABLE = (
        Column(-6.6, LEFT),
        Column(-4.6, LEFT),
        Column(0.9, RIGHT),
        Column(2.4, RIGHT),
        Column(3.7, ORIGIN),
        Column(5.1, ORIGIN),
        Column(6.4, ORIGIN),
    )
    TABLE_TOP, TABLE_PITCH = 1.5, 0.55

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        base_tl, chimera_tl = facts["base_timeline"].value, facts["chimera_timeline"].value
        top, bottom = stacked(base_tl, chimera_tl, self.LANES_LEFT, self.LANES_WIDTH)
        top_tag = schedule_name("1F1B（前向、反向各一格）", top)
        only_first = style.zh("只有卡 0 能先开工", size=style.SMALL_SIZE, color=style.HIGHLIGHT)
        only_first.move_to((self.INFO_X, top.lanes.get_center()[1], 0), aligned_edge=LEFT)
        with self.narrate("bi_assume") as beat:
            self.play(FadeIn(top), FadeIn(top_tag), run_time=beat.share(0.3))
            self.play(
                Indicate(top.bubbles, color=style.TEXT, scale_factor=1.0), FadeIn(only_first), run_time=beat.share(0.5)
            )

        bottom_tag = schedule_name("Chimera", bottom, style.TEXT)
        ends = (bottom.lanes[0].get_left() + 1.25 * LEFT, bottom.lanes[-1].get_left() + 1.25 * LEFT)
        down = Arrow(
            ends[0] + 0.25 * LEFT, ends[1] + 0.25 * LEFT, buff=style.FLUSH, color=op_color("F"), stroke_width=5
        )
        up = Arrow(
            ends[1] + 0.25 * RIGHT, ends[0] + 0.25 * RIGHT, buff=style.FLUSH, color=op_color("F", 1, 2), stroke_width=5
        )
        key = op_key(("F", "向下的流水线", 1), (op_color("F", 1, 2), "向上的流水线", 1))
        key.to_corner(UP + RIGHT, buff=style.EDGE).shift(0.05 * DOWN)
        with self.narrate("bi_chimera") as beat:
            self.play(FadeIn(bottom), FadeIn(bottom_tag), FadeIn(key), run_time=beat.share(0.3))
            self.play(Create(down), Create(up), run_time=beat.share(0.4))

        with self.narrate("bi_chimera_play") as beat:
            self.play(play_schedule(0, chimera_tl["makespan"], bottom), run_time=beat.share(0.85))

        result = style.caption_stack(
            f"每卡空等 {facts['base_idle'].text} → {facts['chimera_idle'].text} 格",
            f"权重 {facts['chimera_weights'].text}",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        result.move_to((self.INFO_X, bottom.lanes.get_center()[1], 0), aligned_edge=LEFT)
        with self.narrate("bi_chimera_result") as beat:
            self.play(Indicate(bottom.bubbles, color=style.TEXT, scale_factor=1.0), run_time=beat.share(0.3))
            self.play(FadeIn(result, shift=0.2 * LEFT), run_time=beat.share(0.35))

        vee = self._vee(facts["v_stages"].value)
        notes = style.zh(
            f"笔记：{facts['notes_placement'].value}（写作 Chimera）", size=style.SMALL_SIZE, color=style.MUTED
        )
        notes.next_to(vee, DOWN, buff=style.GAP_L).align_to(vee, LEFT)
        with self.narrate("bi_notes") as beat:
            self.play(
                FadeOut(VGroup(top, top_tag, only_first, bottom, bottom_tag, down, up, key, result)),
                run_time=beat.share(0.15),
            )
            self.play(
                LaggedStart(*(FadeIn(block, shift=0.2 * DOWN) for block in vee.blocks), lag_ratio=0.1),
                FadeIn(vee.cards),
                run_time=beat.share(0.45),
            )
            self.play(Create(vee.path), FadeIn(notes), run_time=beat.share(0.25))

        chimera = self._two_replicas(facts["down_up"].value)
        names = VGroup(
            style.zh("Chimera：两份模型反着跑", size=style.SMALL_SIZE),
            style.zh("V 形：一份模型对折（ZB-V、DualPipeV）", size=style.SMALL_SIZE),
        )
        names[0].next_to(chimera, DOWN, buff=style.GAP_L).align_to(chimera, LEFT)
        names[1].move_to((vee.blocks.get_left()[0], names[0].get_y(), 0), aligned_edge=LEFT)
        with self.narrate("bi_literature") as beat:
            self.play(
                FadeOut(notes),
                LaggedStart(*(FadeIn(block, shift=0.2 * RIGHT) for block in chimera), lag_ratio=0.08),
                run_time=beat.share(0.4),
            )
            self.play(FadeIn(names[0]), FadeIn(names[1]), run_time=beat.share(0.35))

        timeline = facts["timeline"].value
        dual = place_lanes(timeline, self.DUAL_AT, self.DUAL_WIDTH, numbers=False)
        dual_tag = schedule_name(
            f"DualPipeV：{facts['v_ranks'].text} 张卡、{facts['v_stage_count'].text} 段、{facts['v_m'].text} 个微批次",
            dual,
            style.TEXT,
        )
        dual_key = op_key(("F", "F", 1), ("B", "B", 2), ("W", "W", 1))
        dual_key.to_corner(UP + RIGHT, buff=style.EDGE).shift(0.05 * DOWN)
        with self.narrate("bi_dualpipev") as beat:
            self.play(FadeOut(VGroup(vee, chimera, names)), run_time=beat.share(0.15))
            self.play(FadeIn(dual), FadeIn(dual_tag), FadeIn(dual_key), run_time=beat.share(0.15))
            self.play(play_schedule(0, timeline["makespan"], dual), run_time=beat.share(0.65))

        outlines = VGroup(*(pieces[2] for rank in dual.ops for pieces in rank if len(pieces) == 3))
        pair_note = style.caption_stack(
            "白框：一个微批次的前向（上）+ 另一个的反向（下）",
            f"全图 {facts['pairs'].text} 对；每卡空等 {facts['v_idle'].text} 格",
            size=style.SMALL_SIZE,
            color=style.TEXT,
        )
        pair_note.next_to(dual.lanes, DOWN, buff=style.GAP_L).align_to(dual.lanes, LEFT)
        with self.narrate("bi_pairs") as beat:
            self.play(Indicate(outlines, color=style.HIGHLIGHT, scale_factor=1.0), run_time=beat.share(0.45))
            self.play(FadeIn(pair_note), run_time=beat.share(0.3))

        assumptions = style.zh(
            f"PP = {facts['pp'].text}；F = {facts['f'].text}，B = {facts['b'].text}（整段反向），"
            f"W = {facts['w'].text}，F&B = {facts['fb'].text}（前向 + 反向，不算重叠）",
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        assumptions.move_to((self.TABLE[0].x, self.TABLE_TOP + 0.75, 0), aligned_edge=LEFT)
        table = self._v3_table(facts["table"].value)
        with self.narrate("bi_table") as beat:
            self.play(FadeOut(VGroup(dual, dual_tag, dual_key, pair_note)), run_time=beat.share(0.15))
            self.play(FadeIn(assumptions), run_time=beat.share(0.3))
            self.play(
                FadeIn(table.head),
                LaggedStart(*(FadeIn(row) for row in table.rows), lag_ratio=0.2),
                run_time=beat.share(0.45),
            )

        with self.narrate("bi_table_read") as beat:
            self.play(Indicate(table.bubbles, color=style.HIGHLIGHT), run_time=beat.share(0.35))
            self.play(FadeIn(table.simulated, shift=0.1 * LEFT), FadeIn(table.sim_head), run_time=beat.share(0.3))
            self.play(
                Indicate(
                    VGroup(*(row[4] for row in table.rows[2:]), *(row[5] for row in table.rows[2:])),
                    color=style.VERDICT_BAD,
                ),
                run_time=beat.share(0.25),
            )
        self.finish()

    @staticmethod
    def _stage(stage: int, chunk: int) -> VGroup:
        """A stage of one of the two chunks (the V's arms, Chimera's two replicas)."""
        return stage_block(stage, chunk, 2, 0.6, 0.42, style.SMALL_SIZE)

    def _vee(self, v_stages: list) -> VGroup:
        """One model in 2p stages, stage s in column s on the row of the card that holds it: a V."""
        rows = {stage: r for r, held in enumerate(v_stages) for stage in held}
        blocks = VGroup(
            *(
                self._stage(s, int(s >= len(v_stages))).move_to(
                    (self.V_LEFT + self.V_STEP_X * s, self.V_TOP - self.V_PITCH * rows[s], 0)
                )
                for s in sorted(rows)
            )
        )
        path = VMobject(stroke_color=style.MUTED, stroke_width=2).set_points_as_corners(
            [block.get_center() for block in blocks]
        )
        cards = VGroup(
            *(
                style.zh(f"卡 {r}", size=style.SMALL_SIZE, color=style.MUTED).move_to(
                    (self.CARDS_X, self.V_TOP - self.V_PITCH * r, 0)
                )
                for r in range(len(v_stages))
            )
        )
        vee = VGroup(path, blocks, cards)
        vee.blocks, vee.path, vee.cards = blocks, path, cards
        return vee

    def _two_replicas(self, down_up: list) -> VGroup:
        """Chimera: card r holds stage r of the downward replica and stage p − 1 − r of the upward one."""
        return VGroup(
            *(
                VGroup(self._stage(d, 0), self._stage(u, 1))
                .arrange(RIGHT, buff=0.12)
                .move_to((self.CHIMERA_LEFT, self.V_TOP - self.V_PITCH * r, 0), aligned_edge=LEFT)
                for r, (d, u) in enumerate(down_up)
            )
        )

    def _v3_table(self, rows: list[dict]) -> VGroup:
        """DeepSeek-V3's table of schedules at PP = 8, with the simulated bubble beside the formula's."""
        columns, pitch = self.TABLE, self.TABLE_PITCH
        head = text_row(
            ["方法", "空泡（时间格）", "", "", "参数", "激活", "设备"],
            columns,
            self.TABLE_TOP,
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        sim_head = text_row(
            ["", "", "", "模拟"], columns, self.TABLE_TOP, size=style.SMALL_SIZE, color=style.VERDICT_GOOD
        )[3]
        lines, bubbles, simulated = VGroup(), VGroup(), VGroup()
        for i, row in enumerate(rows):
            y = self.TABLE_TOP - pitch * (i + 1)
            line = text_row(
                [row["name"], row["formula"], row["bubble"], "", row["weights"], row["activation"], row["devices"]],
                columns,
                y,
                size=style.SMALL_SIZE,
            )
            line[2].set_color(style.HIGHLIGHT)
            bubbles.add(line[2])
            simulated.add(
                text_row(["", "", "", row["simulated"]], columns, y, size=style.SMALL_SIZE, color=style.VERDICT_GOOD)[3]
            )
            lines.add(line)
        table = VGroup(head, lines, sim_head, simulated)
        table.head, table.rows, table.bubbles = head, lines, bubbles
        table.sim_head, table.simulated = sim_head, simulated
        return table


# -- pipeline_summary ----------------------------------------------------------------------
class PipelineSummary(LectureScene):
    """Every schedule of the chapter in one table that builds up row by row (shape, bubble, in-flight,
    weights, all simulated at p = 4, m = 8); then why the NOTES' composable design failed under SPMD."""

    TABLE = (Column(-6.7, LEFT), Column(-4.1, LEFT), Column(1.6, RIGHT), Column(3.7, RIGHT), Column(5.9, RIGHT))
    TABLE_TOP, TABLE_PITCH = 2.6, 0.44
    MINI_WIDTH = 4.2
    NOTE_Y = -1.55
    GROUPS = (
        ("sum_gpipe", ("GPipe", "1F1B")),
        ("sum_vpp", ("交错 1F1B",)),
        ("sum_zb", ("ZB-H1", "ZB-H2")),
        ("sum_bi", ("Chimera", "DualPipe", "DualPipeV")),
    )

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        rows = {row["name"]: row for row in facts["rows"].value}
        head = text_row(
            ["调度", "形状（各自的时间尺）", "空泡", "卡 0 在途", "每卡权重"],
            self.TABLE,
            self.TABLE_TOP,
            size=style.SMALL_SIZE,
            color=style.MUTED,
        )
        with self.narrate("sum_intro") as beat:
            self.play(FadeIn(head, shift=0.1 * DOWN), run_time=beat.share(0.4))

        lines, notes = {}, VGroup()
        for i, name in enumerate(rows):
            lines[name] = self._schedule_row(rows[name], self.TABLE_TOP - self.TABLE_PITCH * (i + 1))
        for cue_id, names in self.GROUPS:
            with self.narrate(cue_id) as beat:
                self.play(
                    LaggedStart(*(FadeIn(lines[n], shift=0.2 * UP) for n in names), lag_ratio=0.3),
                    run_time=beat.share(0.45),
                )
                note = self._group_footnote(names, rows, facts)
                if note is not None:
                    note.move_to((self.TABLE[0].x, self.NOTE_Y - 0.4 * len(notes), 0), aligned_edge=LEFT)
                    notes.add(note)
                    self.play(FadeIn(note), run_time=beat.share(0.25))

        table = VGroup(head, *lines.values(), notes)
        with self.narrate("sum_trade") as beat:
            for column in (2, 3, 4):
                self.play(
                    Indicate(VGroup(*(line[column] for line in lines.values())), color=style.HIGHLIGHT),
                    run_time=beat.share(0.25),
                )

        design = style.code("zero_bubble(dual(vpp(1f1b(default_gpipe()))))", size=style.LABEL_SIZE)
        design.move_to((0, 1.6, 0))
        wish = style.zh("笔记作者的设想：调度是能一层层套上去的能力", size=style.LABEL_SIZE, color=style.MUTED)
        wish.next_to(design, UP, buff=style.GAP_L)
        with self.narrate("sum_compose") as beat:
            self.play(FadeOut(table), run_time=beat.share(0.15))
            self.play(FadeIn(wish), Write(design), run_time=beat.share(0.6))

        cards = VGroup(*(self._spmd_card(r) for r in range(facts["p"].value))).arrange(RIGHT, buff=style.GAP_M)
        cards.next_to(design, DOWN, buff=0.7)
        nobody = style.zh("没有谁看得见整条流水线", size=style.LABEL_SIZE, color=style.VERDICT_BAD)
        nobody.next_to(cards, DOWN, buff=style.GAP_M)
        with self.narrate("sum_spmd") as beat:
            self.play(
                LaggedStart(*(FadeIn(card, shift=0.2 * UP) for card in cards), lag_ratio=0.2), run_time=beat.share(0.5)
            )
            self.play(FadeIn(nobody), run_time=beat.share(0.25))

        split = VGroup(
            style.code("forward_backward_pipelining_without_interleaving", size=style.SMALL_SIZE),
            style.code("forward_backward_pipelining_with_interleaving", size=style.SMALL_SIZE),
        )
        split.arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S).move_to(design)
        megatron = style.zh("Megatron：两个分开写的函数", size=style.LABEL_SIZE, color=style.MUTED)
        megatron.move_to(wish)
        cross = Line(design.get_left(), design.get_right(), color=style.VERDICT_BAD, stroke_width=4)
        with self.narrate("sum_separate") as beat:
            self.play(Create(cross), run_time=beat.share(0.25))
            self.play(
                FadeOut(VGroup(design, cross)),
                ReplacementTransform(wish, megatron),
                FadeIn(split),
                run_time=beat.share(0.45),
            )
        self.finish()

    def _schedule_row(self, row: dict, y: float) -> VGroup:
        """One schedule's row: its name, its timeline in miniature, bubble, in-flight and weights."""
        mini = ScheduleLanes(
            row["timeline"], self.MINI_WIDTH, lane_height=0.065, pitch=0.085, numbers=False, names=False
        )
        mini.show_all()
        name = row["name"] + ("*" if row["name"] == "Chimera" else "")
        bubble = row["bubble"] + ("†" if row["own_span_zero"] else "")
        line = text_row([name, "", bubble, row["peak"], row["weights"]], self.TABLE, y, size=style.SMALL_SIZE)
        mini.move_to((self.TABLE[1].x, y, 0), aligned_edge=LEFT)
        line.submobjects[1] = mini
        return line

    def _group_footnote(self, names: tuple[str, ...], rows: dict, facts) -> VGroup | None:
        """The footnote a group of rows needs (ZB-H2's †, Chimera's *), if any."""
        if any(rows[n]["own_span_zero"] for n in names):
            return style.zh(
                "† 不在步末同步时，ZB-H2 各卡自己的时间线上空泡为 0", size=style.SMALL_SIZE, color=style.MUTED
            )
        if "Chimera" in names:
            return style.zh(
                f"* {facts['slot_note'].value}；权重以同样 4 张卡的 1F1B 为 1×",
                size=style.SMALL_SIZE,
                color=style.MUTED,
            )
        return None

    def _spmd_card(self, rank: int) -> VGroup:
        """A card under SPMD: the same function, its own stage only."""
        box = Rectangle(
            width=2.4, height=1.3, stroke_color=style.MUTED, stroke_width=2, fill_color=style.PANEL, fill_opacity=1
        )
        lines = VGroup(
            style.zh(f"卡 {rank}", size=style.SMALL_SIZE, color=style.MUTED),
            style.zh("同一个函数", size=style.SMALL_SIZE),
            style.zh("自己那一段", size=style.SMALL_SIZE),
        )
        return VGroup(box, lines.arrange(DOWN, buff=SNUG).move_to(box))


# -- moe_flow -------------------------------------------------------------------------------
class MoeFlow(LectureScene):
    """Router → Dispatch → expert FFN → Combine for four tokens, forward and backward: each token goes
    to its top-8 of 256 routed experts plus the shared one, nine copies, the 9 of the activation table."""

    TOKENS_X, OUT_X = -6.3, 6.5
    ROWS_TOP, ROW_PITCH, ROW_HEIGHT = 1.1, 0.5, 0.36
    MATRIX_LEFT, MATRIX_WIDTH = -4.4, 8.6  # 256 routed experts, one column each
    SHARED_X = 4.75
    WEIGHT_UNIT = 3.0  # a weight's bar grows this tall per unit of weight, up from token 0's row
    COUNT_Y, KEPT_TOP, KEPT_PITCH = -1.0, -1.5, 0.45
    KEPT = (Column(-4.4, LEFT), Column(0.4, LEFT), Column(3.2, LEFT))
    HEAD_CLEARANCE = 0.85  # the routed experts' heading clears token 0's tallest weight bar

    def construct(self) -> None:
        facts = self.facts
        self.show_title()
        tokens, experts = facts["tokens"].value, facts["experts"].value
        ys = [self.ROWS_TOP - self.ROW_PITCH * t for t in range(tokens)]
        inputs = VGroup(*(self._token(style.FORWARD).move_to((self.TOKENS_X, y, 0)) for y in ys))
        in_head = style.zh("token", size=style.SMALL_SIZE, color=style.MUTED).next_to(inputs, UP, buff=style.GAP_M)
        with self.narrate("moe_tokens") as beat:
            self.play(
                LaggedStart(*(FadeIn(token, shift=0.2 * RIGHT) for token in inputs), lag_ratio=0.2),
                FadeIn(in_head),
                run_time=beat.share(0.6),
            )

        column = self.MATRIX_WIDTH / experts
        strips = VGroup(
            *(
                Rectangle(
                    width=self.MATRIX_WIDTH,
                    height=self.ROW_HEIGHT,
                    stroke_width=0,
                    fill_color=style.PANEL,
                    fill_opacity=1,
                ).move_to((self.MATRIX_LEFT + self.MATRIX_WIDTH / 2, y, 0))
                for y in ys
            )
        )
        routed_head = style.zh(f"{facts['experts'].text} 个路由专家", size=style.SMALL_SIZE, color=style.MUTED)
        routed_head.next_to(strips, UP, buff=self.HEAD_CLEARANCE)
        lit = VGroup(
            *(
                VGroup(
                    *(
                        Rectangle(
                            width=max(column, 0.05),
                            height=self.ROW_HEIGHT,
                            stroke_width=0,
                            fill_color=style.FORWARD,
                            fill_opacity=1,
                        ).move_to((self.MATRIX_LEFT + column * (e + 0.5), y, 0))
                        for e in chosen
                    )
                )
                for chosen, y in zip(facts["chosen"].value, ys)
            )
        )
        with self.narrate("moe_router") as beat:
            self.play(FadeIn(strips), FadeIn(routed_head), run_time=beat.share(0.3))
            self.play(LaggedStart(*(FadeIn(row) for row in lit), lag_ratio=0.3), run_time=beat.share(0.55))

        bars = VGroup(
            *(
                widgets.bar(0.09, w * self.WEIGHT_UNIT, style.HIGHLIGHT).next_to(cell, UP, buff=0.02)
                for cell, w in zip(lit[0], facts["weights"].value[0])
            )
        )
        bars_note = style.zh(
            f"token 0 的 {facts['top_k'].text} 个权重：都为正，加起来 = {facts['weight_sum'].text}",
            size=style.SMALL_SIZE,
            color=style.HIGHLIGHT,
        )
        bars_note.move_to((self.MATRIX_LEFT, self.COUNT_Y, 0), aligned_edge=LEFT)
        with self.narrate("moe_weights") as beat:
            self.play(Indicate(lit[0], color=style.HIGHLIGHT), run_time=beat.share(0.2))
            self.play(LaggedStart(*(GrowFromEdge(bar, DOWN) for bar in bars), lag_ratio=0.1), run_time=beat.share(0.4))
            self.play(FadeIn(bars_note), run_time=beat.share(0.25))

        shared = VGroup(
            *(
                Rectangle(width=0.3, height=self.ROW_HEIGHT, stroke_width=0, fill_opacity=0.0).move_to(
                    (self.SHARED_X, y, 0)
                )
                for y in ys
            )
        )
        shared_frame = Rectangle(width=0.5, height=ys[0] - ys[-1] + 0.55, stroke_color=style.MUTED, stroke_width=2)
        shared_frame.move_to((self.SHARED_X, (ys[0] + ys[-1]) / 2, 0))
        shared_head = style.zh(f"共享 {facts['shared'].text}", size=style.SMALL_SIZE, color=style.MUTED)
        shared_head.next_to(shared_frame, UP, buff=style.GAP_S)
        targets = [[*row, cell] for row, cell in zip(lit, shared)]
        copies = VGroup(
            *(VGroup(*(self._copy(style.FORWARD).move_to(token) for _ in row)) for token, row in zip(inputs, targets))
        )
        count = style.zh(
            f"每个 token：{facts['top_k'].text} + {facts['shared'].text} = {facts['copies'].text} 份",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        with self.narrate("moe_dispatch") as beat:
            self.play(
                FadeOut(VGroup(bars, bars_note)), FadeIn(shared_frame), FadeIn(shared_head), run_time=beat.share(0.2)
            )
            self.add(copies)
            self.play(
                LaggedStart(
                    *(
                        copy.animate.move_to(cell)
                        for row, cells in zip(copies, targets)
                        for copy, cell in zip(row, cells)
                    ),
                    lag_ratio=0.02,
                ),
                run_time=beat.share(0.5),
            )
            count.move_to((self.MATRIX_LEFT, self.COUNT_Y, 0), aligned_edge=LEFT)
            self.play(FadeIn(count), run_time=beat.share(0.2))

        with self.narrate("moe_ffn") as beat:
            self.play(Indicate(copies, color=style.HIGHLIGHT, scale_factor=1.4), run_time=beat.share(0.6))

        outputs = VGroup(*(self._token(style.FORWARD).move_to((self.OUT_X, y, 0)) for y in ys))
        out_head = style.zh("输出", size=style.SMALL_SIZE, color=style.MUTED).next_to(outputs, UP, buff=style.GAP_M)
        with self.narrate("moe_combine") as beat:
            self.play(
                LaggedStart(
                    *(copy.animate.move_to(out) for row, out in zip(copies, outputs) for copy in row), lag_ratio=0.02
                ),
                run_time=beat.share(0.5),
            )
            self.play(FadeOut(copies), FadeIn(outputs), FadeIn(out_head), run_time=beat.share(0.25))

        grads = VGroup(
            *(VGroup(*(self._copy(style.BACKWARD).move_to(out) for _ in row)) for out, row in zip(outputs, targets))
        )
        with self.narrate("moe_backward") as beat:
            self.add(grads)
            self.play(
                LaggedStart(
                    *(g.animate.move_to(cell) for row, cells in zip(grads, targets) for g, cell in zip(row, cells)),
                    lag_ratio=0.02,
                ),
                run_time=beat.share(0.35),
            )
            self.play(Indicate(grads, color=style.HIGHLIGHT, scale_factor=1.4), run_time=beat.share(0.15))
            self.play(
                LaggedStart(
                    *(g.animate.move_to(token) for row, token in zip(grads, inputs) for g in row), lag_ratio=0.02
                ),
                run_time=beat.share(0.35),
            )

        copies_text = f"{facts['copies'].text} × {facts['hidden'].text}"
        heads = ["反向传播一章的表：MoE 层存下的", "每 token 宽度", f"{facts['seq'].text} 序列"]
        kept_head = text_row(heads, self.KEPT, self.KEPT_TOP, size=style.SMALL_SIZE, color=style.MUTED)
        kept = VGroup(
            *(
                text_row(
                    [label, copies_text, size],
                    self.KEPT,
                    self.KEPT_TOP - self.KEPT_PITCH * (i + 1),
                    size=style.LABEL_SIZE,
                )
                for i, (label, size) in enumerate(
                    (("派发出去的激活", facts["dispatched"].text), ("专家输出（合并前）", facts["combined"].text))
                )
            )
        )
        with self.narrate("moe_nine") as beat:
            self.play(FadeOut(grads), Indicate(count, color=style.HIGHLIGHT), run_time=beat.share(0.25))
            self.play(
                FadeIn(kept_head),
                LaggedStart(*(FadeIn(row, shift=0.2 * UP) for row in kept), lag_ratio=0.4),
                run_time=beat.share(0.45),
            )
        self.finish()

    @staticmethod
    def _token(color: str) -> Rectangle:
        """A token's activation (or its gradient) as a square."""
        return Rectangle(
            width=0.42,
            height=0.42,
            stroke_color=style.TEXT,
            stroke_width=1.5,
            fill_color=color,
            fill_opacity=style.FILL_SOLID,
        )

    @staticmethod
    def _copy(color: str) -> Rectangle:
        """One copy of a token on its way to an expert (or a gradient on its way back)."""
        return Rectangle(width=0.12, height=0.12, stroke_width=0, fill_color=color, fill_opacity=style.FILL_SOLID)
