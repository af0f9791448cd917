"""Manim-free tools: every on-screen number, its checks, narration and the build."""

import warnings

# pydub looks for ffmpeg at import; we only read and write WAV, which it
# handles natively, so the warning would be noise.
warnings.filterwarnings("ignore", message="Couldn't find ffmpeg or avconv", category=RuntimeWarning)
