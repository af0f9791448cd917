"""Render one figure with manim, in its own process and work folder: what manim is run on (a ``SceneRef``), with
which settings and environment, under which time limit, and where it writes.

Whether a figure must render at all is the build plan's decision, by its render key
(tools/publish/keys/render_key.py).
"""

from __future__ import annotations

import configparser
import io
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tools import settings
from tools.files import TimeLimitError, content_key, write_atomically
from tools.publish.rendering import launch, scratch

QUALITIES = {"l": "480p15", "m": "720p30", "h": "1080p60", "k": "2160p60"}
FPS = {flag: int(name.split("p")[1]) for flag, name in QUALITIES.items()}
# `lecture build` renders one figure per manim process: the repository's
# manim.cfg with these [CLI] settings changed (see one_figure_cfg).
# A split figure is joined from its parts' partial movies: manim must keep every one (it prunes past 100).
ONE_FIGURE = {"write_all": "False", "max_files_cached": "-1"}
PIXEL_WIDTH = {"l": 854, "m": 1280, "h": 1920, "k": 3840}
# libx264's lookahead reads a few bytes of memory it never wrote when the
# frame's width is not a multiple of 64 (854 px at -q l): the same frames then
# encode to different bytes from run to run (1 IDR frame of 1,147 in
# exchange_rate). glibc can fill every block malloc hands out (and every freed
# one) with one byte; with the memory filled the same way each time, a -q l
# build is reproducible. 1280 and 1920 px were reproducible without it (3840 is
# a multiple of 64 too), and the fill costs about 15% of render time at -q m,
# so it is applied only where it is needed.
MALLOC_FILL = {"MALLOC_PERTURB_": "165"}


def render_env(quality: str, track: Path, progress: Path, reproducible: bool = True) -> dict[str, str]:
    """The environment of a figure's manim process (with MALLOC_FILL where a `reproducible` render needs it)."""
    fill = MALLOC_FILL if reproducible and PIXEL_WIDTH[quality] % 64 else {}
    return {
        **os.environ,
        **fill,
        "PYTHONUNBUFFERED": "1",
        settings.AUDIO_OUT_ENV: str(track),
        settings.PROGRESS_OUT_ENV: str(progress),
    }


class BuildError(Exception):
    """A figure failed to render or its output failed verification."""


@dataclass(frozen=True)
class SceneRef:
    """What manim runs for one figure: its class in its chapter's scene file."""

    figure: str
    chapter: str
    scene_class: str
    scene_file: Path


def one_figure_cfg(encoder: dict[str, str] | None = None) -> Path:
    """manim.cfg with ONE_FIGURE applied (and `encoder` over its encoder options), written to the cache folder.

    manim reads one folder-level config: ``--config_file`` replaces
    manim.cfg rather than adding to it, so the override carries the rest.
    """
    parser = configparser.ConfigParser()
    parser.read(settings.MANIM_CFG, encoding="utf-8")
    parser["CLI"].update(ONE_FIGURE)
    if encoder:
        parser["video_encoder.options"].update(encoder)
    text = io.StringIO()
    parser.write(text)
    target = settings.cache_root() / (f"one_figure-{content_key(encoder)[:12]}.cfg" if encoder else "one_figure.cfg")
    write_atomically(target, text.getvalue())
    return target


def work_root() -> Path:
    """Where manim's work folders live, one per render in progress."""
    return settings.cache_root() / "manim"


def log_path(scene: SceneRef, quality: str, start: float = 0.0) -> Path:
    """The log of a figure's render, or of its part from `start` seconds on."""
    part = f".from{start:.1f}s" if start else ""
    return settings.cache_root() / "logs" / f"{scene.figure}.{quality}{part}.log"


@dataclass(frozen=True)
class Rendered:
    video: Path  # manim's mp4, silent (a part that began after the figure's last play has none)
    srt: Path  # its subcaptions
    track: Path  # the whole narration track (see scenes/base.py); a part told to stop early has none
    progress: Path  # the seconds of video rendered so far, rewritten after every play
    partials: Path  # manim's folder of partial movies, one per play it drew, named by the play's number

    @property
    def cue_times(self) -> Path:
        """Where each cue starts in the track and how long it speaks (JSON, written beside the track)."""
        return self.track.with_suffix(".cues.json")

    @property
    def fact_boxes(self) -> Path:
        """Where each fact's text is drawn, and when (JSON, written beside the track: scenes/sightings.py)."""
        return self.track.with_suffix(".facts.json")


@contextmanager
def work_folder(scene: SceneRef, quality: str) -> Iterator[Path]:
    """A private manim media folder for one render, locked while in use and removed after.

    Two builds rendering the same figure never share manim's files, and
    ``lecture clean`` leaves a folder alone while its lock is held.
    """
    with scratch.owned_folder(work_root(), f"{scene.figure}.{quality}.") as folder:
        yield folder


def progress_file(media_dir: Path) -> Path:
    """Where a render in `media_dir` reports how far it is (see scenes/base.py)."""
    return media_dir / "progress"


def stop_file(media_dir: Path) -> Path:
    """Where the build tells a render in `media_dir` to stop early (see scenes/segments.py)."""
    return media_dir / "stop"


def outputs(scene: SceneRef, quality: str, media_dir: Path) -> Rendered:
    """Where manim, run in `media_dir`, writes the figure's files."""
    folder = media_dir / "videos" / scene.chapter / QUALITIES[quality]
    return Rendered(
        folder / f"{scene.figure}.mp4",
        folder / f"{scene.figure}.srt",
        media_dir / "narration.wav",
        progress_file(media_dir),
        folder / "partial_movie_files" / scene.scene_class,
    )


# Render seconds per second of video a figure never rendered is allowed, by quality, for its time limit: about
# four times what a render on two busy cores takes (-q l: 0.5-1.5; -q h: 4-8).
LIMIT_RATE = {"l": 2.0, "m": 6.0, "h": 15.0, "k": 60.0}
LIMIT_FACTOR = 4.0


def time_limit(quality: str, recorded_seconds: float, video_seconds: float) -> settings.Limit:
    """A render's time limit: LIMIT_FACTOR times its last render's time (`recorded_seconds`, 0 when never
    rendered: its video's length times the quality's LIMIT_RATE instead), at least the floor (settings)."""
    expected = recorded_seconds if recorded_seconds > 0 else video_seconds * LIMIT_RATE[quality] / LIMIT_FACTOR
    return settings.time_limit("render", LIMIT_FACTOR * expected)


def render(
    scene: SceneRef,
    quality: str,
    media_dir: Path,
    env: dict[str, str] | None = None,
    start: float = 0.0,
    limit: settings.Limit | None = None,
    config_file: Path | None = None,
    reproducible: bool = True,
) -> Rendered:
    """Run manim on one figure's scene in `media_dir` (with `env` added to its environment), from `start`
    seconds on (a part of it: scenes/segments.py), under `limit` (by default the floor of a render's), with
    `config_file` (by default one_figure_cfg()); a render that need not be `reproducible` (a preview's
    draft) skips MALLOC_FILL. Raises BuildError with the log's tail, or naming the figure and the limit when
    it ran over."""
    out = outputs(scene, quality, media_dir)
    log = log_path(scene, quality, start)
    args = [
        "render",
        "-q",
        quality,
        "--config_file",
        str(config_file or one_figure_cfg()),
        "--media_dir",
        str(media_dir),
        "-o",
        scene.figure,
        "--progress_bar",
        "none",
        str(scene.scene_file),
        scene.scene_class,
    ]
    part = {settings.FROM_SECONDS_ENV: repr(start), settings.STOP_FILE_ENV: str(stop_file(media_dir))}
    log.parent.mkdir(parents=True, exist_ok=True)
    what = f"rendering {scene.chapter}/{scene.figure}" + (f" from {start:.1f} s on" if start else "")
    try:
        exit_code = launch.run_manim(
            args,
            {**render_env(quality, out.track, out.progress, reproducible), **part, **(env or {})},
            log,
            limit or settings.time_limit("render"),
            what,
        )
    except TimeLimitError as err:
        raise BuildError(str(err)) from None
    told_to_stop = stop_file(media_dir).exists()
    missing = [
        name
        for name, path, needed in (("video", out.video, start == 0), ("narration track", out.track, not told_to_stop))
        if needed and not path.exists()
    ]
    if exit_code != 0 or missing:
        if launch.out_of_space(log, media_dir):
            cache = settings.cache_root()
            where = f"LECTURE_CACHE={cache}" if media_dir.is_relative_to(cache) else str(media_dir)
            raise BuildError(
                f"{what}: the disk is full (No space left on device) under {where}: free some space there, "
                f"or point LECTURE_CACHE at a roomier folder (log {log})"
            )
        tail = launch.log_tail(log)
        if exit_code < 0:
            wrote = f"was killed ({signal.Signals(-exit_code).name})"
        else:
            wrote = f"wrote no {' or '.join(missing)}" if missing else f"failed (exit {exit_code})"
        raise BuildError(f"manim {wrote} on {scene.chapter}/{scene.figure}; log {log}:\n{tail}")
    return out
