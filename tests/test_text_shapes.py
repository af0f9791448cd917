"""Parsed texts kept by content (tools/publish/rendering/text_shapes.py): a shape read back is the shape a parse
gives."""

import json
import os
import subprocess
import sys

from tools import settings

# Makes the same texts and formula in a fresh process (manim imported, the cache installed or not) and prints
# what a frame is drawn from: every part's points, colours and stroke width (the formula's fraction bar is a
# stroke Typst sets in the SVG's units and manim scales to pixels), and how many shapes the cache folder holds.
MAKE = r"""
import json, os, sys
os.chdir(sys.argv[1])
import manim
from tools.publish.rendering import text_shapes
if sys.argv[2] == "kept":
    text_shapes.install()
made = [
    manim.Text("学习率 η = 0.1", font="Noto Sans CJK SC", color="#FFCC00"),
    manim.Text("学习率 η = 0.1", font="Noto Sans CJK SC", color="#33AAFF"),
    manim.MathTypst("x^2 + 1/2"),
]
out = []
for mob in made:
    for part in mob.get_family():
        out.append(
            [
                type(part).__name__,
                part.points.round(9).tolist(),
                str(part.get_fill_color()),
                round(float(part.get_stroke_width()), 9),
                str(part.get_stroke_color()),
            ]
        )
folder = text_shapes.folder()
print(json.dumps({"parts": out, "kept": len(list(folder.glob("*.pickle"))) if folder.is_dir() else 0}))
"""


def _make(tmp_path, how: str) -> dict:
    media = tmp_path / f"media-{how}"  # a media folder of its own each time, as each render part has
    media.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", MAKE, str(media), how],
        env={**os.environ, "LECTURE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(settings.ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_shape_read_back_in_another_process_is_what_a_parse_gives(tmp_path):
    parsed = _make(tmp_path, "plain")
    first = _make(tmp_path, "kept")  # parses, and keeps one shape per text (two colours: two shapes)
    assert first["kept"] == 3
    second = _make(tmp_path, "kept")  # reads all three back
    assert second["kept"] == 3
    assert first["parts"] == parsed["parts"]
    assert second["parts"] == parsed["parts"]


def test_an_unreadable_shape_is_parsed_again_and_kept_anew(tmp_path):
    first = _make(tmp_path, "kept")
    from tools.publish.rendering import text_shapes

    folder = tmp_path / "cache" / "shapes" / text_shapes.folder().name
    kept = sorted(folder.glob("*.pickle"))
    assert len(kept) == 3
    kept[0].write_bytes(b"not a pickle")
    again = _make(tmp_path, "kept")
    assert again["parts"] == first["parts"]
    assert kept[0].read_bytes() != b"not a pickle"  # written anew from the parse
