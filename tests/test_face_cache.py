"""tools/publish/rendering/face_cache.py: a turning surface drawn with its faces' shading kept is drawn as manim
draws it."""

import numpy as np

from tools.publish.rendering import face_cache


def _turning_surface(monkeypatch, kept: bool) -> tuple[list[np.ndarray], list[int]]:
    """A shaded saddle drawn at five camera angles, then moved and drawn again: the frames, and how many
    faces' shadings the cache held after each frame."""
    from manim import BLUE, GREEN, UP, Surface, ThreeDScene, tempconfig
    from manim.camera.three_d_camera import ThreeDCamera

    for name in ("modified_rgbas", "get_mobjects_to_display"):  # put back as manim has them after the test
        monkeypatch.setattr(ThreeDCamera, name, getattr(ThreeDCamera, name))
    monkeypatch.setattr(face_cache, "_shaded", {})
    monkeypatch.setattr(face_cache, "_centres", {})
    if kept:
        face_cache.install()
    frames, held = [], []

    class Turning(ThreeDScene):
        def construct(self):
            saddle = Surface(
                lambda u, v: np.array([u, v, u * u - v * v]),
                u_range=[-1.5, 1.5],
                v_range=[-1.5, 1.5],
                resolution=8,
                checkerboard_colors=[BLUE, GREEN],
            )
            self.add(saddle)
            for step in range(7):
                if step == 5:
                    saddle.shift(UP)  # the faces' points change: worked out again
                self.set_camera_orientation(phi=1.1, theta=0.3 * step)
                self.renderer.update_frame(self)
                frames.append(self.renderer.get_frame().copy())
                held.append(len(face_cache._shaded))

    with tempconfig({"dry_run": True, "pixel_width": 192, "pixel_height": 108, "disable_caching": True}):
        Turning().render()
    return frames, held


def test_a_turning_surface_is_drawn_as_manim_draws_it_with_each_face_shaded_once(monkeypatch):
    manims, _ = _turning_surface(monkeypatch, kept=False)
    ours, held = _turning_surface(monkeypatch, kept=True)
    assert len(ours) == len(manims) == 7
    assert all(np.array_equal(a, b) for a, b in zip(ours, manims, strict=True))
    assert not np.array_equal(manims[0], manims[1])  # the camera did turn
    faces = held[0]
    assert faces >= 64  # 8 × 8 faces, each shaded once for its fill and once for its stroke colours
    assert held[:5] == [faces] * 5  # turning the camera shades no face again
    assert held[5] == 2 * faces  # the moved surface is new to the cache
