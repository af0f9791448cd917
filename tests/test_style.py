"""The palette by role: no two meanings look alike, and the named placements put things where they say."""

import itertools
import re

import pytest
from coloraide import Color
from manim import Square

from scenes import style

MIN_DELTA_E = 10  # CIE76: about the least two colours differ by to read apart at a glance


def _inks() -> dict[str, str]:
    """Every colour token of style.py but the surfaces and the declared aliases, by name."""
    tokens = {
        name: value
        for name, value in vars(style).items()
        if name.isupper() and isinstance(value, str) and re.fullmatch(r"#[0-9A-Fa-f]{6}", value)
    }
    return {name: value for name, value in tokens.items() if name not in style.SURFACES and name not in style.ALIASES}


def test_no_two_inks_look_alike():
    close = [
        f"{a} {x} and {b} {y}: ΔE {Color(x).delta_e(y):.1f}"
        for (a, x), (b, y) in itertools.combinations(sorted(_inks().items()), 2)
        if Color(x).delta_e(y) < MIN_DELTA_E
    ]
    assert not close, (
        "closer than ΔE 10 (declare an alias in style.ALIASES if the same colour is meant):\n" + "\n".join(close)
    )


def test_the_check_catches_a_colour_that_copies_another(monkeypatch):
    monkeypatch.setattr(style, "VERDICT_GOOD", style.BF16)  # what the palette had before it went by role
    with pytest.raises(AssertionError, match=re.escape("BF16 #83C167 and VERDICT_GOOD #83C167: ΔE 0.0")):
        test_no_two_inks_look_alike()


def test_an_alias_is_the_colour_it_names():
    for alias, name in style.ALIASES.items():
        assert getattr(style, alias) == getattr(style, name), alias
    assert set(style.SURFACES) <= set(vars(style))


def test_every_ink_reads_on_the_background():
    faint = [name for name, value in _inks().items() if Color(value).delta_e(style.BACKGROUND) < 30]
    assert not faint


def test_above_captions_sits_a_shape_just_above_the_band():
    low = Square(1).move_to((2, -3.5, 0))
    style.above_captions(low)
    assert low.get_bottom()[1] == pytest.approx(style.CAPTION_TOP + style.GAP_M)
    assert low.get_center()[0] == pytest.approx(2)
    style.above_captions(low, buff=style.FLUSH)
    assert low.get_bottom()[1] == pytest.approx(style.CAPTION_TOP)
