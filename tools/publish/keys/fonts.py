"""The fonts the scenes name, resolved the way manim's text will be: part of every figure's render key.

Without the Chinese font, manim only logs a warning and draws boxes (tofu). This module asks fontconfig which
file each font in ``scenes/style.py`` resolves to and refuses a fallback to another family; the resolved files
(path and sha256) go into every figure's render key, so a font change re-renders. That every character shown
has a glyph in them is a check before rendering (tools/publish/checks/glyphs.py).
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tools import settings
from tools.files import TimeLimitError, file_sha256, run_limited

STYLE = settings.SCENES_DIR / "style.py"
# The style names its fonts in these module-level constants.
FONT_CONSTANTS = ("FONT", "SUPERSCRIPT_FONT")


class FontError(Exception):
    """A font the scenes need is missing or lacks a glyph; the message says which and what to install."""


@dataclass(frozen=True)
class Resolved:
    family: str  # as named in scenes/style.py
    file: Path
    index: int  # face within a collection (.ttc)
    ranges: tuple[tuple[int, int], ...]  # the code points the face covers

    def covers(self, char: str) -> bool:
        code = ord(char)
        return any(low <= code <= high for low, high in self.ranges)


def style_fonts() -> dict[str, str]:
    """FONT and SUPERSCRIPT_FONT as scenes/style.py sets them, read without importing manim."""
    names = {}
    for node in ast.parse(STYLE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in FONT_CONSTANTS:
                    names[target.id] = node.value.value
    return names


def _charset(text: str) -> tuple[tuple[int, int], ...]:
    """fontconfig's charset, e.g. '20-7e a0-17f', as inclusive ranges."""
    ranges = []
    for part in text.split():
        low, _, high = part.partition("-")
        ranges.append((int(low, 16), int(high or low, 16)))
    return tuple(ranges)


@cache
def resolve(family: str) -> Resolved:
    """The face fontconfig gives for `family`; refused when it is another family's (a fallback)."""
    if shutil.which("fc-match") is None:
        raise FontError("fontconfig's fc-match is missing: install fontconfig (make videos does)")
    command = ["fc-match", "-f", "%{family}\n%{file}\n%{index}\n%{charset}", family]
    try:
        done = run_limited(command, settings.time_limit("fontconfig"), f"resolving the font '{family}'")
    except TimeLimitError as err:
        raise FontError(str(err)) from None
    lines = done.stdout.decode(errors="replace").split("\n", 3)
    if done.returncode != 0 or len(lines) < 4:
        raise FontError(
            f"fontconfig could not resolve the font '{family}': {done.stderr.decode(errors='replace').strip()}"
        )
    offered, file, index, charset = lines
    if family.lower() not in [name.strip().lower() for name in offered.split(",")]:
        raise FontError(
            f"the font '{family}' that scenes/style.py names is not installed: fontconfig offers "
            f"'{offered}' ({file}) instead, and its glyphs would be boxes or another font's. "
            f"Install it (Debian: fonts-noto-cjk for Noto Sans CJK SC, fonts-dejavu-core for DejaVu)"
        )
    return Resolved(family, Path(file), int(index or 0), _charset(charset))


# A font file does not change while a process runs; hashing a 20 MB collection once is enough.
_font_sha256 = cache(file_sha256)


def key_part() -> dict[str, str]:
    """The resolved font files by family, each as path and sha256, for the render key."""
    names = style_fonts()
    return {
        name: f"{resolve(name).file}:{resolve(name).index}:{_font_sha256(resolve(name).file)}"
        for name in names.values()
    }
