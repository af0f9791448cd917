"""A cue's tone-numbered pinyin (Cue.pinyin, from tools.voice.readings) as the phones the neural voice takes.

The voice was trained on the Baker (标贝) corpus, whose labels are an initial and a toned final per syllable
(``chong2`` is ``ch ong2``, a syllable without an initial starts with ``^``), ``#0`` between syllables and
``sil`` at both ends of a phrase. Its own text frontend (pypinyin) is not used: the reading of every Hanzi is
ours, chosen in context, with 一 and 不 already changed by rule.

Third-tone sandhi is left to the engine by our readings (espeak-ng applies it itself), and Baker's labels are
written as said (卡尔普 ka2 er2 pu3), so it is applied here: in a run of third tones within a phrase, every
one but the last is said as a second tone (展览馆 zhan2 lan2 guan3). Our pinyin has no word boundaries, so a
run is not split by words (小老虎 becomes xiao2 lao2 hu3 where a careful speaker says xiao3 lao2 hu3).

The phone set has no English. A Latin term reaches this voice as the lexicon's [say] section left it (FP8
is "F P 八", bf16 "B F 十六"): a capital or a lone letter is said as its Chinese letter name (F is ai2 fu5),
an English word by the spelling in :data:`WORDS` (Mandarin syllables close to its sound), any other word
letter by letter; digits are said one by one (卡 0 is ka3 ling2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PAUSES = ",.?!;:"  # the pause marks readings keeps, ASCII
_SYLLABLE = re.compile(r"([a-zü]+|[a-z]*v[a-z]*)([1-5])")
_INITIALS = ("zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h", "j", "q", "x", "r", "z", "c", "s")

# English letter names as Chinese speakers say them, in pinyin.
LETTERS = {
    "a": "ei1",
    "b": "bi4",
    "c": "xi1",
    "d": "di4",
    "e": "yi4",
    "f": "ai2 fu5",
    "g": "ji4",
    "h": "ai1 qi1",
    "i": "ai4",
    "j": "jie4",
    "k": "kai4",
    "l": "ai2 le5",
    "m": "ai2 mu5",
    "n": "en1",
    "o": "ou1",
    "p": "pi1",
    "q": "qiu1",
    "r": "a1 er5",
    "s": "ai2 si1",
    "t": "ti4",
    "u": "you1",
    "v": "wei1",
    "w": "da2 bu5 liu5",
    "x": "ai2 ke4 si1",
    "y": "wai1",
    "z": "zei4",
}
DIGITS = dict(
    zip("0123456789", ("ling2", "yi1", "er4", "san1", "si4", "wu3", "liu4", "qi1", "ba1", "jiu3"), strict=True)
)

# English words and names the course says, as Mandarin syllables near their sound (lower case).
WORDS = {
    "adafactor": "a1 da2 fai4 ke4 te4",
    "adagrad": "a1 da2 ge2 rui4 de5",
    "adam": "ya4 dang1",
    "adamw": "ya4 dang1 da2 bu5 liu5",
    "adapter": "a1 dai4 pu3 te4",
    "all": "ao4 er5",
    "attention": "a1 ten1 shen2",
    "batch": "bai4 qi1",
    "bengio": "ben3 ji2 ao4",
    "bit": "bi3 te4",
    "blas": "bu4 la1 si1",
    "causal": "kao3 zuo3",
    "clipping": "ke4 li2 ping3",
    "cu": "ku4",
    "decay": "di2 kai4",
    "deepseek": "di1 pu3 xi1 ke4",
    "dense": "dan1 si1",
    "distserve": "di2 si1 te4 se4 fu2",
    "dual": "du1 er3",
    "embedding": "yin1 bai4 ding4",
    "engine": "en1 jin1",
    "epoch": "yi1 po4 ke4",
    "flop": "fu2 luo4 pu3",
    "gate": "gei4 te4",
    "goodput": "gu3 de2 pu4 te4",
    "hessian": "hei1 sen1",
    "hidden": "hei2 deng1",
    "hinton": "xin1 dun4",
    "hochreiter": "huo4 ke4 lai4 te4",
    "int": "yin1 te4",
    "kimi": "ji1 mi3",
    "korthikanti": "ke1 ti2 kan3 di4",
    "lion": "lai4 ang2",
    "linear": "li2 ni2 er3",
    "llama": "la1 ma3",
    "logit": "luo4 ji2 te4",
    "logits": "luo4 ji2 ci1",
    "lora": "luo2 la1",
    "loss": "luo4 si1",
    "max": "mai4 ke4 si1",
    "megatron": "mei2 ge2 chuan2",
    "micro": "mai4 ke4 luo2",
    "moonlight": "mu4 en1 lai4 te4",
    "muon": "miu1 ang2",
    "nan": "nan2",
    "norm": "nuo4 mu5",
    "numpy": "nan2 pai4",
    "palm": "pa1 mu3",
    "pflop": "pi1 fu2 luo4 pu3",
    "pie": "pai4",
    "pipe": "pai4 pu3",
    "polyak": "bo1 li4 ya4 ke4",
    "prefill": "pu3 rui4 fei1 er3",
    "proj": "pu3 luo2 ji1",
    "rmsprop": "a1 er5 ai2 mu5 ai2 si1 pu3 luo2 pu3",
    "scaling": "si1 kai4 ling2",
    "sigmoid": "xi1 ge2 mo2 yi4 de5",
    "sign": "sai4 en1",
    "softmax": "suo3 fu1 te4 mai4 ke4 si1",
    "stable": "si1 dei4 bo2",
    "tanh": "tan1 ai1 qi1",
    "tib": "tai4 bi3",
    "token": "tou2 ken4",
    "torch": "tuo4 qi1",
    "transfer": "chuan4 si1 fo2",
    "transformer": "chuan4 si1 fo2 mo4",
    "tu": "tu1",
    "up": "a1 pu3",
    "update": "a1 pu3 dei4 te4",
    "vit": "wei1 yi4 ti4",
    "warmup": "wo3 mu3 a1 pu3",
    "zero": "ze2 rou2",
}


class PhoneError(ValueError):
    """Pinyin the voice cannot say (a syllable outside Mandarin's); the message names it."""


def _final(initial: str, rest: str) -> str:
    """Baker's name for the final `rest` after `initial` ("" for none): ü is v, iu is iou, ui uei, un uen."""
    if initial in ("j", "q", "x") and rest.startswith("u"):
        rest = "v" + rest[1:]
    if initial in ("zh", "ch", "sh", "r") and rest == "i":
        return "iii"
    if initial in ("z", "c", "s") and rest == "i":
        return "ii"
    if initial in ("l", "n") and rest == "ue":
        return "ve"
    return {"iu": "iou", "ui": "uei", "un": "uen" if initial not in ("j", "q", "x") else "vn", "io": "iou"}.get(
        rest, rest
    )


def split_syllable(syllable: str) -> tuple[str, str]:
    """A toneless pinyin syllable as Baker's (initial, final): chong is (ch, ong), wen is (^, uen)."""
    s = syllable.replace("ü", "v")
    if s in ("n", "ng"):  # 嗯
        return "^", "en"
    if s == "r":  # 儿 said as a suffix
        return "^", "er"
    if s.startswith("y"):
        rest = s[1:]
        rest = "v" + rest[1:] if rest.startswith("u") else rest if rest.startswith("i") else "i" + rest
        return "^", {"iu": "iou", "io": "iou", "vn": "vn"}.get(rest, rest)
    if s.startswith("w"):
        rest = s[1:]
        return "^", "u" if rest == "u" else _final("", "u" + rest if rest != "o" else "uo")
    for initial in _INITIALS:
        if s.startswith(initial) and len(s) > len(initial):
            return initial, _final(initial, s[len(initial) :])
    return "^", s


@dataclass(frozen=True)
class Phrase:
    """One stretch of speech between pauses: its phones, the pause mark that ends it ("" at the end), and where
    each of its syllables starts: (the pinyin token it is part of, its first phone's place in `phones`)."""

    phones: tuple[str, ...]
    pause: str
    syllables: tuple[tuple[int, int], ...] = ()


def latin_syllables(token: str) -> list[str]:
    """A Latin term as tone-numbered syllables: a known word, capitals and lone letters by name, digits."""
    out: list[str] = []
    for part in re.findall(r"[A-Za-z]+|[0-9]", token):
        lower = part.lower()
        if part.isdigit():
            out.append(DIGITS[part])
        elif lower in WORDS:
            out += WORDS[lower].split()
        elif len(part) > 1 and not part.isupper() and (camel := re.findall(r"[A-Z]?[a-z]+|[A-Z]", part)) != [part]:
            out += [s for piece in camel for s in latin_syllables(piece)]  # DeepSeek, AdamW: its parts
        else:
            out += [s for letter in lower for s in LETTERS[letter].split()]
    return out


def _sandhi(syllables: list[tuple[str, str, bool]]) -> list[str]:
    """Each syllable's tone as said: a Hanzi's third tone before another Hanzi's third tone is a second (each of
    a run but the last); a Latin term's syllables are as written and stop a run."""
    tones = [tone for _, tone, _ in syllables]
    for at in range(len(syllables) - 1):
        if syllables[at][2] and syllables[at + 1][2] and tones[at] == "3" and tones[at + 1] == "3":
            tones[at] = "2"
    return tones


def _syllable_phones(syllable: str, tone: str) -> list[str]:
    if syllable.endswith("r") and syllable not in ("er",) and len(syllable) > 2:  # 儿化: huar is hua + er
        initial, final = split_syllable(syllable[:-1])
        return [initial, final + tone, "er5"]
    initial, final = split_syllable(syllable)
    return [initial, final + tone]


def phrases(pinyin: str) -> list[Phrase]:
    """Split a cue's pinyin at its pause marks and give each stretch's phones (sil … sil, #0 between syllables),
    each syllable marked with the token of the pinyin it says (its place in ``timing.tokens(pinyin)``)."""
    out = []
    token = 0
    for text, pause in re.findall(rf"([^{re.escape(PAUSES)}]*)([{re.escape(PAUSES)}]|$)", pinyin):
        syllables: list[tuple[str, str, bool, int]] = []  # (syllable, tone, from Hanzi, token)
        for word in text.split():
            if match := _SYLLABLE.fullmatch(word):
                syllables.append((match.group(1), match.group(2), True, token))
            elif re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9'_-]*", word):
                syllables += [(s[:-1], s[-1], False, token) for s in latin_syllables(word)]
            else:
                raise PhoneError(f"{word!r} in “{pinyin}”: not a pinyin syllable or a Latin term")
            token += 1
        if not syllables:
            continue
        phones, starts = ["sil"], []
        tones = _sandhi([(syllable, tone, hanzi) for syllable, tone, hanzi, _ in syllables])
        for (syllable, _, _, said_in), said in zip(syllables, tones, strict=True):
            if phones[-1] != "sil":
                phones.append("#0")
            starts.append((said_in, len(phones)))
            phones += _syllable_phones(syllable, said)
        out.append(Phrase((*phones, "sil"), pause, tuple(starts)))
    return out


def phones(pinyin: str) -> str:
    """The phones the voice gets, phrases apart by their pause marks: what ``lecture say --phonemes`` shows."""
    return " | ".join(" ".join(p.phones) + (f" {p.pause}" if p.pause else "") for p in phrases(pinyin))
