"""Contact sheets (tools/publish/preview/frames.py): a chapter's stills in a titled grid, Chinese set in the course
font."""

import numpy as np
from PIL import Image, ImageFont

from tools.publish.preview import frames

COLOURS = [(200, 60, 60), (60, 200, 60), (60, 60, 200), (220, 220, 60)]


def test_each_still_lands_in_its_row_and_column(tmp_path):
    rows = [
        frames.Row("gates_circuit", "电路图与三个门", [Image.new("RGB", (854, 480), c) for c in COLOURS[:2]]),
        frames.Row("exchange_rate", "三个词：导数是兑换率", [Image.new("RGB", (854, 480), c) for c in COLOURS[2:]]),
    ]
    out = frames.contact_sheet("反向传播（backprop, 480p15）", [0.5, 1.0], rows, tmp_path / "backprop-frames.png")
    picture = np.asarray(Image.open(out).convert("RGB"))
    width, height = frames.CELL
    assert picture.shape == (
        frames.TITLE_HEIGHT + frames.HEADER_HEIGHT + 2 * (height + frames.GAP) + frames.GAP,
        frames.LABEL_WIDTH + 2 * (width + frames.GAP) + frames.GAP,
        3,
    )
    for n, colour in enumerate(COLOURS):
        row, col = divmod(n, 2)
        top = frames.TITLE_HEIGHT + frames.HEADER_HEIGHT + row * (height + frames.GAP)
        left = frames.LABEL_WIDTH + col * (width + frames.GAP)
        assert tuple(picture[top + height // 2, left + width // 2]) == colour
    title_band = picture[: frames.TITLE_HEIGHT, : frames.LABEL_WIDTH * 2]
    assert (title_band.max(axis=2) > 150).sum() > 300  # the title is drawn


def test_labels_are_set_in_the_course_font():
    font = frames._font(16)
    assert isinstance(font, ImageFont.FreeTypeFont)
    assert "Noto Sans CJK" in font.getname()[0]
    assert font.getbbox("电")[2] > 10  # a glyph, not an empty box
