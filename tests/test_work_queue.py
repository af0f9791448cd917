"""The render queue: longest expected render first, from recorded render times or the narration's length;
an idle thread taking over the rest of a running figure, and where that cut falls."""

import contextlib
import json
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tools.course import catalogue
from tools.publish.build import plan, stages
from tools.publish.publishing import manifest
from tools.publish.publishing.manifest import Manifest, PublishedFigure
from tools.publish.rendering import segments
from tools.publish.rendering.render import QUALITIES, Rendered
from tools.publish.rendering.work_queue import WorkQueue
from tools.voice.speech import Silent


def _published(fig_id: str, duration: float, render_seconds: float) -> PublishedFigure:
    fig = catalogue.figure(fig_id)
    return PublishedFigure(fig.chapter, fig_id, fig.title, duration, 854, 480, {}, {}, "key", {}, {}, render_seconds)


OPTIMIZER = [fig.id for fig in catalogue.chapter("optimizer").figures]


def _expected(figures, published, narration, quality="l", frame_seconds=None) -> dict[str, float]:
    """Each figure's expected render time, as the build's plan and its render stage estimate it."""
    man = Manifest(QUALITIES[quality], [], published)
    planned = plan.make(figures, quality, Path("/nowhere"), man, Silent(), "", frame_seconds or {})
    return {
        fig.id: stages.expected_render_seconds(fig, narration[fig.id], planned.render_rate, quality)
        for fig in planned.figures
    }


def _run_order(expected: dict[str, float]) -> list[str]:
    """The order a one-thread WorkQueue starts tasks queued with these estimates."""
    queue, started = WorkQueue(1), []
    for fig_id, seconds in expected.items():
        queue.add(seconds, lambda fig_id=fig_id: started.append(fig_id))
    queue.run()
    return started


def test_recorded_render_times_put_the_longest_render_first():
    figures = [catalogue.figure(fig_id) for fig_id in OPTIMIZER]
    recorded = {fig_id: 10.0 + n for n, fig_id in enumerate(OPTIMIZER)}
    recorded["saddle_3d_rotating"] = 71.0
    published = {fig_id: _published(fig_id, 60.0, seconds) for fig_id, seconds in recorded.items()}
    expected = _expected(figures, published, dict.fromkeys(OPTIMIZER, 60.0))
    assert _run_order(expected) == sorted(OPTIMIZER, key=lambda fig_id: -recorded[fig_id])
    assert _run_order(expected)[0] == "saddle_3d_rotating"


def test_a_figure_never_rendered_is_estimated_from_its_narration_at_the_median_rate():
    a, b, new = (catalogue.figure(fig_id) for fig_id in OPTIMIZER[:3])
    # Renders took 2 and 3 s per second of video: the median rate is 3 (the upper middle of two).
    published = {a.id: _published(a.id, 40.0, 80.0), b.id: _published(b.id, 20.0, 60.0)}
    expected = _expected([a, b, new], published, {a.id: 40.0, b.id: 20.0, new.id: 50.0})
    assert expected == {a.id: 80.0, b.id: 60.0, new.id: 150.0}
    assert _run_order(expected) == [new.id, a.id, b.id]


def test_a_figure_never_rendered_is_estimated_from_the_frame_its_lint_run_drew():
    flat, turning = (catalogue.figure(fig_id) for fig_id in ("learning_rate_two_paths", "saddle_3d_rotating"))
    narration = {flat.id: 80.0, turning.id: 37.0}
    frame_seconds = {flat.id: 0.05, turning.id: 0.2}  # as the lint timed them here: the 3-D frame is dearer
    low = _expected([flat, turning], {}, narration, "l", frame_seconds)
    assert low == {flat.id: pytest.approx(80 * 15 * 0.05), turning.id: pytest.approx(37 * 15 * 0.2)}
    assert _run_order(low) == [turning.id, flat.id]  # the shorter narration, the longer render: first
    high = _expected([flat, turning], {}, narration, "h", frame_seconds)
    assert high[turning.id] == pytest.approx(low[turning.id] * 4 * (1920 / 854) ** 2)  # 60 fps, 1080p


def test_with_no_render_times_at_all_the_longest_narration_goes_first():
    figures = [catalogue.figure(fig_id) for fig_id in OPTIMIZER[:3]]
    narration = dict(zip(OPTIMIZER[:3], (30.0, 90.0, 60.0)))
    expected = _expected(figures, {}, narration)
    assert _run_order(expected) == [OPTIMIZER[1], OPTIMIZER[2], OPTIMIZER[0]]


def test_a_manifest_from_before_render_times_loads_with_none_recorded(tmp_path):
    entry = _published("optimal_step_parabola", 40.0, 12.5)
    raw = manifest.to_json(manifest.Manifest("480p15", [], {entry.figure: entry}))
    assert raw["figures"][entry.figure]["render_seconds"] == 12.5
    del raw["figures"][entry.figure]["render_seconds"]
    (tmp_path / manifest.NAME).write_text(json.dumps(raw))
    assert manifest.load(tmp_path).figures[entry.figure].render_seconds == 0.0


def test_a_task_can_queue_more_and_the_longer_one_runs_first():
    queue, started = WorkQueue(1), []

    def plan():
        started.append("plan")
        queue.add(5.0, lambda: started.append("segment 1"))
        queue.add(9.0, lambda: started.append("segment 0"))

    queue.add(7.0, lambda: started.append("other"))
    queue.add(20.0, plan)
    queue.run()
    assert started == ["plan", "segment 0", "other", "segment 1"]


def test_the_first_failure_stops_the_queue_and_is_raised():
    queue, started, other_running = WorkQueue(2), [], threading.Event()

    def fails():
        other_running.wait(5)
        raise RuntimeError("manim failed on optimizer/saddle_3d_rotating")

    def running():  # still running when the other fails: it finishes
        other_running.set()
        time.sleep(0.3)
        started.append("running")

    queue.add(10.0, fails)
    queue.add(9.0, running)
    queue.add(1.0, lambda: started.append("never"))
    with pytest.raises(RuntimeError, match="saddle_3d_rotating"):
        queue.run()
    assert started == ["running"]


def test_a_thread_with_nothing_queued_asks_for_the_rest_of_a_running_figure_once_per_change():
    queue, started, offered = WorkQueue(2, idle=lambda: offered.pop() if offered else None), [], []
    first_running = threading.Event()

    def first():
        first_running.set()
        offered.append(lambda: started.append("second half"))
        time.sleep(0.3)  # the other thread, idle, takes the offer meanwhile
        started.append("first half")

    queue.add(10.0, first)
    queue.run()
    assert sorted(started) == ["first half", "second half"]
    assert not offered


def _figure(tmp_path, video_seconds=60.0, render_seconds=30.0) -> segments.FigureRender:
    return segments.FigureRender(
        video_seconds, render_seconds, lambda: contextlib.nullcontext(Path(tempfile.mkdtemp(dir=tmp_path)))
    )


def test_a_running_figure_is_cut_in_the_middle_of_what_it_has_left_and_a_cut_carries_the_old_stop(tmp_path):
    job = _figure(tmp_path)  # 60 s of video, expected to take 30 s to render
    first = job.first()
    first.began -= 10.0
    first.progress_file.write_text("20.0 20.0 10.0\n")  # 20 s of video in 10 s: 0.5 s per second of video
    second = job.split()
    # 40 s of video left, 20 s of render: halves, the new process's START_SECONDS made up for.
    assert second.start == pytest.approx(20.0 + (20.0 + segments.START_SECONDS) / 2 / 0.5, rel=1e-3)
    assert float(first.stop_file.read_text()) == second.start == first.stop  # repr: read back exactly
    assert second.stop is None
    assert not second.stop_file.exists()
    # first now has more left than second (the cut made up for second's start): first is cut again,
    # and the new part between them stops where first was to stop.
    left = (second.start - 20.0) * 0.5
    assert left > (60.0 - second.start) * 0.5
    third = job.split()
    assert third.start == pytest.approx(20.0 + (left + segments.START_SECONDS) / 2 / 0.5, rel=1e-3)
    assert third.stop == second.start
    assert float(third.stop_file.read_text()) == second.start
    assert first.stop == third.start


def test_a_figure_with_little_left_is_not_cut_and_is_complete_when_every_part_is(tmp_path):
    job = _figure(tmp_path)
    first = job.first()
    first.began -= 27.5
    first.progress_file.write_text("55.0 55.0 27.5\n")  # 5 s of video left: 2.5 s of render, less than two starts
    assert job.split() is None
    assert first.stop is None
    job = _figure(tmp_path)
    first = job.first()
    second = job.split()
    done = {
        part.start: Rendered(
            part.work / "v.mp4", part.work / "c.srt", part.work / "t.wav", part.progress_file, part.work / "partials"
        )
        for part in (first, second)
    }
    assert not job.finished(second, done[second.start])  # the first part still runs
    assert job.finished(first, done[first.start])
    assert job.split() is None  # nothing left running to cut
    assert job.render_seconds() > 0


def _costly_end() -> segments.Costs:
    """A 60 s figure whose last 10 s cost five times what the rest does to draw: 1 s per second of figure up to
    50 s, then 5; stepping without drawing, 0.1 s per second."""
    return segments.Costs(
        drawn_at=(0.0, 50.0, 60.0), drawn=(0.0, 50.0, 100.0), stepped_at=(0.0, 60.0), stepped=(0.0, 6.0)
    )


def test_with_the_last_renders_costs_a_figure_is_cut_where_both_sides_finish_together(tmp_path):
    job = segments.FigureRender(
        60.0, 100.0, lambda: contextlib.nullcontext(Path(tempfile.mkdtemp(dir=tmp_path))), _costly_end()
    )
    first = job.first()
    second = job.split()  # at once, before any progress: by the costs alone
    # 50 + 5 (T - 50) = START_SECONDS + 0.1 T + 5 (60 - T), so 9.9 T = 500 + START_SECONDS
    assert second.start == pytest.approx((500.0 + segments.START_SECONDS) / 9.9, abs=1e-6)
    costs = job.costs
    running = costs.drawing(0.0, second.start)
    new = segments.START_SECONDS + costs.stepping(second.start) + costs.drawing(second.start, 60.0)
    assert running == pytest.approx(new, abs=1e-6)
    # by the figure's time alone the cut falls near the middle: the second part would take twice the first's time
    assert second.start > 50.0
    assert first.stop == second.start
    plain = segments.FigureRender(60.0, 100.0, lambda: contextlib.nullcontext(Path(tempfile.mkdtemp(dir=tmp_path))))
    plain.first()
    assert plain.split().start < 32.0


def test_costs_are_measured_from_the_parts_progress_lines_and_kept_as_json(tmp_path):
    job = _figure(tmp_path)
    first, second = job.first(), job.split()
    # the first part draws 0-30 s (scene made at its clock's 0); the second steps to 30 s in 3 s, then draws 30-60 s
    first.progress_file.write_text("10.0 10.0 4.0\n30.0 30.0 12.0\n")
    second.progress_file.write_text("0.0 20.0 2.0\n0.0 30.0 3.0\n15.0 45.0 9.0\n30.0 60.0 15.0\n")
    costs = job.measured_costs()
    assert costs.drawing(0.0, 30.0) == pytest.approx(12.0)
    assert costs.drawing(30.0, 60.0) == pytest.approx(12.0)  # 3 → 9 → 15 s on the second part's clock
    assert costs.drawing(0.0, 10.0) == pytest.approx(4.0)
    assert costs.stepping(30.0) == pytest.approx(3.0)
    assert costs.stepping(60.0) == pytest.approx(6.0)  # past what was stepped: at its mean pace
    assert segments.Costs.from_json(costs.to_json()) == costs
    for bad in ("", "{", "[1, 2]", '{"drawn_at": [0, 1], "drawn": [0]}', '{"drawn_at": [1, 0], "drawn": [0, 1]}'):
        assert segments.Costs.from_json(bad) is None, bad
