"""Where things live and what the environment chose, read in one place.

``LECTURE_RENDERS`` (default ``renders/``) is where builds publish,
``LECTURE_CACHE`` (default ``.cache/``) holds narration audio, manim work
files and logs, and ``LECTURE_VOICE`` picks the speech engine; the
``command`` engine runs ``LECTURE_VOICE_COMMAND``, hands it the cue as
``LECTURE_VOICE_INPUT`` (``text`` or ``pinyin``) and keys its cache on the
files in ``LECTURE_VOICE_FILES`` (separated by ``:``). A scene
rendered by ``lecture build`` hands its whole audio track to the build
through the file named in ``LECTURE_AUDIO_OUT``; a scene run by the layout
lint appends what it shows at each cue to the file named in ``LECTURE_LAYOUT_OUT``.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENES_DIR = ROOT / "scenes"
NARRATION_DIR = ROOT / "narration"
MANIM_CFG = ROOT / "manim.cfg"

AUDIO_OUT_ENV = "LECTURE_AUDIO_OUT"
LAYOUT_OUT_ENV = "LECTURE_LAYOUT_OUT"


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
