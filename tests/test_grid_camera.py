"""The figures' cameras hand Cairo numbers on a fixed grid (scenes/grid_camera.py), so that points a few ulps
apart, as numpy's SIMD paths and OpenBLAS's cores leave them on two machines, draw the same pixels."""

import numpy as np
import pytest
from manim import WHITE, VGroup, VMobject
from manim.camera.camera import Camera

from scenes.base import LectureScene, LectureScene3D
from scenes.grid_camera import GRID, GridCamera, GridThreeDCamera, snapped

NUDGE = 1e-13  # frame units: about 500 ulps of a coordinate near 2, far below the grid's step


def test_numbers_a_few_ulps_apart_snap_to_one_multiple_of_the_grid():
    values = np.array([0.0, 1.0, -2.8, 3.1415926535, 7.111, 1e-9, -4.0 + 1e-7])
    for ulps in (1, 4, 64):
        up, down = values.copy(), values.copy()
        for _ in range(ulps):
            up, down = np.nextafter(up, np.inf), np.nextafter(down, -np.inf)
        assert np.array_equal(snapped(up), snapped(values))
        assert np.array_equal(snapped(down), snapped(values))
    assert np.array_equal(snapped(values) / GRID, np.rint(snapped(values) / GRID))
    assert np.abs(snapped(values) - values).max() <= GRID / 2
    assert snapped(2.75) == 2.75  # a multiple of the grid stays where it is


def _bands(camera_kind: type, nudge: float) -> np.ndarray:
    """256 white bands, each with its top edge on a tie of Cairo's rounding to 1/256 px (one per step), moved
    by `nudge`; the frame drawn by `camera_kind`."""
    camera = camera_kind(pixel_width=40, pixel_height=300)
    top = camera.frame_center[1] + camera.frame_height / 2
    per_px = camera.frame_height / camera.pixel_height
    bands = VGroup()
    for i in range(256):
        upper = top - (i + 10 + (i + 0.5) / 256) * per_px + nudge
        lower = upper - 0.4 * per_px
        band = VMobject(fill_color=WHITE, fill_opacity=1, stroke_width=0)
        band.set_points_as_corners([[-1, upper, 0], [1, upper, 0], [1, lower, 0], [-1, lower, 0], [-1, upper, 0]])
        bands.add(band)
    camera.capture_mobject(bands)
    return camera.pixel_array[..., :3].astype(int)


def test_edges_a_hair_apart_draw_different_pixels_through_manims_camera_and_the_same_on_the_grid():
    """The hazard, then its cure: with plain manim an edge on one of Cairo's rounding ties is antialiased one way
    or the other as it moves 10⁻¹³ either way (about 500 ulps); the figures' camera draws both the same."""
    plain = np.abs(_bands(Camera, -NUDGE) - _bands(Camera, NUDGE)).max(axis=2)
    assert (plain > 8).sum() > 20, "Cairo no longer rounds these ties two ways: the grid may not be needed"
    on_grid = np.abs(_bands(GridCamera, -NUDGE) - _bands(GridCamera, NUDGE))
    assert on_grid.max() == 0


def test_every_figure_draws_with_the_grid_cameras_and_3d_points_are_snapped_after_the_projection():
    assert LectureScene.camera_kind is GridCamera
    assert LectureScene3D.camera_kind is GridThreeDCamera
    camera = GridThreeDCamera()
    camera.set_phi(1.1)
    camera.set_theta(-0.7)
    face = VMobject().set_points_as_corners([[0.3, 0.1, 0.9], [1.7, -0.2, 0.4], [0.9, 1.3, -0.6]])
    shown = camera.transform_points_pre_display(face, face.points)
    assert np.array_equal(shown / GRID, np.rint(shown / GRID))
    projected = camera.project_points(face.points)  # manim's own, unsnapped
    assert np.abs(shown - projected).max() <= GRID / 2
    assert not np.array_equal(shown, projected)


@pytest.mark.parametrize("kind", [GridCamera, GridThreeDCamera])
def test_stroke_widths_and_colours_reach_cairo_on_the_grid(kind):
    """A stroke 4.000000001 wide and a colour channel a hair off 0.5 are handed to Cairo as 4 × 0.01 and 0.5."""
    seen = {}

    class Recorder:
        def set_line_width(self, width):
            seen["width"] = width

        def set_source_rgba(self, *rgba):
            seen["rgba"] = rgba

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    camera = kind()
    line = VMobject(stroke_width=4.000000001, stroke_opacity=1).set_points_as_corners([[0, 0, 0], [1, 0, 0]])
    line.set_stroke(color="#808080")
    line.stroke_rgbas = np.array([[0.5 + 1e-12, 0.25, 0.125 - 1e-12, 1.0]])
    camera.apply_stroke(Recorder(), line)
    assert seen["width"] == snapped(4 * camera.cairo_line_width_multiple)
    assert seen["rgba"] == (0.125, 0.25, 0.5, 1.0)
