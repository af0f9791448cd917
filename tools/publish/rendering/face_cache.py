"""What manim's 3-D camera works out for each face from its points alone, worked out once per face.

A turning surface (saddle_3d_rotating) is a few hundred faces, each a small
VMobject, drawn again at every frame. For each face and frame the Cairo
ThreeDCamera computes its shaded colours (the face's normal and corners from
its points, then the light; once for the fill, twice for the strokes) and its
depth reference point for the drawing order (the centre of its anchors).
When the camera turns and the surface does not, those are the same numbers
every frame: about a third of the figure's render went to them.

Here both are kept by the exact bytes they are computed from (the face's
points, its colours, the light's position), so a face whose points or
colours change is worked out again, and what is drawn is what manim draws,
number for number (tests/test_face_cache.py draws a turning surface both
ways and compares the pixels). Only the sort key's reference point of a
mobject without submobjects or a ``z_index_group`` is kept; others are
computed as manim does.

:func:`install` is called by the processes that fork runs of scenes
(tools/publish/rendering/warm_manim.py, the preview's warm process), as
mobject_copy.py is; a plain ``python -m manim`` draws as manim does.
"""

from __future__ import annotations

import numpy as np

# Entries kept at most (each a face's bytes and its result, under a kilobyte); past it the cache starts
# again. A surface whose faces all change every frame then costs a dictionary lookup per face.
MOST = 50_000
_shaded: dict[tuple, np.ndarray] = {}
_centres: dict[tuple, np.ndarray] = {}


def install() -> None:
    """Keep the faces' shaded colours and depth reference points in this process (and in its forks)."""
    from manim.camera.three_d_camera import ThreeDCamera

    if getattr(ThreeDCamera.modified_rgbas, "kept_by_face", False):
        return
    plain_shading = ThreeDCamera.modified_rgbas

    def modified_rgbas(self, vmobject, rgbas):
        if not self.should_apply_shading or not vmobject.shade_in_3d or vmobject.get_num_points() == 0:
            return plain_shading(self, vmobject, rgbas)
        rgbas = np.asarray(rgbas)
        key = (
            type(vmobject),
            vmobject.points.tobytes(),
            rgbas.shape,
            rgbas.tobytes(),
            self.light_source.points[0].tobytes(),
        )
        found = _shaded.get(key)
        if found is None:
            found = _shaded[key] = plain_shading(self, vmobject, rgbas)
            _bound(_shaded)
        return found.copy()

    def get_mobjects_to_display(self, *args, **kwargs):
        """ThreeDCamera.get_mobjects_to_display, with each face's reference point kept."""
        mobjects = super(ThreeDCamera, self).get_mobjects_to_display(*args, **kwargs)
        rot_matrix = self.get_rotation_matrix()

        def z_key(mob) -> float:
            if not (hasattr(mob, "shade_in_3d") and mob.shade_in_3d):
                return np.inf
            return np.dot(_reference_point(mob), rot_matrix.T)[2]

        return sorted(mobjects, key=z_key)

    modified_rgbas.kept_by_face = True
    ThreeDCamera.modified_rgbas = modified_rgbas
    ThreeDCamera.get_mobjects_to_display = get_mobjects_to_display


def _reference_point(mob) -> np.ndarray:
    """mob.get_z_index_reference_point(), kept by the points of a mobject that is a family of one."""
    if mob.submobjects or hasattr(mob, "z_index_group"):
        return mob.get_z_index_reference_point()
    key = (type(mob), mob.points.tobytes())
    found = _centres.get(key)
    if found is None:
        found = _centres[key] = mob.get_z_index_reference_point()
        _bound(_centres)
    return found


def _bound(kept: dict) -> None:
    if len(kept) > MOST:
        kept.clear()
