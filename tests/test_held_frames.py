"""A held frame is converted once (scenes/segments.py: HeldFrameEncoder), and the video is still manim's.

A wait writes one picture for many frames; manim converted it from RGBA for every one of them. Here the same
frames go through manim's own encoder and through the project's: the files must be the same bytes, every
decoded frame the same pixels, and the held picture converted once. Then a whole figure whose picture holds
while its cues speak is rendered both ways, at a tiny size, and its decoded frames compared: same count, same
pixels.
"""

from __future__ import annotations

import hashlib
import sys
from fractions import Fraction
from itertools import groupby

import av
import numpy as np
import pytest
from helpers import build_env, figure_render_args, run
from manim._config.video_encoder import VideoEncoderSpec
from manim.scene.video_segment_encoder import VideoSegmentEncoder

from scenes.segments import HeldFrameEncoder
from tools.course import catalogue

WIDTH, HEIGHT = 128, 72  # a multiple of 64 wide: libx264 encodes the same frames to the same bytes (render.MALLOC_FILL)
# What manim.cfg asks of the encoder, at a size and rate small enough for a test.
SPEC = VideoEncoderSpec(
    "mp4", "libx264", "yuv420p", WIDTH, HEIGHT, Fraction(60), (("threads", "1"), ("preset", "veryfast"))
)
# The figure whose picture holds: every cue ends on a wait while the voice speaks over the still picture.
HOLDING = "optimal_step_parabola"
PLAIN = "a play written by manim's own encoder"


def _frames(seed: int) -> list[tuple[np.ndarray, int]]:
    """A play's writes as manim makes them: moving frames one at a time, then a picture held for many frames."""
    rng = np.random.default_rng(seed)
    moving = [(rng.integers(0, 256, (HEIGHT, WIDTH, 4), dtype=np.uint8), 1) for _ in range(5)]
    held = moving[-1][0].copy()
    return [*moving, (held, 37), (rng.integers(0, 256, (HEIGHT, WIDTH, 4), dtype=np.uint8), 1), (held, 9)]


def _encode(encoder_class: type[VideoSegmentEncoder], target, writes) -> bytes:
    encoder = encoder_class(target=target, spec=SPEC)
    for pixels, repeat in writes:
        encoder.write_frame(pixels, repeat=repeat)
    encoder.finish()
    return target.read_bytes()


def _frame_hashes(path) -> list[str]:
    with av.open(str(path)) as container:
        return [hashlib.sha256(f.to_ndarray(format="rgb24").tobytes()).hexdigest() for f in container.decode(video=0)]


def test_a_held_frame_encodes_to_manims_bytes_converted_once(tmp_path, monkeypatch):
    writes = _frames(seed=4)
    manims = _encode(VideoSegmentEncoder, tmp_path / "manim.mp4", writes)
    conversions = []
    convert = HeldFrameEncoder.converted
    monkeypatch.setattr(HeldFrameEncoder, "converted", lambda self, px: conversions.append(px) or convert(self, px))
    ours = _encode(HeldFrameEncoder, tmp_path / "ours.mp4", writes)
    assert ours == manims
    hashes = _frame_hashes(tmp_path / "ours.mp4")
    assert len(hashes) == sum(repeat for _, repeat in writes) == 52
    assert len(conversions) == len(writes) == 8  # one per write, however many frames it holds
    assert len(set(hashes[5:42])) == 1  # the held picture decodes the same in each of its 37 frames


def _render_tiny(figure_id: str, media, plain: bool, env: dict):
    """The figure at WIDTH x HEIGHT, 4 fps, as `lecture build` runs manim; `plain` with manim's own encoder."""
    fig = catalogue.figure(figure_id)
    args = figure_render_args(figure_id, media, ["-r", f"{WIDTH},{HEIGHT}", "--fps", "4"])
    # manim's own file writer in the scene's renderer, saying so for each play: the render as plain manim writes it.
    plain_writer = (
        "from manim.scene.scene_file_writer import SceneFileWriter\n"
        "from scenes import segments\n"
        "class Plain(SceneFileWriter):\n"
        "    def _create_segment_encoder(self, target):\n"
        "        print(PLAIN, file=sys.stderr)\n"
        "        return super()._create_segment_encoder(target)\n"
        "segments.HeldFrameWriter = Plain\n"
        if plain
        else ""
    )
    code = f"import sys\n{plain_writer}from manim.__main__ import main\nmain(args=sys.argv[1:], prog_name='manim')"
    done = run([sys.executable, "-c", code.replace("PLAIN", repr(PLAIN)), *args], env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (PLAIN in done.stderr) == plain
    return next(media.glob(f"videos/**/{fig.id}.mp4"))


@pytest.mark.slow
def test_a_figure_that_holds_its_picture_decodes_as_the_plain_render(tmp_path):
    env = build_env(tmp_path)
    ours = _frame_hashes(_render_tiny(HOLDING, tmp_path / "ours", plain=False, env=env))
    plain = _frame_hashes(_render_tiny(HOLDING, tmp_path / "plain", plain=True, env=env))
    assert len(ours) == len(plain)
    assert ours == plain
    holds = [len(list(same)) for _, same in groupby(ours)]
    assert max(holds) >= 4  # a second of one picture at 4 fps, at least: the figure does hold its picture
