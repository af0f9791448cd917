"""Narration: cue files, placeholders, speech cache, recordings (the captions: test_captions.py)."""

import wave
from dataclasses import replace

import numpy as np
import pytest

from tools.voice import audio, captions, cues, speech
from tools.voice.cues import NarrationError


def write_backprop(folder, body):
    (folder / "backprop.toml").write_text(body, encoding="utf-8")


def sample_cue(**changes):
    base = cues.Cue("backprop", "gates_circuit", "gates_intro", "梯度是 4。", "梯度是 四。", "ti1 du4 shi4 si4.", None)
    return replace(base, **changes)


def test_placeholders_put_screen_text_in_captions_and_readings_in_speech():
    cue = next(c for c in cues.figure_cues("gates_circuit") if c.id == "gates_result")
    assert "−1" in cue.caption
    assert "负一" in cue.speech
    assert "{" not in cue.caption + cue.speech


def test_a_placeholder_naming_a_missing_fact_is_refused(narration_dir):
    write_backprop(narration_dir, '[[gates_circuit]]\nid = "one"\ntext = "值是 {grad_z}。"\n')
    with pytest.raises(NarrationError) as err:
        cues.chapter_cues("backprop")
    message = str(err.value)
    assert "backprop.toml" in message
    assert "cue 'one'" in message
    assert "grad_z" in message


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        ('[[no_such_figure]]\nid = "x"\ntext = "文"\n', "not a figure"),
        ('[[gates_circuit]]\nid = "a"\ntext = "文"\n[[gates_circuit]]\nid = "a"\ntext = "又"\n', "used twice"),
        ('[[gates_circuit]]\nid = "Bad-Id"\ntext = "文"\n', "lower-case"),
        ('[[gates_circuit]]\nid = "x"\ntext = ""\n', "empty"),
        ("[[gates_circuit]\n", "not valid TOML"),
    ],
)
def test_bad_cue_files_get_a_clear_error(narration_dir, body, complaint):
    write_backprop(narration_dir, body)
    with pytest.raises(NarrationError, match=complaint):
        cues.chapter_cues("backprop")


def test_a_recording_with_no_cue_is_refused(narration_dir):
    write_backprop(narration_dir, '[[gates_circuit]]\nid = "one"\ntext = "文"\n')
    (narration_dir / "recordings" / "backprop").mkdir(parents=True)
    (narration_dir / "recordings" / "backprop" / "typo.wav").write_bytes(b"")
    with pytest.raises(NarrationError, match=r"typo\.wav"):
        cues.chapter_cues("backprop")


def test_the_lexicon_changes_speech_but_not_captions(narration_dir):
    (narration_dir / "lexicon.toml").write_text('[say]\nZeRO = "zero"\n', encoding="utf-8")
    write_backprop(narration_dir, '[[gates_circuit]]\nid = "one"\ntext = "ZeRO 分三级。"\n')
    cue = cues.chapter_cues("backprop")["gates_circuit"][0]
    assert cue.caption == "ZeRO 分三级。"
    assert cue.speech == "zero 分三级。"
    assert cue.pinyin == "zero fen1 san1 ji2."


def test_cache_key_follows_what_the_engine_reads():
    """espeak reads the pinyin, silence times the text: each key changes with its own input only."""
    espeak, silent = speech.Espeak(), speech.Silent()
    new_pinyin, new_text = sample_cue(pinyin="ti1 du4 shi4 wu3."), sample_cue(speech="梯度是 五。")
    assert audio.cache_key(sample_cue(), espeak) != audio.cache_key(new_pinyin, espeak)
    assert audio.cache_key(sample_cue(), espeak) == audio.cache_key(new_text, espeak)
    assert audio.cache_key(sample_cue(), silent) != audio.cache_key(new_text, silent)
    assert audio.cache_key(sample_cue(), silent) == audio.cache_key(new_pinyin, silent)


@pytest.mark.parametrize(
    "engine",
    [
        speech.Espeak(voice="cmn"),
        speech.Espeak(rate=120),
        speech.Silent(),
    ],
)
def test_cache_key_changes_with_engine_voice_and_rate(engine):
    assert audio.cache_key(sample_cue(), speech.Espeak()) != audio.cache_key(sample_cue(), engine)


def test_cache_key_changes_with_the_engine_version(monkeypatch):
    before = audio.cache_key(sample_cue(), speech.Silent())
    monkeypatch.setattr(speech.Silent, "version", "2")
    assert before != audio.cache_key(sample_cue(), speech.Silent())


def test_second_synthesis_is_a_cache_hit(isolated, monkeypatch):
    engine = speech.Silent()
    first = audio.cue_audio(sample_cue(), engine)
    monkeypatch.setattr(speech.Silent, "synthesize", lambda *a: pytest.fail("synthesized again"))
    second = audio.cue_audio(sample_cue(), engine)
    assert first.path == second.path
    assert second.duration == pytest.approx(first.duration)


def test_silent_engine_lasts_about_as_long_as_speech(isolated):
    sound = audio.cue_audio(sample_cue(speech="一二三四五六七八九"), speech.Silent())
    assert sound.duration == pytest.approx(2.0, abs=0.05)


def test_espeak_speaks_mandarin_audibly(isolated):
    cue = sample_cue(
        speech="加法门把梯度原样分给两个输入。",
        pinyin="jia1 fa3 men2 ba3 ti1 du4 yuan2 yang4 fen1 gei3 liang3 ge4 shu1 ru4.",
    )
    sound = audio.cue_audio(cue, speech.Espeak())
    with wave.open(str(sound.path)) as wav:
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16)
    assert 1.5 < sound.duration < 8
    assert np.sqrt(np.mean(samples.astype(float) ** 2)) > 300
    assert sound.source == "espeak-ng"


def test_a_recording_wins_over_synthesis(isolated, tmp_path):
    recording = tmp_path / "take.wav"
    tone = (np.sin(np.linspace(0, 2000, 44100)) * 8000).astype(np.int16)
    with wave.open(str(recording), "w") as wav:
        wav.setnchannels(1), wav.setsampwidth(2), wav.setframerate(44100)
        wav.writeframes(tone.tobytes())
    sound = audio.cue_audio(sample_cue(recording=recording), speech.Espeak())
    assert sound.source == "recording"
    assert sound.duration == pytest.approx(1.0 + 0.33, abs=0.05)


def test_missing_espeak_is_explained(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(speech.SpeechError, match="LECTURE_VOICE=silent"):
        speech.Espeak().synthesize("文", tmp_path / "x.wav")


@pytest.mark.parametrize("literal", ["1.9", "−1", "-1", "2⁻⁷", "1e-6", "82%", "≈ 94", "3 × 4"])
def test_a_literal_the_voice_would_misread_is_refused(narration_dir, literal):
    write_backprop(narration_dir, f'[[gates_circuit]]\nid = "one"\ntext = "结果是 {literal}。"\n')
    with pytest.raises(NarrationError, match="cue 'one': the voice would misread"):
        cues.chapter_cues("backprop")


@pytest.mark.parametrize("spoken", ["一百二十八个", "三十二次", "将近一万年", "一九九一年", "百分之八十"])
def test_a_number_spoken_as_hanzi_is_refused_as_unchecked(narration_dir, spoken):
    write_backprop(narration_dir, f'[[gates_circuit]]\nid = "one"\ntext = "一共{spoken}。"\n')
    with pytest.raises(NarrationError, match=r"cue 'one': the number .* is spoken as Hanzi, where nothing checks it"):
        cues.chapter_cues("backprop")


@pytest.mark.parametrize(
    "words", ["八位专家", "几十层", "十分重要", "{grad_a} 万亿次", "十的 {grad_a} 次方", "两三个", "第一步"]
)
def test_small_counts_and_words_that_only_look_like_numbers_pass(narration_dir, words):
    write_backprop(narration_dir, f'[[gates_circuit]]\nid = "one"\ntext = "{words}。"\n')
    assert cues.chapter_cues("backprop")["gates_circuit"][0].id == "one"


def test_the_refusal_quotes_the_cue_as_written_with_the_literal_marked(narration_dir):
    write_backprop(narration_dir, '[[gates_circuit]]\nid = "one"\ntext = "[重|chong2]算 {grad_a}，约 1.9 倍。"\n')
    with pytest.raises(NarrationError) as err:
        cues.chapter_cues("backprop")
    assert "'1.9' in “[重|chong2]算 {grad_a}，约 «1.9» 倍。”" in str(err.value)


def test_a_literal_the_lexicon_brings_in_is_blamed_on_the_lexicon(narration_dir):
    (narration_dir / "lexicon.toml").write_text('[say]\nbf16 = "1.6"\n', encoding="utf-8")
    write_backprop(narration_dir, '[[gates_circuit]]\nid = "one"\ntext = "用 bf16 存。"\n')
    with pytest.raises(NarrationError) as err:
        cues.chapter_cues("backprop")
    assert "'1.6', which the [say] section of" in str(err.value)
    assert "puts into “用 bf16 存。”" in str(err.value)


def test_plain_integers_and_lexicon_terms_may_be_spoken(narration_dir):
    write_backprop(narration_dir, '[[gates_circuit]]\nid = "one"\ntext = "前向 1 次，反向 2 次，bf16 也行。"\n')
    assert cues.chapter_cues("backprop")["gates_circuit"][0].speech.startswith("前向 1 次")


def test_vtt_escapes_what_a_browser_would_read_as_markup_and_srt_keeps_it():
    lines = [captions.Caption(0.0, 1.5, "若 a<b 且 c>d & e")]
    assert "若 a&lt;b 且 c&gt;d &amp; e" in captions.to_vtt(lines)
    assert "若 a<b 且 c>d & e" in captions.to_srt(lines)
