"""Shared fixtures: the repository root, isolated build folders, and one
real backprop build (with a three-figure variant) for the chapter-video and
site tests."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import av
import pytest

from tools.publish import build, media, site
from tools.voice import captions

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Point renders and caches at a temporary folder for this test."""
    monkeypatch.setenv("LECTURE_RENDERS", str(tmp_path / "renders"))
    monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "cache"))
    return tmp_path


def run(args: list[str], cwd: Path = ROOT, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a command of the project's environment with stdin closed."""
    return subprocess.run(args, cwd=cwd, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def dry_run(chapter: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`manim -ql scenes/<chapter>.py` as typed, plus a dry run at one frame a
    second: every figure is constructed and played, no file is written."""
    return run([str(BIN / "manim"), "-ql", "--dry_run", "--fps", "1", "--media_dir", str(tmp_path / "media"),
                f"scenes/{chapter}.py"],
               env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"})


def build_figure(only: str, tmp_path: Path, voice: str = "silent") -> subprocess.CompletedProcess:
    """`lecture build -q l --only <only>` into tmp_path/renders/480p15."""
    env = {"LECTURE_RENDERS": str(tmp_path / "renders"), "LECTURE_CACHE": str(tmp_path / "cache"),
           "LECTURE_VOICE": voice}
    return run([str(BIN / "lecture"), "build", "-q", "l", "--only", only], env=env)


@dataclass(frozen=True)
class Build:
    out: Path  # renders/480p15
    env: dict
    stdout: str


@pytest.fixture(scope="session")
def backprop_build(tmp_path_factory) -> Build:
    """One real `lecture build -q l --only backprop` with the espeak voice:
    clips, chapter video, embed kit; shared by the chapter-video and site tests."""
    tmp = tmp_path_factory.mktemp("backprop")
    env = {"LECTURE_RENDERS": str(tmp / "renders"), "LECTURE_CACHE": str(tmp / "cache"), "LECTURE_VOICE": "espeak"}
    done = run([str(BIN / "lecture"), "build", "-q", "l", "-j", "2", "--only", "backprop"], env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return Build(tmp / "renders" / "480p15", env, done.stdout)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cut_clip(clip: Path, dst: Path, seconds: float, work: Path) -> None:
    """A shorter clip with the same h264 parameters: the video packets before
    the first keyframe at or after `seconds`, its sound muxed as publish does."""
    work.mkdir(parents=True, exist_ok=True)
    video, wav = work / "video.mp4", work / "sound.wav"
    with av.open(str(clip)) as source, av.open(str(video), "w") as target:
        v_in = source.streams.video[0]
        v_out = target.add_stream_from_template(v_in)
        for packet in source.demux(v_in):
            if packet.dts is None or (packet.is_keyframe and packet.pts * packet.time_base >= seconds):
                break
            packet.stream = v_out
            target.mux(packet)
    with av.open(str(clip)) as source, av.open(str(wav), "w") as target:
        a_out = target.add_stream("pcm_s16le", rate=48000, layout="mono")
        for frame in source.decode(audio=0):
            frame.pts = None
            for packet in a_out.encode(frame):
                target.mux(packet)
        for packet in a_out.encode(None):
            target.mux(packet)
    media.mux_web(video, wav, dst)


@dataclass(frozen=True)
class ThreeFigures:
    out: Path  # renders/480p15 with a three-figure backprop chapter
    manifest: dict
    lines: list[str]  # build_chapters' progress output
    kit: object  # site.Kit


FIGURE_B, FIGURE_C = "gates_circuit_b", "gates_circuit_c"


@pytest.fixture(scope="session")
def three_figures(backprop_build, tmp_path_factory) -> ThreeFigures:
    """The real build, its backprop chapter made three figures long from the
    one real clip: the clip, a 20-second cut of it, the clip again; the two
    extra figures' captions are marked 〔二〕 and 〔三〕. Joined with
    build.build_chapters, kit written with site.write_kit."""
    tmp = tmp_path_factory.mktemp("three")
    out = tmp / "480p15"
    shutil.copytree(backprop_build.out, out, ignore=shutil.ignore_patterns("site"))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    first = manifest["figures"]["gates_circuit"]
    clip = out / first["files"]["mp4"]["path"]
    lines = captions.parse_srt((out / first["files"]["srt"]["path"]).read_text(encoding="utf-8"))
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
        files = {ext: {"path": f"backprop/{fig_id}.{ext}", "sha256": _sha(folder / f"{fig_id}.{ext}")}
                 for ext in ("mp4", "srt", "vtt", "png", "webp")}
        manifest["figures"][fig_id] = first | {"figure": fig_id, "title": title, "duration": round(seconds, 3),
                                               "files": files}
    for chapter in manifest["chapters"]:
        if chapter["id"] == "backprop":
            chapter["figures"] = ["gates_circuit", FIGURE_B, FIGURE_C]
    progress: list[str] = []
    build.build_chapters(manifest, out, progress.append)
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
    return ThreeFigures(out, manifest, progress, site.write_kit(out))
