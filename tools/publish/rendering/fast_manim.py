"""manim with what makes the project's renders cheaper and changes none of their pixels: mobjects copied the fast
way (mobject_copy.py), parsed texts shared (text_shapes.py), 3-D faces' shading kept (face_cache.py).

The fork server installs them once, before it forks any render (warm_manim.py). A render that cannot be forked
from it (a Dask worker that runs as a daemonic process, or a render whose malloc fill differs from the running
server's) runs ``python -m tools.publish.rendering.fast_manim ARGS`` as it would run ``python -m manim ARGS``:
it pays for importing manim, not for drawing without them (saddle_3d_rotating's faces took a third of its
render, every text's parse about 40 ms).
"""

from tools.publish.rendering import face_cache, mobject_copy, text_shapes


def install() -> None:
    """Install all three in this process and the forks it makes."""
    mobject_copy.install()
    face_cache.install()
    text_shapes.install()


if __name__ == "__main__":
    install()
    from manim.__main__ import main

    main(prog_name="manim")
