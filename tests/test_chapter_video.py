"""Chapter videos and web-ready files, checked through PyAV: streams, sync,
faststart layout, chapter markers, shifted captions, posters, rebuilds."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import av
import numpy as np
import pytest
from helpers import BIN, BUILD, FIGURE_B, FIGURE_C, ROOT, cut_clip, run, synthetic_clip

from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.publishing import chapter_video, clip, fact_tracks, manifest, media, sound
from tools.publish.publishing.manifest import PublishedFile
from tools.voice import captions

pytestmark = pytest.mark.slow  # real renders

CHINESE = range(0x4E00, 0xA000)


def _chinese(text: str) -> bool:
    return any(ord(ch) in CHINESE for ch in text)


def _streams(path: Path) -> tuple[int, int]:
    with av.open(str(path)) as container:
        return len(container.streams.video), len(container.streams.audio)


def _web_ready(path: Path) -> media.Probe:
    info = media.probe(path)
    assert (info.video_codec, info.audio_codec) == ("h264", "aac"), path
    assert _streams(path) == (1, 1), path
    assert abs(info.video_seconds - info.audio_seconds) <= 0.1, path
    assert media.moov_before_mdat(path), path
    return info


def _loudness(path: Path, start: float, seconds: float, window: float = 0.1) -> np.ndarray:
    """RMS of the decoded sound in `window`-second steps."""
    samples = sound.decoded(path)[0]
    a, n = round(start * sound.AUDIO_RATE), round(window * sound.AUDIO_RATE)
    part = samples[a : a + round(seconds * sound.AUDIO_RATE)]
    return np.sqrt(np.mean(part[: len(part) // n * n].reshape(-1, n) ** 2, axis=1))


# -- lecture build, the whole path, on backprop ---------------------------------


def test_lecture_build_joins_the_complete_chapter(backprop_build):
    out = backprop_build.out
    chapter = catalogue.chapter("backprop")
    man = manifest.load(out)
    video = man.chapter_videos["backprop"]
    mp4 = out / "backprop.mp4"
    info = _web_ready(mp4)
    clips = [man.figures[fig.id].duration for fig in chapter.figures]
    assert info.video_seconds == pytest.approx(sum(clips), abs=0.1)
    assert [m[2] for m in media.chapter_marks(mp4)] == [fig.title for fig in chapter.figures]
    assert video.files["mp4"].path == "backprop.mp4"
    assert video.figures == [f.id for f in chapter.figures]
    assert f"chapter backprop: {len(chapter.figures)} clip" in backprop_build.stdout
    # A chapter that is not fully rendered gets no video, and the build says why.
    assert "chapter optimizer: no chapter video, 0 of" in backprop_build.stdout
    assert not (out / "optimizer.mp4").exists()
    assert video.copied, "clips of one quality must join without re-encoding the video"
    for name in ("backprop.vtt", "backprop.srt", "backprop.chapters.vtt"):
        assert (out / name).exists()


def test_every_published_video_is_web_ready(backprop_build):
    videos = sorted(backprop_build.out.rglob("*.mp4"))
    assert {p.name for p in videos} >= {"gates_circuit.mp4", "backprop.mp4"}
    for path in videos:
        _web_ready(path)


def test_poster_is_a_frame_that_shows_the_figure(backprop_build):
    folder = backprop_build.out / "backprop"
    from PIL import Image

    poster, thumb = Image.open(folder / "gates_circuit.png"), Image.open(folder / "gates_circuit.webp")
    first = media.frame_at(folder / "gates_circuit.mp4", 0.0)
    assert poster.size == (854, 480)
    assert thumb.size == (clip.THUMBNAIL_WIDTH, 270)
    assert media._ink(first) < 0.01 < media._ink(poster)  # the opening frame is empty, the poster is not
    assert media._ink(thumb) > 0.5 * media._ink(poster)


def test_manifest_keeps_the_facts_lecture_facts_prints(backprop_build):
    done = run([str(BIN / "lecture"), "facts", "--json"])
    table = json.loads(done.stdout)
    assert manifest.load(backprop_build.out).figures["gates_circuit"].facts == table["gates_circuit"]


# -- joining three clips of different lengths -----------------------------------


def test_three_clips_join_with_a_marker_each(three_figures):
    out, man = three_figures.out, three_figures.manifest
    ids = ["gates_circuit", FIGURE_B, FIGURE_C]
    lengths = [media.probe(out / "backprop" / f"{i}.mp4").video_seconds for i in ids]
    assert 15 < lengths[1] < 25
    assert lengths[0] == lengths[2]
    mp4 = out / "backprop.mp4"
    info = _web_ready(mp4)
    assert info.video_seconds == pytest.approx(sum(lengths), abs=0.1)
    marks = media.chapter_marks(mp4)
    assert [m[2] for m in marks] == [man.figures[i].title for i in ids]
    starts = [0.0, lengths[0], lengths[0] + lengths[1]]
    assert [m[0] for m in marks] == pytest.approx(starts, abs=0.01)
    assert [m[1] for m in marks] == pytest.approx([*starts[1:], sum(lengths)], abs=0.01)
    assert man.chapter_videos["backprop"].copied is True
    assert any("3 clips joined" in line and "video copied" in line for line in three_figures.lines)


def test_chapter_sound_is_each_clip_sound_in_its_place(three_figures):
    out = three_figures.out
    clip = out / "backprop" / "gates_circuit.mp4"
    seconds = media.probe(clip).video_seconds
    third = three_figures.manifest.chapter_videos["backprop"].marks[2]["start"]
    alone = _loudness(clip, 0.0, seconds)
    placed = _loudness(out / "backprop.mp4", third, seconds)
    assert alone.max() > 0.05  # there is narration to compare
    assert np.abs(placed[: len(alone)] - alone[: len(placed)]).max() < 0.02


def test_chapter_captions_are_shifted_by_the_clips_before(three_figures):
    out = three_figures.out
    marks = three_figures.manifest.chapter_videos["backprop"].marks
    merged = captions.parse_srt((out / "backprop.srt").read_text(encoding="utf-8"))
    per_clip = [
        captions.parse_srt((out / "backprop" / f"{i}.srt").read_text(encoding="utf-8"))
        for i in ("gates_circuit", FIGURE_B, FIGURE_C)
    ]
    assert len(merged) == sum(len(lines) for lines in per_clip)
    third = [c for c in merged if c.text.startswith("〔三〕")]
    assert len(third) == len(per_clip[2])
    before = marks[0]["end"] - marks[0]["start"] + marks[1]["end"] - marks[1]["start"]
    assert min(c.start for c in third) >= before
    for got, own in zip(third, per_clip[2]):
        assert (got.start, got.end) == pytest.approx((own.start + before, own.end + before), abs=0.002)
    assert [c.text for c in merged] == [c.text for lines in per_clip for c in lines]
    vtt = (out / "backprop.vtt").read_text(encoding="utf-8")
    assert vtt.startswith("WEBVTT")
    assert captions.to_vtt(merged) == vtt
    chapters_vtt = (out / "backprop.chapters.vtt").read_text(encoding="utf-8")
    assert chapters_vtt == captions.to_vtt([captions.Caption(m["start"], m["end"], m["title"]) for m in marks])


def test_clips_that_cannot_share_a_stream_are_re_encoded(three_figures, tmp_path):
    """A clip whose h264 parameters differ (here: Main profile, another
    encoder) cannot be copied next to manim's; the join re-encodes."""
    odd = tmp_path / "odd.mp4"
    synthetic_clip(
        odd, np.zeros(48000 * 3, np.float32), 45, tmp_path / "odd", size=(854, 480), options={"profile": "main"}
    )
    short = tmp_path / "short.mp4"
    cut_clip(three_figures.out / "backprop" / "gates_circuit.mp4", short, 6.0, tmp_path / "cut")
    joined = media.concat([short, odd], tmp_path / "joined.mp4", ["短", "异"])
    assert joined.copied is False
    info = _web_ready(tmp_path / "joined.mp4")
    expected = media.probe(short).video_seconds + 3.0
    assert info.video_seconds == pytest.approx(expected, abs=0.1)
    assert (info.width, info.height) == (854, 480)
    assert [m[2] for m in media.chapter_marks(tmp_path / "joined.mp4")] == ["短", "异"]


# -- when a chapter video is (re)made ---------------------------------------------


@pytest.fixture
def copied(three_figures, tmp_path):
    """A private copy of the three-figure renders and its manifest."""
    out = tmp_path / "480p15"
    shutil.copytree(three_figures.out, out, ignore=shutil.ignore_patterns("site"))
    return out, manifest.load(out)


def test_a_chapter_video_is_joined_again_only_when_a_clip_changed(copied):
    out, man = copied
    before = (out / "backprop.mp4").stat().st_mtime_ns
    progress: list[str] = []
    chapter_video.build_all(man, out, progress.append)
    assert progress[0] == "  chapter backprop: unchanged"
    assert (out / "backprop.mp4").stat().st_mtime_ns == before
    # FIGURE_B is re-rendered with one caption line fewer.
    srt = out / "backprop" / f"{FIGURE_B}.srt"
    lines = captions.parse_srt(srt.read_text(encoding="utf-8"))
    srt.write_text(captions.to_srt(lines[:-1]), encoding="utf-8")
    man.figures[FIGURE_B].files["srt"] = PublishedFile(man.figures[FIGURE_B].files["srt"].path, file_sha256(srt))
    chapter_video.build_all(man, out, progress.append)
    assert any("chapter backprop: 3 clips joined" in line for line in progress[1:])
    merged = captions.parse_srt((out / "backprop.srt").read_text(encoding="utf-8"))
    assert lines[-1].text not in [c.text for c in merged]


def test_a_track_every_clip_has_is_shifted_into_the_chapter_video(copied):
    """A descriptions track (each figure's <figure>.descriptions.vtt, an empty one included) becomes the chapter
    video's, each line moved to where its clip starts; adding it joins the chapter again."""
    out, man = copied
    ids = ["gates_circuit", FIGURE_B, FIGURE_C]
    for n, fig_id in enumerate(ids):
        track = out / "backprop" / f"{fig_id}.descriptions.vtt"
        said = [] if n == 1 else [captions.Caption(1.0 + n, 2.5 + n, f"屏幕上：第 {n + 1} 段")]
        track.write_text(captions.to_vtt(said), encoding="utf-8")
        man.figures[fig_id].files["descriptions.vtt"] = PublishedFile(f"backprop/{track.name}", file_sha256(track))
    progress: list[str] = []
    chapter_video.build_all(man, out, progress.append)
    assert "chapter backprop: 3 clips joined" in progress[0]
    video = man.chapter_videos["backprop"]
    moved = captions.parse_vtt((out / video.files["descriptions.vtt"].path).read_text(encoding="utf-8"))
    starts = [m["start"] for m in video.marks]
    assert [c.text for c in moved] == ["屏幕上：第 1 段", "屏幕上：第 3 段"]
    assert moved[1].start == pytest.approx(starts[2] + 3.0, abs=0.002)
    assert moved[1].end == pytest.approx(starts[2] + 4.5, abs=0.002)


def test_the_chapters_numbers_places_are_its_figures_moved_to_where_each_starts(backprop_build):
    """Each cue of the chapter's metadata track is a figure's, at the figure's start plus its own time, its payload
    (the figure, the fact, the box, the name) as the figure published it; the descriptions likewise."""
    out = backprop_build.out
    man = manifest.load(out)
    video = man.chapter_videos["backprop"]
    expected, described, drawing = [], [], set()
    for fig_id, mark in zip(video.figures, video.marks):
        files = man.figures[fig_id].files
        figure_cues = fact_tracks.cues_of((out / files["facts.vtt"].path).read_text(encoding="utf-8"), fig_id)
        expected += [(start + mark["start"], end + mark["start"], text) for start, end, text in figure_cues]
        drawing |= {fig_id} if figure_cues else set()
        said = captions.parse_vtt((out / files["descriptions.vtt"].path).read_text(encoding="utf-8"))
        described += [(c.start + mark["start"], c.text) for c in said]
    joined = fact_tracks.cues_of((out / video.files["facts.vtt"].path).read_text(encoding="utf-8"), "chapter")
    assert len(joined) == len(expected) > 50
    for (start, end, text), (want_start, want_end, want_text) in zip(joined, expected):
        assert start == pytest.approx(want_start, abs=0.002)
        assert end == pytest.approx(want_end, abs=0.002)
        assert text == want_text
    assert {json.loads(text)["figure"] for _, _, text in joined} == drawing
    assert len(drawing) >= 5  # most of the chapter's figures draw a number
    chapter_said = captions.parse_vtt((out / video.files["descriptions.vtt"].path).read_text(encoding="utf-8"))
    assert [(pytest.approx(c.start, abs=0.002), c.text) for c in chapter_said] == described


def test_a_file_the_old_chapter_video_had_and_the_new_one_lacks_is_removed(copied):
    """A track not every clip has now is no longer the chapter's: joined again, its old file goes."""
    out, man = copied
    old = man.chapter_videos["backprop"]
    (out / "backprop.extra.vtt").write_text("WEBVTT\n\n", encoding="utf-8")
    man.chapter_videos["backprop"] = replace(
        old, files={**old.files, "extra.vtt": PublishedFile("backprop.extra.vtt", "0")}, key="stale"
    )
    chapter_video.build_all(man, out, [].append)
    assert "extra.vtt" not in man.chapter_videos["backprop"].files
    assert not (out / "backprop.extra.vtt").exists()
    assert (out / "backprop.mp4").exists()


def test_an_incomplete_chapter_has_no_chapter_video(copied):
    out, man = copied
    (out / "backprop" / f"{FIGURE_B}.mp4").unlink()
    progress: list[str] = []
    chapter_video.build_all(man, out, progress.append)
    assert progress[0] == (
        f"  chapter backprop: no chapter video, 2 of 3 figures rendered at 480p15 (missing: {FIGURE_B})"
    )
    assert "backprop" not in man.chapter_videos
    assert not list(out.glob("backprop.*"))


# -- a re-render keeps narration and picture together ---------------------------


def test_a_re_render_with_a_warm_cache_matches_the_first(backprop_build, tmp_path):
    """Rebuilding with the same cache (manim would reuse partial movies)
    gives the same length and caption times as the first render."""
    env = backprop_build.env | {"LECTURE_RENDERS": str(tmp_path / "renders")}
    done = run([*BUILD, "--only", "backprop/gates_circuit"], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gates_circuit: done" in done.stdout, done.stdout
    first, again = backprop_build.out / "backprop", tmp_path / "renders" / "480p15" / "backprop"
    seconds = [media.probe(folder / "gates_circuit.mp4").video_seconds for folder in (first, again)]
    assert seconds[0] == seconds[1]
    srt = [(folder / "gates_circuit.srt").read_text(encoding="utf-8") for folder in (first, again)]
    assert srt[0] == srt[1]


def test_lecture_build_renders_with_the_repository_manim_cfg(backprop_build):
    """The one-figure config overrides write_all only; manim.cfg's
    background colour (and the rest) still applies."""
    import configparser

    parser = configparser.ConfigParser()
    parser.read(ROOT / "manim.cfg", encoding="utf-8")
    colour = parser["CLI"]["background_color"].lstrip("#")
    expected = [int(colour[i : i + 2], 16) for i in (0, 2, 4)]
    corner = media.frame_at(backprop_build.out / "backprop" / "gates_circuit.mp4", 0.0).getpixel((5, 5))
    assert corner == pytest.approx(expected, abs=4)
