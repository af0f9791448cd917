"""A faster ``Mobject.copy`` for the processes that run scenes: the same copy, without the work that changes nothing.

Every Transform and fade copies its mobjects when it begins (twice for a
Transform), whether the play is rendered or skipped, and manim's
``Mobject.__deepcopy__`` hands each attribute to ``copy.deepcopy``. Profiled on
the longest figure's run with animations skipped (pipeline_bidirectional),
copying was most of its CPU, and most of that went to two things:

- each glyph of a Text keeps the parsed SVG path it was made from
  (``VMobjectFromSVGPath.path_obj``: hundreds of small svgelements objects).
  manim reads it only when the glyph is made (``generate_points``), never in a
  copy, so copies share it instead of copying it;
- the many small attributes (numbers, flags, enums, arrays, colours), each
  sent through ``copy.deepcopy``'s generic path. Here numbers and strings are
  kept, float arrays copied as numpy's own deep copy copies them, colours
  rebuilt with copied arrays; anything else still goes to ``copy.deepcopy``
  with the same memo, so shared references stay shared as before.

The result is the copy manim makes: tests/test_preview.py compares a copy
made both ways, and what each shares with the original. :func:`install` is called by the
processes that fork runs of scenes (tools/publish/rendering/warm_manim.py, the preview's
warm process); a plain ``python -m manim`` copies as manim does.
"""

from __future__ import annotations

import copy
import enum

import numpy as np

_KEPT = frozenset({int, float, bool, str, bytes, complex, type(None)})  # immutable: deepcopy returns them as they are
_color: type | None = None  # manim's ManimColor and VMobjectFromSVGPath, once installed
_svg_path: type | None = None


def install() -> None:
    """Make Mobject copies the fast way in this process (and in its forks)."""
    global _color, _svg_path
    from manim.mobject.mobject import Mobject
    from manim.mobject.svg.svg_mobject import VMobjectFromSVGPath
    from manim.utils.color.core import ManimColor

    _color, _svg_path = ManimColor, VMobjectFromSVGPath
    Mobject.__deepcopy__ = _mobject_copy


def _mobject_copy(self, memo: dict):
    """Mobject.__deepcopy__ as manim has it, with its attributes copied by :func:`_copied`."""
    cls = self.__class__
    result = cls.__new__(cls)
    memo[id(self)] = result
    shares_path = isinstance(self, _svg_path)
    for name, value in self.__dict__.items():
        setattr(result, name, value if shares_path and name == "path_obj" else _copied(value, memo))
    result.original_id = str(id(self))
    return result


def _copied(value, memo: dict):
    """copy.deepcopy(value, memo), with the common cases done directly (and recorded in memo as deepcopy does)."""
    kind = type(value)
    if kind in _KEPT or (isinstance(value, enum.Enum) and kind.__deepcopy__ is enum.Enum.__deepcopy__):
        return value
    if kind is np.ndarray and value.dtype != object:
        found = memo.get(id(value))
        if found is None:
            found = memo[id(value)] = value.copy(order="K")  # what ndarray.__deepcopy__ does for plain dtypes
        return found
    if kind is list:
        found = memo.get(id(value))
        if found is None:
            found = memo[id(value)] = []
            found.extend(_copied(item, memo) for item in value)
        return found
    if kind is _color:
        found = memo.get(id(value))
        if found is None:
            found = memo[id(value)] = kind.__new__(kind)
            found.__dict__.update({name: _copied(part, memo) for name, part in value.__dict__.items()})
        return found
    return copy.deepcopy(value, memo)
