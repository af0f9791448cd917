"""The base every figure scene derives from.

Constructing a figure checks its facts and loads its narration, so a bad
number or a bad cue stops ``manim`` before the first frame. Narration
drives the timing::

    with self.narrate("gates_forward") as beat:
        self.play(Create(wires), run_time=beat.share(0.6))
        self.play(Indicate(out), run_time=beat.share(0.3))

``narrate`` places the cue's audio at the current time, adds its captions
through manim's subcaptions (events cut and timed by tools/voice/captions.py,
at the moments the voice says them), and on leaving waits out whatever the
cue still has to say. The block spends the cue's audio
in shares; shares that add up to more than the whole cue are refused.

A scene renders through :class:`scenes.segments.SegmentRenderer`, so
``lecture build`` can render a figure in parts on several cores, each
frame for frame what one process draws.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from manim import DOWN, FadeIn, Mobject, Scene, ThreeDScene, config
from pydub import AudioSegment

from scenes import fact_marks, layout_probe, style
from scenes.grid_camera import GridCamera, GridThreeDCamera
from scenes.segments import SegmentRenderer, fades_without_copies
from scenes.sightings import Sightings
from tools.course import catalogue
from tools.settings import AUDIO_OUT_ENV, CUE_AUDIO_ENV, PROGRESS_OUT_ENV
from tools.voice import audio, captions, cues, pacing, speech, timing
from tools.voice.cues import NarrationError

# manim.cfg turns write_all on, so `manim scenes/<chapter>.py` renders every figure of the chapter
# without a prompt; a scene named on the command line (`manim scenes/optimizer.py OptimalStepParabola`)
# means that scene alone. manim has read its command line, not yet chosen the scenes, when it imports
# the chapter file, and so this module.
if config.scene_names:
    config.write_all = False


class Beat:
    """One cue's audio as a block spends it: ``share(0.3)`` is 30% of its length, in seconds.

    The shares a block takes are counted; past the whole cue, the block
    would run over into silence, so that is a NarrationError naming the
    figure and the cue.
    """

    def __init__(self, figure: str, cue: str, duration: float) -> None:
        self.figure, self.cue, self.duration = figure, cue, duration
        self.spent = 0.0  # shares taken so far

    def share(self, fraction: float) -> float:
        if fraction <= 0:
            raise NarrationError(f"figure '{self.figure}', cue '{self.cue}': a share must be positive, got {fraction}")
        self.spent += fraction
        if self.spent > 1 + 1e-9:
            raise NarrationError(
                f"figure '{self.figure}', cue '{self.cue}': the block's shares add up to "
                f"{self.spent:.3g} of the cue, more than the whole of it"
            )
        return fraction * self.duration


class Narrated:
    """Mixin for Scene / ThreeDScene: facts, cues and narrated timing."""

    camera_kind = GridCamera  # what its SegmentRenderer draws with: manim's, on a grid (scenes/grid_camera.py)

    def __init__(self, *args, **kwargs) -> None:
        self.figure = _figure_of(type(self))
        self.facts = fact_marks.StagedFacts(catalogue.facts(self.figure.id))
        # where each fact's text is on screen, play by play
        self.sightings = Sightings(self.facts, (self.figure.title, self.figure.source))
        self.cues = {cue.id: cue for cue in cues.figure_cues(self.figure.id)}
        self._given_audio = _given_cue_audio()
        self.engine = None if self._given_audio is not None else speech.from_env()
        self._spoken: list[str] = []
        self._said: list[captions.SpokenCue] = []  # each cue played so far, as its captions are made from
        self._cue_times: list[dict] = []  # where each cue's voice starts and how long it speaks, for the transcript
        kwargs.setdefault("renderer", SegmentRenderer(camera_class=self.camera_kind))
        super().__init__(*args, **kwargs)
        self._began = time.perf_counter()  # the progress lines' clock: what the figure's own work costs

    def _cue_sound(self, cue: cues.Cue) -> tuple[Path, float, timing.Timing]:
        """The cue's WAV, its length and when each syllable is said in it: the one the build handed over (its
        times beside it), else made or found in the cache."""
        if self._given_audio is None:
            sound = audio.cue_audio(cue, self.engine)
            return sound.path, sound.duration, sound.timing
        if cue.id not in self._given_audio:
            raise NarrationError(
                f"figure '{self.figure.id}': no audio for cue '{cue.id}' in the map "
                f"{os.environ[CUE_AUDIO_ENV]} ({CUE_AUDIO_ENV}); it is never synthesized here"
            )
        path = Path(self._given_audio[cue.id])
        return path, audio.wav_seconds(path), audio.cue_timing(cue, path)[0]

    def _caption(self, cue: cues.Cue, start: float, said: timing.Timing) -> None:
        """Add the cue's caption events, and time again the figure's events so far: the last event before it
        is chained to its first or cut before it (tools/voice/captions.py)."""
        times = timing.caption_times(cue.caption, cue.speech, cue.pinyin, said)
        self._said.append(captions.SpokenCue(cue.caption, start, times))
        events = captions.figure_events(self._said, config.frame_rate)
        self.renderer.file_writer.subcaptions.clear()
        for event in events:
            self.add_subcaption(event.text, duration=event.end - event.start, offset=event.start - self.time)
        voiced = [t for t in times if t is not None] or [timing.Span(0.0, 0.0)]
        begin, end = voiced[0].start, max(t.end for t in voiced)
        self._cue_times.append({"cue": cue.id, "start": round(start + begin, 3), "duration": round(end - begin, 3)})

    @contextmanager
    def narrate(self, cue_id: str) -> Iterator[Beat]:
        """Play one cue: audio and captions now, the block's animations inside it, timed by its Beat."""
        if cue_id not in self.cues:
            raise NarrationError(f"figure '{self.figure.id}' has no cue '{cue_id}' (cues: {', '.join(self.cues)})")
        cue = self.cues[cue_id]
        path, duration, said = self._cue_sound(cue)
        start = self.time
        # Straight to the file writer: Scene.add_sound drops a sound while
        # manim is skipping, and it is still "skipping" right after an
        # animation it took from its partial-movie cache.
        self.renderer.file_writer.add_sound(str(path), start)
        self._caption(cue, start, said)
        self._spoken.append(cue_id)
        yield Beat(self.figure.id, cue_id, duration)
        remaining = start + duration - self.time
        if remaining > 1 / config.frame_rate:
            self.wait(remaining)
        layout_probe.look(self, cue_id)  # the layout lint's look at the screen while this cue's caption shows

    def begin_animations(self) -> None:
        if self.renderer.skip_animations or self.renderer.stepping:  # a play that is not drawn
            fades_without_copies(self.animations)
        super().begin_animations()

    def play(self, *args, **kwargs) -> None:
        self.sightings.look(self)
        super().play(*args, **kwargs)
        fact_marks.follow_transforms(self.animations)
        self.sightings.look(self)
        if os.environ.get(PROGRESS_OUT_ENV):  # how far the render is, for lecture build's progress display
            # One line per play: seconds rendered by this process, where the figure is, and the seconds spent
            # since the scene was made. progress.py reads the first, segments.py the second (where to cut the
            # rest of the figure) and all three once the render is done (what each stretch cost).
            with open(os.environ[PROGRESS_OUT_ENV], "a", encoding="utf-8") as stream:
                stream.write(
                    f"{self.renderer.rendered_seconds():.3f} {self.time!r} {time.perf_counter() - self._began:.4f}\n"
                )

    def tear_down(self) -> None:
        expected = list(self.cues)
        # A segment that stops before the figure's end (scenes/segments.py) has played its cues so far in
        # order; the segment that runs on to the end hands over the whole narration track.
        if not (self.renderer.ended_early and self._spoken == expected[: len(self._spoken)]):
            self._hand_over_track(expected)
        if os.environ.get(AUDIO_OUT_ENV):
            # `lecture build` lays the track under the video itself, with a faster AAC coder
            # (tools/publish/publishing/media.mux_web): manim's own AAC pass would cost a quarter of the render.
            self.renderer.file_writer.includes_sound = False
        super().tear_down()

    def _hand_over_track(self, expected: list[str]) -> None:
        """Check every cue was played in order, then pad the audio track with silence to the end of the
        video and hand `lecture build` the whole track (manim's own mux trims its tail)."""
        if self._spoken != expected:
            raise NarrationError(
                f"figure '{self.figure.id}': cues played {self._spoken}, narration file has {expected}; "
                "play every cue once, in file order"
            )
        self.sightings.look(self)
        boxes = self.sightings.record()
        layout_probe.look(self, layout_probe.END, fact_boxes=boxes)
        writer = self.renderer.file_writer
        writer.add_audio_segment(AudioSegment.silent(0), time=self.time)
        if os.environ.get(AUDIO_OUT_ENV):
            track = Path(os.environ[AUDIO_OUT_ENV])
            writer.audio_segment.export(track, format="wav")
            # Beside the track, where each cue's voice starts in it: the site's transcript seeks there.
            track.with_suffix(".cues.json").write_text(json.dumps(self._cue_times), encoding="utf-8")
            # And where each fact's text is on screen, when: the site's clickable numbers.
            track.with_suffix(".facts.json").write_text(json.dumps(boxes, ensure_ascii=False), encoding="utf-8")

    def fix_in_frame(self, *mobjects: Mobject) -> Mobject | None:
        """Keep 2-D text flat on the screen; a no-op outside 3-D scenes. Returns the first."""
        return mobjects[0] if mobjects else None

    def show_title(self) -> Mobject:
        """Fade in the figure's title; returns it."""
        heading = self.fix_in_frame(style.title(self.figure.title))
        self.play(FadeIn(heading, shift=0.2 * DOWN), run_time=pacing.TITLE_SECONDS)
        return heading

    def show_source(self) -> Mobject:
        """Fade in the page's source note for this figure; returns it."""
        note = self.fix_in_frame(style.source_line(self.figure.source))
        self.play(FadeIn(note), run_time=pacing.SOURCE_SECONDS)
        return note

    def finish(self, hold: float = pacing.HOLD_SECONDS) -> None:
        """End the figure: the source note fades in, then the finished picture holds for `hold` seconds."""
        self.show_source()
        self.wait(hold)


class LectureScene(Narrated, Scene):
    """A 2-D course figure."""


class LectureScene3D(Narrated, ThreeDScene):
    """A 3-D course figure (2-D text must be fixed in frame)."""

    camera_kind = GridThreeDCamera

    def fix_in_frame(self, *mobjects: Mobject) -> Mobject | None:
        """Register text with the camera so it stays flat on screen while the view turns;
        it still enters through an animation (FadeIn, Write) or self.add."""
        self.renderer.camera.add_fixed_in_frame_mobjects(*mobjects)
        return mobjects[0] if mobjects else None


def _given_cue_audio() -> dict[str, str] | None:
    """The build's {cue id: WAV path} for this scene, when it handed one over (a cluster worker's render)."""
    path = os.environ.get(CUE_AUDIO_ENV)
    return json.loads(Path(path).read_text(encoding="utf-8")) if path else None


def _figure_of(scene_class: type) -> catalogue.Figure:
    for fig in catalogue.figures():
        if fig.scene_class == scene_class.__name__:
            return fig
    raise catalogue.UnknownFigure(
        f"scene {scene_class.__name__} matches no figure id in the catalogue "
        "(a figure's scene class is its id in CamelCase)"
    )
