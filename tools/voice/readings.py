"""Hanzi to the tone-numbered pinyin the speech engine reads, and which readings are still undecided.

espeak-ng's Mandarin voice picks its own reading of each Hanzi and gets
common polyphones wrong (重算 as zhòng suàn). The same voice reads
tone-numbered pinyin right, third-tone sandhi included, so a cue is handed
over as pinyin chosen here. A character's reading comes from, in order:

1. an inline fix in the cue: ``[重|chong2]`` (the caption shows 重 alone);
2. the lexicon's ``[pinyin]`` section (``narration/lexicon.toml``), matched as whole phrases;
3. a phrase dictionary (pypinyin's own, then CC-CEDICT's from pypinyin-dict),
   on jieba's segmentation of the text into words (a word the dictionary
   lacks is cut into the fewest words it has);
4. for a character no phrase covers, the lexicon's ``[alone]`` section, else
   pypinyin's reading of the character.

Then 一 and 不 change tone by rule, which espeak-ng does not do itself. Inline
and lexicon readings are written as said and are not changed again.

A character is *decided* when one of 1–3 or ``[alone]`` covers it, when the standard
dictionary (通用规范汉字字典, kTGHZ2013) gives it one reading, when it is 一 or
不, or when it is a particle read the usual way: 的 de, 了 le, 地 de between two
Hanzi, 得 de as a complement marker (after a verb, before 多/远/准/上/…).
Anything else is *undecided*: ``lecture check`` reports it, and the cue must
settle it (lexicon, inline fix, or other words).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

INLINE_FIX = re.compile(r"\[([^\[\]|]*)\|([^\[\]]*)\]")
SYLLABLE = re.compile(r"[a-zü]+[1-5]")
_HANZI = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_MAX_WORD = 8  # longest dictionary word the segmentation tries

# Chinese punctuation as the engine should see it: a pause mark, or nothing.
_PAUSES = {
    "，": ",",
    "、": ",",
    "。": ".",
    "？": "?",
    "！": "!",
    "；": ";",
    "：": ":",
    "（": ",",
    "）": ",",
    "—": ",",
    "…": ",",
}
_SILENT_MARKS = "「」『』“”‘’《》"

_DIGITS = set("零〇一二三四五六七八九")
_ARITHMETIC = set("加减")
# What comes before 得 when it means "must" (就得走) rather than marking a complement.
_MODAL_BEFORE_DE = set("就都还也才又总只必非便却")
# How a complement after 得 begins: 推得多, 差得远, 量得准, 加得上, 说得出, 摊得越薄.
_COMPLEMENT_START = set("多少远近快慢准上下出见越很更最好清可不动起完住开过对")


class ReadingError(ValueError):
    """A malformed inline fix or lexicon entry; the caller adds the file and cue."""


@dataclass(frozen=True)
class Syllable:
    hanzi: str
    pinyin: str  # tone-numbered, 1-4, 5 for the neutral tone
    decided: bool
    fixed: bool = False  # from an inline fix or the lexicon: taken as said


@dataclass(frozen=True)
class Undecided:
    hanzi: str
    pinyin: str  # what the engine gets for now
    context: str  # the text around it, the character in brackets

    def __str__(self) -> str:
        return f"{self.hanzi} (now {self.pinyin}) in “{self.context}”"


@dataclass(frozen=True)
class Reading:
    pinyin: str  # the whole text as the engine gets it
    undecided: tuple[Undecided, ...]


# A piece of text: a Hanzi syllable, or anything else (Latin, digits, space, punctuation) as a str.
Piece = Syllable | str


def is_hanzi(char: str) -> bool:
    return bool(_HANZI.fullmatch(char))


def strip_fixes(text: str) -> str:
    """The text with each inline fix replaced by its Hanzi: what captions and text engines get."""
    return INLINE_FIX.sub(lambda m: m.group(1), text)


def syllables_of(hanzi: str, said: str) -> tuple[str, ...]:
    """Check a written reading against its Hanzi (one tone-numbered syllable per character)."""
    if not hanzi or not all(is_hanzi(c) for c in hanzi):
        raise ReadingError(f"{hanzi!r} must be Chinese characters only")
    syllables = tuple(said.split())
    if len(syllables) != len(hanzi):
        raise ReadingError(f"{hanzi} has {len(hanzi)} characters but {said!r} has {len(syllables)} syllables")
    if bad := [s for s in syllables if not SYLLABLE.fullmatch(s.replace("v", "ü"))]:
        raise ReadingError(f"{hanzi} = {said!r}: {', '.join(bad)} is not a tone-numbered syllable such as chong2")
    return syllables


def _tone3(marked: str) -> str:
    from pypinyin.contrib.tone_convert import to_tone3  # pypinyin takes 0.2 s to import: only when reading

    return to_tone3(marked, neutral_tone_with_five=True)


@cache
def _phrases() -> dict[str, list[list[str]]]:
    """Multi-character words with their readings: CC-CEDICT's, where pypinyin's own has the word, pypinyin's."""
    from pypinyin.constants import PHRASES_DICT  # 0.2 s to load: only when something is read
    from pypinyin_dict.phrase_pinyin_data import cc_cedict  # 0.5 s

    merged = {}
    for source in (cc_cedict.phrases_dict, PHRASES_DICT):
        merged.update(
            (word, readings)
            for word, readings in source.items()
            if 1 < len(word) <= _MAX_WORD and len(readings) == len(word) and all(map(is_hanzi, word))
        )
    return merged


@cache
def _standard_readings(char: str) -> frozenset[str]:
    """The character's readings in the standard dictionary (pypinyin's list for a character it lacks)."""
    from pypinyin.constants import PINYIN_DICT
    from pypinyin_dict.pinyin_data.ktghz2013 import pinyin_dict as standard

    listed = standard.get(ord(char)) or PINYIN_DICT.get(ord(char), "")
    return frozenset(_tone3(r) for r in listed.split(",") if r)


def _alone(char: str) -> str:
    """A character's reading on its own: pypinyin's first, unless the standard dictionary has one other tone.

    pypinyin's neutral tone stays (子 in 根子 is zi5, where the dictionary lists zǐ alone).
    """
    from pypinyin.constants import PINYIN_DICT

    if ord(char) not in PINYIN_DICT:
        raise ReadingError(f"no reading is known for {char}: fix it inline, [{char}|…]")
    first = _tone3(PINYIN_DICT[ord(char)].split(",")[0])
    standard = _standard_readings(char)
    if len(standard) == 1 and not first.endswith("5"):
        return next(iter(standard))
    return first


@cache
def _segmenter():
    import jieba  # its word frequencies split 后面|的 where the fewest words would give 后|面的

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def _fewest_words(run: str) -> list[str]:
    """Split Hanzi into the fewest dictionary words (ties: the longer last word)."""
    phrases = _phrases()
    n = len(run)
    fewest, start_of = [0] + [n + 1] * n, [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(max(0, end - _MAX_WORD), end):
            if end - start > 1 and run[start:end] not in phrases:
                continue
            if fewest[start] + 1 < fewest[end]:
                fewest[end], start_of[end] = fewest[start] + 1, start
    words, end = [], n
    while end:
        words.append(run[start_of[end] : end])
        end = start_of[end]
    return words[::-1]


def _words(run: str) -> list[str]:
    """Split a run of Hanzi into words: jieba's, each cut further into the phrase dictionary's words."""
    words = []
    for word in _segmenter().lcut(run, HMM=False):
        words += [word] if len(word) == 1 or word in _phrases() else _fewest_words(word)
    return words


def _from_dictionary(run: str, alone: Mapping[str, str]) -> list[Syllable]:
    out = []
    for word in _words(run):
        if len(word) > 1:
            out += [Syllable(c, _tone3(r[0]), True) for c, r in zip(word, _phrases()[word])]
        elif word in alone:
            out.append(Syllable(word, alone[word], True))
        else:
            out.append(Syllable(word, _alone(word), len(_standard_readings(word)) == 1))
    return out


def _lexicon_matches(run: str, lexicon: Mapping[str, tuple[str, ...]]) -> list[tuple[int, str]]:
    """Where lexicon phrases sit in `run`: non-overlapping, covering the most characters (个数|量级 loses to 数量级)."""
    longest = max(map(len, lexicon), default=0)
    n = len(run)
    best: list[tuple[int, list[tuple[int, str]]]] = [(0, [])] * (n + 1)  # from position i on: (covered, matches)
    for i in range(n - 1, -1, -1):
        best[i] = best[i + 1]
        for size in range(2 if longest else 1, min(longest, n - i) + 1):
            phrase = run[i : i + size]
            if phrase in lexicon and best[i + size][0] + size > best[i][0]:
                best[i] = (best[i + size][0] + size, [(i, phrase), *best[i + size][1]])
        if run[i] in lexicon and best[i + 1][0] + 1 > best[i][0]:
            best[i] = (best[i + 1][0] + 1, [(i, run[i]), *best[i + 1][1]])
    return best[0][1]


def _from_lexicon(run: str, lexicon: Mapping[str, tuple[str, ...]], alone: Mapping[str, str]) -> list[Syllable]:
    """Lexicon phrases first, the dictionary for what lies between them."""
    out, last = [], 0
    for at, phrase in _lexicon_matches(run, lexicon):
        out += _from_dictionary(run[last:at], alone)
        out += [Syllable(c, s, True, True) for c, s in zip(phrase, lexicon[phrase])]
        last = at + len(phrase)
    return out + _from_dictionary(run[last:], alone)


def _pieces(text: str, lexicon: Mapping[str, tuple[str, ...]], alone: Mapping[str, str]) -> list[Piece]:
    pieces: list[Piece] = []
    last = 0
    for fix in [*INLINE_FIX.finditer(text), None]:
        plain = text[last : fix.start() if fix else len(text)]
        for run in re.split(r"((?:[\u3400-\u4dbf\u4e00-\u9fff])+)", plain):
            if run and is_hanzi(run[0]):
                pieces += _from_lexicon(run, lexicon, alone)
            elif run:
                pieces.append(run)
        if fix:
            try:
                said = syllables_of(fix.group(1), fix.group(2))
            except ReadingError as err:
                raise ReadingError(f"inline fix {fix.group()}: {err}") from None
            pieces += [Syllable(c, s, True, True) for c, s in zip(fix.group(1), said)]
            last = fix.end()
    return pieces


def _next_to(pieces: list[Piece], at: int, step: int, across_spaces: bool = True) -> Syllable | None:
    """The syllable next to pieces[at] within its clause (spaces crossed unless told not to), or None."""
    at += step
    while across_spaces and 0 <= at < len(pieces) and isinstance(pieces[at], str) and not pieces[at].strip():
        at += step
    return pieces[at] if 0 <= at < len(pieces) and isinstance(pieces[at], Syllable) else None


def _yi(pieces: list[Piece], at: int) -> str:
    """一: first tone as a number or an ordinal, else second before a fourth tone and fourth before the rest.

    A number's reading is one run of Hanzi, so digits count only right beside 一 (二零一一, not 三十二 一样).
    """
    spoken_before, spoken_after = _next_to(pieces, at, -1), _next_to(pieces, at, 1)
    before, after = _next_to(pieces, at, -1, False), _next_to(pieces, at, 1, False)
    after_next = _next_to(pieces, at + 1, 1, False) if after else None
    if spoken_after is None or (spoken_before and spoken_before.hanzi == "第"):
        return "yi1"  # 减一。 第一
    if before and before.hanzi in _DIGITS | set("十点"):
        return "yi1"  # 十一, 二零一一, 零点一五
    if before and before.hanzi in "负正" and not (after and after.hanzi in "百千万亿"):
        return "yi1"  # 负一, 二的负一次方 (but 负一百 is yi4)
    if after and after.hanzi == "次" and after_next and after_next.hanzi == "方":
        return "yi1"  # 十的一次方: an exponent, not "once"
    if after and (
        after.hanzi in _DIGITS | _ARITHMETIC | {"十"}
        or (after.hanzi == "点" and after_next and after_next.hanzi in _DIGITS)
    ):
        return "yi1"  # 一九六四, 一加一, 一减它, 一十, 一点五 (where 一点 is not "a little")
    return "yi2" if spoken_after.pinyin[-1] in "45" else "yi4"


def _bu(after: Syllable | None) -> str:
    return "bu2" if after is not None and after.pinyin[-1] in "45" else "bu4"


def _particle(syllable: Syllable, before: Syllable | None, after: Syllable | None) -> Syllable:
    """的, 了, 地 and 得 standing alone, read as the particles they are in running text."""
    if syllable.hanzi in "的了":
        return Syllable(syllable.hanzi, {"的": "de5", "了": "le5"}[syllable.hanzi], True)
    if syllable.hanzi == "地" and before and after:
        return Syllable("地", "de5", True)
    if (
        syllable.hanzi == "得"
        and before
        and before.hanzi not in _MODAL_BEFORE_DE
        and after
        and after.hanzi in _COMPLEMENT_START
    ):
        return Syllable("得", "de5", True)
    return syllable


def _apply_rules(pieces: list[Piece]) -> None:
    """Tone changes of 一 and 不 (right to left, so each sees its neighbour's final tone); lone particles."""
    for at in range(len(pieces) - 1, -1, -1):
        piece = pieces[at]
        if not isinstance(piece, Syllable) or piece.fixed:
            continue
        before, after = _next_to(pieces, at, -1), _next_to(pieces, at, 1)
        if piece.hanzi == "一":
            pieces[at] = Syllable("一", _yi(pieces, at), True)
        elif piece.hanzi == "不":
            pieces[at] = Syllable("不", _bu(after), True)
        elif piece.hanzi in "的了地得" and not piece.decided:
            pieces[at] = _particle(piece, before, after)


def _spoken(pieces: list[Piece]) -> str:
    """The engine's input: syllables and Latin words apart by spaces, pauses kept as ASCII marks."""
    out = []
    for piece in pieces:
        if isinstance(piece, Syllable):
            out.append(" " + piece.pinyin)
        else:
            for mark, pause in _PAUSES.items():
                piece = piece.replace(mark, pause + " ")
            out.append(" " + piece.translate({ord(c): " " for c in _SILENT_MARKS}))
    spoken = re.sub(r"\s+", " ", "".join(out)).strip()
    return re.sub(r" ([,.?!;:])", r"\1", spoken)


def _context(pieces: list[Piece], at: int, width: int = 8) -> str:
    surface = [p.hanzi if isinstance(p, Syllable) else p for p in pieces]
    left, right = "".join(surface[:at])[-width:], "".join(surface[at + 1 :])[:width]
    return f"{left}[{surface[at]}]{right}".strip()


def read(
    text: str, phrases: Mapping[str, tuple[str, ...]] | None = None, alone: Mapping[str, str] | None = None
) -> Reading:
    """The tone-numbered pinyin of `text` (Hanzi, inline fixes, Latin words), and its undecided characters.

    `phrases` and `alone` are the lexicon's [pinyin] and [alone] sections.
    """
    pieces = _pieces(text, phrases or {}, alone or {})
    _apply_rules(pieces)
    undecided = tuple(
        Undecided(p.hanzi, p.pinyin, _context(pieces, at))
        for at, p in enumerate(pieces)
        if isinstance(p, Syllable) and not p.decided
    )
    return Reading(_spoken(pieces), undecided)
