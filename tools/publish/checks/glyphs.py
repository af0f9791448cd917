"""Every character the figures put on screen has a glyph in the fonts the scenes name: a check before rendering.

Without the glyph, manim only logs a warning and draws a box (tofu), so a build would publish a video whose
label is a box. The check covers every character the figures being built put on screen: titles, source notes,
captions, fact texts and the string literals of their scene files, against the faces fontconfig resolves
(tools/publish/keys/fonts.py). Typst finds its fonts on its own; its default families are checked too.
"""

from __future__ import annotations

import ast
import unicodedata
from functools import cache, lru_cache
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.files import content_key, source_digest, write_atomically
from tools.publish.keys import scene_source
from tools.publish.keys.fonts import FontError, Resolved, key_part, resolve, style_fonts
from tools.voice import cues

SUPERSCRIPTS = set("⁰¹²³⁴⁵⁶⁷⁸⁹⁻")  # set in SUPERSCRIPT_FONT (see style.zh)
# Typst's own defaults for text and for math (manim's Typst template keeps them).
TYPST_FAMILIES = ("Libertinus Serif", "New Computer Modern Math")


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
