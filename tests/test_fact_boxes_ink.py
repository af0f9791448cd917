"""Each box the render records for a number covers the number's ink: the pixels that change when the still at
that moment is drawn again without the number's glyphs. Three figures, run with animations skipped at 480p: a
flat one (pd_timeline: labels and lines of numbers), one with formulas set by Typst and numbers morphed into
others (exchange_rate), and the 3-D one (saddle_3d_rotating: its labels fixed in frame while the view turns; it
shows no number, so each label's box is measured the way a number's is)."""

import importlib

import numpy as np
import pytest
from manim import config, tempconfig

from scenes import layout_probe
from scenes.sightings import Sightings, _drawn, _texts_on_screen
from tools.course import catalogue
from tools.publish.publishing import fact_tracks

pytestmark = pytest.mark.slow  # three figures run in this process, their stills drawn twice per box

WIDTH, HEIGHT = 854, 480
INK = 40  # a channel moving by more than this is the number's ink (an anti-aliased edge moves less)
SLACK = 1.5  # px: the ink may reach this far past the box (the outline's anti-aliasing)
TIGHT = 3.0  # px: the box may reach this far past the ink (an edge too faint to count as ink)


def _frame(scene) -> np.ndarray:
    renderer = scene.renderer
    renderer.static_image = None  # drawn whole: a static mobject is not taken from an earlier picture
    renderer.update_frame(scene, ignore_skipping=True)
    return renderer.get_frame()[:, :, :3].astype(int)


def _ink(scene, parts) -> tuple[float, float, float, float] | None:
    """The pixel box (left, top, right, bottom) of what `parts` paint now: the still, against it without them."""
    with_them = _frame(scene)
    kept = [(part, part.fill_rgbas.copy(), part.stroke_rgbas.copy()) for part in parts]
    for part in parts:
        part.set_fill(opacity=0).set_stroke(opacity=0)
    try:
        without = _frame(scene)
    finally:
        for part, fill, stroke in kept:
            part.fill_rgbas, part.stroke_rgbas = fill, stroke
    rows, cols = np.nonzero(np.abs(with_them - without).max(axis=2) > INK)
    if not len(rows):
        return None
    return cols.min(), rows.min(), cols.max() + 1, rows.max() + 1


def _pixels(box, frame) -> tuple[float, float, float, float]:
    """A recorded box (frame units) as the published track gives it (fractions of the frame), in pixels."""
    item = {"fact": "x", "start": 0, "end": 1, "box": box, "words": "", "at": [0, 0], "formula": False, "found": "tag"}
    left, top, right, bottom = fact_tracks.sighting(item, *frame).box
    return left * WIDTH, top * HEIGHT, right * WIDTH, bottom * HEIGHT


def _compared(figure: str, monkeypatch, tmp_path, every_text: bool = False) -> list[dict]:
    """Run the figure's scene, and at every look compare each box first seen there with the ink it stands for:
    the facts' boxes, or with `every_text` each text's box (measured as a number's is)."""
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "cache"))
    fig = catalogue.figure(figure)
    scene_class = getattr(importlib.import_module(f"scenes.{fig.chapter}"), fig.scene_class)
    compared, done = [], set()
    plain = Sightings.look

    def look(self, scene):
        plain(self, scene)
        boxes = dict(self.drawn)
        if every_text:
            for text in _texts_on_screen(scene):
                parts = _drawn(text.submobjects)
                box = layout_probe._box(scene, parts) if parts else None
                if box:
                    boxes[(layout_probe._words(text), tuple(box))] = parts
        for (name, box), parts in boxes.items():
            if (name, box) in done:
                continue
            done.add((name, box))
            ink = _ink(scene, parts)
            frame = (config.frame_width, config.frame_height)
            compared.append({"what": name, "at": scene.time, "box": _pixels(list(box), frame), "ink": ink})

    monkeypatch.setattr(Sightings, "look", look)
    run = {"dry_run": True, "skip_animations": True, "disable_caching": True, "pixel_width": WIDTH}
    with tempconfig(run | {"pixel_height": HEIGHT, "frame_rate": 15, "media_dir": str(tmp_path / "media")}):
        scene_class().render()
    return compared


def _misfits(compared: list[dict]) -> list[str]:
    """Each box that misses some of its ink, or reaches well past it, or has none to cover."""
    wrong = []
    for each in compared:
        box, ink = each["box"], each["ink"]
        where = f"{each['what']} at {each['at']:.2f} s: box {np.round(box, 1).tolist()}, ink {ink}"
        if ink is None:
            wrong.append(f"{where}: nothing drawn")
        elif max(box[0] - ink[0], box[1] - ink[1], ink[2] - box[2], ink[3] - box[3]) > SLACK:
            wrong.append(f"{where}: the ink reaches past the box")
        elif max(ink[0] - box[0], ink[1] - box[1], box[2] - ink[2], box[3] - ink[3]) > TIGHT:
            wrong.append(f"{where}: the box reaches past the ink")
    return wrong


@pytest.mark.parametrize(("figure", "at_least"), [("pd_timeline", 8), ("exchange_rate", 16)])
def test_each_numbers_box_covers_its_ink_and_no_more(figure, at_least, monkeypatch, tmp_path):
    compared = _compared(figure, monkeypatch, tmp_path)
    assert len(compared) >= at_least, [c["what"] for c in compared]
    assert _misfits(compared) == []


def test_a_3d_figures_labels_fixed_in_frame_are_boxed_where_their_ink_is_while_the_view_turns(monkeypatch, tmp_path):
    compared = _compared("saddle_3d_rotating", monkeypatch, tmp_path, every_text=True)
    labels = {c["what"] for c in compared}
    assert {"这一刀：往上翘", "那一刀：往下沉", "垭口附近：坡几乎是平的", "一小步一小步地磨"} <= labels
    assert sum(c["what"] == "这一刀：往上翘" for c in compared) == 1  # one box, however the view turns
    assert _misfits(compared) == []
