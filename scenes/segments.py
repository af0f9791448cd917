"""One figure in segments, each frame for frame what a whole render of the figure draws there.

A segment is a run of the figure's plays: those that start at or after
``LECTURE_FROM_SECONDS`` (or ``manim -n FROM``), up to the first play that
starts at or after the time written in the file ``LECTURE_STOP_FILE`` names
(or past ``-n …,UPTO``). The build writes that file while the segment
renders, to hand the rest of the figure to an idle core
(tools/publish/rendering/segments.py); a cut always falls between two plays.

manim itself skips a play before FROM in one step: its updaters see one
``dt`` of the whole run time, so a time-based updater (the ambient camera
rotation of ``saddle_3d_rotating``) ends somewhere else, and its clock moves
by the exact run time where a rendered play moves by whole frames, which
changes ``narrate()``'s trailing waits and so every later play. The
:class:`SegmentRenderer` steps a play before the segment the way a render
plays it (the same frame times, the same updates, the clock moved frame by
frame) and only leaves out drawing and writing, which cost nearly all of a
render. So two processes that cut at the same time agree on the play
where one stops and the other begins, and the segments' videos, joined,
are the whole render's.

A play manim skips (``manim -s``, the layout lint's run) is not drawn either:
manim's Cairo renderer draws the frame at every play even while it skips,
and throws the picture away (about half of a 3-D figure's run with
animations skipped). The last frame, and any look the layout probe takes
between plays, is still drawn.

In a play that is not drawn (skipped, or stepped before the segment), a
FadeIn or FadeOut is run without its copies (:func:`fades_without_copies`).

A held frame (a wait, while the voice speaks over a still picture) is converted to the video's pixel format
once and handed to x264 again for each of its frames (:class:`HeldFrameEncoder`); manim converts it again for
every frame. The file is byte for byte manim's.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from manim import AnimationGroup, FadeIn, FadeOut, config
from manim.renderer.cairo_renderer import CairoRenderer
from manim.scene.scene_file_writer import SceneFileWriter
from manim.scene.video_segment_encoder import VideoSegmentEncoder
from manim.utils.exceptions import EndSceneEarlyException

from tools.settings import FROM_SECONDS_ENV, STOP_FILE_ENV


class SegmentRenderer(CairoRenderer):
    """manim's Cairo renderer, but a play before the segment is stepped frame by frame without being drawn,
    and the segment may be told to end early."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("file_writer_class", HeldFrameWriter)
        super().__init__(*args, **kwargs)
        self.stepping = False  # inside a play before the segment
        self.from_seconds = float(os.environ.get(FROM_SECONDS_ENV, "0"))
        self.stop_file = os.environ.get(STOP_FILE_ENV)
        self.segment_start: float | None = None  # the clock when the first rendered play began
        self.ended_early = False  # stopped before the figure's end (a stop time, or -n …,UPTO)
        self.playing = False  # inside a play manim runs (not one stepped before the segment)

    def before_segment(self) -> bool:
        by_number = config.from_animation_number > 0 and self.num_plays < config.from_animation_number
        return by_number or self.time < self.from_seconds

    def _stop_seconds(self) -> float | None:
        try:
            with open(self.stop_file, encoding="utf-8") as stream:
                return float(stream.read())
        except (TypeError, OSError, ValueError):  # no stop file named, none written yet, or mid-write
            return None

    def play(self, scene, *args, **kwargs) -> None:
        if self.before_segment():
            self.stepping = True
            try:
                self._step(scene, *args, **kwargs)
            finally:
                self.stepping = False
            return
        stop = self._stop_seconds()
        if stop is not None and self.time >= stop:
            self.ended_early = True
            raise EndSceneEarlyException()
        if self.segment_start is None:
            self.segment_start = self.time
        self.playing = True
        try:
            super().play(scene, *args, **kwargs)
        except EndSceneEarlyException:  # past -n …,UPTO
            self.ended_early = True
            raise
        finally:
            self.playing = False

    def update_frame(self, scene, *args, **kwargs) -> None:
        if self.playing and self.skip_animations:  # a skipped play's picture is thrown away
            return
        super().update_frame(scene, *args, **kwargs)

    def _step(self, scene, *args, **kwargs) -> None:
        """CairoRenderer.play as it goes for a rendered play (caching off), without drawing or writing a frame."""
        self.skip_animations = False  # a rendered play's time progression, and its closing update_mobjects(0)
        scene.compile_animation_data(*args, **kwargs)
        self.file_writer.add_partial_movie_file(None)  # None: no partial movie, nothing for the file writer to join
        self.animations_hashes.append(None)
        self.file_writer.begin_animation(False, animation_index=self.num_plays)
        scene.begin_animations()
        if scene.is_current_animation_frozen_frame():
            dt = 1 / self.camera.frame_rate
            self.time += int(scene.duration / dt) * dt  # what freeze_current_frame's add_frame adds
        else:
            scene.play_internal()  # calls render() once per frame
        self.file_writer.end_animation(False)
        self.num_plays += 1

    def render(self, scene, time, moving_mobjects=None) -> None:
        if self.stepping:
            self.time += 1 / self.camera.frame_rate  # what add_frame adds for one frame
            return
        if self.skip_animations:  # add_frame would drop the picture
            return
        super().render(scene, time, moving_mobjects)

    def save_static_frame_data(self, scene, static_mobjects) -> np.ndarray | None:
        if self.skip_animations:  # nothing of a skipped play is drawn; the next drawn play saves its own
            self.static_image = None
            return None
        return super().save_static_frame_data(scene, static_mobjects)

    def freeze_current_frame(self, duration: float) -> None:
        if not self.skip_animations:  # a skipped wait adds no frame (add_frame), so its picture is not needed
            super().freeze_current_frame(duration)

    def rendered_seconds(self) -> float:
        """Seconds of video this process has rendered so far."""
        return 0.0 if self.segment_start is None else self.time - self.segment_start


class HeldFrameEncoder(VideoSegmentEncoder):
    """manim's encoder of one play's video, but handed each frame already in the stream's pixel format (by
    :class:`HeldFrameWriter`), and a frame written for several frames in a row (a wait's ``repeat``) goes to
    x264 as the same planes with each new timestamp.

    manim builds a new frame from the RGBA array (a copy) and converts it for every repeat, on the encoder's
    thread: at 1080p60 about 4 of the 10 ms of CPU a held frame cost; x264's 6 ms stay, as the same frames must
    come out of it. The conversion is the one the encoder makes itself (the same size, format, scaler and
    threads), and x264 copies what it is handed, so the video is byte for byte manim's
    (tests/test_held_frames.py).
    """

    def write_frame(self, frame: np.ndarray | av.VideoFrame, *, repeat: int = 1) -> None:
        """Encode `frame` (converted, or an RGBA array as manim's writer hands it) for `repeat` frames."""
        if isinstance(frame, np.ndarray):
            self._validate_frame(frame, repeat)
            frame = self.converted(frame)
        time_base = Fraction(self.spec.frame_rate.denominator, self.spec.frame_rate.numerator)
        try:
            for _ in range(repeat):
                frame.pts, frame.time_base = self._next_pts, time_base
                self._next_pts += 1
                for packet in self._stream.encode(frame):
                    self._container.mux(packet)
        except BaseException as error:
            raise self._operation_error("encode", error) from error

    def converted(self, pixels: np.ndarray) -> av.VideoFrame:
        """The RGBA frame in the stream's pixel format, as the encoder converts it (the array is read in place:
        manim's file writer owns it and never changes it)."""
        context = self._stream.codec_context
        rgba = av.VideoFrame.from_numpy_buffer(pixels, format="rgba")
        return rgba.reformat(context.width, context.height, context.pix_fmt, threads=context.thread_count)


class HeldFrameWriter(SceneFileWriter):
    """manim's file writer, with each play's video written by a :class:`HeldFrameEncoder`, and each frame
    converted on the drawing thread as it is written.

    At 1080p60 x264 and the conversion from RGBA, both on the encoder's thread, took three times what drawing
    took, and the drawing thread waited for them: converting there, the two threads share the work (the
    conversion holds no lock, so it runs beside x264), and a frame waits in the queue as a YUV frame, not an
    RGBA array two and a half times its size.
    """

    def write_frame(self, pixels: np.ndarray, *, repeat: int = 1) -> None:
        job = self._current_encode_job
        if self.output_spec.is_video and not self.output_spec.is_image_sequence and job and not job.failed:
            job.encoder._validate_frame(pixels, repeat)
            pixels = job.encoder.converted(pixels)
        super().write_frame(pixels, repeat=repeat)

    def _create_segment_encoder(self, target: Path) -> VideoSegmentEncoder:
        return HeldFrameEncoder(target=target, spec=self.video_encoder)


def fades_without_copies(animations) -> None:
    """Run the plain FadeIns and FadeOuts among `animations` (those in groups too) without copying their mobjects.

    A fade copies its mobject when it begins (its faded start, its end; a FadeOut once more), only to draw
    the frames between; it ends where the mobject was (a FadeOut puts it back after taking it off the
    scene). In a play that is not drawn, its start, its frames and its end change nothing, so they are left
    out: on the longest figure, a third of a run with animations skipped went to these copies. A mobject
    with an updater keeps the whole fade (its copies' updaters run on each frame). Call only for a play
    that is not drawn.
    """
    for animation in animations:
        if isinstance(animation, AnimationGroup):
            fades_without_copies(animation.animations)
        elif type(animation) in (FadeIn, FadeOut) and not animation.mobject.get_family_updaters():
            animation.begin = animation.interpolate = _nothing
            animation.update_mobjects = _nothing
            # what Animation.finish leaves after its last frame: the mobject's updating back on, if it was paused
            animation.finish = animation.mobject.resume_updating if animation.suspend_mobject_updating else _nothing


def _nothing(*_) -> None:
    """What a fade's start, frame or end does to a play that is not drawn."""
