"""The build at its default quality, 1080p60, against plain manim; where a figure's time goes; Dask against the
local pool. Prints the Markdown tables of bench/README.md.

    .venv/bin/python bench/full_hd.py                 # every table, as the README's were taken (about an hour)
    .venv/bin/python bench/full_hd.py --quick         # the same tables, small: one round, -q l where it can
    .venv/bin/python bench/full_hd.py --course        # and the whole course cold at -q h (one to two hours)
    .venv/bin/python bench/full_hd.py --tables figure profile   # some of them

Everything runs in scratch cache and render folders (the repository's own are untouched) with the voice
``--voice`` (default neural), whose cue audio is made once before anything is timed (copied from the
repository's cache when it is there), so every side finds it cached. Each time is given as wall seconds and
as CPU seconds (user + sys of the whole process tree: this process adopts whatever the command leaves behind,
a fork server included, and reaps it). Rounds interleave the sides, the order swapped each round, so a drift
in the machine's speed falls on both; medians are printed.

- ``figure``, ``chapter``: plain ``manim -q<q> scenes/<chapter>.py [<Scene>]`` against a cold
  ``lecture build -q <q> -j 2 --only <chapter>[/<figure>]``, the layout lint included, as a user runs them.
- ``held``: every figure of the course stepped through at 60 fps without drawing (scenes/segments.py),
  counting the frames of its waits that hold one picture; and what a frame costs at 1080p with manim's encoder
  and with the project's (scenes/segments.py: HeldFrameEncoder), in the profiled figure.
- ``profile``: one long figure rendered in this process's child at -q h with every stage timed (CPU seconds
  of the thread that spends them): the scene's own code and drawing, RGBA→YUV, x264, muxing, then publishing;
  with manim's encoder and with the project's.
- ``cluster``: the cold chapter at -q l (and at -q h) on a 2-worker Dask LocalCluster against the local
  pool (``-j 2``); the workers' CPU is read from their processes.
- ``course`` (only with ``--course``): ``lecture build -q h -j 2`` of the whole course, cold, the voice
  cached: wall, CPU, and the video's length over the wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = sys.executable
MANIM = [PY, "-m", "manim"]
LECTURE = [PY, "-m", "tools.cli"]  # this checkout's code, whatever the venv has installed
QUALITY_DIRS = {"l": "480p15", "m": "720p30", "h": "1080p60", "k": "2160p60"}
TABLES = ("figure", "chapter", "held", "profile", "cluster")
ONE_ENCODER = ("--max-inflight-encoders", "1")  # manim's default; manim.cfg sets 2
# The stages of a render the profile times, in CPU seconds of the thread that spends each.
PROFILED = ("scene and drawing", "RGBA→YUV", "drawing thread's RGBA→YUV", "x264 and muxing", "joining the plays")


# -- measuring a command ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    wall: float  # seconds
    cpu: float  # user + sys seconds of the whole process tree

    def __str__(self) -> str:
        return f"{self.wall:.1f} s ({self.cpu:.1f} s CPU)"


def adopt_orphans() -> None:
    """Make this process the one that reaps whatever a command leaves running (a fork server outlives the build
    that started it), so its CPU time is counted too (Linux's PR_SET_CHILD_SUBREAPER)."""
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)


def _reap(known: set[int]) -> None:
    """Wait for the processes a command left behind (this process adopted them) to end, reaping each, so their
    CPU time counts; not for this process's own children from before (a LocalCluster's workers)."""
    import psutil

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        left = [child.pid for child in psutil.Process().children() if child.pid not in known]
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)


def measured(command: list[str], env: dict, output: list[str] | None = None) -> Cost:
    """Run `command` from the repository root; its wall time and the CPU time of it and all it started. Its
    output goes into `output` when given, else is dropped, but for the end of it when it fails."""
    import psutil

    known = {child.pid for child in psutil.Process().children()}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - start
    _reap(known)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    if output is not None:
        output.append(done.stdout)
    return Cost(wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)


def median(costs: list[Cost]) -> Cost:
    return Cost(statistics.median(c.wall for c in costs), statistics.median(c.cpu for c in costs))


def interleaved(sides: dict[str, callable], rounds: int) -> dict[str, Cost]:
    """Each side once per round, the order swapped every round; the medians."""
    names = list(sides)
    costs: dict[str, list[Cost]] = {name: [] for name in names}
    for n in range(rounds):
        for name in names if n % 2 == 0 else names[::-1]:
            costs[name].append(sides[name](n))
            print(f"  round {n + 1}: {name}: {costs[name][-1]}", file=sys.stderr)
    return {name: median(each) for name, each in costs.items()}


def scene_class(figure: str) -> str:
    return "".join(part.capitalize() for part in figure.split("_"))


class Bench:
    """Scratch folders, the environment every command gets, and the tables printed so far."""

    def __init__(self, args, tmp: Path):
        self.args, self.tmp = args, tmp
        self.env = {
            **os.environ,
            "LECTURE_CACHE": str(tmp / "cache"),
            "LECTURE_RENDERS": str(tmp / "renders"),
            "LECTURE_VOICE": args.voice,
        }
        self.runs = 0

    def fresh(self, name: str) -> Path:
        self.runs += 1
        return self.tmp / f"{name}-{self.runs}"

    def plain(self, quality: str, chapter: str, figure: str | None = None, flags: tuple[str, ...] = ()) -> Cost:
        """Plain manim on the chapter, or on one figure of it, with `flags` added."""
        scene = [scene_class(figure)] if figure else []
        media = self.fresh("media")
        command = [*MANIM, f"-q{quality}", *flags, "--progress_bar", "none", "--media_dir", str(media)]
        cost = measured([*command, f"scenes/{chapter}.py", *scene], self.env)
        shutil.rmtree(media, ignore_errors=True)
        return cost

    def build(self, quality: str, only: str, extra: tuple[str, ...] = (), lint: bool = True) -> Cost:
        """A cold build: fresh renders and a fresh cache but for the narration (and the parsed texts, which every
        render of a checkout shares after its first)."""
        renders, cache = self.fresh("renders"), self.fresh("cache")
        cache.mkdir()
        for kept in ("narration",):
            if (self.tmp / "cache" / kept).exists():
                shutil.copytree(self.tmp / "cache" / kept, cache / kept, copy_function=os.link)
        env = {**self.env, "LECTURE_RENDERS": str(renders), "LECTURE_CACHE": str(cache)}
        command = [*LECTURE, "build", "-q", quality, "-j", "2", *([] if lint else ["--no-layout"]), "--only", only]
        cost = measured([*command, *extra], env)
        self.last_renders = renders / QUALITY_DIRS[quality]
        return cost

    def narrate(self, chapters: list[str]) -> None:
        """Make the cue audio of `chapters` once, untimed: linked from the repository's cache where it has it,
        the rest made by a dry run of each chapter (which draws and writes nothing)."""
        ours, theirs = self.tmp / "cache" / "narration", ROOT / ".cache" / "narration"
        if theirs.is_dir() and not ours.exists():
            shutil.copytree(theirs, ours, copy_function=os.link)
        for chapter in chapters:
            dry = [*MANIM, "-ql", "--dry_run", "--fps", "1", "--progress_bar", "none"]
            measured([*dry, "--media_dir", str(self.fresh("dry")), f"scenes/{chapter}.py"], self.env)


# -- in a child: one figure or chapter run by manim, counted or timed ------------------------------------------


def count_held(manim_args: list[str]) -> None:
    """manim with `manim_args`, every play stepped through without drawing (scenes/segments.py) at the frame
    rate asked for; prints, per scene, its frames and those of its waits that hold one picture, as JSON."""
    from manim import config

    from scenes.segments import SegmentRenderer
    from tools.settings import FROM_SECONDS_ENV

    os.environ[FROM_SECONDS_ENV] = "1e12"  # every play is before the segment: stepped, never drawn
    counts: dict[str, list[int]] = {}
    step, render = SegmentRenderer._step, SegmentRenderer.render

    def counted_render(self, scene, *args, **kwargs) -> None:
        self.frames_stepped = getattr(self, "frames_stepped", 0) + 1
        render(self, scene, *args, **kwargs)

    def counted_step(self, scene, *args, **kwargs) -> None:
        at, stepped = self.time, getattr(self, "frames_stepped", 0)
        step(self, scene, *args, **kwargs)
        frames = round((self.time - at) * config.frame_rate)
        mine = counts.setdefault(type(scene).__name__, [0, 0])
        mine[0] += frames
        mine[1] += frames if getattr(self, "frames_stepped", 0) == stepped else 0  # a frozen frame: nothing drawn

    SegmentRenderer._step, SegmentRenderer.render = counted_step, counted_render
    _run_manim(manim_args)
    print(json.dumps({scene: {"frames": f, "held": h} for scene, (f, h) in counts.items()}))


def profile_render(encoder: str, manim_args: list[str]) -> None:
    """manim with `manim_args`, its frames written as the project writes them (`encoder` "held":
    scenes/segments.py, HeldFrameWriter) or as manim does (`encoder` "manim": every frame handed to the
    encoder's thread as RGBA and converted there, held or not), every stage timed in CPU seconds of the thread
    that spends it; prints them as JSON."""
    import av
    import numpy as np
    from manim.scene import scene_file_writer
    from manim.scene.scene_file_writer import SceneFileWriter

    from scenes import segments

    spent: dict[str, float] = {}
    lock = threading.Lock()
    writing = threading.local()  # on the drawing thread: whether the frame being written is held

    def add(name: str, seconds: float, held: bool = False) -> None:
        """Add to `name`'s total, and to its held frames' share when `held`."""
        with lock:
            for each in (name, f"held {name}") if held else (name,):
                spent[each] = spent.get(each, 0.0) + seconds

    class Timed(segments.HeldFrameEncoder):
        def converted(self, pixels):
            start = time.thread_time()
            if encoder == "manim":  # what VideoSegmentEncoder.write_frame and the codec's reformat do
                context = self._stream.codec_context
                frame = av.VideoFrame.from_ndarray(pixels, format="rgba").reformat(
                    context.width, context.height, context.pix_fmt, threads=context.thread_count
                )
            else:
                frame = super().converted(pixels)
            seconds = time.thread_time() - start
            add("RGBA→YUV", seconds, getattr(writing, "held", False))
            if threading.current_thread() is threading.main_thread():
                add("drawing thread's RGBA→YUV", seconds)
            return frame

        def write_frame(self, frame, *, repeat: int = 1) -> None:
            held = writing.held = repeat > 1
            add("frames", repeat)
            add("held frames", repeat if held else 0)
            for _ in range(repeat):
                # An RGBA array comes the way manim writes: converted again for each frame, held or not.
                converted = self.converted(frame) if isinstance(frame, np.ndarray) else frame
                start = time.thread_time()
                super().write_frame(converted, repeat=1)
                add("x264 and muxing", time.thread_time() - start, held)

        def finish(self) -> None:
            start = time.thread_time()
            super().finish()  # x264's last frames (its lookahead), then the file closed
            add("x264 and muxing", time.thread_time() - start)

    def waited(function, name):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                add(name, time.perf_counter() - start)

        return timed

    def written(writer, pixels, *, repeat: int = 1) -> None:
        writing.held = repeat > 1
        write(writer, pixels, repeat=repeat)

    def joined(writer) -> None:
        start = time.thread_time()
        combine(writer)
        add("joining the plays", time.thread_time() - start)

    segments.HeldFrameWriter._create_segment_encoder = lambda writer, target: Timed(
        target=target, spec=writer.video_encoder
    )
    write = SceneFileWriter.write_frame if encoder == "manim" else segments.HeldFrameWriter.write_frame
    segments.HeldFrameWriter.write_frame = written
    job = scene_file_writer._PartialMovieEncodeJob
    job.put = waited(job.put, "drawing waited for x264 (wall)")
    SceneFileWriter._join_job = waited(SceneFileWriter._join_job, "drawing waited for x264 (wall)")
    combine = SceneFileWriter.combine_to_movie
    SceneFileWriter.combine_to_movie = joined
    start, main_cpu = time.perf_counter(), time.thread_time()
    _run_manim(manim_args)
    done_here = spent.get("drawing thread's RGBA→YUV", 0.0) + spent.get("joining the plays", 0.0)
    spent["scene and drawing"] = time.thread_time() - main_cpu - done_here
    spent["wall"] = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    spent["process CPU"] = usage.ru_utime + usage.ru_stime
    print(json.dumps(spent))


def _run_manim(manim_args: list[str]) -> None:
    os.chdir(ROOT)
    from manim.__main__ import main

    main(args=manim_args, prog_name="manim", standalone_mode=False)


# -- the tables ------------------------------------------------------------------------------------------------


def ratio(plain: Cost, ours: Cost) -> str:
    return f"{plain.wall / ours.wall:.2f}× ({plain.cpu / ours.cpu:.2f}× CPU)"


def versus_plain(b: Bench, what: str) -> list[str]:
    """`what` ("figure" or "chapter"): plain manim against a cold build, interleaved rounds; for the figure, also
    plain manim with one play's video encoding at a time (manim's default; manim.cfg has two)."""
    q, chapter, figure = b.args.quality, b.args.chapter, b.args.figure if what == "figure" else None
    only = f"{chapter}/{figure}" if figure else chapter
    sides = {
        "plain manim": lambda n: b.plain(q, chapter, figure),
        "lecture build -j 2": lambda n: b.build(q, only),
    }
    if figure:
        sides["plain manim, one encoder in flight"] = lambda n: b.plain(q, chapter, figure, ONE_ENCODER)
    costs = interleaved(sides, b.args.rounds)
    plain, ours = costs["plain manim"], costs["lecture build -j 2"]
    command = f"`manim -q{q} scenes/{chapter}.py{f' {scene_class(figure)}' if figure else ''}`"
    rows = [f"| {only} at -q {q} | {ours} | {plain} ({command}) | {ratio(plain, ours)} |"]
    if figure:
        one = costs["plain manim, one encoder in flight"]
        rows.append(
            f"| plain manim on it, two plays encoding at once (manim.cfg) against one (`{' '.join(ONE_ENCODER)}`) | "
            f"{plain} | {one} | {ratio(one, plain)} |"
        )
    return rows


def held_table(b: Bench, chapters: list[str], profiles: dict[str, dict]) -> list[str]:
    """The held frames' share of the frames at 60 fps, per chapter, and what a held frame cost each way."""
    rows, frames, held = [], 0, 0
    for chapter in chapters:
        out: list[str] = []
        media = b.fresh("count")
        measured(
            [
                PY,
                __file__,
                "_count",
                "-qh",
                "--progress_bar",
                "none",
                "--media_dir",
                str(media),
                f"scenes/{chapter}.py",
            ],
            b.env,
            out,
        )
        counts = json.loads(out[0].strip().splitlines()[-1])
        f, h = sum(c["frames"] for c in counts.values()), sum(c["held"] for c in counts.values())
        frames, held = frames + f, held + h
        rows.append(f"| {chapter} | {f} | {h} | {h / f:.0%} |")
    rows.append(f"| **all** | {frames} | {held} | **{held / frames:.0%}** |")
    lines = ["| chapter | frames at 60 fps | in waits that hold one picture | share |", "|---|---:|---:|---:|", *rows]
    if {"manim", "held"} <= profiles.keys():
        lines += ["", "| a held frame at 1080p60, CPU ms (the profiled figure) | manim's encoder | the project's |"]
        lines.append("|---|---:|---:|")
        per: dict[str, dict[str, float]] = {e: {} for e in profiles}
        for e, spent in profiles.items():
            for name in ("RGBA→YUV", "x264 and muxing"):
                per[e][name] = spent.get(f"held {name}", 0.0) / spent["held frames"] * 1000
            per[e]["all"] = sum(per[e].values())
        for name in ("RGBA→YUV", "x264 and muxing", "all"):
            lines.append(f"| {name} | {per['manim'][name]:.2f} | {per['held'][name]:.2f} |")
        course = [per[e]["all"] * held / 1000 / 60 for e in ("manim", "held")]
        lines.append(f"| the course's held frames, CPU min | {course[0]:.1f} | {course[1]:.1f} |")
    return [*lines, "", *held_options(b)]


HELD = 240  # frames a picture is held for in held_options: four seconds at 60 fps


def held_options(b: Bench) -> list[str]:
    """The other ways to write a held picture, on the profiled figure's last frame at 1080p: libx264 settings
    that might make repeats cheaper, and the picture written once with a longer duration (a variable frame
    rate); each against the project's way (manim.cfg's encoder, the same planes for each frame): CPU per held
    frame, and whether the decoded frames are the same."""
    import av
    import numpy as np
    from PIL import Image

    from tools.course import catalogue

    fig = catalogue.figure(b.args.profile)
    media = b.fresh("still")
    measured([*MANIM, "-qh", "-s", "--media_dir", str(media), f"scenes/{fig.chapter}.py", fig.scene_class], b.env)
    pixels = np.ascontiguousarray(np.asarray(Image.open(next(media.rglob("*.png"))).convert("RGBA")))

    def encode(options: dict[str, str], durations: list[int]) -> tuple[float, list[np.ndarray]]:
        """CPU seconds to encode the picture once per entry of `durations` (frames each lasts), and the video's
        decoded frames, each repeated for the frames it lasts."""
        target = b.fresh("held").with_suffix(".mp4")
        with av.open(str(target), "w") as out:
            stream = out.add_stream("libx264", rate=60, options={"threads": "1", "preset": "veryfast", **options})
            stream.width, stream.height, stream.pix_fmt = pixels.shape[1], pixels.shape[0], "yuv420p"
            start = time.process_time()
            frame = av.VideoFrame.from_numpy_buffer(pixels, format="rgba").reformat(format="yuv420p", threads=1)
            packets, pts, lasting = [], 0, {}
            for lasts in durations:
                frame.pts, frame.time_base = pts, Fraction(1, 60)
                lasting[pts], pts = lasts, pts + lasts
                packets += stream.encode(frame)
            packets += stream.encode(None)
            spent = time.process_time() - start
            for packet in packets:
                packet.duration = lasting[packet.pts]  # in the codec's 1/60 s
                out.mux(packet)
        with av.open(str(target)) as video:
            base = video.streams.video[0].time_base
            decoded = [(f.to_ndarray(format="rgb24"), round(f.duration * base * 60)) for f in video.decode(video=0)]
        return spent, [picture for picture, lasts in decoded for _ in range(lasts)]

    def psnr(a: np.ndarray, b_: np.ndarray) -> float:
        mse = float(np.mean((a.astype(np.int32) - b_) ** 2))
        return float("inf") if mse == 0 else 10 * float(np.log10(255**2 / mse))

    ours, reference = encode({}, [1] * HELD)
    lines = [
        f"| a picture held {HELD} frames at 1080p60, written as | CPU ms per held frame | frames the same as now "
        "| lowest PSNR against now |",
        "|---|---:|---:|---:|",
        f"| now: the same planes for each frame (manim.cfg's libx264 settings) | {ours / HELD * 1000:.2f} | "
        f"{HELD} of {HELD} | — |",
    ]
    for name, options, durations in (
        ("libx264 `rc-lookahead=0:mbtree=0`", {"x264-params": "rc-lookahead=0:mbtree=0"}, [1] * HELD),
        (
            "libx264 `bframes=0:rc-lookahead=0:mbtree=0:scenecut=0`",
            {"x264-params": "bframes=0:rc-lookahead=0:mbtree=0:scenecut=0"},
            [1] * HELD,
        ),
        ("libx264 `tune=stillimage`", {"tune": "stillimage"}, [1] * HELD),
        ("libx264 `preset=ultrafast`", {"preset": "ultrafast"}, [1] * HELD),
        (f"once, lasting {HELD} frames (a variable frame rate)", {}, [HELD]),
    ):
        spent, frames = encode(options, durations)
        same = sum(bool((a == c).all()) for a, c in zip(reference, frames))
        worst = min(psnr(a, c) for a, c in zip(reference, frames))
        lines.append(f"| {name} | {spent / HELD * 1000:.2f} | {same} of {HELD} | {worst:.1f} dB |")
    return lines


def profile_table(b: Bench) -> tuple[list[str], dict[str, dict]]:
    """One figure at -q h as the build renders it, with manim's encoder and the project's; then publishing."""
    from tools.course import catalogue
    from tools.publish.keys.render_key import scene_ref
    from tools.publish.publishing import clip, media
    from tools.publish.rendering import render

    fig = catalogue.figure(b.args.profile)
    scene = scene_ref(fig)
    profiles: dict[str, dict] = {}
    for encoder in ("manim", "held"):
        work = b.fresh("profile")
        out = render.outputs(scene, "h", work)
        args = ["render", "-q", "h", "--config_file", str(render.one_figure_cfg()), "--media_dir", str(work)]
        args += ["-o", fig.id, "--progress_bar", "none", str(scene.scene_file), scene.scene_class]
        printed: list[str] = []
        env = {**render.render_env("h", out.track, out.progress), **{"LECTURE_CACHE": b.env["LECTURE_CACHE"]}}
        cost = measured([PY, __file__, "_profile", encoder, *args], env, printed)
        spent = json.loads(printed[0].strip().splitlines()[-1])
        spent["child"] = cost
        before = functools.partial(_last_frame_from_start, media.frame_at)
        for how, last_frame in (("before", before), ("now", media.frame_at)):
            staged = b.fresh("staged")
            staged.mkdir()
            saved, media.frame_at = media.frame_at, last_frame
            start, cpu = time.perf_counter(), time.process_time()
            try:
                clip.stage_clip(fig.id, fig.title, (), out, staged)
            finally:
                media.frame_at = saved
            spent[f"publishing {how}"] = Cost(time.perf_counter() - start, time.process_time() - cpu)
        profiles[encoder] = spent
    lines = [
        f"| {fig.chapter}/{fig.id} at -q h: {profiles['held']['frames']:.0f} frames, "
        f"{profiles['held']['held frames']:.0f} of them held | manim's encoder (CPU s) | the project's (CPU s) |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {name} | {profiles['manim'].get(name, 0):.1f} | {profiles['held'].get(name, 0):.1f} |" for name in PROFILED
    ]
    lines.append(
        f"| drawing waited for x264 (wall s) | {profiles['manim']['drawing waited for x264 (wall)']:.1f} | "
        f"{profiles['held']['drawing waited for x264 (wall)']:.1f} |"
    )
    lines.append(f"| the render, whole | {profiles['manim']['child']} | {profiles['held']['child']} |")
    lines.append(
        f"| publishing: the last frame decoded from the start (before) / from the keyframe before it (now) | "
        f"{profiles['held']['publishing before']} | {profiles['held']['publishing now']} |"
    )
    return lines, profiles


def _last_frame_from_start(frame_at, path: Path, seconds: float | None = None):
    """media.frame_at as it was: the last frame found by decoding the whole video (`frame_at` for the rest)."""
    import av

    if seconds is not None:
        return frame_at(path, seconds)
    with av.open(str(path)) as container:
        last = None
        for frame in container.decode(video=0):
            last = frame
        return last.to_image()


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a live process, the processes under it, and all they have reaped."""
    import psutil

    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def cluster_rows(b: Bench, quality: str) -> str:
    """The cold chapter on a 2-worker LocalCluster (WORKER_CONFIG) against the local pool, interleaved rounds
    (the layout lint left out: it runs where the build runs, either way). The cluster's CPU is the build's, the
    workers' and this process's (the LocalCluster's scheduler and nannies run in it)."""
    import dask
    from distributed import LocalCluster

    from tools.publish.rendering.cluster import WORKER_CONFIG

    chapter = b.args.chapter

    def on_cluster(n: int) -> Cost:
        # The workers inherit this process's environment: a cache of their own, fresh each round.
        os.environ["LECTURE_CACHE"] = str(b.fresh("worker-cache"))
        with (
            dask.config.set(WORKER_CONFIG),
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local,
        ):
            pids = [nanny.process.pid for nanny in local.workers.values()]
            before, here = sum(_tree_cpu(pid) for pid in pids), time.process_time()
            cost = b.build(quality, chapter, ("--scheduler", local.scheduler_address), lint=False)
            dask_cpu = sum(_tree_cpu(pid) for pid in pids) - before + time.process_time() - here
        os.environ["LECTURE_CACHE"] = b.env["LECTURE_CACHE"]
        return Cost(cost.wall, cost.cpu + dask_cpu)

    costs = interleaved(
        {"local pool": lambda n: b.build(quality, chapter, lint=False), "LocalCluster": on_cluster}, b.args.rounds
    )
    pool, remote = costs["local pool"], costs["LocalCluster"]
    return f"| cold {chapter} at -q {quality} | {remote} | {pool} | {ratio(pool, remote)} |"


def course_row(b: Bench) -> str:
    """The whole course at -q h, cold, the voice cached."""
    from tools.course import catalogue

    b.narrate([ch.id for ch in catalogue.chapters()])
    renders, cache = b.fresh("renders"), b.fresh("cache")
    cache.mkdir()
    shutil.copytree(b.tmp / "cache" / "narration", cache / "narration", copy_function=os.link)
    env = {**b.env, "LECTURE_RENDERS": str(renders), "LECTURE_CACHE": str(cache)}
    cost = measured([*LECTURE, "build", "-q", "h", "-j", "2"], env)
    manifest = json.loads((renders / "1080p60" / "manifest.json").read_text(encoding="utf-8"))
    video = sum(entry["duration"] for entry in manifest["figures"].values())
    return (
        f"| whole course at -q h, cold, voice cached | {cost} | {video / 60:.1f} min of video | "
        f"**{cost.wall / video:.2f}× real time** |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", default="optimizer")
    parser.add_argument("--figure", default="optimal_step_parabola", help="the figure of the figure table")
    parser.add_argument("--profile", default="momentum_escape", help="the figure profiled (a long one)")
    parser.add_argument("-q", "--quality", default="h")
    parser.add_argument("--voice", default="neural")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3, with --quick 1)")
    parser.add_argument("--tables", nargs="*", choices=TABLES, default=list(TABLES), help="none: only --course")
    parser.add_argument("--course", action="store_true", help="also build the whole course at -q h, cold")
    parser.add_argument("--quick", action="store_true", help="-q l for the figure, chapter and cluster tables")
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 3)
    if args.quick:
        args.quality = "l"
    adopt_orphans()
    from tools.course import catalogue

    with tempfile.TemporaryDirectory(prefix="full-hd-") as tmp:
        b = Bench(args, Path(tmp))
        os.environ.update({k: b.env[k] for k in ("LECTURE_CACHE", "LECTURE_RENDERS", "LECTURE_VOICE")})
        course = [ch.id for ch in catalogue.chapters()]
        b.narrate(course if args.course or "held" in args.tables else [args.chapter])
        print(f"{os.cpu_count()} cores, voice {args.voice}, medians of {args.rounds} interleaved rounds")
        print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
        if {"figure", "chapter"} & set(args.tables):
            print("| work | `lecture build -j 2` (cold, lint included) | plain manim | ratio |\n|---|---|---|---|")
            for what in ("figure", "chapter"):
                if what in args.tables:
                    print("\n".join(versus_plain(b, what)), flush=True)
            print()
        profiles: dict[str, dict] = {}
        if "profile" in args.tables:
            lines, profiles = profile_table(b)
            print("\n".join(lines) + "\n", flush=True)
        if "held" in args.tables:
            print("\n".join(held_table(b, course, profiles)) + "\n", flush=True)
        if "cluster" in args.tables:
            print("| work | 2-worker LocalCluster | local pool, `-j 2` | ratio |\n|---|---|---|---|")
            for quality in ("l",) if args.quick else ("l", "h"):
                print(cluster_rows(b, quality), flush=True)
            print()
        if args.course:
            print("| work | `lecture build -q h -j 2` | video | wall / video |\n|---|---|---|---|")
            print(course_row(b))
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["_count"]:
        count_held(sys.argv[2:])
    elif sys.argv[1:2] == ["_profile"]:
        profile_render(sys.argv[2], sys.argv[3:])
    else:
        main()
