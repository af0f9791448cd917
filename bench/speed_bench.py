"""Compare `lecture build` with plain `manim` on one chapter, in one run, and print the ratios.

    .venv/bin/python bench/speed_bench.py [--chapter optimizer] [--edit optimal_step_parabola]
                                          [--long saddle_3d_rotating] [-q l] [-j 2] [--repeat 2]

In scratch cache and render folders (the repository's own are untouched),
after the chapter's narration is synthesized once (untimed, a dry run), so
both sides find the same narration cache:

- plain ``manim -q<q> scenes/<chapter>.py`` (every figure, one process);
- a cold ``lecture build -j <j> --no-layout --only <chapter>`` (the layout lint
  is timed by build_bench.py);
- the same build again, nothing changed;
- a one-figure edit: that figure's manifest entry is dropped, so the build
  renders it again and re-joins the chapter; the ratio is the whole
  build's time over the time plain ``manim`` takes to render that figure
  alone (``manim -q<q> scenes/<chapter>.py <Scene>``);
- the long figure alone, built cold with ``-j 1`` and with ``-j <j>`` (the
  idle cores take over parts of it);
- the cold build again, on a local Dask cluster of as many one-thread
  worker processes as jobs (``--scheduler``), against the local pool.

All but the cluster's are timed in ``--repeat`` rounds, one after another,
each in fresh render folders; each time printed is the best of its rounds,
as this machine's speed drifts by several percent from minute to minute.
Prints a Markdown table and the machine's core count.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from distributed import LocalCluster

ROOT = Path(__file__).resolve().parents[1]
MANIM = [sys.executable, "-m", "manim"]
LECTURE = [sys.executable, "-m", "tools.cli"]  # this checkout's code, whatever the venv has installed
QUALITY_DIRS = {"l": "480p15", "m": "720p30", "h": "1080p60", "k": "2160p60"}


def timed(command: list[str], env: dict) -> float:
    """Seconds the command took; its output is dropped, but for the end of it when it fails."""
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def scene_class(figure: str) -> str:
    return "".join(part.capitalize() for part in figure.split("_"))


def _one_round(args, scene_file: str, tmp: Path, env: dict, n: int) -> tuple[float, ...]:
    """One round of every timing but the cluster's, in fresh render folders:
    plain, plain on the edited figure, cold, unchanged, edited, the long figure with -j 1 and with -j J."""
    env = {**env, "LECTURE_RENDERS": f"{tmp}/renders-{n}"}
    build = [*LECTURE, "build", "-q", args.quality, "-j", args.jobs, "--no-layout", "--only", args.chapter]
    plain = timed([*MANIM, f"-q{args.quality}", "--media_dir", f"{tmp}/media-{n}", scene_file], env)
    plain_edit = timed(
        [*MANIM, f"-q{args.quality}", "--media_dir", f"{tmp}/media-one-{n}", scene_file, scene_class(args.edit)], env
    )
    cold = timed(build, env)
    unchanged = timed(build, env)
    out = tmp / f"renders-{n}" / QUALITY_DIRS[args.quality]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["figures"][args.edit]
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    edited = timed(build, env)
    alone = [
        timed(
            [*LECTURE, "build", "-q", args.quality, "-j", jobs, "--no-layout", "--only", f"{args.chapter}/{args.long}"],
            {**env, "LECTURE_RENDERS": f"{tmp}/alone-{jobs}-{n}"},
        )
        for jobs in ("1", args.jobs)
    ]
    return plain, plain_edit, cold, unchanged, edited, *alone


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", default="optimizer")
    parser.add_argument("--edit", default="optimal_step_parabola", help="the figure the one-figure edit renders")
    parser.add_argument("--long", default="saddle_3d_rotating", help="the figure timed alone with -j 1 and -j J")
    parser.add_argument("-q", "--quality", default="l")
    parser.add_argument("-j", "--jobs", default="2")
    parser.add_argument("--voice", default="espeak")
    parser.add_argument("--repeat", type=int, default=2, help="rounds; each time is the best of its rounds")
    args = parser.parse_args()
    scene_file = f"scenes/{args.chapter}.py"
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "LECTURE_CACHE": f"{tmp}/cache",
            "LECTURE_RENDERS": f"{tmp}/renders",
            "LECTURE_VOICE": args.voice,
        }
        subprocess.run(
            [
                *MANIM,
                "-ql",
                "--dry_run",
                "--fps",
                "1",
                "--progress_bar",
                "none",
                "--media_dir",
                f"{tmp}/dry",
                scene_file,
            ],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        runs = [_one_round(args, scene_file, Path(tmp), env, n) for n in range(args.repeat)]
        plain, plain_edit, cold, unchanged, edited, alone_1, alone_j = (min(times) for times in zip(*runs))
        build = [*LECTURE, "build", "-q", args.quality, "-j", args.jobs, "--no-layout", "--only", args.chapter]
        os.environ["LECTURE_CACHE"] = f"{tmp}/worker-cache"  # the workers' own (they inherit this environment)
        with LocalCluster(
            n_workers=int(args.jobs), threads_per_worker=1, processes=True, dashboard_address=None
        ) as local:
            remote_env = {**env, "LECTURE_RENDERS": f"{tmp}/renders-cluster"}
            on_cluster = timed([*build, "--scheduler", local.scheduler_address], remote_env)
    rows = [
        (f"cold {args.chapter} chapter, `-j {args.jobs}`", f"{cold:.1f} s", f"{plain:.1f} s", f"{plain / cold:.2f}×"),
        ("nothing changed", f"{unchanged:.1f} s", f"{plain:.1f} s", f"{plain / unchanged:.0f}×"),
        (
            f"one figure edited ({args.edit}): whole build / plain manim on that figure",
            f"{edited:.1f} s",
            f"{plain_edit:.1f} s",
            f"{edited / plain_edit:.2f}",
        ),
        (
            f"{args.long} alone, `-j {args.jobs}` vs `-j 1`",
            f"{alone_j:.1f} s",
            f"{alone_1:.1f} s (`-j 1`)",
            f"{alone_1 / alone_j:.2f}×",
        ),
        (
            f"cold chapter on a {args.jobs}-worker LocalCluster vs the local pool",
            f"{on_cluster:.1f} s",
            f"{cold:.1f} s local pool",
            f"{cold / on_cluster:.2f}×",
        ),
    ]
    print(f"{os.cpu_count()} cores, -q {args.quality}, voice {args.voice}, best of {args.repeat}")
    print(f"| work | `lecture build` | plain `manim -q{args.quality} {scene_file}` | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
