"""Captions: the one place their rules live. A cue's caption becomes events timed by the voice, written as SRT/VTT.

The rules are Netflix's, for Simplified Chinese, each a named number below:

- "Simplified Chinese (PRC) Timed Text Style Guide",
  https://partnerhelp.netflixstudios.com/hc/en-us/articles/215986007 (the line length, the reading speed, and
  the punctuation: inside a line a comma or a full stop is shown as a space, and no line ends with one; ？ and ！
  stay);
- "Timed Text Style Guide: General Requirements",
  https://partnerhelp.netflixstudios.com/hc/en-us/articles/215758617 (at most two lines an event, each event
  5/6 s to 7 s, at least two frames between events at any frame rate; break a line after punctuation);
- "Timed Text Style Guide: Subtitle Timing Guidelines",
  https://partnerhelp.netflixstudios.com/hc/en-us/articles/360051554394 (an event starts on the first frame of
  its audio; it may stay up to half a second past it to be read; a gap of half a second or less is closed to
  two frames, "chaining").

How this module applies them:

- An event starts when the voice begins its first character (tools/voice/timing.py: the neural voice's own
  syllable times, else the fallback's) and ends when the voice finishes its last one, held longer for the
  shortest duration and the reading speed, then chained to the next event or cut two frames before it.
- An event holds one line (SHOWN_LINES): the guide allows two, but the figures keep out of a caption band one
  line high (scenes/style.py, CAPTION_BAND), so a second line would cover what they draw.
- Events break at punctuation or between words (jieba's segmentation of the whole cue), never inside a word or
  a number (``46,956``, ``1.9×10⁻⁶``, ``ZeRO`` stay whole); a word longer than a line is the only exception.
- The transcript beside the clip keeps the caption's full punctuation; only the events are changed.

:func:`violations` checks published events against the same numbers (tests/test_caption_files.py reads every
caption file a test build publishes with it; ``lecture captions`` measures the whole course).
"""

from __future__ import annotations

import logging
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from tools.voice.timing import Span

# -- the rules, as the guides give them ------------------------------------------------------------------------

MAX_LINE_WIDTH = 16  # characters a line (SC guide: Character Limitation); a half-width one counts ½ (line_width)
MAX_LINES = 2  # lines an event (General Requirements: Line Treatment)
MIN_SECONDS = 5 / 6  # an event's shortest time on screen (General Requirements: Duration)
MAX_SECONDS = 7.0  # and its longest
MIN_GAP_FRAMES = 2  # frames between two events, whatever the frame rate (General Requirements: Frame Gap)
CHAIN_SECONDS = 0.5  # a gap this short or shorter is closed to MIN_GAP_FRAMES (Timing Guidelines: chaining)
MAX_CPS = 9  # characters a second an adult reads (SC guide: Reading Speed, adult programs)
SPACE_FOR = "，。"  # shown as a space inside a line, dropped at its end (SC guide: Punctuation)
NEVER_ENDS_A_LINE = "，。、；："  # dropped where a line ends; ？ and ！ stay
SPACE = "\u3000"  # the space shown for a comma or full stop: an ideographic one, as wide as the mark it replaces

# -- how this course applies them ------------------------------------------------------------------------------

SHOWN_LINES = 1  # lines an event is given (see the module's docstring: the caption band is one line high)

_CLAUSE_END = "。！？；，、：,;:!?"
_SENTENCE_END = "。！？!?"
_CLOSING = "）》」』”’)]"
_OPENING = "（《「『“‘(["
_OPERATORS = "＋＝×÷−＜＞≈≤≥+=/<>"  # a formula (2＋2＋12 ＝ 16) is read whole, as a number is
# A number or a Latin word, never broken: its inner dots, commas, signs and exponents included.
_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.,'×⁰¹²³⁴⁵⁶⁷⁸⁹⁻\-−]*[A-Za-z0-9⁰¹²³⁴⁵⁶⁷⁸⁹]|[A-Za-z0-9]")
_FORBIDDEN = 1e6  # inside a number or a Latin word: only where it is wider than a line
_INSIDE_WORD = 500.0  # inside a jieba word: likewise


@dataclass(frozen=True)
class Caption:
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class SpokenCue:
    """One cue as the captions need it: its caption, where its audio starts in the clip, and when the voice says
    each caption character (timing.caption_times; seconds into the cue's audio, None where nothing is said)."""

    caption: str
    start: float
    times: Sequence[Span | None]


def line_width(line: str) -> float:
    """A line's length as the guide counts it: a half-width character (Latin, digits, ASCII marks, a space) is
    half; anything else (Hanzi, full-width marks, and the ambiguous ones such as × and ⁻) is one."""
    return sum(0.5 if unicodedata.east_asian_width(c) in ("Na", "H") else 1.0 for c in line)


def shown(text: str) -> str:
    """A stretch of caption as one displayed line: a comma or full stop inside it shown as a space, none of
    NEVER_ENDS_A_LINE at its end; ？ and ！ kept."""
    text = text.strip()
    while text and (text[-1] in NEVER_ENDS_A_LINE or text[-1].isspace()):
        text = text[:-1].rstrip()
    while text and text[0] in NEVER_ENDS_A_LINE:
        text = text[1:].lstrip()
    text = re.sub(rf"\s*[{SPACE_FOR}]\s*", SPACE, text)
    return re.sub(rf" ?{SPACE} ?", SPACE, text)


@cache
def segmenter():
    """jieba, its dictionary loaded (about a second: the render fork server loads it once, for every render)."""
    import jieba  # already the readings' segmenter; imported here only when captions are made

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def words(text: str) -> list[tuple[int, int]]:
    """jieba's words of `text` as (start, end) offsets (its default, accurate mode)."""
    return [(start, end) for _, start, end in segmenter().tokenize(text)]


def inside_words(text: str) -> set[int]:
    """The offsets of `text` that fall inside one of jieba's words (a break there splits the word)."""
    return {at for start, end in words(text) for at in range(start + 1, end)}


def _inside_runs(text: str) -> set[int]:
    return {at for match in _RUN.finditer(text) for at in range(match.start() + 1, match.end())}


def _said(times: Sequence[Span | None], start: int, end: int) -> tuple[float, float] | None:
    heard = [t for t in times[start:end] if t is not None]
    return (heard[0].start, max(t.end for t in heard)) if heard else None


def _next_said(times: Sequence[Span | None], at: int) -> float | None:
    return next((t.start for t in times[at:] if t is not None), None)


def _neighbours(text: str, at: int) -> tuple[str, str]:
    left = text[:at].rstrip()
    right = text[at:].lstrip()
    return left[-1:] if left else "", right[:1] if right else ""


def _break_cost(text: str, times: Sequence[Span | None], at: int, runs: set[int], inside: set[int]) -> float:
    """How bad it is to end an event before text[at] (the cue's end is free)."""
    if at >= len(text):
        return 0.0
    if at in runs:
        return _FORBIDDEN
    left, right = _neighbours(text, at)
    if not left or not right:
        return _FORBIDDEN
    if right in _CLAUSE_END or right in _CLOSING or left in _OPENING:
        return 200.0  # a line must not start with closing punctuation, nor end with an opening one
    if left in _OPERATORS or right in _OPERATORS:
        return 200.0
    if at in inside:
        return _INSIDE_WORD
    if left in _SENTENCE_END:
        return 0.0
    if left in _CLAUSE_END:
        return 2.0
    if left.isascii() and left.isalnum() and right.isascii() and right.isalpha():
        return 200.0  # a number keeps its unit: 31.4 GB
    before = _said(times, 0, at)
    after = _next_said(times, at)
    paused = before is not None and after is not None and after - before[1] >= 0.12
    if left.isascii() and left.isalnum():
        return 30.0 - 10 * paused  # a number and what it counts: 4 | 个
    if right.isascii() and right.isalnum():
        return 12.0 - 6 * paused  # before a Latin word or a number
    return 30.0 - 15 * paused  # between two words of a clause


def _event_cost(text: str, times: Sequence[Span | None], start: int, end: int) -> float:
    """How bad the event text[start:end] is, or inf where it breaks a rule (too wide, too long, says nothing)."""
    line = shown(text[start:end])
    width = line_width(line)
    said = _said(times, start, end)
    if not line or said is None or width > MAX_LINE_WIDTH * SHOWN_LINES:
        return math.inf
    if said[1] - said[0] > MAX_SECONDS:
        return math.inf
    cost = 0.15 * (MAX_LINE_WIDTH - width) ** 2
    following = _next_said(times, end)
    if following is not None and following - said[0] < max(MIN_SECONDS, width / MAX_CPS) + 0.15:
        cost += 300.0  # the next event would cut it short of the shortest duration or of its reading time
    if width <= 4:
        cost += 60.0
    inner = text[start:end].rstrip().rstrip(_CLAUSE_END)
    return cost + 25.0 * sum(inner.count(mark) for mark in _SENTENCE_END)


def cue_events(text: str, times: Sequence[Span | None]) -> list[tuple[str, float, float]]:
    """A cue's caption cut into events: (shown line, when its voice starts, when it ends), seconds into the
    cue's audio. Dynamic programming over the places an event may end, for the least total cost: full lines,
    breaks at punctuation or where the voice pauses; never inside a number or a Latin word, inside a jieba word
    only when no other way keeps the line within MAX_LINE_WIDTH."""
    return list(_cut(text, tuple(times)))


@lru_cache(maxsize=512)  # a scene times its figure's events again at every cue: each cue is cut once
def _cut(text: str, times: tuple[Span | None, ...]) -> tuple[tuple[str, float, float], ...]:
    n = len(text)
    runs, inside = _inside_runs(text), inside_words(text)
    breaks = [_break_cost(text, times, at, runs, inside) for at in range(n + 1)]
    best, back = [0.0] + [math.inf] * n, [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(end - 1, -1, -1):
            if line_width(text[start:end].strip()) > MAX_LINE_WIDTH * SHOWN_LINES + 4:
                break  # wider still further back (the 4 covers marks that shown() drops)
            if best[start] == math.inf:
                continue
            cost = best[start] + _event_cost(text, times, start, end) + breaks[end]
            if cost < best[end]:
                best[end], back[end] = cost, start
    if best[n] == math.inf:  # nothing fits (a cue without one said character): one event of the whole cue
        said = _said(times, 0, n)
        return ((shown(text), *said),) if said else ()
    events, end = [], n
    while end > 0:
        start = back[end]
        said = _said(times, start, end)
        assert said is not None  # an event that says nothing costs inf
        events.append((shown(text[start:end]), *said))
        end = start
    return tuple(events[::-1])


def gap_ms(fps: float) -> int:
    """MIN_GAP_FRAMES at `fps`, in whole milliseconds, rounded up (so a stamp rounded to the millisecond keeps it)."""
    return math.ceil(MIN_GAP_FRAMES * 1000 / fps)


def figure_events(cues: Sequence[SpokenCue], fps: float) -> list[Caption]:
    """Every event of a figure's cues, timed on the clip's clock in whole milliseconds: each starts when its voice
    starts and ends when its voice ends, held to MIN_SECONDS and to what MAX_CPS needs to read it, chained to
    the next event when the gap left is CHAIN_SECONDS or less, cut MIN_GAP_FRAMES before it, never past
    MAX_SECONDS."""
    said = [
        (line, round((cue.start + begin) * 1000), round((cue.start + end) * 1000))
        for cue in cues
        for line, begin, end in cue_events(cue.caption, cue.times)
    ]
    gap, out = gap_ms(fps), []
    for i, (line, start, voice_end) in enumerate(said):
        to_read = max(math.ceil(MIN_SECONDS * 1000), math.ceil(line_width(line) / MAX_CPS * 1000))
        end = max(voice_end, start + to_read)
        if i + 1 < len(said):
            latest = said[i + 1][1] - gap
            if end > latest or latest - end <= CHAIN_SECONDS * 1000:
                end = latest
        end = max(start + 1, min(end, start + round(MAX_SECONDS * 1000)))
        out.append(Caption(start / 1000, end / 1000, line))
    return out


# -- checking published events ---------------------------------------------------------------------------------


def violations(events: Sequence[Caption], fps: float) -> list[str]:
    """Every rule the events break, one line each naming the event (1-based, as in the SRT) and the rule."""
    found = []
    gap = MIN_GAP_FRAMES / fps - 0.0015  # a stamp is rounded to the millisecond
    for n, event in enumerate(events, 1):
        where = f"event {n} ({event.start:.3f} → {event.end:.3f}, “{event.text}”)"
        lines = event.text.split("\n")
        if len(lines) > MAX_LINES:
            found.append(f"{where}: {len(lines)} lines, over {MAX_LINES}")
        for line in lines:
            if line_width(line) > MAX_LINE_WIDTH:
                found.append(f"{where}: line “{line}” is {line_width(line):g} wide, over {MAX_LINE_WIDTH}")
            if line and line[-1] in NEVER_ENDS_A_LINE:
                found.append(f"{where}: line “{line}” ends with {line[-1]}")
            if inner := [mark for mark in SPACE_FOR if mark in line]:
                found.append(f"{where}: line “{line}” shows {''.join(inner)} (a space stands for it inside a line)")
        seconds = event.end - event.start
        if seconds < MIN_SECONDS - 0.0015:
            found.append(f"{where}: lasts {seconds:.3f} s, under {MIN_SECONDS:.3f} s")
        if seconds > MAX_SECONDS + 0.0015:
            found.append(f"{where}: lasts {seconds:.3f} s, over {MAX_SECONDS:g} s")
        width = sum(line_width(line) for line in lines)
        if seconds > 0 and width / seconds > MAX_CPS + 0.01:
            found.append(f"{where}: {width / seconds:.1f} characters a second, over {MAX_CPS}")
        if n < len(events) and events[n].start - event.end < gap:
            after = events[n]
            what = "overlaps" if after.start < event.end else f"is {1000 * (after.start - event.end):.0f} ms before"
            found.append(f"{where}: {what} event {n + 1} (at least {MIN_GAP_FRAMES} frames at {fps:g} fps between)")
    return found


def word_breaks(cue_caption: str, events: Sequence[str]) -> list[str]:
    """The event boundaries of one cue that fall inside a jieba word of its caption, each named with the word
    and whether the word is wider than a line (the only justified case)."""
    inside, spans = inside_words(cue_caption), words(cue_caption)
    found, at = [], 0
    for line in events[:-1]:
        for char in line.replace(SPACE, ""):  # walk the caption along the shown line
            at = cue_caption.index(char, at) + 1
        if at in inside:
            start, end = next((s, e) for s, e in spans if s < at < e)
            word = cue_caption[start:end]
            why = "wider than a line" if line_width(word) > MAX_LINE_WIDTH else "not justified"
            found.append(f"「{cue_caption[start:at]}|{cue_caption[at:end]}」 ({why})")
    return found


# -- files -----------------------------------------------------------------------------------------------------


def _stamp(seconds: float, sep: str) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"


def to_srt(captions: list[Caption]) -> str:
    blocks = [f"{i}\n{_stamp(c.start, ',')} --> {_stamp(c.end, ',')}\n{c.text}\n" for i, c in enumerate(captions, 1)]
    return "\n".join(blocks)


def _vtt_text(text: str) -> str:
    """Cue text as WebVTT reads it: & < > escaped, or a browser takes `a<b` for a tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_vtt(captions: list[Caption]) -> str:
    """WebVTT, the text escaped; the SRT (to_srt) keeps it as written."""
    blocks = [f"{_stamp(c.start, '.')} --> {_stamp(c.end, '.')}\n{_vtt_text(c.text)}\n" for c in captions]
    return "WEBVTT\n\n" + "\n".join(blocks)


def parse_srt(text: str) -> list[Caption]:
    """Read an SRT file (as manim writes its subcaptions)."""
    captions = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.strip().splitlines()
        if len(lines) < 3:
            continue
        start, end = (_seconds(part.strip()) for part in lines[1].split("-->"))
        captions.append(Caption(start, end, "\n".join(lines[2:])))
    return captions


def parse_vtt(text: str) -> list[Caption]:
    """Read a WebVTT file as to_vtt writes it (its text unescaped)."""
    captions = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.strip().splitlines()
        timed = next((i for i, line in enumerate(lines) if "-->" in line), None)
        if timed is None:
            continue
        start, end = (_seconds(part.strip().split()[0]) for part in lines[timed].split("-->"))
        body = "\n".join(lines[timed + 1 :])
        captions.append(Caption(start, end, body.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")))
    return captions


def _seconds(stamp: str) -> float:
    h, m, s = stamp.replace(",", ".").split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def shifted(captions: list[Caption], seconds: float) -> list[Caption]:
    """The same captions, `seconds` later (a clip's place in a longer video)."""
    return [Caption(c.start + seconds, c.end + seconds, c.text) for c in captions]
