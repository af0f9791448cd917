"""Every chapter: its file, as typed, renders every figure and nothing else; and real renders.

`manim -ql scenes/<chapter>.py` renders the Scene classes manim finds in the
file (manim.cfg sets write_all): the first test asks manim's own lookup for
that list and compares it with the catalogue. That every one of them plays
to its end is the layout lint's skipped pass over all figures (test_facts
runs `lecture check`), and that naming one renders it alone is test_hostile's.

Real low-quality renders: backprop and serving whole, through `lecture build` (the
session fixtures the chapter-video, site and hotspot tests share); every other
chapter a figure its cues make short, through `lecture build`, with
its attachments (a pipeline schedule's trace); and the optimizer chapter with plain
`manim -ql -n 0,1 scenes/optimizer.py`, the command the course's design card
names, each figure drawn for real up to its second play.
"""

import json
import sys
from html import escape

import pytest
from helpers import BIN, ROOT, build_figure, run

from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.publishing import manifest, media
from tools.publish.publishing.manifest import PublishedFile
from tools.voice import pacing

CHAPTERS = [ch for ch in catalogue.chapters() if ch.figures]
AS_TYPED = ("optimizer",)
# Chapters a session fixture builds whole: serving's shortest figure is checked in that build, not built again.
BUILT_WHOLE = ("backprop", "serving")
INSTEAD = {"optimizer": "optimal_step_parabola"}
FIRST_PLAYS = 2  # drawn of each figure in the as-typed render: its title and its first play
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


@pytest.mark.slow  # imports manim in a new process
def test_each_chapter_file_holds_exactly_its_figures_scenes():
    done = run([sys.executable, "-c", LIST_SCENES, *(ch.id for ch in CHAPTERS)], cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for chapter in CHAPTERS:
        assert found[chapter.id] == sorted(fig.scene_class for fig in chapter.figures), chapter.id


@pytest.mark.slow  # a real render
@pytest.mark.parametrize("chapter", AS_TYPED)
def test_chapter_renders_as_typed(chapter, tmp_path):
    done = run(
        [str(BIN / "manim"), "-ql", "-n", f"0,{FIRST_PLAYS - 1}", "--media_dir", str(tmp_path), f"scenes/{chapter}.py"],
        env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for fig in catalogue.chapter(chapter).figures:
        folder = tmp_path / "videos" / chapter / "480p15"
        info = media.probe(folder / f"{fig.scene_class}.mp4")
        assert (info.video_codec, info.audio_codec) == ("h264", "aac"), fig.id
        assert len(list((folder / "partial_movie_files" / fig.scene_class).glob("*.mp4"))) == FIRST_PLAYS, fig.id


def _rendered(chapter) -> catalogue.Figure:
    """The figure its cues make shortest, among those with attachments where the chapter has any (so that
    publishing an attachment is rendered for real); optimizer's is the 3-D saddle, which test_segments renders
    (in parts too), so there the next shortest."""
    if chapter.id in INSTEAD:
        return catalogue.figure(INSTEAD[chapter.id])
    candidates = [fig for fig in chapter.figures if fig.attachments] or chapter.figures
    return min(pacing.estimate(candidates), key=lambda estimate: estimate.seconds).figure


def _published_with_sound_and_attachments(chapter, fig, out) -> None:
    info = _streams_in_sync(out / chapter.id / f"{fig.id}.mp4")
    assert 30 <= info.video_seconds <= 120
    kit, entry = out / "site", manifest.load(out).figures[fig.id]
    for attached in fig.attachments:  # beside the clip as made, listed with its sha256, linked from its embed page
        name = f"{chapter.id}/{fig.id}.{attached.suffix}"
        assert (out / name).read_text(encoding="utf-8") == attached.make()
        assert entry.files[attached.suffix] == PublishedFile(name, file_sha256(out / name))
        assert (kit / "media" / name).read_bytes() == (out / name).read_bytes()
        page = (kit / "embed" / f"{fig.id}.html").read_text(encoding="utf-8")
        assert f'href="../media/{name}"' in page
        assert escape(attached.how_to) in page
    assert f'<h2 class="topic-title">{chapter.topic.number}' in (kit / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow  # a real render
@pytest.mark.parametrize("chapter", [ch for ch in CHAPTERS if ch.id not in BUILT_WHOLE], ids=lambda ch: ch.id)
def test_a_figure_of_each_chapter_renders_with_sound_and_publishes_its_attachments(chapter, tmp_path):
    fig = _rendered(chapter)
    done = build_figure(f"{chapter.id}/{fig.id}", tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    _published_with_sound_and_attachments(chapter, fig, tmp_path / "renders" / "480p15")


@pytest.mark.slow  # the serving chapter's build, shared
def test_the_serving_chapter_built_whole_has_its_short_figure_with_sound_and_attachments(serving_build):
    """Built by the same `lecture build --no-layout` (silent voice) as the figures above, with its chapter."""
    chapter = catalogue.chapter("serving")
    _published_with_sound_and_attachments(chapter, _rendered(chapter), serving_build.out)


def test_some_figure_rendered_per_chapter_publishes_an_attachment():
    """So the renders above publish a file beside a clip (a pipeline schedule's trace)."""
    assert any(_rendered(ch).attachments for ch in CHAPTERS if ch.id not in BUILT_WHOLE)
