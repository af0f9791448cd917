"""Time `lecture preview`'s loop: save → every cue's still on the page, save → a playable draft, against plain
`manim -ql` on the same figure in the same run; and a cold `lecture build -q l -j 2` with the layout lint
against plain manim on the chapter.

    .venv/bin/python bench/preview_bench.py [--figures optimizer/optimal_step_parabola ...] [--repeat 2]
                                            [--no-chapter]

Everything runs in a scratch copy of the project with scratch cache and render folders and the silent
voice (the repository's own folders are untouched). Per figure:

- ``lecture preview`` is started and left to draw the stills and render the draft once (untimed);
- ``--repeat`` rounds, each: plain ``manim -ql scenes/<chapter>.py <Scene>`` timed (the preview idle), then
  a one-line change to the figure's scene (a dot of a new size in the top right corner, so every cue's
  picture changes) saved, and the page's state (``/state.json``) read on each server-sent event, as the page
  does: the time until it shows the new stills, and until the draft is playable. Rounds interleave, so a
  drift in the machine's speed falls on both sides; the medians are printed;
- one cue's words are changed, and the stills the run redrew are listed (none should be: the screen at
  every cue is the same).

Then (unless ``--no-chapter``), ``--repeat`` rounds of plain ``manim -ql scenes/<chapter>.py`` and a cold
``lecture build -q l -j 2 --only <chapter>`` with the layout lint, as a user runs it; the medians are printed.
``--figures`` with no figure times the chapter alone. Prints Markdown tables and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ["optimizer/optimal_step_parabola", "pipeline/pipeline_bidirectional", "optimizer/saddle_3d_rotating"]
SKIP = (".git", ".venv", ".cache", "renders", "media", "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache")


def camel(figure_id: str) -> str:
    return "".join(part.capitalize() for part in figure_id.split("_"))


def timed(command: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def plain_manim(project: Path, env: dict, chapter: str, scene: str | None, media: Path) -> float:
    shutil.rmtree(media, ignore_errors=True)
    command = [sys.executable, "-m", "manim", "-ql", "--media_dir", str(media), f"scenes/{chapter}.py"]
    return timed(command + ([scene] if scene else []), project, env)


class Preview:
    def __init__(self, project: Path, env: dict, target: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.cli", "preview", target, "--port", "0"],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.url = re.search(r"http://\S+/", self.process.stdout.readline()).group(0)
        self.events = urllib.request.urlopen(self.url + "events", timeout=600)  # read until the preview stops

    def state(self) -> dict:
        with urllib.request.urlopen(self.url + "state.json") as response:
            return json.load(response)

    def until(self, holds) -> tuple[float, dict]:
        """Wait for the state to hold, as the page does: fetch it on each server-sent event (no polling, which
        would take CPU from the run being timed); the time it first held and the state."""
        state = self.state()
        while not holds(state):
            if state["status"] == "failed":
                raise SystemExit(f"the preview shows a failed check:\n{state['error']}")
            line = self.events.readline()
            if not line:
                raise SystemExit(f"the preview's events ended: {state}")
            if line.startswith(b"data:"):
                state = self.state()
        return time.perf_counter(), state

    def save(self, path: Path, text: str) -> tuple[float, float, dict]:
        """Write `text` to `path`; seconds until the stills are up, until the draft plays, and the state."""
        saves = self.state()["saves"]
        began = time.perf_counter()
        path.write_text(text, encoding="utf-8")
        stills_at, state = self.until(lambda s: s["saves"] > saves and s["status"] == "ok")
        draft_at, _ = self.until(lambda s: s["saves"] > saves and s["draft"].get("status") == "ready")
        return stills_at - began, draft_at - began, state

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGINT)
        self.process.communicate(timeout=60)


def scene_change(source: str, scene: str, n: int) -> str:
    """The scene file with one line added to the figure's construct: a dot in the top right corner."""
    at = re.search(rf"class {scene}\b.*?def construct\(self\)[^\n]*\n", source, re.S)
    line = (
        f"        self.add(self.fix_in_frame(__import__('manim').Dot([6.4, 3.3, 0], radius={0.02 + 0.002 * n:.3f})))\n"
    )
    body = re.match(r"(\s*\"\"\".*?\"\"\"\n)?", source[at.end() :], re.S).end()
    return source[: at.end() + body] + line + source[at.end() + body :]


def bench_figure(project: Path, env: dict, target: str, repeat: int, tmp: Path) -> dict:
    chapter, figure = target.split("/")
    scene = camel(figure)
    scene_file = project / "scenes" / f"{chapter}.py"
    original = scene_file.read_text(encoding="utf-8")
    session = Preview(project, env, target)
    manim, stills, drafts, redrawn, cpu = [], [], [], [], []
    try:
        session.until(lambda s: s["status"] == "ok" and s["draft"].get("status") == "ready")
        for n in range(repeat):  # each round: plain manim (the preview idle), then one save
            manim.append(plain_manim(project, env, chapter, scene, tmp / "media"))
            to_stills, to_draft, state = session.save(scene_file, scene_change(original, scene, n))
            stills.append(to_stills)
            drafts.append(to_draft)
            redrawn.append(len(state["redrawn"]))
            cpu.append(state["cpu"])
        narration = project / "narration" / f"{chapter}.toml"
        words = narration.read_text(encoding="utf-8")
        first_cue = next(c for c in session.state()["looks"])
        edited = words.replace(first_cue["text"][:6], first_cue["text"][:6] + "，", 1)
        _, _, after = session.save(narration, edited)
        narration.write_text(words, encoding="utf-8")
    finally:
        session.stop()
        scene_file.write_text(original, encoding="utf-8")
    return {
        "figure": target,
        "cues": len(after["looks"]) - 1,
        "manim": statistics.median(manim),
        "manim_all": manim,
        "stills": statistics.median(stills),
        "stills_all": stills,
        "stills_cpu": statistics.median(cpu),
        "redrawn": redrawn,
        "draft": statistics.median(drafts),
        "draft_all": drafts,
        "narration_redrawn": after["redrawn"],
        "narration_cue": first_cue["id"],
    }


def bench_chapter(project: Path, env: dict, chapter: str, tmp: Path, repeat: int) -> tuple[list[float], list[float]]:
    """`repeat` rounds of plain manim on the chapter, then a cold build of it (new render and cache folders)."""
    builds, manims = [], []
    for round_ in range(repeat):
        manims.append(plain_manim(project, env, chapter, None, tmp / "media"))
        cold = {
            **env,
            "LECTURE_RENDERS": str(tmp / f"cold-renders-{round_}"),
            "LECTURE_CACHE": str(tmp / f"cold-cache-{round_}"),
        }
        command = [sys.executable, "-m", "tools.cli", "build", "-q", "l", "-j", "2", "--only", chapter]
        builds.append(timed(command, project, cold))
    return builds, manims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--figures", nargs="*", default=FIGURES)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-chapter", action="store_true")
    parser.add_argument("--chapter", default="optimizer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="preview-bench-") as scratch:
        tmp = Path(scratch)
        project = tmp / "project"
        shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(*SKIP))
        env = {
            **os.environ,
            "LECTURE_RENDERS": str(tmp / "renders"),
            "LECTURE_CACHE": str(tmp / "cache"),
            "LECTURE_VOICE": "silent",
        }
        print(f"load average at the start: {os.getloadavg()}, cores: {os.cpu_count()}", flush=True)
        rows = []
        for target in args.figures:
            row = bench_figure(project, env, target, args.repeat, tmp)
            print(json.dumps(row), flush=True)
            rows.append(row)
        if rows:
            print(
                "\n| figure | cues | save → every still (median; the run's CPU) | plain `manim -ql` (median) "
                "| stills ÷ manim | save → playable draft (median) | draft ÷ manim | narration edit: stills redrawn |"
            )
            print("|---|---:|---:|---:|---:|---:|---:|---|")
        for r in rows:
            print(
                f"| {r['figure']} | {r['cues']} | {r['stills']:.2f} s ({r['stills_cpu']:.2f} s) | {r['manim']:.1f} s "
                f"| {r['stills'] / r['manim']:.3f} | {r['draft']:.1f} s | {r['draft'] / r['manim']:.2f} "
                f"| {len(r['narration_redrawn'])} of {r['cues'] + 1} |"
            )
        if not args.no_chapter:
            builds, manims = bench_chapter(project, env, args.chapter, tmp, args.repeat)
            build, manim_seconds = statistics.median(builds), statistics.median(manims)
            print(json.dumps({"chapter": args.chapter, "build_all": builds, "manim_all": manims}))
            print(
                f"\n| cold `lecture build -q l -j 2 --only {args.chapter}` (lint included; median) "
                "| plain manim | ratio |"
            )
            print("|---|---|---|")
            print(f"| {build:.1f} s | {manim_seconds:.1f} s | {manim_seconds / build:.2f}× |")
        print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
