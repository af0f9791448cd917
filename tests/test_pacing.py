"""A figure's length estimated from its cues, and the 30–120 s warning `lecture check` gives before rendering."""

import shutil
import wave

import pytest

from tools import cli, settings
from tools.course import catalogue
from tools.voice import audio, cues, pacing, speech

GATES_CUES = ("gates_intro", "gates_forward", "gates_seed", "gates_mul", "gates_max", "gates_add", "gates_result")


def short_gates_narration(folder):
    """gates_circuit's cue ids, each said in a few characters: the figure would run far under 30 s. The other
    chapters' files as they are (the font check reads every caption)."""
    for other in settings.NARRATION_DIR.glob("*.toml"):
        shutil.copy(other, folder)
    body = "".join(f'[[gates_circuit]]\nid = "{cue}"\ntext = "先往前走。"\n\n' for cue in GATES_CUES)
    (folder / "backprop.toml").write_text(body, encoding="utf-8")


def test_check_warns_before_rendering_when_the_cues_are_too_short(narration_dir, isolated, monkeypatch, capsys):
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    short_gates_narration(narration_dir)
    assert cli.main(["check", "--no-layout", "--only", "backprop/gates_circuit"]) == 0
    out = capsys.readouterr().out
    assert "warning: backprop/gates_circuit will run about" in out
    assert "under the 30–120 s a figure should run" in out
    assert "estimated by the silent voice" in out
    assert not (isolated / "renders").exists()  # nothing was rendered


def test_a_figure_of_ordinary_length_gets_no_warning(isolated, monkeypatch, capsys):
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    assert cli.main(["check", "--no-layout", "--only", "backprop/gates_circuit"]) == 0
    assert "warning" not in capsys.readouterr().out


def test_audio_already_synthesized_is_timed_as_it_is(isolated, monkeypatch):
    """A cue whose audio is in the cache counts at its real length: one 200 s take makes the figure too long."""
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    fig = catalogue.figure("gates_circuit")
    first = cues.figure_cues(fig.id)[0]
    cached = audio.cache_dir() / f"{audio.cache_key(first, speech.from_env())}.wav"
    cached.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(cached), "wb") as wav:
        wav.setnchannels(1), wav.setsampwidth(2), wav.setframerate(8000)
        wav.writeframes(b"\0\0" * 8000 * 200)
    [estimate] = pacing.estimate([fig])
    assert estimate.heard == 1
    assert estimate.seconds > 200
    assert "over the 30–120 s" in estimate.warning()
    assert "1 of 7 cues as synthesized" in estimate.warning()


@pytest.mark.parametrize(("cue_seconds", "side"), [(10, "under"), (150, "over"), (60, None)])
def test_the_warning_names_the_figure_its_estimate_and_the_side(cue_seconds, side):
    fig = catalogue.figure("gates_circuit")
    warning = pacing.Estimate(fig, cue_seconds, heard=0, cues=7).warning()
    if side is None:
        assert warning is None
    else:
        assert f"backprop/gates_circuit will run about {cue_seconds + pacing.FIXED_SECONDS:.0f} s" in warning
        assert f"{side} the 30–120 s" in warning
