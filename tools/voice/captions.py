"""Captions: Chinese text split into short lines, timed, written as SRT/VTT.

Lines hold at most 20 characters and break where reading pauses (after
。！？，、；：), else before a Latin word or a number,
never inside a Latin word or a number (Adam, ZeRO, 46,956 stay whole).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHARS = 20
_CLAUSE_END = "。！？；，、：,;:"
_CLOSING = "）》」』”’)]"
_OPENING = "（《「『“‘(["
_DROP_AT_LINE_END = "，。、；：,;:"
# An unbreakable unit: a Latin word / number run (with its inner dots and
# commas), or any single other character.
_UNIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9.,'×⁰¹²³⁴⁵⁶⁷⁸⁹⁻\-−]*[A-Za-z0-9⁰¹²³⁴⁵⁶⁷⁸⁹]|[A-Za-z0-9]|\s+|.", re.S)


@dataclass(frozen=True)
class Caption:
    start: float
    end: float
    text: str


def _display_len(text: str) -> int:
    return len(text.strip().rstrip(_DROP_AT_LINE_END))


def _is_word(unit: str) -> bool:
    return unit[:1].isascii() and unit[:1].isalnum()


def _break_cost(units: list[str], at: int) -> float:
    """How bad it is to end a line before units[at] (the text's end is free)."""
    if at == len(units):
        return 0.0
    left = next((u for u in reversed(units[:at]) if not u.isspace()), "")
    right = next((u for u in units[at:] if not u.isspace()), "")
    if left in _CLAUSE_END:
        return 0.0
    if right in _CLAUSE_END or right in _CLOSING or left in _OPENING:
        return 200.0  # a line must not start with closing punctuation or end with an opening one
    if left[:1].isdigit() and right[:1].isalpha() and right.isascii():
        return 200.0  # a number keeps its unit: 31.4 GB, 16 B
    if _is_word(right) and not _is_word(left):
        return 15.0  # before a Latin word or a number
    return 40.0  # inside a clause: 的论文, Hochreiter | 的


def _line_cost(line: str, limit: int) -> float:
    """Prefer full lines; a very short line, or one running on past a sentence's end, costs."""
    slack = limit - _display_len(line)
    sentence_ends = sum(line.rstrip(_DROP_AT_LINE_END + "？！").count(mark) for mark in "。！？")
    return 0.2 * slack * slack + (60.0 if _display_len(line) <= 4 else 0.0) + 25.0 * sentence_ends


def _break_lines(units: list[str], limit: int) -> list[str]:
    """Lines of at most `limit` characters with the least total cost.

    Dynamic programming over the places between units: full lines are
    preferred, breaks after 。！？、，；： are free, breaks inside a clause cost,
    and a very short line costs a lot. A lone unit longer than `limit` gets
    a line of its own.
    """
    n = len(units)
    best, back = [0.0] + [float("inf")] * n, [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(end - 1, -1, -1):
            line = "".join(units[start:end]).strip()
            length = _display_len(line)
            if length > limit and end - start > 1:
                break
            if not line:
                continue
            cost = best[start] + _line_cost(line, limit) + _break_cost(units, end)
            if cost < best[end]:
                best[end], back[end] = cost, start
    lines, end = [], n
    while end > 0:
        lines.append("".join(units[back[end] : end]).strip())
        end = back[end]
    return [line for line in reversed(lines) if line]


def split_lines(text: str, limit: int = MAX_CHARS) -> list[str]:
    """Caption lines of at most `limit` characters (a lone long word may exceed it).

    Lines break where reading pauses, never inside a Latin word or a number.
    """
    return [line.rstrip(_DROP_AT_LINE_END) for line in _break_lines(_UNIT.findall(text), limit)]


def timed_lines(text: str, duration: float, limit: int = MAX_CHARS) -> list[tuple[str, float, float]]:
    """(line, offset, length) with time shared by each line's length."""
    lines = split_lines(text, limit)
    weights = [max(1, _display_len(line)) for line in lines]
    total, offset, out = sum(weights), 0.0, []
    for line, weight in zip(lines, weights):
        length = duration * weight / total
        out.append((line, offset, length))
        offset += length
    return out


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


def _seconds(stamp: str) -> float:
    h, m, s = stamp.replace(",", ".").split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def shifted(captions: list[Caption], seconds: float) -> list[Caption]:
    """The same captions, `seconds` later (a clip's place in a longer video)."""
    return [Caption(c.start + seconds, c.end + seconds, c.text) for c in captions]
