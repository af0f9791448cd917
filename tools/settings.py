"""Where things live and what the environment chose, read in one place.

``LECTURE_RENDERS`` (default ``renders/``) is where builds publish,
``LECTURE_CACHE`` (default ``.cache/``) holds narration audio, manim work
files and logs, and ``LECTURE_VOICE`` picks the speech engine; the
``command`` engine runs ``LECTURE_VOICE_COMMAND``, hands it the cue as
``LECTURE_VOICE_INPUT`` (``text`` or ``pinyin``) and keys its cache on the
files in ``LECTURE_VOICE_FILES`` (separated by ``:``). A scene
rendered by ``lecture build`` hands its whole audio track to the build
through the file named in ``LECTURE_AUDIO_OUT`` and writes the seconds of
video rendered so far, after every play, to the file named in
``LECTURE_PROGRESS_OUT`` (the build's progress display), and takes its cue
audio from the JSON map {cue id: WAV path} named in ``LECTURE_CUE_AUDIO``
when there is one (a cluster worker never synthesizes). A segment of a
figure (scenes/segments.py) renders the plays from ``LECTURE_FROM_SECONDS``
on, until the time the build writes into the file ``LECTURE_STOP_FILE``
names. A scene run by the
layout lint appends what it shows at each cue to the file named in
``LECTURE_LAYOUT_OUT``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENES_DIR = ROOT / "scenes"
CHAPTERS_DIR = ROOT / "tools" / "chapters"
NARRATION_DIR = ROOT / "narration"
MANIM_CFG = ROOT / "manim.cfg"

AUDIO_OUT_ENV = "LECTURE_AUDIO_OUT"
LAYOUT_OUT_ENV = "LECTURE_LAYOUT_OUT"
PROGRESS_OUT_ENV = "LECTURE_PROGRESS_OUT"
CUE_AUDIO_ENV = "LECTURE_CUE_AUDIO"
FROM_SECONDS_ENV = "LECTURE_FROM_SECONDS"
STOP_FILE_ENV = "LECTURE_STOP_FILE"


def renders_root() -> Path:
    return Path(os.environ.get("LECTURE_RENDERS", ROOT / "renders"))


def cache_root() -> Path:
    return Path(os.environ.get("LECTURE_CACHE", ROOT / ".cache"))


def voice() -> str:
    return os.environ.get("LECTURE_VOICE", "espeak")


def voice_command() -> str:
    return os.environ.get("LECTURE_VOICE_COMMAND", "")


def voice_input() -> str:
    return os.environ.get("LECTURE_VOICE_INPUT", "text")


def voice_files() -> list[Path]:
    return [Path(p) for p in os.environ.get("LECTURE_VOICE_FILES", "").split(os.pathsep) if p]


class SettingsError(Exception):
    """A setting that cannot work, named with its value."""


def writable_folder(variable: str, path: Path) -> Path:
    """`path`, when files can be written there (it may not exist yet); else refuse naming the variable.

    Tried for real, with a scratch file in the nearest folder that exists, so
    a read-only mount or a file standing where the folder should be is caught
    before any work is done.
    """
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise SettingsError(f"{variable}={path}: {existing} is a file, not a folder; point {variable} at a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        raise SettingsError(
            f"{variable}={path}: cannot write in {existing} ({err.strerror}); point {variable} at a writable folder"
        ) from None
    return path


def check_output_folders() -> None:
    """Refuse up front when renders or the cache cannot be written."""
    writable_folder("LECTURE_RENDERS", renders_root())
    writable_folder("LECTURE_CACHE", cache_root())
