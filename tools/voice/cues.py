"""Narration cues: ``narration/<chapter>.toml``, checked against the facts.

A chapter file holds, per figure id, an ordered array of cues::

    [[gates_circuit]]
    id = "gates_result"
    text = "所以 a 的梯度是 {grad_a}。"

``{name}`` is a fact of the same figure, ``{figure.name}`` one of another
figure. The caption shows the fact's screen text (``4``), the speech
engine gets its Mandarin reading (``四``), so a number is typed once, in
``tools``. ``[重|chong2]`` fixes a reading inline; the caption shows the
Hanzi alone. ``narration/lexicon.toml`` tells the engine how to say Latin
terms (``[say]``) and Hanzi phrases (``[pinyin]``); captions and human
recordings are not affected by it. Each cue carries the tone-numbered
pinyin the engine reads (:mod:`tools.voice.readings`) and the characters
whose reading is still undecided, which ``lecture check`` refuses.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
import wave
from dataclasses import astuple, dataclass
from functools import cache
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.files import content_key, write_atomically
from tools.voice import readings
from tools.voice.readings import ReadingError, Undecided

NARRATION_DIR = settings.NARRATION_DIR
_CUE_ID = re.compile(r"[a-z][a-z0-9_]*")
# A cue holds one idea: its text is refused past this many characters, about 110 s said, near the 120 s a whole
# figure may run (tools/voice/pacing.py), before its readings are worked out (a 200,000-character cue took 6 s to
# read, and would have spoken for 12 hours). The course's longest cue has 179.
LONGEST_CUE = 500
_BOM = b"\xef\xbb\xbf"
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# What espeak-ng's Mandarin voice misreads (it drops decimal points and minus
# signs, spells notation): such numbers must come in through a placeholder.
_MISREAD = re.compile(r"\d[.,]\d|\d\s*[eE][-+]?\d|(?<![A-Za-z0-9])[-−]\d|[−⁰¹²³⁴⁵⁶⁷⁸⁹≈＝=＋×÷%]")
_MASK = "□"  # stands in for what the misread check sets aside; in no class of _MISREAD
# A number written as Hanzi (「一百二十八个」) reads well but is not a fact: nothing computes or checks it. One
# of 10 or more (a unit 十百千万亿 in it), or three digits or more (「一九九一」), must come in through a
# placeholder. Words that only look like numbers, approximate counts (几十, 数百, 上千), the unit after a
# placeholder ({n} 万亿) and 「十的 {n} 次方」 (ten to a fact's power) pass.
_NUMERAL = re.compile(r"(?<![几数上□零一二两三四五六七八九十百千万亿])(?<!□ )[零一二两三四五六七八九十百千万亿]+")
_NUMERAL_WORDS = re.compile("十分|万一|千万|百分之|十字|成千上万|千方百计|一五一十|十的")


class NarrationError(Exception):
    """Bad narration input; the message names the file and the cue."""


@dataclass(frozen=True)
class Cue:
    chapter: str
    figure: str
    id: str
    caption: str  # what the viewer reads
    speech: str  # what a text engine says: Hanzi, facts' readings, the lexicon's Latin terms
    pinyin: str  # what a pinyin engine says: the same as tone-numbered pinyin
    recording: Path | None  # a human recording, which wins over synthesis
    undecided: tuple[Undecided, ...] = ()  # polyphones nothing settles (see tools.voice.readings)
    cites: tuple[str, ...] = ()  # the facts its placeholders name ('fact' of its figure, 'figure.fact' of another)


def _read_toml(path: Path) -> dict:
    if not path.exists():
        raise NarrationError(f"{path}: file is missing")
    raw = path.read_bytes()
    if raw.startswith(_BOM):
        raise NarrationError(f"{path}: starts with a byte-order mark (BOM): save it as UTF-8 without one")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise NarrationError(f"{path}: not valid TOML: {err}") from None
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise NarrationError(f"{path}: not UTF-8 text (line {line}, byte {err.start}): save it as UTF-8") from None


@dataclass(frozen=True)
class Lexicon:
    say: dict[str, str]  # Latin term -> what the engine says instead
    pinyin: dict[str, tuple[str, ...]]  # Hanzi phrase -> its syllables, as said
    alone: dict[str, str]  # Hanzi -> its reading where no phrase covers it

    @property
    def digest(self) -> str:
        """What in the lexicon decides a reading: its [pinyin] and [alone] sections."""
        return content_key([sorted(self.pinyin.items()), sorted(self.alone.items())])


@cache
def lexicon() -> Lexicon:
    path = NARRATION_DIR / "lexicon.toml"
    table = _read_toml(path) if path.exists() else {}
    sections: dict[str, dict[str, tuple[str, ...]]] = {"pinyin": {}, "alone": {}}
    for name, entries in sections.items():
        for hanzi, said in table.get(name, {}).items():
            try:
                entries[hanzi] = readings.syllables_of(hanzi, str(said))
            except ReadingError as err:
                raise NarrationError(f"{path}: [{name}] {err}") from None
            if name == "alone" and len(hanzi) > 1:
                raise NarrationError(f"{path}: [alone] {hanzi}: one character per entry (a phrase goes in [pinyin])")
    alone = {char: said[0] for char, said in sections["alone"].items()}
    return Lexicon(dict(table.get("say", {})), sections["pinyin"], alone)


def _speak_terms(text: str) -> str:
    for term, said in lexicon().say.items():
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])", said, text)
    return text


def spoken(text: str, where: str) -> tuple[str, readings.Reading]:
    """What the engines get for speech text with its facts filled in: (Hanzi text, its pinyin reading)."""
    try:
        reading = _reading(text)
    except ReadingError as err:
        raise NarrationError(f"{where}: {err}") from None
    return readings.strip_fixes(text), reading


def _reading(text: str) -> readings.Reading:
    """readings.read with the lexicon, kept in .cache/readings/ by the text and what decides its reading (the
    lexicon, the reading code, the dictionaries' versions): loading jieba and the phrase dictionaries takes
    seconds, in every process that loads a chapter's cues (each render, each check)."""
    key = content_key([text, lexicon().digest, _reading_code()])
    if key in _READ:  # read already in this process (a check or a test reads the course's cues more than once)
        return _READ[key]
    path = settings.cache_root() / "readings" / f"{key}.json"
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(kept["pinyin"], str):
            raise TypeError(f"pinyin is {type(kept['pinyin']).__name__}, not text")
        reading = readings.Reading(kept["pinyin"], tuple(Undecided(*u) for u in kept["undecided"]))
    except (OSError, ValueError, KeyError, TypeError) as err:
        if path.exists():  # there, but not a reading: say so, and never use it
            path.unlink(missing_ok=True)
            print(f"readings: cached {path} could not be decoded ({err!r}); deleted, read again", file=sys.stderr)
        reading = readings.read(text, lexicon().pinyin, lexicon().alone)
        write_atomically(
            path,
            json.dumps(
                {"pinyin": reading.pinyin, "undecided": [astuple(u) for u in reading.undecided]}, ensure_ascii=False
            ),
        )
    _READ[key] = reading
    return reading


_READ: dict[str, readings.Reading] = {}


@cache
def _reading_code() -> str:
    """The reading code and the versions of the dictionaries it reads."""
    return content_key(
        [
            Path(readings.__file__).read_text(encoding="utf-8"),
            [version(name) for name in ("pypinyin", "pypinyin-dict", "jieba")],
        ]
    )


def free_text(text: str) -> tuple[str, readings.Reading]:
    """A sentence outside the narration files (``lecture say``): its Latin terms and readings as for a cue."""
    if match := _PLACEHOLDER.search(text):
        raise NarrationError(f"{match.group()}: a placeholder needs a figure; use lecture say --cue chapter/cue_id")
    return spoken(_speak_terms(text), "lecture say")


def find_cue(ref: str) -> Cue:
    """The cue named ``chapter/cue_id``."""
    chapter_id, _, cue_id = ref.partition("/")
    found = [cue for fig_cues in chapter_cues(chapter_id).values() for cue in fig_cues if cue.id == cue_id]
    if not found:
        raise NarrationError(f"{NARRATION_DIR / f'{chapter_id}.toml'}: no cue '{cue_id}' (write chapter/cue_id)")
    return found[0]


def _fill(text: str, figure_id: str, where: str) -> tuple[str, str]:
    """Replace placeholders: (caption with screen text, speech with readings and its inline fixes)."""
    caption, speech, last = [], [], 0
    for match in _PLACEHOLDER.finditer(text):
        ref = match.group(1).strip()
        try:
            fact = catalogue.cite(ref if "." in ref else f"{figure_id}.{ref}")
        except KeyError as err:
            raise NarrationError(f"{where}: placeholder {{{ref}}}: {err}") from None
        if not fact.text or not fact.spoken:
            raise NarrationError(f"{where}: placeholder {{{ref}}}: that fact has no screen text or reading")
        literal = text[last : match.start()]
        caption += [readings.strip_fixes(literal), fact.text]
        speech += [_speak_terms(literal), fact.spoken]
        last = match.end()
    caption.append(readings.strip_fixes(text[last:]))
    speech.append(_speak_terms(text[last:]))
    said = "".join(speech).strip()
    if misread := _misread_as_written(text):
        start, end = misread.span()
        raise NarrationError(
            f"{where}: the voice would misread {misread.group()!r} in "
            f"“{text[:start]}«{text[start:end]}»{text[end:]}”: "
            "put the number in tools and speak it through a {placeholder}"
        )
    if unchecked := _unchecked_numeral(text):
        start, end = unchecked.span()
        raise NarrationError(
            f"{where}: the number {unchecked.group()!r} in “{text[:start]}«{text[start:end]}»{text[end:]}” is "
            "spoken as Hanzi, where nothing checks it: make it a fact of the figure and speak it through a "
            "{placeholder}, or say the sentence without it"
        )
    if misread := _MISREAD.search(readings.strip_fixes(said)):
        raise NarrationError(
            f"{where}: the voice would misread {misread.group()!r}, which the [say] section of "
            f"{NARRATION_DIR / 'lexicon.toml'} puts into “{text}”: say that term without it"
        )
    return "".join(caption).strip(), said


def _misread_as_written(text: str) -> re.Match | None:
    """The first literal the voice would misread in a cue's text as the author typed it. Placeholders and
    the pinyin of inline fixes are masked character for character, so the match's span is the text's."""
    masked = _PLACEHOLDER.sub(lambda m: _MASK * len(m.group()), text)
    masked = readings.INLINE_FIX.sub(
        lambda m: _MASK + m.group(1) + _MASK * (len(m.group()) - len(m.group(1)) - 1), masked
    )
    return _MISREAD.search(masked)


def _unchecked_numeral(text: str) -> re.Match | None:
    """The first Hanzi number of 10 or more (or of three digits or more) in a cue's text as written, outside
    placeholders and the words that only look like numbers; its span is the text's."""
    masked = _PLACEHOLDER.sub(lambda m: _MASK * len(m.group()), text)
    masked = _NUMERAL_WORDS.sub(lambda m: "◇" * len(m.group()), masked)
    for match in _NUMERAL.finditer(masked):
        if re.search("[十百千万亿]", match.group()) or len(match.group()) >= 3:
            return match
    return None


RECORDING_FORMAT = "a PCM WAV file (8-, 16-, 24- or 32-bit integer samples; any rate; mono or stereo)"


def check_recording(path: Path, where: str) -> float:
    """A human take's length in seconds; refuses a file that is not PCM WAV audio, naming it and the cue.
    Only a regular file is opened: a FIFO or a device would be read for ever."""
    if not path.is_file():
        raise NarrationError(f"{where}: recording {path} is not a regular file; expected {RECORDING_FORMAT}")
    try:
        with wave.open(str(path)) as wav:
            if wav.getnframes() == 0:
                raise NarrationError(f"{where}: recording {path} holds no audio; expected {RECORDING_FORMAT}")
            return wav.getnframes() / wav.getframerate()
    except (wave.Error, EOFError) as err:
        raise NarrationError(
            f"{where}: recording {path} is not audio this build can read ({err}); expected {RECORDING_FORMAT}"
        ) from None


def recordings_dir(chapter_id: str) -> Path:
    return NARRATION_DIR / "recordings" / chapter_id


@cache
def chapter_cues(chapter_id: str) -> dict[str, tuple[Cue, ...]]:
    """Every cue of a chapter by figure id, checked; raises NarrationError."""
    chapter = catalogue.chapter(chapter_id)
    path = NARRATION_DIR / f"{chapter_id}.toml"
    table = _read_toml(path)
    known = {fig.id for fig in chapter.figures}
    for key in table:
        if key not in known:
            raise NarrationError(
                f"{path}: [{key}] is not a figure of chapter '{chapter_id}' ({', '.join(sorted(known))})"
            )
    seen: set[str] = set()
    cues: dict[str, tuple[Cue, ...]] = {}
    for fig in chapter.figures:
        entries = table.get(fig.id)
        if not entries:
            raise NarrationError(f"{path}: figure '{fig.id}' has no cues")
        if not isinstance(entries, list):
            raise NarrationError(f"{path}: [{fig.id}] must be an array of cues: write [[{fig.id}]]")
        built = []
        for number, entry in enumerate(entries, 1):
            if not isinstance(entry, dict):
                raise NarrationError(
                    f"{path}: cue #{number} of {fig.id} is {type(entry).__name__} {str(entry)[:40]!r}, not a table: "
                    f'write [[{fig.id}]] with id = "..." and text = "..." under it'
                )
            cue_id, text = entry.get("id", ""), entry.get("text", "")
            where = f"{path}: cue '{cue_id or f'#{number} of {fig.id}'}'"
            if not _CUE_ID.fullmatch(str(cue_id)):
                raise NarrationError(f"{where}: id must be lower-case letters, digits and _")
            if cue_id in seen:
                raise NarrationError(f"{where}: id is used twice in this chapter")
            if not isinstance(text, str):
                raise NarrationError(f"{where}: text must be a string in quotes, not {type(text).__name__} {text!r}")
            if not text.strip():
                raise NarrationError(f"{where}: text is empty")
            if len(text) > LONGEST_CUE:
                raise NarrationError(
                    f"{where}: text is {len(text):,} characters long; a cue holds one idea, at most {LONGEST_CUE} "
                    "characters (about 110 s said): split it"
                )
            seen.add(cue_id)
            caption, marked = _fill(str(text), fig.id, where)
            speech, reading = spoken(marked, where)
            recording = recordings_dir(chapter_id) / f"{cue_id}.wav"
            if recording.exists():
                check_recording(recording, where)
            built.append(
                Cue(
                    chapter_id,
                    fig.id,
                    cue_id,
                    caption,
                    speech,
                    reading.pinyin,
                    recording if recording.exists() else None,
                    reading.undecided,
                    tuple(match.group(1).strip() for match in _PLACEHOLDER.finditer(str(text))),
                )
            )
        cues[fig.id] = tuple(built)
    strays = sorted(p.name for p in recordings_dir(chapter_id).glob("*.wav") if p.stem not in seen)
    if strays:
        raise NarrationError(f"{recordings_dir(chapter_id)}: recordings with no matching cue: {', '.join(strays)}")
    return cues


def figure_cues(figure_id: str) -> tuple[Cue, ...]:
    return chapter_cues(catalogue.figure(figure_id).chapter)[figure_id]


def undecided_readings(figure_ids: list[str]) -> list[str]:
    """One line per polyphone nothing settles in these figures' cues, naming file, cue and context."""
    return [
        f"{NARRATION_DIR / f'{cue.chapter}.toml'}: cue '{cue.id}': {undecided}"
        for fig_id in figure_ids
        for cue in figure_cues(fig_id)
        for undecided in cue.undecided
    ]
