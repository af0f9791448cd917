"""Captions: Chinese text split into short lines, timed, written as SRT/VTT.

Lines break after 。！？；，、 and hold at most about 20 characters; a long
clause is cut between characters but never inside a Latin word or a
number (Adam, ZeRO, 46,956 stay whole).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHARS = 20
_CLAUSE_END = "。！？；，、"
_DROP_AT_LINE_END = "，。、；："
# An unbreakable unit: a Latin word / number run (with its inner dots and
# commas), or any single other character.
_UNIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9.,'×⁰¹²³⁴⁵⁶⁷⁸⁹⁻\-−]*[A-Za-z0-9⁰¹²³⁴⁵⁶⁷⁸⁹]|[A-Za-z0-9]|\s+|.", re.S)


@dataclass(frozen=True)
class Caption:
    start: float
    end: float
    text: str


def _clauses(text: str) -> list[str]:
    parts, current = [], ""
    for unit in _UNIT.findall(text):
        current += unit
        if unit in _CLAUSE_END:
            parts.append(current)
            current = ""
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _display_len(text: str) -> int:
    return len(text.strip().rstrip(_DROP_AT_LINE_END))


def _cut(clause: str, limit: int) -> list[str]:
    """Cut an over-long clause into near-equal pieces, between units only.

    A cut at a space (the edge of a Latin word or a number) is preferred
    when it is within a few characters of the even split.
    """
    units = _UNIT.findall(clause)
    pieces = []
    while _display_len("".join(units)) > limit:
        remaining = -(-_display_len("".join(units)) // limit)
        target = _display_len("".join(units)) / remaining
        best, best_score = 1, float("inf")
        for cut in range(1, len(units)):
            length = _display_len("".join(units[:cut]))
            if length > limit:
                break
            score = abs(length - target) - (3 if units[cut].isspace() else 0)
            if score < best_score:
                best, best_score = cut, score
        pieces.append("".join(units[:best]))
        units = units[best:]
        while units and units[0].isspace():
            units = units[1:]
    if units:
        pieces.append("".join(units))
    return pieces


def split_lines(text: str, limit: int = MAX_CHARS) -> list[str]:
    """Caption lines of at most `limit` characters (a lone long word may exceed it)."""
    lines: list[str] = []
    for clause in _clauses(text):
        if _display_len(clause) > limit:
            lines += _cut(clause, limit)
        elif lines and _display_len(lines[-1] + clause) <= limit and lines[-1][-1:] not in "。！？":
            lines[-1] += clause
        else:
            lines.append(clause)
    return [line.strip().rstrip(_DROP_AT_LINE_END) for line in lines]


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
    blocks = [f"{i}\n{_stamp(c.start, ',')} --> {_stamp(c.end, ',')}\n{c.text}\n"
              for i, c in enumerate(captions, 1)]
    return "\n".join(blocks)


def to_vtt(captions: list[Caption]) -> str:
    blocks = [f"{_stamp(c.start, '.')} --> {_stamp(c.end, '.')}\n{c.text}\n" for c in captions]
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
