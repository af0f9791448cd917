"""Each figure run with animations skipped (``manim -s``): what it shows at every cue, and its last frame.

The layout lint judges the looks (``scenes/layout_probe.py`` records them
while the scene runs); the last-frame tests compare the PNG (480p) with
their control data. One manim process runs a batch of one chapter's
figures, at most `jobs` at once, with the silent voice: a look depends on
where things are, not on how long a cue lasts.

Both are kept under ``.cache/stills/`` by the figure's key: its render key
(at 480p, silent voice), the probe's code, and the libraries and fonts that
draw the pixels. An unchanged figure is not run again, so a no-op
``lecture check`` or ``lecture build`` takes about a second.
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.files import TimeLimitError, content_key, file_sha256, run_limited, write_atomically
from tools.publish.keys import render_key
from tools.publish.rendering import launch, render, text_shapes
from tools.publish.rendering.render import BuildError
from tools.voice import speech

PROBE = settings.SCENES_DIR / "layout_probe.py"  # what a look records; part of the key
# The families scenes/style.py sets text in (FONT, SUPERSCRIPT_FONT); Typst brings its own fonts.
FONTS = ("Noto Sans CJK SC", "DejaVu Sans")

Say = Callable[[str], None]


@dataclass(frozen=True)
class Still:
    """One figure run with animations skipped: its looks (one per cue, then the end) and its last frame."""

    records: list[dict]
    png: Path


@functools.cache
def drawing_stack() -> dict[str, str]:
    """The versions that decide a frame's pixels: manim and numpy (which computes the figure), cairo, pango,
    Typst, each course font (from fontconfig), and how the lint's forks read kept text shapes."""
    import cairo
    import manimpango

    stack = {
        "manim": version("manim"),
        "numpy": version("numpy"),
        "cairo": cairo.cairo_version_string(),
        "pango": manimpango.pango_version(),
        "typst": version("typst"),
        "text shapes": str(text_shapes.FORMAT),
    }
    for family in FONTS:
        try:
            done = run_limited(
                ["fc-match", family, "--format=%{family[0]} %{fontversion}"],
                settings.time_limit("fontconfig"),
                f"the version of the font '{family}'",
            )
            found = done.stdout.decode(errors="replace") if done.returncode == 0 else "fontconfig not found"
        except OSError:
            found = "fontconfig not found"
        except TimeLimitError as err:
            raise BuildError(str(err)) from None
        stack[f"font {family}"] = found
    return stack


def still_key(fig: Figure) -> str:
    """The figure's render key as it runs here (480p, silent voice), the probe's code and the drawing stack."""
    material = [render_key.figure_key(fig, "l", speech.Silent()).digest, file_sha256(PROBE), drawing_stack()]
    return content_key(material)


# -- running manim -------------------------------------------------------------------------


def _batches(figures: list[Figure], jobs: int) -> list[list[Figure]]:
    """Figures in batches of one chapter each (one manim process imports one scene file), about three
    times as many as `jobs` (a fork of the render server starts in a fraction of a second), so the
    processes share the work about evenly: one chapter's lint runs one figure per fork."""
    size = max(1, math.ceil(len(figures) / (3 * max(1, jobs))))
    batches: list[list[Figure]] = []
    for chapter in dict.fromkeys(fig.chapter for fig in figures):
        own = [fig for fig in figures if fig.chapter == chapter]
        batches += [own[i : i + size] for i in range(0, len(own), size)]
    return sorted(batches, key=len, reverse=True)


def _run_batch(batch: list[Figure], work: Path) -> dict[str, Still]:
    """One manim run of the batch, forked from the render server (tools/publish/rendering/launch.py: manim imported
    once, mobjects copied the fast way). It asks for the -q l renders' environment, a 480p run as they are,
    so a -q l build's renders fork from the server the lint started."""
    media, looks, log = work / "media", work / "looks.jsonl", work / "manim.log"
    work.mkdir(parents=True)
    args = [
        "render",
        "-s",
        "-q",
        "l",
        "--config_file",
        str(render.one_figure_cfg()),
        "--media_dir",
        str(media),
        "--progress_bar",
        "none",
        str(catalogue.chapter(batch[0].chapter).scene_file),
        *(fig.scene_class for fig in batch),
    ]
    env = {**_lint_env(), settings.LAYOUT_OUT_ENV: str(looks)}
    names = ", ".join(f"{fig.chapter}/{fig.id}" for fig in batch)
    limit = settings.time_limit("stills", 30.0 * len(batch))
    try:
        code = launch.run_manim(args, env, log, limit, f"running {names} with animations skipped")
    except TimeLimitError as err:
        raise BuildError(f"{err} (log {log})") from None
    if code != 0:
        if launch.out_of_space(log, work):
            raise BuildError(f"running {names} with animations skipped: the disk is full under {work} (log {log})")
        tail = launch.log_tail(log)
        raise BuildError(f"manim failed with animations skipped on {names} (exit {code}):\n{tail}")
    records: dict[str, list[dict]] = {fig.id: [] for fig in batch}
    if looks.exists():
        for line in looks.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            records.setdefault(record["figure"], []).append(record)
    result = {}
    for fig in batch:
        pngs = sorted(media.glob(f"images/**/{fig.scene_class}_*.png"))
        if not pngs:
            raise BuildError(f"manim wrote no last frame for {fig.chapter}/{fig.id} (batch {names})")
        result[fig.id] = Still(records[fig.id], pngs[0])
    return result


def _lint_env() -> dict[str, str]:
    """A lint run's environment: the silent voice, no track, and the malloc fill of the render server that
    runs (a build starts it for its quality first), so the lint forks from it too; when none runs, a -q l
    render's. The fill changes no still (the lint writes no video): only which server a run can fork from."""
    running = launch.server_settings()
    rendered = render.render_env("l", Path(os.devnull), Path(os.devnull), reproducible=running is None)
    env = {**rendered, **(running or {}), "LECTURE_VOICE": "silent"}
    for name in (settings.AUDIO_OUT_ENV, settings.PROGRESS_OUT_ENV):
        env.pop(name, None)
    return env


def warm_up() -> None:
    """Start the render server now, so that it imports manim while the quick checks run."""
    launch.start_server(_lint_env())


def run(figures: list[Figure], work: Path, jobs: int = 2) -> dict[str, Still]:
    """Run the figures' scenes with animations skipped in `work`, `jobs` manim processes at a time."""
    batches = _batches(figures, jobs)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = pool.map(lambda pair: _run_batch(pair[1], work / f"batch{pair[0]}"), enumerate(batches))
        return {fig_id: still for part in done for fig_id, still in part.items()}


# -- the cache -----------------------------------------------------------------------------


def cache_dir() -> Path:
    return settings.cache_root() / "stills"


def _cached(fig: Figure, key: str, say: Say = print) -> Still | None:
    """The figure's cached still when its key is `key`; an entry that fails to decode is named, deleted and
    never used (None: the figure runs again)."""
    looks, png = cache_dir() / f"{fig.id}.json", cache_dir() / f"{fig.id}.png"
    try:
        text = looks.read_bytes()
    except OSError:
        return None
    try:
        stored = json.loads(text.decode("utf-8"))
        if not isinstance(stored, dict) or not isinstance(stored.get("key"), str):
            raise ValueError("not a record with a key")
        if stored["key"] == key and not (
            isinstance(stored.get("records"), list) and all(isinstance(r, dict) for r in stored["records"])
        ):
            raise ValueError("its looks are not a list of records")
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        looks.unlink(missing_ok=True)
        png.unlink(missing_ok=True)
        say(f"stills: cached {looks} could not be decoded ({err}); deleted, {fig.id} runs again")
        return None
    return Still(stored["records"], png) if stored["key"] == key and png.exists() else None


def _store(fig: Figure, key: str, still: Still) -> Still:
    """Keep a figure's last frame, then its looks with the key (written last, so a key never names a missing frame)."""
    folder = cache_dir()
    png = folder / f"{fig.id}.png"
    write_atomically(png, still.png.read_bytes())
    write_atomically(folder / f"{fig.id}.json", json.dumps({"key": key, "records": still.records}, ensure_ascii=False))
    return Still(still.records, png)


def current(figures: list[Figure], jobs: int = 2, say: Say = print) -> dict[str, Still]:
    """Each figure's looks and last frame, from the cache where its key is unchanged, else run now."""
    keys = {fig.id: still_key(fig) for fig in figures}
    found = {fig.id: _cached(fig, keys[fig.id], say) for fig in figures}
    todo = [fig for fig in figures if found[fig.id] is None]
    if todo:
        say(
            f"stills: running {len(todo)} figure{'s' * (len(todo) != 1)} with animations skipped "
            f"({len(figures) - len(todo)} unchanged)"
        )
        with tempfile.TemporaryDirectory(prefix="lecture-stills-") as work:
            ran = run(todo, Path(work), jobs)
            for fig in todo:
                found[fig.id] = _store(fig, keys[fig.id], ran[fig.id])
    return {fig.id: found[fig.id] for fig in figures}


def frame_seconds(figures: list[Figure]) -> dict[str, float]:
    """How long each figure's last frame took to draw whole in its lint run (cached under its current key),
    for the figures that have one: the build orders figures never rendered by it."""
    found = {}
    for fig in figures:
        still = _cached(fig, still_key(fig), lambda line: None)
        end = still.records[-1] if still is not None and still.records else {}
        if isinstance(end.get("frame_seconds"), float):
            found[fig.id] = end["frame_seconds"]
    return found
