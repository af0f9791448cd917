"""Parsed text and formula shapes, kept by content and shared by the manim processes of builds and previews.

manim makes every Text, MarkupText and Typst formula an SVG file, then parses
that file into paths: about 50 ms a text, most of what a figure's texts cost.
Every process parsed every text again: each render part and lint batch has a
media folder of its own, and manim's own cache (``SVG_HASH_TO_MOB_MAP``, off
for Text) is keyed by the file's path and by Python's per-process string
hash. A short figure rendered in two parts spent about a second of each
part's time on parses the layout lint had already done.

Here a parse is kept under the SVG file's bytes and the rest of what manim's
own key holds (how it was asked to style the file, the renderer): in memory,
and as one small pickle per shape in ``.cache/shapes/``, written whole when
it is parsed and read by any later process that makes the same text. A shape
found there is a copy of what the parse gave, so the frames are the same
with and without it (tests/test_text_shapes.py). The folder is keyed by the
versions of manim and svgelements, which do the parse. :func:`install` is
called where runs of scenes are forked (tools/publish/rendering/warm_manim.py, the
preview's warm process); a plain ``python -m manim`` parses as manim does.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.files import bytes_sha256, content_key, write_atomically

# Of the pickles and of what is made from them: a change starts a new folder, and the layout lint's stills are kept
# under it (tools/publish/checks/stills.py), so none drawn from an older way of reading shapes is used again.
# 2: a Typst shape read back has its strokes scaled to pixels, as a parse has.
FORMAT = 2

_shapes: dict[str, object] = {}  # key -> the parsed mobject (a copy, never handed out itself)
_used: list[str] = []  # the keys this process looked up, in order


@functools.cache
def _versions() -> str:
    return content_key([FORMAT, version("manim"), version("svgelements")])


def folder() -> Path:
    return settings.cache_root() / "shapes" / _versions()


def install() -> None:
    """Have every SVG-made mobject (Text, MarkupText, Typst) look its parse up here first, in this process
    and its forks."""
    from manim.mobject.svg.svg_mobject import SVGMobject

    if getattr(SVGMobject.init_svg_mobject, "kept_by_content", False):
        return
    plain = SVGMobject.init_svg_mobject

    def init_svg_mobject(self, use_svg_cache: bool):
        key = _key(self)
        if key is None:
            return plain(self, use_svg_cache)
        _used.append(key)
        found = _shapes.get(key) or _read(key)
        if found is not None:  # as manim restores a shape from its own cache
            shape = found.copy()
            self.add(*shape)
            self.id_to_vgroup_dict = shape.id_to_vgroup_dict
            _track_typst_strokes(self)
            return self
        self.generate_mobject()
        _shapes[key] = self.copy()
        _write(key, _shapes[key])
        return self

    init_svg_mobject.kept_by_content = True
    SVGMobject.init_svg_mobject = init_svg_mobject


def _track_typst_strokes(mobject) -> None:
    """A Typst formula scales the strokes its SVG sets (a fraction bar, a root's vinculum) to pixels after the parse,
    through the list of parts its parse made; a shape read back must give it that list, or those strokes stay at
    their SVG width (0.48 where the parse gives 1.215 px: the bar drawn a third as thick)."""
    if hasattr(mobject, "_stroke_width_tracked_submobjects"):
        mobject._stroke_width_tracked_submobjects = [
            part for part in mobject.get_family() if hasattr(part, "_typst_source_stroke_width")
        ]


def used() -> list[str]:
    """The keys of every shape this process made or found, each once."""
    return list(dict.fromkeys(_used))


def remember(keys: list[str]) -> None:
    """Read the shapes kept under `keys` into memory, so the forks of this process find them there (lecture
    preview's warm process, between two saves)."""
    for key in keys:
        if key not in _shapes:
            _read(key)


def _key(mobject) -> str | None:
    """The parse's key: the file's bytes and the rest of manim's own key (the class, its style defaults and
    path settings, Typst's labels, the renderer); None for a mobject with no file to read."""
    from manim import config

    try:
        data = Path(mobject.file_name).read_bytes()
    except (TypeError, OSError):
        return None
    return content_key(
        [
            type(mobject).__name__,
            repr(sorted(mobject.svg_default.items())),
            repr(sorted(mobject.path_string_config.items())),
            repr(sorted(getattr(mobject, "_svg_leaf_labels", {}).items())),
            str(config.renderer),
            bytes_sha256(data),
        ]
    )


def _read(key: str):
    """The shape another process kept under `key`, or None (also for a file that cannot be read: the text is
    parsed again and the file written anew)."""
    path = folder() / f"{key}.pickle"
    try:
        shape = pickle.loads(path.read_bytes())
        os.utime(path)  # read now: `lecture clean` keeps it
    except Exception:  # missing, or unreadable: parse it
        return None
    _shapes[key] = shape
    return shape


def _write(key: str, shape) -> None:
    """Keep `shape` for other processes, without the parsed SVG path each glyph holds (most of the bytes,
    read by manim only while it makes the glyph)."""
    from manim.mobject.svg.svg_mobject import VMobjectFromSVGPath

    copied = shape.copy()
    for part in copied.get_family():
        if isinstance(part, VMobjectFromSVGPath):
            part.path_obj = None
    # a shape that does not pickle, or a full or read-only cache: the next process parses again
    with contextlib.suppress(Exception):
        write_atomically(folder() / f"{key}.pickle", pickle.dumps(copied, protocol=pickle.HIGHEST_PROTOCOL))
