"""What a speech engine is: the protocol every engine meets, which form of a cue it reads, and its error.

The engines (tools/voice/engines.py: espeak-ng, silence, a local command; tools/voice/neural/engine.py: the
neural voice) import this module, and the registry that picks one by name (tools/voice/speech.py) imports
them: nothing here imports an engine back.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Literal, Protocol

from tools import settings
from tools.files import TimeLimitError, run_limited
from tools.voice.timing import Timing

Input = Literal["text", "pinyin"]


class SpeechError(Exception):
    """The speech engine is missing or failed; the message says what to do."""


class Engine(Protocol):
    """What the cue audio needs of an engine."""

    name: str  # recorded as the audio's source
    reads: Input  # which form of a cue it is handed: Cue.speech (text) or Cue.pinyin

    @property
    def version(self) -> str: ...

    def cache_parts(self) -> dict[str, str]:
        """Everything besides its input, name and version that shapes the audio (for the cache key)."""
        ...

    def synthesize(self, text: str, wav: Path) -> Timing | None:
        """Speak `text` into the WAV file `wav`; return when each syllable is said, if the engine knows
        (tools/voice/timing.py), else None (the captions then share the audio's time by syllables)."""
        ...


def run_program(command: list[str] | str, text: str = "") -> subprocess.CompletedProcess:
    """Run a program (a shell line when `command` is a str) with `text` on stdin, under the speech time limit
    (settings.LIMITS, from the length of `text`); a failure, or running over the limit, is a SpeechError."""
    shell = isinstance(command, str)
    limit = settings.time_limit("speech", float(len(text)))
    try:
        done = run_limited(command, limit, "the speech engine", text.encode())
    except TimeLimitError as err:
        raise SpeechError(str(err)) from None
    if done.returncode != 0:
        raise SpeechError(
            f"{command if shell else shlex.join(command)} failed ({done.returncode}): "
            f"{done.stderr.decode(errors='replace').strip()}"
        )
    return done
