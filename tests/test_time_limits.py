"""Nothing waits forever: a speech command that sleeps, an espeak-ng that hangs and a render that stalls are each
stopped within their time limit plus a few seconds, with an error naming the cue or figure, the command, the limit
and how to raise it; nothing they started is left running (every process is looked for in /proc), and nothing
half-made is published or cached."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import BIN, BUILD, build_env, copy_project

from tools import settings
from tools.files import TimeLimitError, run_limited
from tools.publish.rendering import render
from tools.voice import speech

SLACK = 8.0  # seconds past a limit within which the process must be gone (start-up of a two-core machine)


def _left_running(marker: str, grace: float = 3.0) -> list[str]:
    """Processes (other than this one) whose environment or command line holds `marker`, still there after
    `grace` seconds (a fork server notices its build is gone within a moment): what a stopped run left."""
    deadline = time.monotonic() + grace
    while (found := _running(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _running(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            seen = (entry / "environ").read_bytes() + (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in seen and state != "Z":
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name}: {command[:200]}")
    return found


def _run_stopped(args: list[str], env: dict, within: float, cwd: Path | None = None) -> tuple[int, str, float]:
    """Run a command in a session of its own; (exit code, its output, seconds it took). Should it still run after
    `within` seconds, everything it started is killed and the test fails."""
    started = time.monotonic()
    process = subprocess.Popen(
        args,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output = process.communicate(timeout=within)[0]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output = process.communicate()[0]
        pytest.fail(f"still running after {within:.0f} s, nothing stopped it:\n{output[-2000:]}")
    return process.returncode, output, time.monotonic() - started


def _says_the_limit(output: str, variable: str, seconds: int) -> None:
    assert f"time limit of {seconds} s" in output, output
    assert f"{variable}=SECONDS" in output, output
    assert "Traceback" not in output, output


def test_a_limit_is_derived_from_the_work_with_a_floor_and_can_be_set(monkeypatch):
    monkeypatch.delenv("LECTURE_LIMIT_RENDER", raising=False)
    monkeypatch.delenv("LECTURE_LIMIT_SCALE", raising=False)
    assert settings.time_limit("speech", 5).seconds == settings.LIMITS["speech"][0]  # the floor
    assert settings.time_limit("speech", 500).seconds == 500
    assert render.time_limit("l", 200.0, 60.0).seconds == 800  # four times the last render
    assert render.time_limit("h", 0.0, 60.0).seconds == 60 * render.LIMIT_RATE["h"]  # never rendered
    monkeypatch.setenv("LECTURE_LIMIT_SCALE", "2")
    assert render.time_limit("l", 200.0, 60.0).seconds == 1600
    monkeypatch.setenv("LECTURE_LIMIT_RENDER", "7")
    limit = render.time_limit("l", 200.0, 60.0)
    assert limit.seconds == 7
    assert "set by LECTURE_LIMIT_RENDER" in limit.exceeded("rendering x/y", "`manim`")
    for bad in ("soon", "-1", "0", "inf"):
        monkeypatch.setenv("LECTURE_LIMIT_RENDER", bad)
        with pytest.raises(settings.SettingsError, match="LECTURE_LIMIT_RENDER"):
            settings.time_limit("render")


def test_run_limited_kills_the_whole_group_past_the_limit(tmp_path):
    marker = f"limited-{os.getpid()}-{time.monotonic_ns()}"
    started = time.monotonic()
    with pytest.raises(TimeLimitError) as stopped:  # a child and a grandchild, both sleeping
        run_limited(
            "sleep 987.1 & sleep 987.2", settings.Limit(1.0, "speech"), "a test", env={**os.environ, "MARK": marker}
        )
    assert time.monotonic() - started < 1.0 + SLACK
    assert "a test: `sleep 987.1" in str(stopped.value)
    time.sleep(0.2)
    assert _left_running(marker) == []


@pytest.mark.slow  # `lecture build` in a new process (its checks first)
def test_a_speech_command_that_sleeps_stops_the_build_within_its_limit(tmp_path):
    """Seen: LECTURE_VOICE=command with `sleep 600; # {wav}` still waited after 200 s."""
    env = build_env(tmp_path, voice="command") | {
        "LECTURE_VOICE_COMMAND": "sleep 987.3; # {wav}",
        "LECTURE_LIMIT_SPEECH": "3",
    }
    code, output, _ = _run_stopped([*BUILD, "--only", "backprop/gates_circuit"], env, within=120)
    assert code == 2, output
    assert re.search(r"cue backprop/gates_\w+: the speech engine: `sleep 987\.3; # ", output), output
    _says_the_limit(output, "LECTURE_LIMIT_SPEECH", 3)
    assert _left_running(str(tmp_path)) == []
    assert not list((tmp_path / "cache" / "narration").glob("*")), "a half-made cue audio was cached"
    assert not (tmp_path / "renders" / "480p15" / "backprop").exists()


def test_a_speech_command_is_stopped_within_its_limit_plus_a_few_seconds(tmp_path, monkeypatch):
    monkeypatch.setenv("LECTURE_LIMIT_SPEECH", "2")
    monkeypatch.setenv("LECTURE_TEST_MARK", str(tmp_path))  # in every child's environment, to find them by
    engine = speech.Command("sleep 987.4; # {wav}")
    started = time.monotonic()
    with pytest.raises(speech.SpeechError, match="time limit of 2 s"):
        engine.synthesize("文字", tmp_path / "x.wav")
    assert time.monotonic() - started < 2 + SLACK
    assert _left_running(str(tmp_path)) == []


def test_an_espeak_that_hangs_is_stopped_within_its_limit(tmp_path):
    """A stand-in espeak-ng first on PATH that never ends (and leaves a child sleeping too)."""
    stand_in = tmp_path / "bin" / "espeak-ng"
    stand_in.parent.mkdir()
    stand_in.write_text(f"#!/bin/sh\nsleep 987.5 &\nexec sleep 987.6 # {tmp_path}\n")
    stand_in.chmod(0o755)
    env = build_env(tmp_path, voice="espeak") | {
        "PATH": f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}",
        "LECTURE_LIMIT_SPEECH": "2",
    }
    code, output, seconds = _run_stopped(
        [str(BIN / "lecture"), "say", "重算一遍", "--out", str(tmp_path / "say.wav")], env, within=60
    )
    assert code == 2, output
    assert f"the speech engine: `{stand_in} -v cmn-latn-pinyin" in output, output
    _says_the_limit(output, "LECTURE_LIMIT_SPEECH", 2)
    assert seconds < 2 + SLACK + 5, output  # plus the command's start-up (its imports)
    assert _left_running(str(tmp_path)) == []
    assert not (tmp_path / "say.wav").exists()


@pytest.mark.slow  # a real build, in a scratch copy whose figure's construct sleeps
def test_a_render_that_stalls_is_stopped_within_its_limit(tmp_path):
    project = copy_project(tmp_path / "project")
    scene = project / "scenes" / "optimizer.py"
    source = scene.read_text(encoding="utf-8")
    head = "class OptimalStepParabola("
    body = source.index("    def construct(self)", source.index(head))
    line_end = source.index("\n", body) + 1
    scene.write_text(
        source[:line_end] + "        __import__('time').sleep(987.7)\n" + source[line_end:], encoding="utf-8"
    )
    env = build_env(tmp_path) | {"LECTURE_LIMIT_RENDER": "4"}
    args = [str(BIN / "python"), "-m", "tools.cli", "build", "-q", "l", "--no-layout"]
    args += ["--only", "optimizer/optimal_step_parabola"]
    process = subprocess.Popen(
        args,
        cwd=project,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    work = tmp_path / "cache" / "manim"
    try:
        deadline = time.monotonic() + 240
        while not (work.is_dir() and any(work.iterdir())):  # the render has started
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "the render never started"
            time.sleep(0.05)
        began = time.monotonic()
        output = process.communicate(timeout=4 + SLACK + 30)[0]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"the stalled render was still running long after its limit:\n{process.communicate()[0]}")
    assert time.monotonic() - began < 4 + SLACK, output
    assert process.returncode == 2, output
    assert "rendering optimizer/optimal_step_parabola: `manim render" in output, output
    _says_the_limit(output, "LECTURE_LIMIT_RENDER", 4)
    assert _left_running(str(tmp_path)) == []
    out = tmp_path / "renders" / "480p15"
    assert not (out / "optimizer").exists() or not list((out / "optimizer").iterdir()), "something was published"
    assert not work.exists() or not list(work.iterdir()), "the work folder was left behind"


def test_a_chapter_join_that_hangs_is_stopped_within_its_limit(tmp_path, monkeypatch):
    """A clip that never ends (a FIFO no one writes): the join waits on it until its limit, then is stopped."""
    from tools.publish.publishing import chapter_video
    from tools.publish.rendering.render import BuildError

    monkeypatch.setenv("LECTURE_LIMIT_JOIN", "2")
    monkeypatch.setenv("LECTURE_TEST_MARK", str(tmp_path))
    clip = tmp_path / "endless.mp4"
    os.mkfifo(clip)
    started = time.monotonic()
    with pytest.raises(BuildError) as stopped:
        chapter_video.concat_limited("joining chapter x", [clip], tmp_path / "x.mp4", ["t"], {}, 30.0)
    assert time.monotonic() - started < 2 + SLACK
    assert "joining chapter x: `" in str(stopped.value)
    _says_the_limit(str(stopped.value), "LECTURE_LIMIT_JOIN", 2)
    assert _left_running(str(tmp_path)) == []


def test_a_recording_that_is_a_fifo_is_refused_not_read_for_ever(tmp_path):
    from tools.voice import cues

    take = tmp_path / "gates_intro.wav"
    os.mkfifo(take)
    started = time.monotonic()
    with pytest.raises(cues.NarrationError, match="not a regular file"):
        cues.check_recording(take, "cue 'gates_intro'")
    assert time.monotonic() - started < 1
