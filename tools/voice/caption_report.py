"""``lecture captions``: the caption rules measured over the course without rendering a frame.

Captions follow from two things a render does not change: each cue's text and when its voice says each
syllable (tools/voice/timing.py). So every cue is voiced (or its audio found in the cache, where a build will
find it too), its events cut and timed as scenes/base.py does, with the figure's cues laid end to end, the
tightest a render can place them (a render only adds time between cues, never takes it away), and the events
checked against the rules of tools/voice/captions.py: overlaps, lines over the width, durations, the reading
speed, and every event boundary that falls inside a jieba word.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from tools.course.catalogue import Figure
from tools.voice import audio, captions, cues, timing
from tools.voice.engine import Engine


@dataclass
class Report:
    figures: int = 0
    cues: int = 0
    events: int = 0
    lines_over: int = 0  # lines wider than captions.MAX_LINE_WIDTH
    overlaps: int = 0  # events that start before the one before them ends
    too_close: int = 0  # events less than MIN_GAP_FRAMES after the one before (overlaps included)
    too_short: int = 0
    too_long: int = 0
    too_fast: int = 0  # over captions.MAX_CPS
    timed_by: dict[str, int] = field(default_factory=dict)  # cues by what timed them: "the voice", "proportional"
    word_breaks: list[str] = field(default_factory=list)  # figure, cue and the word each break falls inside
    findings: list[str] = field(default_factory=list)  # every rule broken, named

    @property
    def unjustified_breaks(self) -> list[str]:
        return [b for b in self.word_breaks if "not justified" in b]

    def lines(self) -> list[str]:
        timed = ", ".join(f"{n} by {how}" for how, n in sorted(self.timed_by.items()))
        return [
            f"captions: {self.figures} figures, {self.cues} cues ({timed}), {self.events} events",
            f"  overlapping events: {self.overlaps}; closer than {captions.MIN_GAP_FRAMES} frames: {self.too_close}",
            f"  lines over {captions.MAX_LINE_WIDTH}: {self.lines_over}",
            f"  events under {captions.MIN_SECONDS:.3f} s: {self.too_short}; over {captions.MAX_SECONDS:g} s: "
            f"{self.too_long}; over {captions.MAX_CPS} characters a second: {self.too_fast}",
            f"  breaks inside a jieba word: {len(self.word_breaks)} ({len(self.unjustified_breaks)} not justified)",
            *[f"    {b}" for b in self.word_breaks],
            *[f"  {f}" for f in self.findings],
        ]


def measure(figures: list[Figure], engine: Engine, fps: float, say: Callable[[str], None]) -> Report:
    """Voice every cue of `figures` with `engine` (cached audio is used as it is) and measure their events."""
    report = Report()
    for fig in figures:
        report.figures += 1
        spoken, offset = [], 0.0
        for cue in cues.figure_cues(fig.id):
            sound = audio.cue_audio(cue, engine)
            report.cues += 1
            report.timed_by[sound.timed_by] = report.timed_by.get(sound.timed_by, 0) + 1
            times = timing.caption_times(cue.caption, cue.speech, cue.pinyin, sound.timing)
            spoken.append(captions.SpokenCue(cue.caption, offset, times))
            lines = [line for line, _, _ in captions.cue_events(cue.caption, times)]
            report.word_breaks += [f"{fig.id}/{cue.id}: {b}" for b in captions.word_breaks(cue.caption, lines)]
            offset += sound.duration
        events = captions.figure_events(spoken, fps)
        _count(report, fig.id, events, fps)
        say(f"  {fig.chapter}/{fig.id}: {len(events)} events")
    return report


def _count(report: Report, figure_id: str, events: list[captions.Caption], fps: float) -> None:
    report.events += len(events)
    found = captions.violations(events, fps)
    report.findings += [f"{figure_id}: {f}" for f in found]
    report.lines_over += sum(
        captions.line_width(line) > captions.MAX_LINE_WIDTH for e in events for line in e.text.split("\n")
    )
    report.too_short += sum(e.end - e.start < captions.MIN_SECONDS - 0.0015 for e in events)
    report.too_long += sum(e.end - e.start > captions.MAX_SECONDS + 0.0015 for e in events)
    report.too_fast += sum(" characters a second, over " in f for f in found)
    for before, after in itertools.pairwise(events):
        report.overlaps += after.start < before.end
        report.too_close += after.start - before.end < captions.MIN_GAP_FRAMES / fps - 0.0015
