"""One visual language for every chapter: palette, fonts, text and layout helpers.

Colours carry meaning and keep it across chapters: forward is always blue,
backward (gradients) always red-orange, bf16 always green, fp32 always
purple; schematic curves are grey, data curves white.
"""

from __future__ import annotations

import re

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    MathTypst,
    Mobject,
    Rectangle,
    Text,
    Typst,
    VGroup,
    config,
)

FONT = "Noto Sans CJK SC"
# Noto Sans CJK has only ¹²³ of the superscript digits; the others fall back to
# another font with another baseline. Exponents are set in one font instead.
SUPERSCRIPT_FONT = "DejaVu Sans"
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"

# Palette -------------------------------------------------------------
BACKGROUND = "#0E1116"
TEXT = "#E8E6E3"
MUTED = "#8B949E"
FORWARD = "#58C4DD"
BACKWARD = "#FF7A59"
BF16 = "#83C167"
FP32 = "#B48EDB"
HIGHLIGHT = "#F4D35E"
SCHEMATIC = "#8B949E"
DATA = "#E8E6E3"
FP16 = "#5FB3B3"
INT8 = "#F2CC8F"
PRECISION = {"bf16": BF16, "fp32": FP32, "fp16": FP16, "int8": INT8}
GOOD = "#83C167"
BAD = "#FC6255"
PANEL = "#1A1F27"
FROZEN = "#6E7681"  # a parameter that is not updated (LoRA's base)
COMM = "#F78FB3"  # communication between cards (all-reduce, all-to-all)
# The two cross-sections of a saddle: the cut that curves up, the cut that curves down.
CURVES_UP = "#4FC1A6"
CURVES_DOWN = "#F28CB1"

# Type sizes (legible at 480p) ----------------------------------------
TITLE_SIZE = 34
BODY_SIZE = 28
LABEL_SIZE = 24
SMALL_SIZE = 20
# Typst math sets about 0.63× the size of Text at the same font size; these match BODY / LABEL text.
MATH_SIZE = 44
MATH_LABEL_SIZE = 38

EDGE = 0.35  # margin to the frame edge


def zh(text: str, size: float = BODY_SIZE, color: str = TEXT, **kwargs) -> Text:
    """Chinese (or mixed) text in the course font (exponents such as 2⁻¹²⁶ in one font)."""
    exponents = {ch: SUPERSCRIPT_FONT for ch in set(text) if ch in _SUPERSCRIPTS}
    if exponents:
        kwargs["t2f"] = exponents | kwargs.get("t2f", {})
    return Text(text, font=FONT, font_size=size, color=color, **kwargs)


def value(fact, size: float = LABEL_SIZE, color: str = TEXT) -> Text:
    """A fact's on-screen text, exactly as tools formatted it."""
    return zh(fact.text, size=size, color=color)


def math(source: str, size: float = BODY_SIZE, color: str = TEXT) -> MathTypst:
    """A formula in Typst math syntax."""
    return MathTypst(source, font_size=size, color=color)


def typst(source: str, size: float = BODY_SIZE, color: str = TEXT) -> Typst:
    """Typst markup (mixed text and $math$), for the rare mixed label."""
    return Typst(source, font_size=size, color=color)


def title(text: str) -> Text:
    """The figure title, at the top left."""
    return zh(text, size=TITLE_SIZE).to_corner(UP + LEFT, buff=EDGE)


def source_line(text: str) -> VGroup:
    """The page's source note, small, at the bottom left.

    A note wider than the frame wraps after a ；, so it stays at SMALL_SIZE
    (legible at 480p) rather than being shrunk.
    """
    width = config.frame_width - 2 * EDGE
    lines: list[str] = []
    for part in re.split(r"(?<=；)|\n", text):
        if lines and zh(lines[-1] + part, size=SMALL_SIZE).width <= width:
            lines[-1] += part
        elif part:
            lines.append(part)
    note = VGroup(*(zh(line.strip(), size=SMALL_SIZE, color=MUTED) for line in lines))
    note.arrange(DOWN, aligned_edge=LEFT, buff=0.1)
    if note.width > width:
        note.scale_to_fit_width(width)
    return note.to_corner(DOWN + LEFT, buff=EDGE)


def caption_stack(*lines: str, size: float = BODY_SIZE, color: str = TEXT) -> VGroup:
    """At most two short lines of prose, left-aligned."""
    if len(lines) > 2:
        raise ValueError("the figure standard allows at most two lines of prose at a time")
    return VGroup(*(zh(line, size=size, color=color) for line in lines)).arrange(DOWN, aligned_edge=LEFT, buff=0.15)


def fits_frame(mobject: Mobject, margin: float = 0.0) -> bool:
    """Whether a mobject lies fully inside the 16:9 frame."""
    half_w, half_h = config.frame_width / 2 - margin, config.frame_height / 2 - margin
    return (mobject.get_left()[0] >= -half_w and mobject.get_right()[0] <= half_w
            and mobject.get_bottom()[1] >= -half_h and mobject.get_top()[1] <= half_h)


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
                 label_size: float = SMALL_SIZE, **kwargs):
        super().__init__(**kwargs)
        self.keys = []
        for cell in cells:
            colour = PRECISION[cell["precision"]]
            factored = cell.get("factored", False)
            box = Rectangle(width=self.SLIVER if factored else cell["bytes"] * unit, height=height,
                            stroke_color=TEXT, stroke_width=2, fill_color=colour, fill_opacity=0.55)
            label = zh(cell["label"], size=label_size)
            if label.width > box.width - 0.1 and "short" in cell:
                label = zh(cell["short"], size=label_size)
            if label.width > box.width - 0.1 and not factored:
                label.scale_to_fit_width(box.width - 0.1)
            size = zh(cell["text"], size=label_size, color=TEXT)
            text = VGroup(label, size).arrange(DOWN, buff=0.08)
            if factored:
                text.next_to(box, DOWN, buff=0.1)
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


def slivers(box: Rectangle, parts: int) -> VGroup:
    """A ledger cell's box cut into `parts` equal vertical slivers, laid over it (ZeRO's cut)."""
    pieces = VGroup(*(Rectangle(width=box.width / parts, height=box.height, stroke_color=TEXT, stroke_width=0.5,
                                fill_color=box.get_fill_color(), fill_opacity=box.get_fill_opacity())
                      for _ in range(parts)))
    return pieces.arrange(RIGHT, buff=0).move_to(box)
