"""Manim-free tools: every on-screen number, its checks, narration and the build.

Layers, each importing only those below it::

    cli                      the ``lecture`` command
    publish                  render, manifest, chapter videos, embed kit
    chapters   voice         figure facts  |  cues, speech, captions
    course                   catalogue, facts and checks, number formatting
    models                   the maths, free of facts and screens
    settings                 paths and environment, read in one place
"""

import warnings

# pydub looks for ffmpeg at import; we only read and write WAV, which it
# handles natively, so the warning would be noise.
warnings.filterwarnings("ignore", message="Couldn't find ffmpeg or avconv", category=RuntimeWarning)
