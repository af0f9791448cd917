"""Facts: the numbers a figure shows, and the checks that pin them.

A figure's builder computes its numbers by doing the thing (run the circuit,
the simulation, the closed form) and checks them with :class:`Check`, which
raises :class:`FactError` naming figure, fact, expected and computed value.
Plain ``assert`` is not used: ``python -O`` would strip it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from tools.course import numbers


class FactError(Exception):
    """A computed number disagrees with what the figure claims."""

    def __init__(self, figure: str, fact: str, expected: Any, computed: Any):
        self.figure, self.fact, self.expected, self.computed = figure, fact, expected, computed
        super().__init__(f"figure '{figure}', fact '{fact}': expected {expected}, computed {computed}")


@dataclass(frozen=True)
class Fact:
    """One on-screen quantity: its value, its screen text, its Mandarin reading, and where it comes from.

    `how` and `source` are for the reader, not the picture (the site's numbers panel, docs/figures.md):
    `how` is the formula with its inputs (「0.8⁵⁹」, 「2 × 80 × 8 × 128 × 2 B」) or, for an input, what it
    is (「自设参数」, 「论文 Table 4」); `source` is set where the fact's source is not its figure's own.
    A `schematic` fact is an illustrative input (示意), not a measured or derived number. None of the
    three is drawn, so none is in the render key.
    """

    value: Any
    text: str = ""
    spoken: str = ""
    how: str = ""
    source: str = ""
    schematic: bool = False

    def __str__(self) -> str:
        return self.text

    def via(self, how: str, *, source: str = "", schematic: bool = False) -> Fact:
        """The same fact, with how it is computed (or what input it is), e.g. ``scientific(s).via("0.8⁵⁹")``."""
        return replace(self, how=how, source=source or self.source, schematic=schematic or self.schematic)

    def as_json(self) -> dict:
        """The fact as `lecture facts --json`, the manifest and the embed kit give it: value, screen text,
        reading, and how it is computed, its own source and whether it is schematic where those are set."""
        value = json.loads(json.dumps(self.value, default=lambda o: o.tolist()))
        notes = {"how": self.how, "source": self.source, "schematic": self.schematic}
        return {"value": value, "text": self.text, "spoken": self.spoken} | {k: v for k, v in notes.items() if v}


def number(value: float, digits: int = 0, unit: str = "", unit_spoken: str | None = None) -> Fact:
    """A decimal number with an optional unit, e.g. number(-1) -> '−1' / 负一."""
    text = numbers.signed(value, digits)
    if unit:
        spoken = numbers.zh_quantity(text) + (unit if unit_spoken is None else unit_spoken)
        return Fact(value, f"{text} {unit}", spoken)
    return Fact(value, text, numbers.zh_decimal(text))


def scientific(value: float, digits: int = 1) -> Fact:
    """A number in scientific notation, e.g. 1.9×10⁻⁶ / 一点九乘以十的负六次方."""
    text, spoken = numbers.scientific(value, digits)
    return Fact(value, text, spoken)


def percent(fraction: float, digits: int = 1, plus: bool = False) -> Fact:
    """A fraction shown as a percentage: percent(0.821) -> '82.1%' / 百分之八十二点一."""
    text = numbers.signed(100 * fraction, digits)
    spoken = "百分之" + numbers.zh_decimal(text)
    return Fact(fraction, ("+" if plus else "") + text + "%", spoken)


def times(value: float, digits: int = 0) -> Fact:
    """A multiple: times(7.92, 1) -> '7.9×' / 七点九倍."""
    text = numbers.signed(value, digits)
    return Fact(value, text + "×", numbers.zh_quantity(text) + "倍")


def myriad(value: float, unit: str = "万", digits: int = 0, significant: int | None = None) -> Fact:
    """A count in 万 or 亿, the page's way: myriad(8_388_608) -> '839 万' / 八百三十九万.

    `significant` rounds the count first (12,276,416 at 3 -> '1,230 万').
    """
    scale = {"万": 1e4, "亿": 1e8}[unit]
    shown = float(f"{value:.{significant}g}") if significant else value
    text = numbers.signed(shown / scale, digits)
    return Fact(value, f"{text} {unit}", numbers.zh_decimal(text) + unit)


def approx(fact: Fact) -> Fact:
    """The same fact marked as rounded: '≈ 1,230 万' / 约一千二百三十万."""
    return replace(fact, text=f"≈ {fact.text}", spoken=f"约{fact.spoken}")


def power(base: int, exponent: int) -> Fact:
    """An exact power, e.g. 2⁻⁷ / 二的负七次方 (its value is base ** exponent)."""
    text, spoken = numbers.power(base, exponent)
    return Fact(base**exponent, text, spoken)


def year(value: int) -> Fact:
    """A year, e.g. 1964 / 一九六四 (the cue adds 年)."""
    return Fact(value, str(value), numbers.zh_year(value))


def data(value: Any) -> Fact:
    """Numbers the scene draws rather than prints (a trajectory, a curve)."""
    return Fact(value)


@dataclass(frozen=True)
class Checked:
    """One check a figure's builder made and passed, as docs/figures.md lists it (``catalogue.checks``).

    `kind` is the method: ``equal`` (computed == expected), ``close`` (within `rel` or `abs`), ``residual``
    (|computed| < `abs`, shown as that bound) or ``that`` (a stated property: `expected` says what holds).
    `expected` is the second route, the page's number or the property; `computed` is the builder's own.
    """

    name: str
    kind: str
    computed: Any = field(repr=False)
    expected: Any
    rel: float = 0.0
    abs: float = 0.0


class Check:
    """Checks for one figure; every failure names the figure and the fact. Each check that passes is kept in
    `checked`, in the order the builder made them, for docs/figures.md."""

    def __init__(self, figure: str):
        self.figure = figure
        self.checked: list[Checked] = []

    def fail(self, fact: str, expected: Any, computed: Any) -> None:
        raise FactError(self.figure, fact, expected, computed)

    def equal(self, fact: str, computed: Any, expected: Any) -> None:
        if computed != expected:
            self.fail(fact, expected, computed)
        self.checked.append(Checked(fact, "equal", computed, expected))

    def close(self, fact: str, computed: float, expected: float, *, rel: float = 1e-9, abs: float = 0.0) -> None:
        if not math.isclose(computed, expected, rel_tol=rel, abs_tol=abs):
            tolerance = f" (within rel {rel:g}, abs {abs:g})"
            self.fail(fact, f"{expected!r}{tolerance}", repr(computed))
        self.checked.append(Checked(fact, "close", computed, expected, rel, abs))

    def residual(self, fact: str, computed: float, bound: float) -> Fact:
        """A residual (an error, the gap between two routes to one number) is float noise: its digits change
        with the CPU and the numpy build. Check that |computed| stays below `bound`, and return the bound as
        the fact to show, 「< 10⁻⁸」, which is the same on every machine."""
        if not abs(computed) < bound:
            self.fail(fact, f"|residual| < {bound:g}", repr(computed))
        self.checked.append(Checked(fact, "residual", computed, 0.0, abs=bound))
        exponent = math.log10(bound)
        if exponent.is_integer():
            text, spoken = numbers.power(10, int(exponent))
        else:
            text, spoken = numbers.scientific(bound, 1)
        return Fact(bound, f"< {text}", f"小于{spoken}", how="两条路算出的差（浮点噪声）：只保证绝对值小于这个界")

    def that(self, fact: str, holds: bool, expected: str, computed: Any) -> None:
        """A stated property, e.g. 'one link shrinks': expected says what must hold."""
        if not holds:
            self.fail(fact, expected, computed)
        self.checked.append(Checked(fact, "that", computed, expected))
