"""Contact sheets: a chapter's figures as one titled grid of stills (Pillow), to look over at once.

One row per figure (its id and Chinese title, then its stills at the
requested fractions of its length), one column per fraction. The labels
are set in the course font, found through fontconfig, so the Chinese
titles show as glyphs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from tools.files import TimeLimitError, run_limited
from tools.settings import time_limit

CELL = (427, 240)  # one still, half of 480p: labels at 480p stay readable
GAP = 8
LABEL_WIDTH = 240
TITLE_HEIGHT, HEADER_HEIGHT = 56, 30
BACKGROUND, INK, MUTED = "#0E1116", "#E8E6E3", "#8B949E"
FONT_FAMILY = "Noto Sans CJK SC"


@dataclass(frozen=True)
class Row:
    figure: str  # its id
    title: str  # its Chinese title
    images: list  # PIL images, one per fraction


def _font(size: int) -> ImageFont.ImageFont:
    """The course font from fontconfig (with its face index in the collection); Pillow's own if absent."""
    try:
        done = run_limited(
            ["fc-match", FONT_FAMILY, "--format=%{file}|%{index}"], time_limit("fontconfig"), "finding the sheet's font"
        )
        if done.returncode != 0:
            raise ValueError(done.returncode)
        path, index = done.stdout.decode().rsplit("|", 1)
        return ImageFont.truetype(path, size, index=int(index))
    except (OSError, ValueError, TimeLimitError):
        return ImageFont.load_default(size)


def _wrapped(draw: ImageDraw.ImageDraw, text: str, font, width: int) -> str:
    """The text broken into lines no wider than `width` (between characters: Chinese has no spaces)."""
    lines = [""]
    for ch in text:
        if lines[-1] and draw.textlength(lines[-1] + ch, font=font) > width:
            lines.append(ch.lstrip())
        else:
            lines[-1] += ch
    return "\n".join(lines)


def _heading(fraction: float) -> str:
    return "end" if fraction >= 1 else f"{fraction:.0%}"


def contact_sheet(title: str, fractions: list[float], rows: list[Row], out: Path) -> Path:
    """Write the grid to `out` (PNG) and return it."""
    width = LABEL_WIDTH + len(fractions) * (CELL[0] + GAP) + GAP
    height = TITLE_HEIGHT + HEADER_HEIGHT + len(rows) * (CELL[1] + GAP) + GAP
    sheet = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    big, small = _font(26), _font(16)
    draw.text((GAP * 2, 12), title, font=big, fill=INK)
    for col, fraction in enumerate(fractions):
        draw.text((LABEL_WIDTH + col * (CELL[0] + GAP), TITLE_HEIGHT + 4), _heading(fraction), font=small, fill=MUTED)
    for n, row in enumerate(rows):
        top = TITLE_HEIGHT + HEADER_HEIGHT + n * (CELL[1] + GAP)
        label = row.figure + "\n" + _wrapped(draw, row.title, small, LABEL_WIDTH - 3 * GAP)
        draw.multiline_text((GAP * 2, top + 4), label, font=small, fill=INK, spacing=6)
        for col, image in enumerate(row.images):
            sheet.paste(image.convert("RGB").resize(CELL, Image.LANCZOS), (LABEL_WIDTH + col * (CELL[0] + GAP), top))
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out, optimize=True)
    return out
