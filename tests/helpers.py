"""Helpers the tests share: run the project's commands, cut a clip, the figure ids of the three-figure
chapter, a builder refused on a broken input. Fixtures live in conftest.py; this module is imported
like any other."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import av
import pytest
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

from tools.course import catalogue
from tools.course.facts import Check, FactError
from tools.files import file_sha256
from tools.publish.publishing import media
from tools.publish.publishing.manifest import Manifest
from tools.publish.rendering import render
from tools.voice.neural.engine import MODEL_FILES

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
FIGURE_B, FIGURE_C = "gates_circuit_b", "gates_circuit_c"

# numpy's dispatch groups this CPU runs beyond its baseline; NPY_DISABLE_CPU_FEATURES takes these names (numpy
# 2.4 ignores a name it does not dispatch, such as AVX2, in silence).
DISPATCHED = [group for group in __cpu_dispatch__ if __cpu_features__.get(group)]
# A process that computes as an x86-64 without AVX2 or FMA would: numpy on its baseline kernels, OpenBLAS on
# Sandybridge's (AVX, no FMA).
OLDER_X86 = {"NPY_DISABLE_CPU_FEATURES": " ".join(DISPATCHED), "OPENBLAS_CORETYPE": "Sandybridge"}
# What a process under test runs on: numpy's dispatch groups and OpenBLAS's core, read back so that a setting
# numpy or OpenBLAS ignored cannot pass for one they followed.
SIMD_PROBE = """
import ctypes, glob, json, os, numpy
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs", "libscipy_openblas*.so"))
corename = ctypes.CDLL(libs[0]).scipy_openblas_get_corename64_
corename.restype = ctypes.c_char_p
print(json.dumps({"dispatch": [g for g in __cpu_dispatch__ if __cpu_features__.get(g)],
                  "core": corename().decode()}))
"""


def in_play_order(chapter_id: str, figure_ids) -> list[str]:
    """Those of `figure_ids` the chapter has, in the order it plays them: equal to `figure_ids` when it plays
    them in that order, whatever figures are added before, between or after them."""
    return [fig.id for fig in catalogue.chapter(chapter_id).figures if fig.id in figure_ids]


def copy_project(dst: Path) -> Path:
    """A scratch copy of the project: its sources, narration and tests, not its environment, caches or renders.
    Commands run in it as ``python -m tools.cli`` with ``cwd=dst`` import its code, not this checkout's."""
    skip = shutil.ignore_patterns(
        ".git",
        ".venv",
        ".voice",  # the neural voice (200 MB): a copy speaks it only when a test sets one up (fake_neural_voice)
        ".cache",
        "renders",
        "media",
        "__pycache__",
        "*.egg-info",
        ".pytest_cache",
        ".ruff_cache",
    )
    shutil.copytree(ROOT, dst, ignore=skip)
    return dst


# The fake neural voice's worker: it speaks the real worker's protocol (tools/voice/neural/worker.py): a tone for
# each request, every phone (and each phrase's closing eos) 0.02 s long, after FAKE_VOICE_DELAY seconds; it appends
# its process id to the file FAKE_VOICE_PIDS names, if any. Standard library only.
FAKE_WORKER = """
import json, math, os, struct, sys, time, wave
if os.environ.get("FAKE_VOICE_PIDS"):
    with open(os.environ["FAKE_VOICE_PIDS"], "a") as pids:
        pids.write(f"{os.getpid()}\\n")
print(json.dumps({"ready": "fake"}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    time.sleep(float(os.environ.get("FAKE_VOICE_DELAY", "0")))
    lengths = [[0.02] * (len(phones) + 1) for phones in request["phrases"]]
    seconds = sum(map(sum, lengths)) + sum(request["pauses"])
    samples = [int(8000 * math.sin(i * 0.07)) for i in range(int(24000 * seconds))]
    with wave.open(request["wav"], "wb") as out:
        out.setnchannels(1), out.setsampwidth(2), out.setframerate(24000)
        out.writeframes(struct.pack(f"<{len(samples)}h", *samples))
    print(json.dumps({"seconds": len(samples) / 24000, "phones": lengths}), flush=True)
"""


def fake_neural_voice(project: Path) -> Path:
    """Set up a fake neural voice in a copy of the project (copy_project): its runtime (this Python), model files of
    a few bytes whose sha256 the copy's models.sha256 pins, and FAKE_WORKER as its worker. The copy's voice then
    counts as set up (`auto` picks it) and speaks a tone; returns its models folder."""
    home = project / ".voice"
    (home / "venv" / "bin").mkdir(parents=True)
    (home / "venv" / "bin" / "python").symlink_to(sys.executable)
    models = home / "models"
    models.mkdir()
    neural = project / "tools" / "voice" / "neural"
    pins = (neural / "models.sha256").read_text(encoding="utf-8").splitlines()
    for name in MODEL_FILES:
        (models / name).write_bytes(f"fake {name}".encode())
        pins = [line for line in pins if not line.endswith(f"  {name}")]
        pins.append(f"{file_sha256(models / name)}  {name}")
    (neural / "models.sha256").write_text("\n".join(pins) + "\n", encoding="utf-8")
    (neural / "worker.py").write_text(FAKE_WORKER, encoding="utf-8")
    return models


def run(args: list[str], cwd: Path = ROOT, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a command of the project's environment with stdin closed."""
    return subprocess.run(
        args,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def build_env(tmp_path: Path, voice: str = "silent") -> dict[str, str]:
    """Renders and caches under tmp_path, with the given voice."""
    return {
        "LECTURE_RENDERS": str(tmp_path / "renders"),
        "LECTURE_CACHE": str(tmp_path / "cache"),
        "LECTURE_VOICE": voice,
    }


# `lecture build` at 480p15 as the tests run it: without the layout lint, which the course-wide check runs once
# for every figure (test_facts) and test_layout runs in a build; each build here has a cache of its own, where
# the lint would run its figures again.
BUILD = [str(BIN / "lecture"), "build", "-q", "l", "--no-layout"]


def build_figure(only: str, tmp_path: Path, voice: str = "silent") -> subprocess.CompletedProcess:
    """`lecture build -q l --no-layout --only <only>` into tmp_path/renders/480p15."""
    return run([*BUILD, "--only", only], env=build_env(tmp_path, voice))


@dataclass(frozen=True)
class Build:
    out: Path  # renders/480p15
    env: dict
    stdout: str


@dataclass(frozen=True)
class ThreeFigures:
    out: Path  # renders/480p15 with a three-figure backprop chapter
    manifest: Manifest
    lines: list[str]  # chapter_video.build_all's progress output
    kit: object  # site.Kit


def synthetic_clip(
    dst: Path,
    samples,
    frames: int,
    work: Path,
    size: tuple[int, int] = (64, 36),
    fps: int = 15,
    options: dict | None = None,
) -> None:
    """A clip of `frames` plain video frames (slowly changing colour) with `samples` (floats in -1..1 at
    48 kHz) as its sound, muxed as publish does."""
    import numpy as np

    work.mkdir(parents=True, exist_ok=True)
    video, wav = work / f"{dst.stem}.video.mp4", work / f"{dst.stem}.wav"
    width, height = size
    with av.open(str(video), "w") as target:
        stream = target.add_stream("libx264", rate=fps, options=options or {})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((height, width, 3), (40, 60 + i, 90), np.uint8), format="rgb24")
            frame.pts = i
            for packet in stream.encode(frame):
                target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    with av.open(str(wav), "w") as target:
        stream = target.add_stream("pcm_s16le", rate=48000, layout="mono")
        frame = av.AudioFrame.from_ndarray((samples * 32767).astype(np.int16)[None, :], format="s16", layout="mono")
        frame.rate = 48000
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            target.mux(packet)
    media.mux_web(video, wav, dst)


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


def refused(build, figure_id: str, *args, **inputs) -> FactError:
    """A figure's builder run on broken inputs (`args` after its Check, `inputs` by name): the FactError it
    raises, checked to name the figure. The one tamper-test helper: every test file uses it."""
    with pytest.raises(FactError) as err:
        build(Check(figure_id), *args, **inputs)
    assert err.value.figure == figure_id
    return err.value


@contextmanager
def tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A small tmpfs mounted on `folder` for the block (a full disk, a read-only folder); the test is
    skipped where mounting needs root and the tests do not have it."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs ({options}) here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def figure_render_args(figure_id: str, media: Path, size: list[str], flags: list[str] = ()) -> list[str]:
    """manim's arguments (after `manim`) for one figure as `lecture build` runs it, at `size` (-r and --fps)."""
    fig = catalogue.figure(figure_id)
    return [
        "render",
        "-q",
        "l",
        *size,
        "--config_file",
        str(render.one_figure_cfg()),
        "--media_dir",
        str(media),
        "-o",
        fig.id,
        "--progress_bar",
        "none",
        *flags,
        str(catalogue.chapter(fig.chapter).scene_file),
        fig.scene_class,
    ]
