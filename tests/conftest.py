"""Shared fixtures: isolated build folders, one real backprop build (with a three-figure variant) for the
chapter-video and site tests, one of the serving chapter for the numbers in the picture; and how pytest-xdist
keeps each shared build on one worker. Helpers are in helpers.py."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import replace

import pytest
from helpers import BUILD, FIGURE_B, FIGURE_C, Build, ThreeFigures, build_env, cut_clip, run
from hypothesis import settings as hypothesis_settings

from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.publishing import chapter_video, manifest, media
from tools.publish.publishing.manifest import PublishedFile
from tools.publish.site import site
from tools.voice import captions, cues

_MEDIA_SET: list[bool] = []

# Hypothesis (tests/test_fuzz.py): a modest number of examples per property in the suite, more for a longer local
# run: LECTURE_HYPOTHESIS=long, or pytest --hypothesis-profile=long. No example database: nothing is written into
# the checkout, and every run draws new examples.
hypothesis_settings.register_profile("suite", max_examples=25, deadline=None, database=None)
hypothesis_settings.register_profile("long", max_examples=1000, deadline=None, database=None)
hypothesis_settings.load_profile(os.environ.get("LECTURE_HYPOTHESIS", "suite"))


@pytest.fixture(autouse=True)
def _own_manim_media(tmp_path_factory):
    """Each xdist worker draws manim's text in its own media folder: manim writes a Text's SVG to
    media/texts/ in place, so two workers setting the same new label would read each other's half-files."""
    manim = sys.modules.get("manim")
    if manim is not None and not _MEDIA_SET:
        manim.config.media_dir = str(tmp_path_factory.mktemp("manim-media"))
        _MEDIA_SET.append(True)


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Point renders and caches at a temporary folder for this test."""
    monkeypatch.setenv("LECTURE_RENDERS", str(tmp_path / "renders"))
    monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "cache"))
    return tmp_path


@pytest.fixture
def narration_dir(tmp_path, monkeypatch):
    """A scratch narration folder in place of the repository's, for a backprop chapter of gates_circuit alone."""
    folder = tmp_path / "narration"
    folder.mkdir()
    monkeypatch.setattr(cues, "NARRATION_DIR", folder)
    monkeypatch.setattr(catalogue.chapter("backprop"), "figures", [catalogue.figure("gates_circuit")])
    cues.chapter_cues.cache_clear()
    cues.lexicon.cache_clear()
    yield folder
    cues.chapter_cues.cache_clear()
    cues.lexicon.cache_clear()


@pytest.fixture(scope="session")
def backprop_build(tmp_path_factory) -> Build:
    """One real `lecture build -q l --no-layout --only backprop` with the espeak voice:
    clips, chapter video, embed kit; shared by the chapter-video and site tests."""
    tmp = tmp_path_factory.mktemp("backprop")
    env = build_env(tmp, voice="espeak")
    done = run([*BUILD, "-j", "2", "--only", "backprop"], env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return Build(tmp / "renders" / "480p15", env, done.stdout)


@pytest.fixture(scope="session")
def serving_build(tmp_path_factory) -> Build:
    """One real `lecture build -q l --no-layout --only serving` with the silent voice: its five clips, the chapter
    video and the kit, for the numbers in the picture (pd_timeline's 414.1 ms, alone and in its chapter)."""
    tmp = tmp_path_factory.mktemp("serving")
    env = build_env(tmp)
    done = run([*BUILD, "-j", "2", "--only", "serving"], env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return Build(tmp / "renders" / "480p15", env, done.stdout)


@pytest.fixture(scope="session")
def three_figures(backprop_build, tmp_path_factory) -> ThreeFigures:
    """The real build, its backprop chapter made three figures long from the
    one real clip: the clip, a 20-second cut of it, the clip again; the two
    extra figures' captions are marked 〔二〕 and 〔三〕. Joined with
    chapter_video.build_all, kit written with site.write_kit."""
    tmp = tmp_path_factory.mktemp("three")
    out = tmp / "480p15"
    shutil.copytree(backprop_build.out, out, ignore=shutil.ignore_patterns("site"))
    man = manifest.load(out)
    first = man.figures["gates_circuit"]
    clip = out / first.files["mp4"].path
    lines = captions.parse_srt((out / first.files["srt"].path).read_text(encoding="utf-8"))
    folder = clip.parent
    cut_clip(clip, folder / f"{FIGURE_B}.mp4", 20.0, tmp / "cut")
    shutil.copy(clip, folder / f"{FIGURE_C}.mp4")
    extra = ((FIGURE_B, "〔二〕", "第二段：截短的电路图"), (FIGURE_C, "〔三〕", "第三段：电路图重放"))
    for fig_id, mark, title in extra:
        seconds = media.probe(folder / f"{fig_id}.mp4").video_seconds
        own = [captions.Caption(c.start, min(c.end, seconds), mark + c.text) for c in lines if c.start < seconds]
        (folder / f"{fig_id}.srt").write_text(captions.to_srt(own), encoding="utf-8")
        (folder / f"{fig_id}.vtt").write_text(captions.to_vtt(own), encoding="utf-8")
        for ext in ("png", "webp"):
            shutil.copy(folder / f"gates_circuit.{ext}", folder / f"{fig_id}.{ext}")
        files = {
            ext: PublishedFile(f"backprop/{fig_id}.{ext}", file_sha256(folder / f"{fig_id}.{ext}"))
            for ext in ("mp4", "srt", "vtt", "png", "webp")
        }
        man.figures[fig_id] = replace(first, figure=fig_id, title=title, duration=round(seconds, 3), files=files)
    man.chapters = [
        replace(ch, figures=["gates_circuit", FIGURE_B, FIGURE_C]) if ch.id == "backprop" else ch for ch in man.chapters
    ]
    progress: list[str] = []
    chapter_video.build_all(man, out, progress.append)
    manifest.save(out, man)
    return ThreeFigures(out, man, progress, site.write_kit(out, man, catalogue.course_title()))


# Fixtures that make something once for many tests (a real build, the stills of all 52 figures, every
# builder run again). Under pytest-xdist, which `make test` and plain `pytest` run with a worker per core,
# a test that takes one joins that fixture's xdist_group, so it runs on the one worker that made it,
# instead of each worker making it again. Groups with the most tests are sent out first (xdist's
# loadscope reorder), so the long builds start at once.
SHARED = {
    "backprop_build": "backprop_build",
    "three_figures": "backprop_build",
    "serving_build": "serving_build",
    "last_frames": "course_stills",
    "course_coverage": "course_stills",
    "older_cpu_frames": "older_cpu_frames",
    "rebuilt": "facts_rebuilt",
}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """Group the takers of a SHARED fixture; put slow tests first, so a long one never starts last."""
    for item in items:
        group = next((SHARED[name] for name in getattr(item, "fixturenames", ()) if name in SHARED), None)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_addoption(parser):
    parser.addoption(
        "--set_test",
        action="store_true",
        help="write the last-frame tests' control data from this machine's frames (a deliberate act)",
    )
