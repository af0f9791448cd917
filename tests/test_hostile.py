"""Bad settings and leftovers: refused up front, or cleaned up, with a message that names them."""

import re
import shutil
import struct
import subprocess
import sys
import time
import wave

import pytest
from helpers import BIN, ROOT, run, tmpfs

from tools.course import catalogue
from tools.publish.checks import checks, glyphs
from tools.publish.keys import render_key
from tools.publish.rendering import scratch
from tools.publish.rendering.render import BuildError
from tools.voice import cues, speech
from tools.voice.cues import NarrationError


def _build(env: dict) -> subprocess.CompletedProcess:
    return run(
        [str(BIN / "lecture"), "build", "-q", "l", "--only", "backprop/gates_circuit"],
        env={"LECTURE_VOICE": "silent", **env},
    )


@pytest.mark.parametrize("variable", ["LECTURE_RENDERS", "LECTURE_CACHE"])
def test_an_output_folder_that_is_a_file_is_refused_naming_the_variable(tmp_path, variable):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {"LECTURE_RENDERS": str(tmp_path / "r"), "LECTURE_CACHE": str(tmp_path / "c")}
    env[variable] = str(blocker / "inside")
    done = _build(env)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{variable}={blocker / 'inside'}" in done.stderr
    assert "is a file, not a folder" in done.stderr


def test_a_read_only_renders_folder_is_refused(tmp_path):
    with tmpfs(tmp_path / "ro", "ro,size=1m") as target:
        done = _build({"LECTURE_RENDERS": str(target), "LECTURE_CACHE": str(tmp_path / "c")})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"LECTURE_RENDERS={target}" in done.stderr
    assert "cannot write" in done.stderr


def test_leftovers_of_a_killed_build_are_swept_but_not_a_running_builds(tmp_path):
    out = tmp_path / "480p15"
    (out / "backprop").mkdir(parents=True)
    dead = [out / "backprop" / ".staging-dead", out / ".staging-join", out / ".site-abc", out / ".site-old-.site-x"]
    for folder in dead:
        folder.mkdir()
        (folder / "half.mp4").write_bytes(b"half")
    (out / ".manifest.json.123.tmp").write_text("{")
    kept = out / "backprop" / "gates_circuit.mp4"
    kept.write_bytes(b"whole")
    with scratch.staging(out / "backprop") as running:
        removed = scratch.sweep(out)
        assert running.exists()
    assert sorted(removed) == sorted([*dead, out / ".manifest.json.123.tmp"])
    assert kept.read_bytes() == b"whole"


# -- recordings, cue texts, cue ids ------------------------------------------------------------


def _scratch_cue(narration_dir, text='"文"'):
    (narration_dir / "backprop.toml").write_text(f'[[gates_circuit]]\nid = "one"\ntext = {text}\n', encoding="utf-8")


@pytest.mark.parametrize("content", [b"", b"this is text, not audio"])
def test_a_recording_that_is_not_audio_is_refused_naming_file_cue_and_format(narration_dir, content):
    _scratch_cue(narration_dir)
    take = narration_dir / "recordings" / "backprop" / "one.wav"
    take.parent.mkdir(parents=True)
    take.write_bytes(content)
    with pytest.raises(NarrationError) as refused:
        cues.chapter_cues("backprop")
    message = str(refused.value)
    assert "cue 'one'" in message
    assert str(take) in message
    assert "expected a PCM WAV file" in message


def test_a_cue_text_must_be_a_string(narration_dir):
    _scratch_cue(narration_dir, text='["梯度", 1]')
    with pytest.raises(NarrationError, match="text must be a string in quotes, not list"):
        cues.chapter_cues("backprop")


def test_a_scene_narrating_a_cue_the_file_lacks_is_refused_by_check(tmp_path, monkeypatch):
    source = catalogue.chapter("backprop").scene_file.read_text(encoding="utf-8")
    scratch_file = tmp_path / "backprop.py"
    scratch_file.write_text(source.replace('self.narrate("gates_add")', 'self.narrate("gates_plus")'))
    monkeypatch.setattr(catalogue.Chapter, "scene_file", property(lambda ch: scratch_file))
    with pytest.raises(BuildError) as refused:
        checks.run([catalogue.figure("gates_circuit")], layout=False)
    assert "GatesCircuit narrates cue gates_plus" in str(refused.value)
    scratch_file.write_text(source.replace('self.narrate("gates_add")', 'print("gates_add")'))
    with pytest.raises(BuildError, match="cue gates_add of 'gates_circuit' is never narrated by GatesCircuit"):
        checks.run([catalogue.figure("gates_circuit")], layout=False)


@pytest.mark.slow  # `lecture` runs in a scratch copy
def test_a_take_far_longer_than_its_text_warns_and_a_figure_past_120_s_is_refused_before_rendering(tmp_path):
    copy = tmp_path / "project"
    for part in ("tools", "scenes", "narration"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "manim.cfg", copy / "manim.cfg")
    take = copy / "narration" / "recordings" / "backprop" / "gates_add.wav"
    take.parent.mkdir(parents=True)
    with wave.open(str(take), "w") as wav:  # ten minutes for one sentence
        wav.setnchannels(1), wav.setsampwidth(2), wav.setframerate(8000)
        wav.writeframes(struct.pack("<h", 1000) * 8000 * 600)
    env = {"LECTURE_VOICE": "silent", "LECTURE_RENDERS": str(tmp_path / "r"), "LECTURE_CACHE": str(tmp_path / "c")}
    done = run(
        [sys.executable, "-m", "tools.cli", "build", "-q", "l", "--only", "backprop/gates_circuit"], cwd=copy, env=env
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "warning: the recording for cue gates_add" in done.stdout
    assert "lasts 600." in done.stdout
    assert "backprop/gates_circuit: its narration alone lasts" in done.stderr
    assert "--allow-long" in done.stderr
    assert "rendering" not in done.stdout


# -- fonts -------------------------------------------------------------------------------------


@pytest.mark.slow  # `lecture check` and `build` in new processes
def test_no_chinese_font_means_lecture_check_and_build_refuse(tmp_path):
    config = tmp_path / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>'
        f"<dir>/usr/share/fonts/truetype/dejavu</dir><cachedir>{tmp_path}/fc</cachedir></fontconfig>"
    )
    env = {
        "FONTCONFIG_FILE": str(config),
        "LECTURE_VOICE": "silent",
        "LECTURE_RENDERS": str(tmp_path / "r"),
        "LECTURE_CACHE": str(tmp_path / "c"),
    }
    for command in (["check", "--only", "backprop"], ["build", "-q", "l", "--only", "backprop/gates_circuit"]):
        done = run([str(BIN / "lecture"), *command], env=env)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "the font 'Noto Sans CJK SC' that scenes/style.py names is not installed" in done.stderr
    assert not (tmp_path / "r" / "480p15" / "backprop").exists()


def test_a_character_no_font_covers_is_refused_naming_where_it_is_shown(isolated, monkeypatch):
    monkeypatch.setattr(glyphs, "shown_text", lambda figures: {"梯": "cue gates_intro", "\ue000": "cue gates_add"})
    for _ in range(2):  # a refusal is not kept: refused again
        with pytest.raises(glyphs.FontError, match=r"1 character\(s\).*U\+E000 \(cue gates_add\)"):
            glyphs.check()


def test_a_passed_glyph_check_is_kept_until_the_source_or_the_fonts_change(isolated, monkeypatch):
    looked: list[int] = []
    monkeypatch.setattr(glyphs, "shown_text", lambda figures: looked.append(1) or {"梯": "cue gates_intro"})
    glyphs.check()
    glyphs.check()
    assert len(looked) == 1
    monkeypatch.setattr(glyphs, "source_digest", lambda: "an edited checkout")
    glyphs.check()
    assert len(looked) == 2


@pytest.mark.slow  # every figure's glyphs checked
def test_the_glyph_check_computes_the_facts_of_the_chapters_built_only(isolated, monkeypatch):
    computed: list[str] = []
    facts = catalogue.facts
    monkeypatch.setattr(catalogue, "facts", lambda fig_id: computed.append(fig_id) or facts(fig_id))
    glyphs.check(catalogue.select("optimizer/saddle_3d_rotating"))  # its cues quote its chapter's facts
    assert "saddle_3d_rotating" in computed
    assert {catalogue.figure(fig_id).chapter for fig_id in computed} == {"optimizer"}
    computed.clear()
    glyphs.check()  # every figure: checked again
    assert len(set(computed)) == len(catalogue.figures())


def test_the_resolved_font_files_are_part_of_the_render_key():
    part = render_key.figure_key(catalogue.figure("gates_circuit"), "l", speech.Silent()).parts["fonts"]
    path, index, digest = part["Noto Sans CJK SC"].split(":")
    assert path.endswith(".ttc")
    assert index.isdigit()
    assert len(digest) == 64


@pytest.mark.slow
def test_a_scene_named_on_the_command_line_renders_alone(tmp_path):
    """With none named, all render: test_chapters renders scenes/optimizer.py as typed."""
    done = run(
        [
            str(BIN / "manim"),
            "-ql",
            "--dry_run",
            "--fps",
            "1",
            "--media_dir",
            str(tmp_path / "m"),
            "scenes/optimizer.py",
            "OptimalStepParabola",
        ],
        env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "c"), "COLUMNS": "200"},
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert re.findall(r"Rendered (\w+)", done.stdout + done.stderr) == ["OptimalStepParabola"]


@pytest.mark.slow
def test_a_cue_narrated_through_a_loop_variable_is_checked_by_running_the_scene(tmp_path):
    """Ledger16Bytes narrates its cues from a loop: `lecture check` finds a renamed one by running the scene
    with animations skipped (the layout lint's pass), not inside a render."""
    copy = tmp_path / "project"
    for part in ("tools", "scenes", "narration"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "manim.cfg", copy / "manim.cfg")
    toml = copy / "narration" / "ledger.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8").replace('id = "l16_grad"', 'id = "l16_gradient"'), encoding="utf-8"
    )
    done = run(
        [sys.executable, "-m", "tools.cli", "check", "--only", "ledger/ledger_16_bytes"],
        cwd=copy,
        env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "c"), "PYTHONPATH": str(copy)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "figure 'ledger_16_bytes' has no cue 'l16_grad'" in done.stderr


_LONG_TEXT = "梯度沿着电路往回传。" * 20_000  # 200,000 characters


@pytest.mark.parametrize(
    ("body", "names"),
    [
        (f'[[gates_circuit]]\nid = "one"\ntext = "{_LONG_TEXT}"\n'.encode(), ["cue 'one'", "200,000 characters"]),
        (
            '[[gates_circuit]]\nid = "one"\ntext = "文"\n[[gates_circuit]]\nid = "one"\ntext = "又"\n'.encode(),
            ["cue 'one'", "used twice"],
        ),
        ('[[gates_circuit]]\nid = "one"\ntext = "值是 {grad_zz}。"\n'.encode(), ["cue 'one'", "{grad_zz}"]),
        (b'[[gates_circuit]]\nid = "one"\ntext = "\xe6\x96"\n', ["not UTF-8 text (line 3, byte 37)"]),
        (b'\xef\xbb\xbf[[gates_circuit]]\nid = "one"\ntext = "\xe6\x96\x87"\n', ["byte-order mark (BOM)"]),
    ],
    ids=["200000 characters", "duplicate cue id", "unknown fact", "invalid UTF-8", "BOM"],
)
def test_hostile_narration_is_refused_within_60_s_naming_the_file_and_the_cue(narration_dir, body, names):
    """Seen: the 200,000-character cue was accepted (and would have been spoken for 12 hours); a BOM was refused
    as 'Invalid statement (at line 1, column 1)'."""
    (narration_dir / "backprop.toml").write_bytes(body)
    began = time.monotonic()
    with pytest.raises(NarrationError) as refused:
        checks.run([catalogue.figure("gates_circuit")], say=lambda line: None, layout=False)
    assert time.monotonic() - began < 60
    message = str(refused.value)
    assert message.startswith(f"{narration_dir / 'backprop.toml'}: "), message
    for name in names:
        assert name in message, message
