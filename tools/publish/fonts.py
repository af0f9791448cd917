"""The fonts the scenes name, resolved the way manim's text will be, and checked for every character shown.

Without the Chinese font, manim only logs a warning and draws boxes (tofu),
so a build would publish a video whose every label is a box. This module
asks fontconfig which file each font in ``scenes/style.py`` resolves to,
refuses a fallback to another family, and checks that the file covers every
character the figures being built put on screen: titles, source notes,
captions, fact texts and the string literals of their scene files. Typst finds its fonts on
its own; its default families are checked too. The resolved files (path and
sha256) go into every figure's render key, so a font change re-renders.
"""

from __future__ import annotations

import ast
import shutil
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.files import TimeLimitError, content_key, file_sha256, run_limited, source_digest, write_atomically
from tools.publish import scene_source
from tools.voice import cues

STYLE = settings.SCENES_DIR / "style.py"
# The style names its fonts in these module-level constants.
FONT_CONSTANTS = ("FONT", "SUPERSCRIPT_FONT")
SUPERSCRIPTS = set("⁰¹²³⁴⁵⁶⁷⁸⁹⁻")  # set in SUPERSCRIPT_FONT (see style.zh)
# Typst's own defaults for text and for math (manim's Typst template keeps them).
TYPST_FAMILIES = ("Libertinus Serif", "New Computer Modern Math")


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


def _literals(path: Path) -> tuple[str, ...]:
    """Every string literal of a scene file, f-strings' literal parts included."""
    return _literals_in(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=64)
def _literals_in(source: str) -> tuple[str, ...]:
    """By the file's text (lecture preview parses again only the scene file that was saved), from the parse
    the checks of scene classes made of it."""
    tree = scene_source.parsed(source)
    return tuple(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def shown_text(figures: list[Figure]) -> dict[str, str]:
    """Each character the figures put on screen, with the first place it comes from: their titles,
    source notes, cues and facts, and the string literals of their chapters' scene files and of the
    shared scene modules."""
    sources: list[tuple[str, str]] = []
    for fig in figures:
        sources += [(f"title of {fig.id}", fig.title), (f"source note of {fig.id}", fig.source)]
        sources += [(f"cue {cue.id}", cue.caption) for cue in cues.figure_cues(fig.id)]
        sources += [(f"fact {fig.id}.{name}", fact.text) for name, fact in catalogue.facts(fig.id).items()]
    chapter_files = {ch.scene_file for ch in catalogue.chapters()}
    shown_files = {catalogue.chapter(fig.chapter).scene_file for fig in figures}
    for path in sorted(settings.SCENES_DIR.glob("*.py")):
        if path in shown_files or path not in chapter_files:
            sources += [(f"a string in scenes/{path.name}", text) for text in _literals(path)]
    where: dict[str, str] = {}
    for place, text in sources:
        for char in text:
            if char not in where and not char.isspace() and unicodedata.category(char)[0] != "C":
                where[char] = place
    return where


@cache
def typst_families() -> set[str]:
    """The font families Typst finds (a tenth of a second to list; they do not change while a process runs)."""
    import typst

    return {family.lower() for family in typst.Fonts().families()}


def check(figures: list[Figure] | None = None) -> list[Resolved]:
    """Resolve the style's fonts and check every character the figures (all by default) show has a
    glyph; returns the faces.

    A glyph check passed once for the same figures, project source and font files is not run again
    (``.cache/fonts-checked``): finding every character shown means computing the figures' facts.
    """
    figures = catalogue.figures() if figures is None else figures
    names = style_fonts()
    main, superscript = resolve(names["FONT"]), resolve(names["SUPERSCRIPT_FONT"])
    passed = settings.cache_root() / "fonts-checked"
    checked = " ".join(sorted(fig.id for fig in figures))
    key = content_key([source_digest(), key_part(), version("typst"), checked])
    if passed.exists() and passed.read_text(encoding="utf-8") == key:
        return [main, superscript]
    _check_glyphs(main, superscript, shown_text(figures))
    write_atomically(passed, key)
    return [main, superscript]


def _check_glyphs(main: Resolved, superscript: Resolved, shown: dict[str, str]) -> None:
    # Exponents are set in SUPERSCRIPT_FONT (style.zh); the few symbols the CJK face lacks (⅓ ₁ ⋮ ✗)
    # are drawn from fontconfig's fallback, which is that same DejaVu face: either face may cover them.
    missing = {
        char: place
        for char, place in shown.items()
        if not (superscript.covers(char) if char in SUPERSCRIPTS else main.covers(char) or superscript.covers(char))
    }
    if missing:
        listed = "; ".join(f"'{c}' U+{ord(c):04X} ({place})" for c, place in list(missing.items())[:10])
        raise FontError(
            f"{len(missing)} character(s) shown on screen have no glyph in "
            f"'{main.family}' ({main.file}) or '{superscript.family}' ({superscript.file}): {listed}"
        )
    absent = [family for family in TYPST_FAMILIES if family.lower() not in typst_families()]
    if absent:
        raise FontError(
            f"Typst, which sets the formulas, cannot find its font(s) {', '.join(absent)}: reinstall the typst package"
        )


# A font file does not change while a process runs; hashing a 20 MB collection once is enough.
_font_sha256 = cache(file_sha256)


def key_part() -> dict[str, str]:
    """The resolved font files by family, each as path and sha256, for the render key."""
    names = style_fonts()
    return {
        name: f"{resolve(name).file}:{resolve(name).index}:{_font_sha256(resolve(name).file)}"
        for name in names.values()
    }
