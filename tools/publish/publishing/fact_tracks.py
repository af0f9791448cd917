"""Where each number is drawn, as two WebVTT tracks beside a figure's clip: its boxes, and its descriptions.

The render records, play by play, each shown fact's text on screen: the interval it stays in one box (frame
units), the words around it and whether its tag or its words found it (``scenes/sightings.py``, written
beside the narration track). From that record:

- ``<figure>.facts.vtt``, ``kind="metadata"``: one cue per interval; its payload is JSON,
  ``{"figure", "fact", "box": [left, top, right, bottom], "name"}``, the box as fractions of the frame from
  its top-left corner, the name what a screen reader says of the number (「414.1 ms：最长停顿」). The site's
  player lays a hotspot over the video there while the cue is active;
- ``<figure>.descriptions.vtt``, ``kind="descriptions"``: one short line at the moment a shown fact first
  appears without being spoken in the cue playing then (the cue's cites), e.g. 「屏幕上：最长停顿 414.1 ms」.
  A figure with nothing unspoken gets a track with no cues, never none.

A chapter video's tracks are its figures', each moved to where the figure starts: the descriptions as captions
are (``chapter_video.py``), the metadata with its payloads kept as written (:func:`shifted`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tools.publish.rendering.render import BuildError
from tools.voice import captions

FACTS_TRACK = "facts.vtt"
DESCRIPTIONS_TRACK = "descriptions.vtt"
DESCRIBED_SECONDS = 3.0  # how long a description cue lasts, at most (its number may go sooner)
NAME_CHARS = 28  # a name taken from how a fact is computed is cut to this many characters
# Where a text's clauses part: the words around a number up to the next of these are what it is called.
_CLAUSE = re.compile(r"[　·，；、|\n]|\s{2,}|(?<=[）)])\s")
_EDGES = "　 ：:，,；;、·=＝≈→（(）)"


@dataclass(frozen=True)
class Sighting:
    """One stretch of time a fact's text stayed in one box on screen."""

    fact: str
    start: float
    end: float
    box: tuple[float, float, float, float]  # left, top, right, bottom: fractions of the frame from its top-left
    words: str  # the text it sits in
    at: tuple[int, int]  # where its own words are in `words`
    formula: bool  # the words are a formula's source, not what is drawn
    found: str  # "tag" (the staging said which fact), or "text" (found by its words)


def read_sightings(figure: str, path: Path, facts: Mapping[str, Mapping]) -> list[Sighting]:
    """The render's record of where `figure`'s facts are drawn; BuildError naming the figure and the file when
    it is missing, not JSON, or names a fact the figure does not have."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        width, height = (float(v) for v in record["frame"])
        sightings = [sighting(item, width, height) for item in record["intervals"]]
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise BuildError(
            f"figure '{figure}': the render left no readable record of where its facts are drawn at {path} ({err})"
        ) from None
    if unknown := sorted({s.fact for s in sightings} - set(facts)):
        raise BuildError(f"figure '{figure}': {path} places facts the figure does not have: {', '.join(unknown)}")
    return sightings


def sighting(item: dict, width: float, height: float) -> Sighting:
    """One interval of the record, its box turned from frame units (y up, origin at the centre) to fractions."""
    left, bottom, right, top = (float(v) for v in item["box"])
    box = (
        _fraction((left + width / 2) / width),
        _fraction((height / 2 - top) / height),
        _fraction((right + width / 2) / width),
        _fraction((height / 2 - bottom) / height),
    )
    start, end = item["at"]
    return Sighting(
        str(item["fact"]),
        float(item["start"]),
        float(item["end"]),
        box,
        str(item["words"]),
        (int(start), int(end)),
        bool(item["formula"]),
        str(item["found"]),
    )


def _fraction(value: float) -> float:
    return round(min(max(value, 0.0), 1.0), 4)


# -- what a number is called ----------------------------------------------------------------------------------


def clause(sighting: Sighting) -> str:
    """The words around the number up to the next break in its text (「最长停顿 414.1 ms」), or the number
    alone in a formula, whose words are its source."""
    if sighting.formula:
        return sighting.words[slice(*sighting.at)]
    start, end = sighting.at
    words = sighting.words
    before = [m.end() for m in _CLAUSE.finditer(words, 0, start)]
    after = _CLAUSE.search(words, end)
    return words[before[-1] if before else 0 : after.start() if after else len(words)].strip()


def name(sighting: Sighting, fact: Mapping) -> str:
    """What the number is: the words beside it in its clause, else the head of how it is computed."""
    shown = str(fact.get("text", ""))
    around = clause(sighting).replace(shown, " ").strip(_EDGES).strip()
    if around:
        return " ".join(around.split())
    how = str(fact.get("how", ""))
    head, _, rest = how.partition("：")
    called = rest if head == "输入" and rest else head
    called = called.strip() or sighting.fact
    return called if len(called) <= NAME_CHARS else called[: NAME_CHARS - 1] + "…"


def accessible_name(sighting: Sighting, fact: Mapping) -> str:
    """「414.1 ms：最长停顿」: the number as shown, then what it is."""
    return f"{fact.get('text', '')}：{name(sighting, fact)}"


def description(sighting: Sighting, fact: Mapping) -> str:
    """「屏幕上：最长停顿 414.1 ms」: the number with the words beside it, or with what it is."""
    around = clause(sighting)
    shown = str(fact.get("text", ""))
    if sighting.formula or around.strip(_EDGES).strip() == shown:
        return f"屏幕上：{shown}（{name(sighting, fact)}）"
    return f"屏幕上：{' '.join(around.split())}"


# -- the tracks -----------------------------------------------------------------------------------------------


def _stamp(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _seconds(stamp: str) -> float:
    hours, minutes, rest = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(rest)


def _cue(start: float, end: float, text: str) -> str:
    """A metadata cue as written: its text the JSON payload, as it is (a browser hands a metadata cue's text over
    raw, entities and all, so nothing in it is escaped)."""
    return f"{_stamp(start)} --> {_stamp(end)}\n{text}\n"


def _vtt(blocks: list[str]) -> str:
    return "WEBVTT\n\n" + "\n".join(blocks)


def _payload(figure: str, sighting: Sighting, fact: Mapping) -> str:
    """A metadata cue's JSON on one line; ">" escaped, so no payload can hold the cue-timing arrow "-->"."""
    data = {"figure": figure, "fact": sighting.fact, "box": list(sighting.box), "name": accessible_name(sighting, fact)}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace(">", "\\u003e")


def facts_track(figure: str, sightings: list[Sighting], facts: Mapping[str, Mapping]) -> str:
    """The metadata track: one cue per sighting, in time order."""
    return _vtt([_cue(s.start, s.end, _payload(figure, s, facts[s.fact])) for s in sightings])


def _speaking(lines: list[dict], at: float) -> dict | None:
    """The transcript line being spoken at `at` seconds, if one is."""
    return next((line for line in lines if line["start"] <= at < line["start"] + line["duration"]), None)


def _cited(line: dict | None, figure: str, fact: str) -> bool:
    return line is not None and (fact in line["cites"] or f"{figure}.{fact}" in line["cites"])


def descriptions_track(figure: str, sightings: list[Sighting], facts: Mapping[str, Mapping], lines: list[dict]) -> str:
    """The descriptions track: at the moment each fact first appears, unless the cue playing then says it, one
    line; facts that appear at one moment share a cue, a line each (the same line once)."""
    first: dict[str, Sighting] = {}
    for sighting in sightings:
        if sighting.fact not in first or sighting.start < first[sighting.fact].start:
            first[sighting.fact] = sighting
    moments: dict[float, list[Sighting]] = {}
    for fact, sighting in first.items():
        if not _cited(_speaking(lines, sighting.start), figure, fact):
            moments.setdefault(sighting.start, []).append(sighting)
    cues = []
    for start in sorted(moments):
        shown = sorted(moments[start], key=lambda s: (s.box[1], s.box[0]))  # reading order
        said = list(dict.fromkeys(description(s, facts[s.fact]) for s in shown))
        cues.append(captions.Caption(start, min(start + DESCRIBED_SECONDS, max(s.end for s in shown)), "\n".join(said)))
    return captions.to_vtt(cues)


def write(staged: Path, figure: str, boxes: Path, facts: Mapping[str, Mapping], lines: list[dict]) -> list[Sighting]:
    """Write `figure`'s two tracks into `staged` from the render's record `boxes`; returns the sightings."""
    sightings = read_sightings(figure, boxes, facts)
    (staged / f"{figure}.{FACTS_TRACK}").write_text(facts_track(figure, sightings, facts), encoding="utf-8")
    described = descriptions_track(figure, sightings, facts, lines)
    (staged / f"{figure}.{DESCRIPTIONS_TRACK}").write_text(described, encoding="utf-8")
    return sightings


# -- a chapter's tracks ---------------------------------------------------------------------------------------

_TIMING = re.compile(r"^(\d+:\d\d:\d\d\.\d{3}) --> (\d+:\d\d:\d\d\.\d{3})$")


def cues_of(text: str, where: str) -> list[tuple[float, float, str]]:
    """The cues of a metadata track this module wrote, as (start, end, text); BuildError naming `where` when it is
    not one."""
    if not text.startswith("WEBVTT"):
        raise BuildError(f"{where}: not a WebVTT file")
    cues = []
    for block in re.split(r"\n\s*\n", text.strip())[1:]:
        timing, _, body = block.partition("\n")
        found = _TIMING.match(timing.strip())
        if not found:
            raise BuildError(f"{where}: a cue without its timing line: {timing!r}")
        cues.append((_seconds(found[1]), _seconds(found[2]), body))
    return cues


def shifted(parts: list[tuple[Path, float]]) -> str:
    """A chapter's metadata track from its figures', each cue moved by its figure's start in the chapter and its
    payload kept as written (the descriptions are moved as captions are: chapter_video.py)."""
    blocks = [
        _cue(start + offset, end + offset, body)
        for path, offset in parts
        for start, end, body in cues_of(path.read_text(encoding="utf-8"), str(path))
    ]
    return _vtt(blocks)
