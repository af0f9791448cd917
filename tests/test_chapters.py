"""Every chapter: all figures play from the command line with no prompt, and real renders.

Real low-quality renders: backprop whole, through `lecture build` (the
session fixture the chapter-video and site tests share); optimizer whole,
with plain `manim -ql scenes/optimizer.py`, the command the course's design
card names; every other chapter its first figure, through `lecture build`.
Every other chapter is also played as typed (`manim -ql scenes/<chapter>.py`),
as a dry run: every figure constructed and played, no file written.
"""

import re

import pytest
from helpers import BIN, build_figure, dry_run, run

from tools.course import catalogue
from tools.publish import media

pytestmark = pytest.mark.slow  # real renders

CHAPTERS = [ch for ch in catalogue.chapters() if ch.figures]
AS_TYPED = ("optimizer",)
BUILT_WHOLE = "backprop"


def _streams_in_sync(path) -> media.Probe:
    info = media.probe(path)
    assert (info.video_codec, info.audio_codec) == ("h264", "aac"), path
    assert abs(info.video_seconds - info.audio_seconds) <= 0.1, path
    return info


@pytest.mark.parametrize("chapter", [ch for ch in CHAPTERS if ch.id not in AS_TYPED], ids=lambda ch: ch.id)
def test_every_figure_plays_with_no_prompt(chapter, tmp_path):
    done = dry_run(chapter.id, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert set(re.findall(r"Rendered (\w+)", output)) == {fig.scene_class for fig in chapter.figures}


@pytest.mark.parametrize("chapter", AS_TYPED)
def test_chapter_renders_as_typed(chapter, tmp_path):
    done = run([str(BIN / "manim"), "-ql", "--media_dir", str(tmp_path), f"scenes/{chapter}.py"],
               env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for fig in catalogue.chapter(chapter).figures:
        _streams_in_sync(tmp_path / "videos" / chapter / "480p15" / f"{fig.scene_class}.mp4")


@pytest.mark.parametrize("chapter", [ch for ch in CHAPTERS if ch.id not in (*AS_TYPED, BUILT_WHOLE)],
                         ids=lambda ch: ch.id)
def test_first_figure_renders_with_sound(chapter, tmp_path):
    first = chapter.figures[0]
    done = build_figure(f"{chapter.id}/{first.id}", tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    info = _streams_in_sync(tmp_path / "renders" / "480p15" / chapter.id / f"{first.id}.mp4")
    assert 30 <= info.video_seconds <= 120
