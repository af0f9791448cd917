"""Captions: the rules of tools/voice/captions.py (Netflix's Simplified Chinese guide), the events cut and timed by
the voice (tools/voice/timing.py), and with the neural voice, every event starting where its speech starts."""

import itertools
import wave
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.course import catalogue
from tools.voice import audio, captions, cues, timing
from tools.voice.captions import Caption, SpokenCue
from tools.voice.cues import Cue
from tools.voice.neural import phones
from tools.voice.neural.engine import Neural, syllable_times
from tools.voice.timing import Span, Syllable

needs_voice = pytest.mark.skipif(
    bool(Neural().missing()), reason=f"the neural voice is not set up: {Neural().missing()}"
)

LONG = (
    "优化器状态才是最大的一块，Adam 要给每个参数存两个矩估计，ZeRO 把它们切到六十四张卡上，"
    "而这一整句话故意写得很长很长没有任何停顿好让切分器不得不在中间下刀。"
    "一张卡从 120 GB 降到 31.4 GB，参数一共 46,956 个，误差只剩 1.9×10⁻⁶。"
)


def _even(text: str, per_char: float = 0.22, pause: float = 0.3) -> list[Span | None]:
    """Times as a voice at about 4.5 characters a second would give them, a pause after each mark."""
    out, at = [], 0.1
    for char in text:
        if char.isspace():
            out.append(None)
        elif char in "，。、；：？！":
            out.append(None)
            at += pause
        else:
            out.append(Span(at, at + per_char))
            at += per_char
    return out


def _events(text: str) -> list[str]:
    return [line for line, _, _ in captions.cue_events(text, _even(text))]


# -- the rules ----------------------------------------------------------------------------------------------------


def test_a_half_width_character_counts_half_and_a_comma_inside_a_line_is_a_space():
    assert captions.line_width("Adam 要") == 3.5
    assert captions.line_width("1.9×10⁻⁶") == 5.5  # × and ⁻ are not half-width: counted whole
    assert captions.shown("先往前算。a 加 b，得 −1；") == "先往前算\u3000a 加 b\u3000得 −1"
    assert captions.shown("真的吗？是的！") == "真的吗？是的！"  # ？ and ！ stay


def test_long_text_becomes_lines_within_the_limit_with_words_and_numbers_whole():
    lines = _events(LONG)
    assert all(captions.line_width(line) <= captions.MAX_LINE_WIDTH for line in lines)
    joined = "".join(lines).replace("\u3000", "").replace(" ", "")
    assert joined == LONG.replace("，", "").replace("。", "").replace(" ", "")
    for whole in ("Adam", "ZeRO", "31.4 GB", "120 GB", "46,956", "1.9×10⁻⁶"):
        assert any(whole in line for line in lines), whole
    assert captions.word_breaks(LONG, lines) == []


def test_an_event_never_starts_with_closing_punctuation_nor_ends_with_a_comma():
    text = "这一句里有书名《Learning long-term dependencies》，还有更多的字在后面跟着，一直说下去。"
    for line in _events(text):
        assert line[:1] not in "》）」，、。"
        assert line[-1:] not in captions.NEVER_ENDS_A_LINE


def test_breaks_fall_where_jieba_ends_a_word_not_inside_one():
    text = "形状跟这一层的输出一模一样，每一步都纹丝不动地停在原处，等着下一步的梯度传回来。"
    lines = _events(text)
    assert captions.word_breaks(text, lines) == []
    # the cases the issue saw split: none of these words is cut
    assert not any(a.endswith(("纹丝", "每一", "这一")) for a, _ in itertools.pairwise(lines))


def test_a_word_wider_than_a_line_is_the_only_break_inside_a_word():
    text = "这个词 Pneumonoultramicroscopicsilicovolcanoconiosis 比一行还宽。"  # 22.5 wide, one word
    lines = _events(text)
    assert all(captions.line_width(line) <= captions.MAX_LINE_WIDTH for line in lines)
    breaks = captions.word_breaks(text, lines)
    assert len(breaks) == 1
    assert "wider than a line" in breaks[0]


def test_events_follow_the_voice_and_keep_two_frames_apart():
    text = "把一个小算式画成电路：四个输入，三个门，一个加法，一个取最大，一个乘法。"
    events = captions.figure_events([SpokenCue(text, 2.0, _even(text))], fps=15)
    times = _even(text)
    first = next(t for t in times if t is not None)
    assert events[0].start == pytest.approx(2.0 + first.start, abs=0.001)
    for a, b in itertools.pairwise(events):
        assert b.start - a.end >= 2 / 15 - 0.0005
        if b.start - a.end < 0.6:  # a short gap is closed to two frames: chained
            assert b.start - a.end == pytest.approx(captions.gap_ms(15) / 1000)
    assert captions.violations(events, 15) == []


def test_a_cue_right_after_another_cuts_the_last_event_before_its_first():
    a, b = "前一句说完了。", "下一句紧接着就开始说。"
    events = captions.figure_events([SpokenCue(a, 0.0, _even(a)), SpokenCue(b, 1.7, _even(b))], fps=60)
    assert captions.violations(events, 60) == []
    assert events[1].start - events[0].end == pytest.approx(captions.gap_ms(60) / 1000)


def test_violations_name_the_event_and_the_rule():
    bad = [
        Caption(0.0, 2.0, "一二三四五六七八九十一二三四五六七"),  # 17 wide
        Caption(1.9, 2.4, "重叠，"),  # overlaps, too short, ends with a comma
        Caption(3.0, 11.0, "太长了\n两行\n三行"),  # 8 s, three lines
    ]
    found = "\n".join(captions.violations(bad, 15))
    for said in (
        "): line “一二三四五六七八九十一二三四五六七” is 17 wide, over 16",
        "event 1 (0.000 → 2.000, “一二三四五六七八九十一二三四五六七”): overlaps event 2",
        "event 2 (1.900 → 2.400, “重叠，”): line “重叠，” ends with ，",
        "event 2 (1.900 → 2.400, “重叠，”): lasts 0.500 s, under 0.833 s",
        "lasts 8.000 s, over 7 s",
        "3 lines, over 2",
    ):
        assert said in found


def test_srt_and_vtt_round_trip():
    lines = [Caption(0.6, 2.25, "先往前算"), Caption(2.384, 61.5, "再倒着走 a<b & c")]
    assert captions.parse_srt(captions.to_srt(lines)) == lines
    assert captions.parse_vtt(captions.to_vtt(lines)) == lines
    assert captions.to_vtt(lines).startswith("WEBVTT\n\n00:00:00.600 --> 00:00:02.250\n先往前算")
    assert "a&lt;b &amp; c" in captions.to_vtt(lines)


# -- timing --------------------------------------------------------------------------------------------------------


def _at(span: Span | None) -> tuple[float, float] | None:
    return (span.start, span.end) if span else None


def test_a_fact_said_in_words_takes_the_time_of_all_its_syllables():
    caption, speech = "梯度是 448。", "梯度是 四百四十八。"
    pinyin = "ti1 du4 shi4 si4 bai3 si4 shi2 ba1."
    said = tuple(Syllable(i, 0.1 + 0.2 * i, 0.2) for i in range(len(timing.tokens(pinyin))))
    times = timing.caption_times(caption, speech, pinyin, said)
    assert _at(times[0]) == pytest.approx((0.1, 0.3))
    assert _at(times[4]) == _at(times[5]) == _at(times[6]) == pytest.approx((0.7, 1.7))  # 448: from 四 to 八
    assert (times[3], times[7]) == (None, None)  # the space and the full stop are not said


def test_a_latin_term_said_as_letters_takes_its_syllables():
    caption, speech, pinyin = "FP8 最大", "F P 八 最大", "F P ba1 zui4 da4"
    said = (Syllable(0, 0.0, 0.3), Syllable(0, 0.3, 0.2), Syllable(1, 0.5, 0.2), Syllable(2, 0.7, 0.2))
    said += (Syllable(3, 0.9, 0.2), Syllable(4, 1.1, 0.2))
    times = timing.caption_times(caption, speech, pinyin, said)
    assert _at(times[0]) == pytest.approx((0.0, 0.5))  # F, said ai2 fu5
    assert _at(times[2]) == pytest.approx((0.7, 0.9))  # 8 said 八
    assert _at(times[4]) == pytest.approx((0.9, 1.1))


def test_every_cue_of_the_course_lines_its_spoken_text_up_with_its_pinyin():
    """Each token of a cue's speech (a Hanzi, a Latin term) has its token in the pinyin the voice gets, so the
    voice's times reach every caption character (caption_times shares the cue evenly where they do not)."""
    counts = {
        f"{cue.chapter}/{cue.id}": (len(timing.speech_tokens(cue.speech)), len(timing.tokens(cue.pinyin)))
        for fig in catalogue.figures()
        for cue in cues.figure_cues(fig.id)
    }
    misaligned = [f"{cue}: {said} spoken, {read} in pinyin" for cue, (said, read) in counts.items() if said != read]
    assert misaligned == []


def test_the_fallback_shares_the_voiced_stretch_by_syllables_and_pauses():
    said = timing.proportional("yi1 er4, san1 GPT.", 0.08, 2.08)
    assert [s.token for s in said] == [0, 1, 2, 3]
    assert said[0].start == pytest.approx(0.08)
    assert said[-1].end == pytest.approx(2.08, abs=0.001)  # the closing pause is in the tail, not inside
    assert said[2].start - said[1].end == pytest.approx(said[0].length, abs=0.001)  # a comma: one syllable
    assert said[3].length == pytest.approx(3 * said[0].length, abs=0.001)  # GPT: ji4 pi1 ti4


def test_the_neural_syllables_start_at_their_first_phone_and_run_to_the_next():
    said = phones.phrases("ni3 hao3, GPT.")
    lengths = [[0.1] * (len(p.phones) + 1) for p in said]
    times = syllable_times(said, [0.2, 0.35], lengths)
    assert [s.token for s in times] == [0, 1, 2, 2, 2]
    assert times[0].start == pytest.approx(0.1)  # after the opening sil
    assert times[1].start == pytest.approx(0.4)  # sil n i2 #0, then h
    first_phrase = (len(said[0].phones) + 1) * 0.1
    assert times[2].start == pytest.approx(first_phrase + 0.2 + 0.1)  # the pause, then its sil


def test_cached_times_travel_with_the_audio_and_a_damaged_file_falls_back(tmp_path):
    wav = tmp_path / "a.wav"
    with wave.open(str(wav), "wb") as out:
        out.setnchannels(1), out.setsampwidth(2), out.setframerate(44100)
        out.writeframes(b"\0\0" * 44100)
    cue = Cue("c", "f", "x", "一二", "一二", "yi1 er4", None)
    audio.timing_path(wav).write_text(timing.to_json((Syllable(0, 0.2, 0.3), Syllable(1, 0.5, 0.3))))
    assert audio.cue_timing(cue, wav) == ((Syllable(0, 0.2, 0.3), Syllable(1, 0.5, 0.3)), "the voice")
    audio.timing_path(wav).write_text("not json")
    said, how = audio.cue_timing(cue, wav)
    assert how == "proportional"
    assert said[0].start == pytest.approx(audio.LEAD_MS / 1000)


# -- the neural voice, heard --------------------------------------------------------------------------------------


def _onsets(wav: Path) -> list[float]:
    """Where speech starts after a silence of at least 80 ms, by the audio's energy in 10 ms windows."""
    with wave.open(str(wav)) as f:
        samples = np.frombuffer(f.readframes(f.getnframes()), "<i2") / 32768
        rate = f.getframerate()
    window = rate // 100
    rms = np.sqrt(np.mean(samples[: len(samples) // window * window].reshape(-1, window) ** 2, axis=1))
    loud = 20 * np.log10(rms + 1e-9) > 20 * np.log10(rms.max()) - 35
    onsets, quiet = [], 8
    for i, is_loud in enumerate(loud):
        if is_loud and quiet >= 8:
            onsets.append(i / 100)
        quiet = 0 if is_loud else quiet + 1
    return onsets


@needs_voice
def test_every_event_starts_within_100_ms_of_the_speech_the_audio_shows(isolated):
    text = "把一个小算式画成电路：四个输入，三个门，一个加法，一个取最大，一个乘法。现在倒着走。"
    speech, reading = cues.free_text(text)
    cue = Cue("test", "test", "onsets", text, speech, reading.pinyin, None)
    engine = Neural()
    try:
        sound = audio.cue_audio(cue, engine)
    finally:
        engine.close()
    assert sound.timed_by == "the voice"
    times = timing.caption_times(cue.caption, cue.speech, cue.pinyin, sound.timing)
    events = captions.figure_events([SpokenCue(cue.caption, 0.0, times)], fps=60)
    onsets = _onsets(sound.path)
    assert len(events) >= 3
    assert len(onsets) >= len(events)
    for event in events:
        nearest = min(onsets, key=lambda t: abs(t - event.start))
        assert abs(nearest - event.start) <= 0.1, (event, onsets)


# -- any text ---------------------------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "梯度",
        "的",
        "一层",
        "参数",
        "乘上",
        "输出",
        "，",
        "。",
        "？",
        "Adam",
        " 46,956 ",
        " 1.9×10⁻⁶ ",
        "ZeRO-3",
        "（",
        "）",
    ]
)


@given(st.lists(_PIECES, min_size=1, max_size=60).map("".join))
def test_any_caption_becomes_events_within_the_rules_in_order(text):
    events = captions.cue_events(text, _even(text))
    said = [t for t in _even(text) if t is not None]
    assert bool(events) == bool(said)
    for line, start, end in events:
        assert captions.line_width(line) <= captions.MAX_LINE_WIDTH
        assert start < end
    shown = "".join(line for line, _, _ in events).replace("\u3000", "").replace(" ", "")
    kept = "".join(ch for ch in text if ch not in "，。、；：" and not ch.isspace())
    assert shown == (kept if said else "")  # every character but the commas and full stops, in order
    for whole in ("46,956", "1.9×10⁻⁶", "Adam"):
        if whole in text:
            assert any(whole in line for line, _, _ in events)


# -- lecture captions ------------------------------------------------------------------------------------------


def test_lecture_captions_measures_a_figure_and_exits_2_on_a_broken_rule(isolated, monkeypatch, capsys):
    from tools import cli

    monkeypatch.setenv("LECTURE_VOICE", "silent")
    assert cli.main(["captions", "-q", "l", "--only", "backprop/gates_circuit"]) == 0
    said = capsys.readouterr().out
    assert "captions: 1 figures, 7 cues (7 by proportional)" in said
    assert "overlapping events: 0; closer than 2 frames: 0" in said
    assert "breaks inside a jieba word: 0 (0 not justified)" in said
    monkeypatch.setattr(captions, "MAX_CPS", 2)  # a reader far slower than the voice: events too fast to read
    assert cli.main(["captions", "-q", "l", "--only", "backprop/gates_circuit"]) == 2
    assert "gates_circuit: event 1 (" in capsys.readouterr().out
