"""Cue audio: synthesize or take the recording, clean it with pydub, cache it.

Each cue's finished WAV is cached under a sha256 key of everything that
shapes it (what the engine is handed, its name, version and settings,
the processing; or the recording's bytes), one file per key, written
atomically. An engine that reads pinyin is keyed on the cue's pinyin, so a
changed lexicon reading re-synthesizes the cues that use it and no other. A second build
with nothing changed synthesizes nothing.

An engine that says when each syllable is spoken (the neural voice) has those times moved onto the finished
audio's clock (less the silence trimmed, plus the lead) and cached beside it under the same key,
``<key>.timing.json``, written before the WAV so that a cached WAV always has them. For any other voice,
and a recording, the times are shared out by syllables (tools/voice/timing.py, ``proportional``).
"""

from __future__ import annotations

import io
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path

from pydub import AudioSegment
from pydub.silence import detect_leading_silence

from tools import settings
from tools.files import content_key, file_sha256, write_atomically
from tools.voice import timing
from tools.voice.cues import Cue
from tools.voice.engine import Engine, SpeechError
from tools.voice.timing import Timing

PROCESSING = "trim-50dB pad-80/250ms loudness-20dBFS 44.1kHz-mono v1"
TARGET_DBFS = -20.0
LEAD_MS, TAIL_MS = 80, 250


@dataclass(frozen=True)
class CueAudio:
    path: Path
    duration: float  # seconds
    source: str  # "recording" or the engine's name
    key: str  # the cache key: what a figure's render key records of this cue
    made: bool  # synthesized (or cleaned) just now, not found in the cache
    timing: Timing = ()  # when each syllable is said in it (tools/voice/timing.py)
    timed_by: str = "proportional"  # "the voice" when the engine gave the times, else the fallback's name
    damaged: str = ""  # the cached file that failed to decode, and why (deleted, then made again), if any


def cache_dir() -> Path:
    return settings.cache_root() / "narration"


def engine_input(cue: Cue, engine: Engine) -> str:
    """What the engine is handed for this cue: its pinyin or its text."""
    return cue.pinyin if engine.reads == "pinyin" else cue.speech


def cache_key(cue: Cue, engine: Engine) -> str:
    """The key the cue's finished audio is cached under: what the engine is handed and what the engine is
    (or the recording's bytes), and the processing."""
    if cue.recording is not None:
        material = {"recording": file_sha256(cue.recording)}
    else:
        material = {
            "input": engine_input(cue, engine),
            "engine": engine.name,
            "version": engine.version,
            **{f"engine.{k}": v for k, v in engine.cache_parts().items()},
        }
    material["processing"] = PROCESSING
    return content_key(material)


def wav_seconds(path: Path) -> float:
    with wave.open(str(path)) as wav:
        return wav.getnframes() / wav.getframerate()


def clean(segment: AudioSegment) -> tuple[AudioSegment, float]:
    """Trim silence at both ends, pad a little, bring to a common loudness; returns the finished audio and
    how many seconds later a moment of the raw audio comes in it (the lead less what was trimmed)."""
    segment = segment.set_frame_rate(44100).set_channels(1)
    if segment.dBFS == float("-inf"):
        return segment, 0.0
    start = detect_leading_silence(segment, silence_threshold=-50.0)
    end = len(segment) - detect_leading_silence(segment.reverse(), silence_threshold=-50.0)
    segment = segment[start:end].apply_gain(TARGET_DBFS - segment[start:end].dBFS)
    segment = AudioSegment.silent(LEAD_MS, 44100) + segment + AudioSegment.silent(TAIL_MS, 44100)
    return segment, (LEAD_MS - start) / 1000


def timing_path(wav: Path) -> Path:
    """Where the syllable times of a cached (or shipped) cue WAV are kept: beside it, under its name."""
    return wav.with_suffix(".timing.json")


def cue_timing(cue: Cue, wav: Path) -> tuple[Timing, str]:
    """When each syllable of the cue is said in its finished audio `wav`, and by what: the voice's own times
    kept beside it, else the fallback, its voiced stretch (inside the lead and tail) shared by syllables."""
    kept = timing_path(wav)
    if kept.exists():
        try:
            return timing.from_json(kept.read_text(encoding="utf-8")), "the voice"
        except (OSError, ValueError):
            kept.unlink(missing_ok=True)  # damaged: the fallback stands in, and the next make replaces it
    seconds = wav_seconds(wav)
    return timing.proportional(cue.pinyin, min(LEAD_MS / 1000, seconds), max(0.0, seconds - TAIL_MS / 1000)), (
        "proportional"
    )


def _decoded_seconds(path: Path) -> float | None:
    """The length of a cached WAV, or None when it cannot be decoded (cut short, not a WAV, empty)."""
    try:
        seconds = wav_seconds(path)
    except (wave.Error, EOFError, OSError, ZeroDivisionError):
        return None
    return seconds if seconds > 0 else None


def cached_seconds(cue: Cue, engine: Engine) -> float | None:
    """The length of the cue's finished audio if it is already in the cache (and decodes), without making it."""
    target = cache_dir() / f"{cache_key(cue, engine)}.wav"
    return _decoded_seconds(target) if target.exists() else None


def cue_audio(cue: Cue, engine: Engine) -> CueAudio:
    """The cue's finished audio, from the cache when it is already there; a cached file that fails to decode
    is deleted and made again (CueAudio.damaged names it), never used."""
    source = "recording" if cue.recording is not None else engine.name
    key = cache_key(cue, engine)
    target = cache_dir() / f"{key}.wav"
    damaged = ""
    if target.exists() and _decoded_seconds(target) is None:
        damaged = f"{target} ({target.stat().st_size} bytes, not a WAV that decodes)"
        target.unlink(missing_ok=True)
    made = not target.exists()
    if made:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            raw = cue.recording or Path(tmp) / "raw.wav"
            said = None
            if cue.recording is None:
                try:
                    said = engine.synthesize(engine_input(cue, engine), raw)
                except SpeechError as err:
                    raise SpeechError(f"cue {cue.chapter}/{cue.id}: {err}") from None
            finished, later = clean(AudioSegment.from_wav(raw))
            wav = io.BytesIO()
            finished.export(wav, format="wav")
        timing_path(target).unlink(missing_ok=True)
        if said is not None:  # first, so that a WAV in the cache always has the times its voice gave
            write_atomically(timing_path(target), timing.to_json(timing.shifted(said, later, len(finished) / 1000)))
        write_atomically(target, wav.getvalue())
    said_when, timed_by = cue_timing(cue, target)
    return CueAudio(target, wav_seconds(target), source, key, made, said_when, timed_by, damaged)
