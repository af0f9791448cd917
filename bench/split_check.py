"""Check that every figure (or the chosen ones), cut in two as `lecture build` cuts it, joins to its whole render.

    .venv/bin/python bench/split_check.py [--only chapter[/figure]] [--at 0.45] [-j 2]

Each figure is rendered at 128×72 px and 4 fps three times: whole, up to a
cut at `--at` of its length (told to stop there, as the build tells a
running render), and from that cut on. The two parts are joined as the
build joins them and every decoded frame is compared with the whole
render's by hash. Prints one line per figure and exits 1 if any differs.
tests/test_segments.py runs the same comparison on two figures in the suite.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import av

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.course import catalogue  # noqa: E402 - after the checkout is on the path
from tools.publish.rendering import render, segments  # noqa: E402
from tools.settings import FROM_SECONDS_ENV, STOP_FILE_ENV  # noqa: E402

TINY = ["-r", "128,72", "--fps", "4"]


def rendered(fig: catalogue.Figure, media: Path, env: dict) -> Path | None:
    command = [
        sys.executable,
        "-m",
        "manim",
        "render",
        "-q",
        "l",
        *TINY,
        "--config_file",
        str(render.one_figure_cfg()),
        "--media_dir",
        str(media),
        "-o",
        fig.id,
        "--progress_bar",
        "none",
        str(catalogue.chapter(fig.chapter).scene_file),
        fig.scene_class,
    ]
    subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    return next(iter(media.glob(f"videos/**/{fig.id}.mp4")), None)


def frame_hashes(path: Path) -> list[str]:
    with av.open(str(path)) as container:
        return [hashlib.sha256(f.to_ndarray(format="rgb24").tobytes()).hexdigest() for f in container.decode(video=0)]


def check(fig: catalogue.Figure, at: float, work: Path) -> str:
    env = {**os.environ, "LECTURE_VOICE": "silent"}
    whole = rendered(fig, work / "whole", env)
    with av.open(str(whole)) as container:
        stream = container.streams.video[0]
        cut = repr(float(stream.duration * stream.time_base) * at)
    (work / "stop").write_text(cut)
    rendered(fig, work / "first", {**env, STOP_FILE_ENV: str(work / "stop")})
    rendered(fig, work / "rest", {**env, FROM_SECONDS_ENV: cut})
    movies = [m for part in ("first", "rest") for m in (work / part).glob("videos/**/partial_movie_files/**/*.mp4")]
    segments.join(sorted(movies, key=lambda movie: movie.name), work / "joined.mp4")
    expected, got = frame_hashes(whole), frame_hashes(work / "joined.mp4")
    differing = sum(a != b for a, b in zip(expected, got)) + abs(len(expected) - len(got))
    return "same" if differing == 0 else f"DIFFERENT: {differing} of {len(expected)} frames"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only")
    parser.add_argument("--at", type=float, default=0.45)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LECTURE_CACHE"] = f"{tmp}/cache"
        figures = catalogue.select(args.only)

        def one(fig):
            verdict = check(fig, args.at, Path(tmp) / fig.id)
            print(f"{fig.chapter}/{fig.id}: {verdict}", flush=True)
            return verdict == "same"

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            same = list(pool.map(one, figures))
    print(f"{sum(same)} of {len(same)} figures join to their whole render frame for frame")
    sys.exit(0 if all(same) else 1)


if __name__ == "__main__":
    main()
