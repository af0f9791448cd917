"""Speech engines behind one small interface: ``synthesize(text, wav_path)``.

- ``espeak``: the offline default, espeak-ng's Mandarin voice that reads
  Latin letters as pinyin (``cmn-latn-pinyin``).
- ``silent``: silence as long as the text would take to say (about 4.5
  Chinese characters a second), for drafts and fast tests.

Pick one with ``LECTURE_VOICE=espeak|silent``. A human recording of a cue
(see ``tools.voice.cues``) replaces whichever engine is chosen.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from pydub import AudioSegment

from tools import settings


class SpeechError(Exception):
    """The speech engine is missing or failed; the message says what to do."""


@dataclass(frozen=True)
class Espeak:
    voice: str = "cmn-latn-pinyin"
    rate: int = 165  # words per minute, espeak-ng's -s
    name: str = "espeak-ng"

    @cached_property
    def version(self) -> str:
        return self._run(["--version"]).stdout.decode().strip()

    def synthesize(self, text: str, out: Path) -> None:
        self._run(["-v", self.voice, "-s", str(self.rate), "-w", str(out), "--stdin"], text)

    def _run(self, args: list[str], text: str = "") -> subprocess.CompletedProcess:
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise SpeechError("espeak-ng is not installed: run 'make videos' (or apt-get install espeak-ng), "
                              "or set LECTURE_VOICE=silent for a silent draft")
        done = subprocess.run([exe, *args], input=text.encode(), capture_output=True)
        if done.returncode != 0:
            raise SpeechError(f"espeak-ng failed ({done.returncode}): {done.stderr.decode().strip()}")
        return done


@dataclass(frozen=True)
class Silent:
    chars_per_second: float = 4.5
    name: str = "silent"
    voice: str = ""
    rate: float = 4.5
    version: str = "1"

    def seconds(self, text: str) -> float:
        spoken = re.sub(r"[\s，。！？；：、,.!?;:“”‘’（）()《》「」—…-]", "", text)
        return max(0.5, len(spoken) / self.chars_per_second)

    def synthesize(self, text: str, out: Path) -> None:
        AudioSegment.silent(duration=round(self.seconds(text) * 1000), frame_rate=44100).export(out, format="wav")


ENGINES = {"espeak": Espeak, "silent": Silent}


def from_env() -> Espeak | Silent:
    choice = settings.voice()
    if choice not in ENGINES:
        raise SpeechError(f"LECTURE_VOICE={choice!r}: choose one of {', '.join(ENGINES)}")
    return ENGINES[choice]()
