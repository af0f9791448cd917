"""The serving chapter (PD 分离：prefill 与 decode 为什么要分开): staging only; every number, timeline and curve
comes from tools.chapters.serving.

Colours by role: prefill is compute-bound, so its blocks, dots and instances are ``COMPUTE``; decode waits on
memory, so its are ``MEMORY``, as is the KV cache; a KV transfer is ``COMM``. Two layouts compared on one
plot are the neutral pair ``SERIES_A`` (colocated) and ``SERIES_B`` (the best split).
"""

from __future__ import annotations

import itertools
import math

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
    DashedLine,
    Dot,
    FadeIn,
    FadeOut,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Line,
    Rectangle,
    Transform,
    UpdateFromAlphaFunc,
    VGroup,
    VMobject,
    Write,
    linear,
    np,
)

from scenes import style, widgets
from scenes.base import LectureScene

PREFILL, DECODE, TRANSFER = style.COMPUTE, style.MEMORY, style.COMM
COLOCATED, SPLIT = style.SERIES_A, style.SERIES_B


class TimedBoxes(VGroup):
    """Boxes that stand for stretches of simulated time, drawn as a clock runs: :meth:`show_until` draws what
    ran before τ, a stretch still running up to τ. Each box is added with its start and end."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[tuple[Rectangle, float, float, float, float]] = []  # box, start, end, width, fill

    def add_span(self, box: Rectangle, start: float, end: float) -> Rectangle:
        self.spans.append((box, start, end, box.width, box.get_fill_opacity()))
        self.add(box)
        return box

    def show_until(self, tau: float) -> None:
        for box, a, b, width, fill in self.spans:
            shown = min(max((tau - a) / (b - a), 0.0), 1.0) if b > a else float(tau >= a)
            box.stretch_to_fit_width(max(shown, 1e-3) * width, about_edge=LEFT)
            box.set_fill(opacity=fill if shown > 0 else 0).set_stroke(opacity=1 if shown > 0 else 0)


def run_clock(start: float, end: float, *pieces: TimedBoxes, **kwargs) -> UpdateFromAlphaFunc:
    """Play timed boxes on one clock from `start` to `end` (simulated seconds)."""

    def advance(_group, alpha) -> None:
        for piece in pieces:
            piece.show_until(start + alpha * (end - start))

    return UpdateFromAlphaFunc(VGroup(*pieces), advance, rate_func=linear, **kwargs)


def note(text: str, color: str = style.MUTED, size: float = style.SMALL_SIZE) -> VGroup:
    return style.zh(text, size=size, color=color)


def recon_tag() -> VGroup:
    """The on-screen mark of inputs we chose (efficiencies, workload, SLOs)."""
    return note("自设参数", color=style.HIGHLIGHT)


# -- pd_roofline ---------------------------------------------------------------------------
class PdRoofline(LectureScene):
    """A log-log roofline: the bandwidth roof meets the compute roof at the ridge; a linear layer's dot slides
    right with the prompt's tokens; decode sits at one token; attention's dots stay where GQA puts them."""

    PLOT_CENTRE = 1.9 * LEFT + 0.1 * UP
    X_RANGE, Y_RANGE = (-0.5, 3.7, 1), (0, 3.4, 1)  # log10 FLOP/B, log10 TFLOPS
    SIDE_X = 2.95  # the side notes' left edge

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        axes = widgets.sketch_axes(self.X_RANGE, self.Y_RANGE, 7.6, 4.2, corner=True, ticks=True)
        axes.move_to(self.PLOT_CENTRE)
        ticks = widgets.tick_labels(axes, f["log_ticks"].value, f["log_ticks"].value)
        x_name = note("算术强度（FLOP/B）").next_to(axes.c2p(self.X_RANGE[1], 0), UP + LEFT, buff=style.GAP_S)
        y_name = note("TFLOPS").next_to(axes.y_axis, UP, buff=style.GAP_S).align_to(axes.y_axis, LEFT)
        peak, bandwidth, ridge = f["peak_value"].value / 1e12, f["bandwidth_value"].value / 1e12, f["ridge_value"].value

        def at(intensity: float) -> np.ndarray:
            return axes.c2p(math.log10(intensity), math.log10(min(peak, intensity * bandwidth)))

        lo = 10 ** self.X_RANGE[0]
        slope = Line(at(lo), at(ridge), color=DECODE, stroke_width=5)
        flat = Line(at(ridge), axes.c2p(self.X_RANGE[1], math.log10(peak)), color=PREFILL, stroke_width=5)
        slope_name = note(f"带宽 {f['bandwidth'].text}", color=DECODE).next_to(at(25), UP + LEFT, buff=style.GAP_XS)
        slope_name.rotate(math.atan2(*(at(10) - at(1))[[1, 0]]), about_point=slope_name.get_center())
        flat_name = note(f"算力 {f['peak'].text}", color=PREFILL).next_to(flat, UP, buff=style.GAP_S)
        flat_name.align_to(flat, RIGHT)
        ridge_line = DashedLine(at(ridge), axes.c2p(math.log10(ridge), 0), color=style.MUTED, stroke_width=2)
        ridge_name = note(f"拐点 {f['ridge'].text}", color=style.HIGHLIGHT).next_to(
            axes.c2p(math.log10(ridge), 1.2), RIGHT, buff=style.GAP_S
        )
        with self.narrate("roof_axes") as beat:
            self.play(Create(axes), FadeIn(ticks), FadeIn(x_name), FadeIn(y_name), run_time=beat.share(0.3))
            self.play(Create(slope), FadeIn(slope_name), run_time=beat.share(0.25))
            self.play(Create(flat), FadeIn(flat_name), run_time=beat.share(0.2))
            self.play(Create(ridge_line), FadeIn(ridge_name), run_time=beat.share(0.15))

        ai64, ai2048 = f["linear_points"].value[1][1], f["linear_points"].value[2][1]
        dot = widgets.ball(PREFILL).move_to(at(ai64))
        layer = note(f"线性层 {f['d'].text} × {f['d'].text}", color=style.TEXT)
        layer.move_to((self.SIDE_X, 1.7, 0), aligned_edge=LEFT)
        mark64 = note(f"n = {f['n_small'].text}：{f['ai_64'].text}", color=PREFILL).next_to(
            at(ai64), DOWN + RIGHT, buff=style.GAP_S
        )
        mark2048 = note(f"n = {f['n_large'].text}：{f['ai_2048'].text}", color=PREFILL)
        mark2048.next_to(at(ai2048), DOWN, buff=style.GAP_M)
        with self.narrate("roof_prefill") as beat:
            self.play(FadeIn(layer), FadeIn(dot, scale=2), FadeIn(mark64), run_time=beat.share(0.3))
            self.add(Dot(at(ai64), radius=0.06, color=PREFILL))  # where n = 64 sat, left behind
            self.play(dot.animate.move_to(at(ridge)), run_time=beat.share(0.2))
            self.play(dot.animate.move_to(at(ai2048)), run_time=beat.share(0.2))
            self.play(
                FadeIn(mark2048, shift=0.1 * UP),
                Indicate(flat, color=style.HIGHLIGHT, scale_factor=1),
                run_time=beat.share(0.2),
            )

        decode = widgets.ball(DECODE).move_to(at(f["ai_1"].value))
        mark1 = note(f"decode：n = 1，{f['ai_1'].text}", color=DECODE).next_to(decode, UP + RIGHT, buff=style.GAP_S)
        batch = Arrow(at(1.6), at(ridge * 0.85), buff=style.FLUSH, color=DECODE, stroke_width=4)
        batch_name = note(f"攒批：要 {f['n_ridge'].text} 个请求", color=DECODE).next_to(
            batch.get_center(), DOWN + RIGHT, buff=style.GAP_S
        )
        with self.narrate("roof_decode") as beat:
            self.play(FadeIn(decode, scale=2), FadeIn(mark1), run_time=beat.share(0.35))
            self.play(GrowFromEdge(batch, LEFT), FadeIn(batch_name), run_time=beat.share(0.4))

        attn_gqa, attn_mha, attn_prefill = f["attn_values"].value
        gqa = widgets.ball(style.HIGHLIGHT).move_to(at(attn_gqa))
        mha = Circle(radius=0.2, color=style.MUTED, stroke_width=3).move_to(at(attn_mha))  # a ring: decode's dot shows
        prefill_attn = widgets.ball(PREFILL).move_to(at(attn_prefill))
        attn_note = VGroup(
            note(
                f"decode 注意力：{f['heads'].text} ÷ {f['kv_heads'].text} = {f['attn_decode'].text}",
                color=style.HIGHLIGHT,
            ),
            note(f"每个头都存 KV：{f['attn_mha'].text}", color=style.MUTED),
            note(f"prefill 注意力（{f['prefill_seq'].text}）：{f['attn_prefill'].text}", color=PREFILL),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_SM)
        attn_note.next_to(layer, DOWN, buff=style.GAP_L, aligned_edge=LEFT)
        with self.narrate("roof_attention") as beat:
            self.play(
                FadeOut(batch),
                FadeOut(batch_name),
                FadeIn(gqa, scale=2),
                FadeIn(attn_note[0]),
                run_time=beat.share(0.3),
            )
            self.play(Indicate(gqa, color=style.TEXT, scale_factor=1.6), run_time=beat.share(0.2))
            self.play(FadeIn(mha), FadeIn(attn_note[1]), run_time=beat.share(0.2))
            self.play(FadeIn(prefill_attn, scale=2), FadeIn(attn_note[2]), run_time=beat.share(0.2))

        moral = style.caption_stack("prefill 靠算力", "decode 靠带宽", size=style.BODY_SIZE)
        moral[0].set_color(PREFILL)
        moral[1].set_color(DECODE)
        moral.next_to(attn_note, DOWN, buff=style.GAP_XL, aligned_edge=LEFT)
        with self.narrate("roof_moral") as beat:
            self.play(FadeIn(moral, shift=0.2 * UP), run_time=beat.share(0.4))
        self.finish()


# -- pd_kv_cache_bytes ---------------------------------------------------------------------
class PdKvCacheBytes(LectureScene):
    """A token climbs the 80-layer stack and leaves a K and a V slab at each layer; the bytes add up, grow
    with the prompt, shrink with MLA; then a prompt's KV crosses the link, after the prefill or layer by layer."""

    STACK_X, STACK_BOTTOM = -5.9, -2.45  # the layer stack's centre x and its bottom
    LAYER_H, LAYER_GAP, LAYER_W = 0.036, 0.014, 1.0
    RIGHT_X = -3.9  # everything else starts here
    BAR_MAX = 6.2  # the longest bar of a comparison
    ROW_PITCH = 0.44

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        layers = int(f["layers"].value)
        pitch = self.LAYER_H + self.LAYER_GAP
        stack = VGroup(
            *(
                widgets.bar(self.LAYER_W, self.LAYER_H, style.MUTED, opacity=style.FILL_FAINT).move_to(
                    (self.STACK_X, self.STACK_BOTTOM + pitch * i, 0)
                )
                for i in range(layers)
            )
        )
        stack_name = note(f"{f['layers'].text} 层").next_to(stack, UP, buff=style.GAP_S)
        slabs = VGroup(
            *(
                VGroup(
                    widgets.bar(0.22, self.LAYER_H, DECODE).next_to(layer, RIGHT, buff=style.GAP_XS),
                    widgets.bar(0.22, self.LAYER_H, DECODE, opacity=style.FILL_SOFT),
                )
                for layer in stack
            )
        )
        for k, v in slabs:
            v.next_to(k, RIGHT, buff=style.GAP_XS)
        slab_names = VGroup(note("K", color=DECODE), note("V", color=DECODE))
        slab_names[0].next_to(slabs[-1][0], UP, buff=style.GAP_S)
        slab_names[1].next_to(slabs[-1][1], UP, buff=style.GAP_S)
        slab_names.shift(0.05 * UP)
        stack_name.next_to(stack, UP, buff=style.GAP_S).shift(0.45 * UP)
        token = widgets.ball(style.HIGHLIGHT).next_to(stack, DOWN, buff=style.GAP_S)
        slabs.set_opacity(0)
        per_layer = note(
            f"每层：K、V 各 {f['kv_heads'].text} 个头 × {f['head_dim'].text} 个数 × {f['bytes'].text} 字节",
            color=style.TEXT,
        )
        per_layer.move_to((self.RIGHT_X, 2.55, 0), aligned_edge=LEFT)

        def climb(_token, alpha) -> None:
            _token.move_to(stack.get_bottom() + (alpha * stack.height) * UP)
            reached = alpha * layers
            for i, (k, v) in enumerate(slabs):
                k.set_fill(opacity=style.FILL_SOLID if i < reached else 0)
                v.set_fill(opacity=style.FILL_SOFT if i < reached else 0)

        with self.narrate("kv_layer") as beat:
            self.play(FadeIn(stack), FadeIn(stack_name), FadeIn(token), run_time=beat.share(0.2))
            self.add(slabs)
            self.play(
                UpdateFromAlphaFunc(token, climb, rate_func=linear), FadeIn(slab_names), run_time=beat.share(0.55)
            )
            self.play(FadeIn(per_layer), run_time=beat.share(0.2))

        total = style.zh(
            f"2 × {f['layers'].text} × {f['kv_heads'].text} × {f['head_dim'].text} × {f['bytes'].text} = "
            f"{f['per_token'].text} = {f['per_token_kib'].text}",
            size=style.LABEL_SIZE,
            color=style.HIGHLIGHT,
        )
        total.next_to(per_layer, DOWN, buff=style.GAP_M, aligned_edge=LEFT)
        with self.narrate("kv_count") as beat:
            self.play(Write(total), run_time=beat.share(0.5))

        unit = self.BAR_MAX / f["gib_128k"].value
        prompt_rows = self._bars(
            [
                (f["tokens_4k"].text, f["gib_4k"].value * unit, f["gib_4k"].text),
                (f["tokens_32k"].text, f["gib_32k"].value * unit, f["gib_32k"].text),
                (f["tokens_128k"].text, f["gib_128k"].value * unit, f["gib_128k"].text),
            ],
            top=1.25,
        )
        mooncake = note(f"= {f['gb_128k'].text}；Mooncake：约 {f['mooncake_gb'].text}")
        mooncake.next_to(prompt_rows[-1], DOWN, buff=style.GAP_S, aligned_edge=RIGHT)
        with self.narrate("kv_prompt") as beat:
            self.play(LaggedStart(*(self._grow(row) for row in prompt_rows), lag_ratio=0.5), run_time=beat.share(0.6))
            self.play(FadeIn(mooncake), run_time=beat.share(0.2))

        mib = f["mha_times"].value  # MHA bytes per token over GQA's
        token_unit = self.BAR_MAX / mib
        per_token_rows = self._bars(
            [
                ("每头都存", self.BAR_MAX, f"{f['mha_mib'].text}（{f['mha_times'].text}）"),
                ("Llama GQA", token_unit, f["per_token_kib"].text),
                ("V3 MLA", token_unit / f["mla_times"].value, f["mla"].text),
            ],
            top=1.25,
        )
        mla_note = note(f"({f['latent'].text} + {f['rope'].text}) × {f['v3_layers'].text} 层 × 2 字节")
        mla_note.next_to(per_token_rows[-1][1], DOWN, buff=style.GAP_S, aligned_edge=LEFT)
        with self.narrate("kv_compare") as beat:
            self.play(FadeOut(prompt_rows), FadeOut(mooncake), run_time=beat.share(0.15))
            self.play(
                LaggedStart(*(self._grow(row) for row in per_token_rows), lag_ratio=0.4), run_time=beat.share(0.5)
            )
            self.play(
                FadeIn(mla_note), Indicate(per_token_rows[-1][1], color=style.HIGHLIGHT), run_time=beat.share(0.25)
            )

        # The 4K prompt's prefill and its KV transfer, to scale: the prefill spans BAR_MAX.
        ms = self.BAR_MAX / f["prefill_4k"].value
        left = self.RIGHT_X + 1.6
        after_y, stream_y = -0.85, -1.75
        after_name = note("算完再发").move_to((self.RIGHT_X, after_y, 0), aligned_edge=LEFT)
        after_compute = widgets.block(self.BAR_MAX, 0.34, PREFILL, f"prefill {f['prefill_4k'].text}")
        after_compute.move_to((left, after_y, 0), aligned_edge=LEFT)
        after_move = widgets.bar(f["move_4k"].value * ms, 0.34, TRANSFER).next_to(
            after_compute, RIGHT, buff=style.FLUSH
        )
        after_label = note(f"+{f['exposed_after'].text}", color=TRANSFER).next_to(after_move, DOWN, buff=style.GAP_S)
        link = note(f"{f['gib_4k'].text} ÷ {f['link'].text}（每实例一条链路，示意）")
        link.next_to(after_compute, UP, buff=style.GAP_S, aligned_edge=LEFT)
        with self.narrate("kv_move") as beat:
            self.play(FadeIn(after_name), GrowFromEdge(after_compute, LEFT), run_time=beat.share(0.35))
            self.play(GrowFromEdge(after_move, LEFT), FadeIn(after_label), FadeIn(link), run_time=beat.share(0.35))

        stream_name = note("逐层发").move_to((self.RIGHT_X, stream_y, 0), aligned_edge=LEFT)
        cell = self.BAR_MAX / layers
        cells, sends = TimedBoxes(), TimedBoxes()
        for i in range(layers):
            box = widgets.bar(cell, 0.34, PREFILL, stroke_color=style.BACKGROUND, stroke_width=0.5)
            cells.add_span(box.move_to((left + cell * (i + 0.5), stream_y, 0)), i, i + 1)
            send = widgets.bar(max(f["wire"].value * ms, 0.03), 0.14, TRANSFER)
            sends.add_span(send.move_to((left + cell * (i + 1), stream_y - 0.26, 0), aligned_edge=LEFT), i + 1, i + 1.1)
        cells.show_until(0)
        sends.show_until(0)
        stream_label = note(
            f"每层 {f['per_layer'].text} 算，{f['wire'].text} 发 → 只多 {f['exposed_streamed'].text}", color=TRANSFER
        )
        stream_label.next_to(cells, DOWN, buff=style.GAP_ML, aligned_edge=LEFT)
        with self.narrate("kv_stream") as beat:
            self.play(FadeIn(stream_name), run_time=beat.share(0.1))
            self.add(cells, sends)
            self.play(run_clock(0, layers + 0.1, cells, sends), run_time=beat.share(0.6))
            self.play(FadeIn(stream_label), run_time=beat.share(0.2))
        self.finish()

    def _bars(self, rows: list[tuple[str, float, str]], top: float) -> VGroup:
        """Rows of (name, bar length, value): the name at RIGHT_X, the bar after it, the value at its end."""
        out = VGroup()
        for i, (name, length, value) in enumerate(rows):
            y = top - self.ROW_PITCH * i
            label = note(name, color=style.TEXT).move_to((self.RIGHT_X, y, 0), aligned_edge=LEFT)
            bar = widgets.bar(max(length, 0.03), 0.3, DECODE).move_to((self.RIGHT_X + 1.6, y, 0), aligned_edge=LEFT)
            text = note(value, color=style.TEXT).next_to(bar, RIGHT, buff=style.GAP_S)
            out.add(VGroup(label, bar, text))
        return out

    @staticmethod
    def _grow(row: VGroup) -> LaggedStart:
        return LaggedStart(FadeIn(row[0]), GrowFromEdge(row[1], LEFT), FadeIn(row[2]), lag_ratio=0.3)


# -- pd_timeline ---------------------------------------------------------------------------
class PdTimeline(LectureScene):
    """Twelve requests, two layouts, one clock: colocated lanes where prefill blocks cut the decode stream,
    a prefill lane and a decode lane joined by KV hops; the worst request's tokens show the stall."""

    LEFT_X, WIDTH = -4.75, 11.0  # where t = 0 sits, and the width of the simulated span
    CARD_Y = 2.75
    MIXED_Y = (1.85, 1.37)  # lane centres
    SPLIT_Y = (0.05, -0.43)
    LANE_H = 0.34
    TOKENS_DY = 0.42  # a request's token row under its panel
    AXIS_Y = -1.45
    BILL_Y = -1.98

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        mixed, split = f["mixed_lanes"].value, f["split_lanes"].value
        span = max(mixed["end"], split["end"])
        self.unit = self.WIDTH / span
        requests = f["requests"].value

        cards = VGroup()
        for r in requests:
            text = note(f"{r['prompt']}/{r['output']}", color=style.TEXT, size=style.SMALL_SIZE - 4)
            box = widgets.panel(text.width + 0.08, 0.36, corner_radius=0.05)
            cards.add(VGroup(box, text.move_to(box)))
        cards.arrange(RIGHT, buff=0.05).move_to((0, self.CARD_Y, 0))
        ticks = VGroup(
            *(
                Line(UP * 0.1, DOWN * 0.1, color=style.HIGHLIGHT, stroke_width=3).move_to(
                    (self.x(r["arrival"]), self.AXIS_Y, 0)
                )
                for r in requests
            )
        )
        axis = Line(
            (self.LEFT_X, self.AXIS_Y, 0), (self.LEFT_X + self.WIDTH, self.AXIS_Y, 0), color=style.MUTED, stroke_width=2
        )
        axis_ticks = VGroup(
            *(
                note(text).next_to((self.x(at), self.AXIS_Y, 0), DOWN, buff=style.GAP_S)
                for at, text in f["second_ticks"].value
            )
        )
        card_note = note("卡片：提示/输出 token").to_corner(UP + RIGHT, buff=style.EDGE)
        with self.narrate("tl_arrive") as beat:
            self.play(Create(axis), FadeIn(axis_ticks), run_time=beat.share(0.2))
            self.play(
                LaggedStart(
                    *(
                        LaggedStart(FadeIn(card, shift=0.3 * DOWN), FadeIn(tick), lag_ratio=0.0)
                        for card, tick in zip(cards, ticks)
                    ),
                    lag_ratio=0.35,
                ),
                FadeIn(card_note),
                run_time=beat.share(0.7),
            )

        mixed_boxes, mixed_names = self._lanes(mixed, self.MIXED_Y, ("实例 0", "实例 1"))
        panel_mixed = note("混部", color=COLOCATED, size=style.LABEL_SIZE).move_to(
            (-6.55, sum(self.MIXED_Y) / 2, 0), aligned_edge=LEFT
        )
        key = VGroup(
            VGroup(widgets.bar(0.3, 0.2, PREFILL), note("prefill")).arrange(RIGHT, buff=style.GAP_S),
            VGroup(widgets.bar(0.3, 0.2, DECODE), note("decode")).arrange(RIGHT, buff=style.GAP_S),
            VGroup(widgets.bar(0.3, 0.2, TRANSFER), note("KV 传输")).arrange(RIGHT, buff=style.GAP_S),
        ).arrange(RIGHT, buff=style.GAP_L)
        key.next_to((self.LEFT_X + self.WIDTH, self.MIXED_Y[1] - self.LANE_H / 2, 0), DOWN, buff=style.GAP_S).align_to(
            (self.LEFT_X + self.WIDTH, 0, 0), RIGHT
        )
        with self.narrate("tl_mixed") as beat:
            self.play(FadeIn(panel_mixed), FadeIn(mixed_names), FadeIn(key), run_time=beat.share(0.15))
            self.add(mixed_boxes)
            self.play(run_clock(0, span, mixed_boxes), run_time=beat.share(0.8))

        worst = int(f["worst_request"].value) - 1
        mixed_tokens, split_tokens = f["worst_tokens"].value
        mixed_row, mixed_brace, mixed_gap = self._tokens(
            mixed_tokens, self.MIXED_Y[1] - self.TOKENS_DY, f["mixed_gap"].text
        )
        row_name = note(f"请求 {worst + 1} 出字", color=style.HIGHLIGHT).move_to(
            (-6.55, mixed_row.get_y(), 0), aligned_edge=LEFT
        )
        with self.narrate("tl_gap") as beat:
            self.play(
                FadeOut(key), Indicate(cards[worst], color=style.HIGHLIGHT), FadeIn(row_name), run_time=beat.share(0.25)
            )
            self.play(Create(mixed_row, lag_ratio=0.02), run_time=beat.share(0.35))
            self.play(FadeIn(mixed_brace), FadeIn(mixed_gap), run_time=beat.share(0.25))

        split_boxes, split_names = self._lanes(split, self.SPLIT_Y, ("P", "D"))
        hops = TimedBoxes()
        for a, b in split["transfers"]:
            hop = widgets.bar(max((b - a) * self.unit, 0.03), self.SPLIT_Y[0] - self.SPLIT_Y[1] - self.LANE_H, TRANSFER)
            hops.add_span(hop.move_to((self.x(a), sum(self.SPLIT_Y) / 2, 0), aligned_edge=LEFT), a, b)
        hops.show_until(0)
        panel_split = note("分离", color=SPLIT, size=style.LABEL_SIZE).move_to(
            (-6.55, sum(self.SPLIT_Y) / 2, 0), aligned_edge=LEFT
        )
        split_row, split_brace, split_gap = self._tokens(
            split_tokens, self.SPLIT_Y[1] - self.TOKENS_DY, f["split_gap"].text
        )
        split_row_name = row_name.copy().move_to((-6.55, split_row.get_y(), 0), aligned_edge=LEFT)
        with self.narrate("tl_split") as beat:
            self.play(FadeIn(panel_split), FadeIn(split_names), run_time=beat.share(0.1))
            self.add(split_boxes, hops)
            self.play(run_clock(0, span, split_boxes, hops), run_time=beat.share(0.55))
            self.play(Create(split_row, lag_ratio=0.02), FadeIn(split_row_name), run_time=beat.share(0.15))
            self.play(FadeIn(split_brace), FadeIn(split_gap), run_time=beat.share(0.15))

        bill = VGroup(
            note(
                f"混部　平均首字 {f['mixed_ttft'].text}　平均出字间隔 {f['mixed_tpot'].text}　"
                f"最长停顿 {f['mixed_gap'].text}",
                color=COLOCATED,
                size=style.LABEL_SIZE,
            ),
            note(
                f"分离　平均首字 {f['split_ttft'].text}　平均出字间隔 {f['split_tpot'].text}　"
                f"最长停顿 {f['split_gap'].text}",
                color=SPLIT,
                size=style.LABEL_SIZE,
            ),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_SM)
        bill.move_to((-6.55, self.BILL_Y, 0), aligned_edge=UP + LEFT)
        tag = recon_tag().next_to(bill, RIGHT, buff=style.GAP_L).align_to(bill, DOWN)
        with self.narrate("tl_bill") as beat:
            self.play(FadeOut(axis_ticks), FadeIn(bill[0]), run_time=beat.share(0.3))
            self.play(FadeIn(bill[1]), FadeIn(tag), run_time=beat.share(0.3))
            self.play(Indicate(bill[1], color=style.HIGHLIGHT, scale_factor=1.03), run_time=beat.share(0.2))
        self.finish()

    def x(self, t: float) -> float:
        return self.LEFT_X + t * self.unit

    def _lanes(self, lanes: dict, ys: tuple[float, ...], names: tuple[str, ...]) -> tuple[TimedBoxes, VGroup]:
        """A layout's lanes: its timed boxes, and each lane's ground with its name (drawn first)."""
        boxes = TimedBoxes()
        grounds = VGroup()
        for y, work in zip(ys, lanes["work"]):
            grounds.add(
                widgets.bar(self.WIDTH, self.LANE_H, style.PANEL, opacity=1).move_to(
                    (self.LEFT_X, y, 0), aligned_edge=LEFT
                )
            )
            for kind, a, b in work:
                color = PREFILL if kind == "prefill" else DECODE
                box = widgets.bar(
                    max((b - a) * self.unit, 0.01), self.LANE_H, color, stroke_color=style.BACKGROUND, stroke_width=1
                )
                boxes.add_span(box.move_to((self.x(a), y, 0), aligned_edge=LEFT), a, b)
        boxes.show_until(0)
        labels = VGroup(
            *(note(name).next_to((self.LEFT_X, y, 0), LEFT, buff=style.GAP_S) for name, y in zip(names, ys))
        )
        return boxes, VGroup(*(VGroup(ground, label) for ground, label in zip(grounds, labels)))

    def _tokens(self, times: list[float], y: float, gap_text: str) -> tuple[VGroup, BraceBetweenPoints, VGroup]:
        """A request's tokens as ticks at their times, and a brace under the longest gap between two of them."""
        row = VGroup(
            *(
                Line(UP * 0.1, DOWN * 0.1, color=style.HIGHLIGHT, stroke_width=1.2).move_to((self.x(t), y, 0))
                for t in times
            )
        )
        gaps = [b - a for a, b in itertools.pairwise(times)]
        i = int(np.argmax(gaps))
        pad = max(0.0, (0.15 - (times[i + 1] - times[i]) * self.unit) / 2)  # a gap too short to brace, widened
        brace = BraceBetweenPoints(
            (self.x(times[i]) - pad, y - 0.12, 0),
            (self.x(times[i + 1]) + pad, y - 0.12, 0),
            direction=DOWN,
            color=style.HIGHLIGHT,
        )
        label = note(gap_text, color=style.HIGHLIGHT).next_to(brace, RIGHT, buff=style.GAP_S)
        return row, brace, label


# -- pd_ratio_sweep ------------------------------------------------------------------------
class PdRatioSweep(LectureScene):
    """Four ways to split four instances, each a row of boxes; the prefill side's utilisation first, then the
    simulator fills each row's SLO gauge and says what it misses; DeepSeek-V3's own split at the end."""

    NAME_X, BOX_X, UTIL_X, GAUGE_X = -6.6, -5.15, -1.85, 0.25
    ROW_TOP, ROW_PITCH = 1.55, 0.9
    BOX = (0.62, 0.56)
    GAUGE_W = 2.6

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        names = f["names"].value
        roles = (("mixed",) * 4, ("P", "D", "D", "D"), ("P", "P", "D", "D"), ("P", "P", "P", "D"))
        rows = VGroup()
        for i, (name, row_roles) in enumerate(zip(names, roles)):
            y = self.ROW_TOP - self.ROW_PITCH * i
            label = note(name, color=style.TEXT, size=style.LABEL_SIZE).move_to((self.NAME_X, y, 0), aligned_edge=LEFT)
            boxes = VGroup(*(self._instance(role) for role in row_roles)).arrange(RIGHT, buff=0.1)
            boxes.move_to((self.BOX_X, y, 0), aligned_edge=LEFT)
            rows.add(VGroup(label, boxes))
        header = VGroup(
            note("prefill 忙碌程度").move_to((self.UTIL_X, self.ROW_TOP + 0.6, 0), aligned_edge=LEFT),
            note(f"SLO 达标率（TTFT ≤ {f['slo_ttft'].text}，TPOT ≤ {f['slo_tpot'].text}）").move_to(
                (self.GAUGE_X, self.ROW_TOP + 0.6, 0), aligned_edge=LEFT
            ),
        )
        setup = note(
            f"{f['instances'].text} 个实例 · {f['gpus'].text} 张卡 · {f['rate'].text} · {f['requests'].text} 个请求",
            color=style.TEXT,
        )
        setup.move_to((self.NAME_X, 2.75, 0), aligned_edge=LEFT)
        tag = recon_tag().next_to(setup, RIGHT, buff=style.GAP_M)
        with self.narrate("ratio_setup") as beat:
            self.play(FadeIn(setup), FadeIn(tag), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(row, shift=0.2 * RIGHT) for row in rows), lag_ratio=0.3), run_time=beat.share(0.6)
            )

        rough = note(
            f"prefill 平均 {f['mean_prefill'].text} × {f['rate'].text} = {f['prefill_work'].text} 个实例的活",
            color=PREFILL,
            size=style.LABEL_SIZE,
        )
        rough.move_to((self.NAME_X, 2.75, 0), aligned_edge=LEFT)
        with self.narrate("ratio_rough") as beat:
            self.play(FadeOut(setup), FadeOut(tag), run_time=beat.share(0.15))
            self.play(Write(rough), run_time=beat.share(0.5))

        utils = [None, f["util_1"], f["util_2"], f["util_3"]]
        verdicts = [None, style.VERDICT_BAD, style.HIGHLIGHT, style.VERDICT_GOOD]
        util_texts = VGroup()
        for i in range(1, 4):
            text = note(utils[i].text, color=verdicts[i], size=style.LABEL_SIZE)
            util_texts.add(text.move_to((self.UTIL_X, rows[i].get_y(), 0), aligned_edge=LEFT))
        queue = VGroup(*(Dot(radius=0.07, color=PREFILL) for _ in range(6))).arrange(LEFT, buff=0.06)
        queue.next_to(rows[1][1][0], UP, buff=style.GAP_XS).align_to(rows[1][1][0], LEFT).shift(0.02 * UP)
        with self.narrate("ratio_queue") as beat:
            self.play(FadeIn(header[0]), FadeIn(util_texts[0]), run_time=beat.share(0.2))
            self.play(
                LaggedStart(*(FadeIn(d, shift=0.2 * RIGHT) for d in queue), lag_ratio=0.4), run_time=beat.share(0.3)
            )
            self.play(FadeIn(util_texts[1]), FadeIn(util_texts[2]), run_time=beat.share(0.25))

        met, why = f["met"].value, f["why"].value
        reasons = {
            0: f"TPOT p90 {f['tpot90_mixed'].text}",
            1: f"TTFT p90 {f['ttft90_1p3d'].text}",
            2: f"TTFT p90 {f['ttft90'].value[2]}",
            3: "全部达标",
        }
        gauges = VGroup()
        for i, row in enumerate(rows):
            y = row.get_y()
            frame = Rectangle(width=self.GAUGE_W, height=0.32, stroke_color=style.MUTED, stroke_width=1.5)
            frame.move_to((self.GAUGE_X, y, 0), aligned_edge=LEFT)
            color = style.VERDICT_GOOD if met[i] >= 0.9 else style.VERDICT_BAD
            fill = widgets.bar(max(met[i], 0.01) * self.GAUGE_W, 0.32, color).move_to(frame, aligned_edge=LEFT)
            value = note(f[f"met_{i}"].text, color=color, size=style.LABEL_SIZE).next_to(frame, RIGHT, buff=style.GAP_S)
            reason = note(reasons[i] if why[i] or i == 3 else "", color=style.TEXT).next_to(
                value, RIGHT, buff=style.GAP_M
            )
            gauges.add(VGroup(frame, fill, value, reason))
        with self.narrate("ratio_gauges") as beat:
            self.play(FadeIn(header[1]), *(FadeIn(g[0]) for g in gauges), run_time=beat.share(0.15))
            self.play(
                LaggedStart(
                    *(LaggedStart(GrowFromEdge(g[1], LEFT), FadeIn(g[2]), FadeIn(g[3]), lag_ratio=0.4) for g in gauges),
                    lag_ratio=0.4,
                ),
                run_time=beat.share(0.7),
            )

        d_box = rows[3][1][3]
        v3 = VGroup(
            note("DeepSeek-V3 的部署：", color=style.TEXT),
            VGroup(widgets.bar(0.3, 0.26, PREFILL), note(f"prefill {f['v3_prefill'].text} 卡")).arrange(
                RIGHT, buff=style.GAP_S
            ),
            VGroup(
                widgets.bar(3.0, 0.26, DECODE), note(f"decode {f['v3_decode'].text} 卡（{f['v3_ratio'].text}）")
            ).arrange(RIGHT, buff=style.GAP_S),
        ).arrange(RIGHT, buff=style.GAP_M)
        v3.move_to((self.NAME_X, -2.35, 0), aligned_edge=LEFT)
        with self.narrate("ratio_decode") as beat:
            self.play(Indicate(d_box, color=style.HIGHLIGHT), run_time=beat.share(0.3))
            self.play(FadeIn(v3[0]), GrowFromEdge(v3[1], LEFT), GrowFromEdge(v3[2], LEFT), run_time=beat.share(0.4))
        self.finish()

    def _instance(self, role: str) -> VGroup:
        """An 8-GPU instance: P (prefill), D (decode), or mixed (both, in two halves)."""
        w, h = self.BOX
        if role == "mixed":
            top = widgets.bar(w, h / 2, PREFILL, opacity=style.FILL_SOFT)
            bottom = widgets.bar(w, h / 2, DECODE, opacity=style.FILL_SOFT).next_to(top, DOWN, buff=style.FLUSH)
            return VGroup(top, bottom, note("混", color=style.TEXT).move_to(VGroup(top, bottom)))
        return widgets.block(w, h, PREFILL if role == "P" else DECODE, role, size=style.LABEL_SIZE)


# -- pd_goodput ----------------------------------------------------------------------------
class PdGoodput(LectureScene):
    """SLO attainment against the arrival rate for the four layouts; goodput read off at 90%; the TPOT SLO
    relaxed, the colocated curve slides right past the best split."""

    PLOT_CENTRE = 2.5 * LEFT + 0.15 * UP
    SIDE_X = 2.5

    def construct(self) -> None:
        f = self.facts
        self.show_title()
        axes = widgets.sketch_axes([0, 50, 4], [0, 1.05, 0.25], 7.4, 4.0, ticks=True)
        axes.move_to(self.PLOT_CENTRE)
        ticks = widgets.tick_labels(axes, f["rate_ticks"].value, f["share_ticks"].value)
        x_name = note("req/s").next_to(axes.x_axis, RIGHT, buff=style.GAP_S)
        y_name = (
            note("SLO 达标率（横轴：到达率）").next_to(axes.y_axis, UP, buff=style.GAP_S).align_to(axes.y_axis, LEFT)
        )
        share = f["share"].value
        line90 = DashedLine(axes.c2p(0, share), axes.c2p(50, share), color=style.HIGHLIGHT, stroke_width=2)
        line90_name = note(f["share"].text, color=style.HIGHLIGHT).next_to(line90, RIGHT, buff=style.GAP_S)
        slo = VGroup(
            note("SLO：", color=style.TEXT),
            note(f"首字 TTFT ≤ {f['slo_ttft'].text}", color=style.TEXT),
            note(f"出字间隔 TPOT ≤ {f['strict_tpot'].text}", color=style.TEXT),
            recon_tag(),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
        slo.move_to((self.SIDE_X, 1.9, 0), aligned_edge=UP + LEFT)
        with self.narrate("gp_define") as beat:
            self.play(Create(axes), FadeIn(ticks), FadeIn(x_name), FadeIn(y_name), run_time=beat.share(0.3))
            self.play(Create(line90), FadeIn(line90_name), FadeIn(slo), run_time=beat.share(0.3))

        rates, names, curves = f["rates"].value, f["names"].value, f["curves"].value
        colors = {names[0]: COLOCATED, names[3]: SPLIT}

        def curve(name: str, slo_name: str) -> VMobject:
            color = colors.get(name, style.MUTED)
            width = 4 if name in colors else 2
            return widgets.line_through(axes, list(zip(rates, curves[name][slo_name])), color, width)

        strict = {name: curve(name, "strict") for name in names}
        legend = VGroup(
            *(
                VGroup(
                    Line(ORIGIN, 0.4 * RIGHT, color=colors.get(n, style.MUTED), stroke_width=4),
                    note(n, color=style.TEXT),
                ).arrange(RIGHT, buff=style.GAP_S)
                for n in names
            )
        ).arrange_in_grid(rows=2, cols=2, buff=(style.GAP_L, style.GAP_S), col_alignments="ll")
        legend.next_to(slo, DOWN, buff=style.GAP_L, aligned_edge=LEFT)
        got = f["goodput"].value
        mark_mixed = self._mark(axes, got["strict"][0], share, COLOCATED)
        mark_split = self._mark(axes, got["strict"][3], share, SPLIT)
        verdict = VGroup(
            note(f"goodput {f['strict_mixed'].text} → {f['strict_split'].text}", color=style.TEXT),
            note(f"3P1D ÷ 混部 = {f['strict_ratio'].text}", color=style.VERDICT_GOOD),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
        verdict.next_to(legend, DOWN, buff=style.GAP_L, aligned_edge=LEFT)
        with self.narrate("gp_strict") as beat:
            self.play(FadeIn(legend), *(Create(c) for c in strict.values()), run_time=beat.share(0.45))
            self.play(FadeIn(mark_mixed), FadeIn(mark_split), run_time=beat.share(0.2))
            self.play(FadeIn(verdict), run_time=beat.share(0.2))

        loose_mixed = curve(names[0], "loose")
        new_tpot = note(f"出字间隔 TPOT ≤ {f['loose_tpot'].text}", color=style.HIGHLIGHT).move_to(
            slo[2], aligned_edge=LEFT
        )
        mark_loose = self._mark(axes, got["loose"][0], share, COLOCATED)
        verdict_loose = VGroup(
            note(f"goodput {f['loose_mixed'].text} 对 {f['loose_split'].text}", color=style.TEXT),
            note(f"3P1D ÷ 混部 = {f['loose_ratio'].text}", color=style.VERDICT_BAD),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
        verdict_loose.move_to(verdict, aligned_edge=UP + LEFT)
        with self.narrate("gp_loose") as beat:
            self.play(Transform(slo[2], new_tpot), run_time=beat.share(0.15))
            self.play(
                Transform(strict[names[0]], loose_mixed), Transform(mark_mixed, mark_loose), run_time=beat.share(0.35)
            )
            self.play(Indicate(strict[names[3]], color=style.HIGHLIGHT, scale_factor=1), run_time=beat.share(0.15))
            self.play(Transform(verdict, verdict_loose), run_time=beat.share(0.2))

        moral = VGroup(
            note(f"DistServe（论文）：最多 {f['distserve'].text}", color=style.TEXT),
            note("本课：单次模拟，自设负载与 SLO", color=style.MUTED),
        ).arrange(DOWN, aligned_edge=LEFT, buff=style.GAP_S)
        moral.next_to(verdict, DOWN, buff=style.GAP_M, aligned_edge=LEFT)
        with self.narrate("gp_moral") as beat:
            self.play(FadeIn(moral, shift=0.1 * UP), run_time=beat.share(0.3))
        self.finish()

    @staticmethod
    def _mark(axes, rate: float, share: float, color: str) -> VGroup:
        """Where a curve's goodput is read: a dot on the 90% line and a drop to the rate axis."""
        top = axes.c2p(rate, share)
        return VGroup(
            DashedLine(top, axes.c2p(rate, 0), color=color, stroke_width=2),
            Dot(top, radius=0.08, color=color),
        )
