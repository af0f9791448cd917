"""The build's progress: frames rendered across running renders, plain lines without a terminal, and the
scene's report of how far it is."""

import pytest
from helpers import BIN, run

from tools.publish.rendering import progress
from tools.settings import PROGRESS_OUT_ENV


def test_frames_count_finished_figures_and_the_running_renders_reports(tmp_path):
    lines: list[str] = []
    tracker = progress.BuildProgress({"a": 40.0, "b": 20.0}, 15, lines.append, live=False)
    assert tracker.frames() == (0, 900)
    report = tmp_path / "progress"
    tracker.start("a", report)
    assert tracker.frames() == (0, 900)  # no play finished yet: no file
    report.write_text("10.0 10.0 5.0\n")  # one line per play: rendered seconds, figure time, seconds spent
    assert tracker.frames() == (150, 900)
    report.write_text("10.0 10.0 5.0\n12.0 1")  # caught mid-write: the line before counts
    assert tracker.frames() == (150, 900)
    second = tmp_path / "progress-2"  # the figure's second part, from 25 s on: its rendered seconds add up
    tracker.start("a", second)
    report.write_text("10.0 10.0 5.0\n12.0 12.0 6.0\n")
    second.write_text("0.0 25.0 1.0\n4.0 29.0 3.0\n")
    assert tracker.frames() == (240, 900)
    report.write_text("99 99 40\n")  # longer than expected: counted up to the expectation while it runs
    assert tracker.frames() == (600, 900)
    tracker.finish("a", 42.0)  # the real length replaces the expectation
    assert tracker.frames() == (630, 930)
    assert len(lines) == 1
    assert lines[0].startswith("  progress: 1/2 figures, 630/930 frames, ")
    assert "s elapsed, about" in lines[0]
    assert lines[0].endswith("s to go")


def test_a_live_display_prints_the_build_lines_above_it(capsys):
    tracker = progress.BuildProgress({"a": 2.0}, 15, print, live=True)
    with tracker.shown():
        tracker.say("  optimizer/a: rendering")
        tracker.finish("a", 2.0)
    out = capsys.readouterr().out
    assert "optimizer/a: rendering" in out
    assert "figures" in out
    assert "1/1" in out


@pytest.mark.slow
def test_a_scene_reports_the_seconds_of_video_it_has_rendered(tmp_path):
    report = tmp_path / "progress"
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
        env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "c"), PROGRESS_OUT_ENV: str(report)},
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    lines = progress.samples(report)
    assert len(lines) == len(report.read_text().splitlines()) > 10  # one line per play, every one complete
    rendered, at, _ = lines[-1]
    assert 30 <= rendered == at <= 120  # the whole figure, after its last play
    times, spent = [line[1] for line in lines], [line[2] for line in lines]
    assert times == sorted(times)
    assert spent == sorted(spent)
