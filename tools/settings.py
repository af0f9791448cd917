"""Where things live and what the environment chose, read in one place.

``LECTURE_RENDERS`` (default ``renders/``) is where builds publish,
``LECTURE_CACHE`` (default ``.cache/``) holds narration audio, manim work
files and logs, and ``LECTURE_VOICE`` picks the speech engine (``auto`` when unset); the
``command`` engine runs ``LECTURE_VOICE_COMMAND``, hands it the cue as
``LECTURE_VOICE_INPUT`` (``text`` or ``pinyin``) and keys its cache on the
files in ``LECTURE_VOICE_FILES`` (separated by ``:``). ``LECTURE_KIT_URL`` is the address the
course site will be served from (its snippets and oEmbed records name it). A scene
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

Every outside process runs under a time limit (:func:`time_limit`): derived from its work, never below a
floor, ``LECTURE_LIMIT_SCALE`` multiplying every derived limit and ``LECTURE_LIMIT_<KIND>`` (seconds)
replacing one kind's outright.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
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
# `lecture preview`: where a scene run by the layout lint puts a PNG of each look it has no still for yet
# (LECTURE_STILLS_OUT), and where the stills it already has are (LECTURE_STILLS_HAVE); see scenes/layout_probe.py.
STILLS_OUT_ENV = "LECTURE_STILLS_OUT"
STILLS_HAVE_ENV = "LECTURE_STILLS_HAVE"


def renders_root() -> Path:
    return Path(os.environ.get("LECTURE_RENDERS", ROOT / "renders"))


def cache_root() -> Path:
    return Path(os.environ.get("LECTURE_CACHE", ROOT / ".cache"))


def voice() -> str:
    """The speech engine's name: LECTURE_VOICE, else ``auto`` (the neural voice where it is set up, else
    espeak-ng), for every command, run through make or not, so that one machine speaks one voice."""
    return os.environ.get("LECTURE_VOICE", "auto")


def voice_command() -> str:
    return os.environ.get("LECTURE_VOICE_COMMAND", "")


def voice_input() -> str:
    return os.environ.get("LECTURE_VOICE_INPUT", "text")


def voice_files() -> list[Path]:
    return [Path(p) for p in os.environ.get("LECTURE_VOICE_FILES", "").split(os.pathsep) if p]


class SettingsError(Exception):
    """A setting that cannot work, named with its value."""


KIT_URL_ENV = "LECTURE_KIT_URL"


def kit_url() -> str:
    """Where the course site will be served from (``LECTURE_KIT_URL``, ending in ``/``), for what must name it in
    full: the oEmbed records and the snippets pasted into another site. Unset: every path relative to the kit."""
    url = os.environ.get(KIT_URL_ENV, "").strip()
    if not url:
        return ""
    if not re.fullmatch(r"https?://[^/\s?#]+(/[^\s?#]*)?", url):
        raise SettingsError(
            f"{KIT_URL_ENV}={url}: not an http(s) address of a folder; give the site's address, "
            "e.g. https://course.example.org/lectures/"
        )
    return url if url.endswith("/") else url + "/"


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


def output_folders() -> dict[str, Path]:
    """Where the commands write, by the variable that moves it."""
    return {"LECTURE_RENDERS": renders_root(), "LECTURE_CACHE": cache_root()}


def check_output_folders() -> None:
    """Refuse up front when renders or the cache cannot be written."""
    for variable, path in output_folders().items():
        writable_folder(variable, path)


def free_bytes(path: Path) -> int:
    """The room left on the disk that holds `path` (or the nearest folder above it that exists)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


# -- time limits on outside processes --------------------------------------------------------------------
# kind -> (the floor in seconds, how the derived part is worked out). A limit is the derived seconds times
# LECTURE_LIMIT_SCALE, never below the floor; LECTURE_LIMIT_<KIND> sets it outright.
LIMITS = {
    "speech": (60.0, "1 s per character the engine is handed"),
    "render": (
        300.0,
        "4 x the render's expected time: its last render's, else its video's length x a rate per quality",
    ),
    "stills": (300.0, "30 s per figure the process runs with animations skipped"),
    "join": (120.0, "2 s per second of video joined"),
    "cluster": (360.0, "the render's own limit, plus a minute to ship its files"),
    "fontconfig": (60.0, "a query of fontconfig (fc-match): its floor"),
    "search": (120.0, "0.1 s per search record Pagefind indexes"),
}
LIMIT_SCALE_ENV = "LECTURE_LIMIT_SCALE"


@dataclass(frozen=True)
class Limit:
    """How long one outside process may run, and how that was decided (for the message when it runs over)."""

    seconds: float
    kind: str  # a key of LIMITS

    @property
    def variable(self) -> str:
        return f"LECTURE_LIMIT_{self.kind.upper()}"

    @property
    def basis(self) -> str:
        if os.environ.get(self.variable):
            return f"set by {self.variable}"
        floor, derived = LIMITS[self.kind]
        return f"{derived}, at least {floor:.0f} s"

    def exceeded(self, what: str, command: str) -> str:
        """The error for a process that ran over: what it was for, its command, the limit and how to raise it."""
        return (
            f"{what}: {command} was still running after its time limit of {self.seconds:.0f} s ({self.basis}), "
            f"so it was stopped, its whole process group killed, and nothing it wrote was kept. If it needs "
            f"longer, raise the limit: {self.variable}=SECONDS, or {LIMIT_SCALE_ENV}=2 for every derived limit"
        )


def _seconds_setting(variable: str, default: float | None) -> float | None:
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise SettingsError(f"{variable}={text!r}: give a positive number of seconds (or a factor, for the scale)")
    return value


def time_limit(kind: str, derived: float = 0.0) -> Limit:
    """The time limit for one outside process of `kind` (a key of LIMITS), `derived` seconds worked out
    from its work (see LIMITS): scaled by LECTURE_LIMIT_SCALE and never below the floor, unless
    LECTURE_LIMIT_<KIND> sets it."""
    floor, _ = LIMITS[kind]
    fixed = _seconds_setting(f"LECTURE_LIMIT_{kind.upper()}", None)
    if fixed is not None:
        return Limit(fixed, kind)
    return Limit(max(floor, derived * _seconds_setting(LIMIT_SCALE_ENV, 1.0)), kind)
