"""Which text shows which fact: the staging tags each text it makes from a fact, where it makes it.

The staging says which text it made from which fact without naming the fact twice. A scene's facts
(``self.facts``, a :class:`StagedFacts`) hand out their screen text as a :class:`FactText`, a ``str``
that knows its fact's key; formatted into a longer string (``f"最长停顿 {f['mixed_gap'].text}"``) it
leaves invisible marks around itself. The text helpers of ``scenes/style.py`` take the marks out with
:func:`unmark` before the text is set, so every glyph is drawn as before, and :func:`tag` keeps on the
mobject which of its glyphs draw each fact (for a Typst formula, found by setting it once more with the
fact hidden, as manim maps its own ``{{ }}`` groups). :class:`StagedFacts` also notes whose text and whose
value the staging read, so a fact never seen as text can be said to be drawn as a shape, or not at all.

What is on screen when is ``scenes/sightings.py``'s to see.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
from manim import (
    AnimationGroup,
    ClockwiseTransform,
    CounterclockwiseTransform,
    MarkupText,
    Mobject,
    SingleStringMathTex,
    Text,
    Transform,
    Typst,
)
from manim.mobject.text.typst_mobject import _hidden_leaf_indices, _svg_leaf_signatures
from manim.utils.typst_file_writing import typst_to_svg_file

# What counts as text, as the layout probe counts it: words and formulas, whatever draws them.
TEXT_CLASSES = (Text, MarkupText, Typst, SingleStringMathTex)

# Private-use characters: never in a fact's text, never drawn (the text helpers take them out).
OPEN, BETWEEN, CLOSE = "\ue000", "\ue001", "\ue002"
_MARKED = re.compile(f"{OPEN}([^{BETWEEN}{CLOSE}]*){BETWEEN}([^{OPEN}{CLOSE}]*){CLOSE}")
_STRAY = re.compile(f"[{OPEN}{BETWEEN}{CLOSE}]")


class MarkError(ValueError):
    """A fact's marked text was cut apart before it was set (the marks would be drawn)."""


class FactText(str):
    """A fact's screen text that knows its fact: formatted into a longer string, it marks where it went."""

    key: str

    def __new__(cls, text: str, key: str = "") -> FactText:
        made = super().__new__(cls, text)
        made.key = key
        return made

    def __format__(self, spec: str) -> str:
        return f"{OPEN}{self.key}{BETWEEN}{format(str(self), spec)}{CLOSE}"

    def __reduce__(self) -> tuple:
        return FactText, (str(self), self.key)

    # Pieces of a fact's text still show that fact (a list of numbers set one per cell).
    def split(self, sep: str | None = None, maxsplit: int = -1) -> list[FactText]:
        return [FactText(piece, self.key) for piece in str.split(self, sep, maxsplit)]

    def __getitem__(self, index: int | slice) -> FactText:
        return FactText(str.__getitem__(self, index), self.key)

    def strip(self, chars: str | None = None) -> FactText:
        return FactText(str.strip(self, chars), self.key)


Tagged = TypeVar("Tagged", bound=Mobject)
Span = tuple[str, int, int]  # a fact's key, and where its text starts and ends in the words set


def unmark(text: str) -> tuple[str, tuple[Span, ...]]:
    """The words as they are set, and where each marked fact sits in them. A FactText handed over whole is
    one span; a plain string none."""
    if isinstance(text, FactText):
        plain = str(text)
        return plain, ((text.key, 0, len(plain)),) if plain else ()
    if OPEN not in text and BETWEEN not in text and CLOSE not in text:
        return text, ()
    parts: list[str] = []
    spans: list[Span] = []
    at = length = 0
    for found in _MARKED.finditer(text):
        parts.append(text[at : found.start()])
        length += found.start() - at
        if found[2]:
            spans.append((found[1], length, length + len(found[2])))
        parts.append(found[2])
        length += len(found[2])
        at = found.end()
    parts.append(text[at:])
    plain = "".join(parts)
    if _STRAY.search(plain):
        shown = _STRAY.sub("", re.sub(f"{OPEN}[^{BETWEEN}]*{BETWEEN}", "", plain))
        raise MarkError(
            f"the text 「{shown}」 holds a fact's text cut apart (sliced or split after it was formatted); "
            "cut the fact's .text first, then format it in"
        )
    return plain, tuple(spans)


# -- tagging a text --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Mark:
    """One fact in one text: its key, where its words are, and how many glyphs draw it (none: they could not
    be found). Each of those glyphs holds the mark (``glyph.fact_mark``), which holds no mobject: a glyph copied
    alone (a Transform slips copies in among a text's glyphs) takes a copy of the mark of its own, whose other
    glyphs are not there, and a text copied whole takes one copy of each mark for all its glyphs."""

    key: str
    start: int
    end: int
    words: str  # the text's words (a formula's: its Typst source)
    formula: bool
    glyphs: int


# The ligatures the course font sets as one glyph (Noto Sans CJK SC: "prefill" is six glyphs), longest first.
LIGATURES = ("ffi", "ffl", "ff", "fi", "fl")


def _glyph_of_each(words: str) -> list[int | None]:
    """For each character of `words`, the index of the glyph that draws it (None for white space), as manim's
    Text draws it: one glyph per other character, but one for each ligature."""
    glyph_of: list[int | None] = []
    glyph, i = -1, 0
    while i < len(words):
        if words[i].isspace():
            glyph_of.append(None)
            i += 1
            continue
        glyph += 1
        run = next((lig for lig in LIGATURES if words.startswith(lig, i)), words[i])
        glyph_of += [glyph] * len(run)
        i += len(run)
    return glyph_of


def text_glyphs(words: str, start: int, end: int, count: int) -> tuple[int, ...]:
    """A Text's glyphs for words[start:end], when the text draws `count` glyphs as _glyph_of_each says (else
    none: a font that merged other glyphs gives no safe mapping)."""
    glyph_of = _glyph_of_each(words)
    if max((g for g in glyph_of if g is not None), default=-1) + 1 != count:
        return ()
    return tuple(dict.fromkeys(g for g in glyph_of[start:end] if g is not None))


def _formula_glyphs(formula: Typst, code: str, start: int, end: int, math: bool) -> tuple[int, ...]:
    """A Typst formula's glyphs for code[start:end]: the SVG leaves that go when that stretch alone is hidden,
    layout kept (Typst's hide), as manim maps its {{ }} groups. Empty when the hidden setting moved anything."""
    hidden = f"#hide[${code[start:end]}$]" if math else f"#hide[{code[start:end]}]"
    try:
        drawn = _svg_leaf_signatures(typst_to_svg_file(formula.typst_code, preamble=formula.typst_preamble))
        probe_code = code[:start] + hidden + code[end:]
        probe = _svg_leaf_signatures(typst_to_svg_file(probe_code, preamble=formula.typst_preamble))
        indices = _hidden_leaf_indices(drawn, probe)
    except Exception:  # the hidden stretch does not compile there (inside a string, say), or moved the layout
        return ()
    if len(drawn) != len(formula.submobjects):
        return ()
    return tuple(sorted(indices))


def tag(mobject: Tagged, words: str, spans: tuple[Span, ...]) -> Tagged:
    """Keep on a text or formula which glyphs draw which fact (its `spans` in `words`, as unmark gave them)."""
    if not spans:
        return mobject
    if isinstance(mobject, Typst):
        math = mobject.typst_code == f"$ {words} $"
        offset = 2 if math else 0
        mappable = math or mobject.typst_code == words
        places = [
            _formula_glyphs(mobject, mobject.typst_code, start + offset, end + offset, math) if mappable else ()
            for _, start, end in spans
        ]
    else:
        places = [text_glyphs(words, start, end, len(mobject.submobjects)) for _, start, end in spans]
    formula = isinstance(mobject, Typst)
    marked = [(Mark(key, start, end, words, formula, len(at)), at) for (key, start, end), at in zip(spans, places)]
    _keep(mobject, words, [(mark, [mobject.submobjects[i] for i in at]) for mark, at in marked])
    return mobject


def glyphs_of(text: Mobject, mark: Mark) -> list[Mobject]:
    """The glyphs of `text` that draw `mark`."""
    return [glyph for glyph in text.submobjects if glyph.__dict__.get("fact_mark") is mark]


def _keep(text: Mobject, words: str, marked: list[tuple[Mark, list[Mobject]]]) -> None:
    """Mark a text with its facts, and each glyph that draws one with its mark (a glyph may be put on screen
    without its text: a formula assembled glyph by glyph)."""
    for glyph in text.submobjects:
        glyph.__dict__.pop("fact_mark", None)
    text.fact_marks, text.fact_words = tuple(mark for mark, _ in marked), words
    for mark, glyphs in marked:
        for glyph in glyphs:
            glyph.fact_mark = mark


# The animations that leave their mobject drawing their target's shape: after one, a text draws the other
# text's glyphs (a TransformFromCopy, a ReplacementTransform or a moved copy leaves each text its own).
MORPHS = (Transform, ClockwiseTransform, CounterclockwiseTransform)


def follow_transforms(animations: list) -> None:
    """After a play: a text that a Transform turned into another, and that stays on screen as itself, now
    draws the other's glyphs, so it takes the other's marks (text by text, when both hold as many texts),
    each glyph found among its own by its place."""
    for animation in animations:
        if isinstance(animation, AnimationGroup):  # LaggedStart, Succession and the like: each of theirs
            follow_transforms(animation.animations)
            continue
        if type(animation) not in MORPHS or animation.replace_mobject_with_target_in_scene:
            continue
        mine = [m for m in animation.mobject.get_family() if isinstance(m, TEXT_CLASSES)]
        theirs = [m for m in animation.target_mobject.get_family() if isinstance(m, TEXT_CLASSES)]
        if len(mine) != len(theirs):
            continue
        for text, other in zip(mine, theirs):
            marked = []
            for mark in other.__dict__.get("fact_marks", ()):
                glyphs = _same_glyphs(glyphs_of(other, mark), text.submobjects) if mark.glyphs else []
                marked.append((replace(mark, glyphs=len(glyphs)), glyphs))
            _keep(text, words_of(other), marked)


def words_of(text: Mobject) -> str:
    """The words a text draws: its own, or those of the text a Transform made it into."""
    return text.__dict__.get("fact_words") or getattr(text, "original_text", None) or ""


SAME_PLACE = 0.02  # frame units: a glyph morphed into another's shape is drawn where the other is, this close


def _extent(glyph: Mobject) -> np.ndarray:
    """A glyph's outline box (a glyph aligned with a group for a Transform holds its points in a part)."""
    points = np.concatenate([part.points[:, :2] for part in glyph.family_members_with_points()])
    return np.concatenate([points.min(axis=0), points.max(axis=0)])


def _same_glyphs(wanted: list[Mobject], among: list[Mobject]) -> list[Mobject]:
    """The glyphs of `among` drawn where `wanted` are (all of them, or none). A morph leaves each glyph the
    other's outline cut into more curves, so the places are compared, not the points."""
    drawn = [g for g in among if g.family_members_with_points() and np.max(g.get_fill_opacities(), initial=0) > 0]
    found = []
    for glyph in wanted:
        if not glyph.family_members_with_points():
            return []
        where = _extent(glyph)
        near = min(drawn, key=lambda g: np.abs(_extent(g) - where).max(), default=None)
        if near is None or np.abs(_extent(near) - where).max() > SAME_PLACE:
            return []
        found.append(near)
    return found


# -- the facts as the staging sees them ------------------------------------------------------------------------


@dataclass
class Reads:
    """Whose text, and whose value, the staging has read."""

    text: set[str] = field(default_factory=set)
    value: set[str] = field(default_factory=set)


class StagedFact:
    """A fact as a scene uses it: its screen text a FactText; reading its text or value is noted."""

    def __init__(self, key: str, fact, reads: Reads) -> None:
        self._key, self._fact, self._reads = key, fact, reads

    @property
    def text(self) -> FactText:
        self._reads.text.add(self._key)
        return FactText(self._fact.text, self._key)

    @property
    def value(self) -> Any:
        self._reads.value.add(self._key)
        return self._fact.value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fact, name)

    def __str__(self) -> FactText:
        return self.text

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)


class StagedFacts(Mapping):
    """A figure's facts for its scene: each a StagedFact (a missing name is the catalogue's error)."""

    def __init__(self, facts: Mapping) -> None:
        self._facts = facts
        self.figure = getattr(facts, "figure", "")
        self.reads = Reads()
        self._staged: dict[str, StagedFact] = {}

    def __getitem__(self, name: str) -> StagedFact:
        if name not in self._staged:
            self._staged[name] = StagedFact(name, self._facts[name], self.reads)
        return self._staged[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)

    def texts(self) -> dict[str, str]:
        """Every fact's screen text, by key, read without noting it."""
        return {key: self._facts[key].text for key in self._facts}
