"""``lecture frames``: stills of published figures, as PNGs or as contact sheets, to look over what was built.

A contact sheet is one chapter's figures as one titled grid of stills (Pillow): one row per figure (its id and
Chinese title, then its stills at the requested fractions of its length), one column per fraction. The labels
are set in the course font, found through fontconfig, so the Chinese titles show as glyphs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.files import TimeLimitError, run_limited
from tools.publish.build.build import renders_dir
from tools.publish.publishing import manifest, media
from tools.publish.rendering.render import QUALITIES, BuildError
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


def _clip_frames(quality: str, only: str | None, fractions: list[float]) -> dict[Figure, list]:
    """Each selected figure's frames (PIL images) at fractions of its length, from the published clips."""
    out_dir = renders_dir(quality)
    published = manifest.load(out_dir).figures
    stills = {}
    for fig in catalogue.select(only):
        if fig.id not in published:
            raise BuildError(f"{fig.chapter}/{fig.id} is not rendered at {QUALITIES[quality]}: run lecture build first")
        entry = published[fig.id]
        clip_path = out_dir / entry.files["mp4"].path
        stills[fig] = [media.frame_at(clip_path, None if f >= 1 else f * entry.duration) for f in fractions]
    return stills


def frames(quality: str, only: str | None, fractions: list[float]) -> list[Path]:
    """Still PNGs of rendered figures at fractions of their length, for review."""
    folder = renders_dir(quality) / "frames"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for fig, images in _clip_frames(quality, only, fractions).items():
        for fraction, image in zip(fractions, images):
            out = folder / f"{fig.id}-{round(fraction * 100):03d}.png"
            image.save(out)
            written.append(out)
    return written


def sheets(quality: str, only: str | None, fractions: list[float]) -> list[Path]:
    """One contact sheet per chapter (renders/<quality>/frames/<chapter>-sheet.png): its figures'
    stills at the fractions, one row per figure, for looking over a chapter at once."""
    frames_of = _clip_frames(quality, only, fractions)
    written = []
    for chapter in catalogue.chapters():
        rows = [Row(fig.id, fig.title, images) for fig, images in frames_of.items() if fig.chapter == chapter.id]
        if rows:
            out = renders_dir(quality) / "frames" / f"{chapter.id}-sheet.png"
            contact_sheet(f"{chapter.title}  ({chapter.id}, {QUALITIES[quality]})", fractions, rows, out)
            written.append(out)
    return written
