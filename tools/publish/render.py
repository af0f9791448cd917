"""Render one figure with manim, in its own process, and say why it had to.

A figure is rendered again only when its render key changed. The key is
kept in parts (the figure's scene class, the shared scene modules, its
facts, its cues, its title, the fonts, the locked libraries and numpy's SIMD
paths, the render settings), so the build can name what changed:
``gates_circuit: narration changed (cue gates_add)``, or
``stack changed (numpy SIMD X86_V2 X86_V3 → X86_V2)`` on another CPU.
"""

from __future__ import annotations

import ast
import configparser
import functools
import hashlib
import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.files import write_atomically
from tools.publish import fonts, launch, scratch, stack
from tools.voice import captions, cues

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


def render_env(quality: str, track: Path, progress: Path) -> dict[str, str]:
    """The environment of a figure's manim process."""
    fill = MALLOC_FILL if PIXEL_WIDTH[quality] % 64 else {}
    return {
        **os.environ,
        **fill,
        "PYTHONUNBUFFERED": "1",
        settings.AUDIO_OUT_ENV: str(track),
        settings.PROGRESS_OUT_ENV: str(progress),
    }


# What publish writes for a figure; part of the render key, so a change
# here republishes figures built before it.
PUBLISHED = "mp4 (aac fast coder) srt vtt png webp; facts with text and reading, size; sidecar; v5"


class BuildError(Exception):
    """A figure failed to render or its output failed verification."""


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _sha_json(value) -> str:
    return _sha(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


@functools.cache
def _caption_code() -> str:
    """What decides a caption's lines besides its text: the line-breaking code."""
    return _sha(Path(captions.__file__).read_bytes())


def scene_classes(scene_file: Path) -> dict[str, str]:
    """Top-level class name -> its source, read without importing manim."""
    return dict(_classes(scene_file.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=8)
def _classes(source: str) -> tuple[tuple[str, str], ...]:
    """The classes of one chapter's source, parsed once however many of its figures ask."""
    lines = source.splitlines(keepends=True)

    def segment(node: ast.ClassDef) -> str:
        # ast.get_source_segment for a top-level class, without splitting the whole file again per
        # class (which made a no-op build's keys take seconds); offsets count UTF-8 bytes.
        last = lines[node.end_lineno - 1].encode()[: node.end_col_offset].decode()
        return "".join(lines[node.lineno - 1 : node.end_lineno - 1]) + last

    return tuple((node.name, segment(node)) for node in _parsed(source).body if isinstance(node, ast.ClassDef))


@functools.lru_cache(maxsize=8)
def _parsed(source: str) -> ast.Module:
    """A chapter's source parsed once, however many of its figures ask (parsing it is most of a no-op build)."""
    return ast.parse(source)


# Scene modules that never change a frame: the layout lint's probe only reads the screen (its code keys
# the stills instead), so editing it re-runs the lint but re-renders nothing.
NOT_DRAWN = ("layout_probe.py",)


@dataclass(frozen=True)
class NarratedCues:
    """The cue ids a scene class passes to ``self.narrate`` as string literals."""

    ids: list[str]
    dynamic: bool  # some narrate() call takes a computed id, which only running the scene shows


def narrated_cues(scene_file: Path, class_name: str) -> NarratedCues:
    """Read, without importing manim, which cues a scene class narrates (helper methods included)."""
    tree = _parsed(scene_file.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    ids, dynamic = [], False
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "narrate"
            and call.args
        ):
            arg = call.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                ids.append(arg.value)
            else:
                dynamic = True
    return NarratedCues(ids, dynamic)


def shared_scene_files() -> list[Path]:
    """The scene modules every figure uses (style, base, widgets): not a chapter's file, nor one in NOT_DRAWN."""
    chapter_ids = {ch.id for ch in catalogue.chapters()}
    return [
        p for p in sorted(settings.SCENES_DIR.glob("*.py")) if p.stem not in chapter_ids and p.name not in NOT_DRAWN
    ]


@dataclass(frozen=True)
class RenderKey:
    """Everything that shapes one figure's published files, in named parts."""

    parts: dict

    @property
    def digest(self) -> str:
        return _sha_json(self.parts)


def render_key(fig: Figure, quality: str, cue_keys: list[str]) -> RenderKey:
    """The figure's key: its own scene class (the chapter file without the other figures'
    classes, so editing one figure does not re-render its neighbours), the shared scene
    modules, its facts, its cues (caption lines and audio), its title, the fonts, the stack
    (tools/publish/stack.py), the render settings, and what its attachments hold."""
    chapter = catalogue.chapter(fig.chapter)
    source = chapter.scene_file.read_text(encoding="utf-8")
    figure_classes = {f.scene_class for f in chapter.figures}
    for name, segment in scene_classes(chapter.scene_file).items():
        if name != fig.scene_class and name in figure_classes:
            source = source.replace(segment, "")
    figure_cues = cues.figure_cues(fig.id)
    parts = {
        "scene": _sha(source),
        "shared": {p.name: _sha(p.read_bytes()) for p in shared_scene_files()},
        "facts": {name: _sha_json([f.value, f.text, f.spoken]) for name, f in catalogue.facts(fig.id).items()},
        # A caption's lines are its text as captions.py breaks it: the text and that code, without breaking it.
        "cues": {c.id: _sha_json([c.caption, _caption_code(), k]) for c, k in zip(figure_cues, cue_keys)},
        "cue_order": [c.id for c in figure_cues],
        "title": _sha_json([fig.title, fig.source]),
        "fonts": fonts.key_part(),
        # Plain values, not a digest, so that a change can be named (see reasons).
        "stack": stack.computing_stack(),
        "render": _sha_json([quality, settings.MANIM_CFG.read_text(encoding="utf-8"), ONE_FIGURE, PUBLISHED]),
    }
    if fig.attachments:  # only then: a figure without attachments keeps the key it had before they existed
        parts["attachments"] = {a.suffix: _sha(a.make()) for a in fig.attachments}
    return RenderKey(parts)


def _changed(old: dict, new: dict) -> list[str]:
    return [name for name in new if old.get(name) != new[name]] + [name for name in old if name not in new]


def reasons(old: dict | None, new: RenderKey) -> list[str]:
    """Why a figure published with key parts `old` must render again for `new`."""
    if old is None:
        return ["new"]
    if not old:
        return ["published by an older build"]
    said = []
    if old.get("scene") != new.parts["scene"]:
        said.append("scene changed")
    if shared := _changed(old.get("shared", {}), new.parts["shared"]):
        said.append(f"shared scene code changed ({', '.join(shared)})")
    if facts := _changed(old.get("facts", {}), new.parts["facts"]):
        said.append(f"facts changed ({', '.join(facts)})")
    if changed := _changed(old.get("cues", {}), new.parts["cues"]):
        said.append(f"narration changed (cue{'s' if len(changed) > 1 else ''} {', '.join(changed)})")
    elif old.get("cue_order") != new.parts["cue_order"]:
        said.append("narration changed (cue order)")
    if old.get("fonts") != new.parts["fonts"]:
        said.append("fonts changed")
    if old.get("title") != new.parts["title"]:
        said.append("title or source changed")
    if old.get("attachments") != new.parts.get("attachments"):
        said.append("attached files changed")
    if "stack" not in old:
        said.append("stack not recorded before (libraries and numpy SIMD)")
    elif changed := stack.differences(old["stack"], new.parts["stack"]):
        said.append(f"stack changed ({', '.join(changed)})")
    if old.get("render") != new.parts["render"]:
        said.append("render settings changed (quality, manim.cfg or what publish writes)")
    return said or ["render key changed"]


def one_figure_cfg() -> Path:
    """manim.cfg with ONE_FIGURE applied, written to the cache folder.

    manim reads one folder-level config: ``--config_file`` replaces
    manim.cfg rather than adding to it, so the override carries the rest.
    """
    parser = configparser.ConfigParser()
    parser.read(settings.MANIM_CFG, encoding="utf-8")
    parser["CLI"].update(ONE_FIGURE)
    text = io.StringIO()
    parser.write(text)
    target = settings.cache_root() / "one_figure.cfg"
    write_atomically(target, text.getvalue())
    return target


def work_root() -> Path:
    """Where manim's work folders live, one per render in progress."""
    return settings.cache_root() / "manim"


def log_path(fig: Figure, quality: str, start: float = 0.0) -> Path:
    """The log of a figure's render, or of its part from `start` seconds on."""
    part = f".from{start:.1f}s" if start else ""
    return settings.cache_root() / "logs" / f"{fig.id}.{quality}{part}.log"


@dataclass(frozen=True)
class Rendered:
    video: Path  # manim's mp4, silent (a part that began after the figure's last play has none)
    srt: Path  # its subcaptions
    track: Path  # the whole narration track (see scenes/base.py); a part told to stop early has none
    progress: Path  # the seconds of video rendered so far, rewritten after every play
    partials: Path  # manim's folder of partial movies, one per play it drew, named by the play's number


@contextmanager
def work_folder(fig: Figure, quality: str) -> Iterator[Path]:
    """A private manim media folder for one render, locked while in use and removed after.

    Two builds rendering the same figure never share manim's files, and
    ``lecture clean`` leaves a folder alone while its lock is held.
    """
    with scratch.owned_folder(work_root(), f"{fig.id}.{quality}.") as folder:
        yield folder


def progress_file(media_dir: Path) -> Path:
    """Where a render in `media_dir` reports how far it is (see scenes/base.py)."""
    return media_dir / "progress"


def stop_file(media_dir: Path) -> Path:
    """Where the build tells a render in `media_dir` to stop early (see scenes/segments.py)."""
    return media_dir / "stop"


def outputs(fig: Figure, quality: str, media_dir: Path) -> Rendered:
    """Where manim, run in `media_dir`, writes the figure's files."""
    folder = media_dir / "videos" / fig.chapter / QUALITIES[quality]
    return Rendered(
        folder / f"{fig.id}.mp4",
        folder / f"{fig.id}.srt",
        media_dir / "narration.wav",
        progress_file(media_dir),
        folder / "partial_movie_files" / fig.scene_class,
    )


def render(
    fig: Figure, quality: str, media_dir: Path, env: dict[str, str] | None = None, start: float = 0.0
) -> Rendered:
    """Run manim on one figure's scene in `media_dir` (with `env` added to its environment), from `start`
    seconds on (a part of it: scenes/segments.py); raises BuildError with the log's tail."""
    out = outputs(fig, quality, media_dir)
    log = log_path(fig, quality, start)
    args = [
        "render",
        "-q",
        quality,
        "--config_file",
        str(one_figure_cfg()),
        "--media_dir",
        str(media_dir),
        "-o",
        fig.id,
        "--progress_bar",
        "none",
        str(catalogue.chapter(fig.chapter).scene_file),
        fig.scene_class,
    ]
    part = {settings.FROM_SECONDS_ENV: repr(start), settings.STOP_FILE_ENV: str(stop_file(media_dir))}
    log.parent.mkdir(parents=True, exist_ok=True)
    exit_code = launch.run_manim(args, {**render_env(quality, out.track, out.progress), **part, **(env or {})}, log)
    told_to_stop = stop_file(media_dir).exists()
    missing = [
        name
        for name, path, needed in (("video", out.video, start == 0), ("narration track", out.track, not told_to_stop))
        if needed and not path.exists()
    ]
    if exit_code != 0 or missing:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-25:])
        wrote = f"wrote no {' or '.join(missing)}" if missing else f"failed (exit {exit_code})"
        raise BuildError(f"manim {wrote} on {fig.chapter}/{fig.id}; log {log}:\n{tail}")
    return out
