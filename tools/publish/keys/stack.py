"""What computes, draws and voices a figure besides the project's own files: the libraries the lock pins,
and the SIMD paths numpy takes on this CPU.

The render key records it (its ``stack`` part, kept in ``manifest.json``), so a machine that installed
another numpy, or whose CPU sends numpy down other kernels, says why a figure renders again instead of
re-rendering in silence. The numbers on screen do not depend on it (tests/test_same_numbers.py), but
drawn curves and the values in the manifest may, in their last digits.
"""

from __future__ import annotations

import functools
from importlib.metadata import version

# numpy computes the facts; manim and PyAV draw and encode; pypinyin, its dictionaries and jieba choose
# the readings the voice gets.
LIBRARIES = ("numpy", "manim", "av", "pypinyin", "pypinyin-dict", "jieba")
SIMD = "numpy SIMD"


def numpy_simd() -> str:
    """numpy's baseline and the dispatch groups it runs here (those NPY_DISABLE_CPU_FEATURES leaves on)."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__

    return " ".join([*__cpu_baseline__, *(group for group in __cpu_dispatch__ if __cpu_features__.get(group))])


@functools.cache
def computing_stack() -> dict[str, str]:
    """{library: version} for LIBRARIES, and numpy's SIMD paths."""
    return {**{name: version(name) for name in LIBRARIES}, SIMD: numpy_simd()}


def differences(old: dict, new: dict) -> list[str]:
    """What changed between two stacks, e.g. ['numpy 2.4.6 → 2.5.0', 'numpy SIMD X86_V2 X86_V3 → X86_V2']."""
    return [
        f"{name} {old.get(name, 'unrecorded')} → {new.get(name, 'none')}"
        for name in {**old, **new}
        if old.get(name) != new.get(name)
    ]
