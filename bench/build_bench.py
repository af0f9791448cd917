"""Benchmark the build: how long a check (cold, then unchanged), a cold build and an unchanged rebuild take.

    .venv/bin/python bench/build_bench.py [--only backprop/gates_circuit] [-q l] [--voice espeak]

Runs `lecture` in scratch cache and render folders, so the repository's own
caches are untouched. The points to watch: the cold check runs the layout
lint over every figure (animations skipped; target under 2 minutes on 2
cores), an unchanged check and an unchanged rebuild should cost seconds,
whatever a cold render costs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LECTURE = Path(sys.executable).with_name("lecture")


def timed(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([str(LECTURE), *args], env=env, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="backprop/gates_circuit")
    parser.add_argument("-q", "--quality", default="l")
    parser.add_argument("--voice", default="espeak")
    parser.add_argument("-j", "--jobs", default="1")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "LECTURE_CACHE": f"{tmp}/cache",
            "LECTURE_RENDERS": f"{tmp}/renders",
            "LECTURE_VOICE": args.voice,
        }
        build = ["build", "-q", args.quality, "--only", args.only, "-j", args.jobs]
        rows = [
            ("lecture check, cold (lints every figure)", timed(["check"], env)),
            ("lecture check, unchanged", timed(["check"], env)),
            (f"cold build {args.only} -q {args.quality}", timed(build, env)),
            ("unchanged rebuild", timed(build, env)),
        ]
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:7.2f} s")


if __name__ == "__main__":
    main()
