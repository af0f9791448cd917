"""Render one figure with manim, in its own process, and say why it had to.

A figure is rendered again only when its render key changed. The key is
kept in parts (the figure's scene class, the shared scene modules, its
facts, its cues, its title, the fonts, the locked libraries and numpy's SIMD
paths, the render settings), each with the words the build says when it
changed, so a part cannot be added without its reason:
``gates_circuit: narration changed (cue gates_add)``, or
``stack changed (numpy SIMD X86_V2 X86_V3 → X86_V2)`` on another CPU.
"""

from __future__ import annotations

import configparser
import functools
import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools import settings
from tools.files import TimeLimitError, content_key, file_sha256, write_atomically
from tools.publish import fonts, launch, scratch, stack
from tools.voice import captions

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


# What publish writes for a figure; part of the render key, so a change
# here republishes figures built before it.
PUBLISHED = "mp4 (aac fast coder) srt vtt png webp; facts with text and reading, size; sidecar; cue times; v6"


class BuildError(Exception):
    """A figure failed to render or its output failed verification."""


@dataclass(frozen=True)
class SceneRef:
    """What manim runs for one figure: its class in its chapter's scene file."""

    figure: str
    chapter: str
    scene_class: str
    scene_file: Path


@functools.cache
def _caption_code() -> str:
    """What decides a caption's lines besides its text: the line-breaking code."""
    return file_sha256(Path(captions.__file__))


# Scene modules that never change a frame: the layout lint's probe only reads the screen (its code keys
# the stills instead), so editing it re-runs the lint but re-renders nothing.
NOT_DRAWN = ("layout_probe.py",)


def shared_scene_files(chapter_ids: set[str]) -> list[Path]:
    """The scene modules every figure uses (style, base, widgets): not a chapter's file, nor one in NOT_DRAWN."""
    return [
        p for p in sorted(settings.SCENES_DIR.glob("*.py")) if p.stem not in chapter_ids and p.name not in NOT_DRAWN
    ]


def _changed(old: dict | None, new: dict | None) -> list[str]:
    """The names of the entries that differ between two dict parts (added, changed or gone)."""
    old, new = old or {}, new or {}
    return [name for name in new if old.get(name) != new[name]] + [name for name in old if name not in new]


def _cues_changed(old: dict | None, new: dict) -> list[str]:
    changed = _changed(old, new)
    return [f"cue{'s' if len(changed) > 1 else ''} {', '.join(changed)}"] if changed else []


def _reordered(old: list | None, new: list) -> list[str]:
    """A new order of the same cues; a cue added or taken away is named by the cues part instead."""
    return ["cue order"] if sorted(old or []) == sorted(new) else []


@dataclass(frozen=True)
class KeyPart:
    """One part of a render key: its value, and what the build says when it changed since the last render."""

    value: Any  # JSON; None leaves the part out of the key
    reason: str  # e.g. "facts changed ({})": "{}" takes what `inside` names
    inside: Callable[[Any, Any], list[str]] | None = None  # (old, new) -> what changed; [] says nothing
    unrecorded: str = ""  # said instead when the old key has no such part

    def why(self, name: str, old: dict) -> str | None:
        """What the build says of this part, `name` in `old` (the key parts the figure was published with)."""
        if self.unrecorded and name not in old:
            return self.unrecorded
        before = old.get(name)
        if before == self.value:
            return None
        if self.inside is None:
            return self.reason
        named = self.inside(before, self.value)
        return self.reason.format(", ".join(named)) if named else None


@dataclass(frozen=True)
class RenderKey:
    """Everything that shapes one figure's published files, as named parts (values and reasons)."""

    table: dict[str, KeyPart]

    @property
    def parts(self) -> dict:
        """The parts' values, as the manifest records them (to name what changed at the next build)."""
        return {name: part.value for name, part in self.table.items() if part.value is not None}

    @property
    def digest(self) -> str:
        return content_key(self.parts)


@dataclass(frozen=True)
class KeyMaterial:
    """What a figure's render key is made of, gathered by the build plan (tools/publish/plan.py)."""

    scene_source: str  # the figure's own class: its chapter file without the other figures' classes
    shared_files: tuple[Path, ...]  # shared_scene_files()
    facts: dict[str, tuple]  # each fact's (value, text, spoken)
    cues: tuple[tuple[str, str, str], ...]  # each cue's (id, caption, audio key), in play order
    title: str
    source: str
    attachments: dict[str, str]  # each attachment's suffix and text


def render_key(material: KeyMaterial, quality: str) -> RenderKey:
    """The figure's key: its own scene class (so editing one figure does not re-render its neighbours), the
    shared scene modules, its facts, its cues (caption lines and audio), its title, the fonts, the stack
    (tools/publish/stack.py), the render settings, and what its attachments hold.
    In the order the build names them when they changed."""
    # Only a figure with attachments has the part: one without keeps the key it had before they existed.
    attached = {suffix: content_key(text) for suffix, text in material.attachments.items()} or None
    return RenderKey(
        {
            "scene": KeyPart(content_key(material.scene_source), "scene changed"),
            "shared": KeyPart(
                {p.name: file_sha256(p) for p in material.shared_files}, "shared scene code changed ({})", _changed
            ),
            "facts": KeyPart(
                {name: content_key(list(shown)) for name, shown in material.facts.items()},
                "facts changed ({})",
                _changed,
            ),
            # A caption's lines are its text as captions.py breaks it: the text and that code, without breaking it.
            "cues": KeyPart(
                {cue_id: content_key([caption, _caption_code(), key]) for cue_id, caption, key in material.cues},
                "narration changed ({})",
                _cues_changed,
            ),
            "cue_order": KeyPart([cue_id for cue_id, _, _ in material.cues], "narration changed ({})", _reordered),
            "fonts": KeyPart(fonts.key_part(), "fonts changed"),
            "title": KeyPart(content_key([material.title, material.source]), "title or source changed"),
            "attachments": KeyPart(attached, "attached files changed"),
            # Plain values, not a digest, so that a change can be named.
            "stack": KeyPart(
                stack.computing_stack(),
                "stack changed ({})",
                stack.differences,
                unrecorded="stack not recorded before (libraries and numpy SIMD)",
            ),
            "render": KeyPart(
                content_key([quality, settings.MANIM_CFG.read_text(encoding="utf-8"), ONE_FIGURE, PUBLISHED]),
                "render settings changed (quality, manim.cfg or what publish writes)",
            ),
        }
    )


def reasons(old: dict | None, new: RenderKey) -> list[str]:
    """Why a figure published with key parts `old` must render again for `new`: each changed part's reason."""
    if old is None:
        return ["new"]
    if not old:
        return ["published by an older build"]
    said = [why for name, part in new.table.items() if (why := part.why(name, old))]
    return said or ["render key changed"]


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
        tail = launch.log_tail(log)
        wrote = f"wrote no {' or '.join(missing)}" if missing else f"failed (exit {exit_code})"
        raise BuildError(f"manim {wrote} on {scene.chapter}/{scene.figure}; log {log}:\n{tail}")
    return out
