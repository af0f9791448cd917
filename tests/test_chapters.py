"""Every chapter: its file, as typed, renders every figure and nothing else; and real renders.

`manim -ql scenes/<chapter>.py` renders the Scene classes manim finds in the
file (manim.cfg sets write_all): the first test asks manim's own lookup for
that list and compares it with the catalogue. That every one of them plays
is the layout lint's skipped pass over all figures (test_facts runs
`lecture check`), and that naming one renders it alone is test_hostile's.

Real low-quality renders: backprop whole, through `lecture build` (the
session fixture the chapter-video and site tests share); optimizer whole,
with plain `manim -ql scenes/optimizer.py`, the command the course's design
card names; every other chapter the figure its cues make shortest, through
`lecture build`.
"""

import json
import sys

import pytest
from helpers import BIN, ROOT, build_figure, run

from tools.course import catalogue
from tools.publish import media
from tools.voice import pacing

CHAPTERS = [ch for ch in catalogue.chapters() if ch.figures]
AS_TYPED = ("optimizer",)
BUILT_WHOLE = "backprop"
# What manim itself picks from each chapter file when no scene is named.
LIST_SCENES = """
import json, sys
from pathlib import Path
from manim.utils.module_ops import scene_classes_from_file
print(json.dumps({arg: sorted(cls.__name__ for cls in scene_classes_from_file(Path(f"scenes/{arg}.py"), full_list=True))
                  for arg in sys.argv[1:]}))
"""


def _streams_in_sync(path) -> media.Probe:
    info = media.probe(path)
    assert (info.video_codec, info.audio_codec) == ("h264", "aac"), path
    assert abs(info.video_seconds - info.audio_seconds) <= 0.1, path
    return info


def test_each_chapter_file_holds_exactly_its_figures_scenes():
    done = run([sys.executable, "-c", LIST_SCENES, *(ch.id for ch in CHAPTERS)], cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for chapter in CHAPTERS:
        assert found[chapter.id] == sorted(fig.scene_class for fig in chapter.figures), chapter.id


@pytest.mark.slow  # a real render
@pytest.mark.parametrize("chapter", AS_TYPED)
def test_chapter_renders_as_typed(chapter, tmp_path):
    done = run([str(BIN / "manim"), "-ql", "--media_dir", str(tmp_path), f"scenes/{chapter}.py"],
               env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for fig in catalogue.chapter(chapter).figures:
        _streams_in_sync(tmp_path / "videos" / chapter / "480p15" / f"{fig.scene_class}.mp4")


@pytest.mark.slow  # a real render
@pytest.mark.parametrize("chapter", [ch for ch in CHAPTERS if ch.id not in (*AS_TYPED, BUILT_WHOLE)],
                         ids=lambda ch: ch.id)
def test_a_figure_of_each_chapter_renders_with_sound(chapter, tmp_path):
    shortest = min(pacing.estimate(chapter.figures), key=lambda estimate: estimate.seconds).figure
    done = build_figure(f"{chapter.id}/{shortest.id}", tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    info = _streams_in_sync(tmp_path / "renders" / "480p15" / chapter.id / f"{shortest.id}.mp4")
    assert 30 <= info.video_seconds <= 120
