"""Where each fact's text is on screen, and when: looked at before and after every play.

:class:`Sightings` notes, at each look, every fact tagged on a visible text (``scenes/fact_marks.py``),
with the box of its own glyphs in frame units (3-D scenes: where the camera draws them, as the layout
probe measures). Consecutive looks that see a fact in the same box make one interval. A fact the staging
read as text but never tagged on screen (its text cut, joined or concatenated) is looked for by its words
in the texts on screen: string matching is the fallback, and each interval says which way it was found.

The render writes the intervals beside its narration track (``scenes/base.py``), and the layout lint's run
keeps them in its last look, for ``lecture check``'s count of the facts that have boxes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from manim import Mobject, Scene, Typst, config

from scenes import layout_probe
from scenes.fact_marks import TEXT_CLASSES, Mark, StagedFacts, text_glyphs, words_of

# A fact the staging never read as text is looked for by its words only when they are this long (not spaces):
# 「2」 is in too many texts to stand for one fact, 「1964」 is not.
MIN_UNREAD = 3


def _texts_on_screen(scene: Scene) -> Iterator[Mobject]:
    """Every text and formula among the scene's mobjects (not the glyphs inside them), each once."""
    seen: set[int] = set()
    stack = [*reversed(scene.mobjects), *reversed(scene.foreground_mobjects)]
    while stack:
        mobject = stack.pop()
        if id(mobject) in seen:
            continue
        seen.add(id(mobject))
        if isinstance(mobject, TEXT_CLASSES):
            yield mobject
        else:
            stack.extend(reversed(mobject.submobjects))


@dataclass
class Sightings:
    """Each fact's text on screen, looked at before and after every play."""

    facts: StagedFacts
    # The title and the source line: their words are the figure's, not the staging's numbers (a source may quote
    # a number one of the facts also shows).
    not_numbers: tuple[str, ...] = ()
    looks: list[tuple[float, dict[tuple, dict]]] = field(default_factory=list)
    unmapped: dict[str, str] = field(default_factory=dict)  # a tagged fact whose glyphs were not found: its words
    drawn: dict[tuple, list[Mobject]] = field(default_factory=dict)  # at the last look, what draws each box seen

    def __post_init__(self) -> None:
        self._texts = self.facts.texts()
        self._owners: dict[str, int] = {}  # how many facts have each screen text
        for shown in self._texts.values():
            self._owners[shown] = self._owners.get(shown, 0) + 1

    def look(self, scene: Scene) -> None:
        """Note every fact visible now: the box of its glyphs, the words around it, how it was found. A fact is
        seen where all the glyphs of its mark are among the scene's mobjects, put there with their text or
        one by one (a formula assembled glyph by glyph)."""
        camera = scene.renderer.camera
        if hasattr(camera, "reset_rotation_matrix"):  # as the layout probe does: the view as it is now
            camera.reset_rotation_matrix()
        seen: dict[tuple, dict] = {}
        self.drawn = {}
        marked: dict[int, list[Mobject]] = {}  # each mark's glyphs on screen, by the mark
        marks: dict[int, Mark] = {}
        for top in dict.fromkeys([*scene.mobjects, *scene.foreground_mobjects]):
            for glyph in dict.fromkeys(top.get_family()):
                if (mark := glyph.__dict__.get("fact_mark")) is not None:
                    marks[id(mark)] = mark
                    marked.setdefault(id(mark), []).append(glyph)
        for ident, glyphs in marked.items():
            if len(glyphs) == marks[ident].glyphs:  # all of them: not a glyph copied alone
                self._note(scene, seen, marks[ident], _drawn(glyphs), "tag")
        untagged: list[tuple[Mobject, str, set[int]]] = []
        for text in _texts_on_screen(scene):
            words = words_of(text)
            covered: set[int] = set()
            for mark in text.__dict__.get("fact_marks", ()):
                covered.update(range(mark.start, mark.end))
                if not mark.glyphs:
                    self.unmapped.setdefault(mark.key, words)
            if not isinstance(text, Typst) and words and not any(words in other for other in self.not_numbers):
                untagged.append((text, words, covered))
        self._by_words(scene, untagged, {key for key, _ in seen}, seen)
        self.looks.append((round(float(scene.time), 3), seen))

    def _by_words(self, scene: Scene, texts: list, tagged: set[str], seen: dict) -> None:
        """The fallback: a fact not tagged here, found by its words in a text on screen, outside the stretches
        tagged with a fact and not inside a longer number or word. Only where its words are no other fact's,
        and are either read by the staging or long enough to stand for it (a year, 「1,820」). An interval
        found so is kept only for a fact never found by its tag (intervals())."""
        for key, shown in self._texts.items():
            if key in tagged or self._owners[shown] > 1:
                continue
            if not (key in self.facts.reads.text or len(shown.replace(" ", "")) >= MIN_UNREAD):
                continue
            for text, words, covered in texts:
                for found in re.finditer(f"(?<![0-9A-Za-z.]){re.escape(shown)}(?![0-9A-Za-z.])", words):
                    start, end = found.span()
                    if covered & set(range(start, end)):
                        continue
                    glyphs = text_glyphs(words, start, end, len(text.submobjects))
                    parts = _drawn(text.submobjects[i] for i in glyphs)
                    self._note(scene, seen, Mark(key, start, end, words, False, len(glyphs)), parts, "text")

    def _note(self, scene: Scene, seen: dict, mark: Mark, parts: list[Mobject], how: str) -> None:
        """Note a fact seen at this look where `parts` draw it, unless nothing of them shows."""
        box = layout_probe._box(scene, parts) if parts else None
        if box:
            seen[(mark.key, tuple(box))] = _seen(mark, box, how)
            self.drawn[(mark.key, tuple(box))] = parts

    def intervals(self) -> list[dict]:
        """Each stretch of time a fact stayed in one box: from the first look that saw it there to the first
        that did not (it stays clickable through the play that fades, moves or changes it); a fact seen only
        at one instant (put up and taken down between two plays) has none."""
        open_: dict[tuple, dict] = {}
        done: list[dict] = []
        for when, seen in self.looks:
            done.extend(open_.pop(ident) | {"end": when} for ident in [i for i in open_ if i not in seen])
            for ident, item in seen.items():
                open_.setdefault(ident, {**item, "start": when})
        last = self.looks[-1][0] if self.looks else 0.0
        done += [item | {"end": last} for item in open_.values()]
        tagged = {i["fact"] for i in done if i["found"] == "tag"}
        kept = [i for i in done if i["end"] > i["start"] and (i["found"] == "tag" or i["fact"] not in tagged)]
        return sorted(kept, key=lambda i: (i["start"], i["fact"], i["box"]))

    def record(self) -> dict:
        """What the render publishes and the lint counts: the frame, each interval, what the staging read."""
        return {
            "frame": [config.frame_width, config.frame_height],
            "intervals": self.intervals(),
            "read_text": sorted(self.facts.reads.text),
            "read_value": sorted(self.facts.reads.value),
            "unmapped": dict(sorted(self.unmapped.items())),
        }


def _drawn(glyphs: Iterable[Mobject]) -> list[Mobject]:
    """What draws these glyphs: a glyph aligned with a group for a Transform holds its points in a part."""
    return [part for glyph in glyphs for part in glyph.family_members_with_points()]


def _seen(mark: Mark, box: list[float], how: str) -> dict:
    """A sighting as the record keeps it: the fact, its box, its text's words and where it is in them."""
    return {
        "fact": mark.key,
        "box": box,
        "words": mark.words,
        "at": [mark.start, mark.end],
        "formula": mark.formula,
        "found": how,
    }
