"""A value as the docs and the site print it, the same on every machine.

A fact is given by its screen text, which tests/test_same_numbers.py keeps machine-independent; a float that
only a check holds is printed to the most significant digits (at most six) that a relative 10⁻⁹ either way
cannot change, and a value a check compares with zero is given as its bound, never as the noise itself.
docs/figures.md (``lecture readme``) and the site's numbers panel both print checks with :func:`check_cells`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from tools.course.facts import Checked, Fact

NOISE = 1e-9  # the relative change a float's printed digits must survive
TIGHT = 1e-6  # an absolute tolerance this small is there for float noise around zero
MAX_ITEMS = 8  # a longer collection is given by its size
MAX_CHARS = 160  # a longer value is cut, saying so
_LONG_FLOAT = re.compile(r"-?\d+\.\d{7,}(?:e[-+]?\d+)?")


def _float(x: float) -> str:
    """The most digits (at most six significant) that a relative `NOISE` either way leaves as they are."""
    if x == 0:
        return "0"  # and never "-0.0", whose sign is noise
    if not math.isfinite(x):
        return str(x).replace("inf", "∞")
    for digits in range(6, 0, -1):
        text = f"{x:.{digits}g}"
        if f"{x * (1 + NOISE):.{digits}g}" == text == f"{x * (1 - NOISE):.{digits}g}":
            return text
    return f"{x:.0e}"


def cell(text: str) -> str:
    """A string as a table cell, as it is: one line, bars escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _text(text: str) -> str:
    """A string a check wrote, as a table cell: a long float repr in it (float noise) shortened."""
    return cell(_LONG_FLOAT.sub(lambda m: _float(float(m.group())), str(text)))


def shown(value: Any) -> str:
    """A value as the page prints it, the same on every machine (see the module's docstring)."""
    if isinstance(value, Fact):
        return cell(value.text) or "(drawn, not shown)"
    if isinstance(value, bool) or value is None:
        return str(value)
    if hasattr(value, "tolist") and getattr(value, "ndim", 1) == 0:  # a numpy scalar
        value = value.item()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        return str(value) if value.denominator < 10**6 else _float(float(value))
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _text(value)
    if hasattr(value, "shape"):  # a numpy array
        return f"array of shape {tuple(value.shape)}" if value.size > MAX_ITEMS else shown(value.tolist())
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        if len(items) > MAX_ITEMS:
            return f"{len(items)} entries"
        return _cut("{" + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in items) + "}")
    if isinstance(value, Iterable):
        items = list(value)
        if isinstance(value, set | frozenset):
            items = sorted(items, key=str)
        if len(items) > MAX_ITEMS:
            return f"{len(items)} values"
        return _cut("(" + ", ".join(shown(item) for item in items) + ")")
    return _text(type(value).__name__)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _tolerance(check: Checked) -> str:
    if check.kind == "close":
        parts = [f"rel {check.rel:g}" if check.rel else "", f"abs {check.abs:g}" if check.abs else ""]
        return ", ".join(p for p in parts if p) or "exact"
    if check.kind == "residual":
        return f"below {check.abs:g}"
    return "exact" if check.kind == "equal" else ""


def _near_zero(check: Checked, value: Any) -> bool:
    """A value a check takes to be zero up to a tight absolute tolerance: float noise, given as that bound."""
    try:
        return 0 < check.abs <= TIGHT and abs(float(value)) <= check.abs
    except (TypeError, ValueError):
        return False


def check_cells(check: Checked) -> dict[str, str]:
    """One check as the page and the site's numbers panel give it: name, kind, computed, expected, tolerance."""
    cells = {"name": _text(check.name), "kind": check.kind, "computed": "", "expected": "", "tolerance": ""}
    if check.kind == "that":
        return cells | {"kind": "holds", "computed": shown(check.expected)}
    if check.kind == "residual":
        return cells | {"expected": "0", "tolerance": _tolerance(check)}
    if check.kind == "equal":
        return cells | {"computed": shown(check.computed), "expected": shown(check.expected), "tolerance": "exact"}
    computed = f"≈ 0 (below {check.abs:g})" if _near_zero(check, check.computed) else shown(check.computed)
    expected = f"≈ 0 (below {check.abs:g})" if _near_zero(check, check.expected) else shown(check.expected)
    return cells | {"computed": computed, "expected": expected, "tolerance": _tolerance(check)}
