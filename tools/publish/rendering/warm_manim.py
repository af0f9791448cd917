"""What the fork server of tools/publish/rendering/launch.py imports before it forks any render: manim, with its
mobjects copied the fast way (tools/publish/rendering/mobject_copy.py), parsed texts shared (text_shapes.py) and
3-D faces' shading kept (face_cache.py); the chapter builders every figure's scene imports; and jieba's
dictionary, by which every figure's captions are cut (tools/voice/captions.py).

Imported there only. It first points the process's output at /dev/null, so
that manim's console, set up when manim is imported, finds a file and not a
terminal, as a render writing to its log does; and it moves to the
repository root, where manim reads manim.cfg when it is imported.
"""

import os

from tools import settings

os.chdir(settings.ROOT)
_null = os.open(os.devnull, os.O_WRONLY)
os.dup2(_null, 1)
os.dup2(_null, 2)
os.close(_null)

import manim  # noqa: E402  (the import is the point)
import manim.__main__  # noqa: E402, F401
import ml_dtypes  # noqa: E402, F401  (the fp8 checks' second route imports it when asked: 0.7 s, once here)

from tools.course import catalogue  # noqa: E402
from tools.publish.rendering import face_cache, mobject_copy, text_shapes  # noqa: E402
from tools.voice import captions  # noqa: E402

mobject_copy.install()
face_cache.install()
text_shapes.install()
catalogue.import_builders()
captions.segmenter()  # jieba's dictionary, which every figure's captions are cut by: a second, once here
