"""One visual language for every chapter: palette by role, type, named gaps and placements, text.

Colours carry meaning and keep it across chapters (forward, backward, compute, memory, a format, a
verdict); gaps and fills come from short named scales; "just above the captions" is one call.
"""

from __future__ import annotations

import re

from manim import (
    DOWN,
    LEFT,
    UP,
    MathTypst,
    Mobject,
    Text,
    Typst,
    VGroup,
    config,
)

from scenes import fact_marks

FONT = "Noto Sans CJK SC"
CODE_FONT = "DejaVu Sans Mono"  # identifiers from source code (function names)
# Noto Sans CJK has only ¹²³ of the superscript digits; the others fall back to
# another font with another baseline. Exponents are set in one font instead.
SUPERSCRIPT_FONT = "DejaVu Sans"
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"

# Palette, by role ------------------------------------------------------
# A token names what a colour means, and a colour means one thing in every chapter: a figure
# picks the role, never a hue. Any two inks differ by ΔE ≥ 10 (CIE76; tests/test_style.py), so no
# two meanings look alike, except the aliases below, which share a colour on purpose.

# Surfaces: what the ink is drawn on.
BACKGROUND = "#0E1116"
PANEL = "#1A1F27"  # a panel set off from the background, barely
SURFACES = ("BACKGROUND", "PANEL")

# Neutral ink.
TEXT = "#E8E6E3"  # prose and values
MUTED = "#8B949E"  # axes, secondary labels, the source line
HIGHLIGHT = "#F4D35E"  # what the narration points at now
FROZEN = "#6E7681"  # a parameter that is not updated (LoRA's base)

# The two directions of a training step.
FORWARD = "#58C4DD"  # the forward pass: activations
BACKWARD = "#FF7A59"  # the backward pass: gradients
WEIGHT_GRAD = "#C0583E"  # the weight-gradient half of a split backward (W): backward's, darker

# Resources a step spends.
COMPUTE = "#5B84E0"  # arithmetic: FLOPs, a GPU busy
MEMORY = "#D463B0"  # bytes held: activations kept, a checkpoint
COMM = "#F78FB3"  # bytes sent between cards (all-reduce, all-to-all)

# Number formats.
FP32 = "#B48EDB"
BF16 = "#83C167"
FP16 = "#5FB3B3"
INT8 = "#F2CC8F"
PRECISION = {"bf16": BF16, "fp32": FP32, "fp16": FP16, "int8": INT8}

# A verdict: this works, this fails.
VERDICT_GOOD = "#3DDC97"
VERDICT_BAD = "#E5484D"

# Neutral series: two of a kind on one plot (two methods, two cuts of a surface, x and F(x)),
# none of them a direction, resource or format. The course page draws RMSProp orange: SERIES_B.
SERIES_A = "#6CA6E0"
SERIES_B = "#F5A142"

# Aliases: a second role that shares a colour on purpose.
DATA = TEXT  # a measured curve reads like text
SCHEMATIC = MUTED  # a sketched curve reads like an axis
ALIASES = {"DATA": "TEXT", "SCHEMATIC": "MUTED"}

# Type sizes (legible at 480p) ----------------------------------------
TITLE_SIZE = 34
BODY_SIZE = 28
LABEL_SIZE = 24
SMALL_SIZE = 20
# Typst math sets about 0.63× the size of Text at the same font size; these match BODY / LABEL text.
MATH_SIZE = 44
MATH_LABEL_SIZE = 38

EDGE = 0.35  # margin to the frame edge: nothing drawn closer to it

# The bottom band the player's captions cover, as a share of the frame's height: nothing drawn in it
# while a cue plays (the source line, shown after the last cue, may sit there). Measured in Debian's
# Chromium, an 854x480 player, the site's default captions: a 20-character line covers the bottom 6%
# while the video plays, and moves up above the control bar, to 15-21% from the bottom, while the
# controls show (paused, or the pointer moves). 15% clears the first with room to spare.
CAPTION_BAND = 0.15
CAPTION_TOP = -config.frame_height / 2 + CAPTION_BAND * config.frame_height  # the band's upper edge, y = -2.8

# Gaps between neighbours, smallest first: the buffers figures use. A literal buff is for geometry
# one figure needs (a cell's own padding), never for "a little space".
FLUSH = 0  # touching: a bar on its axis, a label on its box's edge
GAP_XS = 0.05  # a mark and its tick, two stacked glyphs
GAP_S = 0.1  # a label and the thing it names
GAP_SM = 0.15  # two lines of one text block
GAP_M = 0.2  # two parts of one group
GAP_ML = 0.3  # a group and its caption, two rows of cards
GAP_L = 0.45  # two groups
GAP_XL = 0.6  # two sections of the frame

# Fill opacities of a filled shape, faintest first.
FILL_GHOST = 0.15  # a region behind data: a band, a shadow of what was
FILL_FAINT = 0.3  # a placeholder, an empty or zero slot, what is yet to come
FILL_SOFT = 0.6  # a block with a label on it: the label stays legible
FILL_SOLID = 0.85  # a bar read by its length


def above_captions(mobject: Mobject, buff: float = GAP_M) -> Mobject:
    """Sit a mobject's bottom just above the caption band (see CAPTION_BAND), keeping its x."""
    return mobject.shift((CAPTION_TOP + buff - mobject.get_bottom()[1]) * UP)


# Text is set here, and only here: a fact's text formatted into the words arrives marked
# (scenes/fact_marks.py); the marks come out before the text is set, and the text keeps which glyphs draw
# which fact.


def zh(text: str, size: float = BODY_SIZE, color: str = TEXT, **kwargs) -> Text:
    """Chinese (or mixed) text in the course font (exponents such as 2⁻¹²⁶ in one font)."""
    words, facts = fact_marks.unmark(text)
    exponents = {ch: SUPERSCRIPT_FONT for ch in set(words) if ch in _SUPERSCRIPTS}
    if exponents:
        kwargs["t2f"] = exponents | kwargs.get("t2f", {})
    return fact_marks.tag(Text(words, font=FONT, font_size=size, color=color, **kwargs), words, facts)


def code(text: str, size: float = LABEL_SIZE, color: str = TEXT) -> Text:
    """An identifier from source code, in a monospaced font."""
    words, facts = fact_marks.unmark(text)
    return fact_marks.tag(Text(words, font=CODE_FONT, font_size=size, color=color), words, facts)


def value(fact, size: float = LABEL_SIZE, color: str = TEXT) -> Text:
    """A fact's on-screen text, exactly as tools formatted it."""
    return zh(fact.text, size=size, color=color)


def math(source: str, size: float = BODY_SIZE, color: str = TEXT) -> MathTypst:
    """A formula in Typst math syntax."""
    words, facts = fact_marks.unmark(source)
    return fact_marks.tag(MathTypst(words, font_size=size, color=color), words, facts)


def typst(source: str, size: float = BODY_SIZE, color: str = TEXT) -> Typst:
    """Typst markup (mixed text and $math$), for the rare mixed label."""
    words, facts = fact_marks.unmark(source)
    return fact_marks.tag(Typst(words, font_size=size, color=color), words, facts)


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
    note.arrange(DOWN, aligned_edge=LEFT, buff=GAP_S)
    if note.width > width:
        note.scale_to_fit_width(width)
    return note.to_corner(DOWN + LEFT, buff=EDGE)


def caption_stack(*lines: str, size: float = BODY_SIZE, color: str = TEXT) -> VGroup:
    """At most two short lines of prose, left-aligned."""
    if len(lines) > 2:
        raise ValueError("the figure standard allows at most two lines of prose at a time")
    return VGroup(*(zh(line, size=size, color=color) for line in lines)).arrange(DOWN, aligned_edge=LEFT, buff=GAP_SM)


def fits_frame(mobject: Mobject, margin: float = 0.0) -> bool:
    """Whether a mobject lies fully inside the 16:9 frame."""
    half_w, half_h = config.frame_width / 2 - margin, config.frame_height / 2 - margin
    return (
        mobject.get_left()[0] >= -half_w
        and mobject.get_right()[0] <= half_w
        and mobject.get_bottom()[1] >= -half_h
        and mobject.get_top()[1] <= half_h
    )
