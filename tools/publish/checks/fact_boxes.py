"""How many of each figure's shown facts have a box on screen, and why the others have none.

The layout lint's run with animations skipped (:mod:`tools.publish.checks.stills`) looks at the screen before
and after every play (``scenes/sightings.py``) and keeps, in its last look, where each fact's text was drawn
and whose text and value the staging read. From that, every fact with screen text is one of:

- **boxed**: its text was seen on screen, found by its tag (the staging said which text it made from it) or,
  the fallback, by its words;
- **no box**: the staging made its text, but it was never seen whole at a play boundary, or its glyphs could
  not be told apart in its text: these count against the figure;
- **drawn as a shape**: the staging read its value, never its text (a bar's length, a dot's place);
- **never drawn**: the staging used neither (only the narration says it, or nothing does).

``lecture check`` prints a line per figure and the course's share of facts drawn as text that have boxes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.publish.checks import stills
from tools.voice import cues

Say = Callable[[str], None]


@dataclass(frozen=True)
class Coverage:
    """One figure's shown facts, each in one class, the unboxed ones with why."""

    figure: str
    tagged: tuple[str, ...] = ()
    by_words: tuple[str, ...] = ()
    no_box: dict[str, str] = field(default_factory=dict)
    shapes: dict[str, str] = field(default_factory=dict)
    undrawn: dict[str, str] = field(default_factory=dict)

    @property
    def as_text(self) -> int:
        """The facts drawn as text: boxed, or made as text without a box."""
        return len(self.tagged) + len(self.by_words) + len(self.no_box)

    @property
    def boxed(self) -> int:
        return len(self.tagged) + len(self.by_words)

    def line(self) -> str:
        said = f"  {self.figure}: {self.boxed} of {self.as_text} facts drawn as text have boxes"
        if self.by_words:
            said += f" ({len(self.by_words)} found by their words: {', '.join(self.by_words)})"
        for name, facts in (("no box", self.no_box), ("drawn as shapes", self.shapes), ("never drawn", self.undrawn)):
            if facts:
                said += f"; {name}: " + ", ".join(f"{key} ({why})" for key, why in facts.items())
        return said


def coverage(figure: str, shown: dict[str, str], record: dict | None, spoken: set[str]) -> Coverage:
    """Sort the figure's facts with screen text (`shown`, key to text) by what its lint run recorded, `spoken`
    being those its cues say."""
    if record is None:
        return Coverage(figure, no_box=dict.fromkeys(shown, "its lint run recorded no facts (an older probe)"))
    found: dict[str, str] = {}
    for interval in record["intervals"]:
        if found.get(interval["fact"]) != "tag":
            found[interval["fact"]] = interval["found"]
    read_text, read_value = set(record["read_text"]), set(record["read_value"])
    tagged, by_words, no_box, shapes, undrawn = [], [], {}, {}, {}
    for key in shown:
        if found.get(key) == "tag":
            tagged.append(key)
        elif found.get(key) == "text":
            by_words.append(key)
        elif key in read_text:
            where = record["unmapped"].get(key)
            no_box[key] = f"its glyphs in 「{where}」 were not found" if where else "its text is never seen whole"
        elif key in read_value:
            shapes[key] = "its value is drawn, not its text"
        else:
            undrawn[key] = "only said" if key in spoken else "not used by the scene"
    return Coverage(figure, tuple(tagged), tuple(by_words), no_box, shapes, undrawn)


def figure_coverage(fig: Figure, still: stills.Still) -> Coverage:
    shown = {key: fact.text for key, fact in catalogue.facts(fig.id).items() if fact.text}
    spoken = {key for cue in cues.figure_cues(fig.id) for key in cue.cites}
    record = still.records[-1].get("fact_boxes") if still.records else None
    return coverage(fig.id, shown, record, spoken)


def summary(found: list[Coverage]) -> str:
    as_text = sum(c.as_text for c in found)
    boxed = sum(c.boxed for c in found)
    share = f" ({boxed / as_text:.1%})" if as_text else ""
    return (
        f"fact boxes: {boxed} of {as_text} shown facts drawn as text have boxes{share}, "
        f"{sum(len(c.by_words) for c in found)} of them found by their words; "
        f"{sum(len(c.shapes) for c in found)} drawn as shapes, {sum(len(c.undrawn) for c in found)} never drawn"
    )


def check(figures: list[Figure], jobs: int = 2, say: Say = print) -> list[Coverage]:
    """Say, per figure and for all, how many shown facts have boxes (from the lint's run, cached)."""
    ran = stills.current(figures, jobs, say)
    found = [figure_coverage(fig, ran[fig.id]) for fig in figures]
    for each in found:
        say(each.line())
    say(summary(found))
    return found
