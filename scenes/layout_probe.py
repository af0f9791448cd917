"""The layout lint's eyes inside a running scene: what is on screen, as boxes in frame units.

``lecture check --layout`` runs each figure with animations skipped and
``LECTURE_LAYOUT_OUT`` naming a file; ``narrate()`` calls :func:`look` after
each cue's trailing wait, ``tear_down`` once more at the end. Each look
appends one JSON line: every visible text (its words and box) and every
other visible shape (its class and box). The rules that judge the boxes
live in ``tools/publish/checks/layout.py``; this module only measures, so the two
sides meet in plain numbers. Outside a lint run it does nothing.

In a 3-D scene a box is taken where the camera draws it: text fixed in
frame as it is, a mobject that keeps facing the camera moved with its
projected centre, anything else projected point by point.

``lecture preview`` also wants a picture of each look. With ``LECTURE_STILLS_OUT``
naming a folder, each look is given the digest of what the camera would draw
(every visible mobject's points, colours and widths, and the camera's view): a
look whose digest is already in the folder ``LECTURE_STILLS_HAVE`` names is not
drawn again, any other is drawn once and saved as ``<digest>.png`` in the
first folder. So a change that leaves a cue's screen as it was (its words, say)
redraws nothing there.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
from manim import (
    ImageMobject,
    MarkupText,
    Mobject,
    PMobject,
    Scene,
    SingleStringMathTex,
    Text,
    Typst,
    VMobject,
    config,
)

from scenes import style
from tools.settings import LAYOUT_OUT_ENV, STILLS_HAVE_ENV, STILLS_OUT_ENV

# What counts as text: words and formulas, whatever draws them.
TEXT_CLASSES = (Text, MarkupText, Typst, SingleStringMathTex)
END = "(end)"  # the moment after the last cue: the source line is up, no caption is


def _words(mobject: Mobject) -> str:
    for name in ("original_text", "typst_code", "tex_string"):
        if isinstance(getattr(mobject, name, None), str):
            return " ".join(getattr(mobject, name).split())
    return type(mobject).__name__


def _visible(mobject: Mobject) -> bool:
    """Whether the camera would paint any of this mobject's own points (it paints only these three
    kinds: a plain Mobject with points, such as a ValueTracker, is never drawn)."""
    if not mobject.has_points() or not isinstance(mobject, (VMobject, PMobject, ImageMobject)):
        return False
    if not isinstance(mobject, VMobject):
        return True
    fill = np.max(mobject.get_fill_opacities(), initial=0)
    stroke = np.max(mobject.get_stroke_opacities(), initial=0) if mobject.get_stroke_width() > 0 else 0
    return max(fill, stroke) > 0


def _on_screen(scene: Scene, mobject: Mobject) -> np.ndarray:
    """The mobject's own points where the camera draws them (3-D scenes project them)."""
    camera = scene.renderer.camera
    points = mobject.points
    if mobject in getattr(camera, "fixed_in_frame_mobjects", ()):
        return points
    if mobject in getattr(camera, "fixed_orientation_mobjects", {}):
        centre = camera.fixed_orientation_mobjects[mobject]()
        return points + (camera.project_point(centre) - centre)
    if hasattr(camera, "project_points"):
        return camera.project_points(points)
    return points


def _box(scene: Scene, parts: list[Mobject]) -> list[float] | None:
    """[left, bottom, right, top] of the visible parts, or None when nothing of them shows."""
    shown = [_on_screen(scene, m) for m in parts if _visible(m)]
    if not shown:
        return None
    points = np.concatenate(shown)
    (left, bottom), (right, top) = points[:, :2].min(axis=0), points[:, :2].max(axis=0)
    return [round(float(v), 3) for v in (left, bottom, right, top)]


def items(scene: Scene) -> list[dict]:
    """Every visible text (kind "text") and every other visible shape (kind "shape") on screen."""
    seen: set[int] = set()
    found: list[dict] = []
    camera = scene.renderer.camera
    if hasattr(camera, "reset_rotation_matrix"):
        # A 3-D camera projects with the matrix of the frame it last drew; with animations skipped, that
        # can be before the view turned (an ambient rotation turns it during the wait that ends a cue).
        camera.reset_rotation_matrix()

    def visit(mobject: Mobject) -> None:
        if id(mobject) in seen:
            return
        seen.add(id(mobject))
        if isinstance(mobject, TEXT_CLASSES):
            box = _box(scene, mobject.family_members_with_points())
            if box:
                found.append({"kind": "text", "what": _words(mobject), "box": box})
            return
        box = _box(scene, [mobject])
        if box:
            found.append({"kind": "shape", "what": type(mobject).__name__, "box": box})
        for sub in mobject.submobjects:
            visit(sub)

    for top in scene.mobjects:
        visit(top)
    return found


# -- stills for lecture preview -------------------------------------------------------------------------

# What the camera draws a mobject with, besides its points (whichever of these it has).
_DRAWN = (
    "fill_rgbas",
    "stroke_rgbas",
    "background_stroke_rgbas",
    "stroke_width",
    "background_stroke_width",
    "sheen_factor",
    "sheen_direction",
    "shade_in_3d",
    "joint_type",
    "cap_style",
    "rgbas",
    "pixel_array",
    "z_index",
)
_VIEW = ("get_phi", "get_theta", "get_gamma", "get_focal_distance", "get_zoom")


def screen_digest(scene: Scene) -> str:
    """A digest of everything the camera would paint now: two looks with one digest draw the same pixels."""
    digest = hashlib.sha256(f"{config.pixel_width}x{config.pixel_height} {config.background_color}".encode())
    camera = scene.renderer.camera
    digest.update(type(camera).__name__.encode())
    for name in _VIEW:
        if hasattr(camera, name):
            digest.update(repr(float(getattr(camera, name)())).encode())
    digest.update(np.asarray(getattr(camera, "frame_center", 0.0), dtype=float).tobytes())
    fixed = getattr(camera, "fixed_in_frame_mobjects", ())
    facing = getattr(camera, "fixed_orientation_mobjects", {})
    for mobject in [*scene.mobjects, *scene.foreground_mobjects]:
        for part in mobject.family_members_with_points():
            if not _visible(part):
                continue
            digest.update(f"{type(part).__name__} {part in fixed} {part in facing}".encode())
            digest.update(np.ascontiguousarray(part.points).tobytes())
            for name in _DRAWN:
                value = getattr(part, name, None)
                if isinstance(value, np.ndarray):
                    digest.update(np.ascontiguousarray(value).tobytes())
                elif value is not None and not callable(value):
                    digest.update(repr(value).encode())
    return digest.hexdigest()[:32]


def _still(scene: Scene) -> dict | None:
    """The look's still for lecture preview: its digest, drawn into LECTURE_STILLS_OUT unless already there."""
    out = os.environ.get(STILLS_OUT_ENV)
    if not out:
        return None
    name = screen_digest(scene)
    have = os.environ.get(STILLS_HAVE_ENV)
    if have and (Path(have) / f"{name}.png").exists():
        return {"still": name, "drawn": False}
    renderer = scene.renderer
    renderer.static_image = None  # the next play saves its own; drawn over it, a static mobject would show twice
    renderer.update_frame(scene, ignore_skipping=True)
    # A copy: the camera's image shares its pixels, which the next look draws over while this one is saved.
    image = renderer.camera.get_image(renderer.camera.pixel_array.copy())
    _saving.append(_saver().submit(_save_png, image, Path(out) / f"{name}.png"))
    return {"still": name, "drawn": True}


_saving: list[Future] = []  # the stills being written; the look at END waits for them


@functools.cache
def _saver() -> ThreadPoolExecutor:
    """One thread that writes the stills while the scene runs on (PNG's compression lets go of the GIL)."""
    return ThreadPoolExecutor(max_workers=1)


def _save_png(image, target: Path) -> None:
    # zlib's fastest level: a still is a local preview, drawn on every save; level 6 took three times as long
    image.save(target.with_suffix(".part"), format="PNG", compress_level=1)
    os.replace(target.with_suffix(".part"), target)


def _stills_written() -> None:
    """Wait for every still to be in place (raising a failed write's error)."""
    while _saving:
        _saving.pop().result()


def _frame_seconds(scene: Scene) -> float:
    """How long the camera takes to draw the last frame whole: the build's guess at what a figure never
    rendered costs a frame (a turning 3-D surface costs many times a flat figure's, whose video is no longer)."""
    renderer = scene.renderer
    renderer.static_image = None
    began = time.perf_counter()
    renderer.update_frame(scene, ignore_skipping=True)
    return round(time.perf_counter() - began, 4)


def _cue_start(scene: Scene) -> float | None:
    """When the cue that just ended began: its first caption line's start (the lines since the last look)."""
    lines = scene.renderer.file_writer.subcaptions
    seen = getattr(scene, "_probe_captions_seen", 0)
    scene._probe_captions_seen = len(lines)
    return round(lines[seen].start.total_seconds(), 3) if len(lines) > seen else None


def look(scene: Scene, moment: str, **more) -> None:
    """Append what is on screen at `moment` (a cue id, or END) to the lint's file, with `more` (the last look:
    where each fact was seen, scenes/sightings.py); no-op outside a lint."""
    out = os.environ.get(LAYOUT_OUT_ENV)
    if not out:
        return
    record = {
        "figure": scene.figure.id,
        "moment": moment,
        "items": items(scene),
        "frame": {
            "width": config.frame_width,
            "height": config.frame_height,
            "edge": style.EDGE,
            "caption_band": style.CAPTION_BAND,
        },
        "waivers": [[*pair, why] for pair, why in getattr(type(scene), "LAYOUT_WAIVERS", {}).items()],
        **more,
    }
    if os.environ.get(STILLS_OUT_ENV):  # lecture preview: when the cue began and ended, and its still
        record.update(start=_cue_start(scene), end=round(float(scene.time), 3), **_still(scene))
    elif moment == END:
        record["frame_seconds"] = _frame_seconds(scene)
    if moment == END:
        _stills_written()
    with open(out, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")
