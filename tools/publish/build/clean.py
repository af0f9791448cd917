"""``lecture clean``: delete cache entries nothing current refers to, and say how much that freed.

Kept: each current cue's audio under every engine that can speak here
(so a silent draft's cache survives a switch back to espeak), the log and
the stills (looks and last frame) of each current figure, any manim work
folder a running build holds, and the parsed text shapes of this manim that
were used in the last SHAPES_KEPT_DAYS days.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.publish.checks import stills
from tools.publish.rendering import render, scratch, text_shapes
from tools.voice import audio, cues, speech

SHAPES_KEPT_DAYS = 30  # a text edited away leaves its shape; one unread this long is deleted


def _size(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _current_audio_keys() -> set[str]:
    keys = set()
    for make in speech.ENGINES.values():
        try:
            engine = make()
            keys |= {audio.cache_key(cue, engine) for fig in catalogue.figures() for cue in cues.figure_cues(fig.id)}
        except speech.SpeechError:  # an engine this machine lacks keeps nothing
            continue
    return keys


def stale_entries() -> list[Path]:
    """Cache files and folders that nothing current refers to."""
    stale = []
    narration = audio.cache_dir()
    if narration.is_dir():
        keep = _current_audio_keys()
        # <key>.wav and its syllable times, <key>.timing.json
        stale += [p for p in sorted(narration.iterdir()) if p.name.split(".", 1)[0] not in keep]
    work = render.work_root()
    if work.is_dir():
        stale += [p for p in sorted(work.iterdir()) if not scratch.in_use(p)]
    current = {fig.id for fig in catalogue.figures()}
    for folder in (settings.cache_root() / "logs", stills.cache_dir()):
        if folder.is_dir():
            stale += [
                p
                for p in sorted(folder.iterdir())
                if not p.name.startswith(".") and p.name.split(".", 1)[0] not in current
            ]
    return stale + _stale_shapes()


def _stale_shapes() -> list[Path]:
    """Shape folders of another manim or svgelements, and shapes of this one unread for SHAPES_KEPT_DAYS."""
    root, current = text_shapes.folder().parent, text_shapes.folder()
    stale = [p for p in sorted(root.iterdir()) if p != current] if root.is_dir() else []
    cutoff = time.time() - SHAPES_KEPT_DAYS * 86400
    if current.is_dir():
        stale += [p for p in sorted(current.glob("*.pickle")) if p.stat().st_mtime < cutoff]
    return stale


def clean(say: Callable[[str], None] = print) -> int:
    """Delete the stale cache entries; returns the bytes freed."""
    freed = 0
    entries = stale_entries()
    for path in entries:
        freed += _size(path)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    say(
        f"removed {len(entries)} cache entr{'y' if len(entries) == 1 else 'ies'} from {settings.cache_root()}, "
        f"freed {freed / 2**20:.1f} MiB"
    )
    return freed
