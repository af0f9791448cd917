"""How long a figure runs: the figure standard's 30–120 s, and an estimate made before anything renders.

A figure plays its title's fade-in, then its cues end to end (each block
waits out its cue's audio), then ``finish()``: the source note's fade-in and
a hold on the finished picture. ``scenes/base.py`` takes those fixed parts
from here, so the estimate and the scene agree. A cue's length is its audio's
when the voice has already made it (or a human recorded it), else what the
silent engine would give it; animations a scene plays between cues come on
top, so a figure runs at least this long.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.course.catalogue import Figure
from tools.voice import audio, cues, speech
from tools.voice.engine import Engine, SpeechError

FIGURE_SECONDS = (30, 120)  # how long a figure should run (figure standard)
TITLE_SECONDS = 0.6  # show_title(): the title fades in
SOURCE_SECONDS = 0.5  # finish(): the source note fades in
HOLD_SECONDS = 1.5  # finish(): the finished picture holds
FIXED_SECONDS = TITLE_SECONDS + SOURCE_SECONDS + HOLD_SECONDS


@dataclass(frozen=True)
class Estimate:
    figure: Figure
    cue_seconds: float  # the cues end to end
    heard: int  # cues whose length comes from audio already made (the rest from the silent engine)
    cues: int

    @property
    def seconds(self) -> float:
        return self.cue_seconds + FIXED_SECONDS

    def warning(self) -> str | None:
        """A line naming the figure and its estimate when it falls outside FIGURE_SECONDS, else None."""
        low, high = FIGURE_SECONDS
        if low <= self.seconds <= high:
            return None
        side, advice = ("under", "add or lengthen cues") if self.seconds < low else ("over", "shorten or split it")
        return (
            f"warning: {self.figure.chapter}/{self.figure.id} will run about {self.seconds:.0f} s "
            f"({self.cue_seconds:.1f} s of narration, {self._source()}, + {FIXED_SECONDS:.1f} s of title and "
            f"finish), {side} the {low}–{high} s a figure should run: {advice}"
        )

    def _source(self) -> str:
        if self.heard == self.cues:
            return "as synthesized"
        if self.heard == 0:
            return "estimated by the silent voice"
        return f"{self.heard} of {self.cues} cues as synthesized, the rest estimated by the silent voice"


def _voice() -> Engine | None:
    """The configured engine, or None when it cannot be asked (e.g. espeak-ng missing): then every cue is
    estimated, which is all a check needs."""
    try:
        engine = speech.from_env()
        engine.version  # noqa: B018 - a missing program shows here, not halfway through the figures
        return engine
    except SpeechError:
        return None


def estimate(figures: list[Figure]) -> list[Estimate]:
    """Each figure's length from its cues, without synthesizing or rendering anything."""
    engine, silent = _voice(), speech.Silent()
    found = []
    for fig in figures:
        total, heard = 0.0, 0
        figure_cues = cues.figure_cues(fig.id)
        for cue in figure_cues:
            seconds = audio.cached_seconds(cue, engine) if engine is not None else None
            if seconds is None and cue.recording is not None:
                seconds = cues.check_recording(cue.recording, cue.id)
            heard += seconds is not None
            total += silent.seconds(cue.speech) if seconds is None else seconds
        found.append(Estimate(fig, total, heard, len(figure_cues)))
    return found


def warnings(figures: list[Figure]) -> list[str]:
    """One line per figure whose estimate falls outside FIGURE_SECONDS."""
    return [line for each in estimate(figures) if (line := each.warning())]
