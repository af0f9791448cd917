"""The cameras every figure draws with: manim's, with each number they hand Cairo snapped to one fixed grid.

numpy picks its SIMD kernels by CPU and OpenBLAS its core, so a point computed through them (a parsed glyph,
a formula's rule, a plotted curve, a face of a 3-D surface projected by the turning camera) can come out a few
ulps apart on two machines, and so can a colour shaded from a face's normal or a stroke width scaled with its
formula. Cairo rounds a coordinate to 1/256 px and a colour to 1/65,535; a number that sits on such an edge
goes one way on one machine and the other way on another, and the same figure is antialiased differently.

Here every point (after the 3-D projection), stroke width and colour is rounded to a multiple of ``GRID``,
2⁻²⁰ frame units (1/3,900 px at 2160p, about 1/18,000 px at 480p: far below anything Cairo resolves), just
before Cairo gets it. Scaling by a power of two and rounding to an integer are exact in every SIMD path, so two
machines whose numbers differ by a few ulps hand Cairo the same ones, unless a number lies within those ulps of
the midpoint between two grid steps (odds of about 10⁻⁹ per number). What is and is not the same across
machines is in ARCHITECTURE.md ("Across machines"); tests/test_grid_camera.py shows the effect and
tests/test_last_frames.py renders with numpy's dispatch narrowed to its baseline.
"""

from __future__ import annotations

import numpy as np
from manim.camera.camera import Camera
from manim.camera.three_d_camera import ThreeDCamera

GRID = 2.0**-20  # in frame units, a power of two: x / GRID and n * GRID are exact


def snapped(values: np.ndarray) -> np.ndarray:
    """`values` rounded to the nearest multiple of GRID (a new array)."""
    return np.rint(np.asarray(values, dtype=float) / GRID) * GRID


class _WidthSnapped:
    """A Cairo context whose line width is snapped on its way in; everything else goes straight through."""

    def __init__(self, ctx) -> None:
        self._ctx = ctx

    def set_line_width(self, width: float) -> None:
        self._ctx.set_line_width(float(snapped(width)))

    def __getattr__(self, name: str) -> object:
        return getattr(self._ctx, name)


class _Snapped:
    """What both cameras hand Cairo, snapped: the points of every path and gradient, colours, stroke widths."""

    def transform_points_pre_display(self, mobject, points) -> np.ndarray:
        return snapped(super().transform_points_pre_display(mobject, points))

    def set_cairo_context_color(self, ctx, rgbas, vmobject) -> Camera:
        return super().set_cairo_context_color(ctx, snapped(rgbas), vmobject)

    def apply_stroke(self, ctx, vmobject, background: bool = False) -> Camera:
        return super().apply_stroke(_WidthSnapped(ctx), vmobject, background)


class GridCamera(_Snapped, Camera):
    """manim's Camera, drawing on the grid."""


class GridThreeDCamera(_Snapped, ThreeDCamera):
    """manim's ThreeDCamera, drawing on the grid: points are snapped after the camera projects them."""
