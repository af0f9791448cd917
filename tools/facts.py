"""Facts: the numbers a figure shows, and the checks that pin them.

A figure's builder computes its numbers by doing the thing (run the circuit,
the simulation, the closed form) and checks them with :class:`Check`, which
raises :class:`FactError` naming figure, fact, expected and computed value.
Plain ``assert`` is not used: ``python -O`` would strip it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tools import numbers


class FactError(Exception):
    """A computed number disagrees with what the figure claims."""

    def __init__(self, figure: str, fact: str, expected: Any, computed: Any):
        self.figure, self.fact, self.expected, self.computed = figure, fact, expected, computed
        super().__init__(
            f"figure '{figure}', fact '{fact}': expected {expected}, computed {computed}"
        )


@dataclass(frozen=True)
class Fact:
    """One on-screen quantity: its value, its screen text, its Mandarin reading."""

    value: Any
    text: str = ""
    spoken: str = ""

    def __str__(self) -> str:
        return self.text


def number(value: float, digits: int = 0, unit: str = "", unit_spoken: str | None = None) -> Fact:
    """A decimal number with an optional unit, e.g. number(-1) -> '−1' / 负一."""
    text = numbers.signed(value, digits)
    spoken = numbers.zh_decimal(text)
    if unit:
        return Fact(value, f"{text} {unit}", spoken + (unit if unit_spoken is None else unit_spoken))
    return Fact(value, text, spoken)


def scientific(value: float, digits: int = 1) -> Fact:
    """A number in scientific notation, e.g. 1.9×10⁻⁶ / 一点九乘以十的负六次方."""
    text, spoken = numbers.scientific(value, digits)
    return Fact(value, text, spoken)


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


class Check:
    """Checks for one figure; every failure names the figure and the fact."""

    def __init__(self, figure: str):
        self.figure = figure

    def fail(self, fact: str, expected: Any, computed: Any) -> None:
        raise FactError(self.figure, fact, expected, computed)

    def equal(self, fact: str, computed: Any, expected: Any) -> None:
        if computed != expected:
            self.fail(fact, expected, computed)

    def close(self, fact: str, computed: float, expected: float, *, rel: float = 1e-9, abs: float = 0.0) -> None:
        if not math.isclose(computed, expected, rel_tol=rel, abs_tol=abs):
            tolerance = f" (within rel {rel:g}, abs {abs:g})"
            self.fail(fact, f"{expected!r}{tolerance}", repr(computed))

    def that(self, fact: str, holds: bool, expected: str, computed: Any) -> None:
        """A stated property, e.g. 'one link shrinks': expected says what must hold."""
        if not holds:
            self.fail(fact, expected, computed)
