"""A figure rendered in parts and joined is the whole render, frame for frame.

The figures here carry state from play to play in ways manim's own skipping
gets wrong (with it, both fail: saddle_3d_rotating's frames differ, and
why_fp32_bf16 gains 10 frames): the ambient camera rotation of
saddle_3d_rotating (a ``dt`` updater on the camera), why_fp32_bf16's
``always_redraw`` riders on a tracker and its trailing waits. Each
is rendered whole, then in three parts cut by play number (``manim -n``)
and in two cut at a time (as ``lecture build`` cuts a running figure), at a
tiny size and frame rate; the parts are joined as the build joins them (their
partial movies, as manim joins a whole render's) and
every decoded frame is compared by hash.

Also here, with the same tiny renders: manim under ``lecture build`` writes
no sound of its own, and hands over the whole narration track instead.
"""

from __future__ import annotations

import hashlib
import os
import sys
import wave

import av
import pytest
from helpers import build_env, figure_render_args, run

from tools.course import catalogue
from tools.publish.publishing import media
from tools.publish.rendering import segments
from tools.settings import AUDIO_OUT_ENV, FROM_SECONDS_ENV, STOP_FILE_ENV

# 128 px: a multiple of 64, where libx264 encodes the same frames to the same bytes (see render.MALLOC_FILL); 2 fps:
# half the frames of the turning surface to draw, the joins checked at the same cuts.
TINY = ["-r", "128,72", "--fps", "2"]


def _render(figure: str, media, flags: list[str], env: dict):
    """manim on one figure as `lecture build` runs it, at the tiny size; its video, or None if it drew nothing."""
    fig = catalogue.figure(figure)
    done = run(
        [sys.executable, "-m", "manim", *figure_render_args(figure, media, TINY, flags)],
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    videos = list(media.glob(f"videos/**/{fig.id}.mp4"))
    return videos[0] if videos else None


def _frame_hashes(path) -> list[str]:
    with av.open(str(path)) as container:
        return [
            hashlib.sha256(frame.to_ndarray(format="rgb24").tobytes()).hexdigest()
            for frame in container.decode(video=0)
        ]


def _partial_movies(folders: list) -> list:
    """The parts' partial movies in play order, each play once, as the build joins them."""
    return segments.each_play_once(
        [folder for base in folders for folder in base.glob("videos/**/partial_movie_files/*")]
    )


def _same_frames(figure: str, whole, folders: list, joined) -> None:
    segments.join(_partial_movies(folders), joined)
    expected, got = _frame_hashes(whole), _frame_hashes(joined)
    assert len(got) == len(expected)
    differing = [n for n, (a, b) in enumerate(zip(expected, got)) if a != b]
    assert not differing, f"{figure}: {len(differing)} of {len(expected)} frames differ, the first is {differing[0]}"


@pytest.mark.slow
@pytest.mark.parametrize("figure", ["saddle_3d_rotating", "why_fp32_bf16"])
def test_parts_joined_are_the_whole_render_frame_for_frame(figure, tmp_path, monkeypatch):
    env = build_env(tmp_path)
    monkeypatch.setenv("LECTURE_CACHE", env["LECTURE_CACHE"])  # where one_figure_cfg() writes
    whole = _render(figure, tmp_path / "whole", [], env)
    with av.open(str(whole)) as container:
        seconds = float(container.streams.video[0].duration * container.streams.video[0].time_base)
    plays = len(_partial_movies([tmp_path / "whole"]))
    assert plays > 6
    a, b = plays // 3, 2 * plays // 3
    for i, cut in enumerate((f"0,{a - 1}", f"{a},{b - 1}", f"{b}")):
        _render(figure, tmp_path / f"n{i}", ["-n", cut], env)
    _same_frames(figure, whole, [tmp_path / f"n{i}" for i in range(3)], tmp_path / "by_number.mp4")
    # As the build cuts a running figure: the first part told to stop at T, the second from T on.
    cut = repr(seconds * 0.45)
    stop = tmp_path / "stop"
    stop.write_text(cut)
    first = _render(figure, tmp_path / "t0", [], {**env, STOP_FILE_ENV: str(stop)})
    _render(figure, tmp_path / "t1", [], {**env, FROM_SECONDS_ENV: cut})
    _same_frames(figure, whole, [tmp_path / "t0", tmp_path / "t1"], tmp_path / "by_time.mp4")
    assert os.path.getsize(first) < os.path.getsize(whole)  # it did stop early
    # A first part told to stop late (on a cluster its stop time comes over the network): it renders plays the
    # second renders too, and the figure has each once.
    stop.write_text(repr(seconds * 0.6))
    _render(figure, tmp_path / "late", [], {**env, STOP_FILE_ENV: str(stop)})
    overlap = {m.name for m in _partial_movies([tmp_path / "late"])} & {
        m.name for m in _partial_movies([tmp_path / "t1"])
    }
    assert overlap
    _same_frames(figure, whole, [tmp_path / "late", tmp_path / "t1"], tmp_path / "late_and_t1.mp4")


@pytest.mark.slow
def test_a_build_render_leaves_the_sound_to_publishing_and_plain_manim_keeps_it(tmp_path, monkeypatch):
    """Under `lecture build` manim hands over the narration track, as long as the video, and writes no
    sound of its own (publishing lays the track under the video: media.mux_web); plain manim muxes it."""
    env = build_env(tmp_path)
    monkeypatch.setenv("LECTURE_CACHE", env["LECTURE_CACHE"])
    track = tmp_path / "track.wav"
    built = media.probe(_render("optimal_step_parabola", tmp_path / "built", [], {**env, AUDIO_OUT_ENV: str(track)}))
    plain = media.probe(_render("optimal_step_parabola", tmp_path / "plain", [], env))
    assert (built.audio_codec, plain.audio_codec) == (None, "aac")
    with wave.open(str(track)) as wav:
        assert wav.getnframes() / wav.getframerate() == pytest.approx(built.video_seconds, abs=0.25)


def _faded(monkeypatch, copyless: bool) -> tuple[list, int]:
    """A scene of fades played with animations skipped, with or without fades_without_copies: what its
    mobjects end as (points, colours, on the scene or not) and how many copies were made."""
    from manim import DOWN, LEFT, UP, Circle, FadeIn, FadeOut, LaggedStart, Mobject, Scene, Square, tempconfig

    from scenes.segments import SegmentRenderer, fades_without_copies

    copies = []
    plain_copy = Mobject.copy
    monkeypatch.setattr(Mobject, "copy", lambda self: copies.append(self) or plain_copy(self))

    class Fades(Scene):
        def begin_animations(self):
            if copyless:
                fades_without_copies(self.animations)
            super().begin_animations()

        def construct(self):
            self.square, self.circle = Square().shift(LEFT), Circle(fill_opacity=0.5)
            self.ticking = Square(0.5).add_updater(lambda m, dt: m.rotate(dt))  # an updater: its fade stays whole
            self.play(LaggedStart(FadeIn(self.square, shift=UP), FadeIn(self.circle, scale=2)), FadeIn(self.ticking))
            self.play(FadeOut(self.square, shift=DOWN), FadeOut(self.ticking))

    with tempconfig({"dry_run": True, "skip_animations": True, "disable_caching": True}):
        scene = Fades(renderer=SegmentRenderer(skip_animations=True))
        scene.render()
    state = [
        (m.points.tolist(), m.fill_rgbas.tolist(), m.stroke_rgbas.tolist(), m in scene.mobjects)
        for m in (scene.square, scene.circle, scene.ticking)
    ]
    return state, len(copies)


def test_a_fade_in_a_play_not_drawn_ends_as_manims_own_without_copying(monkeypatch):
    manims, manims_copies = _faded(monkeypatch, copyless=False)
    ours, our_copies = _faded(monkeypatch, copyless=True)
    assert ours == manims  # the same points and colours; the faded-out square off the scene, the circle on it
    assert [on_scene for *_, on_scene in ours] == [False, True, False]
    # manim copies twice per FadeIn (its faded start, its end) and three times per FadeOut (one more, of the
    # end, to align with): three FadeIns and two FadeOuts
    assert manims_copies == 3 * 2 + 2 * 3
    assert our_copies == 2 + 3  # only the fades of the square with an updater: its FadeIn and its FadeOut
