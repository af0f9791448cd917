"""Every chapter: all figures construct and play (dry run), one figure renders for real."""

import re

import pytest

from conftest import build_figure, dry_run
from tools import catalogue, media

CHAPTERS = [ch for ch in catalogue.chapters() if ch.figures]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda ch: ch.id)
def test_every_figure_of_the_chapter_plays(chapter, tmp_path):
    done = dry_run(chapter.id, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    rendered = set(re.findall(r"Rendered (\w+)", output))
    assert rendered == {fig.scene_class for fig in chapter.figures}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda ch: ch.id)
def test_first_figure_renders_with_sound(chapter, tmp_path):
    first = chapter.figures[0]
    done = build_figure(f"{chapter.id}/{first.id}", tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    info = media.probe(tmp_path / "renders" / "480p15" / chapter.id / f"{first.id}.mp4")
    assert (info.video_codec, info.audio_codec) == ("h264", "aac")
    assert abs(info.video_seconds - info.audio_seconds) <= 0.1
    assert 30 <= info.video_seconds <= 120
