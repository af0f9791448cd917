"""What the site says beside a figure's clip, recorded in its manifest entry.

- The transcript: one line per cue, its caption text (facts filled in as the captions show them), where it
  starts in the clip and how long it speaks, and the facts it names. The start times are the render's own
  (scenes/base.py writes them beside the narration track), not read back from the captions.
- The numbers panel: every fact with how it is computed and its source (``Fact.as_json``), the checks its
  builder passed (as docs/figures.md prints them), and the figure's source line.

How a number is explained can change without changing a pixel, so :func:`refreshed` brings an unchanged
figure's facts and checks up to date at every build of it, as long as what it shows is the same.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tools.course import catalogue
from tools.course.fact_values import fact_values
from tools.course.shown import check_cells
from tools.publish.manifest import PublishedFigure
from tools.publish.render import BuildError
from tools.voice import cues

SHOWN = ("value", "text", "spoken")  # what a fact puts on screen and in the voice: in the render key


def transcript(figure_id: str, cue_times: Path) -> list[dict]:
    """The figure's cues in play order as {cue, start, duration, text, cites}; raises BuildError when the
    render did not record where one starts."""
    try:
        times = {t["cue"]: t for t in json.loads(cue_times.read_text(encoding="utf-8"))}
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise BuildError(
            f"figure '{figure_id}': the render left no readable cue times at {cue_times} ({err})"
        ) from None
    lines = []
    for cue in cues.figure_cues(figure_id):
        if cue.id not in times:
            raise BuildError(f"figure '{figure_id}': the render recorded no start for cue '{cue.id}' ({cue_times})")
        timed = times[cue.id]
        lines.append(
            {
                "cue": cue.id,
                "start": float(timed["start"]),
                "duration": float(timed["duration"]),
                "text": cue.caption,
                "cites": list(cue.cites),
            }
        )
    return lines


def checks(figure_id: str) -> list[dict]:
    """Every check the figure's builder passed, in its order, as strings the same on every machine."""
    return [check_cells(check) for check in catalogue.checks(figure_id)]


def _shown(facts: dict) -> dict:
    return {name: [fact.get(key) for key in SHOWN] for name, fact in facts.items()}


def refreshed(entry: PublishedFigure) -> PublishedFigure:
    """The entry with its facts' explanations, its checks and its source as the catalogue has them now; as it
    was when the figure shows other numbers now (it is rendered again first) or has left the catalogue."""
    try:
        figure = catalogue.figure(entry.figure)
    except catalogue.UnknownFigure:
        return entry
    facts = fact_values(entry.figure)
    if _shown(facts) != _shown(entry.facts):
        return entry
    return dataclasses.replace(entry, facts=facts, checks=checks(entry.figure), source=figure.source)
