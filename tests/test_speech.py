"""Speech engines behind one Protocol: the command engine with espeak-ng as its program, and `lecture say`."""

import subprocess

import pytest
from helpers import BIN, run

from tools.voice import audio, cues, speech

DONE_WHEN = "重算一遍，误差累加，显存增长"
DONE_WHEN_PINYIN = "chong2 suan4 yi2 bian4, wu4 cha1 lei3 jia1, xian3 cun2 zeng1 zhang3"


def espeak_command(seen):
    """espeak-ng as a local TTS program: stdin to a file (to see what it got) and to the voice."""
    return f"tee {seen} | espeak-ng -v cmn-latn-pinyin -w {{wav}} --stdin"


@pytest.fixture
def cue():
    return next(c for c in cues.figure_cues("gates_circuit") if c.id == "gates_result")


@pytest.mark.parametrize("reads", ["pinyin", "text"])
def test_the_command_engine_speaks_the_cue_it_gets_on_stdin(isolated, tmp_path, cue, reads):
    seen = tmp_path / "stdin.txt"
    engine = speech.Command(espeak_command(seen), reads)
    sound = audio.cue_audio(cue, engine)
    assert seen.read_text(encoding="utf-8") == (cue.pinyin if reads == "pinyin" else cue.speech)
    assert sound.source == "command"
    assert 3 < sound.duration < 20


def test_the_command_engine_is_chosen_and_configured_by_the_environment(monkeypatch, tmp_path):
    model = tmp_path / "voice.onnx"
    model.write_bytes(b"weights")
    monkeypatch.setenv("LECTURE_VOICE", "command")
    monkeypatch.setenv("LECTURE_VOICE_COMMAND", "piper --model voice.onnx --output_file {wav}")
    monkeypatch.setenv("LECTURE_VOICE_INPUT", "pinyin")
    monkeypatch.setenv("LECTURE_VOICE_FILES", str(model))
    engine = speech.from_env()
    assert isinstance(engine, speech.Command)
    assert engine.reads == "pinyin"
    assert engine.files == (model,)


def test_the_command_cache_key_holds_the_command_and_its_files_bytes_not_their_times(tmp_path, cue):
    model = tmp_path / "voice.onnx"
    model.write_bytes(b"weights one")
    command = "piper --model voice.onnx --output_file {wav}"
    key = audio.cache_key(cue, speech.Command(command, files=(model,)))
    model.touch()
    assert audio.cache_key(cue, speech.Command(command, files=(model,))) == key
    assert audio.cache_key(cue, speech.Command(command + " --length_scale 1.1", files=(model,))) != key
    assert audio.cache_key(cue, speech.Command(command, "pinyin", files=(model,))) != key
    model.write_bytes(b"weights two")
    assert audio.cache_key(cue, speech.Command(command, files=(model,))) != key


@pytest.mark.parametrize(
    ("settings", "complaint"),
    [
        ({"LECTURE_VOICE_COMMAND": ""}, "needs LECTURE_VOICE_COMMAND"),
        ({"LECTURE_VOICE_COMMAND": "piper --model m.onnx"}, "must say where the WAV goes"),
        ({"LECTURE_VOICE_COMMAND": "piper {wav}", "LECTURE_VOICE_INPUT": "ipa"}, "choose text or pinyin"),
        ({"LECTURE_VOICE_COMMAND": "piper {wav}", "LECTURE_VOICE_FILES": "/no/such/model.onnx"}, "no such file"),
    ],
)
def test_a_bad_command_setting_is_explained(monkeypatch, settings, complaint):
    monkeypatch.setenv("LECTURE_VOICE", "command")
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(speech.SpeechError, match=complaint):
        speech.from_env()


def test_a_failing_command_is_explained(tmp_path, cue):
    engine = speech.Command("echo no voice here >&2; exit 3 # {wav}")
    with pytest.raises(speech.SpeechError, match="failed \\(3\\): no voice here"):
        engine.synthesize(cue.speech, tmp_path / "x.wav")
    with pytest.raises(speech.SpeechError, match="wrote no audio"):
        speech.Command("cat > /dev/null # {wav}").synthesize(cue.speech, tmp_path / "x.wav")


def test_every_engine_meets_the_protocol(tmp_path):
    for engine in (speech.Espeak(), speech.Silent(), speech.Command("x {wav}")):
        assert engine.reads in ("text", "pinyin")
        assert engine.name
        assert isinstance(engine.version, str)
        assert all(isinstance(v, str) for v in engine.cache_parts().values())


def test_lecture_say_prints_the_engines_pinyin_first_and_writes_say_wav(tmp_path):
    done = run([str(BIN / "lecture"), "say", DONE_WHEN, "--phonemes"], cwd=tmp_path, env={"LECTURE_VOICE": "espeak"})
    assert done.returncode == 0, done.stderr
    first, *phonemes = done.stdout.splitlines()
    assert first == DONE_WHEN_PINYIN
    espeak = subprocess.run(["espeak-ng", "-v", "cmn-latn-pinyin", "-q", "-x", first], capture_output=True, text=True)
    assert phonemes == espeak.stdout.splitlines()
    assert "ts.h'ong35" in phonemes[0]
    assert audio.wav_seconds(tmp_path / "say.wav") > 2


def test_lecture_say_a_cue_has_its_facts_filled_in(tmp_path, cue):
    done = run(
        [str(BIN / "lecture"), "say", "--cue", "backprop/gates_result", "--out", str(tmp_path / "c.wav")],
        env={"LECTURE_VOICE": "silent"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [cue.pinyin]
    assert "si4" in cue.pinyin
    assert (tmp_path / "c.wav").exists()


def test_lecture_say_refuses_a_placeholder_without_a_cue(tmp_path):
    done = run([str(BIN / "lecture"), "say", "梯度是 {grad_a}"], cwd=tmp_path)
    assert done.returncode == 2
    assert "--cue chapter/cue_id" in done.stderr


@pytest.mark.slow  # `lecture script` reads every cue of the course, in a new process
def test_lecture_script_lists_each_cue_with_text_pinyin_target_and_file(tmp_path):
    out = tmp_path / "script.md"
    done = run(
        [str(BIN / "lecture"), "script", "--only", "optimizer", "--out", str(out)],
        env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    ball = next(c for c in cues.figure_cues("gradient_descent_ball") if c.id == "ball_roll")
    assert "**`ball_roll`** · target 9.6 s (silent) · `narration/recordings/optimizer/ball_roll.wav`" in text
    assert ball.caption in text
    assert f"`{ball.pinyin}`" in text
    assert text.count("narration/recordings/optimizer/") == sum(
        len(cues.figure_cues(f))
        for f in (
            "gradient_descent_ball",
            "saddle_point",
            "saddle_3d_rotating",
            "momentum_escape",
            "learning_rate_two_paths",
            "optimal_step_parabola",
        )
    )
