"""When each part of a cue is said: the syllables' times a voice gives, and each caption character's time.

- The neural voice knows: FastSpeech2 predicts every phone's length before it makes a sample, and the audio is
  those lengths laid end to end (tools/voice/neural/worker.py). Its engine returns one :class:`Syllable` per
  syllable it says: the pinyin token it belongs to (:func:`tokens`: a Hanzi's syllable, or a Latin term,
  which may take several), its start and its length, in seconds. tools/voice/audio.py moves them to the
  finished audio's clock and caches them beside it, under the same key.
- espeak-ng, a local command and a human recording give no times: :func:`proportional` shares the finished
  audio's voiced stretch among the tokens by their syllables, with a pause mark counted as the syllables its
  silence lasts. That is the documented fallback (CONTRIBUTING.md, Voices and settings).
- :func:`caption_times`: the caption is not what is said (a fact shows ``448`` and is said 四百四十八; the
  lexicon says ``FP8`` as F P 八), so the caption is matched to the spoken text (difflib: equal stretches
  character for character, a replaced stretch as a whole) and each caption character takes the time of
  the tokens it stands for. tools/voice/captions.py places its events by these times.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from tools.voice.neural import phones

PAUSE_MARKS = ",.?!;:"  # what the pinyin keeps of a cue's punctuation (tools/voice/readings.py)
# A spoken token of the speech text, as tools/voice/readings.py hands it over in pinyin: each Hanzi is one
# syllable; any other run is a Latin term or a digit string, up to a space, a pause mark or a quotation mark.
_HANZI = "\u3400-\u4dbf\u4e00-\u9fff"
_NOT_SAID = r"\s,.?!;:，、。？！；：（）—…「」『』“”‘’《》"
_SPEECH_TOKEN = re.compile(rf"[{_HANZI}]|[^{_NOT_SAID}{_HANZI}]+")
# What a pause mark weighs in the proportional fallback, in syllables of silence (about the neural voice's
# pauses at its speaking rate: 0.2 s after a comma, 0.35 s after a full stop, some 0.2 s a syllable).
_PAUSE_SYLLABLES = {",": 1.0, ";": 1.2, ":": 1.2, ".": 1.8, "?": 1.8, "!": 1.8}


@dataclass(frozen=True)
class Syllable:
    token: int  # which token of the pinyin it says (tokens(pinyin)[token])
    start: float  # seconds into the audio
    length: float

    @property
    def end(self) -> float:
        return self.start + self.length


Timing = tuple[Syllable, ...]


def tokens(pinyin: str) -> list[str]:
    """The spoken tokens of a cue's pinyin, in order: a Hanzi's syllable (``chong2``) or a Latin term (``GPT``)."""
    return re.findall(rf"[^\s{re.escape(PAUSE_MARKS)}]+", pinyin)


def shifted(timing: Timing, seconds: float, until: float) -> Timing:
    """The same syllables `seconds` later, kept inside 0 … `until` (the audio's trimmed length)."""
    out = []
    for s in timing:
        start = min(max(0.0, s.start + seconds), until)
        out.append(Syllable(s.token, round(start, 4), round(max(0.0, min(until, s.end + seconds) - start), 4)))
    return tuple(out)


def to_json(timing: Timing) -> str:
    return json.dumps({"syllables": [[s.token, s.start, s.length] for s in timing]})


def from_json(text: str) -> Timing:
    """Syllables as to_json wrote them; ValueError when the text is not that."""
    try:
        rows = json.loads(text)["syllables"]
        return tuple(Syllable(int(token), float(start), float(length)) for token, start, length in rows)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"not a cue's syllable times ({err})") from None


def _syllables_in(token: str) -> int:
    """How many syllables a token takes to say: one for a Hanzi's, a Latin term's as the neural voice spells it."""
    return 1 if re.fullmatch(r"[a-zü]+[1-5]", token) else max(1, len(phones.latin_syllables(token)))


def proportional(pinyin: str, voiced_from: float, voiced_to: float) -> Timing:
    """The fallback: the voiced stretch of the audio shared among the pinyin's syllables, evenly, with each pause
    mark's silence counted in syllables; one Syllable per spoken token."""
    weights: list[tuple[int | None, float]] = []  # (token, syllables), None for a pause
    token = 0
    for word in re.findall(rf"[^\s{re.escape(PAUSE_MARKS)}]+|[{re.escape(PAUSE_MARKS)}]", pinyin):
        if word in PAUSE_MARKS:
            weights.append((None, _PAUSE_SYLLABLES[word]))
        else:
            weights.append((token, float(_syllables_in(word))))
            token += 1
    while weights and weights[-1][0] is None:  # the pause after the last word is in the audio's tail, not inside
        weights.pop()
    total = sum(weight for _, weight in weights) or 1.0
    step = max(0.0, voiced_to - voiced_from) / total
    out, at = [], voiced_from
    for token_at, weight in weights:
        if token_at is not None:
            out.append(Syllable(token_at, round(at, 4), round(weight * step, 4)))
        at += weight * step
    return tuple(out)


def speech_tokens(speech: str) -> list[tuple[int, int]]:
    """Where each spoken token lies in a cue's speech text (Cue.speech), as (start, end) character offsets."""
    return [match.span() for match in _SPEECH_TOKEN.finditer(speech)]


@dataclass(frozen=True)
class Span:
    start: float
    end: float


def _token_spans(pinyin: str, timing: Timing) -> list[Span | None]:
    spans: list[Span | None] = [None] * len(tokens(pinyin))
    for s in timing:
        if 0 <= s.token < len(spans):
            known = spans[s.token]
            spans[s.token] = Span(s.start, s.end) if known is None else Span(known.start, max(known.end, s.end))
    return spans


def caption_times(caption: str, speech: str, pinyin: str, timing: Timing) -> list[Span | None]:
    """For each character of the caption, when the voice says it (None for what is not said: punctuation,
    spaces). A caption stretch that the speech says otherwise (a fact's digits, a lexicon term) takes the time
    of the whole stretch said for it. When the speech's tokens do not line up with the pinyin's (a reading
    this module does not know), the cue's whole time is shared by the caption's characters instead."""
    said = _token_spans(pinyin, timing)
    places = speech_tokens(speech)
    if len(places) != len(said) or any(span is None for span in said):
        return _shared(caption, timing)
    at_char: list[Span | None] = [None] * len(speech)
    for (begin, end), span in zip(places, said, strict=True):
        for i in range(begin, end):
            at_char[i] = span
    out: list[Span | None] = [None] * len(caption)
    matcher = difflib.SequenceMatcher(None, caption, speech, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out[i1:i2] = at_char[j1:j2]
        elif op == "replace":
            heard = [span for span in at_char[j1:j2] if span is not None]
            if heard:
                whole = Span(min(s.start for s in heard), max(s.end for s in heard))
                out[i1:i2] = [whole if caption[i].strip() else None for i in range(i1, i2)]
    return [span if char.strip() and not _is_mark(char) else None for char, span in zip(caption, out, strict=True)]


def _is_mark(char: str) -> bool:
    return bool(re.fullmatch(rf"[{_NOT_SAID}]", char))


def _shared(caption: str, timing: Timing) -> list[Span | None]:
    """Every said character of the caption an even share of the cue's spoken time."""
    if not timing:
        return [None] * len(caption)
    begin, end = min(s.start for s in timing), max(s.end for s in timing)
    said = [i for i, char in enumerate(caption) if char.strip() and not _is_mark(char)]
    step = (end - begin) / max(1, len(said))
    out: list[Span | None] = [None] * len(caption)
    for n, i in enumerate(said):
        out[i] = Span(begin + n * step, begin + (n + 1) * step)
    return out
