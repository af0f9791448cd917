"""The engines that need no model of their own: espeak-ng's Mandarin voice, silence, and any local TTS command.

- ``espeak``: espeak-ng's Mandarin voice that reads tone-numbered pinyin (``cmn-latn-pinyin``); it is handed
  each cue's pinyin.
- ``silent``: silence as long as the text would take to say (about 4.5 Chinese characters a second), for
  drafts and fast tests.
- ``command``: any local TTS program: ``LECTURE_VOICE_COMMAND='piper --model zh.onnx --output_file {wav}'``
  gets the cue on stdin, as Hanzi text or as pinyin (``LECTURE_VOICE_INPUT``), and must write the WAV file
  ``{wav}``. Its cache key holds the command and the sha256 of each file in ``LECTURE_VOICE_FILES`` (the
  voice model), so a new model re-synthesizes and a touched one does not.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import ClassVar

from pydub import AudioSegment

from tools import settings
from tools.files import file_sha256
from tools.voice.engine import Input, SpeechError, run_program


@dataclass(frozen=True)
class Espeak:
    voice: str = "cmn-latn-pinyin"
    rate: int = 165  # words per minute, espeak-ng's -s
    name: ClassVar[str] = "espeak-ng"
    reads: ClassVar[Input] = "pinyin"

    @cached_property
    def version(self) -> str:
        return run_program([self._exe(), "--version"]).stdout.decode().strip()

    def cache_parts(self) -> dict[str, str]:
        return {"voice": self.voice, "rate": str(self.rate)}

    def synthesize(self, text: str, wav: Path) -> None:
        run_program([self._exe(), "-v", self.voice, "-s", str(self.rate), "-w", str(wav), "--stdin"], text)

    def phonemes(self, text: str) -> str:
        """espeak-ng's own phoneme transcription (``-x``) of exactly this input, unchanged."""
        command = [self._exe(), "-v", self.voice, "-s", str(self.rate), "-q", "-x", "--stdin"]
        return run_program(command, text).stdout.decode()

    @staticmethod
    def _exe() -> str:
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise SpeechError(
                "espeak-ng is not installed: run 'make videos' (or apt-get install espeak-ng), "
                "or set LECTURE_VOICE=silent for a silent draft"
            )
        return exe


@dataclass(frozen=True)
class Silent:
    chars_per_second: float = 4.5
    name: ClassVar[str] = "silent"
    reads: ClassVar[Input] = "text"
    version: ClassVar[str] = "1"  # of this way of timing silence

    def cache_parts(self) -> dict[str, str]:
        return {"chars_per_second": str(self.chars_per_second)}

    def seconds(self, text: str) -> float:
        spoken = re.sub(r"[\s，。！？；：、,.!?;:“”‘’（）()《》「」—…-]", "", text)
        return max(0.5, len(spoken) / self.chars_per_second)

    def synthesize(self, text: str, wav: Path) -> None:
        AudioSegment.silent(duration=round(self.seconds(text) * 1000), frame_rate=44100).export(wav, format="wav")


@dataclass(frozen=True)
class Command:
    """A local TTS program: `command` (a shell line with ``{wav}`` where the output goes) reads the cue on stdin."""

    command: str
    reads: Input = "text"
    files: tuple[Path, ...] = ()  # the voice model and whatever else shapes the sound
    name: ClassVar[str] = "command"

    def __post_init__(self):
        if "{wav}" not in self.command:
            raise SpeechError(f"LECTURE_VOICE_COMMAND={self.command!r} must say where the WAV goes: {{wav}}")
        if self.reads not in ("text", "pinyin"):
            raise SpeechError(f"LECTURE_VOICE_INPUT={self.reads!r}: choose text or pinyin")
        if missing := [str(f) for f in self.files if not f.is_file()]:
            raise SpeechError(f"LECTURE_VOICE_FILES: no such file: {', '.join(missing)}")

    @classmethod
    def from_settings(cls) -> Command:
        if not settings.voice_command():
            raise SpeechError(
                "LECTURE_VOICE=command needs LECTURE_VOICE_COMMAND, e.g. 'piper --model zh_CN.onnx --output_file {wav}'"
            )
        return cls(settings.voice_command(), settings.voice_input(), tuple(settings.voice_files()))

    @cached_property
    def version(self) -> str:
        """The sha256 of the program the command starts (its first word, found on PATH)."""
        program = shlex.split(self.command)[0]
        found = shutil.which(program)
        return file_sha256(Path(found)) if found else f"not found: {program}"

    @cached_property
    def _file_digests(self) -> dict[str, str]:
        return {str(f): file_sha256(f) for f in self.files}

    def cache_parts(self) -> dict[str, str]:
        return {"command": self.command, "input": self.reads, **self._file_digests}

    def synthesize(self, text: str, wav: Path) -> None:
        run_program(self.command.replace("{wav}", shlex.quote(str(wav))), text)
        if not wav.is_file() or wav.stat().st_size == 0:
            raise SpeechError(f"LECTURE_VOICE_COMMAND={self.command!r} wrote no audio to {{wav}}")
