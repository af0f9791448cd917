"""The last-frame harness: a figure's last frame (480p, animations skipped) against its control PNG.

manim's own ``frames_comparison`` does not fit these scenes: it renames the
scene class (``_TestedScene``, so the figure lookup by class name fails),
gives 3-D figures a 2-D camera, ignores manim.cfg, and its tolerance trips
over cairo versions. Here the frames come from :mod:`tools.publish.checks.stills`
(the same run the layout lint judges), and control data is written only by
``pytest --set_test``, together with the drawing stack it was made with;
on another stack the comparison is skipped, saying which part differs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from helpers import ROOT
from PIL import Image, ImageChops

from tools.files import write_atomically

CONTROL = ROOT / "tests" / "control" / "last_frames"
STACK = CONTROL / "drawing_stack.json"
# Frames drawn on one stack come out identical (0 pixels changed between two runs); a pixel counts as
# changed when a channel moves by more than PIXEL_TOLERANCE, and a frame fails past MAX_CHANGED such
# pixels. gates_circuit's smallest label, the muted one-digit 「0」, moved by style.GAP_S (6 px at 480p)
# changes 144.
PIXEL_TOLERANCE = 24
MAX_CHANGED = 40


def control_png(figure: str) -> Path:
    return CONTROL / f"{figure}.png"


def store(frame: Path, control: Path) -> None:
    """Write a frame as control data: RGB (the background is opaque), compressed."""
    control.parent.mkdir(parents=True, exist_ok=True)
    Image.open(frame).convert("RGB").save(control, optimize=True)


def changed_pixels(actual: Image.Image, expected: Image.Image) -> np.ndarray:
    """A boolean mask of the pixels where some channel differs by more than PIXEL_TOLERANCE."""
    delta = np.asarray(ImageChops.difference(actual.convert("RGB"), expected.convert("RGB")))
    return delta.max(axis=2) > PIXEL_TOLERANCE


def compare(frame: Path, control: Path, diff: Path) -> str | None:
    """None when the frame matches its control within the tolerance; otherwise what differs, with a
    diff picture written to `diff` (control | this frame | the changed pixels in red over it)."""
    if not control.exists():
        return f"no control data {control.relative_to(ROOT)}: make it with pytest --set_test"
    actual, expected = Image.open(frame).convert("RGB"), Image.open(control).convert("RGB")
    if actual.size != expected.size:
        return f"frame is {actual.size}, control {expected.size}"
    mask = changed_pixels(actual, expected)
    if mask.sum() <= MAX_CHANGED:
        return None
    marked = np.asarray(actual).copy() // 3
    marked[mask] = (255, 40, 40)
    width, height = actual.size
    picture = Image.new("RGB", (3 * width, height))
    for i, part in enumerate((expected, actual, Image.fromarray(marked))):
        picture.paste(part, (i * width, 0))
    diff.parent.mkdir(parents=True, exist_ok=True)
    picture.save(diff)
    rows, cols = np.nonzero(mask)
    return (
        f"{int(mask.sum())} pixels changed (more than {MAX_CHANGED}), within x {cols.min()}–{cols.max()}, "
        f"y {rows.min()}–{rows.max()} px; diff: {diff} (control | now | changed in red); "
        "if the change is meant, regenerate with pytest --set_test"
    )


# Parts of the drawing stack this repository itself decides, the same on every machine: control data made
# before one changed is stale, and its tests fail (a skip would pass all 74 unseen, as CI once did).
OWNED_BY_THE_REPOSITORY = ("text shapes",)


def stack_mismatch(stack: dict[str, str]) -> str | None:
    """Why control data made on another drawing stack cannot judge this machine's frames, if it cannot; a
    difference in a part the repository owns fails the test instead of skipping it."""
    if not STACK.exists():
        return None
    recorded = json.loads(STACK.read_text(encoding="utf-8"))
    stale = [part for part in OWNED_BY_THE_REPOSITORY if recorded.get(part) != stack.get(part)]
    if stale:
        raise AssertionError(
            f"control data in {STACK.parent} predates this checkout's {', '.join(stale)} "
            f"(control {[recorded.get(part) for part in stale]}, here {[stack.get(part) for part in stale]}): "
            "run pytest tests/test_last_frames.py --set_test and commit what it writes"
        )
    differ = [
        f"{part}: control {recorded.get(part)!r}, here {value!r}"
        for part, value in stack.items()
        if recorded.get(part) != value
    ]
    return "; ".join(differ) or None


def record_stack(stack: dict[str, str]) -> None:
    """Written whole: under pytest-xdist every worker that stores a control frame records the stack."""
    write_atomically(STACK, json.dumps(stack, indent=2, ensure_ascii=False) + "\n")
