"""Real low-quality renders: streams, sync, captions, incremental builds, refusals."""

import hashlib
import shutil
import sys

import numpy as np
import pytest
from helpers import BIN, BUILD, ROOT, run
from PIL import Image

from tools.course import catalogue
from tools.publish.preview import frames
from tools.publish.publishing import manifest, media
from tools.voice import captions

pytestmark = pytest.mark.slow  # real renders


@pytest.fixture(scope="module")
def built(backprop_build):
    """The session's real espeak build of the backprop chapter at 480p15."""
    return backprop_build.out, backprop_build.env, backprop_build.stdout


FIGURES = [fig.id for fig in catalogue.chapter("backprop").figures]


@pytest.mark.parametrize("figure", FIGURES)
def test_clip_has_h264_video_and_aac_audio_in_sync(built, figure):
    out, _, _ = built
    info = media.probe(out / "backprop" / f"{figure}.mp4")
    assert (info.video_codec, info.audio_codec) == ("h264", "aac")
    assert (info.width, info.height) == (854, 480)
    assert abs(info.video_seconds - info.audio_seconds) <= 0.1
    assert 30 <= info.video_seconds <= 120


def test_clip_is_laid_out_for_streaming(built):
    out, _, _ = built
    assert media.moov_before_mdat(out / "backprop" / "gates_circuit.mp4")


@pytest.mark.parametrize("figure", FIGURES)
def test_captions_are_chinese_and_end_before_the_video(built, figure):
    out, _, _ = built
    video = media.probe(out / "backprop" / f"{figure}.mp4")
    lines = captions.parse_srt((out / "backprop" / f"{figure}.srt").read_text(encoding="utf-8"))
    assert len(lines) >= 3
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in c.text) for c in lines)
    assert captions.violations(lines, 15) == []
    assert lines[-1].end < video.video_seconds
    vtt = (out / "backprop" / f"{figure}.vtt").read_text(encoding="utf-8")
    assert vtt.startswith("WEBVTT")
    assert lines[0].text in vtt


def test_poster_and_manifest_describe_the_clip(built):
    out, _, _ = built
    entry = manifest.load(out).figures["gates_circuit"]
    mp4 = out / entry.files["mp4"].path
    assert entry.chapter == "backprop"
    assert entry.title
    assert entry.files["mp4"].sha256 == hashlib.sha256(mp4.read_bytes()).hexdigest()
    assert entry.duration == pytest.approx(media.probe(mp4).video_seconds, abs=0.01)
    poster = media.frame_at(mp4).size
    assert (out / entry.files["png"].path).exists()
    assert poster == (854, 480)


def test_an_unchanged_figure_is_not_rendered_again(built):
    out, env, _ = built
    before = (out / "backprop" / "gates_circuit.mp4").stat().st_mtime_ns
    done = run([*BUILD, "--only", "backprop/gates_circuit"], env=env)
    assert done.returncode == 0
    assert "gates_circuit: unchanged" in done.stdout
    assert "narration" not in done.stdout  # an unchanged figure's audio is neither made nor read
    assert (out / "backprop" / "gates_circuit.mp4").stat().st_mtime_ns == before


@pytest.fixture
def tampered(tmp_path, built):
    """A copy of the project whose gates input c is changed, with a good render in place."""
    copy = tmp_path / "project"
    for part in ("tools", "scenes", "narration"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "manim.cfg", copy / "manim.cfg")
    facts = copy / "tools" / "chapters" / "backprop.py"
    text = facts.read_text(encoding="utf-8")
    facts.write_text(text.replace('"c": 4.0', '"c": 5.0'), encoding="utf-8")
    good = copy / "renders" / "480p15" / "backprop"
    good.mkdir(parents=True)
    shutil.copy(built[0] / "backprop" / "gates_circuit.mp4", good)
    return copy, good / "gates_circuit.mp4"


def _refusal_is_clear(output: str) -> None:
    assert "figure 'gates_circuit'" in output
    assert "fact 'grad_a'" in output
    assert "expected 4.0" in output
    assert "computed 5.0" in output


def test_lecture_build_refuses_a_tampered_fact_and_keeps_the_good_file(tampered):
    copy, good = tampered
    before = hashlib.sha256(good.read_bytes()).hexdigest()
    env = {"PYTHONPATH": str(copy), "LECTURE_RENDERS": str(copy / "renders"), "LECTURE_CACHE": str(copy / ".cache")}
    done = run([sys.executable, "-m", "tools.cli", "build", "-q", "l"], cwd=copy, env=env)
    assert done.returncode == 2
    _refusal_is_clear(done.stderr)
    assert hashlib.sha256(good.read_bytes()).hexdigest() == before
    assert not (copy / ".cache" / "manim").exists()


def test_manim_refuses_a_tampered_fact_before_the_first_frame(tampered):
    copy, _ = tampered
    env = {"PYTHONPATH": str(copy), "LECTURE_VOICE": "silent", "LECTURE_CACHE": str(copy / ".cache")}
    done = run([sys.executable, "-m", "manim", "-ql", "scenes/backprop.py"], cwd=copy, env=env)
    assert done.returncode != 0
    _refusal_is_clear(done.stdout + done.stderr)
    assert not list(copy.glob("media/videos/**/*.mp4"))


def test_lecture_frames_sheet_writes_one_titled_grid_per_chapter(built):
    out, env, _ = built
    done = run(
        [str(BIN / "lecture"), "frames", "-q", "l", "--only", "backprop", "--at", "0.5", "1", "--sheet"], env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(out / "frames" / "backprop-sheet.png")]
    picture = Image.open(out / "frames" / "backprop-sheet.png").convert("RGB")
    width, height = frames.CELL
    assert picture.size == (
        frames.LABEL_WIDTH + 2 * (width + frames.GAP) + frames.GAP,
        frames.TITLE_HEIGHT + frames.HEADER_HEIGHT + len(FIGURES) * (height + frames.GAP) + frames.GAP,
    )
    # gates_circuit's row, last column: its last frame, shrunk into the cell.
    row = FIGURES.index("gates_circuit")
    top = frames.TITLE_HEIGHT + frames.HEADER_HEIGHT + row * (height + frames.GAP)
    left = frames.LABEL_WIDTH + width + frames.GAP
    cell = np.asarray(picture.crop((left, top, left + width, top + height)), dtype=float)
    last = media.frame_at(out / "backprop" / "gates_circuit.mp4").convert("RGB").resize(frames.CELL)
    assert np.abs(cell - np.asarray(last, dtype=float)).mean() < 3
