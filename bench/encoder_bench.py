"""Measure libx264 presets on one figure: render time, file size, and PSNR against the reference preset.

    .venv/bin/python bench/encoder_bench.py [--scene OptimalStepParabola] [-q l] [--presets medium veryfast faster]

Renders the scene once per preset with plain ``manim`` (manim.cfg with only
the preset changed, silent voice, scratch folders), one after another so the
times compare, then decodes every frame of each video and compares it with
the first preset's (the reference: libx264's default, ``medium``). The preset
in manim.cfg's ``[video_encoder.options]`` was picked with this: render time
down, file no larger than the reference, PSNR at least 40 dB.
"""

from __future__ import annotations

import argparse
import configparser
import os
import subprocess
import sys
import tempfile
import time
from itertools import zip_longest
from pathlib import Path

import av
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.course import catalogue  # noqa: E402


def cfg_with_preset(preset: str, folder: Path) -> Path:
    """manim.cfg with [video_encoder.options] preset set (``medium`` is libx264's default)."""
    parser = configparser.ConfigParser()
    parser.read(ROOT / "manim.cfg", encoding="utf-8")
    parser["CLI"]["write_all"] = "False"
    parser["video_encoder.options"]["preset"] = preset
    path = folder / f"{preset}.cfg"
    with open(path, "w", encoding="utf-8") as out:
        parser.write(out)
    return path


def render(scene_file: Path, scene: str, quality: str, preset: str, folder: Path, env: dict) -> tuple[float, Path]:
    media = folder / preset
    command = [
        sys.executable,
        "-m",
        "manim",
        "render",
        "-q",
        quality,
        "--config_file",
        str(cfg_with_preset(preset, folder)),
        "--media_dir",
        str(media),
        "--progress_bar",
        "none",
        str(scene_file),
        scene,
    ]
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return seconds, next((media / "videos").rglob(f"{scene}.mp4"))


def psnr(reference: Path, other: Path) -> float:
    """PSNR over all frames (their squared errors pooled), in dB; the two are decoded side by side."""
    total, count = 0.0, 0
    with av.open(str(reference)) as first, av.open(str(other)) as second:
        for a, b in zip_longest(first.decode(video=0), second.decode(video=0)):
            if a is None or b is None:
                raise SystemExit(f"frame counts differ: {reference} vs {other}")
            diff = a.to_ndarray(format="rgb24").astype(np.int32) - b.to_ndarray(format="rgb24")
            total, count = total + float(np.sum(diff * diff)), count + diff.size
    mse = total / count
    return float("inf") if mse == 0 else float(10 * np.log10(255**2 / mse))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scene", default="OptimalStepParabola")
    parser.add_argument("-q", "--quality", default="l")
    parser.add_argument("--presets", nargs="+", default=["medium", "veryfast", "faster"])
    args = parser.parse_args()
    fig = next(f for f in catalogue.figures() if f.scene_class == args.scene)
    scene_file = catalogue.chapter(fig.chapter).scene_file
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "LECTURE_CACHE": f"{tmp}/cache", "LECTURE_VOICE": "silent"}
        results = {
            preset: render(scene_file, args.scene, args.quality, preset, Path(tmp), env) for preset in args.presets
        }
        reference = results[args.presets[0]][1]
        print(f"{args.scene} -q {args.quality}, reference {args.presets[0]}")
        print("| preset | render time | file size | PSNR vs reference |")
        print("|---|---|---|---|")
        for preset, (seconds, video) in results.items():
            quality = "–" if preset == args.presets[0] else f"{psnr(reference, video):.1f} dB"
            print(f"| {preset} | {seconds:.1f} s | {video.stat().st_size / 1000:,.0f} KB | {quality} |")


if __name__ == "__main__":
    main()
